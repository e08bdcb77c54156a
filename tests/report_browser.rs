//! The HTML report in a real browser: headless Chromium loads report.html and the test
//! asserts on the rendered DOM (tables and charts present, no script errors); the documented
//! screenshot script writes a PNG.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn chromium() -> PathBuf {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
    .expect(
        "headless Chromium is needed for this test: apt-get install chromium (.ci/run installs it)",
    )
}

/// The DOM headless Chromium builds from a page, and what it logged.
fn dump_dom(page: &Path) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "chromium failed: {log}");
    (String::from_utf8_lossy(&out.stdout).to_string(), log)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The documented screenshot script on a run directory; it must succeed.
fn screenshot(run: &Path, png: &Path) {
    let out = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/screenshot-report.sh"),
    )
    .arg(run)
    .arg(png)
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs sweepbench with these arguments and insists that it succeeds.
fn sweepbench_ok(args: &[&std::ffi::OsStr]) {
    let out = Command::cargo_bin("sweepbench")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn imported_run(dir: &Path) -> PathBuf {
    let out = dir.join("imported");
    let logs = [
        "sysbench-1.0-full.log",
        "sysbench-0.5.log",
        "sysbench-0.4.log",
    ]
    .map(|l| fixtures().join(l));
    let mut args = vec!["import".as_ref()];
    args.extend(logs.iter().map(|l| l.as_os_str()));
    args.extend([
        "--out".as_ref(),
        out.as_os_str(),
        "--target".as_ref(),
        "legacy".as_ref(),
    ]);
    sweepbench_ok(&args);
    out
}

#[test]
fn report_html_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let (dom, log) = dump_dom(&run.join("report.html"));
    assert!(dom.contains("<h1>imported"), "{dom}");
    for class in ["tps", "latency", "peaks"] {
        assert!(
            dom.contains(&format!("<table class=\"{class}\">")),
            "table {class} missing"
        );
    }
    assert!(dom.matches("<svg").count() >= 2, "charts missing");
    assert!(dom.contains("1242"), "0.5 log's tps shown");
    assert!(
        !log.contains("Uncaught") && !log.contains("CONSOLE"),
        "script errors: {log}"
    );
}

#[test]
fn screenshot_script_writes_a_png() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let png = dir.path().join("shot.png");
    screenshot(&run, &png);
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.len() > 10_000,
        "a real page, not a blank one: {} bytes",
        bytes.len()
    );
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

/// A run directory `name` holding `records` as its points.csv, reported against
/// `old/default`.
fn run_of(
    dir: &Path,
    name: &str,
    records: &[sweepbench::pipeline::results::PointRecord],
) -> PathBuf {
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    let mut w = csv::Writer::from_path(run.join("points.csv")).unwrap();
    for r in records {
        w.serialize(r).unwrap();
    }
    w.flush().unwrap();
    sweepbench_ok(&[
        "report".as_ref(),
        run.as_os_str(),
        "--baseline".as_ref(),
        "old/default".as_ref(),
    ]);
    run
}

/// One ok point of oltp_read_only with these figures (p95 and p99 from the average).
fn ok_point(
    target: &str,
    threads: u32,
    repeat: u32,
    tps: f64,
    avg_ms: f64,
    tail: (f64, f64),
) -> sweepbench::pipeline::results::PointRecord {
    sweepbench::pipeline::results::PointRecord {
        point_id: format!("{target}/default/oltp_read_only/t{threads}/r{repeat}"),
        target: target.into(),
        config: "default".into(),
        workload: "oltp_read_only".into(),
        threads,
        repeat,
        status: sweepbench::pipeline::results::PointStatus::Ok,
        transactions: 20_000,
        tps,
        qps: tps * 16.0,
        lat_avg_ms: avg_ms,
        lat_p95_ms: avg_ms * tail.0,
        lat_p99_ms: Some(avg_ms * tail.1),
        ..Default::default()
    }
}

/// A run directory with two series, three repeats each: `new` is 25 % slower at 8 threads
/// and the same at 1 and 2.
fn two_series_run(dir: &Path) -> PathBuf {
    let mut recs = Vec::new();
    for (target, slow) in [("old", 1.0), ("new", 0.75)] {
        for threads in [1u32, 2, 8] {
            for repeat in 1..=3u32 {
                let wobble = [1.0, 1.01, 0.99][repeat as usize - 1];
                let k = if threads == 8 { slow } else { 1.0 };
                let tps = 100.0 * threads as f64 * k * wobble;
                // p95 = 20 / k / wobble and p99 = 30 / k / wobble, around an average of 10 / k.
                recs.push(ok_point(
                    target,
                    threads,
                    repeat,
                    tps,
                    10.0 / k,
                    (2.0 / wobble, 3.0 / wobble),
                ));
            }
        }
    }
    run_of(dir, "two", &recs)
}

#[test]
fn a_compared_report_shows_verdicts_bands_peaks_and_a_headline() {
    let dir = tempfile::tempdir().unwrap();
    let run = two_series_run(dir.path());
    let (dom, _) = dump_dom(&run.join("report.html"));
    // The headline: one compared series, one verdict per thread count.
    assert!(
        dom.contains("new/default vs old/default: regressed at 1/3 points, unchanged at 2"),
        "{dom}"
    );
    assert!(dom.contains("class=\"headline has-regressed\""), "{dom}");
    // Cells carry their verdict and interval.
    assert_eq!(
        dom.matches("<td class=\"regressed\"").count(),
        2,
        "tps and p95 at 8 threads"
    );
    assert!(
        dom.contains("<span class=\"verdict\">unchanged</span>"),
        "{dom}"
    );
    assert!(dom.contains("<span class=\"ci\">[−"), "{dom}");
    // The throughput chart: a band per series behind its line, and its peak marked.
    let chart = dom
        .split("<svg")
        .find(|s| s.contains("oltp_read_only: throughput"))
        .expect("throughput chart");
    assert_eq!(chart.matches("<polygon").count(), 2, "one band per series");
    assert_eq!(
        chart.matches("peak 8").count(),
        2,
        "each series' peak labelled"
    );

    // And as a person sees it.
    let png = dir.path().join("two.png");
    screenshot(&run, &png);
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}

/// A run directory with two series on USL curves, three repeats of ten thread counts: `new`
/// has three times the contention (σ 0.03 → 0.09).
fn usl_run(dir: &Path) -> PathBuf {
    let mut recs = Vec::new();
    for (target, sigma) in [("old", 0.03), ("new", 0.09)] {
        for threads in [1u32, 2, 4, 8, 12, 16, 24, 32, 48, 64] {
            for repeat in 1..=3u32 {
                let wobble = [1.0, 1.015, 0.985][repeat as usize - 1];
                let n = threads as f64;
                let tps = 1000.0 * n / (1.0 + sigma * (n - 1.0) + 0.0004 * n * (n - 1.0)) * wobble;
                // Little's law for the average, and a tail.
                recs.push(ok_point(
                    target,
                    threads,
                    repeat,
                    tps,
                    n / tps * 1e3,
                    (1.8, 2.5),
                ));
            }
        }
    }
    run_of(dir, "usl", &recs)
}

/// The scaling model in a browser: its table for both series, the comparison of their
/// coefficients, and three charts (throughput with the fitted curve and its knee, p95, and
/// p99 against throughput); a screenshot of it is a real page.
#[test]
fn the_scaling_model_renders_with_its_curve_knee_and_hockey_stick() {
    let dir = tempfile::tempdir().unwrap();
    let run = usl_run(dir.path());
    let (dom, log) = dump_dom(&run.join("report.html"));
    assert!(dom.contains("<table class=\"scaling\">"), "{dom}");
    assert!(
        dom.contains("new/default vs old/default (oltp_read_only): σ 0.03")
            && dom.contains("(more contention)"),
        "{dom}"
    );
    assert_eq!(dom.matches("<svg").count(), 3, "three charts");
    assert!(dom.contains("p99 latency against throughput"), "{dom}");
    // The fitted curve's knee (a square) on the throughput chart and the latency knee on the
    // hockey stick, for each series.
    assert!(
        dom.matches("\nknee ").count() >= 4,
        "knees labelled on the charts"
    );
    assert!(!dom.contains("poor fit"), "a USL curve fits: {dom}");
    assert!(!log.contains("Uncaught"), "{log}");
    let png = dir.path().join("scaling.png");
    screenshot(&run, &png);
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
    if let Ok(keep) = std::env::var("SWEEPBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}
