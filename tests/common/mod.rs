//! Shared test support: one throwaway MariaDB per test binary (started by the product's own
//! server module, stopped at exit), a fresh database per test, and helpers to run the binary.
#![allow(dead_code)]

pub mod fake;
pub mod mysql;
pub mod sweeps;
pub mod tls;

use assert_cmd::Command;
use std::sync::OnceLock;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

pub fn server() -> &'static ManagedServer {
    static SERVER: OnceLock<ManagedServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        ManagedServer::start(&ServerSpec {
            max_connections: 400,
            options: vec![
                "--innodb-buffer-pool-size=256M".into(),
                "--innodb-flush-log-at-trx-commit=2".into(),
                // Stated, not inherited from the build: MariaDB 11 defaults to utf8mb4, and
                // tests/wire.rs needs a server whose character set differs from the client's.
                "--character-set-server=latin1".into(),
                "--collation-server=latin1_swedish_ci".into(),
            ],
            ..ServerSpec::default()
        })
        .expect("starting a throwaway MariaDB (is mariadb-server installed?)")
    })
}

/// Creates (or recreates) database `name` on the shared server.
pub fn fresh_db(name: &str) -> Vec<String> {
    let s = server();
    exec_root(
        s,
        &[
            &format!("DROP DATABASE IF EXISTS {name}"),
            &format!("CREATE DATABASE {name}"),
        ],
    )
    .expect("creating a test database");
    conn_args(s, name)
}

/// sysbench-style connection options for database `db` on server `s` (TCP on loopback).
pub fn conn_args(s: &ManagedServer, db: &str) -> Vec<String> {
    vec![
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", s.port()),
        "--mysql-user=root".into(),
        format!("--mysql-db={db}"),
    ]
}

pub fn bench(args: &[String]) -> std::process::Output {
    Command::cargo_bin("sweepbench")
        .expect("binary built")
        .arg("bench")
        .args(args)
        .output()
        .expect("running sweepbench")
}

pub fn args(words: &str, conn: &[String]) -> Vec<String> {
    words
        .split_whitespace()
        .map(String::from)
        .chain(conn.iter().cloned())
        .collect()
}

/// Runs `sweepbench bench …` and returns stdout, failing the test with stderr on error.
pub fn bench_ok(words: &str, conn: &[String]) -> String {
    let out = bench(&args(words, conn));
    assert!(
        out.status.success(),
        "sweepbench bench {words} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs `bench … run --format=json` and returns the parsed report.
pub fn bench_json(words: &str, conn: &[String]) -> serde_json::Value {
    let out = bench_ok(&format!("{words} --format=json"), conn);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}):\n{out}"))
}

/// Root over the server's socket, optionally in database `db`.
pub fn root_opts(s: &ManagedServer, db: Option<&str>) -> sweepbench::engine::config::ConnOptions {
    sweepbench::engine::config::ConnOptions {
        sockets: vec![s.socket().to_string_lossy().to_string()],
        user: "root".into(),
        db: db.unwrap_or_default().to_string(),
        ..Default::default()
    }
}

/// Runs a query as root on the shared server; returns the last column of each row as text.
pub fn query_col(sql: &str) -> Vec<String> {
    query_col_on(server(), sql)
}

pub fn query_col_on(s: &ManagedServer, sql: &str) -> Vec<String> {
    use sweepbench::engine::admin::Admin;
    let opts = root_opts(s, None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let mut c = Admin::open(&opts, 0).await.unwrap();
        let rows = c.rows(sql).await.unwrap();
        c.close().await;
        rows.into_iter()
            .map(|r| r.last().cloned().flatten().unwrap_or_default())
            .collect()
    })
}

pub fn query_u64(sql: &str) -> u64 {
    query_col(sql)[0].parse().expect("a number")
}

/// A figure from `--format=json` output by JSON pointer.
pub fn json_u64(j: &serde_json::Value, ptr: &str) -> u64 {
    j.pointer(ptr)
        .and_then(|v| v.as_u64())
        .unwrap_or_else(|| panic!("{ptr} missing in {j}"))
}

/// stdout and stderr of a finished command, for assertions and failure messages.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Holds a root connection running `statements` for `hold`, in the background.
pub fn hold_lock(
    s: &ManagedServer,
    db: &str,
    statements: &[&str],
    hold: std::time::Duration,
) -> std::thread::JoinHandle<()> {
    use sweepbench::engine::admin::Admin;
    let opts = root_opts(s, Some(db));
    let stmts: Vec<String> = statements.iter().map(|x| x.to_string()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut c = Admin::open(&opts, 0).await.unwrap();
            for st in &stmts {
                c.exec(st).await.unwrap();
            }
            tx.send(()).unwrap();
            tokio::time::sleep(hold).await;
            let _ = c.exec("ROLLBACK").await;
            let _ = c.exec("UNLOCK TABLES").await;
            c.close().await;
        });
    });
    rx.recv().expect("lock taken");
    h
}

/// Waits (at most `limit`, naming `what` on failure) for a spawned child with piped output
/// to end; its exit code and stdout + stderr.
#[allow(dead_code)]
pub fn wait_end(
    mut child: std::process::Child,
    what: &str,
    limit: std::time::Duration,
) -> (Option<i32>, String) {
    let mut status = None;
    wait_for(what, limit, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let out = child.wait_with_output().unwrap();
    (status.and_then(|s| s.code()), text(&out))
}

/// Polls `f` every 100 ms until it holds; fails the test after `limit`, naming `what`.
pub fn wait_for(what: &str, limit: std::time::Duration, mut f: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + limit;
    while !f() {
        assert!(
            std::time::Instant::now() < until,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `sweepbench run FILE --results-dir DIR/results EXTRA…` with DIR as TMPDIR, so the run's
/// work directories (managed servers' datadirs) live and die with the test's own folder.
pub fn run_in(
    dir: &std::path::Path,
    file: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", dir)
        .arg("run")
        .arg(file)
        .arg("--results-dir")
        .arg(dir.join("results"))
        .args(extra)
        .output()
        .unwrap()
}

/// The tests' XDG_CACHE_HOME: scripts/unpack-mariadb.sh's cache is its `sweepbench/`, where
/// `server = { mariadb = "…" }` looks when a test runs sweepbench with it.
pub fn cache_home() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache")
}

/// A MariaDB release unpacked once into the test cache by scripts/unpack-mariadb.sh (10.11.18
/// from this machine's package lists, 11.8.9 from Debian 13's); its basedir.
pub fn unpacked_mariadb(version: &str) -> std::path::PathBuf {
    let cache = cache_home().join("sweepbench");
    let out = std::process::Command::new(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/unpack-mariadb.sh"),
    )
    .arg(version)
    .arg(&cache)
    .output()
    .expect("running scripts/unpack-mariadb.sh");
    assert!(
        out.status.success(),
        "unpacking {version} failed: {}",
        text(&out)
    );
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}
