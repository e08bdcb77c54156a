//! sysbench's host tests, which need no server: `cpu` and `memory` (cpu.rs, memory.rs) on one
//! runner — `--threads` threads for `--time` seconds or `--events` events, each event timed —
//! with sysbench 1.0.20's header, interval lines and report, byte for byte where sysbench's
//! are fixed. DBAs characterise a host with them before they benchmark its server.

mod cpu;
mod fileio;
mod memory;

pub use cpu::primes_below;

use super::options::RawOptions;
use super::output::sysbench::{banner, general};
use crate::engine::config::EngineConfig;
use crate::engine::exec::RunReport;
use crate::engine::metrics::{percentile_ms, total_hist, Counts, TotalHist};
use crate::exit::Exit;
use anyhow::bail;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// sysbench's built-in tests that need no server.
pub fn is_host_test(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "fileio")
}

/// sysbench's SIZE values: a number with an optional b, k, m, g or t (powers of 1024).
fn size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'b' | 'B' => (&s[..s.len() - 1], 1),
        'k' | 'K' => (&s[..s.len() - 1], 1 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        't' | 'T' => (&s[..s.len() - 1], 1u64 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// The general options every host test takes.
struct Limits {
    threads: u32,
    time_s: u64,
    events: u64,
    report_interval_s: u64,
    percentile: u32,
}

impl Limits {
    fn of(raw: &RawOptions) -> anyhow::Result<Limits> {
        let threads = raw.int("threads");
        if threads == 0 || threads > 100_000 {
            bail!(
                "FATAL: Invalid value for --threads: {}.",
                raw.get("threads")
            );
        }
        Ok(Limits {
            threads: threads as u32,
            time_s: raw.int("time").min(crate::engine::config::MAX_SECONDS),
            events: raw.int("events"),
            report_interval_s: raw.int("report_interval"),
            percentile: raw.int("percentile").min(100) as u32,
        })
    }
}

/// What makes one host test: its options' lines in the header, one event on a thread's
/// state, a per-thread event limit of its own, its interval line and its report's head.
trait HostTest: Sync {
    type Thread: Send;
    /// The lines between "Initializing random number generator…" and "Initializing worker
    /// threads...", blank lines included.
    fn describe(&self) -> String;
    fn thread(&self, i: usize) -> Self::Thread;
    fn event(&self, t: &mut Self::Thread);
    /// Events each thread runs at most (memory's total size), None: no limit of its own.
    fn per_thread(&self, threads: u32) -> Option<u64>;
    /// Whether the interval line shows a latency percentile (then each event's latency
    /// also goes to the thread's interval histogram, under its own lock).
    fn interval_latency(&self) -> bool;
    fn interval_line(&self, events: u64, secs: f64, threads: u32, pct: u32, lat_ms: f64) -> String;
    /// What comes before "General statistics:".
    fn cumulative(&self, events: u64, secs: f64) -> String;
    /// After the threads ended, before the report (fileio's fsync at the end).
    fn done(&self) {}
}

/// `bench cpu|memory COMMAND`: `run` and `help`; prepare, cleanup and prewarm are refused as
/// sysbench refuses them.
pub fn main(name: &str, command: &str, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    let no_mode = name == "fileio" && command == "run" && !raw.given("file_test_mode");
    if verbose && (command != "run" || no_mode) {
        println!("{}\n", banner());
    }
    if no_mode {
        // sysbench's answer, on stdout with the test's options.
        println!(
            "FATAL: Missing required argument: --file-test-mode\n\n{}",
            fileio::HELP
        );
        return Ok(Exit::Failed);
    }
    match (command, name) {
        ("help", "cpu") => println!("{}", cpu::HELP),
        ("help", "fileio") => println!("{}", fileio::HELP),
        ("help", _) => println!("{}", memory::HELP),
        ("run", "cpu") => return run(&cpu::Cpu::of(raw)?, raw, verbose),
        ("run", "fileio") => return run(&fileio::FileIo::of(raw, true)?, raw, verbose),
        ("run", _) => return run(&memory::Memory::of(raw)?, raw, verbose),
        ("prepare", "fileio") => fileio::prepare(&fileio::FileIo::of(raw, false)?)?,
        ("cleanup", "fileio") => fileio::cleanup(&fileio::FileIo::of(raw, false)?),
        ("prepare" | "cleanup" | "prewarm" | "warmup", _) => {
            bail!("'{name}' test does not implement the '{command}' command.")
        }
        (other, _) => bail!("FATAL: unknown command '{other}'. Supported commands: run, help"),
    }
    Ok(Exit::Ok)
}

/// What one thread measured: its events and latencies (all, and since the last interval).
struct Share {
    counts: Counts,
    hist: TotalHist,
    min_max: Option<(u64, u64)>,
}

fn run<T: HostTest>(test: &T, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    let lim = Limits::of(raw)?;
    let per_thread = test.per_thread(lim.threads);
    if lim.time_s == 0 && lim.events == 0 {
        if per_thread.is_none() {
            bail!("FATAL: Neither --time nor --events is set: the test would never end; give one of them");
        }
        // sysbench's words, though the test's own total size ends it.
        eprintln!("WARNING: Both event and time limits are disabled, running an endless test");
    }
    crate::interrupt::install();
    if verbose {
        let mut s = format!(
            "{}\n\nRunning the test with following options:\nNumber of threads: {}\n",
            banner(),
            lim.threads
        );
        if lim.report_interval_s > 0 {
            let _ = writeln!(
                s,
                "Report intermediate results every {} second(s)",
                lim.report_interval_s
            );
        }
        if raw.given("rand_seed") && raw.int("rand_seed") != 0 {
            let _ = writeln!(
                s,
                "Initializing random number generator from seed ({}).",
                raw.int("rand_seed")
            );
        } else {
            s.push_str("Initializing random number generator from current time\n");
        }
        let _ = write!(
            s,
            "\n\n{}Initializing worker threads...\n\nThreads started!\n\n",
            test.describe()
        );
        print!("{s}");
        let _ = std::io::stdout().flush();
    }
    let progress: Vec<AtomicU64> = (0..lim.threads).map(|_| AtomicU64::new(0)).collect();
    let intervals: Vec<Mutex<TotalHist>> =
        (0..lim.threads).map(|_| Mutex::new(total_hist())).collect();
    let stop = AtomicBool::new(false);
    let left = AtomicU64::new(if lim.events > 0 { lim.events } else { u64::MAX });
    let started = Instant::now();
    let shares: Vec<Share> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..lim.threads as usize)
            .map(|i| {
                let (stop, left) = (&stop, &left);
                let (progress, interval) = (&progress[i], &intervals[i]);
                scope.spawn(move || {
                    let mut state = test.thread(i);
                    let mut s = Share {
                        counts: Counts::default(),
                        hist: total_hist(),
                        min_max: None,
                    };
                    let mut mine = per_thread.unwrap_or(u64::MAX);
                    while !stop.load(Ordering::Relaxed) && mine > 0 {
                        // An event is taken before it runs, so --events is never exceeded.
                        let taken = left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                            n.checked_sub(1)
                        });
                        if taken.is_err() {
                            break;
                        }
                        mine -= 1;
                        let t0 = Instant::now();
                        test.event(&mut state);
                        let ns = (t0.elapsed().as_nanos() as u64).max(1);
                        s.counts.events += 1;
                        s.counts.lat_sum_ns += ns;
                        let _ = s.hist.record(ns);
                        s.min_max = Some(match s.min_max {
                            None => (ns, ns),
                            Some((a, b)) => (a.min(ns), b.max(ns)),
                        });
                        progress.store(s.counts.events, Ordering::Relaxed);
                        if test.interval_latency() {
                            // The thread's own lock, taken by the watcher once an interval.
                            let mut h = interval.lock().unwrap_or_else(|p| p.into_inner());
                            let _ = h.record(ns);
                        }
                    }
                    s
                })
            })
            .collect();
        watch(test, &lim, &progress, &intervals, &stop, &workers, started);
        workers
            .into_iter()
            .map(|w| w.join().expect("a host test's thread panicked"))
            .collect()
    });
    test.done();
    let elapsed = started.elapsed().as_secs_f64();
    let mut report = RunReport {
        threads: lim.threads,
        elapsed_s: elapsed,
        window_s: elapsed,
        totals: Counts::default(),
        hist: total_hist(),
        min_max_ns: None,
        per_thread: Vec::new(),
        intervals: Vec::new(),
        interval_hists: Vec::new(),
        fatal: None,
        unfinished: None,
        interrupted: crate::interrupt::requested(),
        ignored_by_code: Default::default(),
    };
    for s in shares {
        report.totals.events += s.counts.events;
        report.totals.lat_sum_ns += s.counts.lat_sum_ns;
        let _ = report.hist.add(&s.hist);
        report.min_max_ns = match (report.min_max_ns, s.min_max) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        report.per_thread.push(s.counts);
    }
    if verbose {
        let mut o = EngineConfig::new(crate::engine::config::WorkloadKind::PointSelect);
        o.percentile = lim.percentile;
        print!(
            "{}{}",
            test.cumulative(report.totals.events, elapsed.max(1e-9)),
            general(&report, &o)
        );
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Ok
    })
}

/// Waits for the end (time, every thread done, or a signal), printing the test's interval line
/// every `report_interval_s`.
fn watch<T: HostTest, R>(
    test: &T,
    lim: &Limits,
    progress: &[AtomicU64],
    intervals: &[Mutex<TotalHist>],
    stop: &AtomicBool,
    workers: &[std::thread::ScopedJoinHandle<'_, R>],
    t0: Instant,
) {
    let deadline = (lim.time_s > 0).then(|| t0 + Duration::from_secs(lim.time_s));
    let every = (lim.report_interval_s > 0).then(|| Duration::from_secs(lim.report_interval_s));
    let mut next = every.map(|e| t0 + e);
    let (mut last, mut last_events) = (t0, 0u64);
    loop {
        let now = Instant::now();
        let done = deadline.is_some_and(|d| now >= d)
            || workers.iter().all(|w| w.is_finished())
            || crate::interrupt::requested();
        if done {
            stop.store(true, Ordering::Relaxed);
            return;
        }
        if let Some(at) = next.filter(|&at| now >= at) {
            let events: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
            let mut h = total_hist();
            for i in intervals {
                let mut x = i.lock().unwrap_or_else(|p| p.into_inner());
                let _ = h.add(&*x);
                x.reset();
            }
            let secs = now.duration_since(last).as_secs_f64().max(1e-9);
            println!(
                "[ {:.0}s ] {}",
                now.duration_since(t0).as_secs_f64(),
                test.interval_line(
                    events - last_events,
                    secs,
                    lim.threads,
                    lim.percentile,
                    percentile_ms(&h, lim.percentile as f64)
                )
            );
            let _ = std::io::stdout().flush();
            (last, last_events) = (now, events);
            next = every.map(|e| at + e);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
