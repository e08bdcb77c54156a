//! Against a real MySQL server (Debian's current MySQL 9, unpacked by scripts/unpack-mysql.sh
//! and started here on loopback): caching_sha2_password's full path (the RSA key exchange over
//! plain TCP, the password over TLS and over the Unix socket) and its fast path, in the
//! workload's client and the administrative one; sha256_password over TLS; then `bench` and
//! a sweep.

mod common;
use common::*;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;
use sweepbench::engine::config::{ConnOptions, SslMode, TlsOptions};
use sweepbench::engine::db::{self, Endpoint};
use sweepbench::engine::wire::{Conn, Login};

const T: Duration = Duration::from_secs(20);

/// A throwaway mysqld: its own datadir (with the TLS certificates and RSA keys MySQL generates),
/// a free loopback port and a socket, killed with the test (and with the test process).
struct Mysql {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Mysql {
    fn start() -> Mysql {
        let mysqld = unpacked_mysqld();
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let user = format!("--user={}", whoami());
        let out = Command::new(&mysqld)
            .args(["--no-defaults", "--initialize-insecure", &user])
            .arg(format!("--datadir={}", data.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "mysqld --initialize: {}", text(&out));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = dir.path();
        let mut cmd = Command::new(&mysqld);
        cmd.args([
            "--no-defaults",
            &user,
            "--bind-address=127.0.0.1",
            "--mysqlx=OFF",
        ])
        .args(["--skip-log-bin", "--performance-schema=OFF"])
        .arg(format!("--port={port}"))
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", d.join("s.sock").display()))
        .arg(format!("--pid-file={}", d.join("pid").display()))
        .arg(format!("--log-error={}", d.join("err.log").display()))
        .arg(format!("--secure-file-priv={}", d.display()));
        // The server dies with the test process even if the test cannot reach its Drop.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let m = Mysql { child, dir, port };
        wait_for("mysqld to accept logins", Duration::from_secs(120), || {
            Conn::connect(&m.socket(), &login("root", "", None), T).is_ok()
        });
        m
    }

    fn socket(&self) -> Endpoint {
        Endpoint::Socket(self.dir.path().join("s.sock").display().to_string())
    }

    fn tcp(&self) -> Endpoint {
        Endpoint::Tcp("127.0.0.1".into(), self.port)
    }

    /// Runs statements as root over the socket.
    fn root(&self, sql: &[&str]) {
        let mut c = Conn::connect(&self.socket(), &login("root", "", None), T).unwrap();
        for q in sql {
            c.query(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
        c.close();
    }

    /// Empties caching_sha2_password's cache: the next login of each user takes the full path.
    fn forget_logins(&self) {
        self.root(&["FLUSH PRIVILEGES"]);
    }

    fn admin(&self, password: &str) -> ConnOptions {
        ConnOptions {
            hosts: vec!["127.0.0.1".into()],
            ports: vec![self.port],
            user: "cs".into(),
            password: Some(password.into()),
            db: String::new(),
            ..Default::default()
        }
    }
}

impl Drop for Mysql {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Debian's MySQL server, unpacked once into the test cache by the repo's script.
fn unpacked_mysqld() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mysql-cache");
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/unpack-mysql.sh"))
        .arg(&cache)
        .output()
        .expect("running scripts/unpack-mysql.sh");
    assert!(out.status.success(), "unpacking MySQL: {}", text(&out));
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn login<'a>(
    user: &'a str,
    password: &'a str,
    tls: Option<sweepbench::engine::wire::tls::Tls>,
) -> Login<'a> {
    Login {
        user,
        password,
        db: "",
        server_charset: false,
        allow_cleartext: false,
        tls,
    }
}

fn required_tls() -> Option<sweepbench::engine::wire::tls::Tls> {
    let c = ConnOptions {
        tls: TlsOptions {
            mode: SslMode::Required,
            ..Default::default()
        },
        ..Default::default()
    };
    db::wire_tls(&c).unwrap()
}

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
