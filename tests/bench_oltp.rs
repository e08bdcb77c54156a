//! `bench` against a real throwaway MariaDB: prepare / run / cleanup of oltp_read_write with
//! sysbench's schema and per-transaction counts, and two-way compatibility with sysbench 1.0.20.

mod common;
use common::*;

fn parse_counter(report: &str, label: &str) -> u64 {
    report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' in report:\n{report}"))
}

#[test]
fn prepare_run_cleanup_read_write() {
    let conn = fresh_db("rw");
    let out = bench_ok(
        "oltp_read_write prepare --tables=4 --table-size=10000",
        &conn,
    );
    assert!(out.contains("Creating table 'sbtest4'..."), "{out}");
    for t in 1..=4 {
        assert_eq!(
            query_u64(&format!("SELECT COUNT(*) FROM rw.sbtest{t}")),
            10_000
        );
        assert_eq!(
            query_u64(&format!("SELECT MAX(id) - MIN(id) + 1 FROM rw.sbtest{t}")),
            10_000
        );
    }
    // c and pad have sysbench's shape: 119 and 59 characters of digit groups.
    assert_eq!(
        query_u64("SELECT COUNT(*) FROM rw.sbtest1 WHERE LENGTH(c)=119 AND LENGTH(pad)=59 AND c REGEXP '^([0-9]{11}-){9}[0-9]{11}$'"),
        10_000
    );

    let report = bench_ok(
        "oltp_read_write run --tables=4 --table-size=10000 --threads=4 --time=5",
        &conn,
    );
    assert!(report.contains("Threads started!"), "{report}");
    let tx = parse_counter(&report, "transactions:");
    let errors = parse_counter(&report, "ignored errors:");
    let reads = parse_counter(&report, "read:");
    let writes = parse_counter(&report, "write:");
    let other = parse_counter(&report, "other:");
    assert!(tx > 50, "too few transactions: {report}");
    // 14/4/2 per transaction; restarted attempts add at most one attempt's worth per error.
    assert!(reads >= 14 * tx && reads <= 14 * (tx + errors), "{report}");
    assert!(writes >= 4 * tx && writes <= 4 * (tx + errors), "{report}");
    assert_eq!(other, 2 * tx + errors, "{report}");
    assert_eq!(parse_counter(&report, "total number of events:"), tx);

    let out = bench_ok("oltp_read_write cleanup --tables=4", &conn);
    assert!(out.contains("Dropping table 'sbtest4'..."));
    assert_eq!(
        query_u64("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='rw'"),
        0
    );
}

/// sysbench 1.1's --create-table-options reaches the server's CREATE TABLE.
#[test]
fn create_table_options_reach_the_table() {
    let conn = fresh_db("cto");
    bench_ok(
        "oltp_point_select prepare --table-size=100 --create-table-options=ROW_FORMAT=COMPACT",
        &conn,
    );
    let format = query_col(
        "SELECT row_format FROM information_schema.tables WHERE table_schema='cto' AND table_name='sbtest1'",
    );
    assert_eq!(format, ["Compact"]);
    assert_eq!(query_u64("SELECT COUNT(*) FROM cto.sbtest1"), 100);
}

fn sysbench(args: &[String]) -> String {
    let out = std::process::Command::new("sysbench")
        .args(args)
        .output()
        .expect("sysbench 1.0.20 must be installed (apt-get install sysbench; .ci/run does it)");
    assert!(
        out.status.success(),
        "sysbench {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn schema_equals_sysbench_and_each_runs_on_the_others_tables() {
    let ours = fresh_db("compat_ours");
    let theirs = fresh_db("compat_sysbench");
    bench_ok(
        "oltp_read_write prepare --tables=2 --table-size=2000",
        &ours,
    );
    sysbench(&args(
        "oltp_read_write --tables=2 --table-size=2000 prepare",
        &theirs,
    ));
    for t in 1..=2 {
        let a = query_col(&format!("SHOW CREATE TABLE compat_ours.sbtest{t}"));
        let b = query_col(&format!("SHOW CREATE TABLE compat_sysbench.sbtest{t}"));
        assert_eq!(a, b, "SHOW CREATE TABLE differs for sbtest{t}");
        assert_eq!(
            query_u64(&format!("SELECT COUNT(*) FROM compat_ours.sbtest{t}")),
            query_u64(&format!("SELECT COUNT(*) FROM compat_sysbench.sbtest{t}"))
        );
    }
    // sysbench on our tables.
    let out = sysbench(&args(
        "oltp_read_write --tables=2 --table-size=2000 --threads=2 --events=200 --time=0 run",
        &ours,
    ));
    assert_eq!(parse_counter(&out, "transactions:"), 200, "{out}");
    // We on sysbench's tables.
    let j = bench_json(
        "oltp_read_write run --tables=2 --table-size=2000 --threads=2 --events=200 --time=0",
        &theirs,
    );
    assert_eq!(json_u64(&j, "/totals/events"), 200);
    assert!(json_u64(&j, "/totals/reads") >= 14 * 200);
}

/// Replaces every number with N (and the padding around it, which depends on its width), so
/// two reports can be compared line by line for layout; the alignment itself is checked by the
/// output module's unit tests.
fn shape(report: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in report.lines().skip(1) {
        let mut s = String::new();
        let mut in_num = false;
        for ch in line.chars() {
            if ch.is_ascii_digit() || (in_num && ch == '.') {
                if !in_num {
                    s.push('N');
                }
                in_num = true;
            } else {
                in_num = false;
                s.push(ch);
            }
        }
        while s.contains("N  ") || s.contains("  N") {
            s = s.replace("N  ", "N ").replace("  N", " N");
        }
        out.push(s);
    }
    out
}

#[test]
fn report_layout_equals_sysbench() {
    let conn = fresh_db("layout");
    bench_ok(
        "oltp_read_write prepare --tables=2 --table-size=2000",
        &conn,
    );
    let common =
        "--tables=2 --table-size=2000 --threads=2 --time=3 --report-interval=2 --percentile=99";
    let theirs = sysbench(&args(&format!("oltp_read_write {common} run"), &conn));
    let ours = bench_ok(&format!("oltp_read_write run {common}"), &conn);
    assert_eq!(
        shape(&ours),
        shape(&theirs),
        "ours:\n{ours}\nsysbench:\n{theirs}"
    );
    // Column alignment is part of the layout: the same padding before each value.
    assert!(ours.contains("\n         99th percentile: "));
}

#[test]
fn non_default_schemas_equal_sysbench() {
    for (i, opts) in [
        "--auto-inc=off",
        "--secondary=on --create-secondary=off",
        "--mysql-storage-engine=myisam",
    ]
    .iter()
    .enumerate()
    {
        let (a, b) = (format!("schema_ours_{i}"), format!("schema_sb_{i}"));
        bench_ok(
            &format!("oltp_read_only prepare --table-size=500 {opts}"),
            &fresh_db(&a),
        );
        sysbench(&args(
            &format!("oltp_read_only --table-size=500 {opts} prepare"),
            &fresh_db(&b),
        ));
        assert_eq!(
            query_col(&format!("SHOW CREATE TABLE {a}.sbtest1")),
            query_col(&format!("SHOW CREATE TABLE {b}.sbtest1")),
            "schema differs with {opts}"
        );
        assert_eq!(query_u64(&format!("SELECT COUNT(*) FROM {a}.sbtest1")), 500);
    }
}
