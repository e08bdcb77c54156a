//! `run --fail-on-regression --confirm` on the README's own nightly shape (#61 item 4): a url
//! candidate beside a managed control, paired every night. The candidate is a real MariaDB
//! in a CPU class the test throttles (0.25 CPU) or frees through its cgroup: throttled for
//! one night and freed the moment the confirmation starts, the night's regression is measured
//! again and cleared; throttled through the confirmation too, it is confirmed (exit 3).

mod common;
use common::wait_for;
use std::path::Path;
use std::time::Duration;
use sweepbench::pipeline::server::class::Class;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

/// The candidate's CPU quota: `Some(cpus)`, or None for none.
fn throttle(s: &ManagedServer, cpus: Option<f64>) {
    let g = s.cgroup().expect("the candidate's cgroup");
    let quota = cpus.map_or(-1, |c| (c * 100_000.0) as i64).to_string();
    let mut set = 0;
    for d in g.dirs() {
        let f = d.join("cpu.cfs_quota_us");
        if f.exists() {
            std::fs::write(&f, &quota).unwrap();
            set += 1;
        }
    }
    assert_eq!(set, 1, "one cpu controller in {:?}", g.dirs());
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_readmes_nightly_shape_confirms_with_a_fresh_paired_run() {
    let candidate = ManagedServer::start(&ServerSpec {
        class: Some(Class {
            cpus: 0.25,
            memory: 1 << 30,
        }),
        options: vec!["--innodb-buffer-pool-size=64M".into()],
        ..ServerSpec::default()
    })
    .expect("the candidate starts");
    exec_root(&candidate, &["CREATE DATABASE sbtest"]).unwrap();
    throttle(&candidate, None);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nightly.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"nightly\"\ncontrol = \"control/default\"\n[data]\ntables = 1\ntable_size = 1000\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\ndesign = \"paired\"\nwarmup = \"1s\"\nslice = \"1s\"\nbudget = \"12s\"\n[[targets]]\nname = \"control\"\nserver = {{}}\n[[targets]]\nname = \"candidate\"\nurl = \"mysql://root@127.0.0.1:{}/sbtest\"\n",
            candidate.port()
        ),
    )
    .unwrap();
    let night = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .env("TMPDIR", dir.path())
            .arg("run")
            .arg(&f)
            .arg("--results-dir")
            .arg(dir.path().join("results"))
            .args(["--quiet", "--fail-on-regression", "--confirm"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let limit = Duration::from_secs(300);
    let (code, out) = common::wait_end(night(), "night 1", limit);
    assert_eq!(
        code,
        Some(0),
        "the first night has nothing to compare with: {out}"
    );

    // Night 2: throttled while it runs, freed as its confirmation starts.
    throttle(&candidate, Some(0.25));
    let confirm_dir = dir.path().join("results/nightly-confirm");
    let child = night();
    wait_for("the confirmation to start", limit, || confirm_dir.exists());
    throttle(&candidate, None);
    let (code, out) = common::wait_end(child, "night 2", limit);
    assert_eq!(code, Some(0), "{out}");
    let summary = read(&dir.path().join("results/nightly/latest/summary.txt"));
    let (own, _) = summary
        .split_once("confirmed in a fresh paired run")
        .unwrap_or_else(|| panic!("a confirmation: {summary}"));
    assert!(
        own.lines()
            .any(|l| l.contains("/t2: ratio") && l.ends_with(" regressed")),
        "the night itself regressed: {summary}"
    );
    assert!(
        summary.contains("confirmed in a fresh paired run of the candidate and the control")
            && summary.contains("the fresh run confirms no regression"),
        "{summary}"
    );
    assert!(
        summary.trim_end().ends_with("--fail-on-regression: passed"),
        "{summary}"
    );

    // Night 3: throttled throughout. Judged against night 1 (night 2 was cleared by its
    // confirmation, not by its own figures, so it is no reference), and confirmed.
    throttle(&candidate, Some(0.25));
    let (code, out) = common::wait_end(night(), "night 3", limit);
    assert_eq!(code, Some(3), "{out}");
    let summary = read(&dir.path().join("results/nightly/latest/summary.txt"));
    assert!(
        summary.contains("the fresh run confirms a regression"),
        "{summary}"
    );
    assert!(
        summary.trim_end().ends_with("--fail-on-regression: FAILED"),
        "{summary}"
    );
    let gate: serde_json::Value =
        serde_json::from_str(&read(&dir.path().join("results/nightly/latest/gate.json"))).unwrap();
    assert_eq!(gate["confirmation"]["fails"], true, "{gate}");
}
