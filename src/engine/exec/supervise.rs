//! The controller's side of a run once the workers are going: the loop that reports
//! intervals and checkpoints, notices signals, the end of the workers and a forced shutdown,
//! and then the final report.

use super::{interval, Baseline, Inbox, Observer, RunCtx, RunReport, WorkerEnd};
use crate::engine::config::{EngineConfig, ForcedShutdown};
use crate::engine::metrics::{self, WorkerHist};
use crate::engine::wire::Sockets;
use crate::engine::workload::session::Lost;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::time::Instant as TokioInstant;

pub(super) struct Supervisor<'a> {
    o: &'a EngineConfig,
    ctx: Arc<RunCtx>,
    sockets: &'a Sockets,
    threads: usize,
    iv: interval::Intervals,
    period: Duration,
    /// Workers that have left, including any that failed without a report.
    finished: usize,
    ends: Vec<WorkerEnd>,
    interrupted: bool,
    /// Events still running when a forced shutdown fired.
    unfinished: Option<u64>,
    base: Baseline,
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

/// The run's error when threads lost their connection for good: how many, when (seconds of
/// the measured time) and the last attempt's error, as one FATAL line.
fn lost_threads(
    lost: &[(usize, Lost)],
    threads: usize,
    measure_start: Instant,
) -> Option<crate::engine::Fatal> {
    let last = &lost.last()?.1;
    let at = |i: Instant| {
        if i < measure_start {
            "in the warm-up".to_string()
        } else {
            let s = i.duration_since(measure_start).as_secs_f64();
            format!("at {s:.1} s")
        }
    };
    let first = lost.iter().map(|(_, l)| l.at).min()?;
    let latest = lost.iter().map(|(_, l)| l.at).max()?;
    let when = if latest.duration_since(first) < Duration::from_millis(100) {
        at(first)
    } else {
        format!("first {}, last {}", at(first), at(latest))
    };
    Some(crate::engine::Fatal::new(
        format!(
            "FATAL: {} of {threads} thread(s) lost the connection ({when}) and could not reconnect before the run ended; the last attempt: {}",
            lost.len(),
            last.error
        ),
        Some(last.error.code),
    ))
}

fn forced_after(o: &EngineConfig) -> Option<Duration> {
    let secs = match o.forced_shutdown {
        ForcedShutdown::Off => return None,
        ForcedShutdown::Seconds(s) => s,
        ForcedShutdown::PercentOfTime(p) => o.time_s as f64 * p / 100.0,
    };
    Some(Duration::from_secs(o.warmup_s + o.time_s) + Duration::from_secs_f64(secs))
}

impl<'a> Supervisor<'a> {
    pub(super) fn new(o: &'a EngineConfig, ctx: Arc<RunCtx>, sockets: &'a Sockets) -> Self {
        let threads = ctx.live.len();
        Supervisor {
            o,
            iv: interval::Intervals::new(o.percentile, ctx.start, ctx.measure_start),
            period: Duration::from_secs(o.report_interval_s.max(1)),
            base: Baseline::start(ctx.measure_start, threads),
            ctx,
            sockets,
            threads,
            finished: 0,
            ends: Vec::new(),
            interrupted: false,
            unfinished: None,
        }
    }

    /// Runs until every worker has left, or a forced shutdown ends the run.
    pub(super) async fn watch(&mut self, inbox: &mut Inbox, observer: &mut dyn Observer) {
        let (o, period, measure_start) = (self.o, self.period, self.ctx.measure_start);
        let mut ticker =
            tokio::time::interval_at(TokioInstant::from_std(measure_start + period), period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let forced_at = forced_after(o).map(|d| self.ctx.start + d);
        let forced = async move {
            match forced_at {
                Some(at) => tokio::time::sleep_until(TokioInstant::from_std(at)).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(forced);
        // Signals are noticed by polling the process-wide request: one that came before this
        // run (between two points of a sweep) ends it at once.
        let mut signals = tokio::time::interval(Duration::from_millis(20));
        let mut checkpoints = o
            .checkpoints_s
            .iter()
            .map(|&c| measure_start + Duration::from_secs(c));
        let mut next_checkpoint = checkpoints.next();
        while self.finished < self.threads {
            let checkpoint = async move {
                match next_checkpoint {
                    Some(at) => tokio::time::sleep_until(TokioInstant::from_std(at)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = inbox.ends.recv() => match r {
                    None => break,
                    Some(r) => self.worker_left(r),
                },
                Some(h) = inbox.hists.recv() => self.iv.absorb(&h),
                due = ticker.tick(), if o.report_interval_s > 0 => {
                    self.tick(due.into_std(), observer);
                }
                _ = checkpoint => {
                    self.checkpoint(&mut inbox.hists, observer).await;
                    next_checkpoint = checkpoints.next();
                }
                _ = signals.tick(), if !self.interrupted => {
                    if crate::interrupt::requested() {
                        self.interrupted = true;
                        self.ctx.stop.store(true, Relaxed);
                    }
                }
                _ = &mut forced => {
                    self.force(&mut inbox.ends).await;
                    break;
                }
            }
        }
    }

    fn worker_left(&mut self, r: Result<WorkerEnd, String>) {
        self.finished += 1;
        match r {
            Ok(end) => self.ends.push(end),
            Err(m) => self.ctx.set_fatal(m),
        }
    }

    /// Asks the workers for their histograms (a new epoch) and takes what arrives in time;
    /// returns the instant the interval closes.
    async fn handover(&mut self, hists: &mut mpsc::UnboundedReceiver<WorkerHist>) -> Instant {
        self.ctx.epoch.fetch_add(1, Relaxed);
        let busy = self.threads - self.finished;
        collect_handovers(hists, &mut self.iv, busy, self.period).await;
        Instant::now()
    }

    /// A report interval: one line from the workers' live counters and latency buckets.
    fn tick(&mut self, due: Instant, observer: &mut dyn Observer) {
        // The deadline's own tick is left to the run's end (`report`), which prints it once
        // the workers have finished their last events and counts the leaving workers as
        // running, as sysbench does.
        if self
            .ctx
            .deadline
            .is_some_and(|d| Instant::now() + self.period / 4 >= d)
        {
            return;
        }
        // The line reads the workers' live buckets, which hold every event completed so
        // far: nothing to wait for.
        let now = Instant::now();
        let running = self.threads - self.finished;
        self.iv
            .report(now, &self.ctx.live, running as u32, self.ctx.pacer.as_ref());
        // The line is named by the tick it was due at (a multiple of the interval from the
        // start of the measured time), as sysbench's timer names it, however late a loaded
        // machine let it run; its rates are over the real time since the last line.
        self.iv
            .name_last((due - self.ctx.measure_start).as_secs_f64());
        let (s, h) = self.iv.last();
        observer.interval_hist(s, h);
    }

    /// A `--report-checkpoints` report: everything since the previous one, which it resets.
    async fn checkpoint(
        &mut self,
        hists: &mut mpsc::UnboundedReceiver<WorkerHist>,
        observer: &mut dyn Observer,
    ) {
        let now = self.handover(hists).await;
        let hist = std::mem::replace(&mut self.iv.total, metrics::total_hist());
        let (report, next) = self.base.report(&self.ctx, hist, now);
        observer.checkpoint((now - self.ctx.measure_start).as_secs_f64(), &report);
        self.base = next;
    }

    /// `--forced-shutdown` (or a sweep's point timeout): stop, count the events in flight,
    /// and shut the sockets so blocked queries end at once.
    async fn force(&mut self, ends: &mut mpsc::UnboundedReceiver<Result<WorkerEnd, String>>) {
        self.ctx.forced.store(true, Relaxed);
        self.ctx.stop.store(true, Relaxed);
        self.unfinished = Some(
            self.ctx
                .live
                .iter()
                .filter(|l| l.busy.load(Relaxed))
                .count() as u64,
        );
        self.sockets.shutdown_all();
        // A thread still stuck (a connect to a dead host) is left behind rather than holding
        // up the report.
        let give_up = TokioInstant::now() + Duration::from_secs(5);
        while self.finished < self.threads {
            match tokio::time::timeout_at(give_up, ends.recv()).await {
                Ok(Some(r)) => {
                    self.finished += 1;
                    if let Ok(end) = r {
                        self.ends.push(end);
                    }
                }
                _ => break,
            }
        }
    }

    /// The run's report, after the last interval line if one is due.
    pub(super) fn report(mut self, inbox: &mut Inbox, observer: &mut dyn Observer) -> RunReport {
        let (o, period, threads) = (self.o, self.period, self.threads);
        // sysbench's total time ends when the last thread finished its work, not after the
        // disconnects; a forced shutdown ends it now.
        let end = match self.unfinished {
            Some(_) => Instant::now(),
            None => self
                .ends
                .iter()
                .map(|e| e.done)
                .max()
                .unwrap_or_else(Instant::now),
        };
        while let Ok(h) = inbox.hists.try_recv() {
            self.iv.absorb(&h);
        }
        for e in &self.ends {
            self.iv.absorb(&e.hist);
        }
        // A run whose end falls on a tick (--time a multiple of --report-interval) gets that
        // tick's line, as sysbench's reporter prints it while the workers stop. With --rate
        // the workers stop at the last arrival before the deadline, so "on a tick" is judged
        // by the schedule, not by the exact end time.
        let ticks_due = match o.time_s {
            0 => 0,
            t => (t / period.as_secs().max(1)) as usize,
        };
        let ctx = &self.ctx;
        let ends_on_tick = o.time_s > 0
            && o.time_s % period.as_secs().max(1) == 0
            && self.iv.series.len() < ticks_due
            && ctx.deadline.is_some_and(|d| end + period / 2 >= d)
            && !self.interrupted
            && self.unfinished.is_none()
            && ctx.fatal.lock().map_or(true, |f| f.is_none());
        if o.report_interval_s > 0
            && (ends_on_tick || self.iv.since_last(end) >= period.as_secs_f64() * 0.95)
        {
            self.iv
                .report(end, &ctx.live, threads as u32, ctx.pacer.as_ref());
            if ends_on_tick {
                self.iv.name_last(o.time_s as f64);
            }
            let (s, h) = self.iv.last();
            observer.interval_hist(s, h);
        }
        let (mut report, _) = self.base.report(ctx, self.iv.total, end);
        if let Some(n) = self.unfinished {
            report.totals.events += n;
        }
        report.threads = threads as u32;
        report.intervals = self.iv.series;
        report.interval_hists = self.iv.hists;
        report.fatal = ctx.fatal.lock().unwrap_or_else(|p| p.into_inner()).take();
        if report.fatal.is_none() {
            let lost = ctx.lost.lock().unwrap_or_else(|p| p.into_inner());
            report.fatal = lost_threads(&lost, threads, ctx.measure_start);
        }
        report.unfinished = self.unfinished;
        report.interrupted = self.interrupted;
        for e in &self.ends {
            for &(code, n) in &e.ignored {
                *report.ignored_by_code.entry(code).or_default() += n;
            }
        }
        report
    }
}
