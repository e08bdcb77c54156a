//! The scaling curve's searches on a synthetic target whose curve is known (USL λ = 400,
//! σ = 0.05, κ = 0.0005: the peak at N* = √((1 − σ)/κ) ≈ 44 threads): `threads = "auto"`
//! against the fixed 1…256 list, the search capped by what the target can take, `--resume`,
//! the USL model in `report --format json`, and `rates = "auto"` with a p99 SLA. No server
//! and virtual time, so the assertions are the model's truth, not this machine's mood.

mod common;
use common::text;
use std::path::Path;
use sweepbench::pipeline::results::{load_points, PointRecord, PointStatus};
use sweepbench::pipeline::sweep::latest_run;

const MODEL: &str =
    "synthetic = { seed = 3, lambda = 400, sigma = 0.05, kappa = 0.0005, noise = 0.01 }";

fn sweep_file(dir: &Path, name: &str, run: &str, model: &str) -> std::path::PathBuf {
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(
        &f,
        format!("name = \"{name}\"\n[run]\nworkloads = [\"oltp_read_only\"]\nduration = \"10s\"\nwarmup = \"1s\"\nrepeats = 1\n{run}\n[[targets]]\nname = \"db\"\n{model}\n"),
    )
    .unwrap();
    f
}

fn run(f: &Path, results: &Path, extra: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(results)
        .args(extra)
        .output()
        .unwrap()
}

/// The best (threads, tps) of a run, and its distinct thread counts.
fn peak(pts: &[PointRecord]) -> ((u32, f64), Vec<u32>) {
    assert!(pts.iter().all(|p| p.status == PointStatus::Ok), "{pts:?}");
    let best = pts
        .iter()
        .max_by(|a, b| a.tps.total_cmp(&b.tps))
        .map(|p| (p.threads, p.tps))
        .unwrap();
    let mut counts: Vec<u32> = pts.iter().map(|p| p.threads).collect();
    counts.sort_unstable();
    counts.dedup();
    (best, counts)
}

#[test]
fn auto_threads_finds_the_models_peak_within_the_ceiling_resumes_and_reports_its_usl() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let fixed = sweep_file(
        dir.path(),
        "fixed",
        "threads = [1, 2, 4, 8, 16, 32, 64, 128, 256]",
        MODEL,
    );
    let out = run(&fixed, &results, &["--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    let fixed_pts = load_points(&latest_run(&results, "fixed").unwrap()).unwrap();
    let ((fixed_at, _), fixed_counts) = peak(&fixed_pts);
    assert_eq!(fixed_counts.len(), 9);
    // X(32) and X(64) are within 1.2 % of each other, either side of N* ≈ 44.
    assert!([32, 64].contains(&fixed_at), "{fixed_at}");

    // The same model taking 150 connections: the list's 256 threads would be refused; the
    // search (to = 1024) runs with 148 threads (150 less the sweep's 2) as its ceiling.
    let capped = MODEL.replace(" }", ", max_connections = 150 }");
    let auto = sweep_file(dir.path(), "auto", "threads = \"auto\"", &capped);
    let out = run(&auto, &results, &[]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("the search stops at 148 threads on db"), "{t}");
    let auto_run = latest_run(&results, "auto").unwrap();
    let auto_pts = load_points(&auto_run).unwrap();
    let ((auto_at, _), auto_counts) = peak(&auto_pts);
    assert!(
        auto_counts.iter().all(|&t| (1..=148).contains(&t)),
        "{auto_counts:?}"
    );
    // Between the list's neighbours of the true peak, with probes the list never made.
    assert!((32..=64).contains(&auto_at), "{auto_at}: {auto_counts:?}");
    assert!(
        auto_counts.iter().any(|t| !fixed_counts.contains(t)),
        "{auto_counts:?}"
    );
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(auto_run.join("adaptive.json")).unwrap()).unwrap();
    let series = &log["db/default/oltp_read_only"];
    assert_eq!(
        series["threads"].as_array().unwrap().len(),
        auto_counts.len(),
        "{log}"
    );
    let stopped = series["stopped"].as_str().unwrap();
    assert!(
        stopped.contains(&format!("peak at {auto_at} threads")),
        "{stopped}"
    );

    // Resumable: cut the run after its first two points (as a kill would leave it); the
    // resumed run measures the rest, none twice, and ends where the whole run ended.
    let csv = std::fs::read_to_string(auto_run.join("points.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    std::fs::write(auto_run.join("points.csv"), lines[..3].join("\n") + "\n").unwrap();
    let out = run(&auto, &results, &["--resume", auto_run.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2 point(s) done"), "{}", text(&out));
    let again = load_points(&auto_run).unwrap();
    let figures = |v: &[PointRecord]| -> Vec<(String, f64)> {
        let mut f: Vec<(String, f64)> = v.iter().map(|p| (p.point_id.clone(), p.tps)).collect();
        f.sort_by(|a, b| a.0.cmp(&b.0));
        f
    };
    assert_eq!(
        figures(&again),
        figures(&auto_pts),
        "the resumed run is the whole run"
    );

    // The USL model of the list's curve recovers the model's coefficients.
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["report"])
        .arg(latest_run(&results, "fixed").unwrap())
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["workloads"][0]["scaling"][0];
    assert_eq!(m["series"], "db/default", "{m}");
    let within = |k: &str, truth: f64, tol: f64| {
        let v = m[k].as_f64().unwrap_or_else(|| panic!("{k}: {m}"));
        assert!(
            (v / truth - 1.0).abs() < tol,
            "{k} = {v}, truth {truth}: {m}"
        );
    };
    within("sigma", 0.05, 0.2);
    within("kappa", 0.0005, 0.2);
    within("lambda", 400.0, 0.05);
    within("peak_threads", 43.6, 0.15);
    assert!(m["r2"].as_f64().unwrap() > 0.99, "{m}");
    assert_eq!(m["points"].as_u64(), Some(9), "no point left out: {m}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("<svg"));
    let html = std::fs::read_to_string(latest_run(&results, "fixed").unwrap().join("report.html"))
        .unwrap();
    assert!(html.contains("Scaling model (USL)"));
    assert!(html.contains("p99 latency against throughput"));
    let dashes = html
        .matches("<polyline fill=\"none\" opacity=\"0.8\" stroke=\"#1F77B4\" stroke-width=\"1\"")
        .count();
    assert!(dashes >= 10, "{dashes} dashes of the fitted curve");
}

/// `rates = "auto"` with a p99 SLA: after the closed-loop points, a bisection of open-loop
/// rates under the series' peak returns a capacity whose point meets the SLA and whose next
/// step up does not; the rate points stay out of the scaling tables.
#[test]
fn an_sla_search_returns_a_capacity_that_meets_it_and_a_step_above_that_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let f = sweep_file(
        dir.path(),
        "sla",
        "threads = [1, 2, 4]\nrates = \"auto\"\nsla = { p99_ms = 10 }",
        MODEL,
    );
    let out = run(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run_dir = latest_run(&results, "sla").unwrap();
    let pts = load_points(&run_dir).unwrap();
    let rate_points: Vec<_> = pts.iter().filter(|p| p.rate > 0).collect();
    assert!(rate_points.len() >= 3, "{rate_points:?}");
    // The first rate tried is the closed-loop peak.
    let peak = pts
        .iter()
        .filter(|p| p.rate == 0)
        .map(|p| p.tps)
        .fold(0.0, f64::max);
    assert_eq!(rate_points[0].rate, peak.round() as u64);
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["report", run_dir.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sla = &j["workloads"][0]["scaling"][0]["sla"];
    assert_eq!(sla["p99_limit_ms"], 10.0, "{sla}");
    let at = |rate: u64| {
        pts.iter()
            .find(|p| p.rate == rate)
            .unwrap_or_else(|| panic!("no point at {rate}/s"))
    };
    let cap = sla["rate"]
        .as_u64()
        .expect("the model meets p99 ≤ 10 ms below its peak");
    let p = at(cap);
    assert!(p.lat_p99_ms.unwrap() <= 10.0, "{p:?}");
    assert!(sweepbench::pipeline::judge::scaling::meets_sla(p, 10.0));
    let next = sla["next_rate"]
        .as_u64()
        .expect("open loop at the peak misses the SLA");
    assert!(next > cap);
    assert!(!sweepbench::pipeline::judge::scaling::meets_sla(
        at(next),
        10.0
    ));
    assert!(rate_points
        .iter()
        .filter(|p| p.rate > cap)
        .all(|p| !sweepbench::pipeline::judge::scaling::meets_sla(p, 10.0)));
    // The rate points are not rows of the closed-loop table.
    let rows: Vec<u64> = j["workloads"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, [1, 2, 4]);
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(md.contains("capacity at p99 ≤ 10 ms"), "{md}");
}

/// An SLA step far above what its threads can serve overflows the arrival queue (sysbench's
/// FATAL): the search takes it as a miss and the sweep does not fail for it.
#[test]
fn an_sla_step_that_overflows_the_arrival_queue_is_a_miss_not_a_failed_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // The peak is measured at 16 threads; the first step asks one thread for it.
    let f = sweep_file(
        dir.path(),
        "slaq",
        "threads = [16]\nrates = \"auto\"\nsla = { p99_ms = 1000, threads = 1, max_steps = 2 }",
        MODEL,
    );
    let out = run(&f, &results, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let pts = load_points(&latest_run(&results, "slaq").unwrap()).unwrap();
    let first = pts.iter().find(|p| p.rate > 0).expect("an SLA step ran");
    assert_eq!(first.status, PointStatus::Failed, "{first:?}");
    assert!(first.error.contains("event queue is full"), "{first:?}");
    assert!(!sweepbench::pipeline::judge::scaling::meets_sla(
        first, 1000.0
    ));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains(" 0 failed ("), "{s}");
    assert!(
        s.contains("SLA step(s) overloaded the server: misses, not failures"),
        "{s}"
    );
}
