//! sysbench's host tests, which need no server — `cpu`, `memory` and `fileio` — and the
//! runner every host test shares: `--threads` threads for a time or a number of events, each event timed,
//! into the same `RunReport` a workload gives. `bench cpu|memory|fileio` prints it as
//! sysbench does; a sweep's `workloads = ["cpu"]` measures the host's own scaling curve with it.

pub mod cpu;
pub mod fileio;
pub mod memory;

use crate::engine::exec::RunReport;
use crate::engine::metrics::{total_hist, Counts, TotalHist};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The target and config parts of a sweep's host test points (`host/-/cpu/t4/r1`): the
/// machine, not a server, and no server settings.
pub const HOST_TARGET: &str = "host";
pub const HOST_CONFIG: &str = "-";

/// Whether a point of `target`/`config` is a host test's: the machine's series.
pub fn is_host(target: &str, config: &str) -> bool {
    target == HOST_TARGET && config == HOST_CONFIG
}

/// A sysbench SIZE: a number with an optional b, k, m, g or t (powers of 1024).
pub fn size(s: &str) -> Option<u64> {
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

/// The host tests a sweep can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum HostKind {
    Cpu,
    Memory,
    FileIo,
}

impl HostKind {
    pub const ALL: [HostKind; 3] = [HostKind::Cpu, HostKind::Memory, HostKind::FileIo];

    /// sysbench's test name.
    pub fn name(self) -> &'static str {
        match self {
            HostKind::Cpu => "cpu",
            HostKind::Memory => "memory",
            HostKind::FileIo => "fileio",
        }
    }

    pub fn from_name(s: &str) -> Option<HostKind> {
        HostKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// What one event of the test is, for the unit its rate is shown in.
    pub fn event(self) -> &'static str {
        match self {
            HostKind::Cpu => "prime-count events",
            HostKind::Memory => "1 KiB block writes",
            HostKind::FileIo => "file requests: reads, writes and fsyncs",
        }
    }

    /// Measures the test on `threads` threads for `time_s`: cpu and memory with sysbench's
    /// default options (cpu: primes below 10000; memory: 1 KiB blocks written in order to
    /// one shared buffer), fileio with `fileio`'s options on the files prepared in its
    /// directory (its reads, writes and fsyncs in the report's counts).
    pub fn measure(
        self,
        threads: u32,
        time_s: u64,
        fileio: Option<(&fileio::FileIoOptions, &std::path::Path)>,
    ) -> Result<RunReport, String> {
        let lim = Limits {
            threads,
            time_s,
            events: 0,
        };
        Ok(match self {
            HostKind::Cpu => run(&cpu::Cpu::new(cpu::DEFAULT_MAX_PRIME), &lim, None, |_| {}),
            HostKind::Memory => run(&memory::Memory::default(), &lim, None, |_| {}),
            HostKind::FileIo => {
                let (o, dir) = fileio.ok_or("fileio: no options and no directory")?;
                let mut t = fileio::FileIo::open(o, dir, true)?;
                t.quiet = true;
                t.measure(&lim)
            }
        })
    }
}

/// What makes one host test: its threads' state and one event on it.
pub trait HostTest: Sync {
    type Thread: Send;
    fn thread(&self, i: usize) -> Self::Thread;
    fn event(&self, t: &mut Self::Thread);
    /// Events each thread runs at most (memory's total size), None: no limit of its own.
    fn per_thread(&self, threads: u32) -> Option<u64>;
    /// Whether the interval callback is given the interval's latencies (then each event's
    /// latency also goes to the thread's interval histogram, under its own lock).
    fn interval_latency(&self) -> bool;
    /// At a thread's end, on its state (fileio: its fsync of every file at the end, and the
    /// requests it still has in flight).
    fn thread_done(&self, _t: &mut Self::Thread) {}
}

/// When a host test ends: after `time_s` seconds (0: no limit) or `events` events (0: no
/// limit), whichever comes first, or when every thread reached its own limit.
pub struct Limits {
    pub threads: u32,
    pub time_s: u64,
    pub events: u64,
}

/// One report interval: seconds since the start, events in it, its length, and (for tests
/// with `interval_latency`) its latencies.
pub struct Interval<'a> {
    pub at_s: f64,
    pub events: u64,
    pub secs: f64,
    pub hist: &'a TotalHist,
}

/// What one thread measured.
struct Share {
    counts: Counts,
    hist: TotalHist,
    min_max: Option<(u64, u64)>,
}

impl Share {
    fn new() -> Share {
        Share {
            counts: Counts::default(),
            hist: total_hist(),
            min_max: None,
        }
    }

    /// One event of `ns` nanoseconds.
    fn add(&mut self, ns: u64) {
        self.counts.events += 1;
        self.counts.lat_sum_ns += ns;
        let _ = self.hist.record(ns);
        self.min_max = Some(match self.min_max {
            None => (ns, ns),
            Some((a, b)) => (a.min(ns), b.max(ns)),
        });
    }
}

/// Runs `test` until `lim` ends it (or SIGINT), calling `on_interval` every `every`.
pub fn run<T: HostTest>(
    test: &T,
    lim: &Limits,
    every: Option<Duration>,
    on_interval: impl FnMut(&Interval),
) -> RunReport {
    run_with(test, lim, every, &[], on_interval, |_, _| {})
}

/// As `run`, and at each of `checkpoints_s` (seconds from the start) a report of everything
/// since the previous checkpoint (`--report-checkpoints`), which it resets, as sysbench's
/// does: after one, the returned report holds only what followed the last.
pub fn run_with<T: HostTest>(
    test: &T,
    lim: &Limits,
    every: Option<Duration>,
    checkpoints_s: &[u64],
    mut on_interval: impl FnMut(&Interval),
    mut on_checkpoint: impl FnMut(f64, &RunReport),
) -> RunReport {
    let per_thread = test.per_thread(lim.threads);
    // Each thread's figures since the last checkpoint, under its own lock (taken by the
    // watcher only at a checkpoint); kept only when checkpoints are asked for.
    let checkpointing = !checkpoints_s.is_empty();
    let since: Vec<Mutex<Share>> = (0..lim.threads).map(|_| Mutex::new(Share::new())).collect();
    let progress: Vec<AtomicU64> = (0..lim.threads).map(|_| AtomicU64::new(0)).collect();
    let intervals: Vec<Mutex<TotalHist>> =
        (0..lim.threads).map(|_| Mutex::new(total_hist())).collect();
    let stop = AtomicBool::new(false);
    let left = AtomicU64::new(if lim.events > 0 { lim.events } else { u64::MAX });
    let started = Instant::now();
    let mut last_checkpoint = None;
    let shares: Vec<Share> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..lim.threads as usize)
            .map(|i| {
                let (stop, left) = (&stop, &left);
                let (progress, interval, since) = (&progress[i], &intervals[i], &since[i]);
                scope.spawn(move || {
                    let mut state = test.thread(i);
                    let mut s = Share::new();
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
                        s.add(ns);
                        if checkpointing {
                            since.lock().unwrap_or_else(|p| p.into_inner()).add(ns);
                        }
                        progress.store(s.counts.events, Ordering::Relaxed);
                        if test.interval_latency() {
                            // The thread's own lock, taken by the watcher once an interval.
                            let mut h = interval.lock().unwrap_or_else(|p| p.into_inner());
                            let _ = h.record(ns);
                        }
                    }
                    test.thread_done(&mut state);
                    s
                })
            })
            .collect();
        let w = Watch {
            lim,
            progress: &progress,
            intervals: &intervals,
            since: &since,
            stop: &stop,
            t0: started,
        };
        last_checkpoint = w.wait(
            &workers,
            every,
            checkpoints_s,
            &mut on_interval,
            &mut on_checkpoint,
        );
        workers
            .into_iter()
            .map(|w| w.join().expect("a host test's thread panicked"))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    // After a checkpoint the report is of what followed it.
    let (shares, from) = match last_checkpoint {
        Some(at) => (
            since
                .into_iter()
                .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
                .collect(),
            at,
        ),
        None => (shares, 0.0),
    };
    let mut report = sum(shares, lim.threads, elapsed, elapsed - from);
    report.interrupted = crate::interrupt::requested();
    report
}

/// The report of the threads' shares: `elapsed_s` since the start, its figures over the last
/// `window_s`.
fn sum(shares: Vec<Share>, threads: u32, elapsed_s: f64, window_s: f64) -> RunReport {
    let mut report = RunReport {
        threads,
        elapsed_s,
        window_s,
        totals: Counts::default(),
        hist: total_hist(),
        min_max_ns: None,
        per_thread: Vec::new(),
        intervals: Vec::new(),
        interval_hists: Vec::new(),
        fatal: None,
        unfinished: None,
        interrupted: false,
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
    report
}

/// The runner's view of its threads while they work.
struct Watch<'a> {
    lim: &'a Limits,
    progress: &'a [AtomicU64],
    intervals: &'a [Mutex<TotalHist>],
    since: &'a [Mutex<Share>],
    stop: &'a AtomicBool,
    t0: Instant,
}

impl Watch<'_> {
    /// Waits for the end (time, every thread done, or a signal), giving an interval every
    /// `every` and a report at each checkpoint; returns when the last checkpoint was (seconds
    /// from the start), if one was.
    fn wait<R>(
        &self,
        workers: &[std::thread::ScopedJoinHandle<'_, R>],
        every: Option<Duration>,
        checkpoints_s: &[u64],
        on_interval: &mut impl FnMut(&Interval),
        on_checkpoint: &mut impl FnMut(f64, &RunReport),
    ) -> Option<f64> {
        let t0 = self.t0;
        let deadline = (self.lim.time_s > 0).then(|| t0 + Duration::from_secs(self.lim.time_s));
        let mut next = every.map(|e| t0 + e);
        let (mut last, mut last_events) = (t0, 0u64);
        let mut checkpoints = checkpoints_s.iter().map(|&c| t0 + Duration::from_secs(c));
        let (mut next_checkpoint, mut last_checkpoint) = (checkpoints.next(), None);
        loop {
            let now = Instant::now();
            let done = deadline.is_some_and(|d| now >= d)
                || workers.iter().all(|w| w.is_finished())
                || crate::interrupt::requested();
            if done {
                self.stop.store(true, Ordering::Relaxed);
                return last_checkpoint;
            }
            if let Some(at) = next_checkpoint.filter(|&at| now >= at) {
                let shares: Vec<Share> = self
                    .since
                    .iter()
                    .map(|m| {
                        std::mem::replace(
                            &mut *m.lock().unwrap_or_else(|p| p.into_inner()),
                            Share::new(),
                        )
                    })
                    .collect();
                let from = last_checkpoint.unwrap_or(0.0);
                let at_s = at.duration_since(t0).as_secs_f64();
                let now_s = now.duration_since(t0).as_secs_f64();
                on_checkpoint(at_s, &sum(shares, self.lim.threads, now_s, now_s - from));
                // sysbench's checkpoint resets the interval's latencies too.
                for i in self.intervals {
                    i.lock().unwrap_or_else(|p| p.into_inner()).reset();
                }
                last_checkpoint = Some(now_s);
                next_checkpoint = checkpoints.next();
            }
            if let Some(at) = next.filter(|&at| now >= at) {
                let events: u64 = self
                    .progress
                    .iter()
                    .map(|p| p.load(Ordering::Relaxed))
                    .sum();
                let mut h = total_hist();
                for i in self.intervals {
                    let mut x = i.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = h.add(&*x);
                    x.reset();
                }
                // Named by the tick it is due at, as sysbench's timer names it, however late
                // a loaded machine lets this thread see it (the rates are over the real time).
                on_interval(&Interval {
                    at_s: at.duration_since(t0).as_secs_f64(),
                    events: events - last_events,
                    secs: now.duration_since(last).as_secs_f64().max(1e-9),
                    hist: &h,
                });
                (last, last_events) = (now, events);
                next = every.map(|e| at + e);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_limit_is_kept_exactly_over_threads() {
        let lim = Limits {
            threads: 3,
            time_s: 0,
            events: 100,
        };
        let r = run(&cpu::Cpu::new(100), &lim, None, |_| {});
        assert_eq!(r.totals.events, 100);
        assert_eq!(r.per_thread.len(), 3);
        assert_eq!(r.per_thread.iter().map(|c| c.events).sum::<u64>(), 100);
        assert!(r.min_max_ns.is_some());
    }

    #[test]
    fn memorys_total_size_ends_each_thread() {
        let m = memory::Memory::new(1024, 64 * 1024, true, memory::Oper::Write, false);
        let lim = Limits {
            threads: 2,
            time_s: 0,
            events: 0,
        };
        let r = run(&m, &lim, None, |_| {});
        // 64 blocks of 1 KiB over two threads: 32 each.
        assert_eq!(r.totals.events, 64);
        assert!(r.per_thread.iter().all(|c| c.events == 32));
    }

    #[test]
    fn names_are_sysbenchs() {
        assert_eq!(HostKind::from_name("cpu"), Some(HostKind::Cpu));
        assert_eq!(HostKind::from_name("memory"), Some(HostKind::Memory));
        assert_eq!(HostKind::from_name("fileio"), Some(HostKind::FileIo));
        assert_eq!(HostKind::from_name("threads"), None);
    }
}
