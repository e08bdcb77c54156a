//! Secrets and paths: a password with spaces, quotes and backslashes reaches neither the run
//! directory nor any process's command line (the sysbench driver included), `bench` takes it
//! from the environment, and sweep names cannot leave the results directory.

mod common;
use common::{server, text};
use std::path::Path;
use sweepbench::pipeline::results::PointStatus;
use sweepbench::pipeline::server::managed::exec_root;

/// A password no tool would guess at, with characters that broke the redaction (a space, a
/// quote, a backslash, '@' and '/'; one kind of quote only, as sysbench's --config-file can
/// carry no more: src/pipeline/spec/target.rs tests both kinds for the redaction).
const PASSWORD: &str = "Zq9Xk7Wp3 w'\\x@/,!";
/// What is searched for: long enough that base64 histograms (.hlog) cannot hold it by chance
/// (three letters did, one file in a few dozen).
const MARK: &str = "Zq9Xk7Wp3";

fn every_file_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(every_file_under(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}

/// Every process's command line now, as text.
fn command_lines() -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(b) = std::fs::read(e.path().join("cmdline")) {
            out.push(String::from_utf8_lossy(&b).replace('\0', " "));
        }
    }
    out
}

#[test]
fn a_password_reaches_neither_results_nor_command_lines() {
    let s = server();
    let sql_pw = PASSWORD.replace('\\', "\\\\").replace('\'', "\\'");
    exec_root(
        s,
        &[
            "DROP USER IF EXISTS 'pwuser'@'127.0.0.1'",
            &format!("CREATE USER 'pwuser'@'127.0.0.1' IDENTIFIED BY '{sql_pw}'"),
            "DROP DATABASE IF EXISTS pwdb",
            "CREATE DATABASE pwdb",
            "GRANT ALL ON pwdb.* TO 'pwuser'@'127.0.0.1'",
        ],
    )
    .unwrap();
    // Percent-encoded as a URL needs ('/' would end the host part); the alphanumerics (MARK)
    // stay as they are, so the search below finds the password in either form.
    let encoded =
        percent_encoding::utf8_percent_encode(PASSWORD, percent_encoding::NON_ALPHANUMERIC);
    let url = toml::Value::String(format!(
        "mysql://pwuser:{encoded}@127.0.0.1:{}/pwdb",
        s.port()
    ));
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("secret.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"secret\"\n[data]\ntables = 1\ntable_size = 200\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"2s\"\nwarmup = \"1s\"\nrepeats = 1\ndrivers = [\"native\", \"sysbench\"]\n[[targets]]\nname = \"remote\"\nurl = {url}\n"
        ),
    )
    .unwrap();
    let results = dir.path().join("results");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", sweep.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Watch every command line while the sweep runs (prepare, both drivers, the warmup).
    let mut seen = 0;
    while Path::new(&format!("/proc/{pid}/cmdline")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    {
        for line in command_lines() {
            assert!(!line.contains(MARK), "a password on a command line: {line}");
            if line.contains("--config-file=/dev/fd/") {
                seen += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        seen > 0,
        "sysbench was never seen running with its options pipe"
    );
    assert!(!all.contains(MARK), "the password was printed:\n{all}");
    let files = every_file_under(&results);
    assert!(files.iter().any(|f| f.ends_with("sweep.toml")));
    for f in files {
        let body = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
        assert!(!body.contains(MARK), "{} holds the password", f.display());
    }
    let rows = sweepbench::pipeline::results::load_points(
        &sweepbench::pipeline::sweep::latest_run(&results, "secret").unwrap(),
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    // manifest.json speaks the sweep file's words, not Rust's.
    let run = sweepbench::pipeline::sweep::latest_run(&results, "secret").unwrap();
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"oltp_point_select\""), "{manifest}");
    assert!(!manifest.contains("PointSelect"), "{manifest}");
    assert!(
        rows.iter()
            .all(|r| r.status == PointStatus::Ok && r.transactions > 0),
        "both drivers logged in with the password: {rows:?}"
    );
}

#[test]
fn a_sweep_named_dot_dot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("up.toml");
    std::fs::write(
        &sweep,
        "name = \"..\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"local\"\nserver = {}\n",
    )
    .unwrap();
    let results = dir.path().join("inner").join("results");
    std::fs::create_dir_all(&results).unwrap();
    std::fs::write(dir.path().join("inner").join("latest"), "mine").unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", sweep.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("up.toml:1:8: name '..'"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("inner").join("latest")).unwrap(),
        "mine"
    );
    // The refusal is kept under the file's own name, inside the results directory.
    let left: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["up"]);
    let attempt = std::fs::read_to_string(results.join("up/last-attempt.txt")).unwrap();
    assert!(attempt.contains("up.toml:1:8: name '..'"), "{attempt}");
}

/// `bench` without `--mysql-password` takes it from SWEEPBENCH_PASSWORD, then MYSQL_PWD (as
/// libmysqlclient does under sysbench), so it never has to be on a command line; with
/// neither, the server refuses the login (1045).
#[test]
fn bench_reads_the_password_from_the_environment() {
    let s = server();
    exec_root(
        s,
        &[
            "DROP USER IF EXISTS 'envpw'@'127.0.0.1'",
            &format!(
                "CREATE USER 'envpw'@'127.0.0.1' IDENTIFIED BY {}",
                sweepbench::engine::admin::quote(PASSWORD)
            ),
            "DROP DATABASE IF EXISTS envpw",
            "CREATE DATABASE envpw",
            "GRANT ALL ON envpw.* TO 'envpw'@'127.0.0.1'",
        ],
    )
    .unwrap();
    let bench = |words: &str, env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
        c.env_remove("SWEEPBENCH_PASSWORD").env_remove("MYSQL_PWD");
        for (k, v) in env {
            c.env(k, v);
        }
        c.arg("bench")
            .args(words.split_whitespace())
            .args([
                "--mysql-host=127.0.0.1".to_string(),
                format!("--mysql-port={}", s.port()),
                "--mysql-user=envpw".into(),
                "--mysql-db=envpw".into(),
                "--table-size=100".into(),
            ])
            .output()
            .unwrap()
    };
    let out = bench("oltp_point_select prepare", &[("MYSQL_PWD", PASSWORD)]);
    assert!(out.status.success(), "{}", text(&out));
    let out = bench(
        "oltp_point_select run --time=1",
        &[("SWEEPBENCH_PASSWORD", PASSWORD), ("MYSQL_PWD", "wrong")],
    );
    assert!(
        out.status.success(),
        "SWEEPBENCH_PASSWORD first: {}",
        text(&out)
    );
    let out = bench("oltp_point_select run --time=1", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("error 1045"), "{}", text(&out));
}
