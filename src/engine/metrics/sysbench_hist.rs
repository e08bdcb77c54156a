//! sysbench's own latency histogram geometry (1024 log buckets over 0.001–100 000 ms, spec §8),
//! used to print `--histogram` in its layout from our HDR data.

use super::TotalHist;

const BUCKETS: usize = 1024;
const RANGE_MIN_MS: f64 = 0.001;
const RANGE_MAX_MS: f64 = 100_000.0;

fn multiplier() -> f64 {
    (BUCKETS - 1) as f64 / (RANGE_MAX_MS / RANGE_MIN_MS).ln()
}

/// The bucket sysbench files a latency of `ms` milliseconds under.
pub fn bucket_of(ms: f64) -> usize {
    let m = multiplier();
    let b = ((ms.max(RANGE_MIN_MS).ln() - RANGE_MIN_MS.ln()) * m + 0.5).floor();
    (b.max(0.0) as usize).min(BUCKETS - 1)
}

/// The value sysbench prints for a bucket.
pub fn bucket_value(i: usize) -> f64 {
    RANGE_MIN_MS * (i as f64 / multiplier()).exp()
}

/// Non-empty sysbench buckets (value in ms, count), ascending.
pub fn buckets(h: &TotalHist) -> Vec<(f64, u64)> {
    let mut counts = vec![0u64; BUCKETS];
    for v in h.iter_recorded() {
        counts[bucket_of(v.value_iterated_to() as f64 / 1e6)] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| (bucket_value(i), c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_and_are_1_8_percent_apart() {
        for i in [0, 1, 100, 500, 1023] {
            assert_eq!(bucket_of(bucket_value(i)), i);
        }
        let step = bucket_value(101) / bucket_value(100);
        assert!((step - 1.0182).abs() < 0.0005, "{step}");
        assert_eq!(bucket_of(1e9), 1023);
        assert!((bucket_value(1023) - 100_000.0).abs() < 1e-6);
    }
}
