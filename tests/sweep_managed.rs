//! Sweeps on managed servers: a version matrix (an unpacked 10.11.18 next to this machine's
//! server), two configs on one basedir with the data prepared once, and a config that stops
//! the server from starting.

mod common;
use assert_cmd::Command;
use common::{cache_home, text, unpacked_mariadb};
use std::path::{Path, PathBuf};
use sweepbench::pipeline::results::PointStatus;
use sweepbench::pipeline::sweep::latest_run;

/// Runs the binary with its temp dir (where managed servers live) inside `tmp`, so the test
/// can see what it leaves behind.
fn sweepbench(args: &[&str], tmp: &Path) -> std::process::Output {
    Command::cargo_bin("sweepbench")
        .unwrap()
        .env("TMPDIR", tmp)
        .env("XDG_CACHE_HOME", cache_home())
        .args(args)
        .output()
        .unwrap()
}

fn run_sweep(body: &str, name: &str) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(format!("{name}.toml"));
    std::fs::write(&f, body).unwrap();
    let results = dir.path().join("results");
    let out = sweepbench(
        &[
            "run",
            f.to_str().unwrap(),
            "--results-dir",
            results.to_str().unwrap(),
        ],
        dir.path(),
    );
    let pattern = dir.path().to_string_lossy().to_string();
    let alive = std::process::Command::new("pgrep")
        .args(["-f", &pattern])
        .output()
        .unwrap();
    assert!(
        alive.stdout.is_empty(),
        "a managed server outlived its sweep: {}",
        String::from_utf8_lossy(&alive.stdout)
    );
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("sweepbench-"))
        .collect();
    assert!(stray.is_empty(), "work directories left behind: {stray:?}");
    let run =
        latest_run(&results, name).unwrap_or_else(|| panic!("no run directory:\n{}", text(&out)));
    (out, run, dir)
}

fn points(run: &Path) -> Vec<sweepbench::pipeline::results::PointRecord> {
    csv::Reader::from_path(run.join("points.csv"))
        .unwrap()
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn variable(run: &Path, server: &str, name: &str) -> String {
    let tsv =
        std::fs::read_to_string(run.join("servers").join(server).join("variables.tsv")).unwrap();
    tsv.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}\t")))
        .unwrap_or_else(|| panic!("{name} not recorded for {server}"))
        .to_string()
}

/// One series after another: these tests follow a block's life (start, prepare, variables,
/// stop) point by point; tests/paired.rs covers the design several series get by default.
const RUN: &str = "[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 2]\nduration = \"1s\"\nrepeats = 1\ndesign = \"sequential\"\n";

fn mariadb_10_11_18() -> PathBuf {
    unpacked_mariadb("10.11.18")
}

/// A version chain (#24, #51): Debian 11's 10.5.23, this machine's 10.11 and Debian 13's
/// 11.8, each a managed server from its own binaries named by version alone (#46: found in
/// scripts/unpack-mariadb.sh's cache, 10.11 as this machine's server), data prepared on each;
/// the report's variables diff shows what the majors changed by meaning (10.5's utf8 is
/// 10.11's utf8mb3: no difference; a performance variable 10.6 removed is shown absent, in
/// front).
#[test]
fn a_sweep_runs_across_a_version_chain() {
    let old = unpacked_mariadb("10.5.23");
    unpacked_mariadb("11.8.9");
    let body = format!(
        "name = \"majors\"\n{RUN}\n[[targets]]\nname = \"10.5\"\nserver = {{ mariadb = \"10.5\" }}\n[[targets]]\nname = \"10.11\"\nserver = {{ mariadb = \"10.11\" }}\n[[targets]]\nname = \"11.8\"\nserver = {{ mariadb = \"11.8.9\" }}\n"
    );
    let (out, run, _tmp) = run_sweep(&body, "majors");
    assert!(out.status.success(), "{}", text(&out));
    // The manifest says which build each version named.
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let server = |i: usize| &m["targets"][i]["server"];
    assert_eq!(server(0)["mariadb"], "10.5.23", "{manifest}");
    assert_eq!(server(0)["basedir"], old.to_str().unwrap(), "{manifest}");
    assert_eq!(server(1)["basedir"], "/usr", "{manifest}");
    assert!(server(1)["mariadb"].as_str().unwrap().starts_with("10.11."));
    let rows = points(&run);
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r.status == PointStatus::Ok), "{rows:?}");
    for (target, version) in [
        ("10.5", "10.5.23-MariaDB"),
        ("10.11", "10.11."),
        ("11.8", "11.8.9-MariaDB"),
    ] {
        assert!(
            rows.iter()
                .filter(|r| r.target == target)
                .all(|r| r.server_version.starts_with(version)),
            "{target}: {rows:?}"
        );
    }
    assert_eq!(
        variable(&run, "10.5__default", "character_set_system"),
        "utf8"
    );
    assert_eq!(
        variable(&run, "10.11__default", "character_set_system"),
        "utf8mb3"
    );
    assert_eq!(
        variable(&run, "11.8__default", "character_set_server"),
        "utf8mb4"
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("| variable | 10.5/default | 10.11/default | 11.8/default |"),
        "{md}"
    );
    assert!(
        md.contains("| binlog_gtid_index | (absent) | (absent) | ON |"),
        "{md}"
    );
    assert!(
        md.contains("| **innodb_buffer_pool_instances** | 1 | (absent) | (absent) |"),
        "{md}"
    );
    assert!(!md.contains("| character_set_system |"), "{md}");
    // Each major's counters are read with the same list (a counter one lacks is absent from
    // its rows, never an error) and its process's from /proc.
    let costs = sweepbench::pipeline::results::cost::load(&run).unwrap();
    for r in &rows {
        let has = |source: &str, counter: &str| {
            costs
                .iter()
                .any(|c| c.point_id == r.point_id && c.source == source && c.counter == counter)
        };
        assert!(
            has("status", "Handler_read_key"),
            "{}: {costs:?}",
            r.point_id
        );
        assert!(
            has("status", "Innodb_buffer_pool_read_requests"),
            "{}",
            r.point_id
        );
        assert!(has("proc", "cpu_us"), "{}", r.point_id);
    }
    assert!(md.contains("## Server cost per transaction"), "{md}");
}

#[test]
fn version_matrix_records_each_servers_version() {
    let old = mariadb_10_11_18();
    let body = format!(
        "name = \"versions\"\n{RUN}\n[[targets]]\nname = \"old\"\nserver = {{ basedir = \"{}\" }}\n[[targets]]\nname = \"system\"\nserver = {{ basedir = \"/usr\" }}\n",
        old.display()
    );
    let (out, run, _tmp) = run_sweep(&body, "versions");
    assert!(out.status.success(), "{}", text(&out));
    let rows = points(&run);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .all(|r| r.status == PointStatus::Ok && !r.server_version.is_empty()),
        "{rows:?}"
    );
    let versions: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.server_version.as_str()).collect();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert!(rows
        .iter()
        .filter(|r| r.target == "old")
        .all(|r| r.server_version.starts_with("10.11.18")));
    assert!(
        rows.iter().all(|r| r.server_cpu_s.unwrap_or(0.0) > 0.0),
        "server CPU measured: {rows:?}"
    );
}

#[test]
fn two_configs_share_one_prepare_and_get_their_own_variables() {
    let body = format!(
        "name = \"configs\"\n{RUN}\n[[targets]]\nname = \"local\"\nserver = {{}}\n[[configs]]\nname = \"durable\"\nvars = {{ innodb_flush_log_at_trx_commit = 1 }}\n[[configs]]\nname = \"lazy\"\nvars = {{ innodb_flush_log_at_trx_commit = 2 }}\n"
    );
    let (out, run, _tmp) = run_sweep(&body, "configs");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(
        points(&run)
            .iter()
            .filter(|r| r.status == PointStatus::Ok)
            .count(),
        4
    );
    assert_eq!(
        variable(&run, "local__durable", "innodb_flush_log_at_trx_commit"),
        "1"
    );
    assert_eq!(
        variable(&run, "local__lazy", "innodb_flush_log_at_trx_commit"),
        "2"
    );
    assert!(
        std::fs::read_to_string(run.join("servers/local__lazy/my.cnf"))
            .unwrap()
            .contains("innodb_flush_log_at_trx_commit = 2")
    );
    assert_eq!(
        t.matches("preparing data on").count(),
        1,
        "data prepared once:\n{t}"
    );
    assert_eq!(t.matches(": prepared 1 table(s) × ").count(), 1, "{t}");
    // A fresh server had no table to drop, and is not told it had.
    assert!(!t.contains("dropping the sbtest tables"), "{t}");
}

#[test]
fn a_server_that_cannot_start_fails_its_points_only() {
    let body = format!(
        "name = \"broken\"\n{RUN}\n[[targets]]\nname = \"bad\"\nserver = {{ options = [\"--no-such-option-anywhere=1\"] }}\n[[targets]]\nname = \"good\"\nserver = {{}}\n"
    );
    let (out, run, _tmp) = run_sweep(&body, "broken");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let rows = points(&run);
    let bad: Vec<_> = rows.iter().filter(|r| r.target == "bad").collect();
    assert_eq!(bad.len(), 2);
    assert!(
        bad.iter().all(|r| r.status == PointStatus::Failed),
        "{bad:?}"
    );
    assert!(
        bad[0].error.contains("no-such-option-anywhere"),
        "server's own error line: {}",
        bad[0].error
    );
    assert!(
        rows.iter()
            .filter(|r| r.target == "good")
            .all(|r| r.status == PointStatus::Ok),
        "{rows:?}"
    );
}

/// Table classes and chart count of each workload section of a report.html.
fn structure(html: &str) -> Vec<Vec<String>> {
    html.split("<section class=\"workload\"")
        .skip(1)
        .map(|sec| {
            let sec = sec.split("</section>").next().unwrap_or("");
            let mut items: Vec<String> = sec
                .split("<table class=\"")
                .skip(1)
                .map(|t| t.split('"').next().unwrap_or("").to_string())
                .collect();
            items.push(format!("svg×{}", sec.matches("<svg").count()));
            items
        })
        .collect()
}

#[test]
fn two_configs_write_a_full_run_directory_and_a_comparing_report() {
    let body = "name = \"flush\"\nbaseline = \"local/default\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_write_only\"]\nthreads = [1, 4]\nduration = \"2s\"\nrepeats = 1\ndesign = \"sequential\"\nreport_interval = \"1s\"\n[[targets]]\nname = \"local\"\nserver = {}\n[[configs]]\nname = \"default\"\n[[configs]]\nname = \"no-flush\"\nvars = { innodb_flush_log_at_trx_commit = 0 }\n";
    let (out, run, tmp) = run_sweep(body, "flush");
    assert!(out.status.success(), "{}", text(&out));
    for f in [
        "sweep.toml",
        "manifest.json",
        "points.csv",
        "intervals.csv",
        "report.html",
        "report.md",
    ] {
        assert!(run.join(f).is_file(), "{f} missing");
    }
    let latest = std::fs::read_link(run.parent().unwrap().join("latest")).unwrap();
    assert_eq!(latest, Path::new(run.file_name().unwrap()));
    let header = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(
        header.lines().next().unwrap(),
        sweepbench::pipeline::results::POINT_COLUMNS.join(",")
    );
    let hists: Vec<_> = std::fs::read_dir(run.join("histograms"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(hists.len(), 4, "one histogram per point");
    let h = std::fs::read_to_string(hists[0].path()).unwrap();
    assert!(h.contains("Tag=local__") && h.contains(",HISTF"), "{h}");
    assert_eq!(std::fs::read_dir(run.join("servers")).unwrap().count(), 2);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    // The host probe ran: a CPU speed and an fsync latency were measured.
    assert!(manifest["host"]["probe"]["cpu_mops"].as_f64().unwrap() > 0.0);
    assert!(manifest["host"]["probe"]["fsync_us"].as_f64().unwrap() > 0.0);
    assert_eq!(manifest["summary"]["ok"], 4);
    assert_eq!(manifest["plan"].as_array().unwrap().len(), 4);

    // What each point cost the server, per transaction: one insert per oltp_write_only
    // transaction; an fsync per commit with innodb_flush_log_at_trx_commit = 1 and none
    // with 0; and the server process's CPU from /proc.
    let costs = sweepbench::pipeline::results::cost::load(&run).unwrap();
    let per = |config: &str, t: u32, source: &str, counter: &str| {
        let id = format!("local/{config}/oltp_write_only/t{t}/r1");
        costs
            .iter()
            .find(|r| r.point_id == id && r.source == source && r.counter == counter)
            .and_then(|r| r.per_txn)
            .unwrap_or_else(|| panic!("{id}: no {source} {counter} in status.csv"))
    };
    for t in [1, 4] {
        for config in ["default", "no-flush"] {
            let w = per(config, t, "status", "Handler_write");
            assert!((0.95..=1.05).contains(&w), "{config} t{t}: {w} inserts/txn");
            assert!(per(config, t, "proc", "cpu_us") > 0.0);
        }
        // The counters' own readings are not charged to the workload, which scans nothing.
        for config in ["default", "no-flush"] {
            assert_eq!(
                per(config, t, "status", "Select_scan"),
                0.0,
                "{config} t{t}"
            );
            assert_eq!(per(config, t, "status", "Created_tmp_tables"), 0.0);
        }
        let synced = per("default", t, "status", "Innodb_data_fsyncs");
        let unsynced = per("no-flush", t, "status", "Innodb_data_fsyncs");
        assert!(
            synced > 0.3,
            "t{t}: {synced} fsyncs/txn with flush at commit"
        );
        assert!(
            unsynced < synced / 5.0,
            "t{t}: {unsynced} fsyncs/txn without"
        );
    }
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("| threads | local/default | local/no-flush |"),
        "{md}"
    );
    for t in [1, 4] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {t} |")))
            .unwrap();
        assert!(
            row.contains(" (") && row.contains(" %"),
            "Δ % against the baseline at {t} threads: {row}"
        );
    }
    assert!(
        md.contains("| **innodb_flush_log_at_trx_commit** | 1 | 0 |"),
        "{md}"
    );
    assert!(md.contains("## Server cost per transaction"), "{md}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<svg"), "a chart");
    assert!(
        html.contains("<td class=\"name\"><strong>innodb_flush_log_at_trx_commit</strong></td>")
    );

    // `report` re-renders the same from the files alone, and an imported run has the same
    // structure.
    std::fs::remove_file(run.join("report.html")).unwrap();
    let again = sweepbench(&["report", run.to_str().unwrap()], tmp.path());
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        structure(&std::fs::read_to_string(run.join("report.html")).unwrap()),
        structure(&html)
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let imported = tmp.path().join("imported");
    let imp = sweepbench(
        &[
            "import",
            fixtures.join("sysbench-1.0-full.log").to_str().unwrap(),
            fixtures.join("sysbench-0.5.log").to_str().unwrap(),
            "--out",
            imported.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(imp.status.success(), "{}", text(&imp));
    let imported_html = std::fs::read_to_string(imported.join("report.html")).unwrap();
    assert_eq!(structure(&imported_html), structure(&html));
}

#[test]
fn the_sysbench_driver_runs_the_same_points() {
    let body = "name = \"drivers\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"2s\"\nrepeats = 2\ndrivers = [\"native\", \"sysbench\"]\nreport_interval = \"1s\"\n[[targets]]\nname = \"local\"\nserver = {}\n";
    let (out, run, _tmp) = run_sweep(body, "drivers");
    assert!(out.status.success(), "{}", text(&out));
    let rows = points(&run);
    let order: Vec<(String, u32)> = rows
        .iter()
        .map(|r| (r.driver.to_string(), r.repeat))
        .collect();
    assert_eq!(
        order,
        vec![
            ("native".to_string(), 1),
            ("sysbench".into(), 1),
            ("sysbench".into(), 2),
            ("native".into(), 2)
        ],
        "A-B-B-A"
    );
    for r in &rows {
        assert_eq!(r.status, PointStatus::Ok, "{r:?}");
        assert!(
            r.transactions > 0 && r.qps > 0.0 && r.client_cpu_s > 0.0,
            "{r:?}"
        );
        assert!(r.server_cpu_s.unwrap_or(0.0) > 0.0, "{r:?}");
        assert_eq!(
            r.reads, r.transactions,
            "point_select: one read per event ({})",
            r.driver
        );
    }
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("| local/default/sysbench |"), "{md}");
    assert!(md.contains("client µs/query"), "{md}");
}

/// Work directories (a server's datadir, its golden copy: hundreds of MB) of a run that was
/// SIGKILLed are reaped by the next run, and a server still running from them is stopped.
#[test]
fn a_killed_runs_work_directory_is_reaped_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let body = |d: &str| {
        format!("name = \"killed\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"{d}\"\nrepeats = 1\n[[targets]]\nname = \"local\"\nserver = {{}}\n")
    };
    let long = tmp.path().join("long.toml");
    std::fs::write(&long, body("60s")).unwrap();
    let results = tmp.path().join("results");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", tmp.path())
        .args(["run", long.to_str().unwrap(), "--quiet", "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let work_dirs = || -> Vec<PathBuf> {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("sweepbench-")
            })
            .collect()
    };
    // Wait until a point is measuring: a server is up from the golden copy.
    common::wait_for(
        "the run to start a point",
        std::time::Duration::from_secs(180),
        || work_dirs().iter().any(|d| d.join("golden-local").is_dir()),
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        work_dirs().len(),
        1,
        "the killed run left its work directory"
    );

    let short = tmp.path().join("short.toml");
    std::fs::write(&short, body("1s").replace("killed", "next")).unwrap();
    let out = sweepbench(
        &[
            "run",
            short.to_str().unwrap(),
            "--results-dir",
            results.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("left by a sweepbench that was killed"),
        "{}",
        text(&out)
    );
    assert!(work_dirs().is_empty(), "left behind: {:?}", work_dirs());
    let alive = std::process::Command::new("pgrep")
        .args(["-f", &tmp.path().to_string_lossy()])
        .output()
        .unwrap();
    assert!(
        alive.stdout.is_empty(),
        "a server of the killed run still runs: {}",
        String::from_utf8_lossy(&alive.stdout)
    );
}

/// When results stop being writable mid-run (a full disk; here: points.csv cannot be
/// appended to), the point that measured keeps its figures (printed, the only copy),
/// the summary accounts for every planned point, and the run exits 1. On a synthetic target
/// paced in real time: what is tested is the run directory, not the server.
#[test]
fn a_point_that_cannot_be_written_keeps_its_figures_and_the_summary_counts_every_point() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("full.toml");
    std::fs::write(&f, format!("name = \"full\"\n{RUN}threads = [1, 2, 4]\n[[targets]]\nname = \"local\"\nsynthetic = {{ seed = 1, real_time = true }}\n").replace("threads = [1, 2]\n", "")).unwrap();
    let results = tmp.path().join("results");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", tmp.path())
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first point is written, make the next write of points.csv fail.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let run = loop {
        if let Some(run) = latest_run(&results, "full") {
            if run.join("points.csv").is_file() && !points(&run).is_empty() {
                break run;
            }
        }
        assert!(std::time::Instant::now() < until, "no point was written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Rows are appended: a directory where the file was fails the next append.
    std::fs::rename(run.join("points.csv"), run.join("points.kept")).unwrap();
    std::fs::create_dir(run.join("points.csv")).unwrap();
    let out = child.wait_with_output().unwrap();
    std::fs::remove_dir(run.join("points.csv")).unwrap();
    std::fs::rename(run.join("points.kept"), run.join("points.csv")).unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert_eq!(points(&run).len(), 1, "{t}");
    assert!(
        t.contains("sweep 'full': 2 ok, 0 failed, 0 skipped, 1 not run of 3 planned"),
        "{t}"
    );
    let kept = t
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("local/default/oltp_point_select/t2/r1 ok: ")
        })
        .unwrap_or_else(|| panic!("the unwritten point's figures are missing:\n{t}"));
    assert!(
        kept.contains(" tps, ") && kept.contains("transactions in"),
        "{kept}"
    );
    assert!(t.contains("measured but not written to points.csv"), "{t}");
}

/// A managed proxy (#24): HAProxy started in front of another target's server, the points of
/// the proxy target measured through it, its cost per thread count in the report; a proxy
/// that dies fails the point that was running and says so with the end of its log, is
/// started again for the next point (as a dead server is), and nothing is left running.
#[test]
fn a_proxy_target_is_measured_through_haproxy_which_stops_with_the_sweep() {
    let targets = "[[targets]]\nname = \"direct\"\nserver = {}\n[[targets]]\nname = \"hap\"\nproxy = { kind = \"haproxy\", target = \"direct\" }\n";
    let body = format!(
        "name = \"proxied\"\n{}\n{targets}",
        RUN.replace("repeats = 1", "repeats = 2")
    );
    let (out, run, _tmp) = run_sweep(&body, "proxied");
    assert!(out.status.success(), "{}", text(&out));
    let rows = points(&run);
    assert_eq!(rows.len(), 8);
    assert!(rows.iter().all(|r| r.status == PointStatus::Ok), "{rows:?}");
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("## Proxy cost"), "{md}");
    for t in [1, 2] {
        assert!(
            md.contains(&format!(
                "| hap | direct | default | oltp_point_select | {t} |"
            )),
            "{md}"
        );
    }
    // Killed in the middle of a point: that point fails, naming the proxy; the next is
    // measured through a new one.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("killed.toml");
    std::fs::write(
        &f,
        body.replace("duration = \"1s\"", "duration = \"12s\"")
            .replace("repeats = 2", "repeats = 1"),
    )
    .unwrap();
    let results = dir.path().join("results");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args([
            "run",
            f.to_str().unwrap(),
            "--only",
            "target=hap",
            "--results-dir",
        ])
        .arg(&results)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The proxy of this run: a child of it whose configuration is in its work directory.
    let mut proxy = None;
    common::wait_for(
        "the proxy to start",
        std::time::Duration::from_secs(120),
        || {
            proxy = std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
                let pid: i32 = e.file_name().to_string_lossy().parse().ok()?;
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                let ppid: u32 = stat
                    .rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                let cmd = std::fs::read_to_string(e.path().join("cmdline")).ok()?;
                (ppid == child.id() && cmd.contains("haproxy.cfg")).then_some(pid)
            });
            proxy.is_some()
        },
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(unsafe { libc::kill(proxy.unwrap(), libc::SIGKILL) }, 0);
    let (code, said) = common::wait_end(
        child,
        "the run to end with its proxy killed",
        std::time::Duration::from_secs(120),
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains(
            "haproxy exited (signal: 9 (SIGKILL)) and was restarted; its log ended with: "
        ),
        "{said}"
    );
    assert!(
        said.contains("1 ok, 1 failed, 0 skipped of 2 planned"),
        "{said}"
    );
    let run = latest_run(&results, "proxied").unwrap();
    let rows = points(&run);
    let status: Vec<_> = rows.iter().map(|r| (r.threads, r.status)).collect();
    assert_eq!(
        status,
        vec![(1, PointStatus::Failed), (2, PointStatus::Ok)],
        "{said}"
    );
    assert!(
        rows[0].error.contains("and was restarted"),
        "{}",
        rows[0].error
    );
}
