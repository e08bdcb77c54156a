//! The scaling curve on a real server: `threads = "auto"` against the fixed 1…256 list on the
//! same throwaway MariaDB (fewer thread counts, a peak within one doubling of the list's),
//! the search capped by what the server can take, and the USL model in
//! `report --format json`.

mod common;
use common::text;
use std::path::Path;
use sweepbench::pipeline::results::{load_points, PointStatus};
use sweepbench::pipeline::server::{ManagedServer, ServerSpec};
use sweepbench::pipeline::sweep::latest_run;

fn sweep(results: &Path, name: &str, threads: &str, port: u16) -> std::path::PathBuf {
    let dir = results.parent().unwrap();
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(
        &f,
        format!(
            "name = \"{name}\"\n[data]\ntables = 2\ntable_size = 5000\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = {threads}\nduration = \"2s\"\nwarmup = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"db\"\nurl = \"mysql://root@127.0.0.1:{port}/scaling\"\n"
        ),
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {}", text(&out));
    latest_run(results, name).unwrap()
}

/// The best (threads, tps) of a run, and its distinct thread counts.
fn peak(run: &Path) -> ((u32, f64), Vec<u32>) {
    let pts = load_points(run).unwrap();
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

/// The two tests measure: one at a time, or each loads the other's server.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn auto_threads_search_within_the_ceiling_resume_and_report_a_model() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // max_connections 300: the list's 256 threads fit; the search (to = 1024) runs with
    // what the server can take as its ceiling instead of being refused.
    let s = ManagedServer::start(&ServerSpec {
        max_connections: 300,
        ..ServerSpec::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let fixed = sweep(
        &results,
        "fixed",
        "[1, 2, 4, 8, 16, 32, 64, 128, 256]",
        s.port(),
    );
    let auto = sweep(&results, "auto", "\"auto\"", s.port());
    let ((fixed_at, _), fixed_counts) = peak(&fixed);
    let ((auto_at, _), auto_counts) = peak(&auto);
    println!("list: peak at {fixed_at}; auto: peak at {auto_at}, measured {auto_counts:?}");
    assert_eq!(fixed_counts.len(), 9);
    // How many counts auto visits and how near the list's peak it lands depend on this
    // machine's noise (a shared VM moves a point by tens of percent), so they are printed,
    // not asserted; the search's bookkeeping is: every count within the server's ceiling
    // (300 connections less the sweep's margin), and the peak it reports is the best of what
    // it measured.
    let pts = load_points(&fixed).unwrap();
    let best = pts.iter().map(|p| p.tps).fold(0.0, f64::max);
    let top: Vec<u32> = pts
        .iter()
        .filter(|p| p.tps >= 0.95 * best)
        .map(|p| p.threads)
        .collect();
    println!(
        "list's top (within 5 %): {top:?}; auto: {} counts",
        auto_counts.len()
    );
    assert!(
        auto_counts.iter().all(|&t| (1..=300).contains(&t)),
        "{auto_counts:?}"
    );
    assert!(auto_counts.contains(&auto_at), "{auto_counts:?}");
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(auto.join("adaptive.json")).unwrap()).unwrap();
    let series = &log["db/default/oltp_read_only"];
    assert_eq!(
        series["threads"].as_array().unwrap().len(),
        auto_counts.len(),
        "{log}"
    );
    assert!(
        series["stopped"].as_str().unwrap().contains("peak at"),
        "{log}"
    );
    // The peak the search names is one of the counts it measured.
    let stopped = series["stopped"].as_str().unwrap();
    let named: u32 = stopped
        .split("peak at ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {stopped}"));
    assert!(auto_counts.contains(&named), "{stopped}: {auto_counts:?}");

    // Resumable: cut the run after its first two points (as a kill would leave it); the
    // resumed run measures the rest without measuring those again.
    let csv = std::fs::read_to_string(auto.join("points.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    std::fs::write(auto.join("points.csv"), lines[..3].join("\n") + "\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args([
            "run",
            dir.path().join("auto.toml").to_str().unwrap(),
            "--resume",
        ])
        .arg(&auto)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("2 point(s) done"), "{}", text(&out));
    let again = load_points(&auto).unwrap();
    let mut ids: Vec<&str> = again.iter().map(|p| p.point_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), again.len(), "a point measured twice: {ids:?}");
    assert!(again.len() >= 3, "{ids:?}");
    let ((_, _), resumed_counts) = peak(&auto);
    println!("resumed: measured {resumed_counts:?}");

    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["report", auto.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["workloads"][0]["scaling"][0];
    assert_eq!(m["series"], "db/default", "{m}");
    for k in ["sigma", "kappa", "lambda", "r2"] {
        assert!(m[k].is_f64(), "{k}: {m}");
    }
    assert!(
        m.get("peak_threads").is_some() && m.get("peak_tps").is_some(),
        "{m}"
    );
    assert!(m["measured_peak_threads"].as_u64().unwrap() >= 1, "{m}");
    // Every point is fitted or listed as left out (client-bound ones, on a small machine).
    let used = m["points"].as_u64().unwrap() as usize;
    assert_eq!(
        used + m["left_out"].as_array().unwrap().len(),
        again.len(),
        "{m}"
    );
    // No SVG in the JSON; the HTML has the fitted curve (dashed) and the hockey stick.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("<svg"));
    let html = std::fs::read_to_string(auto.join("report.html")).unwrap();
    assert!(html.contains("Scaling model (USL)"));
    assert!(html.contains("p99 latency against throughput"));
    // The fitted curve: dashes, thin and translucent, in the series' colour.
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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let f = dir.path().join("sla.toml");
    std::fs::write(
        &f,
        "name = \"sla\"\n[data]\ntables = 2\ntable_size = 5000\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 2, 4]\nduration = \"3s\"\nwarmup = \"1s\"\nrepeats = 1\nrates = \"auto\"\nsla = { p99_ms = 5 }\n[[targets]]\nname = \"local\"\nserver = {}\n",
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let run = latest_run(&results, "sla").unwrap();
    let pts = load_points(&run).unwrap();
    let rate_points: Vec<_> = pts.iter().filter(|p| p.rate > 0).collect();
    assert!(!rate_points.is_empty(), "no rate was tried");
    // The first rate tried is the closed-loop peak.
    let peak = pts
        .iter()
        .filter(|p| p.rate == 0)
        .map(|p| p.tps)
        .fold(0.0, f64::max);
    assert_eq!(rate_points[0].rate, peak.round() as u64);
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["report", run.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["workloads"][0]["scaling"][0];
    let sla = &m["sla"];
    println!("{sla}");
    assert_eq!(sla["p99_limit_ms"], 5.0);
    let at = |rate: u64| {
        pts.iter()
            .find(|p| p.rate == rate)
            .unwrap_or_else(|| panic!("no point at {rate}/s"))
    };
    // Whether any rate meets p99 ≤ 5 ms is this machine's business (a loaded VM may miss it
    // at every rate); what the search reports of what it measured is asserted either way.
    let Some(cap) = sla["rate"].as_u64() else {
        assert!(
            rate_points
                .iter()
                .all(|p| !sweepbench::pipeline::scaling::meets_sla(p, 5.0)),
            "no capacity reported, yet a rate met the SLA: {rate_points:?}"
        );
        println!("no rate met p99 ≤ 5 ms on this machine this time");
        return;
    };
    let p = at(cap);
    assert!(p.lat_p99_ms.unwrap() <= 5.0, "{p:?}");
    assert!(sweepbench::pipeline::scaling::meets_sla(p, 5.0));
    let next = sla["next_rate"]
        .as_u64()
        .expect("open loop at the peak misses any SLA");
    assert!(next > cap);
    assert!(!sweepbench::pipeline::scaling::meets_sla(at(next), 5.0));
    // Nothing measured between them met it: the capacity is the highest rate that did.
    assert!(rate_points
        .iter()
        .filter(|p| p.rate > cap)
        .all(|p| !sweepbench::pipeline::scaling::meets_sla(p, 5.0)));
    // The rate points are not rows of the closed-loop table.
    let rows: Vec<u64> = j["workloads"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, [1, 2, 4]);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("capacity at p99 ≤ 5 ms"), "{md}");
}

/// An SLA step far above what its threads can serve overflows the arrival queue (sysbench's
/// FATAL): the search takes it as a miss and the sweep does not fail for it.
#[test]
fn an_sla_step_that_overflows_the_arrival_queue_is_a_miss_not_a_failed_sweep() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let f = dir.path().join("slaq.toml");
    // The peak is measured at 16 threads; the first step asks one thread for it for 12 s,
    // so arrivals pile up far beyond the 131,072 the queue holds.
    std::fs::write(
        &f,
        "name = \"slaq\"\n[data]\ntables = 1\ntable_size = 10000\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [16]\nduration = \"12s\"\nwarmup = \"1s\"\nrepeats = 1\nrates = \"auto\"\nsla = { p99_ms = 1000, threads = 1, max_steps = 2 }\n[[targets]]\nname = \"local\"\nserver = {}\n",
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["run", f.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let pts = load_points(&latest_run(&results, "slaq").unwrap()).unwrap();
    let first = pts.iter().find(|p| p.rate > 0).expect("an SLA step ran");
    assert_eq!(first.status, PointStatus::Failed, "{first:?}");
    assert!(first.error.contains("event queue is full"), "{first:?}");
    assert!(!sweepbench::pipeline::scaling::meets_sla(first, 1000.0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains(" 0 failed ("), "{s}");
    assert!(
        s.contains("SLA step(s) overloaded the server: misses, not failures"),
        "{s}"
    );
}
