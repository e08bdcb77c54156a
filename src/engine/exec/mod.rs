//! One measured run: open every connection and prepare every statement, start all workers at
//! once, stop on time / events / fatal error / signal, report at intervals, and hand back the
//! merged figures. Workers own their recorders; the reporter only reads single-writer counters
//! and receives one histogram per worker per interval.

mod interval;
pub mod pacer;
mod worker;

use crate::engine::config::{EngineConfig, ForcedShutdown};
use crate::engine::metrics::{self, Counts, LiveCounts, TotalHist, WorkerHist};
use crate::engine::wire::Sockets;
use crate::engine::workload::rand::UniqueSeq;
use crate::engine::workload::session::SessionConfig;
use crate::engine::workload::EventPlan;
use pacer::Pacer;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::time::Instant as TokioInstant;

/// Figures of one report interval (sysbench's interval line).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IntervalStats {
    /// Seconds since measurement started, at the tick.
    pub t_s: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub reads_s: f64,
    pub writes_s: f64,
    pub other_s: f64,
    pub errors_s: f64,
    pub reconnects_s: f64,
    /// Latency at `--percentile` over this interval's events, ms.
    pub lat_pct_ms: f64,
    pub lat_p50_ms: f64,
    pub lat_p99_ms: f64,
    pub lat_max_ms: f64,
    /// With `--rate`: arrivals waiting for a worker, and workers inside an event.
    pub queue_length: Option<u64>,
    pub concurrency: Option<u64>,
}

/// What one run measured.
#[derive(Debug)]
pub struct RunReport {
    pub threads: u32,
    /// Measurement start → end, seconds (sysbench's "total time").
    pub elapsed_s: f64,
    /// Seconds the counts cover: since the start, or since the last checkpoint. Rates ("per
    /// sec.") divide by this.
    pub window_s: f64,
    pub totals: Counts,
    pub hist: TotalHist,
    pub min_max_ns: Option<(u64, u64)>,
    pub per_thread: Vec<Counts>,
    pub intervals: Vec<IntervalStats>,
    /// The latency histogram of each interval, in the order of `intervals`.
    pub interval_hists: Vec<TotalHist>,
    /// The FATAL line that ended the run early.
    pub fatal: Option<String>,
    /// Events still running when `--forced-shutdown` fired.
    pub unfinished: Option<u64>,
    /// Ended by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Ignored errors by server error code (whole run, checkpoints included).
    pub ignored_by_code: std::collections::BTreeMap<u16, u64>,
}

/// Hooks for live output; the run never knows the output format.
pub trait Observer {
    fn threads_started(&mut self) {}
    fn interval(&mut self, _s: &IntervalStats) {}
    /// A `--report-checkpoints` report at `t_s` seconds: figures since the previous one.
    fn checkpoint(&mut self, _t_s: f64, _r: &RunReport) {}
}

/// Where cumulative figures start: the measurement start, or the last checkpoint (which
/// resets them, as in sysbench).
struct Baseline {
    measure_start: Instant,
    at: Instant,
    per_worker: Vec<Counts>,
    /// Before any checkpoint the workers' exact min/max apply; after one, the histogram's.
    first: bool,
}

impl Baseline {
    fn start(measure_start: Instant, workers: usize) -> Baseline {
        Baseline {
            measure_start,
            at: measure_start,
            per_worker: vec![Counts::default(); workers],
            first: true,
        }
    }

    /// The report of everything since this baseline, closed at `end`, and the baseline for
    /// what follows (from the same counter snapshot, so no event falls between the two).
    fn report(&self, ctx: &RunCtx, hist: TotalHist, end: Instant) -> (RunReport, Baseline) {
        let snap: Vec<Counts> = ctx.live.iter().map(|l| l.snapshot()).collect();
        let per_thread: Vec<Counts> = snap
            .iter()
            .zip(&self.per_worker)
            .map(|(s, b)| s.minus(b))
            .collect();
        let next = Baseline {
            measure_start: self.measure_start,
            at: end,
            per_worker: snap,
            first: false,
        };
        let mut totals = Counts::default();
        for c in &per_thread {
            totals.add(c);
        }
        let min_max_ns = if self.first {
            ctx.live
                .iter()
                .filter_map(|l| l.min_max())
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        } else {
            (!hist.is_empty()).then(|| (hist.min(), hist.max()))
        };
        let report = RunReport {
            threads: ctx.live.len() as u32,
            elapsed_s: end
                .saturating_duration_since(self.measure_start)
                .as_secs_f64(),
            window_s: end.saturating_duration_since(self.at).as_secs_f64(),
            totals,
            hist,
            min_max_ns,
            per_thread,
            intervals: Vec::new(),
            interval_hists: Vec::new(),
            fatal: None,
            unfinished: None,
            interrupted: false,
            ignored_by_code: Default::default(),
        };
        (report, next)
    }
}

struct RunCtx {
    stop: Arc<AtomicBool>,
    /// Set by a forced shutdown: broken connections are then expected, not fatal.
    forced: AtomicBool,
    epoch: AtomicU64,
    started_events: AtomicU64,
    events_limit: u64,
    start: Instant,
    measure_start: Instant,
    deadline: Option<Instant>,
    pacer: Option<Pacer>,
    live: Vec<LiveCounts>,
    fatal: Mutex<Option<String>>,
}

impl RunCtx {
    fn set_fatal(&self, msg: String) {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(msg);
        }
        self.stop.store(true, Relaxed);
    }
}

struct WorkerEnd {
    hist: WorkerHist,
    /// Ignored errors of counted events, by server error code.
    ignored: Vec<(u16, u64)>,
    /// When the worker finished its last event (before disconnecting).
    done: Instant,
}

/// Ends the run's threads however `run` exits (an error before the start, a dropped future):
/// nothing keeps load on the server after the run.
struct Teardown {
    cfg: Arc<SessionConfig>,
    go: Arc<worker::Go>,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        self.cfg.stop.store(true, Relaxed);
        self.go.set(None);
        self.cfg.sockets.shutdown_all();
    }
}

/// Waits briefly for busy workers to hand over the interval's histogram; late ones land in
/// the next interval.
async fn collect_handovers(
    rx: &mut mpsc::UnboundedReceiver<WorkerHist>,
    iv: &mut interval::Intervals,
    want: usize,
    period: Duration,
) {
    let wait = tokio::time::sleep(period.min(Duration::from_millis(100)) / 2);
    tokio::pin!(wait);
    let mut got = 0;
    while got < want {
        tokio::select! {
            Some(h) = rx.recv() => {
                iv.absorb(&h);
                got += 1;
            }
            _ = &mut wait => break,
        }
    }
}

fn forced_after(o: &EngineConfig) -> Option<Duration> {
    let secs = match o.forced_shutdown {
        ForcedShutdown::Off => return None,
        ForcedShutdown::Seconds(s) => s,
        ForcedShutdown::PercentOfTime(p) => o.time_s as f64 * p / 100.0,
    };
    Some(Duration::from_secs(o.warmup_s + o.time_s) + Duration::from_secs_f64(secs))
}

/// Runs the workload as `o` describes and returns what was measured. Errors before the start
/// (connect, prepare) are returned as errors; a fatal error during the run is in the report.
pub async fn run(o: &EngineConfig, observer: &mut dyn Observer) -> anyhow::Result<RunReport> {
    crate::interrupt::install();
    let seed = crate::engine::workload::rand::effective_seed(o.rand_seed);
    let stop = Arc::new(AtomicBool::new(false));
    let threads = o.threads as usize;
    let cfg = Arc::new(SessionConfig {
        plan: EventPlan::new(o.workload, &o.wl),
        opts: o.clone(),
        unique: UniqueSeq::new(seed),
        stop: stop.clone(),
        sockets: Sockets::new(threads),
    });
    let go = Arc::new(worker::Go::default());
    let _teardown = Teardown {
        cfg: cfg.clone(),
        go: go.clone(),
    };
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (end_tx, mut end_rx) = mpsc::unbounded_channel();
    let links = Arc::new(worker::Links {
        cfg: cfg.clone(),
        gate: Arc::new(worker::Gate::new()),
        go: go.clone(),
        ready: ready_tx,
        hists: tx,
        ends: end_tx,
    });
    for i in 0..threads {
        worker::spawn(i, seed, links.clone())
            .map_err(|e| anyhow::anyhow!("cannot start worker thread {i}: {e}"))?;
    }
    drop(links);
    let limit = Duration::from_secs(30u64.max(threads as u64 / 20));
    let opened = async {
        for _ in 0..threads {
            match ready_rx.recv().await {
                Some((_, Ok(()))) => {}
                Some((i, Err(e))) => {
                    return Err(e.context(format!("thread {i} failed to initialize")))
                }
                None => anyhow::bail!("worker initialisation failed"),
            }
        }
        Ok(())
    };
    match tokio::time::timeout(limit, opened).await {
        Ok(r) => r?,
        Err(_) => anyhow::bail!(
            "FATAL: Worker threads failed to initialize within {} seconds!",
            limit.as_secs()
        ),
    }
    let start = Instant::now();
    let measure_start = start + Duration::from_secs(o.warmup_s);
    let ctx = Arc::new(RunCtx {
        stop: stop.clone(),
        forced: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        started_events: AtomicU64::new(0),
        events_limit: o.events,
        start,
        measure_start,
        deadline: (o.time_s > 0).then(|| measure_start + Duration::from_secs(o.time_s)),
        pacer: (o.rate > 0).then(|| Pacer::new(o.rate)),
        live: (0..threads).map(|_| LiveCounts::new()).collect(),
        fatal: Mutex::new(None),
    });
    go.set(Some(ctx.clone()));
    observer.threads_started();

    let mut iv = interval::Intervals::new(o.percentile, start, measure_start);
    let period = Duration::from_secs(o.report_interval_s.max(1));
    let mut ticker =
        tokio::time::interval_at(TokioInstant::from_std(measure_start + period), period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let forced_at = forced_after(o).map(|d| start + d);
    let forced = async move {
        match forced_at {
            Some(at) => tokio::time::sleep_until(TokioInstant::from_std(at)).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(forced);
    // Signals are noticed by polling the process-wide request: one that came before this run
    // (between two points of a sweep) ends it at once.
    let mut signals = tokio::time::interval(Duration::from_millis(20));
    let mut interrupted = false;
    let mut unfinished = None;
    let mut ends = Vec::new();
    // Workers that have left, including any that failed without a report.
    let mut finished = 0;
    let mut base = Baseline::start(measure_start, threads);
    let mut checkpoints = o
        .checkpoints_s
        .iter()
        .map(|&c| measure_start + Duration::from_secs(c));
    let mut next_checkpoint = checkpoints.next();
    loop {
        let checkpoint = async move {
            match next_checkpoint {
                Some(at) => tokio::time::sleep_until(TokioInstant::from_std(at)).await,
                None => std::future::pending().await,
            }
        };
        if finished == threads {
            break;
        }
        tokio::select! {
            r = end_rx.recv() => match r {
                None => break,
                Some(r) => {
                    finished += 1;
                    match r {
                        Ok(end) => ends.push(end),
                        Err(m) => ctx.set_fatal(m),
                    }
                }
            },
            Some(h) = rx.recv() => iv.absorb(&h),
            _ = ticker.tick(), if o.report_interval_s > 0 => {
                ctx.epoch.fetch_add(1, Relaxed);
                collect_handovers(&mut rx, &mut iv, threads - finished, period).await;
                let now = Instant::now();
                // At the deadline's own tick workers are leaving because time is up, not
                // because they failed: report them as running, as sysbench does.
                let running = if ctx.deadline.is_some_and(|d| now + period / 4 >= d) {
                    threads
                } else {
                    threads - finished
                };
                let s = iv.report(now, &ctx.live, running as u32, ctx.pacer.as_ref());
                observer.interval(s);
            }
            _ = checkpoint => {
                ctx.epoch.fetch_add(1, Relaxed);
                collect_handovers(&mut rx, &mut iv, threads - finished, period).await;
                let now = Instant::now();
                let hist = std::mem::replace(&mut iv.total, metrics::total_hist());
                let (report, next) = base.report(&ctx, hist, now);
                observer.checkpoint((now - measure_start).as_secs_f64(), &report);
                base = next;
                next_checkpoint = checkpoints.next();
            }
            _ = signals.tick(), if !interrupted => {
                if crate::interrupt::requested() {
                    interrupted = true;
                    stop.store(true, Relaxed);
                }
            }
            _ = &mut forced => {
                ctx.forced.store(true, Relaxed);
                stop.store(true, Relaxed);
                unfinished = Some(ctx.live.iter().filter(|l| l.busy.load(Relaxed)).count() as u64);
                cfg.sockets.shutdown_all();
                // Shut sockets end blocked queries at once; a thread still stuck (a connect
                // to a dead host) is left behind rather than holding up the report.
                let give_up = TokioInstant::now() + Duration::from_secs(5);
                while finished < threads {
                    match tokio::time::timeout_at(give_up, end_rx.recv()).await {
                        Ok(Some(r)) => {
                            finished += 1;
                            if let Ok(end) = r { ends.push(end); }
                        }
                        _ => break,
                    }
                }
                break;
            }
        }
    }
    // sysbench's total time ends when the last thread finished its work, not after the
    // disconnects; a forced shutdown ends it now.
    let end = match unfinished {
        Some(_) => Instant::now(),
        None => ends
            .iter()
            .map(|e| e.done)
            .max()
            .unwrap_or_else(Instant::now),
    };
    while let Ok(h) = rx.try_recv() {
        iv.absorb(&h);
    }
    for e in &ends {
        iv.absorb(&e.hist);
    }
    // A run whose end falls on a tick (--time a multiple of --report-interval) gets that
    // tick's line, as sysbench's reporter prints it while the workers stop. With --rate the
    // workers stop at the last arrival before the deadline, so "on a tick" is judged by the
    // schedule, not by the exact end time.
    let ticks_due = match o.time_s {
        0 => 0,
        t => (t / period.as_secs().max(1)) as usize,
    };
    let ends_on_tick = o.time_s > 0
        && o.time_s % period.as_secs().max(1) == 0
        && iv.series.len() < ticks_due
        && ctx.deadline.is_some_and(|d| end + period / 2 >= d)
        && !interrupted
        && unfinished.is_none()
        && ctx.fatal.lock().map_or(true, |f| f.is_none());
    if o.report_interval_s > 0
        && (ends_on_tick || iv.since_last(end) >= period.as_secs_f64() * 0.95)
    {
        let s = iv.report(end, &ctx.live, threads as u32, ctx.pacer.as_ref());
        observer.interval(s);
    }
    let (mut report, _) = base.report(&ctx, iv.total, end);
    if let Some(n) = unfinished {
        report.totals.events += n;
    }
    report.threads = threads as u32;
    report.intervals = iv.series;
    report.interval_hists = iv.hists;
    report.fatal = ctx.fatal.lock().unwrap_or_else(|p| p.into_inner()).take();
    report.unfinished = unfinished;
    report.interrupted = interrupted;
    for e in &ends {
        for &(code, n) in &e.ignored {
            *report.ignored_by_code.entry(code).or_default() += n;
        }
    }
    Ok(report)
}
