//! A pinned control, run over run: each series' paired ratio to the control in this run
//! against the same ratio in earlier runs (`control = "target/config"`), per point and pooled
//! over the thread counts. A slower host slows the control with the candidate and leaves
//! their ratio; a slower candidate moves only the ratio.

use crate::pipeline::judge::verdict::pooled::{self, PointChange, Pooled};
use crate::pipeline::judge::verdict::{fmt_change, t_quantile, FailOn, Verdict, ALPHA};
use crate::pipeline::judge::verdicts_file::{point_ratios, PointRatio, Verdicts};
use std::collections::BTreeMap;

/// How the ratios are judged, stated under them.
pub const METHOD: &str = "Each point's ratio to the control is the paired mean of its rounds \
(log scale, with its Newey–West/AR(1) standard error). The change of that ratio from the \
earlier run(s) to this one is judged on the log scale with the two runs' errors added \
(several earlier runs: their mean, its error the larger of the runs' own and their spread \
from run to run), Welch–Satterthwaite degrees of freedom; half of the 5 % false-alarm budget \
goes to the points (Bonferroni), half to one pooled answer per series and workload over the \
thread counts (random-effects mean, Hartung–Knapp–Sidik–Jonkman interval, Bonferroni over \
those questions); where that interval cannot decide and every thread count's own verdict \
is the same (all regressed, say), the pooled answer is that verdict (an intersection–union \
test: no false alarm beyond the points'). Each interval is read against ±threshold as any \
verdict is.";

/// What a series is compared with, in the pooled sentence.
const SELF: &str = "itself in the earlier run(s), relative to the control,";

/// One point's ratio, before and now.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RatioChange {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    /// candidate / control, geometric means of the rounds.
    pub before: f64,
    pub now: f64,
    /// now / before − 1, percent, and its interval.
    pub delta_pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub control: String,
    pub points: Vec<RatioChange>,
    pub pooled: Vec<Pooled>,
    pub threshold_pct: f64,
}

/// The earlier runs' ratio at one point: their mean (log), its standard error and degrees of
/// freedom.
fn earlier_ratio(runs: &[&PointRatio]) -> (f64, f64, f64) {
    let n = runs.len() as f64;
    let mean = runs.iter().map(|r| r.d).sum::<f64>() / n;
    let own = runs.iter().map(|r| r.se * r.se).sum::<f64>() / (n * n);
    let between = if runs.len() >= 2 {
        runs.iter().map(|r| (r.d - mean).powi(2)).sum::<f64>() / (n - 1.0) / n
    } else {
        0.0
    };
    let df = runs
        .iter()
        .map(|r| (r.rounds as f64 - 1.0).max(1.0))
        .sum::<f64>();
    (mean, own.max(between).sqrt(), df)
}

fn pct(x: f64) -> f64 {
    (x.exp() - 1.0) * 100.0
}

/// This run's ratios against the earlier runs' (oldest first), at the points both have.
pub fn judge(earlier: &[Verdicts], now: &Verdicts, threshold_pct: f64) -> Outcome {
    type Key = (String, String, u32);
    let key = |p: &PointRatio| (p.series.clone(), p.workload.clone(), p.threads);
    let mut before: BTreeMap<Key, Vec<PointRatio>> = BTreeMap::new();
    for v in earlier {
        for p in point_ratios(&v.points) {
            before.entry(key(&p)).or_default().push(p);
        }
    }
    let pairs: Vec<(PointRatio, (f64, f64, f64))> = point_ratios(&now.points)
        .into_iter()
        .filter_map(|p| {
            let b = before.get(&key(&p))?;
            Some((p, earlier_ratio(&b.iter().collect::<Vec<_>>())))
        })
        .collect();
    let miss = ALPHA / 2.0 / pairs.len().max(1) as f64;
    let mut points = Vec::new();
    let mut questions: BTreeMap<(String, String), Vec<PointChange>> = BTreeMap::new();
    for (p, (b, b_se, b_df)) in pairs {
        let d = p.d - b;
        let se = (p.se * p.se + b_se * b_se).sqrt();
        let df_now = (p.rounds as f64 - 1.0).max(1.0);
        let df = se.powi(4) / (p.se.powi(4) / df_now + b_se.powi(4) / b_df).max(f64::MIN_POSITIVE);
        let t = t_quantile(1.0 - miss / 2.0, df.max(1.0));
        let (lo, hi) = (d - t * se, d + t * se);
        let verdict = pooled::read(lo, hi, threshold_pct);
        points.push(RatioChange {
            series: p.series.clone(),
            workload: p.workload.clone(),
            threads: p.threads,
            before: b.exp(),
            now: p.d.exp(),
            delta_pct: pct(d),
            lo_pct: pct(lo),
            hi_pct: pct(hi),
            verdict,
        });
        questions
            .entry((p.series, p.workload))
            .or_default()
            .push(PointChange {
                threads: p.threads,
                d,
                se,
                // The point's own night-over-night verdict: where every thread count is
                // decided one way, the pooled answer says so (an intersection–union test,
                // `pooled::settle_by_points`) instead of "undecided" on k − 1 degrees of
                // freedom.
                verdict: Some(verdict),
            });
    }
    let questions: Vec<_> = questions.into_iter().map(|((s, w), p)| (s, w, p)).collect();
    Outcome {
        control: now.baseline.clone(),
        points,
        pooled: pooled::answers_at(&questions, threshold_pct, ALPHA / 2.0),
        threshold_pct,
    }
}

impl Outcome {
    /// Whether a pooled answer or a point fails the gate.
    pub fn failing(&self, fail_on: FailOn) -> bool {
        self.pooled.iter().any(|p| fail_on.fails(p.verdict))
            || self.points.iter().any(|p| fail_on.fails(p.verdict))
    }

    /// The answers first, then every point, then the method.
    pub fn text(&self, what: &str) -> String {
        let th = format!(
            "±{}",
            crate::pipeline::judge::verdict::fmt_pct(self.threshold_pct)
        );
        let mut s = format!(
            "each series' ratio to the control {} in this run against {what} (threshold {th})\n",
            self.control
        );
        if self.points.is_empty() {
            s.push_str(
                "  no point of this run was measured in the earlier run(s) too: nothing to judge\n",
            );
            return s;
        }
        for p in &self.pooled {
            // One series at two times, each measured against the control.
            let line = pooled::sentence(p, SELF, self.threshold_pct);
            s.push_str(&format!(
                "  {}: {line}\n",
                p.verdict.as_str().to_uppercase()
            ));
        }
        for p in &self.points {
            s.push_str(&format!(
                "  {}/{}/t{}: ratio {:.3} → {:.3}, {} % [{}, {}] {}\n",
                p.series,
                p.workload,
                p.threads,
                p.before,
                p.now,
                fmt_change(p.delta_pct),
                fmt_change(p.lo_pct),
                fmt_change(p.hi_pct),
                p.verdict
            ));
        }
        s.push_str(&format!("{METHOD}\n"));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::judge::verdict::paired::PairedJudgement;
    use crate::pipeline::judge::verdict::Metric;
    use crate::pipeline::judge::verdicts_file::{Cell, Comparison};

    /// A run whose candidate's ratio to the control is `ratio` at each of `threads`, each
    /// with a standard error of `se` (log) over 20 rounds.
    fn night(ratio: &[(u32, f64)], se: f64) -> Verdicts {
        let points = ratio
            .iter()
            .map(|&(threads, r)| Cell {
                workload: "oltp_read_write".into(),
                threads,
                rounds: 20,
                looks: vec![20],
                stopped: crate::pipeline::judge::verdicts_file::Stopped::Rounds,
                seconds: 40.0,
                orders: Vec::new(),
                series: Vec::new(),
                cpu_pct: Vec::new(),
                pinned: Vec::new(),
                turn_ms: 0,
                comparisons: vec![Comparison {
                    series: "candidate/default".into(),
                    verdict: Verdict::Inconclusive,
                    budget_needed_s: None,
                    metrics: vec![PairedJudgement {
                        metric: Metric::Tps,
                        verdict: Verdict::Inconclusive,
                        judged: true,
                        rounds: 20,
                        base: Some(100.0),
                        cand: Some(100.0 * r),
                        delta_pct: Some((r - 1.0) * 100.0),
                        lo_pct: Some((r * (-2.0 * se).exp() - 1.0) * 100.0),
                        hi_pct: Some((r * (2.0 * se).exp() - 1.0) * 100.0),
                        confidence: Some(0.95),
                        noise_pct: None,
                        unpaired_noise_pct: None,
                        autocorrelation: None,
                        cpu_slope: None,
                        raw_delta_pct: None,
                        rounds_needed: None,
                        se_log: Some(se),
                        note: String::new(),
                    }],
                }],
            })
            .collect();
        Verdicts {
            design: "paired".into(),
            method: String::new(),
            baseline: "control/default".into(),
            threshold_pct: 5.0,
            alpha: ALPHA,
            slice_s: 2,
            interleave_ms: 0,
            interleave_auto: false,
            budget_s: None,
            isolation: Vec::new(),
            points,
            pooled: Vec::new(),
        }
    }

    /// A candidate a quarter of what it was against the control (the flush change of #32)
    /// regresses at every point and pooled; the same ratio again is unchanged; the control's
    /// own speed never enters (only ratios are read).
    #[test]
    fn a_ratio_that_fell_regresses_and_a_steady_one_does_not() {
        let t = [1, 4, 16, 64];
        let before = night(&t.map(|t| (t, 1.30)), 0.01);
        let fell = night(&t.map(|t| (t, 0.34)), 0.01);
        let o = judge(std::slice::from_ref(&before), &fell, 5.0);
        assert_eq!(o.points.len(), 4);
        assert!(
            o.points.iter().all(|p| p.verdict == Verdict::Regressed),
            "{o:?}"
        );
        assert_eq!(o.pooled.len(), 1);
        assert_eq!(o.pooled[0].verdict, Verdict::Regressed);
        assert!((o.pooled[0].delta_pct - (0.34 / 1.30 - 1.0) * 100.0).abs() < 0.01);
        assert!(o.failing(FailOn::Regressed));
        let text = o.text("run x");
        assert!(text.contains("REGRESSED: candidate/default is slower than itself in the earlier run(s), relative to the control, for oltp_read_write by 73.8 %"), "{text}");
        assert!(
            text.contains("candidate/default/oltp_read_write/t1: ratio 1.300 → 0.340, -73.8 %"),
            "{text}"
        );

        let steady = night(&t.map(|t| (t, 1.30)), 0.01);
        let o = judge(std::slice::from_ref(&before), &steady, 5.0);
        assert!(
            o.points.iter().all(|p| p.verdict == Verdict::Unchanged),
            "{o:?}"
        );
        assert_eq!(o.pooled[0].verdict, Verdict::Unchanged);
        assert!(!o.failing(FailOn::Slower));
    }

    /// Two thread counts that both regressed (−39 % and −27 %, the real drill's night of
    /// flush 1 + sync_binlog 1): the pooled answer on one degree of freedom cannot decide,
    /// and says what every point established instead of "undecided".
    #[test]
    fn two_thread_counts_that_each_regressed_pool_to_regressed() {
        let before = night(&[(4, 1.42), (16, 1.21)], 0.03);
        let now = night(&[(4, 0.866), (16, 0.879)], 0.03);
        let o = judge(std::slice::from_ref(&before), &now, 5.0);
        assert!(
            o.points.iter().all(|p| p.verdict == Verdict::Regressed),
            "{o:?}"
        );
        assert_eq!(o.pooled[0].verdict, Verdict::Regressed, "{o:?}");
        assert!(o.pooled[0].every_point);
        // One point regressed, the other unchanged: no pooled claim beyond the points'.
        let mixed = night(&[(4, 0.866), (16, 1.21)], 0.03);
        let o = judge(std::slice::from_ref(&before), &mixed, 5.0);
        assert_ne!(o.pooled[0].verdict, Verdict::Regressed, "{o:?}");
        assert!(o.failing(FailOn::Regressed), "a point still fails the gate");
    }

    /// Only points measured in both runs are judged; none in common says so.
    #[test]
    fn points_of_one_run_only_are_not_judged() {
        let a = night(&[(1, 1.0), (4, 1.0)], 0.02);
        let b = night(&[(4, 0.5), (16, 0.5)], 0.02);
        let o = judge(&[a], &b, 5.0);
        assert_eq!(o.points.len(), 1);
        assert_eq!(o.points[0].threads, 4);
        assert!(o.pooled.is_empty(), "one point is not pooled");
        let o = judge(&[night(&[(1, 1.0)], 0.02)], &night(&[(2, 1.0)], 0.02), 5.0);
        assert!(o.text("run x").contains("nothing to judge"));
        assert!(!o.failing(FailOn::Slower));
    }

    /// Several earlier runs whose ratios scatter more than their own errors say: the error of
    /// their mean is the scatter's, so a night inside that scatter is not a regression.
    #[test]
    fn earlier_runs_that_scatter_widen_the_interval() {
        let t = [1, 4];
        let runs: Vec<Verdicts> = [1.0, 0.9, 1.1, 0.95, 1.05]
            .iter()
            .map(|&r| night(&t.map(|t| (t, r)), 0.005))
            .collect();
        let now = night(&t.map(|t| (t, 0.93)), 0.005);
        let o = judge(&runs, &now, 5.0);
        assert!(
            o.points.iter().all(|p| p.verdict != Verdict::Regressed),
            "{o:?}"
        );
        // The same night against one earlier run as tight as its own: decided.
        let o = judge(&runs[..1], &now, 5.0);
        assert!(
            o.points.iter().all(|p| p.verdict == Verdict::Regressed),
            "{o:?}"
        );
    }
}
