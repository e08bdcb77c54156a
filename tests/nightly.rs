//! Nightly operation: compare, history and prune across runs, the sweep lock, SIGINT and
//! --resume on synthetic targets (no server; one paced in real time where a run must last
//! long enough to be interrupted), and a managed server killed mid-point.

mod common;
use assert_cmd::Command;
use common::{text, wait_for};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use sweepbench::pipeline::results::{load_points, PointRecord, PointStatus};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A one-repeat sweep on a managed server.
    fn sweep(&self, name: &str, threads: &str, duration: &str) -> PathBuf {
        self.sweep_on(name, threads, duration, "repeats = 1", "server = {}")
    }

    fn sweep_on(
        &self,
        name: &str,
        threads: &str,
        duration: &str,
        run_extra: &str,
        target: &str,
    ) -> PathBuf {
        let body = format!(
            "name = \"{name}\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = {threads}\nduration = \"{duration}\"\nreport_interval = \"1s\"\n{run_extra}\n[[targets]]\nname = \"local\"\n{target}\n"
        );
        let f = self.dir.path().join(format!("{name}.toml"));
        std::fs::write(&f, body).unwrap();
        f
    }

    fn results(&self) -> PathBuf {
        self.dir.path().join("results")
    }

    fn cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
        c.env("TMPDIR", self.dir.path());
        c
    }

    fn run(&self, file: &Path, extra: &[&str]) -> std::process::Output {
        self.cmd()
            .arg("run")
            .arg(file)
            .arg("--results-dir")
            .arg(self.results())
            .args(extra)
            .output()
            .unwrap()
    }

    fn spawn(&self, file: &Path, extra: &[&str]) -> std::process::Child {
        self.cmd()
            .arg("run")
            .arg(file)
            .arg("--results-dir")
            .arg(self.results())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Servers still running from this environment.
    fn servers(&self) -> Vec<i32> {
        let out = std::process::Command::new("pgrep")
            .args(["-f", &format!("mariadbd.*{}", self.dir.path().display())])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

fn only_run(results: &Path, sweep: &str) -> PathBuf {
    sweepbench::pipeline::sweep::latest_run(results, sweep).expect("a run directory")
}

fn ok_rows(run: &Path) -> Vec<PointRecord> {
    load_points(run)
        .map(|v| {
            v.into_iter()
                .filter(|p| p.status == PointStatus::Ok)
                .collect()
        })
        .unwrap_or_default()
}

fn scaled_copy(from: &Path, to: &Path, tput: f64, lat: f64) {
    std::fs::create_dir_all(to).unwrap();
    let mut rows = load_points(from).unwrap();
    for r in &mut rows {
        r.tps *= tput;
        r.qps *= tput;
        r.lat_p95_ms *= lat;
        r.lat_p99_ms = r.lat_p99_ms.map(|v| v * lat);
        r.lat_avg_ms *= lat;
    }
    let mut w = csv::Writer::from_path(to.join("points.csv")).unwrap();
    for r in rows {
        w.serialize(r).unwrap();
    }
}

#[test]
fn compare_and_history_across_two_runs() {
    let env = Env::new();
    // Two nights of one model, each with its own draws (3 % noise): compare must see
    // through them.
    let f = env.sweep_on(
        "twice",
        "[2, 4]",
        "3s",
        "warmup = \"1s\"\nrepeats = 3",
        "synthetic = { seed = 12, noise = 0.03, vary_by_run = true }",
    );
    for _ in 0..2 {
        let out = env.run(&f, &["--quiet"]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let runs = sweepbench::pipeline::results::nightly::runs(&env.results().join("twice")).unwrap();
    assert_eq!(runs.len(), 2);
    let bin = || Command::cargo_bin("sweepbench").unwrap();
    let same = bin()
        .args([
            "compare",
            runs[0].to_str().unwrap(),
            runs[1].to_str().unwrap(),
            "--threshold",
            "25%",
        ])
        .output()
        .unwrap();
    // Two runs of the same build: whatever the noise did, nothing is called regressed.
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(
        text(&same).contains("2 matched points") && !text(&same).contains("REGRESSED"),
        "{}",
        text(&same)
    );

    let worse = env.dir.path().join("worse");
    // A copy of the first run made 75 % slower.
    scaled_copy(&runs[0], &worse, 0.25, 4.0);
    let out = bin()
        .args([
            "compare",
            runs[0].to_str().unwrap(),
            worse.to_str().unwrap(),
            "--threshold",
            "25%",
        ])
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    for point in [
        "local/default/oltp_point_select/t2 ",
        "local/default/oltp_point_select/t4 ",
    ] {
        let line = t
            .lines()
            .find(|l| l.starts_with(point))
            .unwrap_or_else(|| panic!("{point} missing:\n{t}"));
        assert!(line.contains("regressed (tps -"), "{line}");
    }
    assert!(t.contains("REGRESSED: regressed at 2/2 points"), "{t}");
    let md = bin()
        .args([
            "compare",
            runs[0].to_str().unwrap(),
            worse.to_str().unwrap(),
            "--format",
            "md",
        ])
        .output()
        .unwrap();
    assert!(
        text(&md).contains("| local/default/oltp_point_select/t2 |"),
        "{}",
        text(&md)
    );

    let page = env.dir.path().join("history.html");
    let h = bin()
        .args([
            "history",
            env.results().join("twice").to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let t = text(&h);
    // Two runs: the newest has too little history to be judged, so nothing fires.
    assert_eq!(h.status.code(), Some(0), "{t}");
    for r in &runs {
        assert!(t.contains(r.file_name().unwrap().to_str().unwrap()), "{t}");
    }
    for point in [
        "local/default/oltp_point_select/t2 tps",
        "local/default/oltp_point_select/t4 p95",
    ] {
        let line = t
            .lines()
            .find(|l| l.starts_with(point))
            .unwrap_or_else(|| panic!("{point} missing:\n{t}"));
        assert!(line.contains("not judged: needs 3 earlier runs"), "{line}");
    }
    let page = std::fs::read_to_string(&page).unwrap();
    assert!(
        page.contains("<svg") && page.contains("oltp_point_select: throughput per run"),
        "trend chart"
    );

    let p = bin()
        .args([
            "prune",
            env.results().join("twice").to_str().unwrap(),
            "--keep",
            "1",
        ])
        .output()
        .unwrap();
    assert!(p.status.success(), "{}", text(&p));
    assert_eq!(
        sweepbench::pipeline::results::nightly::runs(&env.results().join("twice")).unwrap(),
        vec![runs[1].clone()]
    );
    // Keeping none would leave `latest` pointing nowhere: refused, nothing removed.
    let p = bin()
        .args([
            "prune",
            env.results().join("twice").to_str().unwrap(),
            "--keep",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(p.status.code(), Some(2), "{}", text(&p));
    assert!(text(&p).contains("keep at least 1 run"), "{}", text(&p));
    assert_eq!(
        sweepbench::pipeline::results::nightly::runs(&env.results().join("twice")).unwrap(),
        vec![runs[1].clone()]
    );
}

#[test]
fn lock_sigint_and_resume() {
    let env = Env::new();
    // A model paced in real time: the run lasts long enough to hold its lock and be
    // interrupted, as a server's would.
    let f = env.sweep_on(
        "night",
        "[1, 2, 4]",
        "3s",
        "repeats = 1",
        "synthetic = { seed = 13, real_time = true }",
    );
    let mut first = env.spawn(&f, &[]);
    let lock = env.results().join("night/.lock");
    wait_for("the lock", Duration::from_secs(60), || lock.exists());
    let second = env.run(&f, &[]);
    assert_eq!(second.status.code(), Some(2), "{}", text(&second));
    assert!(text(&second).contains("another run of this sweep is in progress"));

    // Interrupt once the first point is written.
    wait_for("a finished point", Duration::from_secs(90), || {
        sweepbench::pipeline::sweep::latest_run(&env.results(), "night")
            .is_some_and(|r| !ok_rows(&r).is_empty())
    });
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(first.id() as i32, libc::SIGINT);
    }
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let run = only_run(&env.results(), "night");
    let before = ok_rows(&run);
    assert!(!before.is_empty() && before.len() < 3, "{before:?}");
    assert!(
        run.join("report.html").is_file(),
        "a report of what finished"
    );
    assert!(!lock.exists(), "lock released");
    // The interrupted night says so, in its summary and in the attempt a cron line mails
    // (which the refused second run had written first).
    let summary = std::fs::read_to_string(run.join("summary.txt")).unwrap();
    assert!(
        summary.contains(&format!(
            "interrupted (SIGINT or SIGTERM) with {} point(s) or slice(s) finished ok",
            before.len()
        )),
        "{summary}"
    );
    let attempt = std::fs::read_to_string(env.results().join("night/last-attempt.txt")).unwrap();
    assert!(
        attempt.contains(": exit 130, interrupted (SIGINT or SIGTERM) before it finished"),
        "{attempt}"
    );
    assert!(attempt.ends_with(&summary), "{attempt}");

    let out = env.run(&f, &["--resume", run.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let after = ok_rows(&run);
    assert_eq!(after.len(), 3, "{after:?}");
    for b in &before {
        let a = after.iter().find(|a| a.point_id == b.point_id).unwrap();
        assert_eq!(a.started_at, b.started_at, "{} was redone", b.point_id);
    }
    // A changed sweep file cannot be resumed into the same directory.
    let changed = env.sweep_on(
        "night",
        "[1, 2, 8]",
        "3s",
        "repeats = 1",
        "synthetic = { seed = 13, real_time = true }",
    );
    let out = env.run(&changed, &["--resume", run.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("the sweep file changed"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_server_killed_mid_point_fails_that_point_only() {
    let env = Env::new();
    let f = env.sweep("crash", "[1, 2, 4]", "4s");
    let child = env.spawn(&f, &[]);
    wait_for("the first point", Duration::from_secs(90), || {
        sweepbench::pipeline::sweep::latest_run(&env.results(), "crash")
            .is_some_and(|r| !ok_rows(&r).is_empty())
    });
    std::thread::sleep(Duration::from_millis(1500));
    let pids = env.servers();
    assert_eq!(pids.len(), 1, "one managed server: {pids:?}");
    // SAFETY: killing the server our child started.
    unsafe {
        libc::kill(pids[0], libc::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let rows = load_points(&only_run(&env.results(), "crash")).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].status, PointStatus::Ok);
    assert_eq!(rows[1].status, PointStatus::Failed, "{rows:?}");
    assert!(
        rows[1].error.contains("the server died and was restarted"),
        "{}",
        rows[1].error
    );
    // The connection the kill broke: libmysqlclient's "lost connection" or "gone away".
    assert!(
        matches!(rows[1].error_code, Some(2013 | 2006)),
        "{:?}: {}",
        rows[1].error_code,
        rows[1].error
    );
    assert_eq!(rows[2].status, PointStatus::Ok, "{rows:?}");
    assert!(env.servers().is_empty());
}
