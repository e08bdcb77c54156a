//! On-CPU profiles (`[run] profile = "perf"`) of managed servers: perf records the first
//! window of each point, the report folds and draws them; without perf the report says so
//! once and the sweep measures as ever.

mod common;
use assert_cmd::Command;
use common::text;
use std::path::{Path, PathBuf};
use sweepbench::pipeline::sweep::latest_run;

const SWEEP: &str = r#"
name = "prof"
baseline = "local/default"

[data]
tables = 1
table_size = 2000

[run]
workloads = ["oltp_point_select"]
threads = [1, 2]
duration = "2s"
warmup = "1s"
repeats = 2
profile = "perf"

[[targets]]
name = "local"
server = {}

[[configs]]
name = "default"

[[configs]]
name = "small-pool"
vars = { innodb_buffer_pool_size = "32M" }
"#;

fn run(perf: Option<&str>) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("prof.toml");
    std::fs::write(&f, SWEEP).unwrap();
    let results = dir.path().join("results");
    let mut cmd = Command::cargo_bin("sweepbench").unwrap();
    cmd.env("TMPDIR", dir.path()).args([
        "run",
        f.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]);
    if let Some(p) = perf {
        cmd.env("SWEEPBENCH_PERF", p);
    }
    let out = cmd.output().unwrap();
    let run = latest_run(&results, "prof").unwrap_or_else(|| panic!("no run:\n{}", text(&out)));
    (out, run, dir)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn each_point_of_each_series_gets_one_flame_graph_from_its_first_repeat() {
    let (out, run, _d) = run(None);
    assert!(out.status.success(), "{}", text(&out));
    let files = names(&run.join("profiles"));
    // Why perf was given up on, if it was: the first thing to read when this test fails.
    let unavailable = std::fs::read_to_string(run.join("profiles").join("unavailable.txt"));
    assert!(unavailable.is_err(), "{unavailable:?}\n{}", text(&out));
    // Two series × two thread counts, repeat 1 only: recorded (with the server's pid),
    // folded, drawn.
    for series in ["local__default", "local__small-pool"] {
        for t in [1, 2] {
            let stem = format!("{series}__oltp_point_select__t{t}");
            for ext in [".perf.data", ".pid", ".folded", ".svg"] {
                assert!(
                    files.contains(&format!("{stem}{ext}")),
                    "{stem}{ext} missing: {files:?}"
                );
            }
            let folded =
                std::fs::read_to_string(run.join("profiles").join(format!("{stem}.folded")))
                    .unwrap();
            // The server's own threads, each line a stack and a count of samples: those
            // of the stacks whose thread name starts with `name` ("" for all).
            let of = |name: &str| -> u64 {
                folded
                    .lines()
                    .filter(|l| l.starts_with(name))
                    .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
                    .sum()
            };
            let samples = of("");
            assert!(samples > 0, "{stem}: no samples");
            // Only the server's process: its threads are named mariadbd (one it names
            // itself may be sampled too), never this client or perf.
            assert!(of("mariadbd") * 2 > samples, "{folded}");
            assert_eq!(of("sweepbench") + of("perf"), 0, "{folded}");
        }
    }
    // A point whose change the report decided also gets a differential graph (how often
    // depends on the machine's noise); every other file is repeat 1's.
    let per_point: Vec<&String> = files.iter().filter(|f| !f.starts_with("diff__")).collect();
    assert_eq!(per_point.len(), 16, "only repeat 1 is profiled: {files:?}");
    for d in files.iter().filter(|f| f.starts_with("diff__")) {
        assert!(
            d.ends_with("__vs__local__default.svg") && d.contains("local__small-pool"),
            "{d}"
        );
    }
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert_eq!(md.matches("## On-CPU profiles").count(), 1, "{md}");
    assert!(
        md.contains("[local/small-pool](profiles/local__small-pool__oltp_point_select__t2.svg)"),
        "{md}"
    );
    assert!(!md.contains("Profiles: not taken"), "{md}");
    // Tera escapes '/' in attributes; a browser reads it back.
    let html = std::fs::read_to_string(run.join("report.html"))
        .unwrap()
        .replace("&#x2F;", "/");
    assert!(html.contains("href=\"profiles/local__default__oltp_point_select__t1.svg\""));
}

#[test]
fn without_perf_the_report_says_so_once_and_the_points_are_measured() {
    let (out, run, _d) = run(Some("/nonexistent/perf"));
    assert!(out.status.success(), "{}", text(&out));
    // Every point measured (a sequential pair of configs adds repeats until decided).
    let points = std::fs::read_to_string(run.join("points.csv")).unwrap();
    let rows: Vec<&str> = points.lines().skip(1).collect();
    assert!(rows.len() >= 2 * 2 * 2, "{points}");
    assert!(rows.iter().all(|r| r.contains(",ok,")), "{points}");
    assert_eq!(
        names(&run.join("profiles")),
        ["unavailable.txt"],
        "nothing recorded without perf"
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let said = "Profiles: not taken: SWEEPBENCH_PERF = /nonexistent/perf: no such file";
    assert_eq!(md.matches(said).count(), 1, "{md}");
    // Said during the run, once per server (block) at most, not per point.
    let told = text(&out).matches("on-CPU profiles not taken").count();
    assert!((1..=2).contains(&told), "{}", text(&out));
}
