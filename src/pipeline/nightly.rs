//! What unattended runs need around a sweep: a lock per sweep, the list of its runs, and
//! `prune` (`history` is its own module).

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// results/<sweep>/.lock, holding the pid of the run. Removed on drop.
pub struct Lock {
    path: PathBuf,
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) == 0 }
}

impl Lock {
    /// Takes the sweep's lock; refuses while another live process holds it, takes over a
    /// lock whose process is gone.
    pub fn take(sweep_dir: &Path) -> anyhow::Result<Lock> {
        std::fs::create_dir_all(sweep_dir)
            .with_context(|| format!("creating {}", sweep_dir.display()))?;
        let path = sweep_dir.join(".lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    writeln!(f, "{}", std::process::id())?;
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid: i32 = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse().ok())
                        .unwrap_or(0);
                    if alive(pid) {
                        bail!(
                            "another run of this sweep is in progress (pid {pid}, lock {}); wait for it or stop it",
                            path.display()
                        );
                    }
                    // Stale: its process died without cleaning up.
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        }
        bail!("could not take the lock {}", path.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Run directories of a sweep, oldest first (the `latest` link and dot files excluded).
pub fn runs(sweep_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(sweep_dir)
        .with_context(|| format!("reading {}", sweep_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.is_symlink() && p.join("points.csv").is_file())
        .collect();
    v.sort();
    Ok(v)
}

/// `sweepbench prune`: keeps the newest `keep` runs, removes the rest; returns what it removed.
pub fn prune(sweep_dir: &Path, keep: usize) -> anyhow::Result<Vec<PathBuf>> {
    let runs = runs(sweep_dir)?;
    let n = runs.len().saturating_sub(keep);
    let old: Vec<PathBuf> = runs.into_iter().take(n).collect();
    for r in &old {
        std::fs::remove_dir_all(r).with_context(|| format!("removing {}", r.display()))?;
    }
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_lock_is_refused_and_a_stale_one_taken_over() {
        let d = tempfile::tempdir().unwrap();
        let l = Lock::take(d.path()).unwrap();
        let e = Lock::take(d.path()).err().expect("second lock refused");
        assert!(e
            .to_string()
            .contains("another run of this sweep is in progress"));
        drop(l);
        // A pid that cannot be running.
        std::fs::write(d.path().join(".lock"), "999999999\n").unwrap();
        assert!(Lock::take(d.path()).is_ok());
    }
}
