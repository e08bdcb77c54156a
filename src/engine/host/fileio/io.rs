//! fileio's three `--file-io-mode`s as sysbench 1.0.20 does them: `sync` (pread/pwrite),
//! `mmap` (every file mapped whole, requests copied to and from the mapping, an fsync an
//! msync), and `async` (Linux native AIO, each thread keeping up to `--file-async-backlog`
//! requests in flight and counting a request when it completes; fsync stays synchronous, as
//! the kernel has no asynchronous one for files). AIO is called through its system calls:
//! no libaio to build against.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// How requests reach the files.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum IoMode {
    Sync,
    Async { backlog: u32 },
    Mmap,
}

impl IoMode {
    /// sysbench's words in "Using … I/O mode".
    pub fn words(self) -> &'static str {
        match self {
            IoMode::Sync => "synchronous",
            IoMode::Async { .. } => "asynchronous",
            IoMode::Mmap => "fast mmaped",
        }
    }
}

/// A file mapped whole, shared with the file (MAP_SHARED), unmapped on drop.
pub struct Map {
    at: *mut u8,
    len: usize,
}

// SAFETY: the mapping lives as long as the Map; every access to it is atomic (`read`,
// `write`) or a system call (msync), so threads may share it.
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    pub fn new(f: &std::fs::File, len: u64) -> std::io::Result<Map> {
        // SAFETY: a fresh shared mapping of an open file; checked for failure below.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Map {
            at: at as *mut u8,
            len: len as usize,
        })
    }

    /// Copies `out.len()` bytes at `pos` into `out`, word by word where aligned: relaxed
    /// atomic loads, since another thread may write the same block meanwhile (sysbench's
    /// memcpy races the same way; here it is defined).
    pub fn read(&self, pos: u64, out: &mut [u8]) {
        let pos = pos as usize;
        assert!(pos + out.len() <= self.len, "a request beyond the mapping");
        let mut i = 0;
        while i < out.len() {
            // SAFETY: within the mapping (asserted above); atomics of their own alignment.
            let p = unsafe { self.at.add(pos + i) };
            if (p as usize) % 8 == 0 && out.len() - i >= 8 {
                let w = unsafe { &*(p as *const AtomicU64) }.load(Ordering::Relaxed);
                out[i..i + 8].copy_from_slice(&w.to_ne_bytes());
                i += 8;
            } else {
                out[i] = unsafe { &*(p as *const AtomicU8) }.load(Ordering::Relaxed);
                i += 1;
            }
        }
    }

    /// Copies `data` to `pos`, as `read` does the other way.
    pub fn write(&self, pos: u64, data: &[u8]) {
        let pos = pos as usize;
        assert!(pos + data.len() <= self.len, "a request beyond the mapping");
        let mut i = 0;
        while i < data.len() {
            // SAFETY: as in `read`.
            let p = unsafe { self.at.add(pos + i) };
            if (p as usize) % 8 == 0 && data.len() - i >= 8 {
                let w = u64::from_ne_bytes(data[i..i + 8].try_into().expect("8 bytes"));
                unsafe { &*(p as *const AtomicU64) }.store(w, Ordering::Relaxed);
                i += 8;
            } else {
                unsafe { &*(p as *const AtomicU8) }.store(data[i], Ordering::Relaxed);
                i += 1;
            }
        }
    }

    /// sysbench's fsync in mmap mode.
    pub fn sync(&self) -> std::io::Result<()> {
        // SAFETY: the whole mapping, which is ours.
        let r = unsafe {
            libc::msync(
                self.at as *mut libc::c_void,
                self.len,
                libc::MS_SYNC | libc::MS_INVALIDATE,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.at as *mut libc::c_void, self.len) };
    }
}

/// The kernel's `struct iocb` (linux/aio_abi.h, little-endian field order).
#[repr(C)]
#[derive(Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: u32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Event {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// A request that completed: a write (else a read) of `bytes`, or a failure.
pub struct Done {
    pub write: bool,
    pub bytes: u64,
    pub ok: bool,
}

/// One thread's AIO context: its requests in flight, at most `backlog`.
pub struct Aio {
    id: libc::c_ulong,
    pending: u32,
    backlog: u32,
    events: Vec<Event>,
}

impl Aio {
    pub fn new(backlog: u32) -> std::io::Result<Aio> {
        let mut id: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context's id into `id`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                backlog as libc::c_long,
                &mut id as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Aio {
            id,
            pending: 0,
            backlog,
            events: vec![Event::default(); backlog as usize],
        })
    }

    /// Submits a read or write of `len` bytes at `pos` from or into `buf`, which must stay
    /// valid until the request completes (the thread's buffer: `finish` waits for all);
    /// at the backlog, waits for at least one to complete, giving each to `done`.
    pub fn submit(
        &mut self,
        f: &std::fs::File,
        write: bool,
        buf: *mut u8,
        len: u64,
        pos: u64,
        done: &mut impl FnMut(Done),
    ) -> std::io::Result<()> {
        let mut cb = Iocb {
            // What completes: the direction and the size, read back from the event.
            data: (write as u64) << 63 | len,
            opcode: if write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            fildes: f.as_raw_fd() as u32,
            buf: buf as u64,
            nbytes: len,
            offset: pos as i64,
            ..Iocb::default()
        };
        let mut list = [&mut cb as *mut Iocb];
        // SAFETY: one valid iocb, copied by the kernel during the call; `buf` outlives the
        // request (see above).
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.id,
                1 as libc::c_long,
                list.as_mut_ptr(),
            )
        };
        if r < 1 {
            return Err(std::io::Error::last_os_error());
        }
        self.pending += 1;
        if self.pending < self.backlog {
            return Ok(());
        }
        self.wait(1, done)
    }

    /// Waits for at least `min` requests to complete.
    fn wait(&mut self, min: u32, done: &mut impl FnMut(Done)) -> std::io::Result<()> {
        let n = loop {
            // SAFETY: `events` holds `backlog` entries for the kernel to fill.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.id,
                    min as libc::c_long,
                    self.backlog as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if n >= 0 {
                break n as usize;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        for e in &self.events[..n] {
            let len = e.data & !(1 << 63);
            done(Done {
                write: e.data >> 63 == 1,
                bytes: len,
                ok: e.res == len as i64,
            });
        }
        self.pending -= n as u32;
        Ok(())
    }

    /// Waits for every request in flight (the thread's end).
    pub fn finish(&mut self, done: &mut impl FnMut(Done)) -> std::io::Result<()> {
        while self.pending > 0 {
            self.wait(self.pending, done)?;
        }
        Ok(())
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // Requests still in flight (a thread that could not finish) would write into a
        // buffer about to be freed: io_destroy waits for them first.
        // SAFETY: the context made in `new`, destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.id) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_structures_have_their_sizes() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<Event>(), 32);
    }

    /// A file of `len` zero bytes in `dir`.
    fn scratch(dir: &tempfile::TempDir, len: u64) -> std::fs::File {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.path().join("f"))
            .unwrap();
        f.set_len(len).unwrap();
        f
    }

    #[test]
    fn aio_reads_and_writes_complete_with_their_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let f = scratch(&dir, 1 << 16);
        let mut aio = Aio::new(4).unwrap();
        let mut buf = vec![7u8; 4096];
        let (mut writes, mut reads, mut bytes) = (0, 0, 0);
        let mut done = |d: Done| {
            assert!(d.ok);
            if d.write {
                writes += 1
            } else {
                reads += 1
            }
            bytes += d.bytes;
        };
        for i in 0..6u64 {
            aio.submit(&f, true, buf.as_mut_ptr(), 4096, i * 4096, &mut done)
                .unwrap();
        }
        aio.submit(&f, false, buf.as_mut_ptr(), 1000, 0, &mut done)
            .unwrap();
        aio.finish(&mut done).unwrap();
        assert_eq!((writes, reads, bytes), (6, 1, 6 * 4096 + 1000));
        let mut back = vec![0u8; 4096];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut back, 4096).unwrap();
        assert!(back.iter().all(|&b| b == 7));
    }

    #[test]
    fn a_mapping_reads_back_what_was_written_at_any_alignment() {
        let dir = tempfile::tempdir().unwrap();
        let f = scratch(&dir, 8192);
        let m = Map::new(&f, 8192).unwrap();
        let data: Vec<u8> = (0..1001u32).map(|i| (i % 251) as u8).collect();
        m.write(3, &data);
        let mut out = vec![0u8; 1001];
        m.read(3, &mut out);
        assert_eq!(out, data);
        m.sync().unwrap();
        let mut disk = vec![0u8; 1001];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut disk, 3).unwrap();
        assert_eq!(disk, data);
    }
}
