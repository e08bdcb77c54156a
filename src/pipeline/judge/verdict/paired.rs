//! Paired verdicts: the base and a candidate measured in adjacent slices of one round (or in
//! the same seconds, for a duet), judged on the per-round log ratio, with a looks schedule
//! that lets a point stop as soon as it is decided without raising the false-alarm rate.
//!
//! Pairing removes what the two sides share — the machine's drift, a neighbour's burst that
//! spans the round — which on a shared VM is most of the run-to-run noise. The interval is a
//! t interval on the mean per-round log ratio, its standard error the larger of the i.i.d. one
//! and a Newey–West (Bartlett) one, so rounds that resemble their neighbours do not make the
//! interval falsely narrow. Sequential looks: the rounds at which a point may stop are fixed
//! before it starts (doubling from `min_rounds`, and the last round the budget allows), and
//! each look's interval is drawn at the level a group-sequential spending of α / metrics
//! gives it (`spending.rs`): the intervals of all looks of a metric cover the truth together
//! with probability 1 − α / metrics, so a false verdict at any look, however the stopping
//! went, is at most α per point. docs/statistics.md, "Paired designs", gives the validation.

use super::spending::SPENDING_POWER;
use super::{t_quantile, Metric, Verdict, MIN_TAIL_EVENTS};

/// The metrics a paired point is judged on: the mean rate and the 95th percentile. p99 of a
/// slice of a few seconds is too thin a tail to pay a share of the point's α; it is shown.
pub const JUDGED: [Metric; 2] = [Metric::Tps, Metric::P95];

/// Rounds beyond which `rounds_needed` stops counting.
pub const MAX_ROUNDS_NEEDED: u32 = 100_000;

/// The rounds at which a point is looked at, fixed before its first round, and the two-sided
/// miss each look's interval is drawn at.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Schedule {
    pub looks: Vec<u32>,
    /// Per look: the intervals of all looks of one metric miss the truth together with
    /// probability at most α / metrics (`spending::boundaries`), however the point stops.
    pub misses: Vec<f64>,
}

impl Schedule {
    /// Looks after these rounds (increasing), α spent over them by `spending`.
    pub fn at(looks: Vec<u32>) -> Schedule {
        let per_metric = super::ALPHA / JUDGED.len() as f64;
        let misses = super::spending::nominal_misses(&looks, per_metric, SPENDING_POWER);
        Schedule { looks, misses }
    }

    /// One look, after `rounds` rounds: a fixed-size comparison.
    pub fn fixed(rounds: u32) -> Schedule {
        Schedule::at(vec![rounds.max(2)])
    }

    /// Looks at `min`, 2·min, 4·min, … below `max`, and at `max` (where the budget ends).
    pub fn sequential(min: u32, max: u32) -> Schedule {
        let min = min.max(2);
        let max = max.max(min);
        let mut looks = Vec::new();
        let mut n = min;
        while n < max {
            looks.push(n);
            n = n.saturating_mul(2);
        }
        looks.push(max);
        Schedule::at(looks)
    }

    pub fn last(&self) -> u32 {
        *self.looks.last().unwrap_or(&2)
    }

    pub fn is_look(&self, rounds: u32) -> bool {
        self.looks.contains(&rounds)
    }

    /// The two-sided miss of an interval after `rounds` rounds: that of the look there, or
    /// (a point stopped between looks) of the last look before it, or the first look's.
    pub fn miss_at(&self, rounds: u32) -> f64 {
        let k = self.looks.iter().rposition(|&n| n <= rounds).unwrap_or(0);
        self.misses
            .get(k)
            .copied()
            .unwrap_or(super::ALPHA / JUDGED.len() as f64)
    }
}

/// One metric of one paired point.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PairedJudgement {
    pub metric: Metric,
    pub verdict: Verdict,
    pub judged: bool,
    pub rounds: u32,
    /// Geometric means over the rounds: `cand / base − 1` is exactly `delta_pct`.
    pub base: Option<f64>,
    pub cand: Option<f64>,
    pub delta_pct: Option<f64>,
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
    pub confidence: Option<f64>,
    /// SD of the per-round log ratio (after the CPU adjustment, its residuals'), percent: the
    /// noise the paired verdict pays.
    pub noise_pct: Option<f64>,
    /// SD of ln(figure) across rounds, averaged over the two sides, times √2, percent: what an
    /// unpaired comparison of the same slices would pay per pair.
    pub unpaired_noise_pct: Option<f64>,
    /// Lag-1 autocorrelation of the per-round log ratio.
    pub autocorrelation: Option<f64>,
    /// With the CPU adjustment: the change in ln(ratio) per unit of share that other
    /// processes took more in the candidate's slice than in the base's, and the change before
    /// the adjustment (then `delta_pct` is the change at equal shares).
    pub cpu_slope: Option<f64>,
    pub raw_delta_pct: Option<f64>,
    /// Rounds that would decide an inconclusive metric at the noise measured.
    pub rounds_needed: Option<u32>,
    /// The standard error of the change on the log scale (what pooling over thread counts
    /// weighs the point by); absent in runs before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub se_log: Option<f64>,
    pub note: String,
}

/// Mean, sample variance, the long-run variance of `d` (the variance its mean pays for
/// rounds that resemble their neighbours) and its lag-1 autocorrelation.
///
/// The long-run variance is the larger of two estimates: Newey–West with the Bartlett kernel
/// at the usual bandwidth, and the AR(1) inflation (1 + ρ)/(1 − ρ) at the measured lag-1
/// autocorrelation; never below the i.i.d. variance. At 20 rounds with ρ = 0.6 Newey–West
/// alone covered a 90 % interval 71 % of the time. Correcting ρ for its small-sample bias
/// (Marriott and Pope) was tried: at 5–10 rounds it inflated i.i.d. noise up to 19-fold and
/// left 2× changes undecided.
fn moments(d: &[f64]) -> (f64, f64, f64, f64) {
    let n = d.len() as f64;
    let m = d.iter().sum::<f64>() / n;
    let var = d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let gamma = |lag: usize| -> f64 {
        d.iter()
            .zip(&d[lag..])
            .map(|(a, b)| (a - m) * (b - m))
            .sum::<f64>()
            / n
    };
    let g0 = gamma(0);
    let lags = ((4.0 * (n / 100.0).powf(2.0 / 9.0)).floor() as usize).min(d.len() - 1);
    let mut nw = g0;
    for l in 1..=lags {
        nw += 2.0 * (1.0 - l as f64 / (lags as f64 + 1.0)) * gamma(l);
    }
    let nw = nw * n / (n - 1.0).max(1.0);
    let rho = if g0 > 0.0 && d.len() > 2 {
        gamma(1) / g0
    } else {
        0.0
    };
    let r = rho.clamp(0.0, 0.9);
    let ar1 = var * (1.0 + r) / (1.0 - r);
    (m, var, nw.max(ar1).max(var), rho)
}

/// Rounds from which the CPU adjustment is made: it costs a degree of freedom, which at a
/// handful of rounds is worth more than it removes.
pub const MIN_ADJUSTED: usize = 8;

/// The intercept of d on x (the change at equal shares) with its standard error from the
/// residuals' long-run variance.
struct Adjusted {
    at_zero: f64,
    slope: f64,
    se: f64,
    resid_lrv: f64,
    resid_sd: f64,
}

fn adjust(d: &[f64], x: &[f64]) -> Option<Adjusted> {
    let n = d.len();
    if n < MIN_ADJUSTED || x.len() != n {
        return None;
    }
    let nf = n as f64;
    let (mx, md) = (x.iter().sum::<f64>() / nf, d.iter().sum::<f64>() / nf);
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    if sxx < 1e-9 {
        return None;
    }
    // The adjustment is for a neighbour the sides share by chance. When one side itself
    // makes other processes busier or idler (its I/O done by kernel threads, say), the
    // shares differ on average and adjusting would take part of the real change away: then
    // the plain mean is kept.
    if mx.abs() > 2.0 * (sxx / (nf - 1.0) / nf).sqrt() {
        return None;
    }
    let sxd: f64 = x.iter().zip(d).map(|(a, b)| (a - mx) * (b - md)).sum();
    let slope = sxd / sxx;
    let resid: Vec<f64> = x
        .iter()
        .zip(d)
        .map(|(a, b)| b - md - slope * (a - mx))
        .collect();
    let (_, resid_var, lrv, _) = moments(&resid);
    // The residuals have n − 2 degrees of freedom, `moments` divided by n − 1.
    let lrv = (lrv * (nf - 1.0) / (nf - 2.0)).max(super::RESOLUTION * super::RESOLUTION);
    Some(Adjusted {
        at_zero: md - slope * mx,
        slope,
        se: (lrv * (1.0 / nf + mx * mx / sxx)).sqrt(),
        resid_lrv: lrv,
        resid_sd: (resid_var * (nf - 1.0) / (nf - 2.0)).sqrt(),
    })
}

fn ln_sd(v: &[f64]) -> f64 {
    let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    moments(&l).1.sqrt()
}

fn pct(x: f64) -> f64 {
    (x.exp() - 1.0) * 100.0
}

fn z(p: f64) -> f64 {
    t_quantile(p, 1e6)
}

/// Judges one metric from the rounds' figures of both sides (`base[i]` and `cand[i]` measured
/// in round i; a round missing either is left out) and the events of each slice (for the
/// tail rule). `miss` is the two-sided miss probability of the interval
/// (`Schedule::miss_at`).
///
/// `covariate`, when given, is each round's difference in the CPU share other processes took
/// during the candidate's and the base's slice: from `MIN_ADJUSTED` rounds on, the change is
/// estimated at equal shares (the intercept of d on it, ANCOVA), which removes what a
/// neighbour's bursts did to one slice of a round and not the other.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    metric: Metric,
    base: &[f64],
    cand: &[f64],
    events: &[u64],
    threshold_pct: f64,
    miss: f64,
    covariate: Option<&[f64]>,
) -> PairedJudgement {
    let ok = |i: usize| {
        let (b, c) = (base[i], cand[i]);
        b.is_finite() && c.is_finite() && b > 0.0 && c > 0.0
    };
    let keep: Vec<usize> = (0..base.len().min(cand.len())).filter(|&i| ok(i)).collect();
    let pairs: Vec<(f64, f64)> = keep.iter().map(|&i| (base[i], cand[i])).collect();
    let xs: Option<Vec<f64>> = covariate
        .filter(|x| x.len() >= base.len().min(cand.len()))
        .map(|x| keep.iter().map(|&i| x[i]).collect())
        .filter(|x: &Vec<f64>| x.iter().all(|v| v.is_finite()));
    let n = pairs.len();
    let (bs, cs): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let mut j = PairedJudgement {
        metric,
        verdict: Verdict::Inconclusive,
        judged: false,
        rounds: n as u32,
        base: (n > 0).then(|| crate::engine::metrics::geo_mean(&bs)),
        cand: (n > 0).then(|| crate::engine::metrics::geo_mean(&cs)),
        delta_pct: None,
        lo_pct: None,
        hi_pct: None,
        confidence: None,
        noise_pct: None,
        unpaired_noise_pct: None,
        autocorrelation: None,
        cpu_slope: None,
        raw_delta_pct: None,
        rounds_needed: None,
        se_log: None,
        note: String::new(),
    };
    if n > 0 {
        let d: Vec<f64> = pairs.iter().map(|(b, c)| (c / b).ln()).collect();
        j.delta_pct = Some(pct(d.iter().sum::<f64>() / n as f64));
    }
    if n < 2 {
        j.note = format!("noise unknown: {n} complete round(s); needs at least 2");
        return j;
    }
    if let Some(tail) = metric.tail() {
        let fewest = events
            .iter()
            .map(|&e| e as f64 * tail)
            .fold(f64::INFINITY, f64::min);
        if fewest < MIN_TAIL_EVENTS {
            j.note = format!(
                "not judged: {fewest:.0} events beyond {} in the thinnest slice (needs {MIN_TAIL_EVENTS:.0}); use longer slices",
                metric.name()
            );
        }
    }
    let d: Vec<f64> = pairs.iter().map(|(b, c)| (c / b).ln()).collect();
    let (mut mean, var, mut lrv, rho) = moments(&d);
    let mut df = n as f64 - 1.0;
    // Identical figures do not make the noise zero: the histograms' resolution is 0.1 %.
    lrv = lrv.max(super::RESOLUTION * super::RESOLUTION);
    let mut se = (lrv / n as f64).sqrt();
    let mut noise = var.sqrt();
    if let Some(a) = xs.as_deref().and_then(|x| adjust(&d, x)) {
        noise = a.resid_sd;
        j.cpu_slope = Some(a.slope);
        j.raw_delta_pct = j.delta_pct;
        j.delta_pct = Some(pct(a.at_zero));
        mean = a.at_zero;
        se = a.se;
        lrv = a.resid_lrv;
        df = n as f64 - 2.0;
    }
    let t = t_quantile(1.0 - miss / 2.0, df);
    let (lo, hi) = (mean - t * se, mean + t * se);
    j.lo_pct = Some(pct(lo));
    j.hi_pct = Some(pct(hi));
    j.confidence = Some(1.0 - miss);
    j.se_log = Some(se);
    j.noise_pct = Some(noise * 100.0);
    j.unpaired_noise_pct =
        Some(((ln_sd(&bs).powi(2) + ln_sd(&cs).powi(2)) / 2.0).sqrt() * 2f64.sqrt() * 100.0);
    j.autocorrelation = Some(rho);
    if !j.note.is_empty() {
        return j;
    }
    j.judged = true;
    let threshold_pct = metric.threshold_pct(threshold_pct);
    let (lo_m, hi_m) = super::margins(threshold_pct);
    let up = metric == Metric::Tps;
    j.verdict = if hi < lo_m {
        if up {
            Verdict::Regressed
        } else {
            Verdict::Improved
        }
    } else if lo > hi_m {
        if up {
            Verdict::Improved
        } else {
            Verdict::Regressed
        }
    } else if lo >= lo_m && hi <= hi_m {
        Verdict::Unchanged
    } else {
        // The same interval, where it excludes no change, gives the direction.
        Verdict::direction(metric, lo, hi).unwrap_or(Verdict::Inconclusive)
    };
    if !j.verdict.is_decided() {
        // The distance the interval's half-width must shrink below: to fit within ±threshold,
        // or to clear the nearer threshold on the side the estimate lies.
        let margin = if mean > lo_m && mean < hi_m {
            (hi_m - mean).min(mean - lo_m)
        } else {
            (mean - lo_m).abs().min((mean - hi_m).abs())
        };
        let need = (z(1.0 - miss / 2.0) * lrv.sqrt() / margin.max(1e-9))
            .powi(2)
            .ceil();
        j.rounds_needed =
            (need < MAX_ROUNDS_NEEDED as f64).then_some((need as u32).max(n as u32 + 1));
        let direction = match j.verdict {
            Verdict::Slower | Verdict::Faster => format!(
                "{} by {}, maybe within ±{threshold_pct} %; ",
                j.verdict,
                super::fmt_span(lo, hi)
            ),
            _ => String::new(),
        };
        j.note = direction
            + &match j.rounds_needed {
                Some(r) => {
                    format!("about {r} rounds would decide ±{threshold_pct} % at this noise")
                }
                None => "the change is too close to the threshold to decide".to_string(),
            };
    }
    j
}

/// One point's paired answer: its metrics and their combined verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PairedPoint {
    pub verdict: Verdict,
    pub metrics: Vec<PairedJudgement>,
}

/// The figures of one side of one paired point, one entry per round (aligned with the other
/// side's): tps, p95, p99 and the events of each slice.
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    pub tps: Vec<f64>,
    pub p95: Vec<f64>,
    pub p99: Vec<f64>,
    pub events: Vec<u64>,
    /// Share of the host's CPU that other processes took during each slice (empty when not
    /// measured).
    pub others: Vec<f64>,
}

impl Rounds {
    fn of(&self, m: Metric) -> &[f64] {
        match m {
            Metric::Tps => &self.tps,
            Metric::P95 => &self.p95,
            Metric::P99 => &self.p99,
        }
    }
}

/// Judges a point: tps and p95 decide; p99 is shown with its interval and takes no part.
pub fn judge_point(base: &Rounds, cand: &Rounds, threshold_pct: f64, miss: f64) -> PairedPoint {
    let events: Vec<u64> = base
        .events
        .iter()
        .zip(&cand.events)
        .map(|(a, b)| *a.min(b))
        .collect();
    let covariate: Option<Vec<f64>> =
        (base.others.len() == base.tps.len() && cand.others.len() == cand.tps.len()).then(|| {
            base.others
                .iter()
                .zip(&cand.others)
                .map(|(b, c)| c - b)
                .collect()
        });
    let metrics: Vec<PairedJudgement> = Metric::ALL
        .iter()
        .map(|&m| {
            let x = covariate.as_deref();
            let mut j = judge(m, base.of(m), cand.of(m), &events, threshold_pct, miss, x);
            if !JUDGED.contains(&m) {
                j.judged = false;
                j.verdict = Verdict::Inconclusive;
                j.rounds_needed = None;
                j.note = "shown, not judged (a slice's p99 is a thin tail)".into();
            }
            j
        })
        .collect();
    let verdict = Verdict::combine(metrics.iter().filter(|j| j.judged).map(|j| j.verdict));
    PairedPoint { verdict, metrics }
}

/// A point whose undecided metric would need more than this many times the rounds its
/// budget allows is given up at a look (`futile`), so its time goes to the points after it.
pub const FUTILE_FACTOR: f64 = 3.0;
/// Rounds before which the noise is too poorly known to call a point futile.
pub const FUTILE_FROM: u32 = 10;

/// Whether a point that is not decided after `rounds` of its `last` allowed rounds cannot be
/// decided within them. A point is decided when a metric regresses (final) or when every
/// judged metric is decided, so it is futile when no undecided metric leaning beyond the
/// threshold on its worse side could be called regressed within `FUTILE_FACTOR` × `last`
/// rounds at the noise measured, and some undecided metric needs more than that (or its
/// change lies too near the threshold to decide at all). Giving up decides nothing, so the
/// false-alarm bound is untouched; it only hands the rest of the point's budget on.
pub fn futile(p: &PairedPoint, rounds: u32, last: u32, threshold_pct: f64) -> bool {
    if decided(p) || rounds < FUTILE_FROM || rounds >= last {
        return false;
    }
    let within = |j: &&PairedJudgement| {
        j.rounds_needed
            .is_some_and(|n| n as f64 <= FUTILE_FACTOR * last as f64)
    };
    let worse = |j: &&PairedJudgement| match (j.metric, j.delta_pct) {
        (Metric::Tps, Some(d)) => d < -threshold_pct,
        (m, Some(d)) => d > m.threshold_pct(threshold_pct),
        _ => false,
    };
    let undecided: Vec<&PairedJudgement> = p
        .metrics
        .iter()
        .filter(|j| j.judged && !j.verdict.is_decided())
        .collect();
    let may_regress = undecided.iter().any(|j| worse(j) && within(j));
    !may_regress && undecided.iter().any(|j| !within(j))
}

/// Whether a point may stop at this look: a regression is final; otherwise every judged
/// metric must be decided.
pub fn decided(p: &PairedPoint) -> bool {
    let judged: Vec<&PairedJudgement> = p.metrics.iter().filter(|j| j.judged).collect();
    p.verdict == Verdict::Regressed
        || (!judged.is_empty() && judged.iter().all(|j| j.verdict.is_decided()))
}

#[cfg(test)]
#[path = "paired_tests.rs"]
mod tests;
