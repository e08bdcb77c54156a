//! What one run's per-second samples say beside its mean: the noise within the run (for
//! the paired and within-run intervals) and a first second too slow for its warmup.

use super::mean_var;

/// The variance of ln(mean) of one run from its per-second samples: the samples' squared
/// coefficient of variation over their count, widened for lag-1 autocorrelation (checkpoints
/// and flushes make neighbouring seconds alike). None with fewer than 3 samples.
pub fn within_run_var(samples: &[f64]) -> Option<f64> {
    let v: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .collect();
    if v.len() < 3 {
        return None;
    }
    let (m, var) = mean_var(&v);
    if m <= 0.0 {
        return None;
    }
    let n = v.len() as f64;
    let denom: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    let rho = if denom > 0.0 {
        v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / denom
    } else {
        0.0
    }
    .clamp(0.0, 0.9);
    Some(var / (m * m) / n * (1.0 + rho) / (1.0 - rho))
}

/// Whether a run's first second stands out as slow against the rest (modified Z-score below
/// −3.5, as Iglewicz and Hoaglin, and at least 10 % below their median): a sign that the
/// warmup was too short. Outliers are reported, never dropped.
pub fn slow_start(samples: &[f64]) -> bool {
    let Some((&first, rest)) = samples.split_first() else {
        return false;
    };
    if rest.len() < 3 {
        return false;
    }
    let med = crate::engine::metrics::median(rest);
    let dev: Vec<f64> = rest.iter().map(|x| (x - med).abs()).collect();
    let mad = crate::engine::metrics::median(&dev) * 1.4826;
    first < 0.9 * med && (mad == 0.0 || (first - med) / mad < -3.5)
}
