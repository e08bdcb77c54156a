//! On-CPU profiles of a managed server (`[run] profile = "perf"`): `perf record` on every CPU
//! around the first measured window of each point (repeat or round 1), kept as
//! profiles/<point>.perf.data with the server's pid beside it, for the report to pick the
//! server's samples out, fold and draw (report/profile.rs).

use crate::pipeline::plan::Point;
use crate::pipeline::results::profile::{self as files, DATA, FREQ_HZ, PID, UNAVAILABLE};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// How long perf is given to attach, once its file shows it started, before the window it
/// records starts.
pub const ATTACH: std::time::Duration = std::time::Duration::from_millis(300);
/// The longest wait for perf to start writing (its file) before a window goes on without.
const ATTACH_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One block's profiler: at most one recording at a time, its server's.
pub struct Profiler {
    dir: PathBuf,
    running: Option<(tokio::process::Child, PathBuf)>,
    /// Profiling failed here once: not tried again for this block.
    off: bool,
}

impl Profiler {
    /// A profiler writing into `dir` (the run's profiles/).
    pub fn new(dir: PathBuf) -> Profiler {
        Profiler {
            dir,
            running: None,
            off: false,
        }
    }

    /// Whether a recording is under way.
    pub fn recording(&self) -> bool {
        self.running.is_some()
    }

    /// Starts recording process `pid` for a window of point `p`, if that window is one to
    /// profile. A note comes back when profiles cannot be taken (said once per block).
    pub fn start(&mut self, pid: u32, p: &Point) -> Option<String> {
        if self.off || self.running.is_some() || !files::wants(p.repeat) {
            return None;
        }
        let perf = match available().and_then(|perf| {
            std::fs::create_dir_all(&self.dir)
                .map(|()| perf)
                .map_err(|e| format!("{}: {e}", self.dir.display()))
        }) {
            Ok(perf) => perf,
            Err(why) => return self.give_up(why),
        };
        let stem = files::stem(&p.id);
        let out = self.dir.join(format!("{stem}{DATA}"));
        // Every CPU, not the server's threads (`-p`): per-thread events tax each of the
        // server's context switches — measured 13–31 % of read_write's throughput at
        // 99–499 Hz on this VM, against none visible system-wide (docs/performance.md). The
        // server's own samples are picked out when folding, by its pid kept beside the data.
        if let Err(e) = std::fs::write(self.dir.join(format!("{stem}{PID}")), pid.to_string()) {
            return self.give_up(format!("{}: {e}", self.dir.display()));
        }
        let child = tokio::process::Command::new(perf)
            .args(["record", "-q", "-a", "-g", "-F", &FREQ_HZ.to_string()])
            .arg("-o")
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        match child {
            Ok(c) => {
                self.running = Some((c, out));
                None
            }
            Err(e) => self.give_up(format!("perf could not be started: {e}")),
        }
    }

    /// Waits until the recording under way has attached — perf has written its header and
    /// the machine's threads and maps to its file, which on a loaded host has taken longer
    /// than a 2 s slice — or has exited, or `ATTACH_LIMIT` has passed; then `ATTACH` more.
    pub async fn attached(&mut self) {
        let started = std::time::Instant::now();
        while let Some((child, out)) = self.running.as_mut() {
            let wrote = std::fs::metadata(&*out).is_ok_and(|m| m.len() > 0);
            if wrote || !matches!(child.try_wait(), Ok(None)) || started.elapsed() > ATTACH_LIMIT {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tokio::time::sleep(ATTACH).await;
    }

    /// Ends the recording under way, if any: perf is told to stop (SIGINT, as Ctrl-C) and
    /// writes its data. A note comes back when it failed.
    pub async fn stop(&mut self) -> Option<String> {
        let (mut child, out) = self.running.take()?;
        if let Some(id) = child.id() {
            // SAFETY: kill(2) on our own child's pid, which `child` has not reaped.
            unsafe { libc::kill(id as libc::pid_t, libc::SIGINT) };
        }
        let ended = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait()).await;
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use tokio::io::AsyncReadExt;
            let _ = e.read_to_string(&mut err).await;
        }
        let written = std::fs::metadata(&out).is_ok_and(|m| m.len() > 0);
        match ended {
            Ok(Ok(status)) if written && (status.success() || status.code().is_none()) => None,
            Ok(Ok(_)) | Err(_) => {
                let _ = std::fs::remove_file(&out);
                let said = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
                let why = match ended {
                    Err(_) => "perf did not stop within 30 s".to_string(),
                    _ if said.is_empty() => "perf record wrote no samples".to_string(),
                    _ => format!("perf record: {}", said.trim()),
                };
                self.give_up(why)
            }
            Ok(Err(e)) => self.give_up(format!("perf record: {e}")),
        }
    }

    fn give_up(&mut self, why: String) -> Option<String> {
        self.off = true;
        note_unavailable(&self.dir, &why);
        Some(format!("on-CPU profiles not taken: {why}"))
    }
}

/// Keeps the first reason profiles could not be taken in this run, for the report.
fn note_unavailable(dir: &Path, why: &str) {
    use std::io::Write;
    let _ = std::fs::create_dir_all(dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(UNAVAILABLE))
    {
        let _ = writeln!(f, "{why}");
    }
}

/// Whether perf can record here: on PATH, and the kernel lets this user sample every CPU
/// (root always may; others while kernel.perf_event_paranoid ≤ 0).
pub fn available() -> Result<PathBuf, String> {
    let perf = files::perf_binary()?;
    // SAFETY: geteuid(2) cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    match paranoid {
        Some(p) if p > 0 && !root => Err(format!(
            "kernel.perf_event_paranoid = {p} forbids sampling every CPU without root \
             (sysctl kernel.perf_event_paranoid=0 allows it, or run as root)"
        )),
        _ => Ok(perf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_is_kept_once() {
        let d = tempfile::tempdir().unwrap();
        let mut p = Profiler::new(d.path().join("profiles"));
        assert!(p.give_up("first".into()).unwrap().contains("first"));
        note_unavailable(&d.path().join("profiles"), "second");
        let kept = std::fs::read_to_string(d.path().join("profiles").join(UNAVAILABLE)).unwrap();
        assert_eq!(kept, "first\n");
        // Given up: no later window starts perf.
        let spec = crate::pipeline::spec::SweepSpec::parse(
            Path::new("p.toml"),
            "name = \"p\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1]\n\
             [[targets]]\nname = \"a\"\nurl = \"mysql://u@127.0.0.1/db\"\n",
        )
        .unwrap();
        let first = &crate::pipeline::plan::Plan::build(&spec, &[]).points[0];
        assert_eq!(first.repeat, 1);
        assert!(p.start(std::process::id(), first).is_none());
        assert!(p.running.is_none());
    }
}
