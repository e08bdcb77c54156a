//! What a run does when its server goes away or stalls, each reproduced on a throwaway
//! MariaDB: a TLS server killed mid-run is an error and a kept report (not a silent death by
//! SIGPIPE), in `bench` under both `--db-ps-mode`s and in `run` on a terminal or not; a run that
//! ignores 2013/2006 ends at its deadline and says which threads it lost; and write stalls
//! leave no interval line with transactions but a latency of 0.00.

mod common;
use common::tls::{pki, tls_server};
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

fn spawn(args: &[String]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting sweepbench")
}

/// Waits until `user` has `n` connections on `s` (a run's threads, connected), then a second
/// more, so the run is measuring when the server is killed however slow the machine.
fn running(s: &ManagedServer, user: &str, n: u32) {
    let sql = format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '{user}'");
    wait_for("the run's connections", Duration::from_secs(60), || {
        query_col_on(s, &sql)
            .first()
            .and_then(|c| c.parse::<u32>().ok())
            .is_some_and(|c| c >= n)
    });
    std::thread::sleep(Duration::from_secs(1));
}

/// SIGKILL to the server, as a crash or an OOM kill ends it.
fn kill_server(s: &mut ManagedServer) {
    let pid = s.pid().expect("the server runs") as i32;
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    wait_for("the server to die", Duration::from_secs(10), || {
        !s.is_running()
    });
}

fn tls_args(s: &ManagedServer, words: &str) -> Vec<String> {
    let mut a: Vec<String> = words.split_whitespace().map(String::from).collect();
    a.extend([
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", s.port()),
        "--mysql-user=tlsu".into(),
        "--mysql-password=tls pw".into(),
        "--mysql-db=tlsdb".into(),
        "--table-size=500".into(),
        "--mysql-ssl=on".into(),
    ]);
    a
}

/// The first figure of a line of sysbench's report ("transactions:", "reconnects:", "total
/// time:" without its unit), failing the test when the report has none.
fn figure<T: std::str::FromStr>(text: &str, label: &str) -> T {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.trim_end_matches('s').parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' figure in {text}"))
}

#[test]
fn a_tls_server_killed_mid_run_is_an_error_and_the_report_is_kept() {
    let p = pki();
    let mut s = tls_server(&p);
    let out = Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(tls_args(&s, "bench oltp_point_select prepare"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for mode in ["auto", "disable"] {
        let run = format!(
            "bench oltp_point_select run --threads=8 --time=20 --report-interval=1 --db-ps-mode={mode}"
        );
        let child = spawn(&tls_args(&s, &run));
        running(&s, "tlsu", 8);
        kill_server(&mut s);
        let (code, out) = wait_end(child, "bench to end", Duration::from_secs(30));
        assert_eq!(
            code,
            Some(1),
            "exit 1, not death by SIGPIPE ({mode}): {out}"
        );
        assert!(
            out.contains("FATAL:") && out.contains("Lost connection to MySQL server"),
            "the lost connection is named ({mode}): {out}"
        );
        assert!(
            figure::<u64>(&out, "transactions:") > 0,
            "the report is kept ({mode}): {out}"
        );
        s.restart().unwrap();
    }
}

/// `run` with its output on a terminal (no shield, SIGPIPE at its default) and in pipes:
/// the TLS server killed during the second point fails that point, and the first is kept.
#[test]
fn a_sweep_whose_tls_server_dies_keeps_its_finished_point_on_a_terminal_or_not() {
    let p = pki();
    let mut s = tls_server(&p);
    for terminal in [true, false] {
        sweep_loses_its_tls_server(&mut s, terminal);
        s.restart().unwrap();
    }
}

fn sweep_loses_its_tls_server(s: &mut ManagedServer, terminal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("tls.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"tlsdeath\"\n[data]\ntables = 1\ntable_size = 200\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2, 8]\nduration = \"4s\"\nrepeats = 1\norder = \"sequential\"\n[[targets]]\nname = \"secure\"\nurl = \"mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode=REQUIRED\"\n",
            s.port()
        ),
    )
    .unwrap();
    let results = dir.path().join("results");
    let bin = assert_cmd::cargo::cargo_bin("sweepbench");
    let mut c = if terminal {
        // `script` gives the run a terminal for stdout and stderr, where no shield swaps
        // them for pipes.
        let cmd = format!(
            "{} run {} --results-dir {}",
            bin.display(),
            sweep.display(),
            results.display()
        );
        let mut c = Command::new("script");
        c.args(["-qefc", &cmd, "/dev/null"]);
        c
    } else {
        let mut c = Command::new(&bin);
        c.arg("run").arg(&sweep).arg("--results-dir").arg(&results);
        c
    };
    let child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the run (under script(1), from util-linux, for a terminal)");
    // The run's directory is results/<name>/<timestamp>/ (and a `latest` link beside it).
    let points = || {
        let mut found = None;
        for e in std::fs::read_dir(results.join("tlsdeath")).ok()?.flatten() {
            let f = e.path().join("points.csv");
            if f.is_file() && !e.path().is_symlink() {
                found = Some(f);
            }
        }
        found
    };
    wait_for("the first point", Duration::from_secs(120), || {
        points()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .is_some_and(|t| t.lines().count() >= 2)
    });
    // Killed while the second point's 8 connections run, not while they are being opened
    // (then the point fails to connect: also an error, but not the one under test).
    running(s, "tlsu", 8);
    kill_server(s);
    let (code, out) = wait_end(child, "the sweep to end", Duration::from_secs(60));
    assert_eq!(
        code,
        Some(1),
        "a failed point, not SIGPIPE (terminal: {terminal}): {out}"
    );
    let csv = std::fs::read_to_string(points().unwrap()).unwrap();
    assert_eq!(csv.lines().count(), 3, "both points recorded: {csv}");
    assert!(
        csv.contains(",ok,"),
        "the first point kept as measured: {csv}"
    );
    assert!(
        csv.contains("Lost connection to MySQL server"),
        "the second names the lost connection: {csv}"
    );
    let run_dir = points().unwrap().parent().unwrap().to_path_buf();
    assert!(run_dir.join("report.md").is_file(), "{out}");
    assert!(run_dir.join("summary.txt").is_file(), "{out}");
}

#[test]
fn ignored_lost_connections_end_at_the_deadline_and_the_lost_threads_are_said() {
    let mut s = ManagedServer::start(&ServerSpec::default()).unwrap();
    exec_root(&s, &["CREATE DATABASE lost"]).unwrap();
    let conn = conn_args(&s, "lost");
    bench_ok("oltp_read_only prepare --table-size=500", &conn);
    let mut run = args(
        "oltp_read_only run --table-size=500 --threads=4 --time=8 --report-interval=1 --mysql-ignore-errors=1213,1020,1205,2013,2006",
        &conn,
    );
    run.insert(0, "bench".into());
    let started = Instant::now();
    let child = spawn(&run);
    running(&s, "root", 5);
    kill_server(&mut s);
    let (code, out) = wait_end(child, "bench to end", Duration::from_secs(8 + 15));
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("FATAL: 4 of 4 thread(s) lost the connection")
            && out.contains("could not reconnect before the run ended")
            && out.contains("error 2003")
            && out.contains("the run went on to its end with the threads it had left"),
        "{out}"
    );
    let reconnects: u64 = figure(&out, "reconnects:");
    assert!(reconnects >= 4, "every lost connection counted: {out}");
    let total: f64 = figure(&out, "total time:");
    assert!(
        (7.5..9.5).contains(&total),
        "the run's time is its --time, not how long it took to give up: {total} s, {took:?}"
    );
}

#[test]
fn write_stalls_leave_no_interval_with_transactions_and_no_latency() {
    let s = server();
    let conn = fresh_db("stalls");
    bench_ok(
        "oltp_read_write prepare --tables=2 --table-size=2000",
        &conn,
    );
    let mut run = args(
        "oltp_read_write run --tables=2 --table-size=2000 --threads=16 --time=9 --report-interval=1",
        &conn,
    );
    run.insert(0, "bench".into());
    let child = spawn(&run);
    // The locks fall inside the run however long its threads took to connect.
    wait_for("the run's 16 connections", Duration::from_secs(60), || {
        query_col_on(
            s,
            "SELECT COUNT(*) FROM information_schema.processlist WHERE db = 'stalls'",
        )
        .first()
        .and_then(|c| c.parse::<u32>().ok())
        .is_some_and(|c| c >= 16)
    });
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(700));
        hold_lock(
            s,
            "stalls",
            &["FLUSH TABLES WITH READ LOCK"],
            Duration::from_millis(2000),
        )
        .join()
        .unwrap();
    }
    let (code, out) = wait_end(child, "bench to end", Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(lines.len() >= 8, "{out}");
    let field = |l: &str, key: &str| -> f64 {
        let at = l.find(key).unwrap_or_else(|| panic!("{key} in {l}")) + key.len();
        l[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let stalled = lines.iter().filter(|l| field(l, "tps:") == 0.0).count();
    assert!(
        stalled >= 1,
        "the stalls show as seconds with no commit: {out}"
    );
    for l in &lines {
        if field(l, "tps:") > 0.0 {
            assert!(field(l, "lat (ms,95%):") > 0.0, "{l}\n{out}");
        }
    }
}

/// A server killed mid-run and started again on its port while the run goes on: every
/// thread reconnects (its back-off tries again within a quarter of a second), the run measures
/// again after the outage and ends by its --time, exit 0.
#[test]
fn a_server_that_comes_back_is_reconnected_and_the_run_ends_by_its_time() {
    let mut s = ManagedServer::start(&ServerSpec::default()).unwrap();
    exec_root(&s, &["CREATE DATABASE back"]).unwrap();
    let conn = conn_args(&s, "back");
    bench_ok("oltp_point_select prepare --table-size=500", &conn);
    let mut run = args(
        "oltp_point_select run --table-size=500 --threads=4 --time=20 --report-interval=1 --mysql-ignore-errors=2013,2006",
        &conn,
    );
    run.insert(0, "bench".into());
    let child = spawn(&run);
    running(&s, "root", 5);
    kill_server(&mut s);
    s.restart().expect("the server starts again on its port");
    let (code, out) = wait_end(child, "bench to end", Duration::from_secs(20 + 20));
    assert_eq!(code, Some(0), "{out}");
    let reconnects: u64 = figure(&out, "reconnects:");
    assert!(reconnects >= 4, "every thread reconnected: {out}");
    let total: f64 = figure(&out, "total time:");
    assert!(
        (19.5..21.5).contains(&total),
        "ended by its --time: {total} s\n{out}"
    );
    // Measuring again after the outage: the last second's interval has transactions.
    let last = out
        .lines()
        .rev()
        .find(|l| l.starts_with('[') && l.contains(" tps: "))
        .unwrap_or_else(|| panic!("interval lines in {out}"));
    let tps: f64 = last
        .split(" tps: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(tps > 0.0, "transactions after the server came back: {last}");
}
