//! `bench fileio`: sysbench 1.0.20's file I/O test (`engine::host::fileio`) on the working
//! directory — its options read from the command line, and its lines.

use super::Printed;
use crate::bench::options::RawOptions;
use crate::engine::host::fileio::{print_size, FileIo, FileIoOptions, MIB};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

pub const HELP: &str = "fileio options:\n  --file-num=N                  number of files to create [128]\n  --file-block-size=N           block size to use in all IO operations [16384]\n  --file-total-size=SIZE        total size of files to create [2G]\n  --file-test-mode=STRING       test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}\n  --file-io-mode=STRING         file operations mode {sync,async,mmap} [sync]\n  --file-async-backlog=N        number of asynchronous operatons to queue per thread [128]\n  --file-extra-flags=[LIST,...] list of additional flags to use to open files {sync,dsync,direct} []\n  --file-fsync-freq=N           do fsync() after this number of requests (0 - don't use fsync()) [100]\n  --file-fsync-all[=on|off]     do fsync() after each write operation [off]\n  --file-fsync-end[=on|off]     do fsync() at the end of test [on]\n  --file-fsync-mode=STRING      which method to use for synchronization {fsync, fdatasync} [fsync]\n  --file-merged-requests=N      merge at most this number of IO requests if possible (0 - don't merge) [0]\n  --file-rw-ratio=N             reads/writes ratio for combined test [1.5]\n";

/// The test's options from the command line; for `run` (`open`), the files too.
pub fn of(raw: &RawOptions, open: bool) -> anyhow::Result<FileIo> {
    let mut o =
        FileIoOptions::parse(&|n: &str| raw.get(n).to_string()).map_err(anyhow::Error::msg)?;
    o.max_events = raw.int("events");
    FileIo::open(&o, Path::new(""), open).map_err(anyhow::Error::msg)
}

impl Printed for FileIo {
    fn describe(&self) -> String {
        let mode = self.o.mode.expect("run has a test mode");
        let mut s = format!(
            "{}\n{} files, {}B each\n{}B total file size\nBlock size {}B\n",
            self.flags_line(),
            self.o.num,
            print_size(self.file_size as f64),
            print_size((self.file_size * self.o.num) as f64),
            print_size(self.o.block as f64)
        );
        if self.o.merged > 0 {
            s.push_str(&format!(
                "Merging requests up to {}B for sequential IO.\n",
                print_size(self.request as f64)
            ));
        }
        if mode.random() {
            s.push_str(&format!(
                "Number of IO requests: {}\nRead/Write ratio for combined random IO test: {:.2}\n",
                self.o.max_events, self.o.rw_ratio
            ));
        }
        if self.o.fsync_freq > 0 {
            s.push_str(&format!(
                "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
                self.o.fsync_freq
            ));
        }
        if self.o.fsync_end {
            s.push_str("Calling fsync() at the end of test, Enabled.\n");
        }
        if self.o.fsync_all {
            s.push_str("Calling fsync() after each write operation.\n");
        }
        s.push_str(&format!(
            "Using {} I/O mode\nDoing {} test\n",
            self.o.io_mode.words(),
            mode.name()
        ));
        s
    }

    fn interval_line(&self, _: u64, secs: f64, _: u32, pct: u32, lat_ms: f64) -> String {
        let s = &self.stats;
        let now = (
            s.bytes_read.load(Ordering::Relaxed),
            s.bytes_written.load(Ordering::Relaxed),
            s.other_ops.load(Ordering::Relaxed),
        );
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let line = format!(
            "reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{pct}%): {lat_ms:.3}",
            (now.0 - last.0) as f64 / MIB / secs,
            (now.1 - last.1) as f64 / MIB / secs,
            (now.2 - last.2) as f64 / secs
        );
        *last = now;
        line
    }

    fn cumulative(&self, _: u64, secs: f64) -> String {
        let s = &self.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        format!(
            "\nFile operations:\n    reads/s:                      {:.2}\n    writes/s:                     {:.2}\n    fsyncs/s:                     {:.2}\n\nThroughput:\n    read, MiB/s:                  {:.2}\n    written, MiB/s:               {:.2}\n\n",
            get(&s.read_ops) / secs,
            get(&s.write_ops) / secs,
            get(&s.other_ops) / secs,
            get(&s.bytes_read) / MIB / secs,
            get(&s.bytes_written) / MIB / secs
        )
    }
}

/// `prepare`, printing sysbench's lines.
pub fn prepare(t: &FileIo) -> anyhow::Result<()> {
    crate::engine::host::fileio::prepare(t, &mut |line| println!("{line}"))
        .map_err(anyhow::Error::msg)
}

/// `cleanup`, printing sysbench's line.
pub fn cleanup(t: &FileIo) {
    crate::engine::host::fileio::cleanup(t, &mut |line| println!("{line}"));
}
