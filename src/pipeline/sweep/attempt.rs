//! What every `run` leaves, however it ends: results/<sweep>/last-attempt.txt — when it
//! started, its exit code and what that means, then the run's summary, or what stopped it
//! and the remedy — so that a cron line mailing that file never mails an earlier night's
//! text (`latest` keeps pointing at the last run that has a directory). The file says "did
//! not finish" from the moment the run holds its sweep's lock, so a run killed with -9, by the
//! OOM killer or a reboot leaves that, not the night before's verdict. And a run that finds
//! the run before it ended without a summary (killed, the machine down) says so first.

use super::SweepArgs;
use crate::exit::Exit;
use crate::pipeline::events::Events;
use std::path::{Path, PathBuf};

/// The file, in the sweep's results directory.
pub const FILE: &str = "last-attempt.txt";

/// The sweep's results directory for a run of `a` that stopped with an error, perhaps before
/// its sweep file was read: the name from the file, read leniently (a file the run refused
/// may not parse), else the file's stem.
pub fn sweep_dir(a: &SweepArgs) -> PathBuf {
    let text = match &a.inline {
        Some(t) => Some(t.clone()),
        None => std::fs::read_to_string(&a.file).ok(),
    };
    let name = text
        .and_then(|t| toml::from_str::<toml::Value>(&t).ok())
        .and_then(|v| v.get("name")?.as_str().map(str::to_string))
        .filter(|n| crate::pipeline::spec::valid_name(n))
        .or_else(|| {
            let stem = a.file.file_stem()?.to_string_lossy().into_owned();
            crate::pipeline::spec::valid_name(&stem).then_some(stem)
        })
        .unwrap_or_else(|| "sweep".into());
    a.results_dir.join(name)
}

/// The file's first words, whatever follows: which run, started when.
fn head(a: &SweepArgs, started: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "sweepbench run {} at {} UTC",
        a.file.display(),
        started.format("%Y-%m-%d %H:%M:%S")
    )
}

/// What an exit code says of a run, for the file's first line.
fn meaning(exit: Exit) -> &'static str {
    match exit {
        Exit::Ok => "finished; every point ran and nothing regressed",
        Exit::Failed => "finished with failed points (listed below)",
        Exit::BadInput => "refused or stopped by an error: see why below",
        Exit::Regression => "FAILED: a regression (below)",
        Exit::Interrupted => "interrupted (SIGINT or SIGTERM) before it finished",
    }
}

/// Writes last-attempt.txt in `dir` (the sweep's results directory) for a run of `a` that
/// started at `started` and ended with `exit`: `body` is the run's summary, or the error that
/// stopped it. A file that cannot be written is a warning: the run's own outcome stands.
pub fn write(
    a: &SweepArgs,
    dir: &Path,
    started: chrono::DateTime<chrono::Utc>,
    exit: Exit,
    body: &str,
    ev: &dyn Events,
) {
    let path = dir.join(FILE);
    // Ends with a line break: a mail or a log that appends after it starts on its own line.
    let text = format!(
        "{}: exit {}, {}\n\n{}\n",
        head(a, started),
        exit.code(),
        meaning(exit),
        body.trim_end()
    );
    let written = std::fs::create_dir_all(dir)
        .map_err(anyhow::Error::from)
        .and_then(|()| crate::pipeline::results::write_atomic(&path, text.as_bytes()));
    if let Err(e) = written {
        ev.warn(&format!("{} not written: {e:#}", path.display()));
    }
}

/// The first words of the file while a run is in progress: what a run that never returned
/// (SIGKILL, out of memory, the machine down) leaves behind.
const UNFINISHED: &str = "did not finish";

/// Writes last-attempt.txt in `dir` for a run of `a` in progress since `started`, in process
/// `pid`: replaced when the run ends, so whoever reads it before that — a cron line after a
/// kill -9 — reads that the run did not finish. `run_dir` names the run's directory once it
/// exists. Atomic, as the final text is; a file that cannot be written is a warning.
pub fn started(
    a: &SweepArgs,
    dir: &Path,
    started: chrono::DateTime<chrono::Utc>,
    run_dir: Option<&Path>,
    ev: &dyn Events,
) {
    let pid = std::process::id();
    let see = match run_dir {
        Some(r) => format!("its finished points are in {}", r.display()),
        None => format!(
            "it stopped before its run directory was made (results in {})",
            dir.display()
        ),
    };
    let text = format!(
        "{}: {UNFINISHED} (started, pid {pid})\n\n\
         If you read this, the run did not end: it was killed (kill -9, the OOM killer, a \
         timeout, a container's memory limit) or the machine went down; {see}. The next run \
         says so first; `sweepbench run --resume RUN_DIR` goes on with a sequential run.\n",
        head(a, started)
    );
    let path = dir.join(FILE);
    if let Err(e) = crate::pipeline::results::write_atomic(&path, text.as_bytes()) {
        ev.warn(&format!("{} not written: {e:#}", path.display()));
    }
}

/// What last-attempt.txt in `sweep_dir` says of a run that never returned, read under the
/// sweep's lock (so no run is in progress): its first line, when it is a started marker.
pub fn unfinished(sweep_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(sweep_dir.join(FILE)).ok()?;
    let first = text.lines().next()?;
    first.contains(&format!(": {UNFINISHED} (started, pid ")).then(|| {
        let what = first.strip_prefix("sweepbench ").unwrap_or(first);
        format!("the last attempt ({what}) never ended: killed, out of memory, or the machine went down")
    })
}

/// The run before this one, when it ended without writing its summary (killed with -9, the
/// machine down, a full disk): one line saying so and where its finished points are. Asked
/// with the sweep's lock held, so no run is in progress.
pub fn killed_before(sweep_dir: &Path) -> Option<String> {
    let last = crate::pipeline::results::nightly::runs(sweep_dir)
        .ok()?
        .pop()?;
    if last.join("summary.txt").exists() {
        return None;
    }
    let points = crate::pipeline::results::load_points(&last)
        .map(|p| p.len())
        .unwrap_or(0);
    let id = last.file_name()?.to_string_lossy().into_owned();
    Some(format!(
        "the run of {id} ended without a summary (killed, or the machine went down); its {points} finished point(s) are kept in {}",
        last.display()
    ))
}
