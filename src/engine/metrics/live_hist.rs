//! A latency histogram one worker writes and the reporter reads at any moment, for the
//! per-interval lines: log-linear buckets of plain atomics, so a second's line holds every
//! event completed in that second — a worker blocked in a long transaction cannot hold back
//! the latencies it recorded before it blocked, as a histogram handed over by the worker did.

use super::TotalHist;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Sub-buckets per power of two: 64, so a bucket is at most 1/64 (1.6 %) of its value wide —
/// finer than sysbench's interval percentiles (1.8 %).
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Values below this are their own bucket.
const LINEAR: usize = 2 * SUB;
/// The largest power of two kept apart: 2^40 ns is 18 minutes; longer lands in the last bucket.
const MAX_EXP: u32 = 40;
/// Buckets in all: 2,304 (9 KiB a worker).
pub const LEN: usize = LINEAR + (MAX_EXP as usize + 1 - (SUB_BITS as usize + 1)) * SUB;

/// The bucket of `ns` nanoseconds.
#[inline]
pub fn index(ns: u64) -> usize {
    if ns < LINEAR as u64 {
        return ns as usize;
    }
    let e = (63 - ns.leading_zeros()).min(MAX_EXP);
    let ns = ns.min((1u64 << (MAX_EXP + 1)) - 1);
    let m = (ns >> (e - SUB_BITS)) as usize; // 64..128
    LINEAR + (e - SUB_BITS - 1) as usize * SUB + (m - SUB)
}

/// The lowest and highest values of bucket `i`.
pub fn range(i: usize) -> (u64, u64) {
    if i < LINEAR {
        return (i as u64, i as u64);
    }
    let k = i - LINEAR;
    let e = (k / SUB) as u32 + SUB_BITS + 1;
    let m = (k % SUB + SUB) as u64;
    let shift = e - SUB_BITS;
    (m << shift, ((m + 1) << shift) - 1)
}

/// One worker's buckets. Written by that worker only, with a plain load and store (no lock
/// prefix); the reporter sums every worker's and takes the difference from its last reading.
#[derive(Debug)]
pub struct LiveHist {
    counts: Box<[AtomicU32]>,
}

impl LiveHist {
    pub fn new() -> LiveHist {
        LiveHist {
            counts: (0..LEN).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Counts one event of `ns` nanoseconds. Called by the owning worker only.
    #[inline]
    pub fn record(&self, ns: u64) {
        let c = &self.counts[index(ns)];
        c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// Adds this worker's counts so far into `into` (LEN long).
    pub fn add_to(&self, into: &mut [u64]) {
        for (t, c) in into.iter_mut().zip(self.counts.iter()) {
            *t += c.load(Relaxed) as u64;
        }
    }
}

impl Default for LiveHist {
    fn default() -> Self {
        LiveHist::new()
    }
}

/// Every worker's counts since `seen` as an HDR histogram (each bucket's count at its middle
/// value), and `seen` moved on to `now`.
pub fn delta(now: &[u64], seen: &mut [u64]) -> TotalHist {
    let mut h = super::total_hist();
    for (i, (n, s)) in now.iter().zip(seen.iter_mut()).enumerate() {
        let d = n.wrapping_sub(*s) & u32::MAX as u64;
        // A bucket's counter is 32 bits per worker: the difference is taken modulo 2^32, which
        // is exact unless one bucket took four billion events in one interval.
        if d > 0 {
            let (lo, hi) = range(i);
            let _ = h.record_n((lo + (hi - lo) / 2).max(1), d);
        }
        *s = *n;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_its_bucket_and_buckets_tile_the_range() {
        let mut next = 0u64;
        for i in 0..LEN {
            let (lo, hi) = range(i);
            assert_eq!(
                lo,
                next,
                "bucket {i} starts where {} ended",
                i.wrapping_sub(1)
            );
            assert!(hi >= lo);
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            if lo >= LINEAR as u64 {
                assert!(
                    (hi - lo + 1) as f64 / lo as f64 <= 1.0 / 64.0 + 1e-12,
                    "{i}"
                );
            }
            next = hi + 1;
        }
        assert_eq!(next, 1u64 << (MAX_EXP + 1));
        assert_eq!(index(u64::MAX), LEN - 1);
        assert_eq!(LEN, 2304);
    }

    #[test]
    fn a_delta_holds_only_what_was_recorded_since_the_last_reading() {
        let w = [LiveHist::new(), LiveHist::new()];
        for ns in [1_000_000, 2_000_000, 3_000_000] {
            w[0].record(ns);
        }
        w[1].record(2_500_000_000);
        let mut seen = vec![0; LEN];
        let mut now = vec![0; LEN];
        w.iter().for_each(|h| h.add_to(&mut now));
        let h = delta(&now, &mut seen);
        assert_eq!(h.len(), 4);
        let p50 = h.value_at_quantile(0.5) as f64;
        assert!((p50 / 2_000_000.0 - 1.0).abs() < 0.016, "{p50}");
        let max = h.max() as f64;
        assert!((max / 2.5e9 - 1.0).abs() < 0.016, "{max}");

        w[1].record(5_000);
        let mut now = vec![0; LEN];
        w.iter().for_each(|h| h.add_to(&mut now));
        let h = delta(&now, &mut seen);
        assert_eq!(h.len(), 1);
        assert!((h.max() as f64 / 5_000.0 - 1.0).abs() < 0.016);
    }
}
