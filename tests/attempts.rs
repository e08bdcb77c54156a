//! Every `run` leaves its own results/<sweep>/last-attempt.txt, however it ends — finished,
//! refused by a bad sweep file or by the lock of a run in progress — and `latest` keeps
//! pointing at the last run that has a directory; a run after one that was killed says so.
//! Synthetic targets: no server, seconds per run.

mod common;
use common::{run_in, text};
use std::path::Path;

const SWEEP: &str = "name = \"nightly\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 2]\nwarmup = \"0s\"\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"m\"\nsynthetic = { seed = 3 }\n";

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_run_leaves_its_own_attempt_and_latest_stays_the_last_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nightly.toml");
    let attempt = dir.path().join("results/nightly/last-attempt.txt");
    let latest = dir.path().join("results/nightly/latest/summary.txt");
    std::fs::write(&f, SWEEP).unwrap();

    // A night that ran: its summary, under the exit code and what it means.
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let a = read(&attempt);
    assert!(
        a.lines()
            .next()
            .unwrap()
            .ends_with(": exit 0, finished; every point ran and nothing regressed"),
        "{a}"
    );
    let summary = read(&latest);
    assert!(a.ends_with(&summary), "the run's summary.txt, whole:\n{a}");
    assert!(summary.contains("2 ok, 0 failed"), "{summary}");

    // A night refused by its sweep file: that refusal, never the night before's text.
    std::fs::write(&f, SWEEP.replace("threads = [1, 2]", "threads = \"lots\"")).unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let a = read(&attempt);
    assert!(
        a.contains(": exit 2, refused or stopped by an error"),
        "{a}"
    );
    assert!(a.contains("nightly.toml:4:"), "the line of the file: {a}");
    assert!(!a.contains("2 ok"), "{a}");
    assert_eq!(read(&latest), summary, "latest is still the last run");

    // A night refused by the lock of a run in progress: the refusal, with the holder.
    std::fs::write(&f, SWEEP).unwrap();
    let lock =
        sweepbench::pipeline::results::nightly::Lock::take(&dir.path().join("results/nightly"))
            .unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    drop(lock);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let a = read(&attempt);
    assert!(a.contains(": exit 2,"), "{a}");
    assert!(
        a.contains(&format!(
            "another run of this sweep is in progress (pid {}",
            std::process::id()
        )),
        "{a}"
    );
    assert_eq!(read(&latest), summary);
}

#[test]
fn a_run_after_one_killed_says_so_first() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nightly.toml");
    std::fs::write(&f, SWEEP).unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A run killed before its end leaves its points and no summary.
    let killed = std::fs::canonicalize(dir.path().join("results/nightly/latest")).unwrap();
    std::fs::remove_file(killed.join("summary.txt")).unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = killed.file_name().unwrap().to_string_lossy().into_owned();
    let said = format!(
        "warning: the run of {id} ended without a summary (killed, or the machine went down); its 2 finished point(s) are kept in "
    );
    let summary = read(&dir.path().join("results/nightly/latest/summary.txt"));
    assert!(summary.starts_with(&said), "{summary}");
    assert!(text(&out).contains(&said), "{}", text(&out));
    let a = read(&dir.path().join("results/nightly/last-attempt.txt"));
    assert!(a.contains(&said), "{a}");
}
