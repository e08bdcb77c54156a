//! Fuzzing what sweepbench reads from files it did not write: sweep files (through the plan,
//! the engine configuration of every point and the Kubernetes render), sysbench logs through
//! `import` (whose run directory must then load and render), points.csv (load and report),
//! and the agent's task (decode, range checks, the engine's configuration and a dry run).
//! Mutations of real inputs — bytes, lines, numbers and strings swapped for hostile ones,
//! lines of keys with extreme values — judged by properties that hold for every input: no
//! panic, no case longer than `CASE_LIMIT`, and what is accepted is within its stated ranges.
//!
//! Deterministic by default (a fixed seed and `SWEEPBENCH_FUZZ_CASES` cases per target,
//! 200 unless set), so CI is bounded and repeatable; `SWEEPBENCH_FUZZ_SEED=<n>` explores
//! other inputs, e.g. `SWEEPBENCH_FUZZ_SEED=$RANDOM SWEEPBENCH_FUZZ_CASES=5000 cargo test
//! --release --test fuzz`.

use proptest::test_runner::TestRunner;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sweepbench::pipeline::distributed::{clients, k8s};
use sweepbench::pipeline::results::import;
use sweepbench::pipeline::{plan::Plan, report, results, spec::SweepSpec};

#[path = "fuzz/harness.rs"]
mod harness;
use harness::*;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn read_all(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v.into_iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// A whole sweep file of every section, beside the shipped ones.
const FULL_SWEEP: &str = r#"name = "fuzz"
baseline = "a/default"
[data]
tables = 2
table_size = 1000
prepare = "auto"
[run]
workloads = ["oltp_read_only", "oltp_read_write"]
threads = [1, 2, 4]
duration = "5s"
warmup = "1s"
repeats = 2
report_interval = "10s"
[workload_options]
rand_type = "uniform"
point_selects = 10
range_size = 100
mysql_ignore_errors = [1213, 1205]
[[targets]]
name = "a"
url = "mysql://sbtest:pw@127.0.0.1:3306/sbtest?ssl-mode=PREFERRED"
[[targets]]
name = "b"
server = { basedir = "/usr" }
[[configs]]
name = "default"
[[configs]]
name = "lazy"
vars = { innodb_flush_log_at_trx_commit = 2, sync_binlog = 0 }
[[exclude]]
target = "a"
threads = [4]
"#;

const SWEEP_LINES: &[&str] = &[
    "repeats = 2147483647",
    "repeats = 10000",
    "threads = [0]",
    "threads = [1048576]",
    "threads = \"auto\"",
    "threads = { from = 1, to = 4294967295, p99_ms = 1e-300 }",
    "rates = \"auto\"",
    "sla = { p99_ms = inf }",
    "sla = { p99_ms = 5, max_steps = 4294967295 }",
    "design = \"duet\"",
    "design = \"paired\"",
    "budget = \"1s\"",
    "slice = \"100000000h\"",
    "interleave = \"100ms\"",
    "pin = \"pairs\"",
    "clients = [64, 16]",
    "clients = 4294967295",
    "rate = 18446744073709551615",
    "point_timeout = \"0s\"",
    "order = \"interleaved\"",
    "drivers = [\"native\", \"sysbench\"]",
    "table_size = 4294967295",
    "tables = 100000",
    "restart = \"per-point\"",
    "[executor]\nkind = \"kubernetes\"\nimage = \"x\"\nnamespace = \"bench\"",
    "[executor]\nkind = \"kubernetes\"\ncpu = \"lots\"\nmemory = \"-1Gi\"",
    "[[targets]]\nname = \"p\"\nproxy = { kind = \"haproxy\", target = \"a\" }",
    "[[targets]]\nname = \"s\"\nsocket = \"/nonexistent.sock\"",
    "[[configs]]\nname = \"x\"\nvars = { \"a; DROP\" = 1 }",
    "[[configs]]\nname = \"x\"\nmycnf = \"/etc/passwd\"",
    "[[include]]\nthreads = [3]",
    "point_selects = 4294967295",
    "range_size = 0",
    "rand_type = \"pareto\"",
    "rand_pareto_h = 2",
    "create_table_options = \"ENGINE=x\"",
    "mysql_ignore_errors = \"all\"",
    "percentile = 101",
    "# mysql://root:Old Pass9zz@db.example/sbtest",
    "[[targets]]\nname = \"m\"\nsynthetic = { seed = 7 }",
    "synthetic = { seed = 1, sigma = 0.999, kappa = 1, burst = 1, burst_loss = 0.99 }",
    "synthetic = { seed = 1, lambda = 1e9, latency_spread = 3, errors = 100 }",
    "synthetic = { seed = 1, max_connections = 0 }",
];

#[test]
fn sweep_files_never_panic_or_hang_and_what_plans_is_bounded() {
    // The shipped sweeps, with the unpacked servers they name replaced by this machine's.
    let mut seeds: Vec<Vec<u8>> = read_all("sweeps", "toml")
        .into_iter()
        .map(|t| {
            let t = String::from_utf8(t).unwrap();
            let mut out = String::new();
            for line in t.lines() {
                match line.find("basedir = \"") {
                    Some(i) => {
                        let end = line[i + 11..].find('"').map_or(line.len(), |e| i + 11 + e);
                        out.push_str(&format!("{}basedir = \"/usr{}", &line[..i], &line[end..]));
                    }
                    None => out.push_str(line),
                }
                out.push('\n');
            }
            out.into_bytes()
        })
        .collect();
    seeds.push(FULL_SWEEP.as_bytes().to_vec());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.toml");
    let tally = Arc::new(Tally::default());
    let mut r = runner(1);
    // At most two mutations: a sweep file is strict, and three refused nine cases in ten at
    // the reader, so too few reached the plan, the engine's configuration and the render.
    r.run(&mutated(seeds.len(), 2), |(seed, muts)| {
        let text = apply(&seeds[seed], &muts, SWEEP_LINES);
        std::fs::write(&path, &text).unwrap();
        let path = path.clone();
        let tally = tally.clone();
        bounded("sweep file", move || {
            let Ok(spec) = SweepSpec::load(&path) else {
                tally.add("refused");
                return Ok(());
            };
            tally.add("planned");
            let plan = Plan::build(&spec, &[]);
            if spec.run.repeats > sweepbench::pipeline::spec::MAX_REPEATS {
                return Err(format!("repeats {} accepted", spec.run.repeats));
            }
            if plan.points.len() <= 2_000 {
                if k8s::render(&spec, &plan, Some(3)).is_ok() {
                    tally.add("rendered");
                }
                let _ = k8s::render(&spec, &plan, None);
            }
            for p in plan.points.iter().take(50) {
                let c = spec.engine_config(p.workload, p.threads, Default::default());
                if c.threads == 0 || c.wl.tables == 0 || c.wl.table_size == 0 {
                    return Err(format!("a point of {c:?} threads/tables/rows accepted"));
                }
            }
            Ok(())
        })
    })
    .unwrap();
    let m = tally.show("sweep files");
    assert!(
        m.get("planned").copied().unwrap_or(0) * 10 >= cases(),
        "{m:?}"
    );
}

const LOG_LINES: &[&str] = &[
    "    transactions:                        -26087 (-869.52 per sec.)",
    "    transactions:                        0      (0.00 per sec.)",
    "    total time:                          0.0000s",
    "    total time:                          1e400s",
    "Number of threads: 0",
    "Number of threads: 4294967296",
    "[ 1s ] thds: 4 tps: inf qps: 1.0 (r/w/o: 1.0/0.0/0.0) lat (ms,95%): 1.0 err/s: 0.00 reconn/s: 0.00",
    "[ 0s ] thds: 4 tps: 100.0 qps: 1.0 (r/w/o: 1.0/0.0/0.0) lat (ms,95%): 1.0 err/s: 0.00 reconn/s: 0.00",
    "    95th percentile:                     nan",
    "    queries:                             18446744073709551615 (1e308 per sec.)",
    "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)",
    "Latency (ms):",
];

#[test]
fn sysbench_logs_import_into_runs_that_load_and_render() {
    let seeds = read_all("tests/fixtures", "log");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fuzzed.log");
    let n = std::sync::atomic::AtomicU32::new(0);
    let tally = Arc::new(Tally::default());
    let mut r = runner(2);
    r.run(&inputs(seeds.len()), |(seed, muts)| {
        let text = apply(&seeds[seed], &muts, LOG_LINES);
        std::fs::write(&log, &text).unwrap();
        let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out = dir.path().join(format!("run{k}"));
        let log = log.clone();
        let tally = tally.clone();
        bounded("sysbench log", move || {
            let p = import::parse(&String::from_utf8_lossy(&text));
            if let Ok(rec) = import::record(&p, "imported", 1, None) {
                if rec.threads == 0
                    || rec.transactions == 0
                    || !rec.tps.is_finite()
                    || rec.tps <= 0.0
                {
                    return Err(format!("an impossible point accepted: {rec:?}"));
                }
            }
            if import::import(&[log], &out, Some("imported"), None).is_ok() {
                tally.add("imported");
                report::write(&out, None)
                    .map_err(|e| format!("an imported run does not render: {e:#}"))?;
                let points = results::load_points(&out)
                    .map_err(|e| format!("an imported run does not load: {e:#}"))?;
                if points.is_empty() {
                    return Err("an imported run holds no point".into());
                }
                let _ = std::fs::remove_dir_all(&out);
            } else {
                tally.add("refused");
            }
            Ok(())
        })
    })
    .unwrap();
    let m = tally.show("sysbench logs");
    assert!(
        m.get("imported").copied().unwrap_or(0) * 10 >= cases(),
        "{m:?}"
    );
}

/// Sweeps on synthetic targets, sequential and paired, that the next target mutates and runs.
const SYNTHETIC_SWEEPS: &[&str] = &[
    "name = \"s\"\n[run]\nworkloads = [\"oltp_read_only\", \"oltp_point_select\"]\nthreads = [1, 4, 16]\nduration = \"5s\"\nwarmup = \"1s\"\nrepeats = 2\ndesign = \"sequential\"\n[workload_options]\npoint_selects = 10\n[[targets]]\nname = \"m\"\nsynthetic = { seed = 7, noise = 0.05, drift = 0.1, burst = 0.3, errors = 0.01 }\n[[configs]]\nname = \"default\"\n",
    "name = \"p\"\nbaseline = \"a/default\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [2, 8]\nwarmup = \"1s\"\nslice = \"2s\"\nbudget = \"2m\"\n[[targets]]\nname = \"a\"\nsynthetic = { seed = 3 }\n[[targets]]\nname = \"b\"\nsynthetic = { seed = 3, lambda = 300, configs = { default = 1.1 } }\n",
    "name = \"auto\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = \"auto\"\nduration = \"3s\"\nrepeats = 1\nrates = \"auto\"\nsla = { p99_ms = 20, max_steps = 3 }\n[[targets]]\nname = \"m\"\nsynthetic = { seed = 5, max_connections = 100 }\n",
];

/// A sweep on synthetic targets that the file reader accepts runs to its end: any exit but
/// a crash (101, a signal), a points.csv that loads, no panic on standard error. The model's
/// virtual time keeps each run short; plans of more than 300 points or points over a
/// minute are skipped (they are accepted, just long).
#[test]
fn synthetic_sweeps_that_plan_run_to_their_end() {
    let seeds: Vec<Vec<u8>> = SYNTHETIC_SWEEPS
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicU32::new(0);
    let tally = Arc::new(Tally::default());
    let mut r = runner(5);
    let mut config = r.config().clone();
    config.cases = (cases() / 4).max(1);
    let mut r = TestRunner::new_with_rng(config, r.new_rng());
    // One mutation a case: a run is the dearest step, and most second mutations stop the
    // file at the reader.
    r.run(&mutated(seeds.len(), 1), |(seed, muts)| {
        let text = apply(&seeds[seed], &muts, SWEEP_LINES);
        let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let case = dir.path().join(format!("case{k}"));
        std::fs::create_dir_all(&case).unwrap();
        let path = case.join("fuzz.toml");
        std::fs::write(&path, &text).unwrap();
        let tally = tally.clone();
        bounded("synthetic sweep", move || {
            let Ok(spec) = SweepSpec::load(&path) else {
                tally.add("refused");
                return Ok(());
            };
            let synthetic = spec.targets.iter().all(|t| {
                matches!(
                    t.kind,
                    sweepbench::pipeline::spec::target::TargetKind::Synthetic(_)
                )
            });
            let plan = Plan::build(&spec, &[]);
            if !synthetic || plan.points.len() > 300 || spec.run.duration_s > 60 {
                tally.add("not run");
                return Ok(());
            }
            let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
                .arg("run")
                .arg(&path)
                .arg("--quiet")
                .arg("--results-dir")
                .arg(case.join("results"))
                .env("TMPDIR", &case)
                .output()
                .map_err(|e| e.to_string())?;
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // 2 is a refusal, printed once by the command's error printer (a blocking
            // finding, filters that leave nothing); anything else but 0, 1, 3 is a crash.
            match out.status.code() {
                Some(0 | 1 | 3) => {}
                Some(2) if said.contains("sweepbench run: ") => {}
                other => return Err(format!("exit {other:?}: {said}")),
            }
            if said.contains("panicked") {
                return Err(said);
            }
            if out.status.code() != Some(2) {
                let run =
                    sweepbench::pipeline::sweep::latest_run(&case.join("results"), &spec.name)
                        .ok_or("no run directory")?;
                results::load_points(&run).map_err(|e| format!("points.csv: {e:#}"))?;
                tally.add("ran");
            }
            let _ = std::fs::remove_dir_all(&case);
            Ok(())
        })
    })
    .unwrap();
    let m = tally.show("synthetic sweeps");
    assert!(
        m.get("ran").copied().unwrap_or(0) * 10 >= cases() / 4,
        "{m:?}"
    );
}

/// A points.csv as sweepbench writes it: the fixtures imported.
fn points_csv_seeds(dir: &Path) -> Vec<Vec<u8>> {
    let logs: Vec<PathBuf> = [
        "sysbench-1.0-full.log",
        "sysbench-0.5.log",
        "sysbench-1.0-intervals-only.log",
    ]
    .iter()
    .map(|l| repo(&format!("tests/fixtures/{l}")))
    .collect();
    let out = dir.join("seed-run");
    import::import(&logs, &out, Some("seed"), None).expect("importing the fixtures");
    report::write(&out, None).expect("rendering the fixtures' run");
    vec![std::fs::read(out.join("points.csv")).unwrap()]
}

#[test]
fn points_csv_loads_only_finite_figures_and_the_report_renders() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = points_csv_seeds(dir.path());
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let tally = Arc::new(Tally::default());
    let mut r = runner(3);
    r.run(&inputs(seeds.len()), |(seed, muts)| {
        let text = apply(&seeds[seed], &muts, &[]);
        std::fs::write(run.join("points.csv"), &text).unwrap();
        let run = run.clone();
        let tally = tally.clone();
        bounded("points.csv", move || {
            let Ok(points) = results::load_points(&run) else {
                tally.add("refused");
                return Ok(());
            };
            tally.add("loaded");
            for p in &points {
                if let Some((name, v)) = p
                    .figures()
                    .into_iter()
                    .find(|(_, v)| !v.is_finite() || *v < 0.0)
                {
                    return Err(format!("{}: {name} = {v} loaded", p.point_id));
                }
            }
            if report::write(&run, None).is_ok() {
                tally.add("reported");
            }
            Ok(())
        })
    })
    .unwrap();
    let m = tally.show("points.csv");
    assert!(
        m.get("reported").copied().unwrap_or(0) * 10 >= cases(),
        "{m:?}"
    );
}

/// The hello line `run` sends an agent: a real task for a point of FULL_SWEEP.
fn hello_seed() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        FULL_SWEEP.replace("repeats = 2", "repeats = 2\nclients = 2"),
    )
    .unwrap();
    let spec = SweepSpec::load(&path).unwrap();
    let plan = Plan::build(&spec, &[]);
    let target = spec.targets.iter().find(|t| t.name == "a").unwrap();
    let conn = match &target.kind {
        sweepbench::pipeline::spec::target::TargetKind::External(c) => c.clone(),
        _ => unreachable!("target a is external"),
    };
    let p = plan.points.iter().find(|p| p.target == "a").unwrap();
    let task = clients::Task::new(&spec, p, &conn, 1).unwrap();
    serde_json::to_vec(&clients::Hello {
        task,
        password: Some("pw".into()),
    })
    .unwrap()
}

/// A task is one JSON line: a line inserted breaks it, so its mutations are its bytes,
/// numbers and strings.
const TASK_LINES: &[&str] = &[];

#[test]
fn agent_tasks_are_refused_or_run() {
    let seeds = [hello_seed()];
    let tally = Arc::new(Tally::default());
    let mut r = runner(4);
    r.run(&inputs(seeds.len()), |(seed, muts)| {
        let text = apply(&seeds[seed], &muts, TASK_LINES);
        let tally = tally.clone();
        bounded("agent task", move || {
            let Ok(hello) = serde_json::from_slice::<clients::Hello>(&text) else {
                tally.add("not a task");
                return Ok(());
            };
            let Ok(mut c) = hello.task.engine_config(hello.password) else {
                tally.add("refused");
                return Ok(());
            };
            tally.add("ran");
            // Whatever was accepted is within the ranges the engine assumes.
            assert!(c.rate <= sweepbench::engine::config::MAX_RATE, "{}", c.rate);
            assert!(
                sweepbench::engine::config::check_engine_name(&c.wl.storage_engine).is_ok(),
                "{:?}",
                c.wl.storage_engine
            );
            // A dry run (no server) of what the task asks, a few events on at most two
            // threads: the values reach the engine as they would in a real point.
            c.dry_run = true;
            c.quiet = true;
            c.threads = c.threads.min(2);
            c.events = 5;
            c.time_s = 2;
            c.warmup_s = 0;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            struct Quiet;
            impl sweepbench::engine::exec::Observer for Quiet {}
            let _ = rt.block_on(sweepbench::engine::exec::run(&c, &mut Quiet));
            Ok(())
        })
    })
    .unwrap();
    let m = tally.show("agent tasks");
    assert!(m.get("ran").copied().unwrap_or(0) * 10 >= cases(), "{m:?}");
}
