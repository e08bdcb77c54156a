//! The reporter's side of interval reporting: turns the workers' live counters and latency
//! buckets into an interval line, and folds the histograms workers hand over into the run's
//! total.

use super::pacer::Pacer;
use super::IntervalStats;
use crate::engine::metrics::{self, live_hist, Counts, LiveCounts, TotalHist, WorkerHist};
use std::fmt::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

pub(super) struct Intervals {
    pub total: TotalHist,
    /// Every worker's latency buckets as the last line read them.
    seen: Vec<u64>,
    last_t: Instant,
    last: Counts,
    percentile: u32,
    start: Instant,
    measure_start: Instant,
    pub series: Vec<IntervalStats>,
    /// Each closed interval's histogram (kept for the results' .hlog; one clone per interval,
    /// on the reporter's thread).
    pub hists: Vec<TotalHist>,
}

impl Intervals {
    pub fn new(percentile: u32, start: Instant, measure_start: Instant) -> Intervals {
        Intervals {
            total: metrics::total_hist(),
            seen: vec![0; live_hist::LEN],
            last_t: measure_start,
            last: Counts::default(),
            percentile: percentile.max(1),
            start,
            measure_start,
            series: Vec::new(),
            hists: Vec::new(),
        }
    }

    /// Adds a worker's handed-over histogram to the run's total (the interval lines read the
    /// workers' live buckets instead).
    pub fn absorb(&mut self, h: &WorkerHist) {
        metrics::merge(&mut self.total, h);
    }

    /// The last closed interval and its histogram.
    pub fn last(&self) -> (&IntervalStats, &TotalHist) {
        (
            self.series.last().expect("an interval was closed"),
            self.hists.last().expect("an interval was closed"),
        )
    }

    /// Seconds since the last report.
    pub fn since_last(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.last_t).as_secs_f64()
    }

    /// Closes the interval at `now`: rates over the actual elapsed time, as sysbench does.
    /// Names the last line by the time it was due at, seconds after the measured start.
    pub fn name_last(&mut self, t_s: f64) {
        if let Some(s) = self.series.last_mut() {
            s.t_s = t_s;
        }
    }

    pub fn report(
        &mut self,
        now: Instant,
        live: &[LiveCounts],
        running: u32,
        pacer: Option<&Pacer>,
    ) -> &IntervalStats {
        let mut cur = Counts::default();
        let mut buckets = vec![0u64; live_hist::LEN];
        for l in live {
            cur.add(&l.snapshot());
            l.lat.add_to(&mut buckets);
        }
        let h = live_hist::delta(&buckets, &mut self.seen);
        let d = cur.minus(&self.last);
        let dt = (now - self.last_t).as_secs_f64().max(1e-9);
        let rate = |n: u64| n as f64 / dt;
        let s = IntervalStats {
            t_s: (now - self.measure_start).as_secs_f64(),
            threads: running,
            tps: rate(d.events),
            qps: rate(d.queries()),
            reads_s: rate(d.reads),
            writes_s: rate(d.writes),
            other_s: rate(d.other),
            errors_s: rate(d.errors),
            reconnects_s: rate(d.reconnects),
            lat_pct_ms: metrics::percentile_ms(&h, self.percentile as f64),
            lat_p50_ms: metrics::percentile_ms(&h, 50.0),
            lat_p99_ms: metrics::percentile_ms(&h, 99.0),
            lat_max_ms: if h.is_empty() {
                0.0
            } else {
                h.max() as f64 / 1e6
            },
            queue_length: pacer.map(|p| p.queue_length((now - self.start).as_nanos() as u64)),
            concurrency: pacer.map(|_| live.iter().filter(|l| l.busy.load(Relaxed)).count() as u64),
        };
        self.hists.push(h);
        self.last = cur;
        self.last_t = now;
        self.series.push(s);
        self.series.last().expect("just pushed")
    }
}

impl IntervalStats {
    /// sysbench's interval line (plus its queue line with `--rate`), which `bench` and sweeps
    /// print as progress.
    pub fn sysbench_line(&self, percentile: u32) -> String {
        let s = self;
        let mut out = format!(
            "[ {:.0}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
            s.t_s.round(),
            s.threads,
            s.tps,
            s.qps,
            s.reads_s,
            s.writes_s,
            s.other_s,
            percentile,
            s.lat_pct_ms,
            s.errors_s,
            s.reconnects_s
        );
        if let (Some(q), Some(c)) = (s.queue_length, s.concurrency) {
            let _ = write!(
                out,
                "\n[ {:.0}s ] queue length: {q}, concurrency: {c}",
                s.t_s.round()
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_line_matches_sysbench() {
        let s = IntervalStats {
            t_s: 1.0004,
            threads: 2,
            tps: 639.44,
            qps: 12797.83,
            reads_s: 8959.18,
            writes_s: 2557.77,
            other_s: 1280.88,
            errors_s: 0.0,
            reconnects_s: 0.0,
            lat_pct_ms: 3.96,
            lat_p50_ms: 0.0,
            lat_p99_ms: 0.0,
            lat_max_ms: 0.0,
            queue_length: None,
            concurrency: None,
        };
        assert_eq!(
            s.sysbench_line(95),
            "[ 1s ] thds: 2 tps: 639.44 qps: 12797.83 (r/w/o: 8959.18/2557.77/1280.88) lat (ms,95%): 3.96 err/s: 0.00 reconn/s: 0.00"
        );
    }
}
