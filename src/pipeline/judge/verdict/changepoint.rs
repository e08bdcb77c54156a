//! Shifts in a series of runs (history): E-divisive means proposes where the series changes,
//! a Welch t-test on the logs keeps the splits that hold (as Hunter / Apache Otava do:
//! deterministic, no permutations), and a prediction interval judges the newest run against
//! the runs since the last shift. Pure.

use super::{t_cdf, t_quantile, RESOLUTION};

/// Significance a shift must reach once the weak ones are merged away (Otava's default).
pub const MAX_P: f64 = 0.001;
/// Splits are proposed at a looser level first, then merged (Hunter's two passes).
const FIRST_PASS: f64 = 10.0;
/// Fewest runs on each side of a shift.
pub const MIN_SEGMENT: usize = 2;
/// Fewest earlier runs (since the last shift) the newest run is judged against.
pub const MIN_HISTORY: usize = 3;

/// A shift: the series changes from index `at` on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shift {
    pub at: usize,
    /// mean after / mean before − 1 (geometric), percent.
    pub change_pct: f64,
    /// Two-sided p of the Welch t-test between the neighbouring segments.
    pub p: f64,
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    super::mean_var(v)
}

/// Two-sided Welch p-value of a difference between the means of `a` and `b` (logs), with the
/// figures' resolution as a floor under each variance.
fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let floor = RESOLUTION * RESOLUTION;
    let (ea, eb) = (
        va.max(floor) / a.len() as f64,
        vb.max(floor) / b.len() as f64,
    );
    let se = (ea + eb).sqrt();
    let df = (ea + eb).powi(2)
        / (ea * ea / (a.len() as f64 - 1.0).max(1.0) + eb * eb / (b.len() as f64 - 1.0).max(1.0));
    let t = ((mb - ma) / se).abs();
    2.0 * (1.0 - t_cdf(t, df))
}

/// The E-divisive statistic (α = 1) of splitting `x` at `tau`: how far apart the two sides'
/// distributions are, weighted towards balanced splits.
fn q_hat(x: &[f64], tau: usize) -> f64 {
    let (a, b) = x.split_at(tau);
    let (n, m) = (a.len() as f64, b.len() as f64);
    let between: f64 = a
        .iter()
        .flat_map(|p| b.iter().map(move |q| (p - q).abs()))
        .sum::<f64>()
        * 2.0
        / (n * m);
    let within = |v: &[f64]| {
        let k = v.len() as f64;
        if v.len() < 2 {
            return 0.0;
        }
        let mut s = 0.0;
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                s += (v[i] - v[j]).abs();
            }
        }
        s / (k * (k - 1.0) / 2.0)
    };
    n * m / (n + m) * (between - within(a) - within(b))
}

/// Where the E-divisive statistic splits `x` best, if it can be split at all.
fn best_split(x: &[f64]) -> Option<usize> {
    (MIN_SEGMENT..=x.len().checked_sub(MIN_SEGMENT)?)
        .map(|t| (t, q_hat(x, t)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, q)| *q > 0.0)
        .map(|(t, _)| t)
}

/// Runs per window in the first pass: Hunter's fixed-size windows, so that two shifts a few
/// runs apart are each seen against clean neighbours instead of masking each other.
const WINDOW: usize = 12;

/// Splits `x[a..b]` recursively where a split holds at level `p`.
fn split_into(x: &[f64], a: usize, b: usize, p: f64, out: &mut Vec<usize>) {
    let mut todo = vec![(a, b)];
    while let Some((a, b)) = todo.pop() {
        let Some(t) = best_split(&x[a..b]) else {
            continue;
        };
        let at = a + t;
        if welch_p(&x[a..at], &x[at..b]) <= p {
            out.push(at);
            todo.push((a, at));
            todo.push((at, b));
        }
    }
}

/// The shifts of a series (values > 0, oldest first), strongest kept at `max_p`.
pub fn shifts(values: &[f64], max_p: f64) -> Vec<Shift> {
    let x: Vec<f64> = values
        .iter()
        .map(|v| v.max(f64::MIN_POSITIVE).ln())
        .collect();
    // First pass: windows of WINDOW runs stepped by half a window (and the whole series when
    // it is shorter), each split recursively while a split holds at the looser level.
    let mut cps: Vec<usize> = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + WINDOW).min(x.len());
        split_into(&x, start, end, max_p * FIRST_PASS, &mut cps);
        if end == x.len() {
            break;
        }
        start += WINDOW / 2;
    }
    cps.sort_unstable();
    // Overlapping windows may place one shift a run apart: keep segments of MIN_SEGMENT.
    let mut kept: Vec<usize> = Vec::new();
    for c in cps {
        if kept.last().is_none_or(|&k| c >= k + MIN_SEGMENT) && c + MIN_SEGMENT <= x.len() {
            kept.push(c);
        }
    }
    let mut cps = kept;
    // Merge: drop the weakest shift (judged between its neighbours) until all hold at max_p.
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cps.iter().copied())
            .chain(std::iter::once(x.len()))
            .collect();
        let ps: Vec<f64> = (1..bounds.len() - 1)
            .map(|i| welch_p(&x[bounds[i - 1]..bounds[i]], &x[bounds[i]..bounds[i + 1]]))
            .collect();
        match ps
            .iter()
            .enumerate()
            .filter(|(_, p)| **p > max_p)
            .max_by(|a, b| a.1.total_cmp(b.1))
        {
            Some((i, _)) => {
                cps.remove(i);
            }
            None => {
                return cps
                    .iter()
                    .zip(ps)
                    .enumerate()
                    .map(|(i, (&at, p))| {
                        let (before, _) = mean_var(&x[bounds[i]..at]);
                        let (after, _) = mean_var(&x[at..bounds[i + 2]]);
                        Shift {
                            at,
                            change_pct: ((after - before).exp() - 1.0) * 100.0,
                            p,
                        }
                    })
                    .collect()
            }
        }
    }
}

/// The newest value against the ones before it: (change against their geometric mean,
/// percent; the prediction interval of a new value, percent; outside it?), at two-sided level
/// `alpha`. None with fewer than MIN_HISTORY earlier values.
pub fn newest_outside(earlier: &[f64], newest: f64, alpha: f64) -> Option<(f64, f64, f64, bool)> {
    if earlier.len() < MIN_HISTORY || newest <= 0.0 {
        return None;
    }
    let x: Vec<f64> = earlier
        .iter()
        .map(|v| v.max(f64::MIN_POSITIVE).ln())
        .collect();
    let (m, v) = mean_var(&x);
    let k = x.len() as f64;
    let half = t_quantile(1.0 - alpha / 2.0, k - 1.0)
        * v.max(RESOLUTION * RESOLUTION).sqrt()
        * (1.0 + 1.0 / k).sqrt();
    let d = newest.ln() - m;
    let pct = |z: f64| (z.exp() - 1.0) * 100.0;
    Some((pct(d), pct(-half), pct(half), d.abs() > half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::workload::rand::Rng;

    fn noisy(rng: &mut Rng, levels: &[(usize, f64)], sd: f64) -> Vec<f64> {
        levels
            .iter()
            .flat_map(|&(n, level)| std::iter::repeat_n(level, n))
            .map(|l| {
                let u = rng.unit().max(1e-12);
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos();
                l * (sd * z).exp()
            })
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let mut rng = Rng::seeded(11);
        let x = noisy(&mut rng, &[(20, 1000.0), (15, 900.0)], 0.02);
        let s = shifts(&x, MAX_P);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!((19..=21).contains(&s[0].at), "{s:?}");
        assert!((s[0].change_pct + 10.0).abs() < 3.0, "{s:?}");
    }

    #[test]
    fn two_steps_a_few_runs_apart_are_both_found() {
        let mut rng = Rng::seeded(12);
        let x = noisy(&mut rng, &[(15, 1000.0), (5, 900.0), (15, 1000.0)], 0.015);
        let at: Vec<usize> = shifts(&x, MAX_P).iter().map(|s| s.at).collect();
        assert_eq!(at.len(), 2, "{at:?}");
        assert!(
            (14..=16).contains(&at[0]) && (19..=21).contains(&at[1]),
            "{at:?}"
        );
    }

    #[test]
    fn noise_and_a_single_outlier_are_not_shifts() {
        let mut found = 0;
        for seed in 0..50 {
            let mut rng = Rng::seeded(100 + seed);
            let mut x = noisy(&mut rng, &[(30, 1000.0)], 0.03);
            if seed % 2 == 0 {
                x[12] *= 0.7; // one bad night
            }
            found += shifts(&x, MAX_P).len();
        }
        assert!(found <= 2, "{found} false shifts in 50 series");
    }

    #[test]
    fn the_newest_run_is_judged_by_a_prediction_interval() {
        let earlier = [1000.0, 1010.0, 990.0, 1005.0, 995.0];
        let (d, lo, hi, out) = newest_outside(&earlier, 800.0, 0.01).unwrap();
        assert!(
            out && (d + 20.0).abs() < 0.5 && lo < 0.0 && hi > 0.0,
            "{d} {lo} {hi}"
        );
        let (_, _, _, out) = newest_outside(&earlier, 1003.0, 0.01).unwrap();
        assert!(!out);
        assert_eq!(newest_outside(&earlier[..2], 800.0, 0.01), None);
    }
}
