//! What runs the points: `Ctx` is the run as the designs read it (spec, plan, event sink,
//! directory), `Runner` holds what changes (the tally, the records, the open target × config
//! block); `point` measures one point on it (`run_one`) and `keep` records it. Every design
//! (sequential, auto, host, paired) drives points through it.

use super::block;
use super::bracket::{Bracket, Keep, Meter};
use super::measure::{Measure, RunAt};
use super::tally::Tally;
use super::window::{self, Window};
use crate::engine::exec::{self, IntervalStats, Observer};
use crate::pipeline::events::{Event, Events};
use crate::pipeline::plan::{Plan, Point};
use crate::pipeline::results::{PointRecord, PointStatus, RunDir};
use crate::pipeline::spec::SweepSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// A sequential point's observer: says its per-second lines every `report_interval` and
/// says when its workers started (the counters' window opens after the warmup from there).
struct PointObserver<'a> {
    ev: &'a dyn Events,
    percentile: u32,
    id: String,
    /// Print every this many seconds' sample (`report_interval`; 0: none).
    print_every: u64,
    /// Told when the workers start (the warmup's start): the counters' window follows it.
    started: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Observer for PointObserver<'_> {
    fn threads_started(&mut self) {
        if let Some(tx) = self.started.take() {
            let _ = tx.send(());
        }
    }

    fn interval(&mut self, s: &IntervalStats) {
        let second = s.t_s.round() as u64;
        if self.print_every > 0 && second > 0 && second % self.print_every == 0 {
            // The figures are of the second just ended, not of the whole interval since
            // the last line: say so, or a reader averages them.
            let line = format!(
                "{} {} (figures of that second)",
                self.id,
                s.sysbench_line(self.percentile)
            );
            self.ev.emit(Event::Interval {
                point: &self.id,
                line: &line,
            });
        }
    }

    fn warning(&mut self, line: &str) {
        self.ev.warn(line);
    }
}

/// What a run is, read-only for the designs that run its points (`Runner` derefs to it).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub spec: &'a SweepSpec,
    pub plan: &'a Plan,
    /// A target's thread limit (`--on-capacity=skip`).
    pub limits: &'a BTreeMap<String, u32>,
    /// Where what the run says goes (cmd's sink: a bar, plain lines, JSON).
    pub ev: &'a dyn Events,
    /// The smallest change that matters (--fail-on-regression's, or 5 %), percent.
    pub threshold_pct: f64,
    /// The run directory's id and path.
    pub run_id: &'a str,
    pub run_path: &'a Path,
    /// --keep-k8s.
    pub keep_k8s: bool,
}

impl<'a> Ctx<'a> {
    /// Where a measurement's files go (`Measure::run`).
    pub fn run_at(&self) -> RunAt<'a> {
        (self.run_id, self.run_path, self.keep_k8s)
    }
}

/// What runs the points: the open block, the tally, where records go. The designs read the
/// run through its `Ctx` and change it only through its methods: a point is measured by
/// `point` and kept by `keep`.
pub(super) struct Runner<'a> {
    cx: Ctx<'a>,
    dir: &'a mut RunDir,
    t: Tally,
    /// Points the run now expects in all, and those kept so far (the progress's length and
    /// position).
    planned: u64,
    kept: u64,
    /// Seconds of measuring per point, for the progress's estimate of what is left.
    seconds_each: f64,
    st: block::RunState,
    current: Option<block::Block>,
}

impl<'a> std::ops::Deref for Runner<'a> {
    type Target = Ctx<'a>;

    fn deref(&self) -> &Ctx<'a> {
        &self.cx
    }
}

impl<'a> Runner<'a> {
    /// A runner with nothing measured yet and no block open; `st` is what outlives a block
    /// (the data prepared per target).
    pub fn new(cx: Ctx<'a>, dir: &'a mut RunDir, st: block::RunState) -> Runner<'a> {
        let (spec, plan, ev) = (cx.spec, cx.plan, cx.ev);
        // A paired point is its slices; a sequential one its warmup and duration.
        let seconds_each = if spec.run.design.paired() {
            spec.run.design.slice_s as f64 + super::slices::SLICE_SETUP_S
        } else {
            (spec.run.warmup_s + spec.run.duration_s) as f64
        };
        let planned = plan.max_points(spec);
        ev.emit(Event::Planned {
            points: planned,
            seconds_each,
        });
        Runner {
            cx,
            dir,
            t: Tally {
                reaped: st.reaped.clone(),
                ..Tally::default()
            },
            planned,
            kept: 0,
            seconds_each,
            st,
            current: None,
        }
    }

    /// The records kept so far (this run's, and a resumed run's before it), in order.
    pub fn records(&self) -> &[PointRecord] {
        self.dir.points()
    }

    /// Keeps an adaptive search's steps and why it stopped (adaptive.json); a file that
    /// cannot be written is a warning.
    pub fn log_search(&mut self, key: &str, steps: &[u64], why: &str) {
        if let Err(e) = self.dir.log_search(key, steps, why) {
            self.ev.warn(&format!("adaptive.json: {e:#}"));
        }
    }

    /// The run stops here: an interrupt was asked for.
    pub fn interrupt(&mut self) {
        self.t.interrupted = true;
    }

    /// Whether the run must stop: interrupted, or a record could not be written.
    pub fn stopping(&self) -> bool {
        self.t.interrupted || !self.t.unwritten.is_empty()
    }

    pub fn interrupted(&self) -> bool {
        self.t.interrupted
    }

    /// Points measured or skipped so far.
    pub fn measured(&self) -> u64 {
        self.t.total()
    }

    /// `n` points that failed before any could be measured (a design that cannot start).
    pub fn fail_unmeasured(&mut self, n: u32) {
        self.t.failed += n;
    }

    /// A paired run's answers, for the summary's last lines.
    pub fn set_answers(&mut self, lines: Vec<String>) {
        self.t.paired = Some(lines);
    }

    /// The tally, with the points planned but never run counted; the run is over.
    pub fn finish(mut self, not_run: u64) -> Tally {
        self.t.not_run = not_run as u32;
        self.t
    }

    /// Closes the open block (its server stopped, its settings put back), if there is one.
    pub async fn close_block(&mut self) {
        if let Some(prev) = self.current.take() {
            let k = prev.key.clone();
            if let Err(e) = prev.close().await {
                self.ev.warn(&format!("closing {k}: {e:#}"));
            }
        }
    }

    /// Says what the run is doing.
    pub fn note(&self, line: String) {
        self.ev.note(&line);
    }

    /// The run now expects `points` points in all (a search ended early, a paired point
    /// decided): the progress's length.
    pub fn replan(&mut self, points: u64) {
        self.planned = points;
        self.ev.emit(Event::Planned {
            points,
            seconds_each: self.seconds_each,
        });
    }

    /// Points the run expects in all, and those kept so far.
    pub fn progress(&self) -> (u64, u64) {
        (self.planned, self.kept)
    }

    /// Measures one point (opening its block first when it is another target × config) and
    /// appends its record. False when the run must stop (an interrupt, or records that can
    /// no longer be written).
    pub async fn point(&mut self, p: &Point) -> bool {
        if crate::interrupt::requested() {
            self.t.interrupted = true;
            return false;
        }
        let (spec, ev) = (self.spec, self.ev);
        ev.emit(Event::PointStarted { point: &p.id });
        let mut rec = PointRecord::new(self.run_id, p, "");
        if self
            .limits
            .get(&p.target)
            .is_some_and(|&max| p.threads > max)
        {
            rec.status = PointStatus::Skipped;
            rec.error = format!(
                "{} cannot take {} threads (--on-capacity=skip)",
                p.target, p.threads
            );
            self.t.skipped += 1;
        } else {
            let key = format!("{}/{}", p.target, p.config);
            if self.current.as_ref().map(|b| b.key.as_str()) != Some(key.as_str()) {
                self.close_block().await;
                let config = spec
                    .configs
                    .iter()
                    .find(|x| x.name == p.config)
                    .expect("planned config exists");
                ev.note(&format!("starting {key}"));
                let plan = self.cx.plan;
                self.current = Some(
                    super::servers::open(spec, plan, &p.target, config, &mut self.st, ev).await,
                );
            }
            let b = self.current.as_mut().expect("block opened above");
            rec.server_version = b.version.clone();
            let at = self.cx.run_at();
            let mut to = Keep {
                spec,
                dir: self.dir,
                ev,
            };
            run_one(spec, p, b, &mut rec, &mut to, at).await;
        }
        self.keep(rec, &p.id, p.rate)
    }

    pub fn st_mut(&mut self) -> &mut block::RunState {
        &mut self.st
    }

    /// Where a closed window's record and samples go (`bracket::Stopped::close`).
    pub fn keep_to(&mut self) -> Keep<'_> {
        Keep {
            spec: self.cx.spec,
            dir: self.dir,
            ev: self.cx.ev,
        }
    }

    /// Tallies a measured point, says how it went and appends its record. False when the run
    /// must stop (an interrupt, or records that can no longer be written).
    pub fn keep(&mut self, mut rec: PointRecord, id: &str, rate: u64) -> bool {
        let ev = self.ev;
        if rec.status == PointStatus::Failed && crate::interrupt::requested() {
            // The point failed because of the interrupt (a load cut short, say).
            rec.status = PointStatus::Interrupted;
        }
        if rec.is_host() {
            self.t.host += 1;
        }
        match rec.status {
            PointStatus::Ok => {
                self.t.ok += 1;
                // A paired run says each round in one line instead.
                let line = if rec.is_host() {
                    Some(format!(
                        "{id}: {:.2} events/s, p95 {:.2} ms",
                        rec.tps, rec.lat_p95_ms
                    ))
                } else {
                    (!self.spec.run.design.paired()).then(|| {
                        format!(
                            "{id}: {:.2} tps, {:.2} qps, p95 {:.2} ms",
                            rec.tps, rec.qps, rec.lat_p95_ms
                        )
                    })
                };
                if let Some(line) = line {
                    ev.note(&line);
                }
            }
            PointStatus::Failed if rate > 0 && rec.error == exec::QUEUE_FULL => {
                // An SLA step the server could not keep up with: the search's answer "too
                // fast", not a broken point.
                self.t.overloaded += 1;
                self.note(format!(
                    "{id}: {rate} arrivals/s overflowed the arrival queue: misses the SLA"
                ));
            }
            PointStatus::Failed => {
                self.t.failed += 1;
                ev.error(&format!("{id}: failed: {}", rec.error));
            }
            PointStatus::Interrupted => {
                self.t.interrupted = true;
                self.t.stopped += 1;
            }
            PointStatus::Skipped => {}
        }
        if let Err(e) = self.dir.append_point(&rec) {
            // The figures were measured: say them here, since the disk cannot take them,
            // and stop (every later point would be lost the same way).
            ev.error(&format!("{id}: measured, not written: {e:#}"));
            self.t.unwritten.push(format!(
                "{id} {}: {:.2} tps, {:.2} qps, p95 {:.2} ms, {} transactions in {:.1} s{}",
                rec.status,
                rec.tps,
                rec.qps,
                rec.lat_p95_ms,
                rec.transactions,
                rec.duration_s,
                if rec.error.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", rec.error)
                }
            ));
            return false;
        }
        self.kept += 1;
        ev.emit(Event::PointKept {
            point: id,
            status: rec.status.as_str(),
        });
        !self.t.interrupted
    }
}

/// Measures one point on the open block and fills its record.
async fn run_one(
    spec: &SweepSpec,
    p: &Point,
    b: &mut block::Block,
    rec: &mut PointRecord,
    to: &mut Keep<'_>,
    at: RunAt<'_>,
) {
    rec.rate = if p.rate > 0 { p.rate } else { spec.run.rate };
    rec.status = PointStatus::Failed;
    if let Some(e) = &b.error {
        rec.error = e.clone();
        return;
    }
    if let Err(e) = b.before_point().await {
        rec.error = format!("{e:#}");
        return;
    }
    let mut window = Bracket::open_counting_later(Some(b));
    // The counters' reader leaves the block while `how` holds it, and comes back after.
    let (mut costs, pids) = (std::mem::take(&mut b.costs), b.server_pids());
    let Some(mut how) = Measure::of(spec, p, b) else {
        rec.error = "no connection to measure on".into();
        b.costs = costs;
        return;
    };
    let (started, workers_started) = tokio::sync::oneshot::channel();
    let o = window::config(spec, p, Window::Point, None);
    let warmup = o.warmup_s;
    let mut obs = PointObserver {
        ev: to.ev,
        percentile: o.percentile.max(1),
        id: p.id.clone(),
        print_every: spec.run.report_interval_s,
        started: Some(started),
    };
    // The counters before the measured window: once the workers started and warmed up. A
    // measurement that never says its workers started (the sysbench binary, a model) keeps
    // none: the reading is given up when the measurement ends.
    costs.ready().await;
    // perf attached before the workers start: the window follows their warmup.
    if costs.start_profile(pids.first().copied(), p) {
        costs.profile_attached().await;
    }
    let shared: &block::Block = b;
    let (measured, cost0) = {
        // The counters, the server's and the host's CPU and the clock restart together once
        // the warmup is over: every figure of the record is over the measured window.
        let window_start = async {
            workers_started.await.ok()?;
            tokio::time::sleep(std::time::Duration::from_secs(warmup)).await;
            let counters = costs.sample(&pids).await;
            Some((counters, Meter::start(Some(shared))))
        };
        let measuring = how.run(spec, p, Window::Point, rec, at, &mut obs);
        tokio::pin!(window_start, measuring);
        let mut cost0 = None;
        let mut read = false;
        let measured = loop {
            tokio::select! {
                m = &mut measuring => break m,
                c = &mut window_start, if !read => (cost0, read) = (c, true),
            }
        };
        (measured, cost0)
    };
    let seat = how.seat();
    b.costs = costs;
    if let Some((counters, meter)) = cost0 {
        window.restart(counters, meter);
    }
    window.close(Some(b), to, rec, &measured, seat).await;
}
