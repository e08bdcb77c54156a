//! Unit tests of the sysbench log parser on fixture logs (tests/fixtures).
use super::*;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

#[test]
fn sysbench_1_0_with_header_reads_exactly_as_printed() {
    let p = parse(&fixture("sysbench-1.0-full.log"));
    let r = record(&p, "old", 1, None).unwrap();
    assert_eq!(r.threads, 4);
    assert_eq!(r.driver.to_string(), "sysbench 1.0.20");
    assert_eq!((r.transactions, r.tps), (2285, 760.37));
    assert_eq!((r.queries, r.qps), (45790, 15237.26));
    assert_eq!(
        (r.reads, r.writes, r.other, r.errors),
        (32060, 7114, 6616, 5)
    );
    assert_eq!(
        (r.lat_min_ms, r.lat_avg_ms, r.lat_p95_ms, r.lat_max_ms),
        (0.97, 5.25, 11.04, 165.91)
    );
    assert_eq!(r.duration_s, 3.0048);
    assert_eq!(p.intervals.len(), 3);
    assert_eq!(p.intervals[1].lat_pct_ms, 11.04);
    assert_eq!(p.intervals[2].reads_s, 9233.90);
}

#[test]
fn pasted_logs_without_indentation_or_header_parse_the_same() {
    let full = record(&parse(&fixture("sysbench-1.0-full.log")), "t", 1, None).unwrap();
    let pasted = record(&parse(&fixture("sysbench-1.0-pasted.log")), "t", 1, Some(4)).unwrap();
    assert_eq!(
        (pasted.transactions, pasted.tps, pasted.qps),
        (full.transactions, full.tps, full.qps)
    );
    assert_eq!(
        (pasted.lat_avg_ms, pasted.lat_p95_ms, pasted.lat_max_ms),
        (full.lat_avg_ms, full.lat_p95_ms, full.lat_max_ms)
    );
    // Without a header nothing says how many threads ran.
    assert!(record(&parse(&fixture("sysbench-1.0-pasted.log")), "t", 1, None).is_err());
}

#[test]
fn interval_lines_alone_give_threads_and_rates() {
    let p = parse(&fixture("sysbench-1.0-intervals-only.log"));
    let r = record(&p, "t", 1, None).unwrap();
    assert_eq!(r.threads, 4);
    // (836.75 + 781.17 + 661.28) / 3 over three 1 s intervals.
    assert!((r.tps - 759.7333).abs() < 1e-3, "{}", r.tps);
    assert_eq!(r.transactions, 2279);
    assert!((r.lat_p95_ms - (10.46 + 11.04 + 12.30) / 3.0).abs() < 1e-9);
    assert!(r.error.contains("interval lines"));
}

#[test]
fn sysbench_0_5_reads_exactly_as_printed() {
    let p = parse(&fixture("sysbench-0.5.log"));
    let r = record(&p, "t", 1, None).unwrap();
    assert_eq!(r.threads, 16);
    assert_eq!((r.transactions, r.tps), (24846, 1242.21));
    assert_eq!(
        (r.reads, r.writes, r.other, r.queries),
        (347844, 99384, 49692, 496920)
    );
    assert_eq!(
        (r.lat_min_ms, r.lat_avg_ms, r.lat_p95_ms, r.lat_max_ms),
        (3.21, 12.87, 18.20, 98.44)
    );
    assert!((r.qps - 496920.0 / 20.0012).abs() < 1e-6);
    assert_eq!(p.intervals.len(), 2);
    assert_eq!(p.intervals[0].t_s, 10.0);
    assert_eq!(p.intervals[1].lat_pct_ms, 17.90);
}

#[test]
fn sysbench_0_4_reads_exactly_as_printed() {
    let r = record(&parse(&fixture("sysbench-0.4.log")), "t", 1, None).unwrap();
    assert_eq!(r.threads, 8);
    assert_eq!((r.transactions, r.tps), (10000, 412.34));
    assert_eq!((r.reads, r.writes, r.other), (140000, 50000, 20000));
    assert_eq!(
        (r.lat_avg_ms, r.lat_p95_ms, r.lat_max_ms),
        (19.38, 31.66, 211.07)
    );
}

/// The final report of sysbench-1.0-full.log with one figure replaced.
fn corrupted(from: &str, to: &str) -> String {
    let full = fixture("sysbench-1.0-full.log");
    assert!(full.contains(from), "fixture lacks {from}");
    full.replacen(from, to, 1)
}

#[test]
fn figures_sysbench_cannot_print_are_refused_with_their_line() {
    for (from, to, why) in [
        ("(760.37 per sec.)", "(1e400 per sec.)", "exponent notation"),
        ("2285", "18446744073709551615999", "too large"),
        (
            "(760.37 per sec.)",
            "(NaN per sec.)",
            "'NaN' is not a number",
        ),
        ("165.91", "inf", "'inf' is not a number"),
    ] {
        let text = corrupted(from, to);
        let line = text.lines().position(|l| l.contains(to)).unwrap() + 1;
        let p = parse(&text);
        let e = record(&p, "t", 1, None).unwrap_err().to_string();
        assert!(e.contains(&format!("line {line}: ")), "{to}: {e}");
        assert!(e.contains(why), "{to}: {e}");
    }
    // Plain figures still parse.
    assert!(record(&parse(&fixture("sysbench-1.0-full.log")), "t", 1, None).is_ok());
}

#[test]
fn a_failed_import_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.log");
    let bad = d.path().join("bad.log");
    std::fs::write(&good, fixture("sysbench-1.0-full.log")).unwrap();
    std::fs::write(&bad, corrupted("2285", "18446744073709551615999")).unwrap();
    let out = d.path().join("imported");
    let e = import(&[good.clone(), bad], &out, None, None).unwrap_err();
    assert!(format!("{e:#}").contains("bad.log"), "{e:#}");
    assert!(!out.exists(), "a partial import was left behind");
    assert!(import(&[good], &out, None, None).is_ok());
    assert!(out.join("points.csv").is_file());
    // sysbench printed no p99: the report (rendered by the command after the import) says
    // so instead of showing 0.00.
    crate::pipeline::report::write(&out, None).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| 11.0 / – |"), "{md}");
    assert!(!md.contains("/ 0.00"), "{md}");
}

/// Logs whose figures no run can have (#22 N34, 11c): a negative count, no transaction, no
/// time, no thread; and a target name that could not name a series (N45).
#[test]
fn impossible_runs_and_unusable_names_are_refused() {
    let full = fixture("sysbench-1.0-full.log");
    let tx_line = full.lines().find(|l| l.contains("transactions:")).unwrap();
    let e = record(&parse(&corrupted("2285", "-2285")), "t", 1, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'-2285' is negative"), "{e}");
    // No transaction, no event, no query: nothing was measured.
    let none = full
        .replace(
            tx_line,
            "    transactions:                        0      (0.00 per sec.)",
        )
        .replace(
            "    queries:                             45790  (15237.26 per sec.)",
            "    queries:                             0      (0.00 per sec.)",
        )
        .replace(
            "        total:                           45790",
            "        total:                           0",
        )
        .replace(
            "    total number of events:              2285",
            "    total number of events:              0",
        );
    let e = record(&parse(&none), "t", 1, None).unwrap_err().to_string();
    assert!(e.contains("no completed transaction"), "{e}");
    let timeless = corrupted(
        "total time:                          3.0048s",
        "total time:                          0.0000s",
    );
    let e = record(&parse(&timeless), "t", 1, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("lasted 0 s"), "{e}");
    // A count that the rate and the time contradict (what a run's points.csv is refused for
    // at load, so the imported run could not be read back).
    let e = record(&parse(&corrupted("2285", "2147483647")), "t", 1, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("contradict"), "{e}");
    let e = record(&parse(&full), "t", 1, Some(0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("0 threads"), "{e}");
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("run.log");
    std::fs::write(&log, &full).unwrap();
    for bad in ["<script>alert(1)</script>", "a/b", ".hidden", "a..b"] {
        let out = d.path().join("out");
        let e = import(std::slice::from_ref(&log), &out, Some(bad), None).unwrap_err();
        assert!(format!("{e:#}").contains("--target"), "{bad}: {e:#}");
        assert!(!out.exists());
    }
}

/// sysbench 0.5's non-transactional read-only run on NDB (`--oltp-test-mode=nontrx
/// --oltp-skip-trx=on`), with the figures of the published log: no transaction, but events
/// and read/write requests (the fixture holds the figures the published log prints, in 0.5's
/// layout). It imports with events/s and queries/s as its figures, and says
/// so; it had been refused as "nothing was measured" (#34).
#[test]
fn a_run_without_transactions_imports_its_events_and_queries() {
    let p = parse(&fixture("sysbench-0.5-nontrx.log"));
    assert_eq!(p.transactions, Some(0));
    assert_eq!(p.events, Some(294782));
    assert_eq!(p.rw_requests, Some((4126948, Some(34389.65))));
    let r = record(&p, "ndb", 1, None).unwrap();
    assert_eq!(
        (r.threads, r.transactions, r.queries),
        (32, 294782, 4126948)
    );
    assert!((r.tps - 294782.0 / 120.0055).abs() < 1e-6, "{}", r.tps);
    // The rate the log printed for its requests.
    assert!((r.qps - 34389.65).abs() < 0.01, "{}", r.qps);
    assert!((r.lat_p95_ms - 19.84).abs() < 1e-9);
    assert!(
        r.error
            .contains("tps is its events/s (294782 events), qps its queries/s"),
        "{}",
        r.error
    );
    // Only read/write requests (no "queries performed" block): those are the queries.
    let text = fixture("sysbench-0.5-nontrx.log")
        .replace("        total:                           4126948\n", "");
    let r = record(&parse(&text), "ndb", 1, None).unwrap();
    assert_eq!(r.queries, 4126948);
    assert!(
        r.error.contains("qps its read/write requests/s"),
        "{}",
        r.error
    );
    // Requests but no event count: refused, saying which line would decide it.
    let text = text.replace("    total number of events:              294782\n", "");
    let e = record(&parse(&text), "ndb", 1, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no transaction and no event"), "{e}");
}
