//! `plan`, `check` and `run` on sweep files against real throwaway MariaDB servers: results
//! files, password hygiene, settings changed and put back, hung points and stopped servers,
//! logins (ed25519, IPv6). The preflight's own checks are in tests/preflight.rs.

mod common;
use assert_cmd::Command;
use common::sweeps::*;
use common::*;
use std::path::Path;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

#[test]
fn two_points_write_two_rows_and_never_the_password() {
    let s = server();
    exec_root(
        s,
        &[
            "DROP DATABASE IF EXISTS pwtest",
            "CREATE DATABASE pwtest",
            "CREATE USER IF NOT EXISTS 'bench'@'127.0.0.1' IDENTIFIED BY 'Sup3rS3cretPw'",
            "GRANT ALL ON pwtest.* TO 'bench'@'127.0.0.1'",
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        r#"name = "pw"
[data]
tables = 1
table_size = 100
[run]
workloads = ["oltp_point_select"]
threads = [1, 2]
duration = "1s"
repeats = 1
[[targets]]
name = "ext"
url = "mysql://bench:Sup3rS3cretPw@127.0.0.1:{}/pwtest"
"#,
        s.port()
    );
    let f = sweep_file(dir.path(), "pw", &body);
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !text(&out).contains("Sup3rS3cretPw"),
        "password on the terminal"
    );
    let run = sweepbench::pipeline::sweep::latest_run(&results, "pw").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows.iter().all(|r| r.contains(",ok,")), "{csv}");
    let version = query_col_on(s, "SELECT VERSION()").remove(0);
    assert!(
        rows.iter().all(|r| r.contains(&format!(",{version},"))),
        "server_version {version} recorded: {csv}"
    );
    for entry in walk(&results) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("Sup3rS3cretPw"),
            "password written to {}",
            entry.display()
        );
    }
    // The server's counters around each point, read with the sweep's own (unprivileged)
    // user; an external server's process is not ours, so nothing from /proc.
    let costs = sweepbench::pipeline::results::cost::load(&run).unwrap();
    assert!(costs.iter().all(|r| r.source == "status"), "{costs:?}");
    for id in [
        "ext/default/oltp_point_select/t1/r1",
        "ext/default/oltp_point_select/t2/r1",
    ] {
        let key = costs
            .iter()
            .find(|r| r.point_id == id && r.counter == "Handler_read_key")
            .unwrap_or_else(|| panic!("{id}: no Handler_read_key in {costs:?}"));
        // One primary-key lookup per transaction is what oltp_point_select does.
        let per = key.per_txn.unwrap();
        assert!(
            (0.97..=1.03).contains(&per),
            "{id}: {per} key reads per transaction"
        );
    }
    let stored = std::fs::read_to_string(run.join("sweep.toml")).unwrap();
    assert!(stored.contains("mysql://bench:***@127.0.0.1:"), "{stored}");
    // Per-second samples for every point, whatever report_interval says.
    let intervals = std::fs::read_to_string(run.join("intervals.csv")).unwrap();
    for id in [
        "ext/default/oltp_point_select/t1/r1",
        "ext/default/oltp_point_select/t2/r1",
    ] {
        assert!(
            intervals
                .lines()
                .skip(1)
                .any(|l| l.starts_with(&format!("{id},"))),
            "{id} has no per-second sample: {intervals}"
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn config_vars_are_applied_and_restored_and_static_ones_refused() {
    let s = ManagedServer::start(&ServerSpec::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        r#"name = "vars"
[data]
tables = 1
table_size = 100
[run]
workloads = ["oltp_point_select"]
threads = [1]
duration = "1s"
repeats = 1
[[targets]]
name = "ext"
url = "mysql://root@127.0.0.1:{}/vars"
[[configs]]
name = "base"
[[configs]]
name = "lazy"
vars = {{ innodb_flush_log_at_trx_commit = 0 }}
[[configs]]
name = "static"
vars = {{ innodb_page_size = 8192 }}
"#,
        s.port()
    );
    let f = sweep_file(dir.path(), "vars", &body);
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "vars").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert!(
        csv.contains("ext/base/oltp_point_select/t1/r1,ext,base,native,"),
        "{csv}"
    );
    assert_eq!(csv.matches(",ok,").count(), 2, "{csv}");
    assert!(
        csv.contains("innodb_page_size is read-only at run time"),
        "{csv}"
    );
    assert!(csv.contains("needs a managed server"), "{csv}");
    // Restored after the config's points.
    assert_eq!(
        query_col_on(&s, "SELECT @@innodb_flush_log_at_trx_commit")[0],
        "1"
    );
}

/// A run SIGKILLed while a config's `SET GLOBAL` is in force leaves the original in the
/// sweep's journal; the next run puts it back before anything else (and records the real
/// original, not the value the killed run left).
#[test]
fn settings_a_killed_run_changed_are_put_back_by_the_next() {
    let s = ManagedServer::start(&ServerSpec::default()).unwrap();
    let original = query_col_on(&s, "SELECT @@innodb_flush_log_at_trx_commit")[0].clone();
    let dir = tempfile::tempdir().unwrap();
    let body = |d: &str| {
        format!(
            "name = \"journal\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"{d}\"\nrepeats = 1\n[[targets]]\nname = \"ext\"\nurl = \"mysql://root@127.0.0.1:{}/journal\"\n[[configs]]\nname = \"lazy\"\nvars = {{ innodb_flush_log_at_trx_commit = 2 }}\n",
            s.port()
        )
    };
    let results = dir.path().join("results");
    let long = sweep_file(dir.path(), "journal", &body("60s"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", long.to_str().unwrap(), "--quiet", "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        "the config to be applied",
        std::time::Duration::from_secs(120),
        || query_col_on(&s, "SELECT @@innodb_flush_log_at_trx_commit")[0] == "2",
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        query_col_on(&s, "SELECT @@innodb_flush_log_at_trx_commit")[0],
        "2",
        "a SIGKILL cannot put anything back"
    );
    let journal = results.join("journal").join(".vars-journal.json");
    assert!(
        journal.is_file(),
        "the original was journaled before the change"
    );

    let short = sweep_file(dir.path(), "journal", &body("1s"));
    let out = run_sweep(&short, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "ext: put back innodb_flush_log_at_trx_commit = {original} (left changed by a run that was killed)"
        )),
        "{}",
        text(&out)
    );
    assert_eq!(
        query_col_on(&s, "SELECT @@innodb_flush_log_at_trx_commit")[0],
        original
    );
    assert!(!journal.exists(), "nothing left to put back");
    // The second run saw the true original, so its own restore put back that value.
    let run = sweepbench::pipeline::sweep::latest_run(&results, "journal").unwrap();
    assert_eq!(
        std::fs::read_to_string(run.join("points.csv"))
            .unwrap()
            .matches(",ok,")
            .count(),
        1
    );
}

/// `sweepbench run … | head -1`: the reader goes away after one line, and the sweep goes on
/// to the end — every point measured and kept, the report written, exit 0 — instead of dying
/// of SIGPIPE mid-run with an empty `latest` (#22 N39).
#[test]
fn a_run_whose_reader_closes_the_pipe_finishes_its_results() {
    use std::io::BufRead;
    let s = small_server();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"piped\"\n[data]\ntables = 1\ntable_size = 200\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 2]\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"ext\"\nurl = \"mysql://root@127.0.0.1:{}/piped\"\n",
        s.port()
    );
    let f = sweep_file(dir.path(), "piped", &body);
    let results = dir.path().join("results");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(!first.is_empty());
    drop(out);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "ended by {status:?}");
    let run = sweepbench::pipeline::sweep::latest_run(&results, "piped").unwrap();
    let points = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(points.matches(",ok,").count(), 2, "{points}");
    assert!(run.join("report.html").is_file());
}

/// Sends SIGCONT when dropped, so a failing assertion does not leave the server stopped.
struct Continue(i32);

impl Drop for Continue {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// An external server stopped (SIGSTOP) while a config's setting is in force: the point fails
/// and putting the setting back gives up after its deadline instead of holding the run for
/// ever; the journal keeps the original, and the next run, once the server answers again,
/// puts it back (#22 N41).
#[test]
fn a_stopped_server_does_not_hold_the_run_when_settings_go_back() {
    let s = ManagedServer::start(&ServerSpec::default()).unwrap();
    let pid = s.pid().unwrap() as i32;
    let original = query_col_on(&s, "SELECT @@long_query_time")[0].clone();
    let dir = tempfile::tempdir().unwrap();
    let body = |d: &str| {
        format!(
            "name = \"stopped\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"{d}\"\nrepeats = 1\npoint_timeout = \"5s\"\n[[targets]]\nname = \"ext\"\nurl = \"mysql://root@127.0.0.1:{}/stopped\"\n[[configs]]\nname = \"slowlog\"\nvars = {{ long_query_time = 7 }}\n",
            s.port()
        )
    };
    let results = dir.path().join("results");
    // Long enough to be stopped mid-point; the point then ends at its duration plus
    // point_timeout, whatever the server does.
    let long = sweep_file(dir.path(), "stopped", &body("20s"));
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", long.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(
        "the config to be applied",
        std::time::Duration::from_secs(120),
        || query_col_on(&s, "SELECT @@long_query_time")[0].starts_with('7'),
    );
    // And the point measuring (thousands of its statements executed; the prepare runs a
    // handful): the point is what is stopped, not the preparation or the recording of the
    // server after it, which have no deadline of their own yet.
    wait_for(
        "the point to be measuring",
        std::time::Duration::from_secs(120),
        || {
            query_col_on(
                &s,
                "SELECT VARIABLE_VALUE FROM information_schema.global_status WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'",
            )[0]
                .parse::<u64>()
                .is_ok_and(|n| n >= 2000)
        },
    );
    let resume = Continue(pid);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    // Not a speed bound: before the deadline existed the run never ended while stopped.
    let (code, said) = wait_end(
        child,
        "the run to end with its server stopped",
        std::time::Duration::from_secs(180),
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("no answer within 15 s"), "{said}");
    let journal = results.join("stopped").join(".vars-journal.json");
    assert!(journal.is_file(), "the original stays journaled: {said}");
    drop(resume);
    let short = sweep_file(dir.path(), "stopped", &body("1s"));
    let out = run_sweep(&short, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("ext: put back long_query_time = "),
        "{}",
        text(&out)
    );
    assert_eq!(query_col_on(&s, "SELECT @@long_query_time")[0], original);
    assert!(!journal.exists(), "nothing left to put back");
}

#[test]
fn example_sweeps_plan_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for e in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps")).unwrap() {
        let path = e.unwrap().path();
        // version-upgrade, version-chain and nightly-control name versions that
        // scripts/unpack-mariadb.sh unpacks before their first run, never a path.
        let shipped = std::fs::read_to_string(&path).unwrap();
        assert!(
            !shipped.contains("/root/") && !shipped.contains("basedir = \"~"),
            "{}: a machine's own path",
            path.display()
        );
        let body = shipped
            .replace("mariadb = \"10.11.18\"", "basedir = \"/usr\"")
            .replace("mariadb = \"11.8.9\"", "basedir = \"/usr\"")
            .replace("mariadb = \"10.5.23\"", "basedir = \"/usr\"");
        let copy = dir.path().join(path.file_name().unwrap());
        std::fs::write(&copy, body).unwrap();
        let out = sweepbench(&["plan", copy.to_str().unwrap()]);
        assert!(out.status.success(), "{}: {}", path.display(), text(&out));
        seen += 1;
    }
    assert!(
        seen >= 8,
        "quickstart, version-upgrade, version-chain, engines, param-templates, nightly, nightly-control, proxy-vs-direct"
    );
}

#[test]
fn plan_output_layout_is_reviewed() {
    // No calibration can leak in from a results directory of the checkout.
    let dir = tempfile::tempdir().unwrap();
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps/quickstart.toml");
    let out = sweepbench(&[
        "plan",
        quickstart.to_str().unwrap(),
        "--results-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_hung_point_is_ended_by_the_point_timeout() {
    let s = server();
    exec_root(s, &["DROP DATABASE IF EXISTS hung", "CREATE DATABASE hung"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"hung\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_update_index\"]\nthreads = [1, 2]\nduration = \"1s\"\nrepeats = 1\npoint_timeout = \"2s\"\n[[targets]]\nname = \"t\"\nurl = \"mysql://root@127.0.0.1:{}/hung\"\n",
        s.port()
    );
    let f = sweep_file(dir.path(), "hung", &body);
    let results = dir.path().join("results");
    // Prepare first, then hold every row lock so each UPDATE of the run waits (row locks
    // leave the preflight's consistent reads alone).
    let prep = run_sweep(&f, &results, &["--only", "threads=1"]);
    assert!(prep.status.success(), "{}", text(&prep));
    let holder = hold_lock(
        s,
        "hung",
        &["BEGIN", "SELECT * FROM sbtest1 FOR UPDATE"],
        std::time::Duration::from_secs(8),
    );
    let out = run_sweep(&f, &results, &["--only", "threads=2"]);
    holder.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "hung").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert!(
        csv.contains("point timeout: 2 event(s) still running 2s after the point's end"),
        "{csv}"
    );
}

/// `run --url URL` of one point_select point per thread count in `threads` (1 s, 100 rows),
/// named `name`, into `results`, with `password` in SWEEPBENCH_PASSWORD if given.
fn quick_run(
    url: &str,
    threads: &str,
    name: &str,
    results: &Path,
    password: Option<&str>,
) -> std::process::Output {
    let mut c = Command::cargo_bin("sweepbench").unwrap();
    if let Some(p) = password {
        c.env("SWEEPBENCH_PASSWORD", p);
    }
    c.args([
        "run",
        "--url",
        url,
        "--threads",
        threads,
        "--workloads",
        "oltp_point_select",
        "--duration",
        "1s",
        "--repeats",
        "1",
        "--table-size",
        "100",
        "--name",
        name,
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .output()
    .unwrap()
}

/// `run --url` sweeps an existing server without a sweep file, and stores the equivalent
/// sweep file, which runs the same points again.
#[test]
fn a_sweep_from_the_command_line_stores_its_sweep_file() {
    let s = small_server();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let url = format!("mysql://root@127.0.0.1:{}/quickcli", s.port());
    let out = quick_run(&url, "1,2", "quick", &results, None);
    assert!(out.status.success(), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "quick").unwrap();
    let stored = std::fs::read_to_string(run.join("sweep.toml")).unwrap();
    assert!(stored.contains(&format!("url = \"{url}\"")), "{stored}");
    assert!(stored.contains("threads = [1, 2]"), "{stored}");
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 2, "{csv}");
    let again = sweepbench(&["plan", run.join("sweep.toml").to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("sweep 'quick': 2 points"),
        "{}",
        text(&again)
    );
    // A sweep file and --url do not mix.
    let both = sweepbench(&["plan", "x.toml", "--url", &url]);
    assert_eq!(both.status.code(), Some(2));
}

/// A MariaDB ed25519 user runs `bench` and a sweep (preflight, prepare and points), the
/// password given in SWEEPBENCH_PASSWORD.
#[test]
fn an_ed25519_user_runs_bench_and_a_sweep() {
    let s = small_server();
    exec_root(
        s,
        &[
            "INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'",
            "DROP USER IF EXISTS 'edsw'@'127.0.0.1'",
            "CREATE USER 'edsw'@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('ed pw')",
            "DROP DATABASE IF EXISTS edsweep",
            "CREATE DATABASE edsweep",
            "GRANT ALL ON edsweep.* TO 'edsw'@'127.0.0.1'",
        ],
    )
    .unwrap();
    let port = s.port().to_string();
    let conn = [
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={port}"),
        "--mysql-user=edsw".into(),
        "--mysql-password=ed pw".into(),
        "--mysql-db=edsweep".into(),
        "--table-size=100".into(),
    ];
    for cmd in ["prepare", "run", "cleanup"] {
        let out = Command::cargo_bin("sweepbench")
            .unwrap()
            .args(["bench", "oltp_point_select", cmd, "--time=1"])
            .args(&conn)
            .output()
            .unwrap();
        assert!(out.status.success(), "bench {cmd}: {}", text(&out));
    }
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let url = format!("mysql://edsw@127.0.0.1:{port}/edsweep");
    let out = quick_run(&url, "2", "ed", &results, Some("ed pw"));
    assert!(out.status.success(), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "ed").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 1, "{csv}");
}

/// An IPv6 loopback target: `mysql://root@[::1]:PORT/db` is parsed, checked and run.
#[test]
fn an_ipv6_target_runs() {
    let s = ManagedServer::start(&ServerSpec {
        // Loopback only, as every managed server: IPv4 and IPv6.
        options: vec!["--bind-address=127.0.0.1,::1".into()],
        ..ServerSpec::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let url = format!("mysql://root@[::1]:{}/v6db", s.port());
    let out = quick_run(&url, "1", "v6", &results, None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("[ok  ] target version"),
        "{}",
        text(&out)
    );
    let run = sweepbench::pipeline::sweep::latest_run(&results, "v6").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 1, "{csv}");
}

/// `report` on a run whose manifest.json is missing or cut short renders the figures and
/// warns that the host, versions and plan are missing (#22 11g).
#[test]
fn report_warns_of_a_missing_or_damaged_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysbench-1.0-full.log");
    let imp = sweepbench(&[
        "import",
        fixture.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(imp.status.success(), "{}", text(&imp));
    let manifest = out.join("manifest.json");
    std::fs::write(&manifest, "{\"tool\": ").unwrap();
    let r = sweepbench(&["report", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("is not valid JSON (cut short?)"),
        "{}",
        text(&r)
    );
    std::fs::remove_file(&manifest).unwrap();
    let r = sweepbench(&["report", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("warning:") && text(&r).contains("manifest.json"),
        "{}",
        text(&r)
    );
}

/// A version is named, not a path (#46): this machine's server where it is that version; one
/// neither here nor unpacked is refused with the file's line and the one command that unpacks
/// it; a version and a basedir together are refused.
#[test]
fn a_mariadb_version_names_its_build_or_the_command_that_unpacks_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let file = |name: &str, server: &str| {
        let f = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &f,
            format!("name = \"{name}\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"m\"\nserver = {server}\n"),
        )
        .unwrap();
        f
    };
    let plan = |f: &Path| {
        Command::cargo_bin("sweepbench")
            .unwrap()
            .env("XDG_CACHE_HOME", empty.path())
            .args(["plan", f.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let here = plan(&file("here", "{ mariadb = \"10.11\" }"));
    assert!(here.status.success(), "{}", text(&here));
    assert!(
        text(&here).contains("managed server, MariaDB 10.11.") && text(&here).contains("from /usr"),
        "{}",
        text(&here)
    );
    let missing = plan(&file("missing", "{ mariadb = \"10.4\" }"));
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    let t = text(&missing);
    assert!(t.contains("missing.toml:7:"), "{t}");
    assert!(t.contains("MariaDB 10.4 is not here"), "{t}");
    assert!(t.contains("scripts/unpack-mariadb.sh 10.4.<patch>"), "{t}");
    let exact = plan(&file("exact", "{ mariadb = \"10.4.34\" }"));
    assert!(
        text(&exact).contains("scripts/unpack-mariadb.sh 10.4.34 "),
        "{}",
        text(&exact)
    );
    let both = plan(&file("both", "{ mariadb = \"10.11\", basedir = \"/usr\" }"));
    assert_eq!(both.status.code(), Some(2));
    assert!(text(&both).contains("not both"), "{}", text(&both));
}
