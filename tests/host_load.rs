//! The host's load as the host is (#61): a managed sweep run pinned to CPU 0 (as `taskset -c
//! 0`, or a cpuset, runs it) beside a real process spinning on a CPU. What other processes
//! took is counted over the CPUs the run may use: a neighbour on the other CPU is not the
//! run's (about 0, never the 100 % the whole host's time over one CPU read), the same
//! neighbour on the run's own CPU is. One test, so nothing else of this binary runs beside it.

mod common;
use common::sweeps::*;
use common::*;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs a one-point managed sweep pinned to CPU 0 while a thread spins on `neighbour`;
/// the point's record. At a fixed rate (200/s) the run takes a little of its CPU, so a
/// neighbour beside it takes most (94 % here), far from the bounds on a busy host.
fn pinned_run(neighbour: usize) -> sweepbench::pipeline::results::PointRecord {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"pinned\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"4s\"\nwarmup = \"1s\"\nrepeats = 1\nrate = 200\ndesign = \"sequential\"\n[[targets]]\nname = \"local\"\nserver = {}\n";
    let f = sweep_file(dir.path(), "pinned", body);
    let stop = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            sweepbench::affinity::pin(0, &[neighbour]).unwrap();
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        });
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
        cmd.env("TMPDIR", dir.path())
            .arg("run")
            .arg(&f)
            .arg("--results-dir")
            .arg(dir.path().join("results"));
        // SAFETY: sched_setaffinity is async-signal-safe; the child is pinned before exec,
        // so it and the server it starts run on CPU 0 only.
        unsafe {
            cmd.pre_exec(|| sweepbench::affinity::pin(0, &[0]));
        }
        let out = cmd.output().unwrap();
        stop.store(true, Ordering::Relaxed);
        out
    });
    assert!(out.status.success(), "{}", text(&out));
    let run = dir.path().join("results/pinned/latest");
    let rows = sweepbench::pipeline::results::load_points(&run).unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["host"]["cpus_allowed"], 1, "{manifest}");
    rows.into_iter().next().unwrap()
}

#[test]
fn others_share_is_counted_over_the_cpus_the_run_may_use() {
    assert!(
        std::thread::available_parallelism().unwrap().get() >= 2,
        "this test needs two CPUs: one for the run, one for the neighbour"
    );
    let apart = pinned_run(1);
    let others = apart
        .others_cpu_pct
        .expect("a managed point measures the host");
    assert!(
        others < 20.0,
        "a neighbour on the other CPU is not the run's: others {others} % ({apart:?})"
    );
    assert!(apart.steal_pct.is_some());
    let beside = pinned_run(0);
    let others = beside.others_cpu_pct.unwrap();
    eprintln!(
        "others' share: {:?} % with the neighbour apart, {others} % beside the run",
        apart.others_cpu_pct
    );
    assert!(
        others >= 35.0,
        "a neighbour on the run's own CPU: others {others} % ({beside:?})"
    );
}
