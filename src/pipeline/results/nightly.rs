//! What unattended runs need around a sweep: a lock per sweep, the list of its runs, and
//! `prune` (`history` is its own module).

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// results/<sweep>/.lock: an OS lock (flock) held for the run's life, so a holder that died,
/// however it died, never blocks the next run (a pid left in the file may belong to another
/// process by now). The file names the holder's pid for the message; it is removed on drop.
pub struct Lock {
    path: PathBuf,
    _file: std::fs::File,
}

fn same_file(a: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a.metadata(), std::fs::metadata(path)) {
        (Ok(x), Ok(y)) => x.ino() == y.ino() && x.dev() == y.dev(),
        _ => false,
    }
}

impl Lock {
    /// Takes the sweep's lock; refuses while another process holds it.
    pub fn take(sweep_dir: &Path) -> anyhow::Result<Lock> {
        use std::io::{Seek, Write};
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(sweep_dir)
            .with_context(|| format!("creating {}", sweep_dir.display()))?;
        let path = sweep_dir.join(".lock");
        // A holder may remove the file between our open and our flock: then the lock we got
        // is on a file nobody else will see, so try again on the new one.
        for _ in 0..5 {
            // Never through a link: a .lock planted as a symlink would have this run
            // truncate whatever it points to.
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(|e| {
                    if e.raw_os_error() == Some(libc::ELOOP) {
                        anyhow::anyhow!(
                            "{} is a symbolic link, which a lock file never is: remove it",
                            path.display()
                        )
                    } else {
                        anyhow::Error::new(e).context(format!("opening {}", path.display()))
                    }
                })?;
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let pid = std::fs::read_to_string(&path).unwrap_or_default();
                // A holder that is not a sweepbench (flock(1), a backup script) wrote no pid.
                let holder = match pid.trim() {
                    "" => "held by a process that did not name itself".to_string(),
                    p => format!("pid {p}"),
                };
                bail!(
                    "another run of this sweep is in progress ({holder}, lock {}); wait for it or stop it",
                    path.display()
                );
            }
            if !same_file(&f, &path) {
                continue;
            }
            f.set_len(0)?;
            f.rewind()?;
            writeln!(f, "{}", std::process::id())?;
            return Ok(Lock { path, _file: f });
        }
        bail!("could not take the lock {}", path.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held, so nobody can lock the old file after we let go.
        let _ = std::fs::remove_file(&self.path);
        // A run that stopped before creating its directory (a failed preflight) leaves no
        // empty results/<sweep>/ behind; remove_dir only removes an empty one.
        if let Some(sweep_dir) = self.path.parent() {
            let _ = std::fs::remove_dir(sweep_dir);
        }
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

/// `sweepbench prune`: keeps the newest `keep` runs and the gate's reference, removes the
/// rest; returns what it removed.
pub fn prune(sweep_dir: &Path, keep: usize) -> anyhow::Result<Vec<PathBuf>> {
    if !sweep_dir.is_dir() {
        bail!(
            "{} is not a directory (expected results/<sweep>)",
            sweep_dir.display()
        );
    }
    // Not while a run of the sweep writes into it (nor two prunes at once).
    let _lock = Lock::take(sweep_dir)?;
    let runs = runs(sweep_dir)?;
    let n = runs.len().saturating_sub(keep);
    // The gate's reference (the newest run that passed or was accepted) stays, however old:
    // removed, a failing streak would have nothing to fail against and pass.
    let reference = runs.iter().rev().find(|r| reference(r)).cloned();
    let old: Vec<PathBuf> = runs
        .into_iter()
        .take(n)
        .filter(|r| Some(r) != reference.as_ref())
        .collect();
    for r in &old {
        std::fs::remove_dir_all(r).with_context(|| format!("removing {}", r.display()))?;
    }
    Ok(old)
}

/// The file `accept` leaves in a run directory: the run is a reference for the gate from
/// now on, whatever its own gate said.
pub const ACCEPTED: &str = "accepted.json";

/// Whether a run can be what later runs are judged against: its gate passed (gate.json
/// says so; a run with no gate, or a gate.json from before "passed" was kept, counts), or it
/// was accepted.
pub fn reference(run: &Path) -> bool {
    if run.join(ACCEPTED).is_file() {
        return true;
    }
    gate_of(run)
        .and_then(|g| g.get("passed")?.as_bool())
        .unwrap_or(true)
}

/// A run's gate.json, where it has one that parses.
fn gate_of(run: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(run.join("gate.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether a run passed its gate only because `--confirm` measured its failing points again
/// and found no regression: its own figures failed, so it is no reference for later runs
/// (nor a failure to be judged against), unless it was accepted.
pub fn cleared_by_confirmation(run: &Path) -> bool {
    if run.join(ACCEPTED).is_file() {
        return false;
    }
    gate_of(run).is_some_and(|g| g.get("confirmation").is_some() && g["passed"] == true)
}

/// `sweepbench accept RUN`: the run's level becomes the reference of its sweep's gate (the
/// change it failed on was meant); later runs are judged against it. Returns what it says.
pub fn accept(run: &Path) -> anyhow::Result<String> {
    if !run.join("points.csv").is_file() || !run.join("manifest.json").is_file() {
        bail!(
            "{} is not a run directory (no points.csv and manifest.json): give results/<sweep>/<run>",
            run.display()
        );
    }
    let sweep_dir = run
        .parent()
        .with_context(|| format!("{} has no parent (results/<sweep>)", run.display()))?;
    // Not while a run of the sweep is judging against the old reference.
    let _lock = Lock::take(sweep_dir)?;
    let note = serde_json::json!({
        "accepted_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    super::write_atomic(
        &run.join(ACCEPTED),
        serde_json::to_string_pretty(&note)?.as_bytes(),
    )?;
    Ok(format!(
        "accepted {}: the gate judges later runs of the sweep against it",
        run.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_keeps_the_gates_reference_however_old() {
        let d = tempfile::tempdir().unwrap();
        for (id, passed) in [("r1", true), ("r2", true), ("r3", false), ("r4", false)] {
            let r = d.path().join(id);
            std::fs::create_dir_all(&r).unwrap();
            std::fs::write(r.join("points.csv"), "").unwrap();
            std::fs::write(r.join("gate.json"), format!("{{\"passed\": {passed}}}")).unwrap();
        }
        let removed = prune(d.path(), 1).unwrap();
        assert_eq!(removed, [d.path().join("r1"), d.path().join("r3")]);
        assert!(d.path().join("r2").is_dir() && d.path().join("r4").is_dir());
        // An accepted run is a reference too.
        std::fs::write(d.path().join("r4").join(ACCEPTED), "{}").unwrap();
        assert_eq!(prune(d.path(), 1).unwrap(), [d.path().join("r2")]);
    }

    #[test]
    fn a_held_lock_is_refused_and_a_dead_holders_file_is_not() {
        let d = tempfile::tempdir().unwrap();
        let l = Lock::take(d.path()).unwrap();
        let e = Lock::take(d.path()).err().expect("second lock refused");
        let me = std::process::id().to_string();
        assert!(
            e.to_string().contains(&format!(
                "another run of this sweep is in progress (pid {me},"
            )),
            "{e}"
        );
        drop(l);
        assert!(!d.path().join(".lock").exists());
        assert!(
            !d.path().exists(),
            "an empty sweep directory is not left behind"
        );
        std::fs::create_dir(d.path()).unwrap();
        // A file left by a holder that died, naming a pid that is alive now (ours, and pid 1):
        // nobody holds the OS lock, so it does not block.
        for pid in [me.as_str(), "1"] {
            std::fs::create_dir_all(d.path()).unwrap();
            std::fs::write(d.path().join(".lock"), format!("{pid}\n")).unwrap();
            let l = Lock::take(d.path()).unwrap();
            assert_eq!(
                std::fs::read_to_string(d.path().join(".lock")).unwrap(),
                format!("{me}\n")
            );
            drop(l);
        }
    }

    /// A lock held by something else than a sweepbench (flock(1) in a backup script) names
    /// no pid: said so, not "pid ,".
    #[test]
    fn a_lock_held_by_another_program_is_said_without_a_pid() {
        use std::os::fd::AsRawFd;
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(d.path().join(".lock")).unwrap();
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        let e = Lock::take(d.path()).err().expect("refused").to_string();
        assert!(
            e.contains("in progress (held by a process that did not name itself, lock "),
            "{e}"
        );
    }

    #[test]
    fn a_lock_planted_as_a_symlink_is_refused_and_its_target_kept() {
        let d = tempfile::tempdir().unwrap();
        let sweep = d.path().join("sweep");
        std::fs::create_dir(&sweep).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "IMPORTANT DATA\n").unwrap();
        std::os::unix::fs::symlink(&victim, sweep.join(".lock")).unwrap();
        let e = Lock::take(&sweep)
            .err()
            .expect("a symlinked lock is refused");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "IMPORTANT DATA\n"
        );
    }
}
