//! Sweeps on synthetic targets: no server, virtual time, the same figures for the same seed.
//! The orchestration around a measurement — the sequential and paired designs, budgets and
//! looks, the gate, compare, history, the report — on models with a known truth.

mod common;
use common::sweeps::{run_sweep, sweep_file};
use common::{run_in, text};
use std::path::{Path, PathBuf};
use sweepbench::pipeline::results::{load_points, PointStatus};

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, body).unwrap();
    f
}

fn runs(results: &Path, sweep: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(results.join(sweep))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.is_symlink())
        .collect();
    v.sort();
    v
}

fn sweepbench(args: &[&str]) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(args)
        .output()
        .unwrap()
}

const NINE: &str = "name = \"nine\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 2, 4, 8, 16, 32, 64, 128, 256]\nduration = \"5s\"\nrepeats = 3\n[[targets]]\nname = \"model\"\nsynthetic = { seed = 7 }\n";

#[test]
fn a_synthetic_sweep_repeats_its_figures_and_writes_a_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "nine", NINE);
    for _ in 0..2 {
        let out = run_in(dir.path(), &f, &["--quiet"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains("27 ok, 0 failed"), "{}", text(&out));
    }
    let results = dir.path().join("results");
    let two = runs(&results, "nine");
    assert_eq!(two.len(), 2);
    let tps = |run: &Path| -> Vec<(String, f64, f64)> {
        load_points(run)
            .unwrap()
            .into_iter()
            .map(|p| (p.point_id, p.tps, p.lat_p95_ms))
            .collect()
    };
    let (a, b) = (tps(&two[0]), tps(&two[1]));
    assert_eq!(a.len(), 27);
    assert_eq!(a, b, "the same seed gives the same figures");
    // The curve rises and falls as the model's USL does (σ 0.05, κ 0.0005: N* ≈ 44).
    let mean = |n: &str| -> f64 {
        let v: Vec<f64> = a
            .iter()
            .filter(|p| p.0.contains(&format!("/t{n}/")))
            .map(|p| p.1)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean("32") > mean("1") * 5.0 && mean("32") > mean("256"));
    let run = &two[1];
    for f in [
        "points.csv",
        "intervals.csv",
        "manifest.json",
        "report.md",
        "report.html",
    ] {
        assert!(run.join(f).is_file(), "{f}");
    }
    let intervals = std::fs::read_to_string(run.join("intervals.csv")).unwrap();
    assert_eq!(
        intervals.lines().count(),
        1 + 27 * 5,
        "five seconds per point"
    );
    let hlogs = std::fs::read_dir(run.join("histograms")).unwrap().count();
    assert_eq!(hlogs, 27);
    let vars = std::fs::read_to_string(run.join("servers/model__default/variables.tsv")).unwrap();
    assert!(vars.contains("synthetic.seed\t7"), "{vars}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["targets"][0]["kind"], "synthetic");
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("synthetic (seed 7)"), "{md}");
    // Two runs of the same model: compare calls nothing regressed.
    let cmp = sweepbench(&[
        "compare",
        two[0].to_str().unwrap(),
        two[1].to_str().unwrap(),
    ]);
    assert_eq!(cmp.status.code(), Some(0), "{}", text(&cmp));
    assert!(!text(&cmp).contains("regressed at"), "{}", text(&cmp));
}

fn paired(old: &str, new: &str) -> String {
    format!(
        "name = \"pair\"\nbaseline = \"old/default\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4, 16]\nwarmup = \"2s\"\nbudget = \"4m\"\n[[targets]]\nname = \"old\"\nsynthetic = {{ seed = 11, noise = 0.03, drift = 0.05, burst = 0.2, {old} }}\n[[targets]]\nname = \"new\"\nsynthetic = {{ seed = 11, noise = 0.03, drift = 0.05, burst = 0.2, {new} }}\n"
    )
}

fn verdicts(run: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("verdicts.json")).unwrap()).unwrap();
    v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["comparisons"][0]["verdict"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_paired_budget_finds_a_slower_model_and_stays_quiet_on_an_identical_one() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // 20 % fewer events per second, the machine drifting and bursting under both.
    let f = write(dir.path(), "pair", &paired("lambda = 400", "lambda = 320"));
    let out = run_in(dir.path(), &f, &["--fail-on-regression"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(t.contains("design: paired"), "{t}");
    assert!(
        t.contains("synthetic.lambda 400.0 → 320.0"),
        "the models' difference is named: {t}"
    );
    let v = verdicts(&runs(&results, "pair")[0]);
    assert_eq!(v.len(), 3);
    assert!(v.iter().filter(|x| *x == "regressed").count() >= 2, "{v:?}");
    assert!(
        !v.iter().any(|x| x == "improved" || x == "unchanged"),
        "{v:?}"
    );
    // The same two models: nothing regressed or improved, exit 0.
    let f = write(dir.path(), "pair", &paired("lambda = 400", "lambda = 400"));
    let out = run_in(dir.path(), &f, &["--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = verdicts(runs(&results, "pair").last().unwrap());
    assert!(
        v.iter().all(|x| x == "unchanged" || x == "inconclusive"),
        "{v:?}"
    );
}

/// A one-series nightly sweep of a synthetic model that varies from night to night as a
/// real machine does; `model` adds to (or overrides) its parameters.
fn nightly(model: &str) -> String {
    format!("name = \"nightly\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 8]\nduration = \"30s\"\nrepeats = 2\n[[targets]]\nname = \"model\"\nsynthetic = {{ seed = 5, noise = 0.02, vary_by_run = true, {model} }}\n")
}

/// Runs `f` as `n` nights in `dir`, each with `extra`, each expected to pass.
fn nights(dir: &Path, f: &Path, n: usize, extra: &[&str]) {
    for _ in 0..n {
        let out = run_in(dir, f, extra);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
}

#[test]
fn history_fires_on_a_night_the_model_got_slower() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let night = |lambda: u32| nightly(&format!("lambda = {lambda}"));
    let f = write(dir.path(), "nightly", &night(400));
    nights(dir.path(), &f, 6, &["--quiet", "--fail-on-regression"]);
    // Nights differ (vary_by_run) as a real machine's do.
    let all = runs(&results, "nightly");
    let first = load_points(&all[0]).unwrap();
    let second = load_points(&all[1]).unwrap();
    assert_ne!(first[0].tps, second[0].tps);
    let h = sweepbench(&["history", results.join("nightly").to_str().unwrap()]);
    assert_eq!(h.status.code(), Some(0), "{}", text(&h));
    // A night 30 % slower: the gate against the previous night and history both fire.
    let f = write(dir.path(), "nightly", &night(280));
    let out = run_in(dir.path(), &f, &["--quiet", "--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let h = sweepbench(&["history", results.join("nightly").to_str().unwrap()]);
    assert_eq!(h.status.code(), Some(3), "{}", text(&h));
    let newest = load_points(runs(&results, "nightly").last().unwrap()).unwrap();
    assert!(newest.iter().all(|p| p.status == PointStatus::Ok));
    // With --confirm the gate measures the failing points again, paired against the last
    // night that passed (the reference), and fails because that agrees; it says both
    // verdicts in summary.txt and gate.json.
    let out = run_in(
        dir.path(),
        &f,
        &["--quiet", "--fail-on-regression", "--confirm"],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    let newest = runs(&results, "nightly").last().unwrap().clone();
    let summary = std::fs::read_to_string(newest.join("summary.txt")).unwrap();
    assert!(
        summary.contains("confirmed in one paired run of the two sides' servers"),
        "{summary}"
    );
    assert_eq!(
        summary
            .matches("across runs regressed; paired regressed: tps -")
            .count(),
        2,
        "{summary}"
    );
    assert!(
        summary.contains("the paired run confirms a regression."),
        "{summary}"
    );
    let gate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(newest.join("gate.json")).unwrap()).unwrap();
    assert_eq!(gate["passed"], false);
    assert_eq!(gate["confirmation"]["fails"], true);
}

#[test]
fn history_does_not_fire_on_a_night_a_neighbour_took_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let night = |neighbour: u32| nightly(&format!("lambda = 400, neighbour = {neighbour}"));
    let f = write(dir.path(), "nightly", &night(3));
    nights(dir.path(), &f, 6, &["--quiet", "--fail-on-regression"]);
    // The same model on a night another job took 41 % of the CPU: about half the throughput,
    // and neither the gate against the previous night nor history calls it a regression.
    let f = write(dir.path(), "nightly", &night(41));
    let out = run_in(dir.path(), &f, &["--quiet", "--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let h = sweepbench(&["history", results.join("nightly").to_str().unwrap()]);
    let t = text(&h);
    assert_eq!(h.status.code(), Some(0), "{t}");
    assert!(t.contains("not judged"), "{t}");
    assert!(t.contains("the host was busier"), "{t}");
    assert!(
        t.contains("regressed at 0 of 0 points it judged, improved at 0, not judged at 4"),
        "{t}"
    );
    let all = runs(&results, "nightly");
    let newest = load_points(all.last().unwrap()).unwrap();
    let before = load_points(&all[all.len() - 2]).unwrap();
    assert!(
        newest[0].tps < 0.7 * before[0].tps,
        "{} vs {}",
        newest[0].tps,
        before[0].tps
    );
    // Nights run without the gate: history's own trend verdict is withheld the same way.
    let ungated = dir.path().join("ungated");
    std::fs::create_dir_all(&ungated).unwrap();
    let f = write(&ungated, "nightly", &night(3));
    nights(&ungated, &f, 6, &["--quiet"]);
    let f = write(&ungated, "nightly", &night(41));
    nights(&ungated, &f, 1, &["--quiet"]);
    let h = sweepbench(&["history", ungated.join("results/nightly").to_str().unwrap()]);
    let t = text(&h);
    assert_eq!(h.status.code(), Some(0), "{t}");
    assert_eq!(
        t.matches("not judged: the host was busier during run ")
            .count(),
        4,
        "{t}"
    );
}

#[test]
fn what_a_synthetic_target_cannot_do_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, says) in [
        (
            "drivers = [\"native\", \"sysbench\"]\n",
            "the sysbench driver needs a server",
        ),
        ("clients = 2\n", "use clients = 1"),
    ] {
        let body = NINE.replace("repeats = 3\n", &format!("repeats = 3\n{extra}"));
        let f = write(dir.path(), "bad", &body);
        let out = sweepbench(&["plan", f.to_str().unwrap()]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(t.contains("bad.toml:10:") && t.contains(says), "{t}");
    }
    let mixed = format!("{NINE}[[targets]]\nname = \"real\"\nserver = {{}}\n");
    let f = write(dir.path(), "mixed", &mixed);
    let out = sweepbench(&["plan", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("cannot share rounds with real servers"),
        "{}",
        text(&out)
    );
    let f = write(
        dir.path(),
        "badmodel",
        &NINE.replace(
            "synthetic = { seed = 7 }",
            "synthetic = { seed = 7, sigma = 2 }",
        ),
    );
    let out = sweepbench(&["plan", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("synthetic.sigma = 2: expected 0 to 0.999"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_point_its_budget_cannot_decide_hands_its_time_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // A/A on a model so noisy (30 % per slice) that nothing is decided in a few dozen rounds.
    let body = "name = \"futile\"\nbaseline = \"a/default\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 2, 4]\nwarmup = \"1s\"\nbudget = \"6m\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 8, noise = 0.3 }\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 8, noise = 0.3 }\n";
    let f = write(dir.path(), "futile", body);
    let out = run_in(dir.path(), &f, &["--quiet", "--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(runs(&results, "futile")[0].join("verdicts.json")).unwrap(),
    )
    .unwrap();
    let cells = v["points"].as_array().unwrap();
    let last_look = |c: &serde_json::Value| -> u64 {
        c["looks"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_u64()
            .unwrap()
    };
    // The first point is given up at a look (from round 10 on, before its last), and the
    // time it left makes the next point's last look later than its own.
    assert_eq!(cells[0]["stopped"], "futile", "{}", cells[0]);
    let r0 = cells[0]["rounds"].as_u64().unwrap();
    assert!(r0 >= 10 && r0 < last_look(&cells[0]), "{}", cells[0]);
    assert!(
        last_look(&cells[1]) > last_look(&cells[0]),
        "{} then {}",
        cells[0]["looks"],
        cells[1]["looks"]
    );
    assert!(cells
        .iter()
        .all(|c| c["comparisons"][0]["verdict"] == "inconclusive"));
}

#[test]
fn host_tests_in_a_sweep_measure_the_machine_beside_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"withhost\"\n[run]\nworkloads = [\"oltp_point_select\", \"cpu\"]\nthreads = [1, 2]\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"model\"\nsynthetic = { seed = 7 }\n";
    let f = write(dir.path(), "withhost", body);
    let plan = sweepbench(&["plan", f.to_str().unwrap()]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    assert!(
        text(&plan).contains("host tests first, 1 s each on this machine, no server loaded: host/-/cpu/t1/r1, host/-/cpu/t2/r1"),
        "{}",
        text(&plan)
    );
    let out = run_in(dir.path(), &f, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("4 ok, 0 failed, 0 skipped of 4 planned"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("host/-/cpu/t2/r1: "), "{}", text(&out));
    let run = &runs(&dir.path().join("results"), "withhost")[0];
    let points = load_points(run).unwrap();
    let host: Vec<_> = points.iter().filter(|p| p.is_host()).collect();
    assert_eq!(host.len(), 2);
    for (p, n) in host.iter().zip([1, 2]) {
        assert_eq!(p.point_id, format!("host/-/cpu/t{n}/r1"));
        assert_eq!(
            (p.target.as_str(), p.config.as_str(), p.workload.as_str()),
            ("host", "-", "cpu")
        );
        assert_eq!(p.status, PointStatus::Ok);
        assert_eq!(p.threads, n);
        assert!(p.transactions > 0 && p.tps > 0.0, "{p:?}");
        assert_eq!(p.queries, 0, "a host event sends no query");
    }
    // Measured before the model's points.
    assert!(points[0].is_host() && points[1].is_host(), "{points:?}");
    assert_eq!(points.len(), 4);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["plan"][0], "host/-/cpu/t1/r1");
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("## The host"), "{md}");
    assert!(
        md.contains("| threads | host cpu | model/default oltp_point_select |"),
        "{md}"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let host = html
        .split("<section class=\"host\" id=\"host\">")
        .nth(1)
        .expect("a host section");
    assert!(host.contains("<svg") && host.contains("host cpu"), "{host}");
    // The JSON a script reads has the host's figures and none of its charts (nor any other).
    let json = sweepbench(&["report", run.to_str().unwrap(), "--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let json = String::from_utf8(json.stdout).unwrap();
    assert!(json.contains("\"host\""), "{json}");
    assert!(!json.contains("<svg") && !json.contains("_svg\""), "{json}");
    // The host is no server series: it is neither a column of the model's tables nor the
    // baseline.
    assert!(md.contains("Baseline: **model/default**"), "{md}");
    assert!(!md.contains("| host/- |"), "{md}");
    // A host test sweeps do not have is refused at its line, with those they have.
    let bad = write(
        dir.path(),
        "threads",
        &body.replace("\"cpu\"", "\"threads\""),
    );
    let out = sweepbench(&["plan", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("threads.toml:3:"), "{}", text(&out));
    assert!(
        text(&out).contains("and the host tests cpu, memory and fileio"),
        "{}",
        text(&out)
    );
}

/// Every file under `dir`, however deep.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_fileio_host_test_prepares_measures_and_removes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"disk\"\n[run]\nworkloads = [\"fileio\"]\nthreads = [1, 2]\nduration = \"1s\"\nrepeats = 1\n[fileio]\nfile_total_size = \"4M\"\nfile_num = 2\n[[targets]]\nname = \"model\"\nsynthetic = { seed = 7 }\n";
    let f = write(dir.path(), "disk", body);
    let out = run_in(dir.path(), &f, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("fileio: preparing 2 file(s), 4MiB in "),
        "{}",
        text(&out)
    );
    let run = &runs(&dir.path().join("results"), "disk")[0];
    let points = load_points(run).unwrap();
    assert_eq!(points.len(), 2);
    for p in &points {
        assert_eq!(p.status, PointStatus::Ok, "{p:?}");
        assert_eq!(p.workload, "fileio");
        // rndrw: a read first, then reads at 1.5 per write, and an fsync every 100.
        assert!(p.writes > 0 && p.reads >= p.writes, "{p:?}");
        assert!(p.other > 0, "fsyncs: {p:?}");
        // Every request an event, plus each thread's fsync of both files at its end.
        assert_eq!(
            p.reads + p.writes + p.other,
            p.transactions + 2 * p.threads as u64,
            "{p:?}"
        );
    }
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("fileio (file requests: reads, writes and fsyncs):"),
        "{md}"
    );
    // The files were in the run's work directory and are gone with it.
    let left: Vec<PathBuf> = files_under(dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("test_file."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Files that cannot fit fail the points with the remedy, and nothing is written.
    let big = write(
        dir.path(),
        "big",
        &body
            .replace("name = \"disk\"", "name = \"big\"")
            .replace("\"4M\"", "\"1000T\""),
    );
    let out = run_in(dir.path(), &big, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("lower [fileio] file_total_size, or set TMPDIR to a larger disk"),
        "{}",
        text(&out)
    );
}

/// `--progress json`: every line of stdout is one event; each point starts and is kept once,
/// the plan's length is said first, the summary is output and the run ends with `finished`.
/// `--quiet` says the summary and nothing of the points.
#[test]
fn a_run_watched_as_json_lines_says_each_point_once() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"watched\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 2, 4]\nduration = \"3s\"\nrepeats = 2\nreport_interval = \"1s\"\n[[targets]]\nname = \"model\"\nsynthetic = { seed = 7 }\n";
    let f = write(dir.path(), "watched", body);
    let out = run_in(dir.path(), &f, &["--progress", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["event"] == kind).collect()
    };
    assert!(events.iter().all(|e| e["t_s"].as_f64().is_some()));
    let planned = of("planned");
    assert_eq!(planned[0]["points"], 6, "{planned:?}");
    let ids = |kind: &str| -> Vec<String> {
        of(kind)
            .iter()
            .map(|e| e["point"].as_str().unwrap().to_string())
            .collect()
    };
    let (started, kept) = (ids("point_started"), ids("point_kept"));
    assert_eq!(started.len(), 6, "{started:?}");
    assert_eq!(started, kept);
    assert_eq!(
        kept.iter().collect::<std::collections::BTreeSet<_>>().len(),
        6
    );
    assert!(of("point_kept").iter().all(|e| e["status"] == "ok"));
    let output: Vec<&str> = of("output")
        .iter()
        .map(|e| e["line"].as_str().unwrap())
        .collect();
    assert!(
        output.iter().any(|l| l.contains("6 ok, 0 failed")),
        "{output:?}"
    );
    assert_eq!(events.last().unwrap()["event"], "output");
    assert_eq!(of("finished").len(), 1);

    let quiet = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", text(&quiet));
    let said = text(&quiet);
    assert!(said.contains("6 ok, 0 failed"), "{said}");
    assert!(!said.contains(" tps, "), "no point's figures: {said}");
    assert!(!said.contains("starting model"), "{said}");
}

/// The README's screenshot sweep says what the README says of it: a 12 % slower model is
/// regressed for each workload at 6 of 6 thread counts, and the gate exits 3.
#[test]
fn the_readme_synthetic_upgrade_is_regressed_at_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps/synthetic-upgrade.toml");
    let out = run_in(dir.path(), &f, &["--quiet", "--fail-on-regression"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let said = text(&out);
    for wl in ["oltp_read_only", "oltp_read_write"] {
        let line = said
            .lines()
            .find(|l| l.contains(&format!("slower than 10.11/default for {wl} by ")))
            .unwrap_or_else(|| panic!("no answer for {wl}:\n{said}"));
        assert!(
            line.contains("(lower at 6 of 6 thread counts): regressed"),
            "{line}"
        );
    }
    assert!(said.contains("regressed at 12/12 points"), "{said}");
}

/// `chain = true`: each series is answered against the one before it (a version chain's
/// steps), besides the baseline's answers: a 20 % faster step is improved at every point, a
/// step that changes nothing is never called a change.
#[test]
fn a_chain_is_answered_step_by_step() {
    let body = "name = \"chain\"\nchain = true\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4]\nduration = \"5s\"\nrepeats = 3\ndesign = \"sequential\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 7, lambda = 400, noise = 0.02, vary_by_run = true }\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 8, lambda = 480, noise = 0.02, vary_by_run = true }\n[[targets]]\nname = \"c\"\nsynthetic = { seed = 9, lambda = 480, noise = 0.02, vary_by_run = true }\n";
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "chain", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("  step a/default → b/default: improved at 2/2 points"),
        "{said}"
    );
    let step2 = said
        .lines()
        .find(|l| l.contains("step b/default → c/default: "))
        .unwrap_or_else(|| panic!("no second step:\n{said}"));
    assert!(
        !step2.contains("improved") && !step2.contains("regressed"),
        "{step2}"
    );
    // The report opens with the steps.
    let run = std::fs::read_dir(dir.path().join("results/chain"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("report.md").is_file())
        .unwrap();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let first = md
        .find("step a/default → b/default")
        .expect("steps in report.md");
    let against = md.find("c/default vs a/default").unwrap_or(usize::MAX);
    assert!(first < against, "{md}");
}

/// Stalls of a known count and length (the synthetic model's `stall_every`/`stall_len`) are
/// found by the report's Stability section, each and every one, and a steady series shows none.
#[test]
fn the_report_finds_every_injected_stall_and_none_where_there_are_none() {
    let body = "name = \"stalls\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [4]\nduration = \"120s\"\nrepeats = 2\ndesign = \"sequential\"\n[[targets]]\nname = \"stalling\"\nsynthetic = { seed = 7, stall_every = 20, stall_len = 3 }\n[[targets]]\nname = \"steady\"\nsynthetic = { seed = 7 }\n";
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "stalls", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run = dir.path().join("results/stalls/latest");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sweepbench"))
        .args(["report", run.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = m["stability"].as_array().expect("a stability section");
    let row = |s: &str| {
        rows.iter()
            .find(|r| r["series"] == s)
            .unwrap_or_else(|| panic!("no {s}: {rows:?}"))
    };
    // 120 s each, a stall every 20 s lasting 3 s: 6 stalls and 18 s per repeat.
    let stalling = row("stalling/default");
    assert_eq!(stalling["seconds"], 240, "{stalling}");
    assert_eq!(stalling["stalls"], 12, "{stalling}");
    assert_eq!(stalling["stalled_s"], 36, "{stalling}");
    assert!(stalling["worst_pct"].as_f64().unwrap() < 15.0, "{stalling}");
    let steady = row("steady/default");
    assert_eq!(steady["stalls"], 0, "{steady}");
    assert_eq!(steady["stalled_s"], 0, "{steady}");
    assert!(steady["worst_pct"].as_f64().unwrap() > 85.0, "{steady}");
    assert!(
        steady["cv_pct"].as_f64().unwrap() < stalling["cv_pct"].as_f64().unwrap() / 5.0,
        "{steady} {stalling}"
    );
}

/// The report's model of a run, as `report --format json` gives it.
fn report_json(run: &std::path::Path) -> serde_json::Value {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sweepbench"))
        .args(["report", run.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Stability judged (#46 item 4): a stall of 2 s every 20 s is counted right (3 a minute,
/// 6 s) in each of three one-minute repeats, and the stalling series is judged less steady
/// than a stall-free baseline (10 % of its seconds stalled against 0 %), in the headline and
/// the Stability section alike.
#[test]
fn a_stalling_series_is_judged_less_steady_than_a_steady_one() {
    let body = "name = \"judged\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [8]\nduration = \"60s\"\nrepeats = 3\ndesign = \"sequential\"\n[[targets]]\nname = \"steady\"\nsynthetic = { seed = 3 }\n[[targets]]\nname = \"stalling\"\nsynthetic = { seed = 3, stall_every = 20, stall_len = 2 }\n";
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "judged", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let m = report_json(&dir.path().join("results/judged/latest"));
    let rows = m["stability"].as_array().unwrap();
    let stalling = rows
        .iter()
        .find(|r| r["series"] == "stalling/default")
        .unwrap();
    let stalls = stalling["stalls"].as_i64().unwrap();
    let stalled = stalling["stalled_s"].as_i64().unwrap();
    assert!((8..=10).contains(&stalls), "9 stalls ±1: {stalling}");
    assert!((17..=19).contains(&stalled), "18 s ±1: {stalling}");
    // The run's own last lines (and summary.txt, what cron mails) say it too.
    let said = "Stability (share of stalled seconds, 95 % intervals, ±1 pp): stalling/default against steady/default: less steady at 1 of 1 point";
    assert!(text(&out).contains(said), "{}", text(&out));
    let summary =
        std::fs::read_to_string(dir.path().join("results/judged/latest/summary.txt")).unwrap();
    assert!(summary.contains(said), "{summary}");
    let lines: Vec<&str> = m["stability_verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("stalling/default against steady/default, oltp_read_write t8: less steady: stalled 10.0 % of its seconds against 0.0 %, +10.0 pp"),
        "{lines:?}"
    );
    let heads: Vec<&str> = m["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        heads
            .iter()
            .any(|h| h
                .contains("stalling/default against steady/default: less steady at 1 of 1 point")),
        "{heads:?}"
    );
    // Throughput over time: one chart for the point, a line per series made of its three
    // windows, every stalled second marked — as many as the table counts, none in the steady
    // series.
    let html =
        std::fs::read_to_string(dir.path().join("results/judged/latest/report.html")).unwrap();
    assert!(m.get("stability_svg").is_none(), "no chart in the JSON");
    let title = "oltp_read_write, 8 threads: tps per second, windows joined (stalls marked)";
    assert_eq!(
        html.matches(title).count(),
        1,
        "one chart for the one point"
    );
    let at = html.find(title).unwrap();
    let svg = &html[html[..at].rfind("<svg").unwrap()..at + html[at..].find("</svg>").unwrap()];
    assert!(
        svg.contains("stalling/default r1–r3") && svg.contains("steady/default r1–r3"),
        "{svg}"
    );
    assert_eq!(svg.matches("<circle").count() as i64, stalled, "{svg}");
}

/// The A/A of stability: two identical stall-free series (different seeds of one model)
/// claim no stability change — never "steadier" or "less steady" — in at least 9 of 10
/// seeds; and two series stalling alike claim none either.
#[test]
fn identical_series_claim_no_stability_change() {
    let mut claims = Vec::new();
    for seed in 1..=10 {
        for stall in ["", ", stall_every = 20, stall_len = 2"] {
            let body = format!("name = \"aa\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [4]\nduration = \"30s\"\nrepeats = 3\ndesign = \"sequential\"\n[[targets]]\nname = \"a\"\nsynthetic = {{ seed = {seed}{stall} }}\n[[targets]]\nname = \"b\"\nsynthetic = {{ seed = {}{stall} }}\n", seed + 100);
            let dir = tempfile::tempdir().unwrap();
            let f = sweep_file(dir.path(), "aa", &body);
            let out = run_sweep(&f, &dir.path().join("results"), &[]);
            assert!(out.status.success(), "{}", text(&out));
            let m = report_json(&dir.path().join("results/aa/latest"));
            let lines = m["stability_verdicts"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(lines.len(), 1, "{m}");
            let l = lines[0].as_str().unwrap().to_string();
            if l.contains(": steadier") || l.contains(": less steady") {
                claims.push((stall.is_empty(), l));
            }
        }
    }
    for kind in [true, false] {
        let n = claims.iter().filter(|c| c.0 == kind).count();
        assert!(n <= 1, "at most 1 claim in 10: {claims:?}");
    }
}

/// Threads from cores (#46 item 2) run as resolved: each target its own counts in a
/// sequential sweep (points.csv), and the report says what they are multiples of.
#[test]
fn threads_from_cores_run_per_target_and_the_report_says_so() {
    let body = "name = \"cores\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [\"1×cores\", \"2×cores\"]\nduration = \"2s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"one\"\nsynthetic = { seed = 1 }\ncores = 1\n[[targets]]\nname = \"two\"\nsynthetic = { seed = 2 }\ncores = 2\n";
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "cores", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run = dir.path().join("results/cores/latest");
    let points = std::fs::read_to_string(run.join("points.csv")).unwrap();
    let ids: Vec<&str> = points
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(1))
        .collect();
    assert_eq!(
        ids,
        [
            "one/default/oltp_point_select/t1/r1",
            "one/default/oltp_point_select/t2/r1",
            "two/default/oltp_point_select/t2/r1",
            "two/default/oltp_point_select/t4/r1"
        ]
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("Thread counts from each target's cores — one (1 core): 1 = 1×cores, 2 = 2×cores; two (2 cores): 2 = 1×cores, 4 = 2×cores."),
        "{md}"
    );
}

/// Each target's own answer (`per_target = true`, as instance classes ask): a config that is
/// 30 % faster on one target and no faster on the other is improved on the first and not
/// on the second, each against its own target's default — first in the report and
/// in the run's summary; in a paired run judged on the rounds, and said so.
#[test]
fn per_target_answers_judge_each_targets_configs_against_its_own_default() {
    for (design, how, said) in [
        ("sequential", "duration = \"5s\"\nrepeats = 3", ""),
        (
            "paired",
            "slice = \"5s\"\nrepeats = 6",
            ", paired by round)",
        ),
    ] {
        let body = format!("name = \"classes\"\nbaseline = \"small/default\"\nper_target = true\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4]\n{how}\ndesign = \"{design}\"\n[[targets]]\nname = \"small\"\nsynthetic = {{ seed = 1, lambda = 200, configs = {{ tuned = 1.3 }} }}\n[[targets]]\nname = \"large\"\nsynthetic = {{ seed = 2, lambda = 600 }}\n[[configs]]\nname = \"default\"\n[[configs]]\nname = \"tuned\"\n");
        let dir = tempfile::tempdir().unwrap();
        let f = sweep_file(dir.path(), "classes", &body);
        let out = run_sweep(&f, &dir.path().join("results"), &[]);
        assert!(out.status.success(), "{design}: {}", text(&out));
        let run = dir.path().join("results/classes/latest");
        let md = std::fs::read_to_string(run.join("report.md")).unwrap();
        let summary = std::fs::read_to_string(run.join("summary.txt")).unwrap();
        for t in [&md, &summary] {
            let small = t
                .lines()
                .find(|l| {
                    l.contains(
                        "on small: small/tuned against small/default: improved at 2/2 points",
                    )
                })
                .unwrap_or_else(|| panic!("{design}: {t}"));
            assert!(small.ends_with(said), "{design}: {small}");
            // No change beyond the threshold on large (within it, a direction may show).
            let large = t
                .lines()
                .find(|l| l.contains("on large: large/tuned against large/default: "))
                .unwrap_or_else(|| panic!("{design}: {t}"));
            assert!(
                !large.contains("improved") && !large.contains("regressed"),
                "{design}: {large}"
            );
            // Each class's own answer leads, before the answers against the one baseline.
            let own = t.find("on small: ").unwrap();
            // (A sequential run's summary has no answers against the baseline; its report
            // and a paired run's summary do.)
            let against = t.find("large/default is faster than small/default");
            assert!(
                against.is_some() || (design == "sequential" && t == &summary),
                "{design}: {t}"
            );
            assert!(against.is_none_or(|a| own < a), "{design}: {t}");
        }
    }
}

/// The study's own table (#46 item 6, `study_table = true`): one row per target, template and
/// thread count with QPS, TPS, latency and stalls, in report.md and study.csv; the thread
/// count says what multiple of the cores it is; and the winner table names the steadiest
/// series beside the fastest, with its stability judged against the baseline.
#[test]
fn the_study_table_and_the_steadiest_series() {
    let body = "name = \"study\"\nbaseline = \"a/default\"\nstudy_table = true\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [\"2×cores\"]\nduration = \"40s\"\nrepeats = 3\ndesign = \"sequential\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 4, stall_every = 20, stall_len = 2 }\ncores = 2\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 5 }\ncores = 2\n[[targets]]\nname = \"c\"\nsynthetic = { seed = 6, lambda = 650, stall_every = 20, stall_len = 2 }\ncores = 2\n";
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "study", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run = dir.path().join("results/study/latest");
    let csv = std::fs::read_to_string(run.join("study.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "target,class,template,version,workload,threads,of_cores,qps,tps,lat_avg_ms,p95_ms,repeats,stalls,stalled_s"
    );
    assert_eq!(lines.len(), 4, "{csv}");
    // Three 40-s repeats, a 2-s stall every 20 s: 2 stalls and 4 s a repeat.
    for (line, target, stalls, stalled) in [
        (lines[1], "a", "6", "12"),
        (lines[2], "b", "0", "0"),
        (lines[3], "c", "6", "12"),
    ] {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[0], target, "{line}");
        assert_eq!(
            (f[2], f[4], f[5], f[6]),
            ("default", "oltp_read_write", "4", "2×cores"),
            "{line}"
        );
        assert_eq!(f[11], "3", "{line}");
        assert_eq!((f[12], f[13]), (stalls, stalled), "{line}");
        let (qps, tps): (f64, f64) = (f[7].parse().unwrap(), f[8].parse().unwrap());
        assert!(
            tps > 0.0 && (qps / tps - 20.0).abs() < 0.5,
            "read_write: 20 queries a transaction: {line}"
        );
    }
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("## The study's table"), "{md}");
    assert!(
        md.contains("| b | default | ") && md.contains(" | oltp_read_write | 4 = 2×cores | "),
        "{md}"
    );
    assert!(
        md.contains(" | 6 (12 s) |") && md.contains(" | 0 (0 s) |"),
        "{md}"
    );
    // c is fastest (λ 650 against 400) and stalls; b is steadiest and judged steadier than
    // the stalling baseline.
    let winner = md
        .lines()
        .find(|l| l.starts_with("| oltp_read_write | 4 | **c/default** |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        winner.contains("| b/default: 0 stalls, CV ")
            && winner.ends_with(" — against the baseline: steadier |"),
        "{winner}"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("<h2>The study's table</h2>")
            && html.contains("<th class=\"name\">steadiest</th>")
    );
}

/// The run directory `run` wrote last under results/<sweep>/ (where `latest` points).
fn latest(results: &std::path::Path, sweep: &str) -> std::path::PathBuf {
    std::fs::canonicalize(results.join(sweep).join("latest")).unwrap()
}

/// A busy host must not fool a cross-run verdict (#47): the same server measured twice, the
/// second time beside a neighbour that takes 41 % of the CPU and half the throughput, is
/// "not judged" — in compare's text, Markdown, HTML and JSON, the headline and the gate,
/// exit 0 — while the same −50 % made by the server itself, on a quiet host, is regressed
/// (exit 3).
#[test]
fn a_neighbour_on_one_side_is_not_a_regression() {
    let sweep = |synthetic: &str| {
        format!("name = \"busy\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4]\nduration = \"10s\"\nrepeats = 3\ndesign = \"sequential\"\n[[targets]]\nname = \"local\"\nsynthetic = {{ seed = 1, {synthetic} }}\n")
    };
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let quiet = sweep_file(dir.path(), "quiet", &sweep("neighbour = 3"));
    let out = run_sweep(&quiet, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let base = latest(&results, "busy");
    // The candidate beside a neighbour, gated against the quiet run.
    let busy = sweep_file(dir.path(), "starved", &sweep("neighbour = 41"));
    let out = run_sweep(
        &busy,
        &results,
        &["--fail-on-regression", "--against", base.to_str().unwrap()],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let cand = latest(&results, "busy");
    assert_ne!(base, cand);
    let points = std::fs::read_to_string(cand.join("points.csv")).unwrap();
    assert!(
        points.contains(",41.") || points.contains(",40.") || points.contains(",42."),
        "{points}"
    );
    let cand_id = cand.file_name().unwrap().to_string_lossy().to_string();
    let withheld =
        format!("the host was busier during run {cand_id} (other processes and the hypervisor ");
    let gate = std::fs::read_to_string(cand.join("gate.md")).unwrap();
    assert!(
        gate.contains(&format!("not judged ({withheld}")) && !gate.contains("regressed at"),
        "{gate}"
    );
    let compare = |fmt: &str| {
        sweepbench(&[
            "compare",
            base.to_str().unwrap(),
            cand.to_str().unwrap(),
            "--format",
            fmt,
        ])
    };
    for fmt in ["text", "md", "html"] {
        let o = compare(fmt);
        let t = text(&o)
            .replace("&#x2F;", "/")
            .replace("&#x27;", "'")
            .replace("&quot;", "\"");
        assert_eq!(o.status.code(), Some(0), "{fmt}: {t}");
        assert_eq!(t.matches(&withheld).count(), 2, "{fmt}: both points: {t}");
        assert!(!t.contains("regressed at"), "{fmt}: {t}");
        assert!(
            t.contains("inconclusive at 2/2 points (2 not judged: the host's load differed between the sides)"),
            "{fmt}: {t}"
        );
    }
    let o = compare("json");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in j["rows"].as_array().unwrap() {
        assert_eq!(r["verdict"], "inconclusive", "{r}");
        assert!(
            r["host_load"]["withheld"]
                .as_str()
                .unwrap()
                .starts_with(&withheld),
            "{r}"
        );
        let (b, c) = (
            r["host_load"]["base_pct"].as_f64().unwrap(),
            r["host_load"]["cand_pct"].as_f64().unwrap(),
        );
        assert!((0.0..9.0).contains(&b) && (35.0..47.0).contains(&c), "{r}");
        for m in r["metrics"].as_array().unwrap() {
            assert_ne!(m["verdict"], "regressed", "{m}");
        }
    }
    assert!(
        j["pooled"].as_array().unwrap().is_empty(),
        "no pooled answer from withheld points: {}",
        j["pooled"]
    );
    // The same −50 % from the server itself, the host quiet: regressed, exit 3.
    let slow = sweep_file(dir.path(), "slow", &sweep("neighbour = 3, lambda = 196"));
    let out = run_sweep(&slow, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let slow = latest(&results, "busy");
    let o = sweepbench(&["compare", base.to_str().unwrap(), slow.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    assert!(
        t.contains("regressed at 2/2 points") && !t.contains("not judged"),
        "{t}"
    );
    // --confirm measures both sides again in one paired run of their servers (here models,
    // the neighbour being the host's and not the server's): the busy pair finds no
    // regression, exit 0; the real slowdown is confirmed, exit 3. Both runs of the paired
    // sweep land beside the compared runs, under results/busy-confirm.
    let o = sweepbench(&[
        "compare",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--confirm",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &j["confirmation"];
    assert_eq!(k["fails"], false, "{k}");
    let points = k["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{k}");
    for p in points {
        assert_eq!(p["cross_run"], "not judged", "{p}");
        assert!(p["rounds"].as_u64().unwrap() >= 2, "{p}");
        assert_ne!(p["paired"], "regressed", "{p}");
        assert!(p["delta_pct"].as_f64().unwrap().abs() < 5.0, "{p}");
    }
    let confirm_run = std::path::PathBuf::from(k["run"].as_str().unwrap());
    assert!(confirm_run.starts_with(
        std::fs::canonicalize(&results)
            .unwrap()
            .join("busy-confirm")
    ));
    let sweep_as_run = std::fs::read_to_string(confirm_run.join("sweep.toml")).unwrap();
    assert!(!sweep_as_run.contains("neighbour"), "{sweep_as_run}");
    let o = sweepbench(&[
        "compare",
        base.to_str().unwrap(),
        slow.to_str().unwrap(),
        "--confirm",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    assert_eq!(
        t.matches("across runs regressed; paired regressed: tps -")
            .count(),
        2,
        "{t}"
    );
    assert!(t.contains("the paired run confirms a regression."), "{t}");
    // An imported run (no sweep.toml) cannot be started again: said, and the verdict stands.
    std::fs::remove_file(slow.join("sweep.toml")).unwrap();
    let o = sweepbench(&[
        "compare",
        base.to_str().unwrap(),
        slow.to_str().unwrap(),
        "--confirm",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "{t}");
    assert!(
        t.contains("could not confirm: ") && t.contains("has no sweep.toml"),
        "{t}"
    );
}
