//! sysbench 1.0.20's file I/O test — `prepare` writes `file_num` files test_file.N of
//! `file_total_size` together in a directory, a run reads and writes `file_block_size`
//! blocks of them in one of six modes (sequential write, rewrite and read; random read,
//! write and both at `file_rw_ratio`) with an fsync every `file_fsync_freq` requests,
//! `cleanup` removes them. Requests come from one generator under a lock, as sysbench's do;
//! they reach the files by `file_io_mode` (io.rs). `bench fileio` prints it as sysbench does
//! (the working directory); a sweep's `workloads = ["fileio"]` measures the disk of its
//! work directory with it.

pub mod io;
mod options;

pub use options::{FileIoOptions, DEFAULTS};

use super::HostTest;
pub use io::IoMode;
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub const MIB: f64 = 1024.0 * 1024.0;

#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub enum Mode {
    SeqWrite,
    SeqRewrite,
    SeqRead,
    RndRead,
    RndWrite,
    RndRw,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::SeqWrite => "sequential write (creation)",
            Mode::SeqRewrite => "sequential rewrite",
            Mode::SeqRead => "sequential read",
            Mode::RndRead => "random read",
            Mode::RndWrite => "random write",
            Mode::RndRw => "random r/w",
        }
    }

    pub fn random(self) -> bool {
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
pub struct Stats {
    pub read_ops: AtomicU64,
    pub write_ops: AtomicU64,
    pub other_ops: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
}

pub struct FileIo {
    /// What the test was asked to do.
    pub o: FileIoOptions,
    pub file_size: u64,
    /// Bytes per sequential request (`file_block_size` × `file_merged_requests`).
    pub request: u64,
    /// Where the files are (test_file.N in it).
    pub dir: PathBuf,
    pub files: Vec<File>,
    /// `--file-io-mode=mmap`: each file mapped whole.
    pub maps: Vec<io::Map>,
    gen: Mutex<Gen>,
    pub stats: Stats,
    /// The interval line's counters at the last line.
    pub last: Mutex<(u64, u64, u64)>,
    /// The first failed request's FATAL line: said once (on stderr, as sysbench, unless
    /// `quiet`), and the run's fatal error for a sweep's host point.
    pub failed: std::sync::OnceLock<String>,
    /// The first failure is kept, not printed (a sweep records it in the point instead).
    pub quiet: bool,
}

/// The path of file `i` in `dir`.
/// The refusal of a test file that is a symbolic link (O_NOFOLLOW's ELOOP), naming it.
fn symlink_refused(n: &Path, e: &std::io::Error) -> Option<String> {
    (e.raw_os_error() == Some(libc::ELOOP)).then(|| {
        format!(
            "FATAL: '{}' is a symbolic link: test files are never written through one (remove it, or run in another directory)",
            n.display()
        )
    })
}

pub fn file_name(dir: &Path, i: u64) -> PathBuf {
    dir.join(format!("test_file.{i}"))
}

/// sysbench's `sb_print_value_size`: 1024-based, "%.5g" and a K/M/G… i suffix.
pub fn print_size(mut v: f64) -> String {
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
    /// The test on `dir`'s files; for a run (`run`), the test mode and the files open (and
    /// mapped for mmap).
    pub fn open(o: &FileIoOptions, dir: &Path, run: bool) -> Result<FileIo, String> {
        let mut t = FileIo {
            o: o.clone(),
            file_size: o.file_size(),
            request: o.block * o.merged.max(1),
            dir: dir.to_path_buf(),
            files: Vec::new(),
            maps: Vec::new(),
            gen: Mutex::new(Gen {
                rng: 0x9E37_79B9_7F4A_7C15,
                ..Gen::default()
            }),
            stats: Stats::default(),
            last: Mutex::new((0, 0, 0)),
            failed: std::sync::OnceLock::new(),
            quiet: false,
        };
        if !run {
            return Ok(t);
        }
        let Some(mode) = o.mode else {
            return Err("FATAL: Missing required argument: --file-test-mode".into());
        };
        for i in 0..o.num {
            let n = file_name(dir, i);
            if mode == Mode::SeqWrite {
                let _ = std::fs::remove_file(&n);
            }
            let f = t
                .options()
                .create(mode == Mode::SeqWrite)
                .open(&n)
                .map_err(|e| match symlink_refused(&n, &e) {
                    Some(why) => why,
                    None => format!("FATAL: Cannot open file '{}' (did you forget to run the prepare step?): {e}", n.display()),
                })?;
            if mode != Mode::SeqWrite {
                let len = f
                    .metadata()
                    .map_err(|e| format!("FATAL: fstat() failed on file '{}': {e}", n.display()))?
                    .len();
                if len < t.file_size {
                    return Err(format!(
                        "FATAL: Size of file '{}' is {}B, but at least {}B is expected (did you run 'prepare' with different --file-total-size or --file-num values?)",
                        n.display(),
                        print_size(len as f64),
                        print_size(t.file_size as f64)
                    ));
                }
            }
            t.files.push(f);
        }
        if o.io_mode == IoMode::Mmap {
            for (i, f) in t.files.iter().enumerate() {
                // The sequential write test creates its files: mapped, they need their
                // length first.
                if mode == Mode::SeqWrite {
                    f.set_len(t.file_size)
                        .map_err(|e| format!("FATAL: ftruncate() failed on file {i}: {e}"))?;
                }
                let m = io::Map::new(f, t.file_size)
                    .map_err(|e| format!("FATAL: mmap() failed on file {i}: {e}"))?;
                t.maps.push(m);
            }
        }
        Ok(t)
    }

    fn options(&self) -> std::fs::OpenOptions {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        // A planted test_file.N symlink would have its target overwritten: refused instead.
        let mut flags = libc::O_NOFOLLOW;
        if self.o.flags.0 {
            flags |= libc::O_SYNC;
        }
        if self.o.flags.1 {
            flags |= libc::O_DSYNC;
        }
        if self.o.flags.2 {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o
    }

    /// sysbench's "Extra file open flags:" line.
    pub fn flags_line(&self) -> String {
        let (s, d, x) = self.o.flags;
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
        let mode = self.o.mode.expect("run has a test mode");
        let mut g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
        let writes = match mode {
            Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite => true,
            Mode::SeqRead | Mode::RndRead => false,
            Mode::RndRw => (g.read_ops + 1) as f64 / (g.write_ops + 1) as f64 >= self.o.rw_ratio,
        };
        let time_to_fsync = self.o.fsync_freq != 0
            && g.is_dirty
            && g.req_performed % self.o.fsync_freq == 0
            && (mode.random() || writes);
        if time_to_fsync {
            let file = g.fsynced_file as usize;
            g.fsynced_file += 1;
            if g.fsynced_file == self.o.num {
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
            let total = self.file_size * self.o.num;
            let mut at = (u * total as f64) as u64;
            at -= at % self.o.block;
            let file = (at / self.file_size).min(self.o.num - 1);
            let pos = at % self.file_size;
            return (
                op,
                file as usize,
                pos,
                self.o.block.min(self.file_size - pos),
            );
        }
        if g.current_file == self.o.num {
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
        let r = match (self.o.io_mode, self.o.fdatasync) {
            (IoMode::Mmap, _) => self.maps[file].sync(),
            (_, true) => f.sync_data(),
            (_, false) => f.sync_all(),
        };
        match r {
            Ok(()) => {
                self.stats.other_ops.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.fail(format!("FATAL: Failed to fsync file! file: {file}: {e}")),
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
            self.fail("FATAL: Asynchronous write failed!".into());
        } else {
            self.fail("FATAL: Asynchronous read failed!".into());
        }
    }

    /// Runs the test within `lim` (a sweep's host point): the report's counts are its
    /// reads, writes and fsyncs, and a failed request is its fatal error.
    pub fn measure(&self, lim: &super::Limits) -> crate::engine::exec::RunReport {
        let mut r = super::run(self, lim, None, |_| {});
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        r.totals.reads = get(&self.stats.read_ops);
        r.totals.writes = get(&self.stats.write_ops);
        r.totals.other = get(&self.stats.other_ops);
        if let Some(line) = self.failed.get() {
            r.fatal = Some(crate::engine::Fatal::new(line.clone(), None));
        }
        r
    }

    /// A failed request: the first one's FATAL line is kept and said (unless `quiet`); the
    /// later ones are not said again, and the run goes on counting what it could do.
    fn fail(&self, line: String) {
        if self.failed.set(line.clone()).is_ok() && !self.quiet {
            eprintln!("{line}");
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
        let aio = match self.o.io_mode {
            IoMode::Async { backlog } => match io::Aio::new(backlog) {
                Ok(a) => Some(a),
                Err(e) => {
                    self.fail(format!("FATAL: io_queue_init() failed!: {e}"));
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
        // counting what it could do (sysbench stops); a sweep's host point with one fails.
        match op {
            Op::Write | Op::Read => {
                let write = op == Op::Write;
                let r = match (self.o.io_mode, &mut b.aio) {
                    (IoMode::Async { .. }, Some(aio)) => aio
                        .submit(f, write, buf.as_mut_ptr(), size, pos, &mut |d| {
                            self.completed(d)
                        })
                        .map(|()| false),
                    (IoMode::Async { .. }, None) => Err(std::io::Error::other(
                        "no AIO context (io_queue_init() failed)",
                    )),
                    (IoMode::Mmap, _) if write => {
                        self.maps[file].write(pos, buf);
                        Ok(true)
                    }
                    (IoMode::Mmap, _) => {
                        self.maps[file].read(pos, buf);
                        Ok(true)
                    }
                    (IoMode::Sync, _) if write => f.write_all_at(buf, pos).map(|()| true),
                    (IoMode::Sync, _) => f.read_exact_at(buf, pos).map(|()| true),
                };
                match r {
                    // Done now (sync, mmap); async requests count when they complete.
                    Ok(true) => self.count(write, size),
                    Ok(false) => {}
                    Err(e) => {
                        let what = if write { "write" } else { "read" };
                        self.fail(format!(
                            "FATAL: Failed to {what} file! file: {file} pos: {pos}: {e}"
                        ));
                        return;
                    }
                }
                if write && self.o.fsync_all {
                    self.fsync(file);
                }
            }
            Op::Fsync => {
                // Already done after every write under --file-fsync-all.
                if !self.o.fsync_all {
                    self.fsync(file);
                }
            }
        }
    }

    /// sysbench's end of a thread: with --file-fsync-end every thread fsyncs every file
    /// (not after a read-only test), then its requests in flight complete.
    fn thread_done(&self, b: &mut Buffer) {
        let writes = matches!(
            self.o.mode,
            Some(Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite | Mode::RndRw)
        );
        if self.o.fsync_end && writes {
            for file in 0..self.files.len() {
                self.fsync(file);
            }
        }
        if let Some(aio) = &mut b.aio {
            if let Err(e) = aio.finish(&mut |d| self.completed(d)) {
                self.fail(format!("FATAL: io_getevents() failed!: {e}"));
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

/// `prepare`: the files, block by block, each synced so the run does not pay for flushing
/// them; `say` gets sysbench's lines.
pub fn prepare(t: &FileIo, say: &mut dyn FnMut(String)) -> Result<(), String> {
    say(format!(
        "{} files, {}Kb each, {}Mb total\nCreating files for the test...\n{}",
        t.o.num,
        t.file_size / 1024,
        t.file_size * t.o.num / 1024 / 1024,
        t.flags_line()
    ));
    let started = std::time::Instant::now();
    let mut written = 0u64;
    let block = vec![0u8; t.o.block as usize];
    for i in 0..t.o.num {
        let n = file_name(&t.dir, i);
        let mut o = std::fs::OpenOptions::new();
        o.create(true)
            .truncate(false)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW);
        let f = o.open(&n).map_err(|e| {
            symlink_refused(&n, &e).unwrap_or_else(|| format!("FATAL: Can't open file: {e}"))
        })?;
        let mut offset = f
            .metadata()
            .map_err(|e| format!("FATAL: Can't open file: {e}"))?
            .len();
        let shown = format!("test_file.{i}");
        if offset >= t.file_size {
            say(format!("Reusing existing file {shown}"));
        } else if offset > 0 {
            say(format!("Extending existing file {shown}"));
        } else {
            say(format!("Creating file {shown}"));
        }
        while offset < t.file_size {
            // A sweep's Ctrl-C ends a long prepare (bench's ends the process).
            if crate::interrupt::requested() {
                return Err("fileio: preparing the files was interrupted".into());
            }
            f.write_all_at(&block, offset)
                .map_err(|e| format!("FATAL: Failed to write file!: {e}"))?;
            offset += t.o.block;
            written += t.o.block;
        }
        f.sync_all()
            .map_err(|e| format!("FATAL: Failed to write file!: {e}"))?;
    }
    let secs = started.elapsed().as_secs_f64();
    if written > 0 {
        say(format!(
            "{written} bytes written in {secs:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MIB / secs.max(1e-9)
        ));
    } else {
        say("No bytes written.".into());
    }
    Ok(())
}

/// `cleanup`: the files removed.
pub fn cleanup(t: &FileIo, say: &mut dyn FnMut(String)) {
    say("Removing test files...".into());
    for i in 0..t.o.num {
        let _ = std::fs::remove_file(file_name(&t.dir, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request that fails mid-run (its file cut short after the run opened it) is the
    /// run's fatal error, its FATAL line kept once, as sysbench words it; the other requests
    /// are still counted.
    #[test]
    fn a_failed_request_is_the_runs_fatal_error() {
        let d = tempfile::tempdir().unwrap();
        let given = |n: &str| -> String {
            match n {
                "file_num" => "2".into(),
                "file_total_size" => "2M".into(),
                _ => options::DEFAULTS
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_default(),
            }
        };
        let mut o = FileIoOptions::parse(&given).unwrap();
        prepare(&FileIo::open(&o, d.path(), false).unwrap(), &mut |_| {}).unwrap();
        o.mode = Some(Mode::RndRead);
        let mut t = FileIo::open(&o, d.path(), true).unwrap();
        t.quiet = true;
        std::fs::OpenOptions::new()
            .write(true)
            .open(file_name(d.path(), 0))
            .unwrap()
            .set_len(0)
            .unwrap();
        let lim = super::super::Limits {
            threads: 2,
            time_s: 0,
            events: 400,
        };
        let r = t.measure(&lim);
        let fatal = r.fatal.expect("a fatal error");
        assert!(
            fatal
                .message
                .starts_with("FATAL: Failed to read file! file: 0 pos: "),
            "{}",
            fatal.message
        );
        // File 1 was whole: its reads were done and counted.
        assert!(r.totals.reads > 0, "{:?}", r.totals);
        assert!(r.totals.reads < 400, "{:?}", r.totals);
        // Files left whole give a run with no fatal error.
        let d2 = tempfile::tempdir().unwrap();
        o.mode = None;
        prepare(&FileIo::open(&o, d2.path(), false).unwrap(), &mut |_| {}).unwrap();
        o.mode = Some(Mode::RndRead);
        let mut whole = FileIo::open(&o, d2.path(), true).unwrap();
        whole.quiet = true;
        let r = whole.measure(&lim);
        assert!(r.fatal.is_none(), "{:?}", r.fatal);
        assert_eq!(r.totals.reads, 400);
    }

    #[test]
    fn sizes_print_as_sysbench_prints_them() {
        assert_eq!(print_size(2.0 * 1024.0 * 1024.0), "2Mi");
        assert_eq!(print_size(16384.0), "16Ki");
        assert_eq!(print_size(2.0 * 1024.0 * 1024.0 * 1024.0), "2Gi");
        assert_eq!(print_size(1536.0), "1.5Ki");
        assert_eq!(print_size(100.0), "100");
    }
}
