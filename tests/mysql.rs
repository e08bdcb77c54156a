//! Against a real MySQL server (Debian's current MySQL 9, unpacked by scripts/unpack-mysql.sh
//! and started here on loopback): caching_sha2_password's full path (the RSA key exchange over
//! plain TCP, the password over TLS and over the Unix socket) and its fast path, in the
//! workload's client and the administrative one; sha256_password over TLS; then `bench` and
//! a sweep.

mod common;
use common::mysql::*;
use common::*;
use std::process::Command;
use sweepbench::engine::wire::Conn;

/// The workload's client and the administrative one log a caching_sha2_password user in by every path
/// MySQL has, and a wrong password is refused with 1045 on each.
fn caching_sha2_paths(m: &Mysql) {
    let pw = "cs pw'\"\\";
    let good = login("cs", pw, None);
    let bad = login("cs", "nope", None);

    // Full path over plain TCP: the password encrypted with the server's RSA key.
    m.forget_logins();
    let c = Conn::connect(&m.tcp(), &good, T);
    assert!(c.is_ok(), "full path over TCP: {}", c.err().unwrap());
    // Fast path: the server now holds the hash; a scramble is enough.
    let mut c = Conn::connect(&m.tcp(), &good, T).expect("fast path");
    assert!(c.query("SELECT 1").unwrap().result_set);
    c.close();
    assert_eq!(Conn::connect(&m.tcp(), &bad, T).err().unwrap().code, 1045);
    m.forget_logins();
    assert_eq!(Conn::connect(&m.tcp(), &bad, T).err().unwrap().code, 1045);

    // Full path over TLS: the password itself, inside the encrypted channel.
    m.forget_logins();
    let c = Conn::connect(&m.tcp(), &login("cs", pw, required_tls()), T);
    assert!(c.is_ok(), "full path over TLS: {}", c.err().unwrap());
    // Full path over the Unix socket: the password itself, on a local channel.
    m.forget_logins();
    let c = Conn::connect(&m.socket(), &good, T);
    assert!(c.is_ok(), "full path over the socket: {}", c.err().unwrap());

    // sha256_password: the password over TLS; over plain TCP a refusal that says to use TLS.
    let c = Conn::connect(&m.tcp(), &login("s256", "s pw", required_tls()), T);
    assert!(c.is_ok(), "sha256_password over TLS: {}", c.err().unwrap());
    let e = Conn::connect(&m.tcp(), &login("s256", "s pw", None), T)
        .err()
        .unwrap();
    assert_eq!(e.code, 2059);
    assert!(e.message.contains("needs TLS"), "{e}");

    // The administrative client (`Admin`, tokio's blocking pool): full path over TCP, then the fast path.
    m.forget_logins();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for path in ["full", "fast"] {
            let c = sweepbench::engine::admin::Admin::connect(&m.admin(pw), 0).await;
            assert!(c.is_ok(), "Admin {path} path: {}", c.err().unwrap());
            c.unwrap().close().await;
        }
        let e = sweepbench::engine::admin::Admin::connect(&m.admin("nope"), 0)
            .await
            .err()
            .unwrap();
        assert!(e.to_string().contains("error 1045"), "{e}");
    });
}

/// `bench` prepares, runs and cleans up, and a sweep runs a point and records MySQL's version.
fn bench_and_sweep(m: &Mysql) {
    m.forget_logins();
    let port = m.port.to_string();
    let conn = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={port}"),
        "--mysql-user=cs".into(),
        "--mysql-password=cs pw'\"\\".into(),
        "--mysql-db=csdb".into(),
        "--table-size=100".into(),
    ];
    for cmd in ["prepare", "run", "cleanup"] {
        let out = bench(&args(&format!("oltp_read_write {cmd} --time=1"), &conn));
        assert!(out.status.success(), "bench {cmd}: {}", text(&out));
    }
    m.forget_logins();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_sweepbench"))
        .args(["run", "--url", &format!("mysql://cs@127.0.0.1:{port}/csdb")])
        .args(["--threads", "2", "--duration", "1s", "--repeats", "1"])
        .arg("--results-dir")
        .arg(&results)
        .env("SWEEPBENCH_PASSWORD", "cs pw'\"\\")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "quick").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 1, "{csv}");
    let version = std::fs::read_to_string(run.join("servers/target__default/version.txt")).unwrap();
    let major: u32 = version.split('.').next().unwrap().parse().unwrap();
    assert!(major >= 8, "not a MySQL 8 or later: {version}");
}

#[test]
fn a_mysql_server_logs_in_caching_sha2_users_and_runs_bench_and_a_sweep() {
    let m = Mysql::start();
    m.root(&[
        "CREATE USER 'cs'@'127.0.0.1' IDENTIFIED WITH caching_sha2_password BY 'cs pw''\"\\\\'",
        "CREATE USER 'cs'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'cs pw''\"\\\\'",
        "CREATE USER 's256'@'127.0.0.1' IDENTIFIED WITH sha256_password BY 's pw'",
        "CREATE DATABASE csdb",
        "GRANT ALL ON csdb.* TO 'cs'@'127.0.0.1'",
        "GRANT ALL ON csdb.* TO 'cs'@'localhost'",
    ]);
    caching_sha2_paths(&m);
    bench_and_sweep(&m);
}
