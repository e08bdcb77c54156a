//! One measured run: open every connection and prepare every statement, start all workers at
//! once, stop on time / events / fatal error / signal, report at intervals, and hand back the
//! merged figures. Workers own their recorders; the reporter only reads single-writer counters
//! and receives one histogram per worker per interval.

mod interval;
pub mod pacer;
pub mod shards;

use crate::bench::options::{BenchOptions, ForcedShutdown};
use crate::metrics::{self, Counts, LiveCounts, Tally, TotalHist, WorkerHist};
use crate::workload::rand::{Rng, UniqueSeq};
use crate::workload::session::{EventError, Session, SessionConfig};
use crate::workload::EventPlan;
use pacer::Pacer;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Figures of one report interval (sysbench's interval line).
#[derive(Debug, Clone, serde::Serialize)]
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

/// Most runtime threads a run starts; connections beyond share them.
const MAX_RUNTIME_THREADS: usize = 64;

/// Opens every connection on the runtime its worker will run on, so each socket is polled by
/// that runtime's own driver (a socket registered elsewhere costs a cross-thread wake-up per
/// response).
async fn open_sessions(
    cfg: &Arc<SessionConfig>,
    seed: u64,
    shards: &shards::Shards,
) -> anyhow::Result<Vec<Session>> {
    let threads = cfg.opts.threads as usize;
    // Bounded fan-out: a burst of thousands of connects can trip SYN-flood protection.
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    let mut set = JoinSet::new();
    for i in 0..threads {
        let (cfg, gate) = (cfg.clone(), gate.clone());
        set.spawn_on(
            async move {
                let _permit = gate.acquire_owned().await;
                let s = Session::open(cfg, i, seed.wrapping_add(i as u64 * 0x9E37)).await;
                (i, s)
            },
            shards.handle(i),
        );
    }
    let mut sessions: Vec<Option<Session>> = (0..threads).map(|_| None).collect();
    let limit = Duration::from_secs(30u64.max(threads as u64 / 20));
    let collect = async {
        while let Some(r) = set.join_next().await {
            let (i, s) = r.map_err(|e| anyhow::anyhow!("worker initialisation failed: {e}"))?;
            sessions[i] =
                Some(s.map_err(|e| e.context(format!("thread {i} failed to initialize")))?);
        }
        anyhow::Ok(())
    };
    match tokio::time::timeout(limit, collect).await {
        Ok(r) => r?,
        Err(_) => anyhow::bail!(
            "FATAL: Worker threads failed to initialize within {} seconds!",
            limit.as_secs()
        ),
    }
    Ok(sessions.into_iter().flatten().collect())
}

async fn worker(
    ctx: Arc<RunCtx>,
    idx: usize,
    mut s: Session,
    tx: mpsc::UnboundedSender<WorkerHist>,
    seed: u64,
) -> WorkerEnd {
    let live = &ctx.live[idx];
    let mut hist = metrics::worker_hist();
    let mut seen_epoch = 0;
    let mut rng = Rng::seeded(seed);
    let mut ignored: Vec<(u16, u64)> = Vec::new();
    while !ctx.stop.load(Relaxed) {
        let intended = match &ctx.pacer {
            Some(p) => {
                let at = ctx.start + Duration::from_nanos(p.claim(&mut rng));
                if ctx.deadline.is_some_and(|d| at >= d) {
                    break;
                }
                let now = Instant::now();
                if p.overflowed((now - ctx.start).as_nanos() as u64) {
                    ctx.set_fatal("FATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate".into());
                    break;
                }
                if at > now {
                    tokio::time::sleep_until(at).await;
                }
                at
            }
            None => Instant::now(),
        };
        if ctx.deadline.is_some_and(|d| intended >= d) || ctx.stop.load(Relaxed) {
            break;
        }
        let counting = intended >= ctx.measure_start;
        if counting
            && ctx.events_limit > 0
            && ctx.started_events.fetch_add(1, Relaxed) >= ctx.events_limit
        {
            break;
        }
        s.tally = Tally::default();
        s.event_codes.clear();
        live.busy.store(true, Relaxed);
        let r = s.run_event().await;
        live.busy.store(false, Relaxed);
        if counting {
            for &code in &s.event_codes {
                match ignored.iter_mut().find(|(c, _)| *c == code) {
                    Some(e) => e.1 += 1,
                    None => ignored.push((code, 1)),
                }
            }
        }
        match r {
            Ok(()) if counting => {
                let ns = (Instant::now() - intended).as_nanos() as u64;
                live.record_event(&s.tally, ns);
                let _ = hist.record(ns.max(1));
            }
            Ok(()) => {}
            Err(EventError::Fatal(m)) => {
                if counting {
                    live.add_statements(&s.tally);
                }
                ctx.set_fatal(m);
                break;
            }
            Err(EventError::Stopped) => break,
        }
        let e = ctx.epoch.load(Relaxed);
        if e != seen_epoch {
            seen_epoch = e;
            let _ = tx.send(std::mem::replace(&mut hist, metrics::worker_hist()));
        }
    }
    s.tally = Tally::default();
    if let Err(EventError::Fatal(m)) = s.finish().await {
        ctx.set_fatal(m);
    }
    live.add_statements(&s.tally);
    let done = Instant::now();
    s.close().await;
    WorkerEnd {
        hist,
        done,
        ignored,
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

fn forced_after(o: &BenchOptions) -> Option<Duration> {
    let secs = match o.forced_shutdown {
        ForcedShutdown::Off => return None,
        ForcedShutdown::Seconds(s) => s,
        ForcedShutdown::PercentOfTime(p) => o.time_s as f64 * p / 100.0,
    };
    Some(Duration::from_secs(o.warmup_s + o.time_s) + Duration::from_secs_f64(secs))
}

/// Runs the workload as `o` describes and returns what was measured. Errors before the start
/// (connect, prepare) are returned as errors; a fatal error during the run is in the report.
pub async fn run(o: &BenchOptions, observer: &mut dyn Observer) -> anyhow::Result<RunReport> {
    let seed = crate::workload::rand::effective_seed(o.rand_seed);
    let stop = Arc::new(AtomicBool::new(false));
    let cfg = Arc::new(SessionConfig {
        plan: EventPlan::new(o.workload, &o.wl),
        opts: o.clone(),
        unique: UniqueSeq::new(seed),
        stop: stop.clone(),
    });
    // One runtime thread per connection measured best on 2 cores up to 64 connections; above
    // that, 64 threads sharing the connections gave more QPS with less memory (1,024
    // connections: +30 % QPS, 133 MB instead of 233 MB; docs/performance.md).
    // SWEEPBENCH_SHARDS overrides it for experiments.
    let shard_count = std::env::var("SWEEPBENCH_SHARDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((o.threads as usize).min(MAX_RUNTIME_THREADS));
    let shards = shards::Shards::new(shard_count)?;
    let sessions = open_sessions(&cfg, seed, &shards).await?;
    let threads = sessions.len();
    let start = Instant::now();
    let measure_start = start + Duration::from_secs(o.warmup_s);
    let ctx = Arc::new(RunCtx {
        stop: stop.clone(),
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
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut set = JoinSet::new();
    for (i, s) in sessions.into_iter().enumerate() {
        let (ctx, tx) = (ctx.clone(), tx.clone());
        set.spawn_on(
            worker(ctx, i, s, tx, seed ^ (0xA5A5 + i as u64)),
            shards.handle(i),
        );
    }
    drop(tx);
    observer.threads_started();

    let mut iv = interval::Intervals::new(o.percentile, start, measure_start);
    let period = Duration::from_secs(o.report_interval_s.max(1));
    let mut ticker = tokio::time::interval_at(measure_start + period, period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let forced_at = forced_after(o).map(|d| start + d);
    let forced = async move {
        match forced_at {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(forced);
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut interrupted = false;
    let mut unfinished = None;
    let mut ends = Vec::new();
    let mut base = Baseline::start(measure_start, threads);
    let mut checkpoints = o
        .checkpoints_s
        .iter()
        .map(|&c| measure_start + Duration::from_secs(c));
    let mut next_checkpoint = checkpoints.next();
    loop {
        let checkpoint = async move {
            match next_checkpoint {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = set.join_next() => match r {
                None => break,
                Some(Ok(end)) => ends.push(end),
                Some(Err(e)) => ctx.set_fatal(format!("FATAL: worker thread failed: {e}")),
            },
            Some(h) = rx.recv() => iv.absorb(&h),
            _ = ticker.tick(), if o.report_interval_s > 0 => {
                ctx.epoch.fetch_add(1, Relaxed);
                collect_handovers(&mut rx, &mut iv, set.len(), period).await;
                let now = Instant::now();
                // At the deadline's own tick workers are leaving because time is up, not
                // because they failed: report them as running, as sysbench does.
                let running = if ctx.deadline.is_some_and(|d| now + period / 4 >= d) {
                    threads
                } else {
                    set.len()
                };
                let s = iv.report(now, &ctx.live, running as u32, ctx.pacer.as_ref());
                observer.interval(s);
            }
            _ = checkpoint => {
                ctx.epoch.fetch_add(1, Relaxed);
                collect_handovers(&mut rx, &mut iv, set.len(), period).await;
                let now = Instant::now();
                let hist = std::mem::replace(&mut iv.total, metrics::total_hist());
                let (report, next) = base.report(&ctx, hist, now);
                observer.checkpoint((now - measure_start).as_secs_f64(), &report);
                base = next;
                next_checkpoint = checkpoints.next();
            }
            _ = sigint.recv() => { interrupted = true; stop.store(true, Relaxed); }
            _ = sigterm.recv() => { interrupted = true; stop.store(true, Relaxed); }
            _ = &mut forced => {
                stop.store(true, Relaxed);
                unfinished = Some(ctx.live.iter().filter(|l| l.busy.load(Relaxed)).count() as u64);
                set.abort_all();
                while let Some(r) = set.join_next().await {
                    if let Ok(end) = r { ends.push(end); }
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
