//! What unattended runs need around a sweep: a lock per sweep, `history` across runs, and
//! `prune`.

use crate::results::load_points;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
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

/// Peak (tps, threads) per workload of one run.
type Peaks = BTreeMap<String, (f64, u32)>;

/// `sweepbench history`: each run's peak tps per workload, and the runs where a workload's
/// peak moved by more than `threshold_pct` from the median of the runs before it. With `html`,
/// also writes a page with the trend chart there.
pub fn history(
    sweep_dir: &Path,
    threshold_pct: f64,
    html: Option<&Path>,
) -> anyhow::Result<String> {
    let runs = runs(sweep_dir)?;
    if runs.is_empty() {
        bail!("no runs under {}", sweep_dir.display());
    }
    let mut table: Vec<(String, Peaks)> = Vec::new();
    let mut workloads: Vec<String> = Vec::new();
    for r in &runs {
        let points = load_points(r)?;
        let mut peaks = Peaks::new();
        for p in points.iter().filter(|p| p.status == "ok") {
            if !workloads.contains(&p.workload) {
                workloads.push(p.workload.clone());
            }
            let e = peaks.entry(p.workload.clone()).or_insert((0.0, 0));
            if p.tps > e.0 {
                *e = (p.tps, p.threads);
            }
        }
        let name = r
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        table.push((name, peaks));
    }
    let mut s = format!("{:<20}", "run");
    for w in &workloads {
        s.push_str(&format!(" {:>28}", format!("{w} peak tps @threads")));
    }
    s.push('\n');
    let mut changes = Vec::new();
    for (i, (name, peaks)) in table.iter().enumerate() {
        s.push_str(&format!("{name:<20}"));
        for w in &workloads {
            match peaks.get(w) {
                Some((tps, t)) => {
                    let before: Vec<f64> = table[..i]
                        .iter()
                        .filter_map(|(_, p)| p.get(w).map(|x| x.0))
                        .collect();
                    let mut mark = "";
                    if !before.is_empty() {
                        let mut b = before.clone();
                        b.sort_by(|a, c| a.total_cmp(c));
                        let med = b[b.len() / 2];
                        let d = if med > 0.0 {
                            (tps - med) / med * 100.0
                        } else {
                            0.0
                        };
                        if d.abs() > threshold_pct {
                            mark = "*";
                            changes.push(format!("{name}: {w} peak {d:+.1} % against the median of the runs before it"));
                        }
                    }
                    s.push_str(&format!(" {:>28}", format!("{tps:.1} @{t}{mark}")));
                }
                None => s.push_str(&format!(" {:>28}", "—")),
            }
        }
        s.push('\n');
    }
    if let Some(path) = html {
        let lines: Vec<(String, Vec<(u32, f64)>)> = workloads
            .iter()
            .map(|w| {
                let pts = table
                    .iter()
                    .enumerate()
                    .filter_map(|(i, (_, p))| p.get(w).map(|x| (i as u32 + 1, x.0)))
                    .collect();
                (w.clone(), pts)
            })
            .collect();
        let name = sweep_dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let esc = |x: &str| x.replace('&', "&amp;").replace('<', "&lt;");
        let page = format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{n} history</title><style>body{{font-family:sans-serif;max-width:1000px;margin:2rem auto}}pre{{background:#f6f6f6;padding:1rem}}</style></head><body><h1>{n}: history</h1>{svg}<pre>{text}</pre></body></html>\n",
            n = esc(&name),
            svg = crate::report::chart::trend_svg(&format!("{name}: peak throughput per run"), &lines),
            text = esc(&s),
        );
        crate::results::write_atomic(path, page.as_bytes())?;
    }
    if changes.is_empty() {
        s.push_str(&format!("\nno change point beyond {threshold_pct} %\n"));
    } else {
        s.push_str(&format!("\nchange points (* beyond {threshold_pct} %):\n"));
        for c in changes {
            s.push_str(&format!("  {c}\n"));
        }
    }
    Ok(s)
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
