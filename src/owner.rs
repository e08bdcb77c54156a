//! The mark of a directory in use: an `.owner` file its process keeps locked (flock) for
//! its life; `pipeline::server::workdir` marks the work directories with it and reaps the
//! ones nobody holds.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

const OWNER: &str = ".owner";

/// Held for as long as the directory is in use; dropping it (or dying) lets a later start
/// reap the directory.
#[derive(Debug)]
pub struct Owner {
    _lock: File,
}

/// Marks `dir` as in use by this process.
pub fn mark(dir: &Path) -> std::io::Result<Owner> {
    use std::io::Write;
    let mut f = File::create(dir.join(OWNER))?;
    // SAFETY: flock on a descriptor we own; close-on-exec (Rust's default) keeps servers and
    // commands we start from inheriting it.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    writeln!(f, "{}", std::process::id())?;
    Ok(Owner { _lock: f })
}

/// True when `dir` is marked and nobody holds its mark.
pub fn abandoned(dir: &Path) -> bool {
    let Ok(f) = File::open(dir.join(OWNER)) else {
        // Unmarked: being created right now, or not ours to judge.
        return false;
    };
    // SAFETY: as in `mark`; the lock is released when `f` closes.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}
