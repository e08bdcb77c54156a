//! Running `sweepbench` on sweep files in tests: writing a sweep file, running it, the
//! classic capacity sweep, and a server with MariaDB's default max_connections.

use super::query_col_on;
use assert_cmd::Command;
use std::path::Path;
use std::sync::OnceLock;
use sweepbench::pipeline::server::{ManagedServer, ServerSpec};

/// A server with the default max_connections (151).
pub fn small_server() -> &'static ManagedServer {
    static S: OnceLock<ManagedServer> = OnceLock::new();
    S.get_or_init(|| {
        ManagedServer::start(&ServerSpec {
            max_connections: 151,
            ..ServerSpec::default()
        })
        .expect("throwaway server")
    })
}

pub fn sweep_file(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, body).unwrap();
    p
}

/// `sweepbench run FILE --results-dir RESULTS EXTRA…`.
pub fn run_sweep(f: &Path, results: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        f.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    sweepbench(&args)
}

pub fn sweepbench(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("sweepbench")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

pub fn classic(port: u16, db: &str, extra: &str) -> String {
    format!(
        r#"name = "classic"
[data]
tables = 1
table_size = 200
[run]
workloads = ["oltp_point_select"]
threads = [1, 2, 4, 8, 16, 64, 256]
duration = "1s"
repeats = 1
report_interval = "1s"
{extra}
[[targets]]
name = "local"
url = "mysql://root@127.0.0.1:{port}/{db}"
"#
    )
}

pub fn tables_in(s: &ManagedServer, db: &str) -> u64 {
    query_col_on(
        s,
        &format!("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='{db}'"),
    )[0]
    .parse()
    .unwrap()
}
