//! Unit tests of the report model and its rendering.
use super::*;
use crate::pipeline::judge::verdict::Verdict;
use std::collections::HashMap;

/// An ok record of `repeat` at `tps` and `p95` (also report::host's tests').
pub(super) fn rec(
    target: &str,
    config: &str,
    workload: &str,
    threads: u32,
    repeat: u32,
    tps: f64,
    p95: f64,
) -> PointRecord {
    PointRecord {
        point_id: format!("{target}/{config}/{workload}/t{threads}/r{repeat}"),
        target: target.into(),
        config: config.into(),
        workload: workload.into(),
        threads,
        repeat,
        status: PointStatus::Ok,
        tps,
        qps: tps * 20.0,
        lat_avg_ms: p95 / 2.0,
        lat_p95_ms: p95,
        lat_p99_ms: Some(p95 * 1.5),
        transactions: 10_000,
        server_version: format!("10.11.{}", if target == "old" { 18 } else { 19 }),
        ..PointRecord::default()
    }
}

fn records() -> Vec<PointRecord> {
    let mut v = Vec::new();
    for r in 1..=3 {
        let j = r as f64; // small spread between repeats
        v.push(rec(
            "old",
            "default",
            "oltp_read_write",
            1,
            r,
            100.0 + j,
            10.0,
        ));
        v.push(rec(
            "old",
            "default",
            "oltp_read_write",
            8,
            r,
            400.0 + j,
            20.0,
        ));
        v.push(rec(
            "new",
            "default",
            "oltp_read_write",
            1,
            r,
            101.0 + j,
            10.0,
        ));
        v.push(rec(
            "new",
            "default",
            "oltp_read_write",
            8,
            r,
            300.0 + j,
            30.0,
        ));
    }
    v
}

#[test]
fn cells_are_geometric_means_compared_with_the_baseline() {
    let m = ReportModel::build(
        "s",
        "r",
        "",
        &records(),
        Some("old/default"),
        &BTreeMap::new(),
        &HashMap::new(),
    );
    assert_eq!(m.series, vec!["old/default", "new/default"]);
    assert_eq!(m.versions, vec!["10.11.18", "10.11.19"]);
    let w = &m.workloads[0];
    assert_eq!(
        w.rows.iter().map(|r| r.threads).collect::<Vec<_>>(),
        vec![1, 8]
    );
    let base = w.rows[1].cells[0].as_ref().unwrap();
    let new = w.rows[1].cells[1].as_ref().unwrap();
    // Geometric means of the repeats 401, 402, 403 and 301, 302, 303.
    assert!((base.tps - (401.0f64 * 402.0 * 403.0).cbrt()).abs() < 1e-9);
    assert!((new.tps - (301.0f64 * 302.0 * 303.0).cbrt()).abs() < 1e-9);
    // Δ is the ratio of the two cells, and the verdict's interval is around it.
    let d = new.tps_delta_pct.unwrap();
    assert!((d - (new.tps / base.tps - 1.0) * 100.0).abs() < 1e-9);
    assert!(new.tps_lo_pct.unwrap() < d && d < new.tps_hi_pct.unwrap());
    assert_eq!(new.verdict, Some(Verdict::Regressed));
    assert_eq!(
        (new.tps_verdict, new.p95_verdict),
        (Some(Verdict::Regressed), Some(Verdict::Regressed))
    );
    assert!(new.tps_hi_pct.unwrap() < -5.0 && new.tps_lo_pct.unwrap() < new.tps_hi_pct.unwrap());
    assert_eq!(
        base.verdict, None,
        "the baseline is not judged against itself"
    );
    // 1 thread: +1 % with 1 % noise over three repeats: within ±5 % with confidence.
    assert_eq!(
        w.rows[0].cells[1].as_ref().unwrap().verdict,
        Some(Verdict::Unchanged)
    );
    assert_eq!(
        m.headlines,
        vec!["new/default vs old/default: regressed at 1/2 points, unchanged at 1"]
    );
    assert_eq!(w.peaks[0].threads, 8);
    assert!((w.peaks[1].tps_delta_pct.unwrap() + 24.88).abs() < 0.01);
    assert!(w.scaling_svg.starts_with("<svg") && w.latency_svg.contains("new/default"));
}

#[test]
fn differing_variables_are_listed_and_paths_are_not() {
    let mut vars = BTreeMap::new();
    for (s, flush, dir) in [("old/default", "1", "/a"), ("new/default", "2", "/b")] {
        let mut m = BTreeMap::new();
        m.insert(
            "innodb_flush_log_at_trx_commit".to_string(),
            flush.to_string(),
        );
        m.insert("datadir".to_string(), dir.to_string());
        m.insert(
            "port".to_string(),
            if flush == "1" { "1" } else { "2" }.to_string(),
        );
        m.insert("max_connections".to_string(), "151".to_string());
        vars.insert(s.to_string(), m);
    }
    let m = ReportModel::build("s", "r", "", &records(), None, &vars, &HashMap::new());
    let names: Vec<&str> = m.var_diffs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["innodb_flush_log_at_trx_commit"]);
    assert_eq!(m.var_diffs[0].values, vec!["1", "2"]);
}

#[test]
fn failed_points_are_grouped_by_error_code() {
    let mut v = records();
    v.push(PointRecord {
        point_id: "new/default/oltp_read_write/t64/r1".into(),
        target: "new".into(),
        config: "default".into(),
        workload: "oltp_read_write".into(),
        threads: 64,
        status: PointStatus::Failed,
        error: "FATAL: mysql_stmt_execute() returned error 1062 (Duplicate entry) for query".into(),
        error_code: Some(1062),
        ..PointRecord::default()
    });
    let m = ReportModel::build("s", "r", "", &v, None, &BTreeMap::new(), &HashMap::new());
    assert_eq!(m.errors_by_code.len(), 1);
    assert_eq!(m.errors_by_code[0].code, "1062");
    assert_eq!(m.problems.len(), 1);
    // The failed point leaves an empty cell, not a zero.
    let row = m.workloads[0]
        .rows
        .iter()
        .find(|r| r.threads == 64)
        .unwrap();
    assert!(row.cells.iter().all(|c| c.is_none()));
}

/// A point measured while other processes took a quarter of the CPU, or the hypervisor
/// stole a tenth, is listed as starved with why and the rule; the rest are not.
#[test]
fn starved_points_are_shown_with_the_rule() {
    let mut v = records();
    v[0].others_cpu_pct = Some(31.0);
    v[1].steal_pct = Some(12.5);
    v[2].others_cpu_pct = Some(24.9);
    v[2].steal_pct = Some(9.9);
    let m = ReportModel::build("s", "r", "", &v, None, &BTreeMap::new(), &HashMap::new());
    let ids: Vec<&str> = m.starved.iter().map(|p| p.point_id.as_str()).collect();
    assert_eq!(ids, [v[0].point_id.as_str(), v[1].point_id.as_str()]);
    assert!(
        m.starved[0].error.contains("took 31 % of the host's CPU"),
        "{:?}",
        m.starved
    );
    assert!(m.starved[1].error.contains("stole 12 %"), "{:?}", m.starved);
    let md = render::markdown(&m).unwrap();
    assert!(md.contains("Starved points (2): "), "{md}");
    assert!(md.contains("at least 25 % of the host's CPU"), "{md}");
    let quiet = ReportModel::build(
        "s",
        "r",
        "",
        &records(),
        None,
        &BTreeMap::new(),
        &HashMap::new(),
    );
    assert!(quiet.starved.is_empty());
    assert!(!render::markdown(&quiet).unwrap().contains("Starved"));
}

/// The two-version report the rendering tests look at.
fn upgrade_report() -> ReportModel {
    ReportModel::build(
        "upgrade",
        "20261130T000000Z",
        "two versions",
        &records(),
        Some("old/default"),
        &BTreeMap::new(),
        &HashMap::new(),
    )
}

#[test]
fn markdown_and_html_render_the_tables() {
    let m = upgrade_report();
    let md = render::markdown(&m).unwrap();
    assert!(
        md.contains("| threads | old/default | new/default |"),
        "{md}"
    );
    assert!(
        md.contains("| 8 | 402.0 ±0.50 % | 302.0 (**−24.9 %** [−"),
        "{md}"
    );
    assert!(md.contains(" regressed) ±0.66 % |"), "{md}");
    assert!(
        md.contains("- new/default vs old/default: regressed at 1/2 points, unchanged at 1"),
        "{md}"
    );
    let html = render::html(&m).unwrap();
    assert!(html.contains("<table class=\"tps\">"));
    assert!(html.contains("<td class=\"regressed\">302.0"), "{html}");
    assert!(
        html.contains("<span class=\"verdict\">unchanged</span>"),
        "{html}"
    );
    assert!(html.contains("class=\"headline has-regressed\""), "{html}");
    assert_eq!(html.matches("<svg").count(), 3);
    // Self-contained: nothing loaded from elsewhere.
    assert!(!html.contains("<script src") && !html.contains("<link") && !html.contains("<img"));
}

#[test]
fn points_whose_client_used_half_its_cpu_are_marked_client_bound() {
    let mut v = records();
    for r in v.iter_mut() {
        // The new series' 8-thread point had a busy client; everything else an idle one.
        r.client_cpu_pct = if r.target == "new" && r.threads == 8 {
            72.5
        } else {
            12.0
        };
        r.queries = 1000;
        r.client_cpu_s = 0.01;
        r.server_cpu_s = Some(0.05);
    }
    let m = ReportModel::build("s", "r", "", &v, None, &BTreeMap::new(), &HashMap::new());
    let w = &m.workloads[0];
    let bound: Vec<(u32, usize)> = w
        .rows
        .iter()
        .flat_map(|r| {
            r.cells.iter().enumerate().filter_map(move |(i, c)| {
                c.as_ref()
                    .filter(|c| c.client_bound)
                    .map(|_| (r.threads, i))
            })
        })
        .collect();
    assert_eq!(bound, vec![(8, 1)]);
    let peak = &w.peaks[1];
    assert!((peak.client_us_per_query.unwrap() - 10.0).abs() < 1e-9);
    assert!((peak.server_us_per_query.unwrap() - 50.0).abs() < 1e-9);
    assert!((peak.client_cpu_pct.unwrap() - 72.5).abs() < 1e-9);
    let md = render::markdown(&m).unwrap();
    assert!(md.contains(" regressed) ±0.66 % ‡ |"), "{md}");
    assert!(md.contains(CLIENT_BOUND_METHOD), "{md}");
    let html = render::html(&m).unwrap();
    assert_eq!(html.matches("class=\"client-bound\"").count(), 1);
}

#[test]
fn client_cpu_share_counts_the_cores_the_client_could_use() {
    // 2 connections on 8 cores could use 2 cores: 10 s of CPU in 10 s is half.
    assert_eq!(client_cpu_pct(10.0, 10.0, 2, 8), 50.0);
    // 64 connections on 2 cores: at most 2 cores.
    assert_eq!(client_cpu_pct(5.0, 10.0, 64, 2), 25.0);
    assert_eq!(client_cpu_pct(0.0, 10.0, 4, 2), 0.0);
    assert_eq!(client_cpu_pct(1.0, 0.0, 4, 2), 0.0);
}

#[test]
fn report_md_layout_is_reviewed() {
    // A layout change shows as a diff of src/report/snapshots/ to accept or refuse.
    let m = upgrade_report();
    insta::assert_snapshot!(render::markdown(&m).unwrap());
}

#[test]
fn a_curve_up_to_the_largest_thread_count_a_file_can_name_renders() {
    // A tampered points.csv named u32::MAX threads; the fitted curve was drawn at every
    // thread count up to it (64 GB). Found by tests/fuzz.rs.
    let mut v = Vec::new();
    for (i, n) in [1, 2, 4, 8, 16, 32, u32::MAX].into_iter().enumerate() {
        for r in 1..=2 {
            v.push(rec(
                "old",
                "default",
                "oltp_read_only",
                n,
                r,
                100.0 * (i + 1) as f64,
                5.0,
            ));
        }
    }
    let m = ReportModel::build(
        "huge",
        "20261201T000000Z",
        "",
        &v,
        None,
        &BTreeMap::new(),
        &HashMap::new(),
    );
    let html = render::html(&m).unwrap();
    assert!(html.contains("4294967295"), "the point is in the report");
}

/// Three templates (#32): the winner table names the fastest per thread count with its
/// margin over the runner-up; a margin between two candidates is judged, one over the
/// baseline is the point's own verdict; a best at the highest thread count is "still rising",
/// never a peak.
#[test]
fn three_series_get_a_winner_table_and_a_rising_curve_is_not_a_peak() {
    let mut v = Vec::new();
    for r in 1..=4 {
        let j = r as f64 * 0.5;
        for (config, t1, t8) in [
            ("default", 100.0, 300.0),
            ("a", 120.0, 290.0),
            ("b", 101.0, 400.0),
        ] {
            v.push(rec("m", config, "oltp_read_write", 1, r, t1 + j, 10.0));
            v.push(rec("m", config, "oltp_read_write", 8, r, t8 + j, 10.0));
        }
    }
    let m = ReportModel::build(
        "t",
        "r",
        "",
        &v,
        Some("m/default"),
        &Default::default(),
        &Default::default(),
    );
    let w = &m.winners;
    assert_eq!(w.len(), 2, "{w:?}");
    // 1 thread: a beats b (a candidate) by about 19 %, judged between the two.
    assert_eq!(
        (w[0].threads, w[0].best.as_str(), w[0].runner_up.as_str()),
        (1, "m/a", "m/b")
    );
    assert!((w[0].margin_pct - 18.8).abs() < 0.5, "{:?}", w[0]);
    assert_eq!(w[0].margin, Some(Verdict::Improved));
    assert_eq!(w[0].baseline_verdict, Some(Verdict::Improved));
    // 8 threads: b beats the baseline, whose own verdict is the margin.
    assert_eq!(
        (w[1].best.as_str(), w[1].runner_up.as_str()),
        ("m/b", "m/default")
    );
    let b8 = m.workloads[0].rows[1].cells[2].as_ref().unwrap();
    assert_eq!(w[1].margin, b8.tps_verdict);
    assert_eq!(
        (w[1].margin_lo_pct, w[1].margin_hi_pct),
        (b8.tps_lo_pct, b8.tps_hi_pct)
    );
    // Every series is best at its highest thread count: still rising, say what to add.
    for p in &m.workloads[0].peaks {
        assert_eq!(p.rising, "still rising at 8 threads: add 16, 32", "{p:?}");
    }
    let md = crate::pipeline::report::render::markdown(&m).unwrap();
    assert!(md.contains("## Which is fastest"), "{md}");
    assert!(md.contains("| oltp_read_write | 1 | **m/a** |"), "{md}");
}

/// The variables diff of an upgrade (#32): what moves performance first, what always differs
/// between versions folded away with its count, and a changed default character set called
/// out at the top as a confounder with the vars line that pins it.
#[test]
fn the_variables_diff_leads_with_what_moves_performance() {
    let mut vars = BTreeMap::new();
    for (s, cs, version, gtid, only) in [
        (
            "old/default",
            "latin1",
            "10.11.19-MariaDB",
            "0-1-5",
            Some("x"),
        ),
        ("new/default", "utf8mb4", "11.8.9-MariaDB", "0-1-9", None),
    ] {
        let mut m = BTreeMap::new();
        for (k, v) in [
            ("character_set_server", cs),
            ("version", version),
            ("gtid_binlog_pos", gtid),
            (
                "innodb_buffer_pool_size",
                if cs == "latin1" { "128M" } else { "1G" },
            ),
            (
                "aria_pagecache_age_threshold",
                if cs == "latin1" { "300" } else { "400" },
            ),
        ] {
            m.insert(k.to_string(), v.to_string());
        }
        if let Some(v) = only {
            m.insert("removed_in_11".to_string(), v.to_string());
        }
        vars.insert(s.to_string(), m);
    }
    let m = ReportModel::build("s", "r", "", &records(), None, &vars, &HashMap::new());
    let names: Vec<&str> = m.var_diffs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "character_set_server",
            "innodb_buffer_pool_size",
            "aria_pagecache_age_threshold",
            "gtid_binlog_pos",
            "removed_in_11",
            "version"
        ]
    );
    assert_eq!(m.var_always, 3);
    assert_eq!(m.confounders.len(), 1);
    let c = &m.confounders[0];
    assert!(
        c.contains("character_set_server (latin1 on old/default, utf8mb4 on new/default)")
            && c.contains("vars = { character_set_server = \"latin1\" }"),
        "{c}"
    );
    let md = render::markdown(&m).unwrap();
    let confounder = md.find("> **Confounder:**").expect("said");
    assert!(
        confounder < md.find("## Throughput").unwrap_or(usize::MAX),
        "{md}"
    );
    assert!(
        md.contains("| **innodb_buffer_pool_size** | 128M | 1G |"),
        "{md}"
    );
    assert!(md.contains("<details><summary>3 more that differ"), "{md}");
    let html = render::html(&m).unwrap();
    assert!(html.contains("<details><summary>3 more that differ"));
    assert!(html.contains("<strong>Confounder:</strong>"));
}

/// A series has one peak in every table: the peak table's and the scaling table's measured
/// peak are the same figure (the geometric mean of the repeats) at the same thread count,
/// where a median would pick another (repeats 100, 100, 400 at 4 threads: median 100,
/// geometric mean 158.7, against 150 at 8).
#[test]
fn the_peak_and_scaling_tables_give_one_peak_per_series() {
    let mut v = Vec::new();
    for (threads, tps) in [
        (1, [60.0, 60.0, 60.0]),
        (2, [90.0; 3]),
        (4, [100.0, 100.0, 400.0]),
        (8, [150.0; 3]),
    ] {
        for (r, t) in tps.iter().enumerate() {
            v.push(rec(
                "old",
                "default",
                "oltp_read_only",
                threads,
                r as u32 + 1,
                *t,
                10.0,
            ));
        }
    }
    let m = ReportModel::build("s", "r", "", &v, None, &BTreeMap::new(), &HashMap::new());
    let w = &m.workloads[0];
    let (peak, scaling) = (&w.peaks[0], &w.scaling[0]);
    assert_eq!(peak.threads, 4);
    assert_eq!(scaling.measured_peak_threads, peak.threads);
    assert!(
        (scaling.measured_peak_tps - peak.tps).abs() < 1e-9,
        "{} {}",
        scaling.measured_peak_tps,
        peak.tps
    );
}
