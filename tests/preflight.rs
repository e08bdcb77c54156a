//! The preflight (`check`, and `run` before any data) against real throwaway MariaDB servers:
//! the classic 151 connections against 256 threads, `--on-capacity=raise`, a located error in
//! a sweep file, and one test per check on a server set up to fail it.

mod common;
use common::sweeps::*;
use common::*;
use std::path::Path;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

#[test]
fn too_many_threads_for_max_connections_is_refused_before_any_data() {
    let s = small_server();
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "classic", &classic(s.port(), "capacity", ""));
    let f = f.to_str().unwrap();
    let results = dir.path().join("results");
    let results = results.to_str().unwrap();

    let plan = sweepbench(&["plan", f]);
    assert!(plan.status.success(), "{}", text(&plan));
    let out = text(&plan);
    assert_eq!(
        out.matches("local/default/oltp_point_select/t").count(),
        7,
        "{out}"
    );
    assert!(out.contains("ETA: "), "{out}");

    let check = sweepbench(&["check", f]);
    assert_eq!(check.status.code(), Some(2), "{}", text(&check));
    let out = text(&check);
    assert!(out.contains("max_connections = 151"), "{out}");
    assert!(
        out.contains("needs 2") && out.contains("256 threads"),
        "{out}"
    );
    assert!(
        out.contains("SET GLOBAL max_connections") && out.contains("my.cnf"),
        "{out}"
    );
    assert_eq!(tables_in(s, "capacity"), 0, "check must not create tables");

    let run = sweepbench(&["run", f, "--results-dir", results]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(text(&run).contains("max_connections = 151"));
    assert_eq!(
        tables_in(s, "capacity"),
        0,
        "run must refuse before touching data"
    );
    assert!(
        sweepbench::pipeline::sweep::latest_run(Path::new(results), "classic").is_none(),
        "no results for a refused run"
    );
    // Only the refusal is kept, for a cron line to mail: no run directory, no `latest`.
    let left: Vec<String> = std::fs::read_dir(Path::new(results).join("classic"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["last-attempt.txt"], "nothing but the refusal");
    let attempt =
        std::fs::read_to_string(Path::new(results).join("classic/last-attempt.txt")).unwrap();
    assert!(
        attempt.contains(": exit 2, refused or stopped by an error"),
        "{attempt}"
    );
    assert!(attempt.contains("max_connections = 151"), "{attempt}");

    let run = sweepbench(&["run", f, "--results-dir", results, "--on-capacity=skip"]);
    assert!(run.status.success(), "{}", text(&run));
    let dir = sweepbench::pipeline::sweep::latest_run(Path::new(results), "classic").unwrap();
    let csv = std::fs::read_to_string(dir.join("points.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 7, "{csv}");
    assert_eq!(csv.matches(",ok,").count(), 6, "{csv}");
    assert!(
        csv.contains("/t256/r1,local,default,native,,oltp_point_select,256,1,skipped,"),
        "{csv}"
    );
    assert_eq!(tables_in(s, "capacity"), 1);
}

#[test]
fn raise_sets_max_connections_and_says_so() {
    let s = ManagedServer::start(&ServerSpec {
        max_connections: 20,
        ..ServerSpec::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = classic(s.port(), "raise", "").replace("[1, 2, 4, 8, 16, 64, 256]", "[1, 40]");
    let f = sweep_file(dir.path(), "raise", &body);
    let out = sweepbench(&["check", f.to_str().unwrap(), "--on-capacity=raise"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("raised max_connections from 20 to"),
        "{}",
        text(&out)
    );
    let now: u64 = query_col_on(&s, "SELECT @@max_connections")[0]
        .parse()
        .unwrap();
    assert!(now >= 43, "max_connections is {now}");
}

#[test]
fn a_bad_value_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = classic(1, "x", "").replace(
        "threads = [1, 2, 4, 8, 16, 64, 256]",
        "threads = [1, \"x\"]",
    );
    let f = sweep_file(dir.path(), "bad", &body);
    // A refused run keeps its refusal in the results directory: the test's own.
    let results = dir.path().join("results");
    for cmd in ["plan", "check", "run"] {
        let mut args = vec![cmd, f.to_str().unwrap()];
        if cmd == "run" {
            args.extend(["--results-dir", results.to_str().unwrap()]);
        }
        let out = sweepbench(&args);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out);
        assert!(err.contains("bad.toml:7:"), "{cmd}: {err}");
    }
    let body = classic(1, "x", "").replace("duration = \"1s\"", "duraton = \"1s\"");
    let f = sweep_file(dir.path(), "typo", &body);
    let err = text(&sweepbench(&["plan", f.to_str().unwrap()]));
    assert!(
        err.contains("typo.toml:8:") && err.contains("did you mean 'duration'?"),
        "{err}"
    );
}

/// A sweep for one preflight check; the URL, the [data] lines and the threads vary.
fn check_sweep(dir: &Path, name: &str, url: &str, data: &str, threads: &str) -> String {
    let body = format!(
        "name = \"{name}\"\n[data]\n{data}\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = {threads}\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"t\"\nurl = \"{url}\"\n"
    );
    sweep_file(dir, name, &body).to_str().unwrap().to_string()
}

const SMALL: &str = "tables = 1\ntable_size = 100";

fn check_fails_with(file: &str, what: &[&str]) {
    let out = sweepbench(&["check", file]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    for w in what {
        assert!(t.contains(w), "expected '{w}' in:\n{t}");
    }
}

#[test]
fn each_preflight_check_fails_on_a_server_set_up_to_fail_it() {
    // MariaDB lets max_user_connections change at run time only if it started non-zero.
    let s = ManagedServer::start(&ServerSpec {
        options: vec!["--max-user-connections=1000".into()],
        ..ServerSpec::default()
    })
    .unwrap();
    let p = s.port();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    exec_root(
        &s,
        &[
            "CREATE DATABASE pf",
            "CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY 'r'",
            "GRANT SELECT ON pf.* TO 'reader'@'127.0.0.1'",
        ],
    )
    .unwrap();
    let root = format!("mysql://root@127.0.0.1:{p}/pf");

    // connect / auth
    check_fails_with(
        &check_sweep(
            d,
            "auth",
            &format!("mysql://root:wrong@127.0.0.1:{p}/pf"),
            "",
            "[1]",
        ),
        &["[FAIL] t connect:", "Access denied"],
    );
    // privileges
    check_fails_with(
        &check_sweep(
            d,
            "privs",
            &format!("mysql://reader:r@127.0.0.1:{p}/pf"),
            "",
            "[1]",
        ),
        &[
            "[FAIL] t privileges:",
            "lacks INSERT, UPDATE, DELETE, CREATE, DROP, INDEX",
        ],
    );
    // max_connections (default 151)
    check_fails_with(
        &check_sweep(d, "conns", &root, SMALL, "[1, 200]"),
        &["[FAIL] t max_connections:", "max_connections = 151"],
    );
    // tables missing with prepare = never
    check_fails_with(
        &check_sweep(
            d,
            "never",
            &root,
            "tables = 1\ntable_size = 100\nprepare = \"never\"",
            "[1]",
        ),
        &["[FAIL] t tables:", "prepare = never"],
    );
    // disk: a data set far larger than any disk
    check_fails_with(
        &check_sweep(
            d,
            "disk",
            &root,
            "tables = 2000\ntable_size = 4000000000",
            "[1]",
        )
        .replace("tables = 1\n", ""),
        &["[FAIL] t disk:"],
    );
    // max_user_connections
    exec_root(&s, &["SET GLOBAL max_user_connections = 5"]).unwrap();
    check_fails_with(
        &check_sweep(d, "userconns", &root, SMALL, "[1, 10]"),
        &["[FAIL] t max_user_connections:", "max_user_connections = 5"],
    );
    exec_root(
        &s,
        &[
            "SET GLOBAL max_user_connections = 1000",
            "SET GLOBAL max_prepared_stmt_count = 50",
        ],
    )
    .unwrap();
    // max_prepared_stmt_count: read_write prepares 9 statements per table + BEGIN/COMMIT
    check_fails_with(
        &check_sweep(d, "stmts", &root, SMALL, "[1, 8]"),
        &[
            "[FAIL] t max_prepared_stmt_count:",
            "max_prepared_stmt_count = 50",
            "db_ps_mode",
        ],
    );
    exec_root(&s, &["SET GLOBAL max_prepared_stmt_count = 16382"]).unwrap();
    // And a sweep this server can take passes.
    let ok = sweepbench(&["check", &check_sweep(d, "fine", &root, SMALL, "[1, 8]")]);
    assert!(ok.status.success(), "{}", text(&ok));
}

#[test]
fn open_file_limit_too_low_is_blocking() {
    use std::os::unix::process::CommandExt;
    let s = small_server();
    let dir = tempfile::tempdir().unwrap();
    let f = check_sweep(
        dir.path(),
        "fds",
        &format!("mysql://root@127.0.0.1:{}/fds", s.port()),
        "",
        "[1, 100]",
    );
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
    cmd.args(["check", &f]);
    // SAFETY: lowering the child's own limits before exec.
    unsafe {
        cmd.pre_exec(|| {
            let l = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("[FAIL] client open_files:") && t.contains("ulimit -n"),
        "{t}"
    );
}
