//! Whether a change is real: the one method every command that judges a change uses (compare,
//! run --fail-on-regression, report cells and headlines). Pure: numbers in, verdicts out.
//!
//! The unit is one run (repeat) of a point: on a shared VM the spread between runs (server
//! restarts, caches, neighbours) dwarfs the spread within one, so inference rests on the runs
//! and the within-run samples are reported beside them. Each metric is compared on the log
//! scale (candidate/base ratios) with a Welch t interval; the interval's level is set by
//! Benjamini–Hochberg over every question of one comparison; the verdict says where that
//! interval lies against ±threshold. docs/statistics.md states the method, its assumptions and its validation.

pub mod changepoint;
pub mod paired;
pub mod pooled;
mod samples;
pub mod spending;
mod words;

pub use samples::{slow_start, within_run_var};
pub use words::{
    fmt_change, fmt_pct, fmt_span, fmt_threshold, headline, parse_threshold, DEFAULT_THRESHOLD,
    DEFAULT_THRESHOLD_PCT,
};

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Family-wise false-alarm rate of one comparison.
pub const ALPHA: f64 = 0.05;
/// Chance that a change the size of the MDE is called regressed.
pub const POWER: f64 = 0.8;
/// A latency percentile is judged only when every run has this many events beyond it.
pub const MIN_TAIL_EVENTS: f64 = 10.0;
/// The finest run-to-run difference the figures can show (HDR histograms keep 3 significant
/// digits): identical repeats do not make the noise zero.
pub const RESOLUTION: f64 = 0.001;
/// Repeats beyond which `repeats_needed` stops counting.
pub const MAX_REPEATS: u32 = 50;
/// A latency percentile's threshold is this many times the throughput's: a server's p95
/// moves two to four times as far as its rate between adjacent slices of one run on a shared
/// VM (docs/statistics.md, "Thresholds"), so ±5 % on a tail asks for more than the machine
/// can repeat; ±10 % is what `asv compare` asks of every benchmark by default.
pub const TAIL_FACTOR: f64 = 2.0;

/// The method in one paragraph, printed with every comparison.
pub const METHOD: &str = "Each run (repeat) of a point gives one figure per metric (tps; p95 and \
p99 from the run's merged latency histogram). Candidate/base ratios are estimated on the log \
scale with a Welch t interval over the repeats. Interval levels are adjusted over all points × \
metrics of the comparison (Benjamini–Hochberg at 5 %: with no real change, any false alarm at \
most 5 % of the time). regressed / improved: the interval \
lies wholly beyond the threshold; unchanged: wholly within ±threshold (an equivalence test; \
latency percentiles at twice the threshold); slower / faster: the interval (at the level the \
same adjustment gives the test against no change) excludes 0 but not the threshold, so the \
direction is known and its size is not; inconclusive: anything else, or fewer than 2 repeats on a side (noise unknown). A latency \
percentile is judged only with ≥ 10 events beyond it in every run. MDE: the smallest change \
this comparison would call regressed 80 % of the time.";

/// The answers to "did it change?": beyond the threshold (regressed, improved), within it
/// (unchanged), a direction the data establishes without settling the threshold (slower,
/// faster: the interval excludes no change but straddles ±threshold), or nothing decided.
/// Latency percentiles read "slower" for higher latency.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Regressed,
    Improved,
    Slower,
    Faster,
    Unchanged,
    Inconclusive,
}

/// Serializes an optional verdict as its word, or "" for none: the report's templates and its
/// JSON read a cell that was not judged (the baseline's own) as an empty word.
pub fn word_or_empty<S: serde::Serializer>(v: &Option<Verdict>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.map_or("", Verdict::as_str))
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [
        Verdict::Regressed,
        Verdict::Improved,
        Verdict::Slower,
        Verdict::Faster,
        Verdict::Unchanged,
        Verdict::Inconclusive,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Unchanged => "unchanged",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Settled against the threshold: regressed, improved or unchanged. Slower and faster
    /// know a direction, not whether it matters; a budgeted point goes on measuring them.
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Regressed | Verdict::Improved | Verdict::Unchanged
        )
    }

    /// Whether the change is known to be for the worse (regressed or slower).
    pub fn is_worse(self) -> bool {
        matches!(self, Verdict::Regressed | Verdict::Slower)
    }

    /// One verdict for a point from its metrics' (the judged ones): the worst news first —
    /// a regression, then an improvement, then a direction (slower before faster);
    /// unchanged only when every metric is.
    pub fn combine(vs: impl IntoIterator<Item = Verdict>) -> Verdict {
        let vs: Vec<Verdict> = vs.into_iter().collect();
        for v in [
            Verdict::Regressed,
            Verdict::Improved,
            Verdict::Slower,
            Verdict::Faster,
        ] {
            if vs.contains(&v) {
                return v;
            }
        }
        if !vs.is_empty() && vs.iter().all(|v| *v == Verdict::Unchanged) {
            Verdict::Unchanged
        } else {
            Verdict::Inconclusive
        }
    }

    /// The direction an interval (`lo`, `hi`, log scale) that excludes 0 establishes for a
    /// metric; None when it includes 0.
    pub fn direction(metric: Metric, lo: f64, hi: f64) -> Option<Verdict> {
        let up = metric.higher_is_better();
        if hi < 0.0 {
            Some(if up { Verdict::Slower } else { Verdict::Faster })
        } else if lo > 0.0 {
            Some(if up { Verdict::Faster } else { Verdict::Slower })
        } else {
            None
        }
    }
}

/// What fails a regression gate (`run --fail-on`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Beyond the threshold for the worse.
    #[default]
    Regressed,
    /// Regressed, or slower (for the worse, its size undecided).
    Slower,
}

impl FailOn {
    pub fn fails(self, v: Verdict) -> bool {
        match self {
            FailOn::Regressed => v == Verdict::Regressed,
            FailOn::Slower => v.is_worse(),
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is compared.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Tps,
    P95,
    P99,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::Tps, Metric::P95, Metric::P99];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
        }
    }

    pub fn higher_is_better(self) -> bool {
        self == Metric::Tps
    }

    /// The threshold this metric is judged at, percent: `threshold_pct` for the rate,
    /// `TAIL_FACTOR` times it for a latency percentile.
    pub fn threshold_pct(self, threshold_pct: f64) -> f64 {
        match self.tail() {
            None => threshold_pct,
            Some(_) => threshold_pct * TAIL_FACTOR,
        }
    }

    /// Share of events beyond the percentile.
    fn tail(self) -> Option<f64> {
        match self {
            Metric::Tps => None,
            Metric::P95 => Some(0.05),
            Metric::P99 => Some(0.01),
        }
    }
}

/// One side's measurements of one metric at one point: one entry per run.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The figure of each run (values ≤ 0 or not finite were not measured and are left out).
    pub runs: Vec<f64>,
    /// Per run, the variance of ln(run figure) seen within the run (from its per-second
    /// samples), where known: reported beside the run-to-run noise, not used for the interval.
    pub within_var: Vec<f64>,
    /// Per run, the events counted (for the tail rule); empty when unknown.
    pub events: Vec<u64>,
}

impl Side {
    fn logs(&self) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln())
            .collect()
    }
}

/// One question of a comparison.
#[derive(Debug, Clone)]
pub struct Question<'a> {
    pub metric: Metric,
    pub base: &'a Side,
    pub cand: &'a Side,
}

/// The answer to one question, with everything it rests on.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Judgement {
    pub metric: Metric,
    pub verdict: Verdict,
    /// Estimated change, candidate/base − 1, percent (geometric means of the runs).
    pub delta_pct: Option<f64>,
    /// The interval of the change, percent.
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
    /// Two-sided confidence of the interval, after the adjustment for many questions (e.g.
    /// 0.9967).
    pub confidence: Option<f64>,
    /// Run-to-run noise: standard deviation of ln(figure) across runs, percent, averaged over
    /// the two sides. None when it could not be measured.
    pub noise_pct: Option<f64>,
    /// The same as a single run's per-second samples show it (tps only), percent: when it is
    /// far below the run-to-run noise, longer points will not help, more repeats will.
    pub within_noise_pct: Option<f64>,
    pub n_base: usize,
    pub n_cand: usize,
    /// Smallest change (in the worse direction, percent) this comparison calls regressed with
    /// probability POWER.
    pub mde_pct: Option<f64>,
    /// Repeats per side that would call a steady point unchanged, and a change of twice the
    /// threshold regressed, with the usual power, at this noise (None past MAX_REPEATS).
    pub repeats_needed: Option<u32>,
    /// False when the metric was not judged (too few repeats or tail events): it then takes no
    /// part in the point's verdict.
    pub judged: bool,
    /// Why the verdict is what it is, when the interval alone does not say.
    pub note: String,
}

/// How strict a comparison is.
#[derive(Debug, Clone, Copy)]
pub struct Method {
    /// The smallest change that matters, percent.
    pub threshold_pct: f64,
    pub alpha: f64,
}

impl Method {
    pub fn new(threshold_pct: f64) -> Method {
        Method {
            threshold_pct,
            alpha: ALPHA,
        }
    }

    /// The log-ratio margins of ±threshold for `metric`.
    fn margins(&self, metric: Metric) -> (f64, f64) {
        margins(metric.threshold_pct(self.threshold_pct))
    }
}

/// ln(1 − t) and ln(1 + t) for a threshold of `pct` percent.
pub(crate) fn margins(pct: f64) -> (f64, f64) {
    let t = (pct / 100.0).clamp(1e-6, 0.99);
    ((1.0 - t).ln(), (1.0 + t).ln())
}

/// Mean and sample variance.
pub fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var)
}

/// Quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

fn t_cdf(x: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|t| t.cdf(x))
        .unwrap_or(0.5)
}

/// What the interval of one question rests on.
struct Estimate {
    d: f64,
    se: f64,
    df: f64,
    /// Per-run variance of ln(figure), averaged over the two sides.
    s2: f64,
    /// One-sided p of "beyond the threshold" (the smaller of the two directions).
    p: f64,
    /// One-sided p of "a change in the estimate's direction" (against no change at all).
    p0: f64,
}

/// One side's logs: their count, mean, variance (with the floors) and degrees of freedom.
#[derive(Clone, Copy)]
struct Spread {
    n: f64,
    mean: f64,
    var: f64,
    df: f64,
}

fn spread(s: &Side) -> Spread {
    let l = s.logs();
    let (mean, var) = mean_var(&l);
    Spread {
        n: l.len() as f64,
        mean,
        var: var.max(RESOLUTION * RESOLUTION),
        df: l.len() as f64 - 1.0,
    }
}

/// Why a question cannot be judged, if it cannot (`b` and `c` are its sides' spreads).
fn unjudgeable(q: &Question, b: &Spread, c: &Spread) -> Option<String> {
    let (b, c) = (b.n, c.n);
    if b < 2.0 || c < 2.0 {
        return Some(format!(
            "noise unknown: {b} repeat(s) on the base, {c} on the candidate; run with repeats ≥ 3"
        ));
    }
    let tail = q.metric.tail()?;
    let fewest = q
        .base
        .events
        .iter()
        .chain(&q.cand.events)
        .map(|&e| e as f64 * tail)
        .fold(f64::INFINITY, f64::min);
    (fewest < MIN_TAIL_EVENTS).then(|| {
        format!(
            "not judged: {fewest:.0} events beyond {} in the shortest run (needs {MIN_TAIL_EVENTS:.0}); run longer points",
            q.metric.name()
        )
    })
}

fn estimate(b: Spread, c: Spread, m: &Method, metric: Metric) -> Estimate {
    let (eb, ec) = (b.var / b.n, c.var / c.n);
    let se = (eb + ec).sqrt();
    let df = (eb + ec).powi(2) / (eb * eb / b.df + ec * ec / c.df);
    let d = c.mean - b.mean;
    let (lo, hi) = m.margins(metric);
    let p_below = t_cdf((d - lo) / se, df);
    let p_above = 1.0 - t_cdf((d - hi) / se, df);
    Estimate {
        d,
        se,
        df,
        s2: (b.var + c.var) / 2.0,
        p: p_below.min(p_above),
        p0: 1.0 - t_cdf(d.abs() / se, df),
    }
}

fn pct(x: f64) -> f64 {
    (x.exp() - 1.0) * 100.0
}

/// Smallest equal repeats per side at which, with per-run variance `s2`, an unchanged point's
/// (1 − 2α) interval fits within ±threshold with probability POWER, and a change of twice the
/// threshold lies wholly beyond it at the one-sided level `a` with probability 0.95.
fn repeats_needed(s2: f64, a: f64, m: &Method, metric: Metric) -> Option<u32> {
    let (lo, hi) = m.margins(metric);
    let twice = (1.0 - 2.0 * metric.threshold_pct(m.threshold_pct) / 100.0)
        .max(0.01)
        .ln();
    let enough = |n: u32| {
        let se = (2.0 * s2 / n as f64).sqrt();
        let df = 2.0 * n as f64 - 2.0;
        let ta = t_quantile(1.0 - a, df);
        let te = t_quantile(1.0 - m.alpha, df);
        let steady = (te + t_quantile(0.5 + POWER / 2.0, df)) * se <= hi.min(-lo);
        let detect = lo - twice >= (ta + t_quantile(0.95, df)) * se;
        steady && detect
    };
    // More repeats never hurt: search the smallest that is enough.
    if !enough(MAX_REPEATS) {
        return None;
    }
    let (mut bad, mut good) = (1, MAX_REPEATS);
    while good - bad > 1 {
        let mid = (bad + good) / 2;
        if enough(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// Answers every question of one comparison. The levels are adjusted over the questions that
/// could be judged (Benjamini–Hochberg): with no real change anywhere, the chance of any
/// regressed/improved is at most `alpha`; with real changes, at most `alpha` of the points
/// called regressed/improved are expected to be false.
pub fn judge(questions: &[Question], m: &Method) -> Vec<Judgement> {
    // Each side's logs, mean and variance, computed once per question.
    let spreads: Vec<(Spread, Spread)> = questions
        .iter()
        .map(|q| (spread(q.base), spread(q.cand)))
        .collect();
    let est: Vec<Result<Estimate, String>> = questions
        .iter()
        .zip(&spreads)
        .map(|(q, (b, c))| match unjudgeable(q, b, c) {
            Some(w) => Err(w),
            None => Ok(estimate(*b, *c, m, q.metric)),
        })
        .collect();
    let family = est.iter().filter(|e| e.is_ok()).count().max(1);
    let ps = |f: fn(&Estimate) -> f64| -> Vec<Option<f64>> {
        est.iter().map(|e| e.as_ref().ok().map(f)).collect()
    };
    // Beyond the threshold, and (for slower / faster) against no change: each question set
    // has its own Benjamini–Hochberg levels over the same family.
    let level = bh_levels(&ps(|e| e.p), m.alpha);
    let level0 = bh_levels(&ps(|e| e.p0), m.alpha);
    questions
        .iter()
        .zip(est)
        .enumerate()
        .map(|(i, (q, e))| {
            let (b, c) = &spreads[i];
            let (lo_m, hi_m) = m.margins(q.metric);
            let (nb, nc) = (b.n as usize, c.n as usize);
            let point = (nb > 0 && nc > 0).then_some(c.mean - b.mean);
            let mut j = Judgement {
                metric: q.metric,
                verdict: Verdict::Inconclusive,
                delta_pct: point.map(pct),
                lo_pct: None,
                hi_pct: None,
                confidence: None,
                noise_pct: None,
                within_noise_pct: {
                    let w: Vec<f64> = q
                        .base
                        .within_var
                        .iter()
                        .chain(&q.cand.within_var)
                        .copied()
                        .filter(|x| x.is_finite())
                        .collect();
                    (!w.is_empty())
                        .then(|| (w.iter().sum::<f64>() / w.len() as f64).sqrt() * 100.0)
                },
                n_base: nb,
                n_cand: nc,
                mde_pct: None,
                repeats_needed: None,
                judged: false,
                note: String::new(),
            };
            let e = match e {
                Ok(e) => e,
                Err(why) => {
                    j.note = why;
                    return j;
                }
            };
            // Regressed / improved rest on the adjusted interval; unchanged on the plain
            // (1 − 2α) one: claiming "no change beyond ±threshold" at every point is an
            // intersection of equivalence tests and needs no adjustment.
            let interval = |a: f64| {
                let t = t_quantile(1.0 - a, e.df);
                (e.d - t * e.se, e.d + t * e.se, 1.0 - 2.0 * a)
            };
            let (lo, hi, conf) = interval(level[i]);
            let (elo, ehi, econf) = interval(m.alpha);
            let better_up = q.metric.higher_is_better();
            let (below, above) = (hi < lo_m, lo > hi_m);
            let (verdict, shown) = match (below, above) {
                (true, _) if better_up => (Verdict::Regressed, (lo, hi, conf)),
                (true, _) => (Verdict::Improved, (lo, hi, conf)),
                (_, true) if better_up => (Verdict::Improved, (lo, hi, conf)),
                (_, true) => (Verdict::Regressed, (lo, hi, conf)),
                _ if elo >= lo_m && ehi <= hi_m => (Verdict::Unchanged, (elo, ehi, econf)),
                _ => (Verdict::Inconclusive, (lo, hi, conf)),
            };
            // Not settled against the threshold: the direction, where the test against no
            // change establishes one, with the interval it rests on.
            let (verdict, shown) = match verdict {
                Verdict::Inconclusive => {
                    let (lo0, hi0, conf0) = interval(level0[i]);
                    match Verdict::direction(q.metric, lo0, hi0) {
                        Some(v) => (v, (lo0, hi0, conf0)),
                        None => (verdict, shown),
                    }
                }
                v => (v, shown),
            };
            j.verdict = verdict;
            j.lo_pct = Some(pct(shown.0));
            j.hi_pct = Some(pct(shown.1));
            j.confidence = Some(shown.2);
            j.noise_pct = Some(e.s2.sqrt() * 100.0);
            j.judged = true;
            let t = t_quantile(1.0 - level[i], e.df);
            let worse_beyond = (t + t_quantile(POWER, e.df)) * e.se;
            j.mde_pct = Some(if better_up {
                -pct(lo_m - worse_beyond)
            } else {
                pct(hi_m + worse_beyond)
            });
            j.repeats_needed = repeats_needed(e.s2, m.alpha / family as f64, m, q.metric);
            if !j.verdict.is_decided() {
                let within = fmt_pct(q.metric.threshold_pct(m.threshold_pct));
                let direction = match j.verdict {
                    Verdict::Slower | Verdict::Faster => format!(
                        "{} by {}, maybe within ±{within}; ",
                        j.verdict,
                        fmt_span(shown.0, shown.1)
                    ),
                    _ => String::new(),
                };
                j.note = direction
                    + &match j.repeats_needed {
                    Some(n) if n as usize > nb.min(nc) => {
                        format!(
                            "{n} repeats per side would resolve ±{}",
                            fmt_pct(q.metric.threshold_pct(m.threshold_pct))
                        )
                    }
                    Some(_) => "the change is close to the threshold".to_string(),
                    None => format!(
                        "noise {:.1} %: more than {MAX_REPEATS} repeats would be needed; quiet the machine",
                        e.s2.sqrt() * 100.0
                    ),
                };
            }
            j
        })
        .collect()
}

/// Benjamini–Hochberg over one-sided p values (None: not judged, outside the family): the k
/// smallest p with p_(k) ≤ k·α/m are discoveries. Each discovery's interval is drawn at
/// k*·α/m (false-coverage-rate adjusted, Benjamini and Yekutieli 2005), every other one at
/// (k* + 1)·α/m: then "the interval excludes the tested values" and "it is a discovery" are
/// the same statement.
fn bh_levels(p: &[Option<f64>], alpha: f64) -> Vec<f64> {
    let fam = p.iter().filter(|x| x.is_some()).count().max(1) as f64;
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_some()).collect();
    let pv = |i: usize| p[i].unwrap_or(1.0);
    order.sort_by(|&a, &b| pv(a).total_cmp(&pv(b)));
    let discoveries = order
        .iter()
        .enumerate()
        .filter(|(k, &i)| pv(i) <= (*k as f64 + 1.0) * alpha / fam)
        .map(|(k, _)| k + 1)
        .max()
        .unwrap_or(0);
    let mut level = vec![alpha / fam; p.len()];
    for (k, &i) in order.iter().enumerate() {
        level[i] = if k < discoveries {
            discoveries as f64 * alpha / fam
        } else {
            ((discoveries + 1) as f64 * alpha / fam).min(alpha)
        };
    }
    level
}

/// tps, p95 and p99 of one point on one side, in Metric::ALL's order.
pub type Sides = [Side; 3];

/// Adds one run of a point to its sides: its tps, p95 and p99 (in Metric::ALL's order; a
/// percentile the run did not record, as an imported log's p99, is left out, not 0), its
/// events, and the within-run noise of its per-second tps samples where they are known.
pub fn push_run(
    s: &mut Sides,
    figures: [Option<f64>; 3],
    events: u64,
    tps_samples: Option<&[f64]>,
) {
    for (side, v) in s.iter_mut().zip(figures) {
        if let Some(v) = v {
            side.runs.push(v);
            side.events.push(events);
        }
    }
    if let Some(w) = tps_samples.and_then(within_run_var) {
        s[0].within_var.push(w);
    }
}

/// One point's answer: its verdict over the judged metrics, and each metric's judgement.
#[derive(Debug, Clone)]
pub struct PointJudgement {
    pub verdict: Verdict,
    pub metrics: Vec<Judgement>,
}

/// Judges points (base, candidate) as one comparison: every metric of every point is one
/// question of the same family.
pub fn judge_points(points: &[(&Sides, &Sides)], m: &Method) -> Vec<PointJudgement> {
    let questions: Vec<Question> = points
        .iter()
        .flat_map(|(b, c)| {
            Metric::ALL.iter().enumerate().map(|(i, metric)| Question {
                metric: *metric,
                base: &b[i],
                cand: &c[i],
            })
        })
        .collect();
    judge(&questions, m)
        .chunks(Metric::ALL.len())
        .map(|js| PointJudgement {
            verdict: Verdict::combine(js.iter().filter(|j| j.judged).map(|j| j.verdict)),
            metrics: js.to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
