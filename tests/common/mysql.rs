//! A throwaway MySQL server (Debian's current MySQL 9, unpacked by scripts/unpack-mysql.sh)
//! on loopback, and logins to it, for the tests that talk to MySQL.
#![allow(dead_code)]

use super::{text, wait_for};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;
use sweepbench::engine::config::{ConnOptions, SslMode, TlsOptions};
use sweepbench::engine::db::{self, Endpoint};
use sweepbench::engine::wire::{Conn, Login};

pub const T: Duration = Duration::from_secs(20);

/// A throwaway mysqld: its own datadir (with the TLS certificates and RSA keys MySQL generates),
/// a free loopback port and a socket, killed with the test (and with the test process).
pub struct Mysql {
    child: Child,
    pub dir: tempfile::TempDir,
    pub port: u16,
}

impl Mysql {
    pub fn start() -> Mysql {
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

    pub fn socket(&self) -> Endpoint {
        Endpoint::Socket(self.dir.path().join("s.sock").display().to_string())
    }

    pub fn tcp(&self) -> Endpoint {
        Endpoint::Tcp("127.0.0.1".into(), self.port)
    }

    /// Runs statements as root over the socket.
    pub fn root(&self, sql: &[&str]) {
        let mut c = Conn::connect(&self.socket(), &login("root", "", None), T).unwrap();
        for q in sql {
            c.query(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
        c.close();
    }

    /// Empties caching_sha2_password's cache: the next login of each user takes the full path.
    pub fn forget_logins(&self) {
        self.root(&["FLUSH PRIVILEGES"]);
    }

    pub fn admin(&self, password: &str) -> ConnOptions {
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

pub fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Debian's MySQL server, unpacked once into the test cache by the repo's script.
pub fn unpacked_mysqld() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mysql-cache");
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/unpack-mysql.sh"))
        .arg(&cache)
        .output()
        .expect("running scripts/unpack-mysql.sh");
    assert!(out.status.success(), "unpacking MySQL: {}", text(&out));
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

pub fn login<'a>(
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

pub fn required_tls() -> Option<sweepbench::engine::wire::tls::Tls> {
    let c = ConnOptions {
        tls: TlsOptions {
            mode: SslMode::Required,
            ..Default::default()
        },
        ..Default::default()
    };
    db::wire_tls(&c).unwrap()
}
