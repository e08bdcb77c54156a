//! history's tests: run directories written by hand, judged as `sweepbench history` judges them.
use super::*;

/// A run directory whose points have these tps (three repeats each, ±1 %).
fn write_run(root: &Path, id: &str, tps1: f64, tps8: f64) {
    let dir = root.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = csv::Writer::from_path(dir.join("points.csv")).unwrap();
    for (threads, tps) in [(1u32, tps1), (8, tps8)] {
        for (repeat, k) in [(1u32, 1.0), (2, 1.01), (3, 0.99)] {
            w.serialize(PointRecord {
                point_id: format!("local/default/oltp_point_select/t{threads}/r{repeat}"),
                target: "local".into(),
                config: "default".into(),
                workload: "oltp_point_select".into(),
                threads,
                repeat,
                status: PointStatus::Ok,
                tps: tps * k,
                lat_p95_ms: 1.0,
                ..PointRecord::default()
            })
            .unwrap();
        }
    }
    w.flush().unwrap();
}

/// A run of `write_run`'s points plus the host's cpu test at one thread.
fn write_run_with_host(root: &Path, id: &str, tps: f64, host_eps: f64) {
    write_run(root, id, tps, tps * 5.0);
    let path = root.join(id).join("points.csv");
    let mut points: Vec<PointRecord> = csv::Reader::from_path(&path)
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect();
    for (repeat, k) in [(1u32, 1.0), (2, 1.01), (3, 0.99)] {
        points.push(PointRecord {
            point_id: format!("host/-/cpu/t1/r{repeat}"),
            target: "host".into(),
            config: "-".into(),
            workload: "cpu".into(),
            threads: 1,
            repeat,
            status: PointStatus::Ok,
            tps: host_eps * k,
            lat_p95_ms: 1.0,
            ..PointRecord::default()
        });
    }
    let mut w = csv::Writer::from_path(&path).unwrap();
    for p in points {
        w.serialize(p).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn a_slower_host_is_said_and_not_counted_as_a_worse_server() {
    let d = tempfile::tempdir().unwrap();
    let wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99];
    for (i, w) in wobble.iter().enumerate() {
        write_run_with_host(
            d.path(),
            &format!("202611{:02}T020000Z", i + 1),
            1000.0 * w,
            8000.0 * w,
        );
    }
    write_run_with_host(d.path(), "20261109T020000Z", 1000.0, 5000.0);
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(!o.newest_regressed, "{}", o.text);
    let line = o
        .text
        .lines()
        .find(|l| l.starts_with("host/-/cpu/t1 tps"))
        .unwrap();
    assert!(
        line.ends_with("regressed: the machine (not counted)"),
        "{}",
        o.text
    );
    assert!(o.text.contains("regressed at 0 of"), "{}", o.text);
    assert!(
        o.text.contains(
            "warning: the host's own tests regressed in the newest run (host/-/cpu/t1 tps)"
        ),
        "{}",
        o.text
    );
}

#[test]
fn a_slower_newest_run_at_one_thread_count_fires() {
    let d = tempfile::tempdir().unwrap();
    // Eight steady nights (±1 %), then 22 % slower at 1 thread only; 8 threads steady.
    let wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99];
    for (i, w) in wobble.iter().enumerate() {
        write_run(
            d.path(),
            &format!("202611{:02}T020000Z", i + 1),
            1000.0 * w,
            5000.0 * w,
        );
    }
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(!o.newest_regressed, "{}", o.text);
    write_run(d.path(), "20261109T020000Z", 780.0, 5000.0);
    let page = d.path().join("h.html");
    let o = history(d.path(), 10.0, Some(&page)).unwrap();
    assert!(o.newest_regressed, "{}", o.text);
    let line = |p: &str| {
        o.text
            .lines()
            .find(|l| l.starts_with(p))
            .unwrap()
            .to_string()
    };
    assert!(
        line("local/default/oltp_point_select/t1 tps").ends_with("regressed"),
        "{}",
        o.text
    );
    assert!(
        line("local/default/oltp_point_select/t8 tps").ends_with("unchanged"),
        "{}",
        o.text
    );
    assert!(o.text.contains("regressed at 1 of 4 series"), "{}", o.text);
    let html = std::fs::read_to_string(page).unwrap();
    let chart = html.split("<pre>").next().unwrap();
    assert!(
        chart.contains("<svg") && chart.contains("11-0"),
        "dates on the axis"
    );
}

#[test]
fn a_step_in_the_middle_is_a_shift_and_the_newest_is_judged_after_it() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..16 {
        let level = if i < 8 { 1000.0 } else { 800.0 };
        let w = [1.0, 1.01, 0.99, 1.005][i % 4];
        write_run(
            d.path(),
            &format!("202611{:02}T020000Z", i + 1),
            level * w,
            5000.0 * w,
        );
    }
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(
        o.text.contains("t1 tps: from run 20261109T020000Z"),
        "{}",
        o.text
    );
    // The newest run is in line with the runs since the shift: nothing fires.
    assert!(!o.newest_regressed, "{}", o.text);
}

/// A paired night: verdicts.json with the candidate's ratio to the control at 4 threads.
fn write_paired(root: &Path, id: &str, ratio: f64) {
    write_run(root, id, 1000.0, 5000.0);
    let v = serde_json::json!({
        "design": "paired", "method": "", "baseline": "local/control",
        "threshold_pct": 5.0, "alpha": 0.05, "slice_s": 2, "budget_s": null,
        "points": [{
            "workload": "oltp_point_select", "threads": 4, "rounds": 10, "looks": [10],
            "stopped": "rounds", "seconds": 40.0, "orders": [],
            "comparisons": [{
                "series": "local/candidate", "verdict": "unchanged", "budget_needed_s": null,
                "metrics": [
                    {"metric": "tps", "verdict": "unchanged", "judged": true, "rounds": 10,
                     "delta_pct": (ratio - 1.0) * 100.0, "note": ""},
                    {"metric": "p95", "verdict": "unchanged", "judged": true, "rounds": 10,
                     "delta_pct": (1.0 / ratio - 1.0) * 100.0, "note": ""}
                ]
            }]
        }]
    });
    std::fs::write(root.join(id).join("verdicts.json"), v.to_string()).unwrap();
}

#[test]
fn a_paired_nightly_follows_the_candidates_ratio_to_its_control() {
    let d = tempfile::tempdir().unwrap();
    let wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99];
    for (i, w) in wobble.iter().enumerate() {
        write_paired(d.path(), &format!("202611{:02}T020000Z", i + 1), 0.95 * w);
    }
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(!o.newest_regressed, "{}", o.text);
    let name = "local/candidate ÷ local/control/oltp_point_select/t4 tps/control";
    assert!(o.text.contains(name), "{}", o.text);
    // The candidate falls 20 % behind its control on the newest night: that fires, while
    // the raw figures of the night are as before.
    write_paired(d.path(), "20261109T020000Z", 0.95 * 0.8);
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(o.newest_regressed, "{}", o.text);
    let line = o.text.lines().find(|l| l.starts_with(name)).unwrap();
    assert!(line.ends_with("regressed"), "{}", o.text);
    let p95 = "local/candidate ÷ local/control/oltp_point_select/t4 p95/control";
    let line = o.text.lines().find(|l| l.starts_with(p95)).unwrap();
    assert!(line.ends_with("regressed"), "{}", o.text);
}

#[test]
fn a_bad_earlier_run_is_left_out_and_an_empty_newest_run_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    for i in 1..=5 {
        write_run(d.path(), &format!("202611{i:02}T020000Z"), 1000.0, 5000.0);
    }
    std::fs::write(d.path().join("20261103T020000Z/points.csv"), "garbage\n").unwrap();
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(
        o.text
            .starts_with("warning: run 20261103T020000Z left out: "),
        "{}",
        o.text
    );
    assert!(!o.newest_regressed);
    // The newest run cut inside its header: an error, not "regressed at 0 of 1 series".
    std::fs::write(
        d.path().join("20261105T020000Z/points.csv"),
        "run_id,point_",
    )
    .unwrap();
    let e = history(d.path(), 10.0, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("the newest run"), "{e}");
    // A newest run whose points all failed has nothing to judge.
    write_run(d.path(), "20261106T020000Z", 1000.0, 5000.0);
    let p = d.path().join("20261106T020000Z/points.csv");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace(",ok,", ",failed,");
    std::fs::write(&p, text).unwrap();
    let e = history(d.path(), 10.0, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("has no ok point"), "{e}");
}

/// A paired nightly is judged from its second night (#32): with one earlier night, the
/// newest ratio to the control is read against the two nights' paired intervals; a steady
/// ratio is not worse, a ratio 30 % lower is, while the raw series wait for three nights.
#[test]
fn a_paired_nightly_is_judged_from_the_second_night() {
    let with_se = |root: &Path, id: &str, ratio: f64| {
        write_paired(root, id, ratio);
        let p = root.join(id).join("verdicts.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let m = &mut v["points"][0]["comparisons"][0]["metrics"][0];
        m["se_log"] = serde_json::json!(0.01);
        m["lo_pct"] = serde_json::json!((ratio * 0.98 - 1.0) * 100.0);
        m["hi_pct"] = serde_json::json!((ratio * 1.02 - 1.0) * 100.0);
        m["confidence"] = serde_json::json!(0.95);
        std::fs::write(&p, v.to_string()).unwrap();
    };
    let d = tempfile::tempdir().unwrap();
    with_se(d.path(), "20261101T020000Z", 0.95);
    with_se(d.path(), "20261102T020000Z", 0.955);
    let o = history(d.path(), 5.0, None).unwrap();
    let name = "local/candidate ÷ local/control/oltp_point_select/t4 tps/control";
    let line = o.text.lines().find(|l| l.starts_with(name)).unwrap();
    assert!(line.ends_with("unchanged"), "{}", o.text);
    assert!(!o.newest_regressed, "{}", o.text);
    assert!(o
        .text
        .contains("judged against the earlier runs' own paired intervals"));
    let raw = "local/default/oltp_point_select/t1 tps";
    let line = o.text.lines().find(|l| l.starts_with(raw)).unwrap();
    assert!(line.ends_with("needs 3 earlier runs"), "{}", o.text);

    with_se(d.path(), "20261103T020000Z", 0.95 * 0.7);
    let o = history(d.path(), 5.0, None).unwrap();
    let line = o.text.lines().find(|l| l.starts_with(name)).unwrap();
    assert!(line.ends_with("regressed"), "{}", o.text);
    assert!(o.newest_regressed, "{}", o.text);
}

/// A run that was killed or interrupted is never a baseline: left out with why, as the gate
/// leaves it out.
#[test]
fn an_unfinished_earlier_run_is_left_out_and_said() {
    let d = tempfile::tempdir().unwrap();
    for i in 1..=4 {
        write_run(d.path(), &format!("202611{i:02}T020000Z"), 1000.0, 5000.0);
    }
    // Night 2 was killed (no end in its manifest), night 3 interrupted.
    std::fs::write(
        d.path().join("20261102T020000Z/manifest.json"),
        r#"{"run_id": "20261102T020000Z"}"#,
    )
    .unwrap();
    std::fs::write(
        d.path().join("20261103T020000Z/manifest.json"),
        r#"{"run_id": "20261103T020000Z", "ended_at": "2026-11-03T02:10:00Z", "summary": {"ok": 1, "failed": 0, "skipped": 0, "not_run": 2, "interrupted": true}}"#,
    )
    .unwrap();
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(
        o.text.contains(
            "warning: run 20261102T020000Z left out: it never ended (killed, or the machine went down)"
        ),
        "{}",
        o.text
    );
    assert!(
        o.text
            .contains("warning: run 20261103T020000Z left out: it was interrupted"),
        "{}",
        o.text
    );
    // Two runs count: too few earlier ones to judge the newest.
    let line = o
        .text
        .lines()
        .find(|l| l.starts_with("local/default/oltp_point_select/t1 tps"))
        .unwrap();
    assert!(line.ends_with("needs 3 earlier runs"), "{}", o.text);
}

/// A gated newest run is said as its gate judged it: the gate's verdict on its ratio to the
/// control, its outcome as history's (a failed gate fails history; accepted since, it does
/// not), the other series by their trend and not counted; every run's outcome listed; the
/// columns aligned however long a name is.
#[test]
fn a_gated_newest_run_is_judged_by_its_gate_and_its_columns_align() {
    let d = tempfile::tempdir().unwrap();
    for i in 1..=4 {
        write_paired(d.path(), &format!("202611{i:02}T020000Z"), 0.95);
    }
    let newest = d.path().join("20261104T020000Z");
    std::fs::write(
        d.path().join("20261103T020000Z/gate.json"),
        r#"{"kind": "control", "compared": "x", "passed": false}"#,
    )
    .unwrap();
    let gate = serde_json::json!({
        "kind": "control", "flag": "--fail-on-regression", "threshold_pct": 5.0,
        "compared": "the last finished run that passed the gate or was accepted, 20261102T020000Z",
        "passed": false,
        "control": {"control": "local/control", "threshold_pct": 5.0, "pooled": [], "points": [{
            "series": "local/candidate", "workload": "oltp_point_select", "threads": 4,
            "before": 0.95, "now": 0.95, "delta_pct": -21.0, "lo_pct": -30.0, "hi_pct": -12.0,
            "verdict": "regressed"
        }]}
    });
    std::fs::write(newest.join("gate.json"), gate.to_string()).unwrap();
    let o = history(d.path(), 10.0, None).unwrap();
    // The trend of an unchanged ratio would pass; the gate failed: history fails.
    assert!(o.newest_regressed, "{}", o.text);
    let name = "local/candidate ÷ local/control/oltp_point_select/t4 tps/control";
    let line = o.text.lines().find(|l| l.starts_with(name)).unwrap();
    assert!(
        line.contains("-21.0%") && line.ends_with("regressed"),
        "{}",
        o.text
    );
    let raw = o
        .text
        .lines()
        .find(|l| l.starts_with("local/default/oltp_point_select/t1 tps"))
        .unwrap();
    assert!(raw.ends_with("(trend)"), "{}", o.text);
    for (id, said) in [
        ("20261101T020000Z", "not gated"),
        ("20261103T020000Z", "FAILED"),
        ("20261104T020000Z", "FAILED"),
    ] {
        assert!(
            o.text
                .lines()
                .any(|l| l.starts_with(&format!("  {id}")) && l.contains(said)),
            "{id}: {}",
            o.text
        );
    }
    assert!(o.text.contains(
        "as its gate judged it (--fail-on-regression, threshold ±5 %, p95 and p99 ±10 %): FAILED, failing since run 20261103T020000Z (2026-11-03 02:00), 2 runs in a row"
    ), "{}", o.text);
    // Every row's runs column ends where the header's does.
    let header = o.text.lines().find(|l| l.starts_with("point ")).unwrap();
    let col = |l: &str| l.find(" runs").map(|i| i + 5).unwrap();
    let at = col(header);
    for l in o.text.lines().filter(|l| l.starts_with("local/")) {
        let runs_end = l.chars().take(at).collect::<String>();
        assert!(runs_end.ends_with(" 4"), "{l:?} in\n{}", o.text);
    }
    // Accepted since: not failing any more, and said.
    std::fs::write(
        newest.join(crate::pipeline::results::nightly::ACCEPTED),
        "{}",
    )
    .unwrap();
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(!o.newest_regressed, "{}", o.text);
    assert!(o.text.contains("; accepted since"), "{}", o.text);
}

/// A newest run that did not end is judged by nobody (its gate never ran): no verdict, no
/// failure, and why.
#[test]
fn an_unfinished_newest_run_is_not_judged() {
    let d = tempfile::tempdir().unwrap();
    for (i, tps) in [(1, 1000.0), (2, 1000.0), (3, 1000.0), (4, 500.0)] {
        write_run(d.path(), &format!("202611{i:02}T020000Z"), tps, 5000.0);
    }
    assert!(history(d.path(), 10.0, None).unwrap().newest_regressed);
    std::fs::write(
        d.path().join("20261104T020000Z/manifest.json"),
        r#"{"run_id": "20261104T020000Z"}"#,
    )
    .unwrap();
    let o = history(d.path(), 10.0, None).unwrap();
    assert!(!o.newest_regressed, "{}", o.text);
    assert!(o.text.contains(
        "newest run 20261104T020000Z: not judged: it never ended (killed, or the machine went down)"
    ), "{}", o.text);
    assert!(!o.text.contains("regressed\n"), "{}", o.text);
}
