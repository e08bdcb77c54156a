//! One measured run: open every connection and prepare every statement, start all workers at
//! once, stop on time / events / fatal error / signal, report at intervals, and hand back the
//! merged figures. Workers own their recorders; the reporter only reads single-writer counters
//! and receives one histogram per worker per interval.

mod interval;
pub mod pacer;
mod supervise;
mod worker;
pub use worker::Opened;

use crate::engine::config::EngineConfig;
use crate::engine::metrics::{Counts, LiveCounts, TotalHist, WorkerHist};
use crate::engine::wire::Sockets;
use crate::engine::workload::rand::UniqueSeq;
use crate::engine::workload::session::{Lost, SessionConfig};
use crate::engine::workload::EventPlan;
use pacer::Pacer;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The FATAL line of a `--rate` run whose arrivals outrun the workers (sysbench's words).
pub const QUEUE_FULL: &str = "FATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate";

/// Figures of one report interval (sysbench's interval line).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
    /// The FATAL line that ended the run early, and its error code.
    pub fatal: Option<crate::engine::Fatal>,
    /// Events still running when `--forced-shutdown` fired.
    pub unfinished: Option<u64>,
    /// Ended by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Ignored errors by server error code (whole run, checkpoints included).
    pub ignored_by_code: std::collections::BTreeMap<u16, u64>,
}

impl RunReport {
    /// Adds another run's figures on the same connections (a turn of an interleaved round):
    /// counts and histograms add, times add, the first fatal error stays.
    pub fn absorb(&mut self, o: &RunReport) {
        self.elapsed_s += o.elapsed_s;
        self.window_s += o.window_s;
        self.totals.add(&o.totals);
        let _ = self.hist.add(&o.hist);
        self.min_max_ns = match (self.min_max_ns, o.min_max_ns) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        for (t, c) in self.per_thread.iter_mut().zip(&o.per_thread) {
            t.add(c);
        }
        if self.fatal.is_none() {
            self.fatal = o.fatal.clone();
        }
        self.unfinished = match (self.unfinished, o.unfinished) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.interrupted |= o.interrupted;
        for (&c, &n) in &o.ignored_by_code {
            *self.ignored_by_code.entry(c).or_default() += n;
        }
    }
}

/// Hooks for live output; the run never knows the output format.
pub trait Observer {
    fn threads_started(&mut self) {}
    fn interval(&mut self, _s: &IntervalStats) {}
    /// An interval with the histogram of its events alone (what a client process streams).
    fn interval_hist(&mut self, s: &IntervalStats, _h: &TotalHist) {
        self.interval(s)
    }
    /// A `--report-checkpoints` report at `t_s` seconds: figures since the previous one.
    fn checkpoint(&mut self, _t_s: f64, _r: &RunReport) {}
    /// Something went wrong beside the measurement (a cluster object left behind): the
    /// caller's to say; the engine does not print.
    fn warning(&mut self, _line: &str) {}
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
    fatal: Mutex<Option<crate::engine::Fatal>>,
    /// Threads whose connection was lost with an ignored error and never came back, by
    /// worker index.
    lost: Mutex<Vec<(usize, Lost)>>,
    /// The workers disconnect as this run ends (a one-run session); otherwise they wait on
    /// their open connections for the next.
    last: bool,
}

impl RunCtx {
    fn set_fatal(&self, fatal: impl Into<crate::engine::Fatal>) {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(fatal.into());
        }
        self.stop.store(true, Relaxed);
    }

    /// A thread that could not reconnect: it ends, the others go on.
    fn lose(&self, worker: usize, lost: Lost) {
        self.lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((worker, lost));
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
    /// The workers are idle between runs: let them say goodbye to the server themselves.
    graceful: bool,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        if self.graceful {
            self.go.set(None);
            return;
        }
        self.cfg.stop.store(true, Relaxed);
        self.go.set(None);
        self.cfg.sockets.shutdown_all();
    }
}

/// Runs the workload as `o` describes and returns what was measured. Errors before the start
/// (connect, prepare) are returned as errors; a fatal error during the run is in the report.
pub async fn run(o: &EngineConfig, observer: &mut dyn Observer) -> anyhow::Result<RunReport> {
    run_at(o, observer, async { Ok(()) }).await
}

/// As `run`, but once every connection is open and prepared the workers wait for `start`
/// before the clock starts: the client processes of one point start together. An error from
/// `start` ends the run before any event.
pub async fn run_at(
    o: &EngineConfig,
    observer: &mut dyn Observer,
    start: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<RunReport> {
    let mut rig = Rig::open(o).await?;
    start.await?;
    let measure = (o.time_s > 0).then(|| Duration::from_secs(o.time_s));
    rig.go(o, measure, observer, true).await
}

/// Connections opened and prepared once and measured by many runs (the slices of a paired
/// design): between runs the workers wait idle on their open connections. Dropping the rig
/// closes them.
pub struct Rig {
    cfg: Arc<SessionConfig>,
    go: Arc<worker::Go>,
    inbox: Inbox,
    threads: usize,
    /// Each worker's connection id and thread id, by worker index.
    opened: Vec<worker::Opened>,
    _teardown: Teardown,
    /// Why the connections can no longer be used (a fatal error, an interrupt, a forced end).
    broken: Option<String>,
}

impl Rig {
    /// Opens every connection `o` asks for and prepares its statements.
    pub async fn open(o: &EngineConfig) -> anyhow::Result<Rig> {
        crate::interrupt::install();
        let seed = crate::engine::workload::rand::effective_seed(o.rand_seed);
        let threads = o.threads as usize;
        let cfg = Arc::new(SessionConfig {
            plan: EventPlan::new(o.workload, &o.wl),
            opts: o.clone(),
            unique: UniqueSeq::new(seed),
            stop: Arc::new(AtomicBool::new(false)),
            sockets: Sockets::new(threads),
        });
        let go = Arc::new(worker::Go::default());
        let teardown = Teardown {
            cfg: cfg.clone(),
            go: go.clone(),
            graceful: false,
        };
        let mut inbox = start_workers(&cfg, &go, seed, threads)?;
        let opened = inbox.wait_ready(threads).await?;
        Ok(Rig {
            cfg,
            go,
            inbox,
            threads,
            opened,
            _teardown: teardown,
            broken: None,
        })
    }

    /// Each worker's connection id (the server's) and thread id (ours), by worker index.
    pub fn workers(&self) -> &[worker::Opened] {
        &self.opened
    }

    /// Closes the connections as a client should (COM_QUIT) when they are idle; a rig
    /// dropped otherwise shuts its sockets.
    pub fn close(mut self) {
        self._teardown.graceful = self.broken.is_none();
    }

    /// One run of `o`'s duration (and warmup) on the open connections. `o` must ask for the
    /// workload and thread count the rig was opened with.
    pub async fn run(
        &mut self,
        o: &EngineConfig,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<RunReport> {
        let measure = (o.time_s > 0).then(|| Duration::from_secs(o.time_s));
        self.go(o, measure, observer, false).await
    }

    /// One run of `measure` (which may be shorter than a second: the turns of an
    /// interleaved round) on the open connections; `o.time_s` is not used, and a run this
    /// short reports no per-second line.
    pub async fn run_for(
        &mut self,
        o: &EngineConfig,
        measure: Duration,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<RunReport> {
        self.go(o, Some(measure), observer, false).await
    }

    async fn go(
        &mut self,
        o: &EngineConfig,
        measure: Option<Duration>,
        observer: &mut dyn Observer,
        last: bool,
    ) -> anyhow::Result<RunReport> {
        if let Some(why) = &self.broken {
            anyhow::bail!("the connections were closed by an earlier run: {why}");
        }
        if o.threads as usize != self.threads || o.workload != self.cfg.opts.workload {
            anyhow::bail!(
                "a rig opened for {} threads of {} cannot run {} threads of {}",
                self.threads,
                self.cfg.opts.workload.name(),
                o.threads,
                o.workload.name()
            );
        }
        let start = Instant::now();
        let measure_start = start + Duration::from_secs(o.warmup_s);
        let ctx = Arc::new(RunCtx {
            stop: self.cfg.stop.clone(),
            forced: AtomicBool::new(false),
            epoch: AtomicU64::new(0),
            started_events: AtomicU64::new(0),
            events_limit: o.events,
            start,
            measure_start,
            deadline: measure.map(|m| measure_start + m),
            pacer: (o.rate > 0).then(|| Pacer::new(o.rate)),
            live: (0..self.threads).map(|_| LiveCounts::new()).collect(),
            fatal: Mutex::new(None),
            lost: Mutex::new(Vec::new()),
            last,
        });
        self.go.set(Some(ctx.clone()));
        observer.threads_started();
        let mut s = supervise::Supervisor::new(o, ctx, &self.cfg.sockets);
        s.watch(&mut self.inbox, observer).await;
        let r = s.report(&mut self.inbox, observer);
        self.broken = match (&r.fatal, r.interrupted, r.unfinished) {
            (Some(f), _, _) => Some(f.message.clone()),
            (None, true, _) => Some("interrupted".into()),
            (None, false, Some(_)) => Some("a forced shutdown".into()),
            _ if last => Some("the run was the last".into()),
            _ => None,
        };
        Ok(r)
    }
}

/// What the workers send the controller: readiness once, a histogram per interval, and how
/// each one ended.
struct Inbox {
    ready: mpsc::UnboundedReceiver<(usize, anyhow::Result<worker::Opened>)>,
    hists: mpsc::UnboundedReceiver<WorkerHist>,
    ends: mpsc::UnboundedReceiver<Result<WorkerEnd, String>>,
}

/// Starts one OS thread per worker; each connects and prepares, then waits for `go`.
fn start_workers(
    cfg: &Arc<SessionConfig>,
    go: &Arc<worker::Go>,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Inbox> {
    let (ready_tx, ready) = mpsc::unbounded_channel();
    let (hists_tx, hists) = mpsc::unbounded_channel();
    let (ends_tx, ends) = mpsc::unbounded_channel();
    let links = Arc::new(worker::Links {
        cfg: cfg.clone(),
        gate: Arc::new(worker::Gate::new()),
        go: go.clone(),
        ready: ready_tx,
        hists: hists_tx,
        ends: ends_tx,
    });
    for i in 0..threads {
        worker::spawn(i, seed, links.clone())
            .map_err(|e| anyhow::anyhow!("cannot start worker thread {i}: {e}"))?;
    }
    Ok(Inbox { ready, hists, ends })
}

impl Inbox {
    /// Waits until every worker has connected and prepared, as sysbench does before
    /// "Threads started!"; gives up after 30 s (more for thousands of threads).
    async fn wait_ready(&mut self, threads: usize) -> anyhow::Result<Vec<worker::Opened>> {
        let limit = Duration::from_secs(30u64.max(threads as u64 / 20));
        let opened = async {
            let none = worker::Opened {
                connection_id: 0,
                tid: 0,
            };
            let mut all = vec![none; threads];
            for _ in 0..threads {
                match self.ready.recv().await {
                    Some((i, Ok(o))) => all[i] = o,
                    Some((i, Err(e))) => {
                        return Err(e.context(format!("thread {i} failed to initialize")))
                    }
                    None => anyhow::bail!("worker initialisation failed"),
                }
            }
            Ok(all)
        };
        match tokio::time::timeout(limit, opened).await {
            Ok(r) => r,
            Err(_) => anyhow::bail!(
                "FATAL: Worker threads failed to initialize within {} seconds!",
                limit.as_secs()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(events: u64, secs: f64, lat_ns: &[u64], fatal: Option<&str>) -> RunReport {
        let mut hist = crate::engine::metrics::total_hist();
        for &v in lat_ns {
            hist.record(v).unwrap();
        }
        RunReport {
            threads: 2,
            elapsed_s: secs,
            window_s: secs,
            totals: Counts {
                events,
                reads: events * 10,
                lat_sum_ns: lat_ns.iter().sum(),
                ..Counts::default()
            },
            hist,
            min_max_ns: lat_ns
                .iter()
                .min()
                .map(|&a| (a, *lat_ns.iter().max().unwrap())),
            per_thread: vec![Counts::default(); 2],
            intervals: Vec::new(),
            interval_hists: Vec::new(),
            fatal: fatal.map(crate::engine::Fatal::from),
            unfinished: None,
            interrupted: false,
            ignored_by_code: [(1213u16, 2u64)].into_iter().collect(),
        }
    }

    #[test]
    fn turns_add_up_to_one_report() {
        let mut a = report(100, 0.25, &[1_000, 2_000], None);
        a.absorb(&report(
            300,
            0.25,
            &[500, 9_000, 3_000],
            Some("FATAL: gone"),
        ));
        a.absorb(&report(50, 0.125, &[], Some("FATAL: later")));
        assert_eq!(a.totals.events, 450);
        assert_eq!(a.totals.reads, 4_500);
        assert_eq!(a.elapsed_s, 0.625);
        assert_eq!(a.window_s, 0.625);
        assert_eq!(a.hist.len(), 5);
        assert_eq!(a.min_max_ns, Some((500, 9_000)));
        assert_eq!(a.fatal.as_deref(), Some("FATAL: gone"));
        assert_eq!(a.ignored_by_code.get(&1213), Some(&6));
        assert_eq!(a.unfinished, None);
    }
}
