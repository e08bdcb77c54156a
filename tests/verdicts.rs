//! The regression gate end to end, as the README's cron line runs it, on synthetic targets
//! whose truth is known: `run --fail-on-regression` within a run (a slower config against its
//! baseline, unpaired repeats) and across nights (a one-series sweep against its previous
//! run, or a run named with --against). A live server's gate is in tests/paired.rs.

mod common;
use common::text;
use std::path::{Path, PathBuf};

fn run(dir: &Path, file: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--quiet", "--fail-on-regression"];
    args.extend_from_slice(extra);
    common::run_in(dir, file, &args)
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, body).unwrap();
    f
}

fn two_configs(durable: f64) -> String {
    format!("name = \"flush\"\nbaseline = \"local/lazy\"\n[run]\nworkloads = [\"oltp_write_only\"]\nthreads = [1, 4]\nduration = \"10s\"\nrepeats = 5\norder = \"interleaved\"\n[[targets]]\nname = \"local\"\nsynthetic = {{ seed = 9, noise = 0.02, configs = {{ durable = {durable} }} }}\n[[configs]]\nname = \"lazy\"\nvars = {{ innodb_flush_log_at_trx_commit = 2 }}\n[[configs]]\nname = \"durable\"\nvars = {{ innodb_flush_log_at_trx_commit = 1 }}\n")
}

fn rows(t: &str) -> Vec<&str> {
    t.lines()
        .filter(|l| l.starts_with("local/durable/oltp_write_only/t"))
        .collect()
}

#[test]
fn a_config_a_third_slower_regresses_against_its_baseline_and_an_equal_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "flush", &two_configs(0.67));
    let out = run(dir.path(), &f, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(
        t.contains("compared each series of this run against the baseline local/lazy"),
        "{t}"
    );
    let r = rows(&t);
    assert_eq!(r.len(), 2, "{t}");
    assert!(r.iter().all(|l| l.contains("regressed (tps -3")), "{t}");
    // The variables that differ are named beside the verdicts.
    assert!(t.contains("innodb_flush_log_at_trx_commit"), "{t}");
    // The same model for both configs: exit 0, nothing regressed or improved.
    let f = write(dir.path(), "flush", &two_configs(1.0));
    let out = run(dir.path(), &f, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let r = rows(&t);
    assert_eq!(r.len(), 2, "{t}");
    assert!(
        r.iter()
            .all(|l| !l.contains("regressed (") && !l.contains("improved (")),
        "{t}"
    );
}

#[test]
fn a_nightly_sweep_compares_with_the_previous_night_and_fires_when_slowed() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |options: &str| {
        format!("name = \"nightly\"\n[run]\nworkloads = [\"oltp_write_only\"]\nthreads = [2]\nduration = \"10s\"\n[workload_options]\n{options}\n[[targets]]\nname = \"local\"\nsynthetic = {{ seed = 4, noise = 0.03, vary_by_run = true }}\n")
    };
    let f = write(dir.path(), "nightly", &sweep(""));

    let first = run(dir.path(), &f, &[]);
    let t = text(&first);
    assert_eq!(first.status.code(), Some(0), "{t}");
    assert!(
        t.contains("the first finished run of 'nightly': nothing to compare with yet"),
        "{t}"
    );
    let runs = || {
        sweepbench::pipeline::results::nightly::runs(&dir.path().join("results/nightly")).unwrap()
    };
    let night1 = runs()[0].clone();

    // The same model the next night (its own draws): compared with the first, not regressed.
    let second = run(dir.path(), &f, &[]);
    let t = text(&second);
    assert_eq!(second.status.code(), Some(0), "{t}");
    assert!(
        t.contains(&format!(
            "compared the previous finished run {}",
            night1.display()
        )),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("local/default/oltp_write_only/t2")),
        "{t}"
    );

    // A night about seven times slower (every transaction now also updates 40 rows). The
    // third night is compared with the second.
    std::fs::write(&f, sweep("index_updates = 20\nnon_index_updates = 20")).unwrap();
    let third = run(dir.path(), &f, &[]);
    let t = text(&third);
    assert_eq!(third.status.code(), Some(3), "{t}");
    let night2 = runs()[1].clone();
    assert!(t.contains(&night2.display().to_string()), "{t}");
    assert!(t.contains("regressed (tps -8"), "{t}");
    // The verdict is kept in the run directory and its report, not only in the cron log.
    let night3 = runs()[2].clone();
    let gate = std::fs::read_to_string(night3.join("gate.md")).unwrap();
    assert!(
        gate.contains("REGRESSED") && gate.contains("regressed (tps -8"),
        "{gate}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(night3.join("gate.json")).unwrap()).unwrap();
    assert!(json["compared"]
        .as_str()
        .unwrap()
        .contains("previous finished run"));
    assert!(!json["comparison"]["rows"].as_array().unwrap().is_empty());
    let md = std::fs::read_to_string(night3.join("report.md")).unwrap();
    assert!(
        md.contains("## Against an earlier run (`--fail-on-regression`)")
            && md.contains("regressed (tps -8"),
        "{md}"
    );

    // The same slow night again, judged against a chosen run: the first night.
    let again = run(dir.path(), &f, &["--against", night1.to_str().unwrap()]);
    let t = text(&again);
    assert_eq!(again.status.code(), Some(3), "{t}");
    assert!(
        t.contains(&format!("compared run {}", night1.display())),
        "{t}"
    );
}

const VERDICTS: [&str; 6] = [
    "regressed",
    "improved",
    "slower",
    "faster",
    "unchanged",
    "inconclusive",
];

/// The verdict words in `s`.
/// report.md's transactions-per-second table.
fn tps_table(md: &str) -> &str {
    md.split("Transactions per second (Δ")
        .nth(1)
        .and_then(|t| t.split("Queries per second").next())
        .unwrap()
}

/// The row of `table` at `threads`.
fn row_at(table: &str, threads: u32) -> &str {
    table
        .lines()
        .find(|l| l.starts_with(&format!("| {threads} |")))
        .unwrap_or_else(|| panic!("no row for t{threads}: {table}"))
}

/// The thread count of a gate row ("local/durable/oltp_write_only/t4 …").
fn threads_of(gate_row: &str) -> u32 {
    gate_row
        .split_whitespace()
        .next()
        .and_then(|p| p.rsplit("/t").next())
        .and_then(|n| n.parse().ok())
        .unwrap()
}

fn words_in(s: &str) -> Vec<&'static str> {
    VERDICTS.into_iter().filter(|w| s.contains(w)).collect()
}

/// An unpaired run's gate, report.md, report.html and `report --format json` give each point
/// the same one verdict (#32: one verdict per point in every view).
#[test]
fn every_view_of_an_unpaired_run_gives_a_point_the_gates_verdict() {
    let dir = tempfile::tempdir().unwrap();
    // A mild slowdown at 5 repeats: some points decided, some not, so agreement is tested on
    // more than one verdict.
    let f = write(dir.path(), "flush", &two_configs(0.95));
    let out = run(dir.path(), &f, &["--fail-on", "slower"]);
    let t = text(&out);
    let gate: Vec<(u32, Vec<&str>)> = rows(&t)
        .into_iter()
        .map(|l| (threads_of(l), words_in(l)))
        .collect();
    assert_eq!(gate.len(), 2, "{t}");
    let run_dir = std::fs::canonicalize(dir.path().join("results/flush/latest")).unwrap();
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    let json = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["report", run_dir.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", text(&json));
    let model: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let table = tps_table(&md);
    for (threads, words) in &gate {
        assert_eq!(
            words.len(),
            1,
            "one verdict in the gate's row at t{threads}: {t}"
        );
        let row = row_at(table, *threads);
        assert_eq!(
            &words_in(row.split('|').nth(3).unwrap()),
            words,
            "md t{threads}: {row}"
        );
        let cell = model["workloads"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["threads"] == *threads)
            .map(|r| r["cells"][1]["verdict"].as_str().unwrap().to_string())
            .unwrap();
        assert_eq!(vec![cell.as_str()], *words, "json t{threads}");
    }
    // The HTML table's cells carry the same verdicts, in the same order as the Markdown's.
    let html_cells: Vec<&str> = html
        .match_indices("<td class=\"")
        .filter_map(|(i, _)| html[i + 11..].split('"').next())
        .filter(|c| VERDICTS.contains(c))
        .collect();
    let gate_words: Vec<&str> = gate.iter().map(|(_, w)| w[0]).collect();
    assert!(
        html_cells
            .windows(gate_words.len())
            .any(|w| w == gate_words.as_slice()),
        "html cells {html_cells:?}, gate {gate_words:?}"
    );
    // Judged once, as the run ended: verdicts.json holds each point's verdict, the gate's.
    let kept = run_dir.join("verdicts.json");
    let mut stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(stored["design"], "sequential");
    assert_eq!(stored["baseline"], "local/lazy");
    let points = stored["points"].as_array().unwrap().clone();
    assert_eq!(points.len(), 2, "{stored}");
    for (threads, words) in &gate {
        let p = points
            .iter()
            .find(|p| p["threads"] == *threads)
            .unwrap_or_else(|| panic!("no stored point at t{threads}: {stored}"));
        assert_eq!(p["series"], "local/durable");
        assert_eq!(p["verdict"].as_str(), Some(words[0]), "t{threads}: {p}");
    }
    // The report opens with the run's pooled answer for the workload.
    let pooled = stored["pooled"].as_array().unwrap();
    assert_eq!(pooled.len(), 1, "{stored}");
    let head = md.split("Transactions per second").next().unwrap();
    assert!(
        head.contains("local/durable") && head.contains("for oltp_write_only"),
        "{head}"
    );
    // The report reads the stored verdicts and never judges them again: a verdict changed in
    // the file is what a re-rendered report shows.
    for p in stored["points"].as_array_mut().unwrap() {
        p["verdict"] = "improved".into();
    }
    std::fs::write(&kept, stored.to_string()).unwrap();
    let again = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["report", run_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again));
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let table = tps_table(&md);
    for (threads, _) in &gate {
        let row = row_at(table, *threads);
        assert_eq!(
            words_in(row.split('|').nth(3).unwrap()),
            ["improved"],
            "t{threads}: {row}"
        );
    }
}

/// `--threshold` reaches the report too: a gate at ±30 % and the report of the same run give
/// each point one verdict (the report once judged at its own fixed ±5 %).
#[test]
fn the_report_of_a_gated_run_judges_at_the_gates_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "flush", &two_configs(0.67));
    let out = run(dir.path(), &f, &["--threshold", "30"]);
    let t = text(&out);
    let run_dir = std::fs::canonicalize(dir.path().join("results/flush/latest")).unwrap();
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("verdicts.json")).unwrap())
            .unwrap();
    assert_eq!(stored["threshold_pct"], 30.0, "{stored}");
    let table = tps_table(&md);
    for l in rows(&t) {
        let threads = threads_of(l);
        let row = row_at(table, threads);
        assert_eq!(
            words_in(row.split('|').nth(3).unwrap()),
            words_in(l),
            "t{threads}: gate {l}, report {row}"
        );
    }
    assert!(md.contains("±30 %"), "{md}");
}

/// The answer first, on a model with a known −7 % config measured in paired rounds (#32): the
/// run's summary and the report open with the pooled sentence that names the slower series,
/// by how much and at how many thread counts; every table cell of report.md shows the paired
/// verdict of its point (verdicts.json) and no other; `--fail-on slower` exits 3 on it.
#[test]
fn a_paired_sweep_opens_with_one_answer_and_shows_one_verdict_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "slow",
        "name = \"slow\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4, 8, 16]\nduration = \"10s\"\ndesign = \"paired\"\nbudget = \"10m\"\n[[targets]]\nname = \"m\"\nsynthetic = { seed = 7, configs = { slow = 0.93 }, noise = 0.05, burst = 0.2 }\n[[configs]]\nname = \"default\"\n[[configs]]\nname = \"slow\"\n",
    );
    let out = common::run_in(dir.path(), &f, &["--quiet", "--fail-on", "slower"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    let answer = "m/slow is slower than m/default for oltp_read_only by ";
    let first = t.lines().nth(1).unwrap_or_default();
    assert!(first.trim_start().starts_with(answer), "{t}");
    assert!(first.contains("(lower at 4 of 4 thread counts)"), "{t}");
    let run = std::fs::canonicalize(dir.path().join("results/slow/latest")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("verdicts.json")).unwrap()).unwrap();
    assert_eq!(v["pooled"][0]["verdict"], "slower", "{}", v["pooled"]);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains(&format!("- {answer}")), "{md}");
    // The throughput table: each candidate cell ends with its point's paired verdict.
    let table: Vec<&str> = md
        .split("Transactions per second (Δ")
        .nth(1)
        .and_then(|t| t.split("Queries per second").next())
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| threads"))
        .collect();
    assert_eq!(table.len(), 4, "{md}");
    for c in v["points"].as_array().unwrap() {
        let threads = c["threads"].as_u64().unwrap();
        let verdict = c["comparisons"][0]["verdict"].as_str().unwrap();
        let row = table
            .iter()
            .find(|l| l.starts_with(&format!("| {threads} |")))
            .unwrap_or_else(|| panic!("no row for {threads}: {md}"));
        let cand = row.split('|').nth(3).unwrap();
        assert_eq!(words_in(cand), vec![verdict], "t{threads}: {row}");
    }
}

/// The nightly with a pinned control as the README's cron line runs it (#32): each night the
/// candidate and the control are measured in the same rounds on a noisy, bursty machine;
/// `--fail-on-regression` follows the candidate's ratio to the control from night to night.
/// The first night has nothing to compare with, the second (the same server) passes, the
/// third (the candidate a quarter as fast, as innodb_flush_log_at_trx_commit 2 → 1 made it
/// for read_write on this machine) exits 3 with the pooled answer first; every night leaves
/// a summary.txt that says what the gate said.
#[test]
fn a_nightly_with_a_control_judges_the_ratio_night_over_night() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |lambda: u32| {
        format!("name = \"nightly\"\ncontrol = \"control/default\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [1, 4, 16]\ndesign = \"paired\"\nslice = \"2s\"\nbudget = \"10m\"\n[[targets]]\nname = \"control\"\nsynthetic = {{ seed = 11, noise = 0.05, burst = 0.2, drift = 0.05, vary_by_run = true }}\n[[targets]]\nname = \"candidate\"\nsynthetic = {{ seed = 11, noise = 0.05, burst = 0.2, drift = 0.05, vary_by_run = true, lambda = {lambda} }}\n")
    };
    let f = write(dir.path(), "nightly", &sweep(400));
    let summary = || {
        let run = std::fs::canonicalize(dir.path().join("results/nightly/latest")).unwrap();
        std::fs::read_to_string(run.join("summary.txt")).unwrap()
    };
    let first = run(dir.path(), &f, &[]);
    let t = text(&first);
    assert_eq!(first.status.code(), Some(0), "{t}");
    assert!(
        t.contains("the first finished run of 'nightly' paired with its control: nothing to compare with yet"),
        "{t}"
    );
    assert!(
        summary().contains("nothing to compare with yet"),
        "{}",
        summary()
    );

    let second = run(dir.path(), &f, &[]);
    let t = text(&second);
    assert_eq!(second.status.code(), Some(0), "{t}");
    assert!(
        t.contains("each series' ratio to the control control/default in this run against the previous finished run"),
        "{t}"
    );
    assert!(!t.contains("REGRESSED"), "{t}");
    assert!(t.contains("--fail-on-regression: passed\n"), "{t}");
    assert_eq!(
        t.matches("candidate/default/oltp_read_write/t").count(),
        3,
        "{t}"
    );

    std::fs::write(&f, sweep(100)).unwrap();
    let third = run(dir.path(), &f, &[]);
    let t = text(&third);
    assert_eq!(third.status.code(), Some(3), "{t}");
    assert!(
        t.contains("REGRESSED: candidate/default is slower than itself in the earlier run(s), relative to the control, for oltp_read_write by 7"),
        "{t}"
    );
    let s = summary();
    assert!(s.starts_with("sweep 'nightly': "), "{s}");
    assert!(s.contains("REGRESSED: candidate/default is slower"), "{s}");
    assert!(
        s.trim_end().ends_with("--fail-on-regression: FAILED"),
        "{s}"
    );
    let run_dir = std::fs::canonicalize(dir.path().join("results/nightly/latest")).unwrap();
    let gate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("gate.json")).unwrap()).unwrap();
    assert_eq!(
        gate["control"]["pooled"][0]["verdict"], "regressed",
        "{gate}"
    );
    let md = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        md.contains("REGRESSED: candidate/default is slower"),
        "{md}"
    );
    assert_eq!(gate["passed"], false, "{gate}");

    // The next night is still slow: judged against the last night that passed, it fails
    // again and says since when.
    let fourth = run(dir.path(), &f, &[]);
    let t = text(&fourth);
    assert_eq!(fourth.status.code(), Some(3), "{t}");
    let third_id = run_dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        t.contains("against the last finished run that passed the gate or was accepted, "),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "still judged against it: the 1 run(s) since failed the gate ({third_id})"
        )),
        "{t}"
    );
    assert!(t.contains("REGRESSED: candidate/default is slower"), "{t}");
    assert!(summary()
        .trim_end()
        .ends_with("--fail-on-regression: FAILED"));

    // The slower level was meant: accepted, the next night at that level passes.
    let fourth_dir = std::fs::canonicalize(dir.path().join("results/nightly/latest")).unwrap();
    let accept = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .arg("accept")
        .arg(&fourth_dir)
        .output()
        .unwrap();
    assert_eq!(accept.status.code(), Some(0), "{}", text(&accept));
    assert!(text(&accept).starts_with("accepted "), "{}", text(&accept));
    assert!(fourth_dir.join("accepted.json").is_file());
    let fifth = run(dir.path(), &f, &[]);
    let t = text(&fifth);
    assert_eq!(fifth.status.code(), Some(0), "{t}");
    assert!(
        t.contains(&format!(
            "against the previous finished run {}",
            fourth_dir.display()
        )),
        "{t}"
    );
    assert!(t.contains("--fail-on-regression: passed\n"), "{t}");
    // A directory that is not a run is refused with what to give.
    let bad = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .arg("accept")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains(
            "is not a run directory (no points.csv and manifest.json): give results/<sweep>/<run>"
        ),
        "{}",
        text(&bad)
    );
}

/// A control needs the paired design, and a sweep names a control or a baseline, not both.
#[test]
fn a_control_without_pairing_is_refused_with_the_remedy() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"c\"\ncontrol = \"a/default\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1]\ndesign = \"sequential\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 1 }\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 1 }\n";
    let f = write(dir.path(), "c", body);
    let out = run(dir.path(), &f, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("c.toml:2:") && t.contains("set design = \"paired\""),
        "{t}"
    );
    let f = write(
        dir.path(),
        "c",
        &body
            .replace(
                "control = \"a/default\"\n",
                "control = \"a/default\"\nbaseline = \"b/default\"\n",
            )
            .replace("sequential", "paired"),
    );
    let out = run(dir.path(), &f, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("control and baseline both given"), "{t}");
}
