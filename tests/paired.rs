//! The paired design end to end on managed servers: every series up at once, a slice per
//! series per round in a random order, points.csv with the round as the repeat, verdicts.json
//! with the rounds, looks and orders, and the report's paired section. What the verdicts
//! decide on this machine is measured in docs/statistics.md, not asserted here. The budget's
//! looks are checked on a synthetic target (tests/synthetic.rs has more of the design there).

mod common;
use common::text;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn run(dir: &Path, file: &Path, extra: &[&str]) -> std::process::Output {
    common::run_in(dir, file, extra)
}

fn sweep(dir: &Path, run_extra: &str) -> PathBuf {
    let f = dir.join("aa.toml");
    std::fs::write(
        &f,
        format!("name = \"aa\"\n[data]\ntables = 1\ntable_size = 1000\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 2]\nwarmup = \"1s\"\ndesign = \"paired\"\nslice = \"1s\"\n{run_extra}\n[[targets]]\nname = \"local\"\nserver = {{}}\n[[configs]]\nname = \"a\"\n[[configs]]\nname = \"b\"\n"),
    )
    .unwrap();
    f
}

fn latest(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir.join("results/aa/latest")).unwrap()
}

fn verdicts(run: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("verdicts.json")).unwrap()).unwrap()
}

#[test]
fn a_paired_run_measures_a_slice_per_series_per_round_and_keeps_its_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let f = sweep(
        dir.path(),
        "repeats = 3\ninterleave = \"300ms\"\npin = \"pairs\"",
    );
    let out = run(dir.path(), &f, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("12 ok, 0 failed, 0 skipped of 12 slices"), "{t}");
    assert!(t.contains("(1 s each, in turns of 300 ms)"), "{t}");
    assert!(t.contains("local/b vs local/a point by point: "), "{t}");
    // The sweep-level answer first: pooled over the two thread counts.
    assert!(
        t.contains("local/b is ") || t.contains("local/b against local/a for oltp_point_select"),
        "{t}"
    );
    let run_dir = latest(dir.path());
    // One record per series per round, the round as its repeat.
    let points = std::fs::read_to_string(run_dir.join("points.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(points.as_bytes());
    let head = rdr.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 12);
    for (cfg, threads) in [("a", "1"), ("b", "1"), ("a", "2"), ("b", "2")] {
        let repeats: BTreeSet<&str> = rows
            .iter()
            .filter(|r| &r[col("config")] == cfg && &r[col("threads")] == threads)
            .map(|r| &r[col("repeat")])
            .collect();
        assert_eq!(repeats, BTreeSet::from(["1", "2", "3"]), "{cfg} t{threads}");
    }
    assert!(rows.iter().all(|r| &r[col("status")] == "ok"));
    // A slice is its turns added up: 300 + 300 + 300 + 100 ms, and the events in flight at
    // each turn's end.
    for r in &rows {
        let d: f64 = r[col("duration_s")].parse().unwrap();
        assert!((1.0..3.0).contains(&d), "a 1 s slice measured {d} s");
    }
    let v = verdicts(&run_dir);
    assert_eq!(v["design"], "paired");
    assert_eq!(v["interleave_ms"], 300);
    assert_eq!(v["baseline"], "local/a");
    let cells = v["points"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        assert_eq!(c["rounds"], 3);
        assert_eq!(c["looks"], serde_json::json!([3]));
        // Each worker and its connection's server thread held to one CPU, on both sides.
        let n = c["threads"].as_u64().unwrap();
        let pinned: Vec<&str> = c["pinned"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(pinned.len(), 2, "{c}");
        for (p, key) in pinned.iter().zip(["local/a", "local/b"]) {
            assert!(
                p.starts_with(&format!(
                    "{key}: {n} client/server thread pair(s) pinned over CPU(s) "
                )),
                "{p}"
            );
        }
        // One look, after the third round: decided there, or not.
        assert!(
            ["rounds", "decided"].contains(&c["stopped"].as_str().unwrap()),
            "{c}"
        );
        // Every round measures each series once.
        let orders = c["orders"].as_array().unwrap();
        assert_eq!(orders.len(), 3);
        for o in orders {
            let set: BTreeSet<&str> = o
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            assert_eq!(set, BTreeSet::from(["local/a", "local/b"]));
        }
        let k = &c["comparisons"][0];
        assert_eq!(k["series"], "local/b");
        let tps = &k["metrics"][0];
        assert_eq!(tps["metric"], "tps");
        assert_eq!(tps["rounds"], 3);
        // Δ is the ratio of the geometric means shown beside it.
        let (b, cand, d) = (
            tps["base"].as_f64().unwrap(),
            tps["cand"].as_f64().unwrap(),
            tps["delta_pct"].as_f64().unwrap(),
        );
        assert!(((cand / b - 1.0) * 100.0 - d).abs() < 1e-6, "{tps}");
        // Three rounds at three metrics: each interval at 1 − 5 %/(1 look × 2 metrics).
        assert!(
            (tps["confidence"].as_f64().unwrap() - 0.975).abs() < 1e-9,
            "{tps}"
        );
        assert_eq!(k["metrics"][2]["judged"], false);
    }
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(md.contains("## Paired verdicts"), "{md}");
    assert!(md.contains("1 s slices in turns of 300 ms"), "{md}");
    assert!(md.contains("| oltp_point_select t2 | local/b |"), "{md}");
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(html.contains("Paired verdicts"));
    // Both servers were stopped with the sweep.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("sweepbench-run-")
        })
        .collect();
    assert!(left.is_empty(), "work directories left: {left:?}");
}

#[test]
fn a_budget_runs_rounds_to_a_look_fixed_in_advance() {
    // The looks and levels of a budget are the design's, not the server's: a model's slices
    // (virtual time, charged to the budget as a server's would be).
    let dir = tempfile::tempdir().unwrap();
    let f = sweep(dir.path(), "");
    let body = std::fs::read_to_string(&f).unwrap().replace(
        "server = {}",
        "synthetic = { seed = 21, noise = 0.05, burst = 0.3 }",
    );
    std::fs::write(&f, body).unwrap();
    let out = run(dir.path(), &f, &["--budget", "30s", "--quiet"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let v = verdicts(&latest(dir.path()));
    assert_eq!(v["budget_s"], 30);
    for c in v["points"].as_array().unwrap() {
        let rounds = c["rounds"].as_u64().unwrap();
        let looks: Vec<u64> = c["looks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert!(rounds >= 5, "{c}");
        assert!(looks.contains(&rounds), "stopped between looks: {c}");
        assert!(
            ["decided", "budget", "futile"].contains(&c["stopped"].as_str().unwrap()),
            "{c}"
        );
        if c["stopped"] == "budget" {
            assert_eq!(rounds, *looks.last().unwrap());
        }
        // The interval is drawn at the level α-spending gives the look it stopped at: within
        // each metric's 2.5 %, and at the last of several looks looser than the union
        // bound's 2.5 %/looks.
        let conf = c["comparisons"][0]["metrics"][0]["confidence"]
            .as_f64()
            .unwrap();
        let looks32: Vec<u32> = looks.iter().map(|&l| l as u32).collect();
        let n_looks = looks.len() as f64;
        let schedule = sweepbench::pipeline::judge::verdict::paired::Schedule::at(looks32);
        let want = 1.0 - schedule.miss_at(rounds as u32);
        assert!((conf - want).abs() < 1e-9, "{conf} against {want}: {c}");
        assert!(conf > 0.975, "{c}");
        if looks.len() > 1 && rounds == *looks.last().unwrap() {
            assert!(conf < 1.0 - 0.05 / (n_looks * 2.0), "{c}");
        }
    }
}

/// A budget below the design's minimum (5 rounds of a slice per series, and the warmups, at
/// every point) is raised to it, said by `plan` and by `run`, and the run keeps to the raised
/// budget: it measured 20 one-second slices on a promise of "at most 1s", silently.
#[test]
fn a_budget_below_the_minimum_is_raised_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let f = sweep(dir.path(), "budget = \"1s\"");
    let body = std::fs::read_to_string(&f)
        .unwrap()
        .replace("server = {}", "synthetic = { seed = 3 }");
    std::fs::write(&f, body).unwrap();
    // 2 points × (2 series × 1 s warmup + 5 rounds × 2 series × (1 s slice + 0.1 s setup)).
    let said = "warning: budget 1s is below what the paired design needs (5 rounds at least per point, each a 1 s slice per series, and the warmups): raised to 26s";
    let plan = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .arg("plan")
        .arg(&f)
        .output()
        .unwrap();
    let t = text(&plan);
    assert_eq!(plan.status.code(), Some(0), "{t}");
    assert!(t.contains(said), "{t}");
    assert!(t.contains("ETA: at most 26s of measuring"), "{t}");
    let out = run(dir.path(), &f, &["--quiet"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains(said), "{t}");
    let v = verdicts(&latest(dir.path()));
    assert_eq!(v["budget_s"], 26);
    for c in v["points"].as_array().unwrap() {
        assert_eq!(c["rounds"], 5, "{c}");
    }
}

#[test]
fn a_budget_is_refused_for_a_sequential_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("seq.toml");
    std::fs::write(&f, "name = \"seq\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"local\"\nserver = {}\n").unwrap();
    let out = run(dir.path(), &f, &["--budget", "5m"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("--budget applies to design = \"paired\""), "{t}");
    // Nothing run, nothing made: the refusal alone is kept, for a cron line to mail.
    let sweep_dir = dir.path().join("results/seq");
    let left: Vec<String> = std::fs::read_dir(&sweep_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["last-attempt.txt"]);
    let attempt = std::fs::read_to_string(sweep_dir.join("last-attempt.txt")).unwrap();
    assert!(
        attempt.contains(": exit 2, refused or stopped by an error"),
        "{attempt}"
    );
    assert!(
        attempt.contains("--budget applies to design = \"paired\""),
        "{attempt}"
    );
}

#[test]
fn a_duet_measures_every_series_in_the_same_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let f = sweep(dir.path(), "repeats = 2");
    // b differs from a in one variable that cannot matter to point selects; the gate names it.
    let body = std::fs::read_to_string(&f)
        .unwrap()
        .replace(
            "design = \"paired\"",
            "design = \"duet\"\nisolate = \"cpus\"",
        )
        .replace(
            "name = \"b\"\n",
            "name = \"b\"\nvars = { max_heap_table_size = 33554432 }\n",
        );
    std::fs::write(&f, body).unwrap();
    let out = run(dir.path(), &f, &["--fail-on-regression"]);
    let t = text(&out);
    // A real A/A point's verdict may be a false alarm (at most 5 % of the time): either exit.
    assert!(matches!(out.status.code(), Some(0) | Some(3)), "{t}");
    assert!(t.contains("all at once"), "{t}");
    assert!(
        t.contains("server variables of local/b that differ from local/a (what moves performance first):\n  max_heap_table_size 16777216 → 33554432"),
        "{t}"
    );
    let run_dir = latest(dir.path());
    let v = verdicts(&run_dir);
    assert_eq!(v["design"], "duet");
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    // Each side on its own CPU, as the file asks (this machine has two); "auto" would need
    // two each.
    let cpus = sweepbench::affinity::allowed(0).unwrap().len();
    if cpus >= 2 {
        let iso: Vec<&str> = v["isolation"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(iso.len(), 2, "{v}");
        assert!(
            iso[0].starts_with("local/a: server and client on CPU "),
            "{iso:?}"
        );
        assert_ne!(
            iso[0].rsplit(' ').next(),
            iso[1].rsplit(' ').next(),
            "{iso:?}"
        );
    }
    // The two series' slices of each round started together.
    let points = std::fs::read_to_string(run_dir.join("points.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(points.as_bytes());
    let head = rdr.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 8);
    for threads in ["1", "2"] {
        for round in ["1", "2"] {
            let starts: Vec<chrono::DateTime<chrono::FixedOffset>> = rows
                .iter()
                .filter(|r| &r[col("threads")] == threads && &r[col("repeat")] == round)
                .map(|r| chrono::DateTime::parse_from_rfc3339(&r[col("started_at")]).unwrap())
                .collect();
            assert_eq!(starts.len(), 2);
            let apart = (starts[0] - starts[1]).num_milliseconds().abs();
            assert!(apart < 500, "t{threads} round {round}: {apart} ms apart");
        }
    }
}

/// Several series and no `design`: paired by default, with the sequential design's measuring
/// time as its budget, said by `plan`; `design = "sequential"`, `order` and `--shard` keep
/// one series after another, and say why.
#[test]
fn several_series_are_paired_by_default_and_plan_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = sweep(dir.path(), "duration = \"3s\"\nrepeats = 2");
    let plain = std::fs::read_to_string(&f)
        .unwrap()
        .replace("design = \"paired\"\nslice = \"1s\"\n", "");
    std::fs::write(&f, &plain).unwrap();
    let plan = |extra: &[&str]| {
        let mut args = vec!["plan", f.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let t = plan(&[]);
    assert!(
        t.contains("design: paired, the default for a sweep of several series"),
        "{t}"
    );
    // 2 points × 2 series × 2 repeats × (1 s warmup + 3 s) = 32 s, the sequential design's
    // time, is below the paired minimum of 2 points × (2 × 1 s warmup + 5 rounds × 2 series
    // × (2 s slice + 0.1 s)) = 46 s: raised, with a note.
    assert!(t.contains("within a budget of 46s for the sweep"), "{t}");
    assert!(
        t.contains("note: the default budget (the sequential design's 32s) is below what the paired design needs"),
        "{t}"
    );
    let t = plan(&["--shard", "1/2"]);
    assert!(
        t.contains("design: sequential, as --shard measures the series apart"),
        "{t}"
    );
    std::fs::write(
        &f,
        plain.replace("[run]\n", "[run]\ndesign = \"sequential\"\n"),
    )
    .unwrap();
    let t = plan(&[]);
    assert!(!t.contains("design: paired"), "{t}");
    assert!(t.contains("sweep 'aa': 8 points"), "{t}");
}
