//! `bench cpu`: sysbench 1.0.20's CPU test — each event counts the primes below
//! `--cpu-max-prime` by trial division, in `--threads` threads for `--time` seconds or
//! `--events` events — with its header, interval lines and report, byte for byte where
//! sysbench's are fixed. DBAs characterise a host with it before they benchmark its server.

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

/// sysbench's built-in tests that need no server (only `cpu` so far).
pub fn is_host_test(name: &str) -> bool {
    name == "cpu"
}

/// One event: the primes below `max_prime`, counted as sysbench's `cpu_execute_event` does
/// (trial division up to √c, in 64-bit integers). Returns the count, so the work is used.
pub fn primes_below(max_prime: u64) -> u64 {
    let mut n = 0;
    for c in 3..max_prime {
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        while (l as f64) <= t {
            if c % l == 0 {
                break;
            }
            l += 1;
        }
        if l as f64 > t {
            n += 1;
        }
    }
    n
}

/// What one thread measured: its events and latencies (all, and since the last interval).
struct Share {
    counts: Counts,
    hist: TotalHist,
    interval: TotalHist,
    min_max: Option<(u64, u64)>,
}

/// The run's settings, from sysbench's options.
struct Cpu {
    max_prime: u64,
    threads: u32,
    time_s: u64,
    events: u64,
    report_interval_s: u64,
    percentile: u32,
}

impl Cpu {
    fn of(raw: &RawOptions) -> anyhow::Result<Cpu> {
        let max_prime = raw.int("cpu_max_prime");
        if max_prime == 0 || max_prime > i32::MAX as u64 {
            bail!(
                "FATAL: Invalid value of cpu-max-prime: {}.",
                raw.get("cpu_max_prime")
            );
        }
        let threads = raw.int("threads");
        if threads == 0 || threads > 100_000 {
            bail!(
                "FATAL: Invalid value for --threads: {}.",
                raw.get("threads")
            );
        }
        let c = Cpu {
            max_prime,
            threads: threads as u32,
            time_s: raw.int("time").min(crate::engine::config::MAX_SECONDS),
            events: raw.int("events"),
            report_interval_s: raw.int("report_interval"),
            percentile: raw.int("percentile").min(100) as u32,
        };
        if c.time_s == 0 && c.events == 0 {
            bail!("FATAL: Neither --time nor --events is set: the test would never end; give one of them");
        }
        Ok(c)
    }
}

/// `bench cpu COMMAND`: `run` and `help`; prepare, cleanup and prewarm are refused as
/// sysbench refuses them.
pub fn main(command: &str, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    let banner_line = || {
        if verbose {
            println!("{}\n", banner());
        }
    };
    match command {
        "help" => {
            banner_line();
            println!(
                "cpu options:\n  --cpu-max-prime=N upper limit for primes generator [10000]\n"
            );
            Ok(Exit::Ok)
        }
        "run" => run(&Cpu::of(raw)?, raw, verbose),
        "prepare" | "cleanup" | "prewarm" | "warmup" => {
            banner_line();
            bail!("'cpu' test does not implement the '{command}' command.")
        }
        other => bail!("FATAL: unknown command '{other}'. Supported commands: run, help"),
    }
}

fn run(c: &Cpu, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    crate::interrupt::install();
    if verbose {
        let mut s = format!(
            "{}\n\nRunning the test with following options:\nNumber of threads: {}\n",
            banner(),
            c.threads
        );
        if c.report_interval_s > 0 {
            let _ = writeln!(
                s,
                "Report intermediate results every {} second(s)",
                c.report_interval_s
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
            "\n\nPrime numbers limit: {}\n\nInitializing worker threads...\n\nThreads started!\n\n",
            c.max_prime
        );
        print!("{s}");
        let _ = std::io::stdout().flush();
    }
    let shares: Vec<Mutex<Share>> = (0..c.threads)
        .map(|_| {
            Mutex::new(Share {
                counts: Counts::default(),
                hist: total_hist(),
                interval: total_hist(),
                min_max: None,
            })
        })
        .collect();
    let stop = AtomicBool::new(false);
    let left = AtomicU64::new(if c.events > 0 { c.events } else { u64::MAX });
    let started = Instant::now();
    std::thread::scope(|scope| {
        for share in &shares {
            let (stop, left) = (&stop, &left);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // An event is taken before it runs, so --events is never exceeded.
                    if left
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                        .is_err()
                    {
                        break;
                    }
                    let t0 = Instant::now();
                    std::hint::black_box(primes_below(c.max_prime));
                    let ns = t0.elapsed().as_nanos() as u64;
                    // The thread's own lock, taken by the main thread once an interval: a
                    // 0.3 ms event does not notice it.
                    let mut s = share.lock().unwrap_or_else(|p| p.into_inner());
                    s.counts.events += 1;
                    s.counts.lat_sum_ns += ns;
                    let _ = s.hist.record(ns.max(1));
                    let _ = s.interval.record(ns.max(1));
                    s.min_max = Some(match s.min_max {
                        None => (ns, ns),
                        Some((a, b)) => (a.min(ns), b.max(ns)),
                    });
                }
            });
        }
        watch(c, &shares, &stop, &left, started);
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut report = RunReport {
        threads: c.threads,
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
    for share in shares {
        let s = share.into_inner().unwrap_or_else(|p| p.into_inner());
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
        o.percentile = c.percentile;
        print!(
            "CPU speed:\n    events per second: {:8.2}\n\n{}",
            report.totals.events as f64 / elapsed.max(1e-9),
            general(&report, &o)
        );
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Ok
    })
}

/// Waits for the end (time, events or a signal), printing an interval line every
/// `report_interval_s` as sysbench's generic one: `[ 1s ] thds: 2 eps: 6080.97 lat (ms,95%):
/// 0.35`.
fn watch(c: &Cpu, shares: &[Mutex<Share>], stop: &AtomicBool, left: &AtomicU64, t0: Instant) {
    let deadline = (c.time_s > 0).then(|| t0 + Duration::from_secs(c.time_s));
    let every = (c.report_interval_s > 0).then(|| Duration::from_secs(c.report_interval_s));
    let mut next = every.map(|e| t0 + e);
    let mut last = t0;
    loop {
        let now = Instant::now();
        let done = deadline.is_some_and(|d| now >= d)
            || left.load(Ordering::Relaxed) == 0
            || crate::interrupt::requested();
        if done {
            stop.store(true, Ordering::Relaxed);
            return;
        }
        if let Some(at) = next.filter(|&at| now >= at) {
            let mut h = total_hist();
            let mut events = 0;
            for share in shares {
                let mut s = share.lock().unwrap_or_else(|p| p.into_inner());
                events += s.interval.len();
                let _ = h.add(&s.interval);
                s.interval.reset();
            }
            let secs = now.duration_since(last).as_secs_f64().max(1e-9);
            println!(
                "[ {:.0}s ] thds: {} eps: {:.2} lat (ms,{}%): {:.2}",
                now.duration_since(t0).as_secs_f64(),
                c.threads,
                events as f64 / secs,
                c.percentile,
                percentile_ms(&h, c.percentile as f64)
            );
            let _ = std::io::stdout().flush();
            last = now;
            next = every.map(|e| at + e);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_counted_as_sysbench_counts_them() {
        // 3..10: 3, 5, 7 (sysbench starts at 3, so 2 is not counted).
        assert_eq!(primes_below(10), 3);
        // π(10000) = 1229, less the prime 2.
        assert_eq!(primes_below(10_000), 1228);
        assert_eq!(primes_below(3), 0);
    }
}
