//! Sharded sweeps: `run --shard 1/2` and `--shard 2/2` of a two-target sweep measure
//! disjoint parts whose union is the unsharded plan, and `merge` joins them into one run with
//! the unsharded run's points and one report; parts of another sweep, a missing part and a
//! repeated one are refused, leaving nothing behind. On synthetic targets: their figures do
//! not depend on which process measured them, so the merged run equals the unsharded one.

mod common;
use common::sweeps::{run_sweep, sweepbench};
use common::text;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use sweepbench::pipeline::results::{load_points, PointStatus};
use sweepbench::pipeline::sweep::latest_run;

const SWEEP: &str = "name = \"sh\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 1 }\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 2 }\n";

/// Runs `file` (with `extra` arguments) into `results` and returns the new run directory.
fn run(file: &Path, results: &Path, extra: &[&str]) -> PathBuf {
    let out = run_sweep(file, results, extra);
    assert!(out.status.success(), "{extra:?}: {}", text(&out));
    let run = latest_run(results, "sh").unwrap();
    std::fs::canonicalize(run).unwrap()
}

fn ids(run: &Path) -> BTreeSet<String> {
    let pts = load_points(run).unwrap();
    assert!(pts.iter().all(|p| p.status == PointStatus::Ok), "{pts:?}");
    pts.into_iter().map(|p| p.point_id).collect()
}

#[test]
fn two_shards_merged_equal_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("sh.toml");
    std::fs::write(&f, SWEEP).unwrap();
    let results = dir.path().join("results");

    let plan = sweepbench(&["plan", f.to_str().unwrap(), "--shard", "2/2"]);
    assert!(plan.status.success(), "{}", text(&plan));
    assert!(
        text(&plan).contains("sweep 'sh': 2 points"),
        "{}",
        text(&plan)
    );
    assert!(text(&plan).contains("b/default/oltp_point_select/t1/r1"));
    assert!(!text(&plan).contains("a/default/"), "{}", text(&plan));
    let bad = sweepbench(&["plan", f.to_str().unwrap(), "--shard", "3/2"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let empty = sweepbench(&["plan", f.to_str().unwrap(), "--shard", "3/3"]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(text(&empty).contains("2 block(s)"), "{}", text(&empty));

    let whole = run(&f, &results, &[]);
    let one = run(&f, &results, &["--shard", "1/2"]);
    let two = run(&f, &results, &["--shard", "2/2"]);
    let (w, a, b) = (ids(&whole), ids(&one), ids(&two));
    assert!(a.is_disjoint(&b), "{a:?} {b:?}");
    assert_eq!(a.union(&b).cloned().collect::<BTreeSet<_>>(), w);
    assert!(a.iter().all(|i| i.starts_with("a/")) && b.iter().all(|i| i.starts_with("b/")));

    // Refusals first, each leaving no directory.
    let out = dir.path().join("merged");
    let o = out.to_str().unwrap();
    let one_s = one.to_str().unwrap();
    let two_s = two.to_str().unwrap();
    for (args, says) in [
        (vec!["merge", one_s, "--out", o], "part 2 of 2 is missing"),
        (
            vec!["merge", one_s, one_s, two_s, "--out", o],
            "given 2 times",
        ),
        (
            vec!["merge", whole.to_str().unwrap(), one_s, "--out", o],
            "not a part of a sharded sweep",
        ),
    ] {
        let r = sweepbench(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}", text(&r));
        assert!(text(&r).contains(says), "{args:?}: {}", text(&r));
        assert!(!out.exists());
    }
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        SWEEP.replace("table_size = 500", "table_size = 600"),
    )
    .unwrap();
    let foreign = run(&other, &results, &["--shard", "2/2"]);
    let r = sweepbench(&["merge", one_s, foreign.to_str().unwrap(), "--out", o]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("different sweep files"), "{}", text(&r));
    assert!(!out.exists());

    // A dangling link and a path ending in '..' are no new directory (#22 N12).
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let up = dir.path().join("newdir").join("..");
    for bad in [&dangling, &up] {
        let r = sweepbench(&["merge", one_s, two_s, "--out", bad.to_str().unwrap()]);
        assert_eq!(r.status.code(), Some(2), "{}", text(&r));
        assert!(
            text(&r).contains("--out") || text(&r).contains("exists"),
            "{}",
            text(&r)
        );
    }
    assert!(!dir.path().join("newdir").exists());
    // A row added to a part afterwards, for a target the sweep does not have (N10).
    let csv = two.join("points.csv");
    let original = std::fs::read(&csv).unwrap();
    let mut pts = load_points(&two).unwrap();
    let mut evil = pts[0].clone();
    evil.target = "zz".into();
    evil.point_id = evil.point_id.replacen("b/", "zz/", 1);
    pts.push(evil);
    let (tampered, _) = sweepbench::pipeline::results::points_and_intervals_csv(&pts, &[]).unwrap();
    std::fs::write(&csv, tampered).unwrap();
    let r = sweepbench(&["merge", one_s, two_s, "--out", o]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("is not one of the sweep's"),
        "{}",
        text(&r)
    );
    std::fs::write(&csv, original).unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".merge-"))
        .collect();
    assert!(left.is_empty(), "a failed merge left {left:?}");

    // Each part's server counters (a synthetic target has none: written here as a server's
    // would be) go into the merged run's status.csv.
    use sweepbench::pipeline::results::cost::{self, CostRow};
    for (part, id) in [
        (&one, "a/default/oltp_point_select/t1/r1"),
        (&two, "b/default/oltp_point_select/t1/r1"),
    ] {
        let row = CostRow {
            point_id: id.into(),
            source: "status".into(),
            counter: "Handler_read_key".into(),
            delta: 10,
            per_txn: Some(1.0),
            per_query: Some(1.0),
        };
        cost::append(part, &[row]).unwrap();
    }
    let r = sweepbench(&["merge", two_s, one_s, "--out", o]);
    assert!(r.status.success(), "{}", text(&r));
    assert_eq!(ids(&out), w);
    let merged: BTreeSet<String> = cost::load(&out)
        .unwrap()
        .into_iter()
        .map(|r| r.point_id)
        .collect();
    assert_eq!(merged.len(), 2, "{merged:?}");
    // The same figures as the unsharded run's, point by point.
    let figures = |run: &Path| -> Vec<(String, f64, f64)> {
        let mut v: Vec<_> = load_points(run)
            .unwrap()
            .into_iter()
            .map(|p| (p.point_id, p.tps, p.lat_p95_ms))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(figures(&out), figures(&whole));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["shards"].as_array().unwrap().len(), 2, "{m}");
    assert_eq!(m["shards"][0]["index"], 1);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("| a/default |") && report.contains("| b/default |"),
        "{report}"
    );
    assert!(report.contains("4 of 4 points ok"), "{report}");
    // Every point's histogram came along.
    let hlogs = std::fs::read_dir(out.join("histograms")).unwrap().count();
    assert_eq!(hlogs, 4);
    // report reads it as any run.
    let again = sweepbench(&["report", o]);
    assert!(again.status.success(), "{}", text(&again));
}
