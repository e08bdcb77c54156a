//! Work directories under TMPDIR (a run's, a managed server's): each holds an `.owner` file
//! that its process keeps locked (flock) for its life. A directory whose lock nobody holds
//! was left by a process that died (SIGKILL, a second Ctrl-C, a nightly job's timeout): the
//! next start reaps it, stopping any server still running from it.

use crate::owner::abandoned;
pub use crate::owner::{mark, Owner};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Name prefixes of the directories sweepbench creates under TMPDIR ("sweepbench-relay-":
/// the TLS relay's of earlier builds, reaped when one was left behind).
pub const PREFIXES: [&str; 3] = ["sweepbench-run-", "sweepbench-srv-", "sweepbench-relay-"];

/// Server pid files below `dir` (a server's own directory, or a run's with servers inside).
fn pid_files(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == "mysqld.pid") {
            out.push(p);
        } else if depth > 0 && p.is_dir() && !p.is_symlink() {
            pid_files(&p, depth - 1, out);
        }
    }
}

/// Kills a server left running from `dir` (its command line names the directory), and waits
/// for it to go.
fn stop_orphan(pid_file: &Path, dir: &Path) {
    let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
        .filter(|p| *p > 1)
    else {
        return;
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if !String::from_utf8_lossy(&cmdline).contains(&*dir.to_string_lossy()) {
        return;
    }
    // SAFETY: a signal to a process whose command line runs from the abandoned directory.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes the abandoned work directories under `root` that this user owns; returns them.
pub fn reap(root: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut removed = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !PREFIXES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let dir = e.path();
        let ours = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !ours || !abandoned(&dir) {
            continue;
        }
        let mut pids = Vec::new();
        pid_files(&dir, 2, &mut pids);
        for p in &pids {
            stop_orphan(p, &dir);
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed.push(dir);
        }
    }
    removed
}

/// Reaps TMPDIR, and the class cgroups of runs that are gone; returns the lines saying what
/// it removed (a killed run's server directories can hold hundreds of MB each), for the
/// caller to say.
pub fn reap_temp() -> Vec<String> {
    reap(&std::env::temp_dir())
        .into_iter()
        .chain(super::class::reap())
        .map(|d| {
            format!(
                "removed {}: left by a sweepbench that was killed",
                d.display()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_nobody_holds_are_reaped() {
        let root = tempfile::tempdir().unwrap();
        let live = root.path().join("sweepbench-run-live");
        let dead = root.path().join("sweepbench-srv-dead");
        let unmarked = root.path().join("sweepbench-run-new");
        let other = root.path().join("someone-else");
        for d in [&live, &dead, &unmarked, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("data"), "x").unwrap();
        }
        let _held = mark(&live).unwrap();
        drop(mark(&dead).unwrap());
        drop(mark(&other).unwrap());
        assert_eq!(reap(root.path()), vec![dead.clone()]);
        assert!(live.is_dir() && unmarked.is_dir() && other.is_dir() && !dead.exists());
        // A second process (here: a second open) cannot take a held mark.
        assert!(mark(&live).is_err());
    }
}
