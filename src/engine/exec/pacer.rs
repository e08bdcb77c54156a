//! Open-loop pacing for `--rate`: a Poisson arrival schedule that idle workers claim lock-free.
//! Each claim takes the next arrival time with a compare-and-swap and advances the schedule by
//! an exponential gap, so arrivals form one Poisson stream served by whichever worker is free,
//! like sysbench's event queue, and latency is measured from the arrival (no coordinated
//! omission).

use crate::engine::workload::rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};

/// sysbench's event queue capacity: falling further behind than this is fatal, as there.
pub const QUEUE_CAPACITY: f64 = 131_072.0;

#[derive(Debug)]
pub struct Pacer {
    /// Next unclaimed arrival, nanoseconds after the run's start.
    next_ns: AtomicU64,
    rate: f64,
}

impl Pacer {
    pub fn new(rate_per_sec: u64) -> Pacer {
        Pacer {
            next_ns: AtomicU64::new(0),
            rate: rate_per_sec as f64,
        }
    }

    /// Claims the next arrival; returns its time in ns after the run's start.
    pub fn claim(&self, rng: &mut Rng) -> u64 {
        let mut cur = self.next_ns.load(Ordering::Relaxed);
        loop {
            let gap = -(1.0 - rng.unit()).ln() / self.rate * 1e9;
            match self.next_ns.compare_exchange_weak(
                cur,
                cur + gap as u64,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return cur,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Arrivals due but not yet taken by a worker at `now_ns` (an estimate: the schedule's lag
    /// times the rate).
    pub fn queue_length(&self, now_ns: u64) -> u64 {
        let next = self.next_ns.load(Ordering::Relaxed);
        if now_ns <= next {
            0
        } else {
            ((now_ns - next) as f64 * self.rate / 1e9).round() as u64
        }
    }

    /// True when the backlog would overflow sysbench's queue.
    pub fn overflowed(&self, now_ns: u64) -> bool {
        self.queue_length(now_ns) as f64 > QUEUE_CAPACITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_average_the_rate_and_never_repeat() {
        let p = Pacer::new(1000);
        let mut rng = Rng::seeded(4);
        let times: Vec<u64> = (0..20_000).map(|_| p.claim(&mut rng)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let span_s = *times.last().unwrap() as f64 / 1e9;
        // 20 000 arrivals at 1000/s take about 20 s.
        assert!((span_s - 20.0).abs() < 0.6, "span {span_s}");
        // Exponential gaps: coefficient of variation ≈ 1.
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let (m, sd) = crate::engine::metrics::mean_stddev(&gaps);
        assert!((sd / m - 1.0).abs() < 0.05, "cv {}", sd / m);
    }

    #[test]
    fn queue_length_counts_the_lag() {
        let p = Pacer::new(100);
        assert_eq!(p.queue_length(0), 0);
        // One second behind at 100/s is about 100 queued arrivals.
        assert_eq!(p.queue_length(1_000_000_000), 100);
        assert!(!p.overflowed(1_000_000_000));
    }
}
