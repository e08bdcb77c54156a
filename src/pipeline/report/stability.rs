//! The report's "Stability" section (#46 item 4, its measurement): from each point's
//! per-second throughput, how steady it was — the coefficient of variation of its seconds,
//! its worst second, and its stalls (runs of seconds below half the point's median second)
//! with their total length — per series, workload and thread count, over the repeats. Only
//! points of at least `MIN_SECONDS` seconds are read: a 2-second slice has no stalls to see.
//! Shown, not judged: no verdict compares two series' stability yet.

use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::{BTreeMap, HashMap};

/// The shortest window whose seconds say something about stalls.
pub const MIN_SECONDS: usize = 10;

/// A second below this share of the point's median second is a stalled one.
pub const STALL_SHARE: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StabilityRow {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    /// Seconds read, over the repeats.
    pub seconds: usize,
    /// Mean over the repeats of the coefficient of variation of the seconds, percent.
    pub cv_pct: f64,
    /// The worst second as a share of its point's median second, percent (lowest repeat).
    pub worst_pct: f64,
    /// Runs of consecutive stalled seconds, and the seconds they lasted, over the repeats.
    pub stalls: usize,
    pub stalled_s: usize,
}

/// One point's stability: (cv %, worst as % of median, stalls, stalled seconds).
type Steadiness = (f64, f64, usize, usize);

/// One point's seconds, measured (`Steadiness`).
pub fn of_seconds(tps: &[f64]) -> Option<Steadiness> {
    if tps.len() < MIN_SECONDS {
        return None;
    }
    let mut sorted = tps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    if median <= 0.0 {
        return None;
    }
    let n = tps.len() as f64;
    let mean = tps.iter().sum::<f64>() / n;
    let var = tps.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let cv = 100.0 * var.sqrt() / mean.max(f64::MIN_POSITIVE);
    let worst = 100.0 * sorted[0] / median;
    let (mut stalls, mut stalled, mut inside) = (0, 0, false);
    for x in tps {
        let low = *x < STALL_SHARE * median;
        if low {
            stalled += 1;
            if !inside {
                stalls += 1;
            }
        }
        inside = low;
    }
    Some((cv, worst, stalls, stalled))
}

/// One row per series, workload and thread count whose ok points have at least
/// `MIN_SECONDS` seconds, in that order.
pub fn rows(records: &[PointRecord], samples: &HashMap<String, Vec<f64>>) -> Vec<StabilityRow> {
    type Key = (String, String, u32);
    let mut acc: BTreeMap<Key, Vec<(usize, Steadiness)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == PointStatus::Ok) {
        let Some(s) = samples.get(&r.point_id) else {
            continue;
        };
        if let Some(m) = of_seconds(s) {
            let key = (
                format!("{}/{}", r.target, r.config),
                r.workload.clone(),
                r.threads,
            );
            acc.entry(key).or_default().push((s.len(), m));
        }
    }
    acc.into_iter()
        .map(|((series, workload, threads), v)| StabilityRow {
            series,
            workload,
            threads,
            seconds: v.iter().map(|(n, _)| n).sum(),
            cv_pct: v.iter().map(|(_, m)| m.0).sum::<f64>() / v.len() as f64,
            worst_pct: v.iter().map(|(_, m)| m.1).fold(f64::INFINITY, f64::min),
            stalls: v.iter().map(|(_, m)| m.2).sum(),
            stalled_s: v.iter().map(|(_, m)| m.3).sum(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_runs_of_seconds_below_half_the_median() {
        // 20 seconds at 1000 with two stalls: 2 seconds at 100, then 1 second at 0.
        let mut s = vec![1000.0; 20];
        s[5] = 100.0;
        s[6] = 100.0;
        s[15] = 0.0;
        let (cv, worst, stalls, stalled) = of_seconds(&s).unwrap();
        assert_eq!((stalls, stalled), (2, 3));
        assert_eq!(worst, 0.0);
        assert!(cv > 30.0, "{cv}");
        // A steady point: no stall, its worst second near the median.
        let steady: Vec<f64> = (0..30).map(|i| 1000.0 + (i % 3) as f64 * 10.0).collect();
        let (cv, worst, stalls, stalled) = of_seconds(&steady).unwrap();
        assert_eq!((stalls, stalled), (0, 0));
        assert!(worst > 98.0 && cv < 1.0, "{worst} {cv}");
        // A dip to 60 % is no stall; too few seconds say nothing.
        let mut dip = vec![1000.0; 12];
        dip[3] = 600.0;
        assert_eq!(of_seconds(&dip).unwrap().2, 0);
        assert!(of_seconds(&[1000.0; 9]).is_none());
    }
}
