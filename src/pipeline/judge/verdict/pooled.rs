//! The sweep-level answer per workload and series: one estimate of the change across the
//! thread counts measured, where single points are too noisy to decide alone.
//!
//! Each point gives its change on the log scale with its standard error (a paired point's
//! per-round mean and its Newey–West/AR(1) error). The points are pooled by a random-effects
//! mean (DerSimonian–Laird between-point variance) with the Hartung–Knapp–Sidik–Jonkman
//! interval (t with k − 1 degrees of freedom, its scale never below the fixed-effect one),
//! which keeps its coverage with the handful of points a sweep has where the plain
//! random-effects interval is too narrow. The question "did this series change for this
//! workload?" is asked once per (candidate, workload); the levels are Bonferroni over those
//! questions. The verdict reads the interval as a point's does: beyond ±threshold, within it,
//! or a direction. A sign count ("slower at 6 of 6 thread counts") is shown beside it.

use super::{margins, t_quantile, Metric, Verdict, ALPHA};

/// One point's change, log scale, and its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointChange {
    pub threads: u32,
    pub d: f64,
    pub se: f64,
    /// The point's own tps verdict, where it has one: when every point of a question has
    /// one, they can settle what the pooled interval leaves undecided (`settle_by_points`).
    pub verdict: Option<Verdict>,
}

/// A tps change and its standard error on the log scale, from its change and interval
/// (percent), the interval's two-sided confidence and the degrees of freedom of its t
/// quantile — or the error the judgement kept (`se_log`). None where either is not a finite,
/// usable number.
pub fn log_change(
    (delta_pct, lo_pct, hi_pct, confidence): (Option<f64>, Option<f64>, Option<f64>, Option<f64>),
    df: f64,
    se_log: Option<f64>,
) -> Option<(f64, f64)> {
    let (d, lo, hi, conf) = (delta_pct?, lo_pct?, hi_pct?, confidence?);
    let d = (1.0 + d / 100.0).ln();
    let se = se_log.unwrap_or_else(|| se_of_interval(lo, hi, conf, df));
    (se.is_finite() && se > 0.0 && d.is_finite()).then_some((d, se))
}

/// The standard error (log scale) a change's interval implies: its bounds (percent), its
/// two-sided confidence and the degrees of freedom of its t quantile.
pub fn se_of_interval(lo_pct: f64, hi_pct: f64, confidence: f64, df: f64) -> f64 {
    let ln = |p: f64| (1.0 + p / 100.0).ln();
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, df.max(1.0));
    (ln(hi_pct) - ln(lo_pct)) / (2.0 * t)
}

/// The pooled answer for one candidate series and workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pooled {
    pub series: String,
    pub workload: String,
    pub verdict: Verdict,
    /// The pooled change of tps, percent, and its interval.
    pub delta_pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
    pub confidence: f64,
    /// Thread counts pooled, and how many of their estimates lie below and above no change.
    pub points: usize,
    pub lower: usize,
    pub higher: usize,
    /// SD of the true change between thread counts (DerSimonian–Laird), percent.
    pub spread_pct: f64,
    /// The verdict rests on every point's own (`settle_by_points`), not on the pooled
    /// interval, which was too wide to decide.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_point: bool,
    /// Each thread count's change and its own verdict, in thread order: what the sentence
    /// says first when the pooled interval cannot (`sentence`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<PointSaid>,
}

/// One thread count of a pooled question, as its sentence names it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PointSaid {
    pub threads: u32,
    /// Its change of tps, percent.
    pub delta_pct: f64,
    /// Its standard error, log scale.
    pub se: f64,
    pub verdict: Option<Verdict>,
}

/// The method in one paragraph, stated with the pooled answers.
pub const METHOD: &str = "Pooled over thread counts: each point's change of tps (log scale, \
with its standard error) enters a random-effects mean (DerSimonian–Laird between-point \
variance) with a Hartung–Knapp–Sidik–Jonkman interval (t, k − 1 degrees of freedom), at a \
level shared by Bonferroni over the (series, workload) questions of the run (5 % in all). \
The verdict reads that interval as a point's: regressed / improved beyond ±threshold, \
unchanged within it, slower / faster when it excludes no change but not the threshold.";

/// Pools `points` (at least 2) of one question, `miss` the interval's two-sided miss: the
/// mean change, its interval (log scale) and the between-point SD.
pub fn pool(points: &[PointChange], miss: f64) -> Option<(f64, f64, f64, f64)> {
    let p: Vec<&PointChange> = points
        .iter()
        .filter(|x| x.d.is_finite() && x.se.is_finite() && x.se > 0.0)
        .collect();
    let k = p.len();
    if k < 2 {
        return None;
    }
    let w: Vec<f64> = p.iter().map(|x| 1.0 / (x.se * x.se)).collect();
    let sw: f64 = w.iter().sum();
    let fixed = p.iter().zip(&w).map(|(x, w)| w * x.d).sum::<f64>() / sw;
    let q: f64 = p
        .iter()
        .zip(&w)
        .map(|(x, w)| w * (x.d - fixed).powi(2))
        .sum();
    let c = sw - w.iter().map(|w| w * w).sum::<f64>() / sw;
    let tau2 = ((q - (k as f64 - 1.0)) / c).max(0.0);
    let wr: Vec<f64> = p.iter().map(|x| 1.0 / (x.se * x.se + tau2)).collect();
    let swr: f64 = wr.iter().sum();
    let mu = p.iter().zip(&wr).map(|(x, w)| w * x.d).sum::<f64>() / swr;
    let hk = p
        .iter()
        .zip(&wr)
        .map(|(x, w)| w * (x.d - mu).powi(2))
        .sum::<f64>()
        / (k as f64 - 1.0);
    let se = (hk.max(1.0) / swr).sqrt();
    let t = t_quantile(1.0 - miss / 2.0, k as f64 - 1.0);
    Some((mu, mu - t * se, mu + t * se, tau2.sqrt()))
}

fn pct(x: f64) -> f64 {
    (x.exp() - 1.0) * 100.0
}

/// The verdict of a tps interval (log scale) against ±threshold, as a point's is read.
pub fn read(lo: f64, hi: f64, threshold_pct: f64) -> Verdict {
    let (lo_m, hi_m) = margins(threshold_pct);
    if hi < lo_m {
        Verdict::Regressed
    } else if lo > hi_m {
        Verdict::Improved
    } else if lo >= lo_m && hi <= hi_m {
        Verdict::Unchanged
    } else {
        Verdict::direction(Metric::Tps, lo, hi).unwrap_or(Verdict::Inconclusive)
    }
}

/// The pooled answers of a run: one per (series, workload) with points of at least two
/// thread counts. `questions` holds each one's points.
pub fn answers(
    questions: &[(String, String, Vec<PointChange>)],
    threshold_pct: f64,
) -> Vec<Pooled> {
    answers_at(questions, threshold_pct, ALPHA)
}

/// `answers` with `alpha` shared by the questions (a caller that spends part of the run's α
/// elsewhere).
pub fn answers_at(
    questions: &[(String, String, Vec<PointChange>)],
    threshold_pct: f64,
    alpha: f64,
) -> Vec<Pooled> {
    let asked = questions
        .iter()
        .filter(|(_, _, p)| p.len() >= 2)
        .count()
        .max(1);
    let miss = alpha / asked as f64;
    questions
        .iter()
        .filter_map(|(series, workload, points)| {
            let (mu, lo, hi, tau) = pool(points, miss)?;
            let mut p = Pooled {
                series: series.clone(),
                workload: workload.clone(),
                verdict: read(lo, hi, threshold_pct),
                delta_pct: pct(mu),
                lo_pct: pct(lo),
                hi_pct: pct(hi),
                confidence: 1.0 - miss,
                points: points.len(),
                lower: points.iter().filter(|p| p.d < 0.0).count(),
                higher: points.iter().filter(|p| p.d > 0.0).count(),
                spread_pct: tau * 100.0,
                every_point: false,
                each: {
                    let mut each: Vec<PointSaid> = points
                        .iter()
                        .map(|c| PointSaid {
                            threads: c.threads,
                            delta_pct: pct(c.d),
                            se: c.se,
                            verdict: c.verdict,
                        })
                        .collect();
                    each.sort_by_key(|c| c.threads);
                    each
                },
            };
            if let Some(own) = points.iter().map(|c| c.verdict).collect::<Option<Vec<_>>>() {
                settle_by_points(&mut p, &own);
            }
            Some(p)
        })
        .collect()
}

/// Where the pooled interval leaves a question undecided but every thread count's own tps
/// verdict points the same way, the answer is that way: regressed when every point regressed,
/// slower when every point is slower or regressed (and faster / improved alike). An
/// intersection–union test: "slower at every thread count" is wrong only if some point's own
/// verdict is, so it adds no false alarm beyond the points'. With two or three thread counts
/// a random-effects interval on k − 1 degrees of freedom is too wide to decide even two
/// regressions of −23 % and −47 %; this reads what the points already established.
pub fn settle_by_points(p: &mut Pooled, tps_verdicts: &[Verdict]) {
    use Verdict::*;
    if tps_verdicts.len() < 2 || tps_verdicts.len() != p.points {
        return;
    }
    let all = |f: fn(&Verdict) -> bool| tps_verdicts.iter().all(f);
    let settled = if all(|v| *v == Regressed) {
        Regressed
    } else if all(|v| *v == Improved) {
        Improved
    } else if all(|v| matches!(v, Regressed | Slower)) {
        Slower
    } else if all(|v| matches!(v, Improved | Faster)) {
        Faster
    } else {
        return;
    };
    let rank = |v: Verdict| match v {
        Regressed | Improved => 2,
        Slower | Faster => 1,
        _ => 0,
    };
    if rank(settled) > rank(p.verdict) {
        p.verdict = settled;
        p.every_point = true;
    }
}

/// One sentence for a pooled answer: "m/slow is slower than m/default for oltp_read_only by
/// 6.5 % [2.0, 10.8] (lower at 4 of 4 thread counts); whether by more than 5 % is undecided".
pub fn sentence(p: &Pooled, baseline: &str, threshold_pct: f64) -> String {
    let size = |a: f64, b: f64| {
        let (a, b) = (a.abs(), b.abs());
        format!(
            "{:.1} % [{:.1}, {:.1}]",
            (p.delta_pct).abs(),
            a.min(b),
            a.max(b)
        )
    };
    let count = match p.verdict {
        Verdict::Regressed | Verdict::Slower => {
            format!("lower at {} of {} thread counts", p.lower, p.points)
        }
        Verdict::Improved | Verdict::Faster => {
            format!("higher at {} of {} thread counts", p.higher, p.points)
        }
        _ => format!(
            "lower at {}, higher at {} of {} thread counts",
            p.lower, p.higher, p.points
        ),
    };
    let th = super::fmt_pct(threshold_pct);
    if let Some(s) = by_points(p, baseline) {
        return s;
    }
    if p.every_point {
        let (word, each) = match p.verdict {
            Verdict::Regressed => ("slower than", format!("regressed, beyond −{th}")),
            Verdict::Improved => ("faster than", format!("improved, beyond +{th}")),
            Verdict::Slower => ("slower than", "slower or regressed".to_string()),
            _ => ("faster than", "faster or improved".to_string()),
        };
        return format!(
            "{} is {word} {baseline} for {} at every thread count measured ({} of {}: each {each}); pooled {:+.1} %, {} with {} thread counts",
            p.series,
            p.workload,
            p.points,
            p.points,
            p.delta_pct,
            match interval(p) {
                Some(i) => format!("{i} too wide"),
                None => "its interval unbounded".to_string(),
            },
            p.points
        );
    }
    match p.verdict {
        Verdict::Regressed => format!(
            "{} is slower than {baseline} for {} by {} ({count}): regressed, beyond −{th}",
            p.series,
            p.workload,
            size(p.lo_pct, p.hi_pct)
        ),
        Verdict::Improved => format!(
            "{} is faster than {baseline} for {} by {} ({count}): improved, beyond +{th}",
            p.series,
            p.workload,
            size(p.lo_pct, p.hi_pct)
        ),
        Verdict::Slower => format!(
            "{} is slower than {baseline} for {} by {} ({count}); whether by more than {th} is undecided",
            p.series,
            p.workload,
            size(p.lo_pct, p.hi_pct)
        ),
        Verdict::Faster => format!(
            "{} is faster than {baseline} for {} by {} ({count}); whether by more than {th} is undecided",
            p.series,
            p.workload,
            size(p.lo_pct, p.hi_pct)
        ),
        Verdict::Unchanged => format!(
            "{} is unchanged against {baseline} for {} within ±{th}: {:+.1} % {} ({count})",
            p.series,
            p.workload,
            p.delta_pct,
            interval(p).unwrap_or_default()
        ),
        Verdict::Inconclusive => format!(
            "{} against {baseline} for {}: undecided, {:+.1} % {} ({count})",
            p.series,
            p.workload,
            p.delta_pct,
            interval(p).unwrap_or_else(|| format!("with no useful bound from {} thread counts", p.points))
        ),
    }
}

/// The points' own answer, where the pooled interval leaves the question undecided and says
/// less than they do: every thread count's estimate on one side with at least one decided
/// that way and none the other ("higher at every thread count measured, +7.2 to +27.2 %:
/// improved at 4 threads, faster at 16 and 64, inconclusive at 1"), or a pooled interval
/// wider than every point's own (two thread counts whose changes differ). Each point's verdict
/// is its own test at its own level; the sentence claims nothing they do not.
fn by_points(p: &Pooled, baseline: &str) -> Option<String> {
    use Verdict::*;
    if p.verdict != Inconclusive || p.each.len() < 2 || p.each.len() != p.points {
        return None;
    }
    let verdict = |c: &PointSaid| c.verdict.unwrap_or(Inconclusive);
    let up = p.each.iter().all(|c| c.delta_pct > 0.0);
    let down = p.each.iter().all(|c| c.delta_pct < 0.0);
    let decided_up = p
        .each
        .iter()
        .any(|c| matches!(verdict(c), Faster | Improved));
    let decided_down = p
        .each
        .iter()
        .any(|c| matches!(verdict(c), Slower | Regressed));
    let pooled_half = ((1.0 + p.hi_pct / 100.0).ln() - (1.0 + p.lo_pct / 100.0).ln()) / 2.0;
    let widest_point = p.each.iter().map(|c| 1.96 * c.se).fold(0.0, f64::max);
    let wider = !pooled_half.is_finite() || pooled_half > widest_point;
    let (lo, hi) = p.each.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| {
        (lo.min(c.delta_pct), hi.max(c.delta_pct))
    });
    let lead = if (up && decided_up && !decided_down) || (down && decided_down && !decided_up) {
        format!(
            "{} is {} than {baseline} for {} at every thread count measured, {:+.1} to {:+.1} %",
            p.series,
            if up { "higher" } else { "lower" },
            p.workload,
            if up { lo } else { hi },
            if up { hi } else { lo },
        )
    } else if wider && p.each.iter().any(|c| verdict(c) != Inconclusive) {
        format!(
            "{} against {baseline} for {}, by thread count ({:+.1} to {:+.1} %)",
            p.series, p.workload, lo, hi
        )
    } else {
        return None;
    };
    // "improved at 4 threads, faster at 16 and 64 threads, inconclusive at 1 thread (+8.0 %)":
    // the known ones first.
    let mut words: Vec<(Verdict, Vec<u32>, Vec<f64>)> = Vec::new();
    for c in &p.each {
        let v = verdict(c);
        match words.iter_mut().find(|(w, ..)| *w == v) {
            Some((_, at, pcts)) => {
                at.push(c.threads);
                pcts.push(c.delta_pct);
            }
            None => words.push((v, vec![c.threads], vec![c.delta_pct])),
        }
    }
    words.sort_by_key(|(v, ..)| *v == Inconclusive);
    let said: Vec<String> = words
        .iter()
        .map(|(v, at, pcts)| {
            let n: Vec<String> = at.iter().map(u32::to_string).collect();
            let last = n.len() - 1;
            let list = match last {
                0 => n[0].clone(),
                _ => format!("{} and {}", n[..last].join(", "), n[last]),
            };
            let unit = if at == &[1] { "thread" } else { "threads" };
            let figures = if *v == Inconclusive {
                let each: Vec<String> = pcts.iter().map(|x| format!("{x:+.1}")).collect();
                format!(" ({} %)", each.join(", "))
            } else {
                String::new()
            };
            format!("{} at {list} {unit}{figures}", v.as_str())
        })
        .collect();
    let pooled = match interval(p) {
        Some(i) => format!("{:+.1} % {i}", p.delta_pct),
        None => format!("{:+.1} %, its interval unbounded", p.delta_pct),
    };
    Some(format!(
        "{lead}: {}; pooled over them {pooled}, wider than the points' own because the change differs by thread count",
        said.join(", ")
    ))
}

/// A pooled change beyond a factor of ten either way is not a bound anyone can use: a
/// random-effects interval on one degree of freedom reached "+121185954004762.6 %" when two
/// points disagreed. "[−12.0, +30.1]" when both bounds are within ×10 of no change, else None.
fn interval(p: &Pooled) -> Option<String> {
    let usable =
        p.lo_pct > -90.0 && p.hi_pct < 900.0 && p.lo_pct.is_finite() && p.hi_pct.is_finite();
    usable.then(|| format!("[{:+.1}, {:+.1}]", p.lo_pct, p.hi_pct))
}

#[cfg(test)]
#[path = "pooled_tests.rs"]
mod tests;
