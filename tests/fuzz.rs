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

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use sweepbench::pipeline::distributed::{clients, k8s};
use sweepbench::pipeline::results::import;
use sweepbench::pipeline::{plan::Plan, report, results, spec::SweepSpec};

/// A case that takes longer than this is a hang (the slowest accepted inputs take well under
/// a second in a debug build).
const CASE_LIMIT: Duration = Duration::from_secs(20);

fn cases() -> u32 {
    std::env::var("SWEEPBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn runner(target: u8) -> TestRunner {
    let seed: u64 = std::env::var("SWEEPBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261201);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8] = target;
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs `f` on its own thread and fails the case if it panics or outlasts `CASE_LIMIT`.
fn bounded(
    what: &str,
    f: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(), TestCaseError> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(()) => match handle.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TestCaseError::fail(format!("{what}: {e}"))),
            Err(_) => Err(TestCaseError::fail(format!("{what}: panicked"))),
        },
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail(format!("{what}: panicked")))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "{what}: still running after {} s (a hang)",
            CASE_LIMIT.as_secs()
        ))),
    }
}

/// How many cases got how far, printed at the end of a target (`--nocapture`): a fuzzer
/// whose inputs are all refused at the first step tests nothing beyond it.
#[derive(Default)]
struct Tally(std::sync::Mutex<std::collections::BTreeMap<&'static str, u32>>);

impl Tally {
    fn add(&self, what: &'static str) {
        *self.0.lock().unwrap().entry(what).or_default() += 1;
    }

    fn show(&self, target: &str) -> std::collections::BTreeMap<&'static str, u32> {
        let m = self.0.lock().unwrap().clone();
        eprintln!("{target}: {m:?}");
        m
    }
}

/// Numbers a hostile or careless file may hold.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "255",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "-9223372036854775808",
    "1e308",
    "1e400",
    "-1e308",
    "0.0",
    "0.5",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "1_000",
    "0x10",
    "1.5e3",
    "007",
    "",
];

/// Strings a hostile or careless file may hold.
const STRINGS: &[&str] = &[
    "", " ", "..", ".", "/", "../../etc/passwd", "a/b", "x'; DROP TABLE sbtest1; --",
    "\\\\", "\u{0}", "é", "\u{202e}evil", "<script>alert(1)</script>", "auto", "off", "0s",
    "100000000h", "1ms", "-1s", "nan", "mysql://u:p@localhost:3307/db", "mysql://", "oltp_nosuch",
    "oltp_read_only", "sysbench", "native", "kubernetes", "duet", "paired", "sequential",
    "interleaved", "250ms", "pairs", "REQUIRED", "VERIFY_CA", "%FF", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// XOR a byte.
    Byte(usize, u8),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// The nth number in the text becomes NUMBERS[k].
    Number(usize, usize),
    /// The nth double-quoted string's contents become STRINGS[k].
    Str(usize, usize),
    Truncate(usize),
    /// One of the target's extra lines inserted before line n.
    Insert(usize, usize),
}

/// Mutations weighted towards those that keep a file readable (numbers, strings, whole
/// lines), so that most cases reach past the parser into what uses its values.
fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<usize>(), 1u8..=255).prop_map(|(a, b)| Mutation::Byte(a, b)),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        4 => (any::<usize>(), 0..NUMBERS.len()).prop_map(|(a, k)| Mutation::Number(a, k)),
        3 => (any::<usize>(), 0..STRINGS.len()).prop_map(|(a, k)| Mutation::Str(a, k)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(a, k)| Mutation::Insert(a, k)),
    ]
}

/// Byte ranges of the numbers in `t` (digits with an optional sign, point and exponent).
fn numbers(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].is_ascii_digit() {
            let mut s = i;
            if s > 0 && t[s - 1] == b'-' {
                s -= 1;
            }
            let mut e = i;
            while e < t.len() && (t[e].is_ascii_digit() || matches!(t[e], b'.' | b'e' | b'_')) {
                e += 1;
            }
            out.push((s, e));
            i = e;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the contents of the double-quoted strings in `t`.
fn strings(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, &b) in t.iter().enumerate() {
        if b == b'"' {
            match open.take() {
                None => open = Some(i + 1),
                Some(s) => out.push((s, i)),
            }
        } else if b == b'\n' {
            open = None;
        }
    }
    out
}

fn lines(t: &[u8]) -> Vec<Vec<u8>> {
    t.split(|&b| b == b'\n').map(|l| l.to_vec()).collect()
}

fn apply(seed: &[u8], muts: &[Mutation], extra: &[&str]) -> Vec<u8> {
    let mut t = seed.to_vec();
    for m in muts {
        match *m {
            Mutation::Byte(at, x) if !t.is_empty() => {
                let n = t.len();
                t[at % n] ^= x;
            }
            Mutation::DeleteLine(at) | Mutation::DuplicateLine(at) => {
                let mut ls = lines(&t);
                let k = at % ls.len();
                if matches!(m, Mutation::DeleteLine(_)) {
                    ls.remove(k);
                } else {
                    let l = ls[k].clone();
                    ls.insert(k, l);
                }
                t = ls.join(&b'\n');
            }
            Mutation::SwapLines(a, b) => {
                let mut ls = lines(&t);
                let n = ls.len();
                ls.swap(a % n, b % n);
                t = ls.join(&b'\n');
            }
            Mutation::Number(at, k) => {
                let ns = numbers(&t);
                if let Some(&(s, e)) = ns.get(at % ns.len().max(1)) {
                    t.splice(s..e, NUMBERS[k].bytes());
                }
            }
            Mutation::Str(at, k) => {
                let ss = strings(&t);
                if let Some(&(s, e)) = ss.get(at % ss.len().max(1)) {
                    t.splice(s..e, STRINGS[k].bytes());
                }
            }
            Mutation::Truncate(at) if !t.is_empty() => {
                let n = t.len();
                t.truncate(at % n);
            }
            Mutation::Insert(at, k) if !extra.is_empty() => {
                let mut ls = lines(&t);
                let n = ls.len();
                ls.insert(at % (n + 1), extra[k % extra.len()].as_bytes().to_vec());
                t = ls.join(&b'\n');
            }
            _ => {}
        }
    }
    t
}

fn inputs(seeds: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    mutated(seeds, 3)
}

/// A seed and 1 to `most` mutations of it.
fn mutated(seeds: usize, most: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0..seeds, proptest::collection::vec(mutation(), 1..=most))
}

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
