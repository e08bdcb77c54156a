//! `bench fileio`: sysbench 1.0.20's file I/O test — `prepare` writes `--file-num` files
//! test_file.N of `--file-total-size` together in the working directory, `run` reads and
//! writes `--file-block-size` blocks of them in one of six modes (sequential write, rewrite
//! and read; random read, write and both at `--file-rw-ratio`) with an fsync every
//! `--file-fsync-freq` requests, `cleanup` removes them. Requests come from one generator
//! under a lock, as sysbench's do; they reach the files by `--file-io-mode` (io.rs).

mod io;

use super::{size, Printed};
use crate::bench::options::RawOptions;
use crate::engine::host::HostTest;
use anyhow::{bail, Context};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub const HELP: &str = "fileio options:\n  --file-num=N                  number of files to create [128]\n  --file-block-size=N           block size to use in all IO operations [16384]\n  --file-total-size=SIZE        total size of files to create [2G]\n  --file-test-mode=STRING       test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}\n  --file-io-mode=STRING         file operations mode {sync,async,mmap} [sync]\n  --file-async-backlog=N        number of asynchronous operatons to queue per thread [128]\n  --file-extra-flags=[LIST,...] list of additional flags to use to open files {sync,dsync,direct} []\n  --file-fsync-freq=N           do fsync() after this number of requests (0 - don't use fsync()) [100]\n  --file-fsync-all[=on|off]     do fsync() after each write operation [off]\n  --file-fsync-end[=on|off]     do fsync() at the end of test [on]\n  --file-fsync-mode=STRING      which method to use for synchronization {fsync, fdatasync} [fsync]\n  --file-merged-requests=N      merge at most this number of IO requests if possible (0 - don't merge) [0]\n  --file-rw-ratio=N             reads/writes ratio for combined test [1.5]\n";

const MIB: f64 = 1024.0 * 1024.0;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    SeqWrite,
    SeqRewrite,
    SeqRead,
    RndRead,
    RndWrite,
    RndRw,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::SeqWrite => "sequential write (creation)",
            Mode::SeqRewrite => "sequential rewrite",
            Mode::SeqRead => "sequential read",
            Mode::RndRead => "random read",
            Mode::RndWrite => "random write",
            Mode::RndRw => "random r/w",
        }
    }

    fn random(self) -> bool {
        matches!(self, Mode::RndRead | Mode::RndWrite | Mode::RndRw)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Read,
    Write,
    Fsync,
}

/// sysbench's request generator: where the sequential tests are, and when to fsync.
#[derive(Default)]
struct Gen {
    current_file: u64,
    position: u64,
    req_performed: u64,
    is_dirty: bool,
    fsynced_file: u64,
    read_ops: u64,
    write_ops: u64,
    rng: u64,
}

/// The counters the reports read.
#[derive(Default)]
struct Stats {
    read_ops: AtomicU64,
    write_ops: AtomicU64,
    other_ops: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

pub struct FileIo {
    num: u64,
    file_size: u64,
    block: u64,
    request: u64,
    mode: Option<Mode>,
    flags: (bool, bool, bool),
    fsync_freq: u64,
    fsync_all: bool,
    fsync_end: bool,
    fdatasync: bool,
    merged: u64,
    rw_ratio: f64,
    max_events: u64,
    files: Vec<File>,
    io_mode: io::IoMode,
    /// `--file-io-mode=mmap`: each file mapped whole.
    maps: Vec<io::Map>,
    gen: Mutex<Gen>,
    stats: Stats,
    last: Mutex<(u64, u64, u64)>,
}

fn name(i: u64) -> String {
    format!("test_file.{i}")
}

/// sysbench's `sb_print_value_size`: 1024-based, "%.5g" and a K/M/G… i suffix.
fn print_size(mut v: f64) -> String {
    let mods = ['K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
    let mut i = 0;
    while i < mods.len() && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    let digits = if v == 0.0 {
        0
    } else {
        (4 - v.abs().log10().floor() as i32).max(0) as usize
    };
    let mut n = format!("{v:.digits$}");
    if n.contains('.') {
        n = n.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if i > 0 {
        format!("{n}{}i", mods[i - 1])
    } else {
        n
    }
}

impl FileIo {
    /// The options; for `run` (`open`), the test mode and the files too.
    pub fn of(raw: &RawOptions, open: bool) -> anyhow::Result<FileIo> {
        let num = raw.int("file_num");
        if num == 0 || num > 1_000_000 {
            bail!("FATAL: Invalid value for file-num: {}", raw.get("file_num"));
        }
        let total = size(raw.get("file_total_size"))
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "FATAL: Invalid value for file-total-size: {}",
                    raw.get("file_total_size")
                )
            })?;
        let block = raw.int("file_block_size");
        if block == 0 {
            bail!(
                "FATAL: Invalid value for file-block-size: {}.",
                raw.get("file_block_size")
            );
        }
        let mode = match raw.get("file_test_mode") {
            "" => None,
            "seqwr" => Some(Mode::SeqWrite),
            "seqrewr" => Some(Mode::SeqRewrite),
            "seqrd" => Some(Mode::SeqRead),
            "rndrd" => Some(Mode::RndRead),
            "rndwr" => Some(Mode::RndWrite),
            "rndrw" => Some(Mode::RndRw),
            m => bail!("FATAL: Invalid IO operations mode: {m}."),
        };
        let io_mode = match raw.get("file_io_mode") {
            "sync" => io::IoMode::Sync,
            "async" => {
                let backlog = raw.int("file_async_backlog");
                if backlog == 0 || backlog > 65_536 {
                    bail!(
                        "FATAL: Invalid value of file-async-backlog: {}",
                        raw.get("file_async_backlog")
                    );
                }
                io::IoMode::Async {
                    backlog: backlog as u32,
                }
            }
            "mmap" => io::IoMode::Mmap,
            m => bail!("FATAL: unknown I/O mode: {m}"),
        };
        let mut flags = (false, false, false);
        for f in raw
            .get("file_extra_flags")
            .split(',')
            .filter(|f| !f.is_empty())
        {
            match f {
                "sync" => flags.0 = true,
                "dsync" => flags.1 = true,
                "direct" => flags.2 = true,
                _ => bail!(
                    "FATAL: Invalid value for file-extra-flags: {}",
                    raw.get("file_extra_flags")
                ),
            }
        }
        let fsync_all = raw.flag("file_fsync_all");
        let fdatasync = match raw.get("file_fsync_mode") {
            "fsync" => false,
            "fdatasync" => true,
            m => bail!("FATAL: Invalid fsync mode: {m}."),
        };
        let rw_ratio = raw.float("file_rw_ratio");
        if rw_ratio < 0.0 {
            bail!("FATAL: Invalid value for --file-rw-ratio: {rw_ratio:.6}.");
        }
        let merged = raw.int("file_merged_requests");
        let mut t = FileIo {
            num,
            file_size: total / num,
            block,
            request: block * merged.max(1),
            mode,
            flags,
            // --file-fsync-all overrides the other two, as in sysbench.
            fsync_freq: if fsync_all {
                0
            } else {
                raw.int("file_fsync_freq")
            },
            fsync_all,
            fsync_end: !fsync_all && raw.flag("file_fsync_end"),
            fdatasync,
            merged,
            rw_ratio,
            max_events: raw.int("events"),
            files: Vec::new(),
            io_mode,
            maps: Vec::new(),
            gen: Mutex::new(Gen {
                rng: 0x9E37_79B9_7F4A_7C15,
                ..Gen::default()
            }),
            stats: Stats::default(),
            last: Mutex::new((0, 0, 0)),
        };
        if open {
            let Some(mode) = mode else {
                bail!("FATAL: Missing required argument: --file-test-mode");
            };
            for i in 0..num {
                let n = name(i);
                if mode == Mode::SeqWrite {
                    let _ = std::fs::remove_file(&n);
                }
                let f = t
                    .options()
                    .create(mode == Mode::SeqWrite)
                    .open(&n)
                    .with_context(|| format!("FATAL: Cannot open file '{n}' (did you forget to run the prepare step?)"))?;
                if mode != Mode::SeqWrite {
                    let len = f.metadata()?.len();
                    if len < t.file_size {
                        bail!(
                            "FATAL: Size of file '{n}' is {}B, but at least {}B is expected (did you run 'prepare' with different --file-total-size or --file-num values?)",
                            print_size(len as f64),
                            print_size(t.file_size as f64)
                        );
                    }
                }
                t.files.push(f);
            }
            if io_mode == io::IoMode::Mmap {
                for (i, f) in t.files.iter().enumerate() {
                    // The sequential write test creates its files: mapped, they need their
                    // length first.
                    if mode == Mode::SeqWrite {
                        f.set_len(t.file_size)
                            .with_context(|| format!("FATAL: ftruncate() failed on file {i}"))?;
                    }
                    let m = io::Map::new(f, t.file_size)
                        .with_context(|| format!("FATAL: mmap() failed on file {i}"))?;
                    t.maps.push(m);
                }
            }
        }
        Ok(t)
    }

    fn options(&self) -> std::fs::OpenOptions {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        let mut flags = 0;
        if self.flags.0 {
            flags |= libc::O_SYNC;
        }
        if self.flags.1 {
            flags |= libc::O_DSYNC;
        }
        if self.flags.2 {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o
    }

    fn flags_line(&self) -> String {
        let (s, d, x) = self.flags;
        format!(
            "Extra file open flags: {}{}{}{}",
            if !(s || d || x) { "(none)" } else { "" },
            if s { "sync " } else { "" },
            if d { "dsync " } else { "" },
            if x { "directio" } else { "" }
        )
    }

    /// The next request, as sysbench's generator makes it: (operation, file, offset, size).
    fn next(&self) -> (Op, usize, u64, u64) {
        let mode = self.mode.expect("run has a test mode");
        let mut g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
        let writes = match mode {
            Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite => true,
            Mode::SeqRead | Mode::RndRead => false,
            Mode::RndRw => (g.read_ops + 1) as f64 / (g.write_ops + 1) as f64 >= self.rw_ratio,
        };
        let time_to_fsync = self.fsync_freq != 0
            && g.is_dirty
            && g.req_performed % self.fsync_freq == 0
            && (mode.random() || writes);
        if time_to_fsync {
            let file = g.fsynced_file as usize;
            g.fsynced_file += 1;
            if g.fsynced_file == self.num {
                g.fsynced_file = 0;
                g.is_dirty = false;
            }
            return (Op::Fsync, file, 0, 0);
        }
        g.req_performed += 1;
        if writes {
            g.is_dirty = true;
        }
        let op = if writes { Op::Write } else { Op::Read };
        if mode.random() {
            // xorshift64*: uniform enough for offsets, and no lock beyond the generator's.
            g.rng ^= g.rng >> 12;
            g.rng ^= g.rng << 25;
            g.rng ^= g.rng >> 27;
            let u = (g.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            let total = self.file_size * self.num;
            let mut at = (u * total as f64) as u64;
            at -= at % self.block;
            let file = (at / self.file_size).min(self.num - 1);
            let pos = at % self.file_size;
            return (op, file as usize, pos, self.block.min(self.file_size - pos));
        }
        if g.current_file == self.num {
            g.current_file = 0;
            g.position = 0;
        }
        let (file, pos) = (g.current_file, g.position);
        let size = self.request.min(self.file_size - pos);
        g.position += size;
        if g.position == self.file_size {
            g.current_file += 1;
            g.position = 0;
        }
        (op, file as usize, pos, size)
    }

    /// One file's fsync by the I/O mode's means (an msync of its mapping in mmap mode),
    /// counted as sysbench counts every fsync.
    fn fsync(&self, file: usize) {
        let f = &self.files[file];
        let r = match (self.io_mode, self.fdatasync) {
            (io::IoMode::Mmap, _) => self.maps[file].sync(),
            (_, true) => f.sync_data(),
            (_, false) => f.sync_all(),
        };
        match r {
            Ok(()) => {
                self.stats.other_ops.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => eprintln!("FATAL: Failed to fsync file! file: {file}: {e}"),
        }
    }

    /// A completed read or write, counted (in async mode when it completes, as sysbench).
    fn count(&self, write: bool, bytes: u64) {
        let s = &self.stats;
        let mut g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
        if write {
            s.write_ops.fetch_add(1, Ordering::Relaxed);
            s.bytes_written.fetch_add(bytes, Ordering::Relaxed);
            g.write_ops += 1;
        } else {
            s.read_ops.fetch_add(1, Ordering::Relaxed);
            s.bytes_read.fetch_add(bytes, Ordering::Relaxed);
            g.read_ops += 1;
        }
    }

    /// What an AIO completion does: counted, or sysbench's FATAL for a short one.
    fn completed(&self, d: io::Done) {
        if d.ok {
            self.count(d.write, d.bytes);
        } else if d.write {
            eprintln!("FATAL: Asynchronous write failed!");
        } else {
            eprintln!("FATAL: Asynchronous read failed!");
        }
    }
}

/// A thread's I/O buffer, aligned for O_DIRECT, and its AIO context in async mode.
pub struct Buffer {
    /// First, so it is dropped (io_destroy waits for requests in flight) before the bytes
    /// they read into.
    aio: Option<io::Aio>,
    bytes: Vec<u8>,
    start: usize,
}

impl HostTest for FileIo {
    type Thread = Buffer;

    fn thread(&self, _: usize) -> Buffer {
        let align = 4096;
        let bytes = vec![0u8; self.request as usize + align];
        let start = (align - (bytes.as_ptr() as usize % align)) % align;
        let aio = match self.io_mode {
            io::IoMode::Async { backlog } => match io::Aio::new(backlog) {
                Ok(a) => Some(a),
                Err(e) => {
                    eprintln!("FATAL: io_queue_init() failed!: {e}");
                    None
                }
            },
            _ => None,
        };
        Buffer { bytes, start, aio }
    }

    fn event(&self, b: &mut Buffer) {
        let (op, file, pos, size) = self.next();
        let f = &self.files[file];
        let buf = &mut b.bytes[b.start..b.start + size as usize];
        // A failed read or write is sysbench's FATAL: said once, then the run goes on
        // counting what it could do (sysbench stops; a short note here keeps the host test
        // simple).
        match op {
            Op::Write | Op::Read => {
                let write = op == Op::Write;
                let r = match (self.io_mode, &mut b.aio) {
                    (io::IoMode::Async { .. }, Some(aio)) => aio
                        .submit(f, write, buf.as_mut_ptr(), size, pos, &mut |d| {
                            self.completed(d)
                        })
                        .map(|()| false),
                    (io::IoMode::Async { .. }, None) => Err(std::io::Error::other(
                        "no AIO context (io_queue_init() failed)",
                    )),
                    (io::IoMode::Mmap, _) if write => {
                        self.maps[file].write(pos, buf);
                        Ok(true)
                    }
                    (io::IoMode::Mmap, _) => {
                        self.maps[file].read(pos, buf);
                        Ok(true)
                    }
                    (io::IoMode::Sync, _) if write => f.write_all_at(buf, pos).map(|()| true),
                    (io::IoMode::Sync, _) => f.read_exact_at(buf, pos).map(|()| true),
                };
                match r {
                    // Done now (sync, mmap); async requests count when they complete.
                    Ok(true) => self.count(write, size),
                    Ok(false) => {}
                    Err(e) => {
                        let what = if write { "write" } else { "read" };
                        eprintln!("FATAL: Failed to {what} file! file: {file} pos: {pos}: {e}");
                        return;
                    }
                }
                if write && self.fsync_all {
                    self.fsync(file);
                }
            }
            Op::Fsync => {
                // Already done after every write under --file-fsync-all.
                if !self.fsync_all {
                    self.fsync(file);
                }
            }
        }
    }

    /// sysbench's end of a thread: with --file-fsync-end every thread fsyncs every file
    /// (not after a read-only test), then its requests in flight complete.
    fn thread_done(&self, b: &mut Buffer) {
        let writes = matches!(
            self.mode,
            Some(Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite | Mode::RndRw)
        );
        if self.fsync_end && writes {
            for file in 0..self.files.len() {
                self.fsync(file);
            }
        }
        if let Some(aio) = &mut b.aio {
            if let Err(e) = aio.finish(&mut |d| self.completed(d)) {
                eprintln!("FATAL: io_getevents() failed!: {e}");
            }
        }
    }

    fn per_thread(&self, _: u32) -> Option<u64> {
        None
    }

    fn interval_latency(&self) -> bool {
        true
    }
}

impl Printed for FileIo {
    fn describe(&self) -> String {
        let mode = self.mode.expect("run has a test mode");
        let mut s = format!(
            "{}\n{} files, {}B each\n{}B total file size\nBlock size {}B\n",
            self.flags_line(),
            self.num,
            print_size(self.file_size as f64),
            print_size((self.file_size * self.num) as f64),
            print_size(self.block as f64)
        );
        if self.merged > 0 {
            s.push_str(&format!(
                "Merging requests up to {}B for sequential IO.\n",
                print_size(self.request as f64)
            ));
        }
        if mode.random() {
            s.push_str(&format!(
                "Number of IO requests: {}\nRead/Write ratio for combined random IO test: {:.2}\n",
                self.max_events, self.rw_ratio
            ));
        }
        if self.fsync_freq > 0 {
            s.push_str(&format!(
                "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
                self.fsync_freq
            ));
        }
        if self.fsync_end {
            s.push_str("Calling fsync() at the end of test, Enabled.\n");
        }
        if self.fsync_all {
            s.push_str("Calling fsync() after each write operation.\n");
        }
        s.push_str(&format!(
            "Using {} I/O mode\nDoing {} test\n",
            self.io_mode.words(),
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

/// `prepare`: the files, block by block, each synced so the run does not pay for flushing
/// them.
pub fn prepare(t: &FileIo) -> anyhow::Result<()> {
    println!(
        "{} files, {}Kb each, {}Mb total\nCreating files for the test...\n{}",
        t.num,
        t.file_size / 1024,
        t.file_size * t.num / 1024 / 1024,
        t.flags_line()
    );
    let started = std::time::Instant::now();
    let mut written = 0u64;
    let block = vec![0u8; t.block as usize];
    for i in 0..t.num {
        let n = name(i);
        let mut o = std::fs::OpenOptions::new();
        o.create(true).write(true);
        let f = o.open(&n).context("FATAL: Can't open file")?;
        let mut offset = f.metadata()?.len();
        if offset >= t.file_size {
            println!("Reusing existing file {n}");
        } else if offset > 0 {
            println!("Extending existing file {n}");
        } else {
            println!("Creating file {n}");
        }
        while offset < t.file_size {
            f.write_all_at(&block, offset)
                .context("FATAL: Failed to write file!")?;
            offset += t.block;
            written += t.block;
        }
        f.sync_all()?;
    }
    let secs = started.elapsed().as_secs_f64();
    if written > 0 {
        println!(
            "{written} bytes written in {secs:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MIB / secs.max(1e-9)
        );
    } else {
        println!("No bytes written.");
    }
    Ok(())
}

/// `cleanup`: the files removed.
pub fn cleanup(t: &FileIo) {
    println!("Removing test files...");
    for i in 0..t.num {
        let _ = std::fs::remove_file(name(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_as_sysbench_prints_them() {
        assert_eq!(print_size(2.0 * 1024.0 * 1024.0), "2Mi");
        assert_eq!(print_size(16384.0), "16Ki");
        assert_eq!(print_size(2.0 * 1024.0 * 1024.0 * 1024.0), "2Gi");
        assert_eq!(print_size(1536.0), "1.5Ki");
        assert_eq!(print_size(100.0), "100");
    }
}
