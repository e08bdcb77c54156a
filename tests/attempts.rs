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

/// A scratch checkout for the README's cron line: the binary linked where the line expects
/// its release build, results/ made, `logger` replaced on PATH (root/bin) by one that appends
/// to root/syslog. Returns the checkout and the line, `cd`-ing into it.
fn cron_checkout() -> (tempfile::TempDir, String) {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme
        .lines()
        .find_map(|l| l.strip_prefix("0 2 * * * "))
        .expect("the README has a cron line");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cmd = line.replace("cd /srv/sweepbench", &format!("cd {}", root.display()));
    std::fs::create_dir_all(root.join("target/release")).unwrap();
    std::fs::create_dir_all(root.join("sweeps")).unwrap();
    // A checkout has results/ (its .gitkeep): the line appends its log there.
    std::fs::create_dir_all(root.join("results")).unwrap();
    let exe = root.join("target/release/sweepbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("sweepbench"), &exe).unwrap();
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let logger = bin.join("logger");
    std::fs::write(
        &logger,
        "#!/bin/sh\n# logger -t TAG -f FILE\ncat \"$4\" >> \"$(dirname \"$0\")/../syslog\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&logger, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (dir, cmd)
}

/// The cron line as cron runs it in `root`: the shell's child, its stdout (what is mailed).
fn cron_night(root: &Path, cmd: &str) -> std::process::Child {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env(
            "PATH",
            format!(
                "{}:{}",
                root.join("bin").display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .env("TMPDIR", root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A night killed with SIGKILL halfway (the OOM killer, `timeout -s KILL`, a reboot): the
/// README's cron line mails that night's "did not finish", never the night before's
/// "passed"; the next night says first that the killed one never ended.
#[test]
fn a_night_killed_with_sigkill_mails_that_it_did_not_finish() {
    let (dir, cmd) = cron_checkout();
    let root = dir.path();
    let sweep_dir = root.join("results/nightly");
    let attempt = sweep_dir.join("last-attempt.txt");
    let write = |duration: &str| {
        let body = SWEEP.replace("duration = \"1s\"", &format!("duration = \"{duration}\""));
        std::fs::write(root.join("sweeps/nightly.toml"), body).unwrap();
    };
    write("1s");
    let first = cron_night(root, &cmd).wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        "",
        "a good night mails nothing"
    );
    assert!(read(&attempt).contains(": exit 0, finished"));
    let night1 = std::fs::canonicalize(sweep_dir.join("latest")).unwrap();

    // Night 2 runs 2 × 60 s points; killed once its run directory exists.
    write("60s");
    let night = cron_night(root, &cmd);
    let mut marker = String::new();
    common::wait_for(
        "night 2's run directory",
        std::time::Duration::from_secs(60),
        || {
            marker = std::fs::read_to_string(&attempt).unwrap_or_default();
            marker.contains("did not finish") && marker.contains("its finished points are in")
        },
    );
    let pid: i32 = marker
        .split("pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a pid in {marker}"));
    assert_ne!(pid as u32, night.id(), "the sweepbench, not the shell");
    // SAFETY: a signal to the child's child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let out = night.wait_with_output().unwrap();
    let mail = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(mail.contains(": did not finish (started, pid "), "{mail}");
    assert!(mail.contains("killed"), "{mail}");
    assert!(!mail.contains("exit 0"), "never night 1's text: {mail}");
    assert!(!mail.contains(&night1.display().to_string()), "{mail}");
    assert!(read(&root.join("syslog")).contains("did not finish"));

    // Night 3: the killed night said first, in its summary.
    write("1s");
    let third = cron_night(root, &cmd).wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&third.stdout), "");
    let summary = read(&sweep_dir.join("latest/summary.txt"));
    assert!(
        summary.starts_with("warning: the run of ") && summary.contains("ended without a summary"),
        "{summary}"
    );
}

/// The README's cron line itself, run night after night in a scratch checkout (the binary
/// linked where the line expects its release build, a synthetic control nightly as
/// sweeps/nightly.toml, `logger` replaced on PATH by one that appends to a file: no syslog
/// here). What the command prints is what cron mails: nothing on a good night, the night's
/// own last-attempt.txt on a bad one — a regression every night it persists, an unreachable
/// candidate, a night refused by the lock, a bad sweep file, each as itself; after `accept`,
/// the slower level passes. Every night, `history` exits as the newest run's gate decided.
#[test]
fn the_readmes_cron_line_mails_each_bad_night_its_own_truth() {
    let (dir, cmd) = cron_checkout();
    let root = dir.path();
    let exe = root.join("target/release/sweepbench");
    let head = "name = \"nightly\"\ncontrol = \"control/default\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [1, 4]\ndesign = \"paired\"\nslice = \"2s\"\nbudget = \"5m\"\n";
    let sweep = |lambda: u32| {
        format!("{head}[[targets]]\nname = \"control\"\nsynthetic = {{ seed = 11, noise = 0.05, burst = 0.2, vary_by_run = true }}\n[[targets]]\nname = \"candidate\"\nsynthetic = {{ seed = 11, noise = 0.05, burst = 0.2, vary_by_run = true, lambda = {lambda} }}\n")
    };
    let night = |body: &str| {
        std::fs::write(root.join("sweeps/nightly.toml"), body).unwrap();
        let out = cron_night(root, &cmd).wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let sweep_dir = root.join("results/nightly");
    // `history` after every night: its exit code is the newest run's gate's (3: it failed).
    let history_agrees = |night: &str| {
        let newest = sweepbench::pipeline::results::nightly::runs(&sweep_dir)
            .unwrap()
            .pop()
            .unwrap();
        let gate: serde_json::Value =
            serde_json::from_str(&read(&newest.join("gate.json"))).unwrap();
        let failed = gate["passed"] == false && !newest.join("accepted.json").exists();
        let h = std::process::Command::new(&exe)
            .arg("history")
            .arg(&sweep_dir)
            .output()
            .unwrap();
        assert_eq!(
            h.status.code(),
            Some(if failed { 3 } else { 0 }),
            "{night}: {}",
            String::from_utf8_lossy(&h.stdout)
        );
    };
    // Three same-build nights: nothing to mail.
    for i in 0..3 {
        assert_eq!(night(&sweep(400)), "", "A/A night {i}");
        history_agrees("A/A");
    }
    // The candidate 30 % slower: mailed, and mailed again the next night (judged against
    // the last night that passed, not the slow one before).
    for i in 0..2 {
        let mail = night(&sweep(280));
        assert!(mail.contains(": exit 3, FAILED: a regression"), "{mail}");
        assert!(
            mail.trim_end().ends_with("--fail-on-regression: FAILED"),
            "{mail}"
        );
        assert_eq!(mail.contains("still judged against it"), i == 1, "{mail}");
        history_agrees("slower");
    }
    // A candidate that cannot be reached: that night's connect failure, never "passed".
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let unreachable = format!("{head}[[targets]]\nname = \"control\"\nserver = {{}}\n[[targets]]\nname = \"candidate\"\nurl = \"mysql://sbtest@127.0.0.1:{port}/sbtest\"\n");
    let mail = night(&unreachable);
    assert!(
        mail.contains(": exit 2, refused or stopped by an error"),
        "{mail}"
    );
    assert!(
        mail.contains("[FAIL] candidate connect: cannot connect to 127.0.0.1"),
        "{mail}"
    );
    assert!(!mail.contains("passed"), "{mail}");
    history_agrees("unreachable");
    // A night refused by the lock of a run still in progress: the refusal.
    let held = sweepbench::pipeline::results::nightly::Lock::take(&sweep_dir).unwrap();
    let mail = night(&sweep(280));
    drop(held);
    assert!(mail.contains(": exit 2, refused"), "{mail}");
    assert!(
        mail.contains("another run of this sweep is in progress"),
        "{mail}"
    );
    assert!(!mail.contains("--fail-on-regression"), "{mail}");
    history_agrees("locked");
    // A night whose sweep file cannot be read: that refusal, not the night before's text.
    let mail = night(&sweep(280).replace("threads = [1, 4]", "threads = \"x\""));
    assert!(
        mail.contains(": exit 2, refused or stopped by an error"),
        "{mail}"
    );
    assert!(!mail.contains("--fail-on-regression"), "{mail}");
    // The slowdown was meant: accepted, the slower level passes from the next night on.
    let last = sweepbench::pipeline::results::nightly::runs(&sweep_dir)
        .unwrap()
        .pop()
        .unwrap();
    let out = std::process::Command::new(&exe)
        .arg("accept")
        .arg(&last)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    history_agrees("accepted");
    assert_eq!(night(&sweep(280)), "");
    history_agrees("after accept");
    // What the stand-in logger was handed is what was mailed, night by night.
    let syslog = read(&root.join("syslog"));
    assert_eq!(syslog.matches("exit 3, FAILED").count(), 2, "{syslog}");
    assert_eq!(syslog.matches("exit 2, refused").count(), 3, "{syslog}");
    assert!(!syslog.contains("exit 0"), "{syslog}");
}

/// What a killed run left in TMPDIR (a server's data can be hundreds of MB) is removed by the
/// next run, and said: on the terminal even under --quiet, and in its summary.
#[test]
fn a_killed_runs_leftovers_are_removed_and_said_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let left = dir.path().join("sweepbench-run-killed");
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("data"), "x").unwrap();
    // Marked as in use by a run that is gone: nobody holds the mark.
    drop(sweepbench::owner::mark(&left).unwrap());
    let f = dir.path().join("nightly.toml");
    std::fs::write(&f, SWEEP).unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = format!(
        "removed {}: left by a sweepbench that was killed",
        left.display()
    );
    assert!(!left.exists());
    assert!(text(&out).contains(&said), "{}", text(&out));
    let summary = read(&dir.path().join("results/nightly/latest/summary.txt"));
    assert!(summary.contains(&format!("note: {said}")), "{summary}");
}
