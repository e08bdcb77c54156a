//! How a run starts and stops: warmup, `--rate`, `--events`, interval lines, forced shutdown,
//! SIGINT, ignorable errors with event restarts, reconnects, and fatal errors — each against a
//! real MariaDB.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

/// A server with short lock waits, so lock conflicts turn into error 1205 quickly.
fn lock_server() -> &'static ManagedServer {
    static S: OnceLock<ManagedServer> = OnceLock::new();
    S.get_or_init(|| {
        ManagedServer::start(&ServerSpec {
            options: vec!["--innodb-lock-wait-timeout=1".into()],
            ..ServerSpec::default()
        })
        .expect("throwaway server")
    })
}

fn db_on(s: &ManagedServer, name: &str) -> Vec<String> {
    exec_root(
        s,
        &[
            &format!("DROP DATABASE IF EXISTS {name}"),
            &format!("CREATE DATABASE {name}"),
        ],
    )
    .unwrap();
    conn_args(s, name)
}

fn spawn_bench(args: &[String]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .arg("bench")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting sweepbench")
}

#[test]
fn warmup_events_run_but_are_not_counted() {
    let conn = fresh_db("warmup");
    bench_ok("oltp_insert prepare --table-size=10", &conn);
    let j = bench_json(
        "oltp_insert run --table-size=10 --threads=1 --warmup-time=1 --time=1",
        &conn,
    );
    let counted = json_u64(&j, "/totals/events");
    let inserted = query_u64("SELECT COUNT(*) FROM warmup.sbtest1") - 10;
    assert!(counted > 0, "{j}");
    // The warmup second inserted rows too; only the measured second is reported.
    assert!(
        inserted > counted + counted / 4,
        "inserted {inserted}, counted {counted}"
    );
    // The measured window is the second after the warmup, never the warmup too: at least the
    // --time asked for, and less than warmup + time (a bound on meaning, not on speed).
    let total_time = j["total_time_s"].as_f64().unwrap();
    assert!(
        (0.99..2.0).contains(&total_time),
        "measured window {total_time}s"
    );
}

#[test]
fn events_limit_is_exact_across_threads() {
    let conn = fresh_db("evlimit");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let j = bench_json(
        "oltp_point_select run --table-size=100 --threads=8 --events=777 --time=0",
        &conn,
    );
    assert_eq!(json_u64(&j, "/totals/events"), 777);
    // The client's own footprint is reported (a few MB at least, far below a GB here).
    let rss = json_u64(&j, "/client_max_rss_kb");
    assert!((1_000..1_000_000).contains(&rss), "client_max_rss_kb {rss}");
    assert_eq!(json_u64(&j, "/totals/reads"), 777);
    let per: u64 = j["per_thread_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(per, 777);
}

#[test]
fn rate_paces_events_and_reports_the_queue() {
    let conn = fresh_db("rate");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let j = bench_json(
        "oltp_point_select run --table-size=100 --threads=4 --rate=200 --time=3 --report-interval=1",
        &conn,
    );
    // A Poisson stream of 200/s over 3 s: 600 expected, sd ≈ 25.
    let events = json_u64(&j, "/totals/events");
    assert!((480..=720).contains(&events), "events {events}");
    let intervals = j["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 3, "{j}");
    assert!(intervals
        .iter()
        .all(|i| i["queue_length"].is_u64() && i["concurrency"].is_u64()));
    let text = bench_ok(
        "oltp_point_select run --table-size=100 --threads=2 --rate=100 --time=2 --report-interval=1",
        &conn,
    );
    assert!(text.contains("Target transaction rate: 100/sec"), "{text}");
    assert!(text.contains("] queue length: "), "{text}");
}

#[test]
fn interval_lines_appear_once_per_interval() {
    let conn = fresh_db("intervals");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let text = bench_ok(
        "oltp_point_select run --table-size=100 --threads=2 --time=3 --report-interval=1",
        &conn,
    );
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.starts_with(&format!("[ {}s ] thds: 2 tps: ", i + 1)),
            "{l}"
        );
    }
    // The last line, at the deadline, carries the latencies of the events it counts: the
    // workers leaving then hand their samples over as they end (it once showed a p95 of 0
    // with thousands of events, in about one run in ten on a busy machine).
    for _ in 0..8 {
        let j = bench_json(
            "oltp_point_select run --table-size=100 --threads=8 --time=1 --report-interval=1",
            &conn,
        );
        let intervals = j["intervals"].as_array().unwrap();
        assert_eq!(intervals.len(), 1, "{j}");
        for i in intervals {
            let tps = i["tps"].as_f64().unwrap();
            let p = i["lat_pct_ms"].as_f64().unwrap();
            assert!(tps > 0.0 && p > 0.0, "{i}");
        }
    }
}

#[test]
fn forced_shutdown_reports_unfinished_events_and_exits_2() {
    let s = lock_server();
    let conn = db_on(s, "forced");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    // A table lock blocks every SELECT for longer than the run.
    let holder = hold_lock(
        s,
        "forced",
        &["LOCK TABLES sbtest1 WRITE"],
        Duration::from_secs(6),
    );
    let out = bench(&args(
        "oltp_point_select run --table-size=100 --threads=3 --time=1 --forced-shutdown=1",
        &conn,
    ));
    holder.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Number of unfinished transactions on forced shutdown: 3"),
        "{text}"
    );
}

#[test]
fn lock_wait_timeouts_are_ignored_and_events_restart() {
    let s = lock_server();
    let conn = db_on(s, "lockwait");
    bench_ok("oltp_update_index prepare --table-size=200", &conn);
    let holder = hold_lock(
        s,
        "lockwait",
        &["BEGIN", "SELECT COUNT(*) FROM sbtest1 FOR UPDATE"],
        Duration::from_millis(2500),
    );
    let j = bench_json(
        "oltp_update_index run --table-size=200 --threads=2 --time=5",
        &conn,
    );
    holder.join().unwrap();
    let errors = json_u64(&j, "/totals/errors");
    let events = json_u64(&j, "/totals/events");
    // 1205 after each 1 s wait, at least once per thread, then the events go through.
    assert!(errors >= 2, "{j}");
    assert!(events > 10, "{j}");
    assert_eq!(
        json_u64(&j, "/totals/writes"),
        events,
        "failed attempts write nothing"
    );
    // Latency spans the restarts: some event waited through at least one timeout.
    assert!(j["latency_ms"]["max_ms"].as_f64().unwrap() > 1000.0, "{j}");
}

/// Waits until `n` of a run's connections on database `db` of `s` are there (connected and
/// logged in), however slow the machine, then a moment more for their first events.
fn connected(s: &ManagedServer, db: &str, n: usize) {
    let sql = format!(
        "SELECT id FROM information_schema.processlist WHERE db='{db}' AND id <> CONNECTION_ID()"
    );
    wait_for("the run's connections", Duration::from_secs(60), || {
        query_col_on(s, &sql).len() >= n
    });
    std::thread::sleep(Duration::from_millis(300));
}

fn kill_workers(s: &ManagedServer, db: &str) -> usize {
    let ids = query_col_on(s, &format!("SELECT id FROM information_schema.processlist WHERE db='{db}' AND id <> CONNECTION_ID()"));
    for id in &ids {
        let _ = exec_root(s, &[&format!("KILL {id}")]);
    }
    ids.len()
}

#[test]
fn lost_connections_reconnect_when_ignored() {
    let s = lock_server();
    let conn = db_on(s, "reconn");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let mut a = args(
        "oltp_point_select run --table-size=100 --threads=2 --time=4 --format=json --mysql-ignore-errors=2013,2006",
        &conn,
    );
    a.push("--db-ps-mode=auto".into());
    let child = spawn_bench(&a);
    connected(s, "reconn", 2);
    assert_eq!(kill_workers(s, "reconn"), 2);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json_u64(&j, "/totals/reconnects") >= 2, "{j}");
    assert!(json_u64(&j, "/totals/events") > 100, "{j}");
}

#[test]
fn lost_connection_not_ignored_is_fatal_but_reported() {
    let s = lock_server();
    let conn = db_on(s, "lostfatal");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let child = spawn_bench(&args(
        "oltp_point_select run --table-size=100 --threads=2 --time=6",
        &conn,
    ));
    connected(s, "lostfatal", 2);
    kill_workers(s, "lostfatal");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("FATAL: mysql_stmt_execute() returned error")
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SQL statistics:"), "{text}");
    assert!(parse_events(&text) > 0);
}

fn parse_events(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn sigint_stops_after_the_current_event_and_reports() {
    let conn = fresh_db("sigint");
    bench_ok("oltp_point_select prepare --table-size=100", &conn);
    let child = spawn_bench(&args(
        "oltp_point_select run --table-size=100 --threads=2 --time=0",
        &conn,
    ));
    connected(server(), "sigint", 2);
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(parse_events(&text) > 0, "{text}");
}

#[test]
fn unreachable_server_is_a_clear_error() {
    let out = bench(&args(
        "oltp_point_select run --mysql-host=127.0.0.1 --mysql-port=1 --mysql-user=root --time=1",
        &[],
    ));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot connect to MySQL server at 127.0.0.1:1 as user 'root'"),
        "{err}"
    );
}

#[test]
fn checkpoints_report_and_reset_the_counters() {
    let conn = fresh_db("checkpoints");
    bench_ok("oltp_insert prepare --table-size=10", &conn);
    let j = bench_json(
        "oltp_insert run --table-size=10 --threads=2 --time=2 --report-checkpoints=1",
        &conn,
    );
    let cps = j["checkpoints"].as_array().expect("checkpoints array");
    assert_eq!(cps.len(), 1, "{j}");
    let first = json_u64(&cps[0], "/totals/events");
    let rest = json_u64(&j, "/totals/events");
    assert!(first > 0 && rest > 0, "{j}");
    // Every event is counted once: before the checkpoint or after it.
    let inserted = query_u64("SELECT COUNT(*) FROM checkpoints.sbtest1") - 10;
    assert_eq!(first + rest, inserted);
    let text = bench_ok(
        "oltp_insert run --table-size=10 --threads=1 --time=2 --report-checkpoints=1",
        &conn,
    );
    assert!(
        text.contains("[ 1s ] Checkpoint report:\nSQL statistics:"),
        "{text}"
    );
    assert_eq!(text.matches("SQL statistics:").count(), 2);
}

/// A server stopped (SIGSTOP) while `prepare` loads: the load is given up once a ping on a
/// second connection goes unanswered, instead of waiting for ever (#22: every wait on a
/// server has a deadline). Not a speed bound: before the watch the command never ended.
#[test]
fn prepare_gives_up_on_a_server_that_stopped_answering() {
    let s = ManagedServer::start(&ServerSpec::default()).unwrap();
    let pid = s.pid().unwrap() as i32;
    let conn = db_on(&s, "stalled");
    let mut args: Vec<String> = "oltp_read_write prepare --tables=4 --table-size=2000000"
        .split(' ')
        .map(String::from)
        .collect();
    args.extend(conn);
    let child = spawn_bench(&args);
    // Stopped once the load is under way (the first table exists).
    wait_for("the load to start", Duration::from_secs(60), || {
        exec_root(&s, &["SELECT COUNT(*) FROM stalled.sbtest1 LIMIT 1"]).is_ok()
    });
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let (code, said) = wait_end(child, "prepare to give up", Duration::from_secs(120));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("the server stopped answering while preparing the tables: no reply to a ping on a second connection within 15 s"),
        "{said}"
    );
}

/// The labels of interval lines stay sysbench's timer's ([ 2s ], [ 4s ], …) when the machine
/// lets the reporter run late: here the whole process is stopped (SIGSTOP) across the 2 s
/// tick and continued 1.5 s later; under a load average of 13–27 the lines had read [ 4s ]
/// twice and no [ 2s ] (#34). For the OLTP engine and for a host test (cpu), which like
/// sysbench's prints no line at the run's last second.
#[test]
fn interval_lines_keep_their_names_when_the_reporter_runs_late() {
    let conn = fresh_db("late_ticks");
    bench_ok(
        "oltp_point_select prepare --tables=1 --table-size=100",
        &conn,
    );
    for (words, want) in [
        (
            "oltp_point_select run --tables=1 --table-size=100 --threads=1 --time=8 --report-interval=2",
            vec!["[ 2s", "[ 4s", "[ 6s", "[ 8s"],
        ),
        (
            "cpu run --time=8 --report-interval=2",
            vec!["[ 2s", "[ 4s", "[ 6s"],
        ),
    ] {
        let mut child = spawn_bench(&args(words, if words.starts_with("cpu") { &[] } else { &conn }));
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut seen = String::new();
        // The measured time starts with "Threads started!".
        loop {
            let mut line = String::new();
            let n = std::io::BufRead::read_line(&mut out, &mut line).unwrap();
            assert!(n > 0, "{words}: ended before starting: {seen}");
            seen.push_str(&line);
            if line.starts_with("Threads started!") {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(1500));
        let pid = child.id() as i32;
        // SAFETY: signals to the child we started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_millis(1500));
        unsafe { libc::kill(pid, libc::SIGCONT) };
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert!(child.wait().unwrap().success(), "{words}: {seen}{rest}");
        let labels: Vec<&str> = rest
            .lines()
            .filter(|l| l.starts_with("[ ") && l.contains("s ] "))
            .map(|l| l.split(" ] ").next().unwrap())
            .collect();
        assert_eq!(labels, want, "{words}: {rest}");
    }
}
