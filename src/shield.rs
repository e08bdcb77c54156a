//! Standard output and error that a reader closing them cannot end a sweep: `run | head`
//! must not kill a run mid-prepare (SIGPIPE) and leave an empty `latest`. Each of the two,
//! when it is a pipe or a file rather than a terminal, is swapped for a pipe of our own that
//! a thread forwards to the original; once the reader is gone the rest is dropped, and the
//! run goes on writing its results directory. `finish` forwards what is left before exit.

use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The forwarding threads; `finish` closes our ends and waits for them.
pub struct Shield {
    threads: Vec<(RawFd, JoinHandle<()>)>,
}

/// Shields fds 1 and 2 where they are not terminals; a no-op on any failure (the process
/// then keeps its plain descriptors, and the default SIGPIPE).
pub fn install() -> Shield {
    let mut threads = Vec::new();
    for fd in [1, 2] {
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(fd) } == 1 {
            continue;
        }
        if let Some(t) = shield(fd) {
            threads.push((fd, t));
        }
    }
    if !threads.is_empty() {
        // Writes to a closed reader now fail with EPIPE, which the forwarder absorbs; the
        // process itself never writes to the reader any more.
        // SAFETY: setting a signal disposition to SIG_IGN.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    }
    Shield { threads }
}

fn shield(fd: RawFd) -> Option<JoinHandle<()>> {
    let mut ends = [0; 2];
    // SAFETY: pipe2 fills two descriptors; dup and dup2 take and return plain integers.
    unsafe {
        if libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        let original = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
        if original < 0 || libc::dup2(ends[1], fd) < 0 {
            libc::close(ends[0]);
            libc::close(ends[1]);
            if original >= 0 {
                libc::close(original);
            }
            return None;
        }
        libc::close(ends[1]);
        let (from, to) = (
            std::fs::File::from_raw_fd(ends[0]),
            std::fs::File::from_raw_fd(original),
        );
        Some(std::thread::spawn(move || forward(from, to)))
    }
}

/// Copies `from` to `to` until `from` ends; after the first failed write (the reader went
/// away) it only drains.
fn forward(mut from: std::fs::File, mut to: std::fs::File) {
    use std::io::Read;
    let mut buf = [0u8; 8192];
    let mut open = true;
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if open && to.write_all(&buf[..n]).is_err() {
                    open = false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

impl Shield {
    /// Flushes Rust's buffers, closes our write ends (pointing 1 and 2 at /dev/null) and lets
    /// the forwarders pass on what is left, for at most two seconds (a child that kept a copy
    /// of a descriptor would otherwise hold the exit).
    pub fn finish(self) {
        if self.threads.is_empty() {
            return;
        }
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: opening /dev/null and duplicating it over our own descriptors.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            for (fd, _) in &self.threads {
                if null >= 0 {
                    libc::dup2(null, *fd);
                } else {
                    libc::close(*fd);
                }
            }
        }
        let until = Instant::now() + Duration::from_secs(2);
        for (_, t) in self.threads {
            while !t.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}
