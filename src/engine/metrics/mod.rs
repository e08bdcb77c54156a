//! Measurement primitives: per-worker live counters (single writer, read at interval ticks),
//! latency histograms (HDR, nanoseconds), and the summaries built from them. No I/O, no tokio.

pub mod live_hist;
pub mod sysbench_hist;

use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Histogram a worker records into: nanoseconds, 2 significant digits (buckets 0.8 % wide,
/// finer than sysbench's 1.8 % and than the 10 µs its reports print), grows on demand.
/// 12 KB instead of the 86 KB 3 digits take: at 1,024 connections that is most of the
/// client's memory.
pub type WorkerHist = Histogram<u32>;
/// Histogram that merged results live in: 3 significant digits.
pub type TotalHist = Histogram<u64>;

pub fn worker_hist() -> WorkerHist {
    let mut h = Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid HDR bounds");
    h.auto(true);
    h
}

pub fn total_hist() -> TotalHist {
    let mut h = Histogram::new_with_bounds(1, 1_000_000_000, 3).expect("valid HDR bounds");
    h.auto(true);
    h
}

/// Adds a worker's histogram into a merged one (different counter widths, same buckets).
pub fn merge(into: &mut TotalHist, from: &WorkerHist) {
    for v in from.iter_recorded() {
        let _ = into.record_n(v.value_iterated_to(), v.count_at_value() as u64);
    }
}

/// Statement and event counts (sysbench's counters, spec §4) plus latency sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    /// Completed events ("transactions").
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    /// Statements that failed with an ignored error.
    pub errors: u64,
    pub reconnects: u64,
    /// Σ event latency, nanoseconds.
    pub lat_sum_ns: u64,
}

impl Counts {
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.other
    }

    pub fn add(&mut self, o: &Counts) {
        self.events += o.events;
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
        self.lat_sum_ns += o.lat_sum_ns;
    }

    pub fn minus(&self, o: &Counts) -> Counts {
        Counts {
            events: self.events - o.events,
            reads: self.reads - o.reads,
            writes: self.writes - o.writes,
            other: self.other - o.other,
            errors: self.errors - o.errors,
            reconnects: self.reconnects - o.reconnects,
            lat_sum_ns: self.lat_sum_ns - o.lat_sum_ns,
        }
    }
}

/// One worker's counters, written only by that worker and read by the reporter. A plain
/// load + store (no read-modify-write) is enough for a single writer and costs no lock prefix.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct LiveCounts {
    events: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    other: AtomicU64,
    errors: AtomicU64,
    reconnects: AtomicU64,
    lat_sum_ns: AtomicU64,
    lat_min_ns: AtomicU64,
    lat_max_ns: AtomicU64,
    /// True while the worker is inside an event (for `concurrency` and forced shutdown).
    pub busy: AtomicBool,
    /// Event latencies, read by the reporter for each interval line.
    pub lat: live_hist::LiveHist,
}

#[inline]
fn bump(a: &AtomicU64, n: u64) {
    a.store(a.load(Relaxed) + n, Relaxed);
}

impl LiveCounts {
    pub fn new() -> LiveCounts {
        let c = LiveCounts::default();
        c.lat_min_ns.store(u64::MAX, Relaxed);
        c
    }

    /// Adds one finished event and its statements. Called by the owning worker only.
    #[inline]
    pub fn record_event(&self, t: &Tally, latency_ns: u64) {
        bump(&self.events, 1);
        self.add_statements(t);
        bump(&self.lat_sum_ns, latency_ns);
        self.lat.record(latency_ns);
        if latency_ns < self.lat_min_ns.load(Relaxed) {
            self.lat_min_ns.store(latency_ns, Relaxed);
        }
        if latency_ns > self.lat_max_ns.load(Relaxed) {
            self.lat_max_ns.store(latency_ns, Relaxed);
        }
    }

    /// Adds statements that belong to no finished event (the one a fatal error ended).
    #[inline]
    pub fn add_statements(&self, t: &Tally) {
        bump(&self.reads, t.reads);
        bump(&self.writes, t.writes);
        bump(&self.other, t.other);
        bump(&self.errors, t.errors);
        bump(&self.reconnects, t.reconnects);
    }

    pub fn snapshot(&self) -> Counts {
        Counts {
            events: self.events.load(Relaxed),
            reads: self.reads.load(Relaxed),
            writes: self.writes.load(Relaxed),
            other: self.other.load(Relaxed),
            errors: self.errors.load(Relaxed),
            reconnects: self.reconnects.load(Relaxed),
            lat_sum_ns: self.lat_sum_ns.load(Relaxed),
        }
    }

    /// Exact (min, max) event latency in ns, or None before the first event.
    pub fn min_max(&self) -> Option<(u64, u64)> {
        let min = self.lat_min_ns.load(Relaxed);
        (min != u64::MAX).then(|| (min, self.lat_max_ns.load(Relaxed)))
    }
}

/// Statement outcomes of the event in progress, kept in the worker's own memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
}

/// Latency figures of a set of events, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub sum_ms: f64,
}

/// Value at percentile `p` (0–100] in ms, or 0 for an empty histogram.
pub fn percentile_ms<T: hdrhistogram::Counter>(h: &Histogram<T>, p: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_quantile(p / 100.0) as f64 / 1e6
}

impl LatencySummary {
    /// Min, max and sum are exact; percentiles come from the histogram (0.8 % buckets).
    pub fn new(h: &TotalHist, events: u64, sum_ns: u64, min_max_ns: Option<(u64, u64)>) -> Self {
        let (min, max) = min_max_ns.unwrap_or((0, 0));
        LatencySummary {
            min_ms: min as f64 / 1e6,
            avg_ms: sum_ns.checked_div(events).unwrap_or(0) as f64 / 1e6,
            max_ms: max as f64 / 1e6,
            p50_ms: percentile_ms(h, 50.0),
            p95_ms: percentile_ms(h, 95.0),
            p99_ms: percentile_ms(h, 99.0),
            p999_ms: percentile_ms(h, 99.9),
            sum_ms: sum_ns as f64 / 1e6,
        }
    }
}

/// Median of the values (0 for none); the mean of the middle two for an even count.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Geometric mean of the measured figures (values ≤ 0 or not finite were not measured; 0 for
/// none): the statistic whose ratio is the change the verdicts estimate on the log scale.
pub fn geo_mean(xs: &[f64]) -> f64 {
    let l: Vec<f64> = xs
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect();
    if l.is_empty() {
        0.0
    } else {
        (l.iter().sum::<f64>() / l.len() as f64).exp()
    }
}

/// (max − min) / median in percent: how far repeats of one measurement scatter. None with
/// fewer than two values or a zero median.
pub fn spread_pct(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = median(xs);
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    (m > 0.0).then(|| (hi - lo) / m * 100.0)
}

/// Change of `new` against `base` in percent; None when there is no base.
pub fn change_pct(new: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| (new - base) / base * 100.0)
}

/// Mean and population standard deviation, as sysbench's "Threads fairness" prints them.
pub fn mean_stddev(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdr_percentiles_match_exact_ones_to_precision() {
        // Latencies spread over four decades, like a real run's.
        // A 64-bit LCG's top bits are uniform enough to spread latencies.
        let mut x: u64 = 17;
        let mut unit = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut exact: Vec<u64> = (0..200_000)
            .map(|_| (20_000.0 * (unit() * 9.0).exp()) as u64)
            .collect();
        let mut h = worker_hist();
        for &v in &exact {
            h.record(v).unwrap();
        }
        let mut total = total_hist();
        merge(&mut total, &h);
        exact.sort_unstable();
        for p in [50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            let rank = ((p / 100.0) * exact.len() as f64).ceil() as usize;
            let want = exact[rank.clamp(1, exact.len()) - 1] as f64;
            let got = total.value_at_quantile(p / 100.0) as f64;
            let rel = (got - want).abs() / want;
            // Worker buckets are 1/128 of their value wide.
            assert!(rel <= 1.0 / 128.0, "p{p}: hdr {got} exact {want} rel {rel}");
        }
    }

    #[test]
    fn live_counts_accumulate_and_track_extremes() {
        let c = LiveCounts::new();
        assert_eq!(c.min_max(), None);
        let t = Tally {
            reads: 14,
            writes: 4,
            other: 2,
            errors: 1,
            reconnects: 0,
        };
        c.record_event(&t, 500);
        c.record_event(&t, 200);
        c.record_event(&t, 900);
        let s = c.snapshot();
        assert_eq!(
            (s.events, s.reads, s.writes, s.other, s.errors),
            (3, 42, 12, 6, 3)
        );
        assert_eq!(s.lat_sum_ns, 1600);
        assert_eq!(c.min_max(), Some((200, 900)));
    }

    #[test]
    fn fairness_is_population_stddev() {
        let (m, sd) = mean_stddev(&[1012.0, 1015.0]);
        assert_eq!(m, 1013.5);
        assert_eq!(sd, 1.5);
    }
}
