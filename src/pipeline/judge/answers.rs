//! A run's answer, judged once: each compared cell's verdict (a candidate series against the
//! baseline at one workload and thread count), with its judgements and note, and the
//! sentences a report opens with. It is what the run kept in verdicts.json (a paired run's,
//! or an unpaired run's judged when it ended) where that answers the report's questions, or
//! else judged here, on demand, from the cells' repeats (`report --baseline X`, a run of one
//! series, a run older than verdicts.json). Every view reads a cell's verdict from here; the
//! report writes it into its cell in one place. The winner table's margins between two
//! candidates — a question no run asks — are judged here too (`margins`).

use super::verdict::{self, Judgement, Method, Metric, Sides, Verdict};
use super::verdicts_file::{Unpaired, Verdicts};

/// One question of a report: candidate `series`'s cell against the baseline's at
/// (`workload`, `threads`), with both cells' repeats.
pub struct Question<'a> {
    pub series: &'a str,
    pub workload: &'a str,
    pub threads: u32,
    pub base: &'a Sides,
    pub cand: &'a Sides,
}

/// One cell's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    pub verdict: Verdict,
    /// The tps and p95 verdicts with their intervals (a paired point's from its rounds).
    pub tps: Option<Judged>,
    pub p95: Option<Judged>,
    /// Why an undecided point is undecided: its first metric's note, named.
    pub note: String,
}

/// One metric's verdict of a cell, its change and that change's interval, percent. A paired
/// point's change replaces the ratio of the cell's figures (both are geometric means, of the
/// rounds it judged and of every slice).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    pub delta_pct: Option<f64>,
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
}

/// Where a run's answers came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A paired run's verdicts.json: a cell it did not judge stays unjudged.
    Paired,
    /// An unpaired run's verdicts.json, judged when the run ended.
    Kept,
    /// Judged now, from the report's cells.
    Judged,
}

/// The run's answer, as every view reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answers {
    pub source: Source,
    pub threshold_pct: f64,
    /// The sentences a report opens with: the pooled answers, then one per series.
    pub headlines: Vec<String>,
    pub cells: Vec<Answer>,
}

impl Answers {
    /// The answer to the report's `questions` (its series, baseline first): a paired run's
    /// verdicts when they are against the same baseline, an unpaired run's when they answer
    /// every question, else judged now at the run's threshold (else the default).
    pub fn decide(
        paired: Option<&Verdicts>,
        unpaired: Option<&Unpaired>,
        questions: &[Question<'_>],
        series: &[String],
    ) -> Answers {
        let baseline = series.first().map(String::as_str).unwrap_or_default();
        if let Some(v) = paired.filter(|v| v.baseline == baseline) {
            return Answers::of_paired(v);
        }
        if let Some(a) = unpaired.and_then(|u| Answers::of_unpaired(u, questions, series)) {
            return a;
        }
        let threshold = paired
            .map(|v| v.threshold_pct)
            .or(unpaired.map(|u| u.threshold_pct))
            .unwrap_or(verdict::DEFAULT_THRESHOLD_PCT);
        Answers::judge(questions, series, threshold)
    }

    /// Judges every question now, all of them one family (the verdict's method).
    pub fn judge(questions: &[Question<'_>], series: &[String], threshold_pct: f64) -> Answers {
        let pairs: Vec<(&Sides, &Sides)> = questions.iter().map(|q| (q.base, q.cand)).collect();
        let judged = verdict::judge_points(&pairs, &Method::new(threshold_pct));
        let cells: Vec<Answer> = questions
            .iter()
            .zip(judged)
            .map(|(q, p)| unpaired_answer(q.series, q.workload, q.threads, p.verdict, &p.metrics))
            .collect();
        Answers {
            source: Source::Judged,
            threshold_pct,
            headlines: per_series(series, &cells),
            cells,
        }
    }

    /// An unpaired run's kept verdicts, if they answer every question against the same
    /// baseline: all of them or none, since a report judging some cells itself would hold
    /// two families.
    fn of_unpaired(u: &Unpaired, questions: &[Question<'_>], series: &[String]) -> Option<Answers> {
        if series.first() != Some(&u.baseline) {
            return None;
        }
        let cells = questions
            .iter()
            .map(|q| {
                let p = u.point(q.series, q.workload, q.threads)?;
                Some(unpaired_answer(
                    q.series, q.workload, q.threads, p.verdict, &p.metrics,
                ))
            })
            .collect::<Option<Vec<Answer>>>()?;
        let headlines = u
            .pooled
            .iter()
            .map(|p| verdict::pooled::sentence(p, &u.baseline, u.threshold_pct))
            .chain(per_series(series, &cells))
            .collect();
        Some(Answers {
            source: Source::Kept,
            threshold_pct: u.threshold_pct,
            headlines,
            cells,
        })
    }

    /// A paired run's verdicts: one per point and candidate, with its rounds' change and
    /// interval.
    pub fn of_paired(v: &Verdicts) -> Answers {
        let mut cells = Vec::new();
        for p in &v.points {
            for k in &p.comparisons {
                let metric = |m: Metric| {
                    k.metrics.iter().find(|j| j.metric == m).map(|j| Judged {
                        verdict: j.verdict,
                        delta_pct: j.delta_pct,
                        lo_pct: j.lo_pct,
                        hi_pct: j.hi_pct,
                    })
                };
                cells.push(Answer {
                    series: k.series.clone(),
                    workload: p.workload.clone(),
                    threads: p.threads,
                    verdict: k.verdict,
                    tps: metric(Metric::Tps),
                    p95: metric(Metric::P95),
                    note: k
                        .metrics
                        .iter()
                        .find(|j| j.judged && !j.note.is_empty())
                        .map(|j| format!("{} (paired): {}", j.metric.name(), j.note))
                        .unwrap_or_default(),
                });
            }
        }
        let mut headlines: Vec<String> = v
            .pooled
            .iter()
            .map(|p| verdict::pooled::sentence(p, &v.baseline, v.threshold_pct))
            .collect();
        let compared: std::collections::BTreeSet<&str> =
            cells.iter().map(|c| c.series.as_str()).collect();
        for s in compared {
            let vs: Vec<Verdict> = cells
                .iter()
                .filter(|c| c.series == s)
                .map(|c| c.verdict)
                .collect();
            headlines.push(format!(
                "{s} vs {} point by point (paired): {}",
                v.baseline,
                verdict::headline(&vs)
            ));
        }
        Answers {
            source: Source::Paired,
            threshold_pct: v.threshold_pct,
            headlines,
            cells,
        }
    }

    /// The answer of `series`'s cell at (`workload`, `threads`), if it was judged.
    pub fn cell(&self, series: &str, workload: &str, threads: u32) -> Option<&Answer> {
        self.cells
            .iter()
            .find(|c| c.series == series && c.workload == workload && c.threads == threads)
    }

    /// Why a cell has no answer, where the report says one: a paired run judges only the
    /// points it measured in rounds.
    pub fn unjudged_note(&self) -> &'static str {
        match self.source {
            Source::Paired => "not judged: no paired rounds at this point",
            Source::Kept | Source::Judged => "",
        }
    }
}

/// An answer from a judgement of the cells' repeats (now, or when an unpaired run ended): the
/// change shown stays the ratio of the cells' figures.
fn unpaired_answer(
    series: &str,
    workload: &str,
    threads: u32,
    v: Verdict,
    metrics: &[Judgement],
) -> Answer {
    let metric = |m: Metric| {
        metrics.iter().find(|j| j.metric == m).map(|j| Judged {
            verdict: j.verdict,
            delta_pct: None,
            lo_pct: j.lo_pct,
            hi_pct: j.hi_pct,
        })
    };
    Answer {
        series: series.to_string(),
        workload: workload.to_string(),
        threads,
        verdict: v,
        tps: metric(Metric::Tps),
        p95: metric(Metric::P95),
        note: metrics
            .iter()
            .find(|x| !x.note.is_empty())
            .map(|x| format!("{}: {}", x.metric.name(), x.note))
            .unwrap_or_default(),
    }
}

/// "candidate vs baseline: regressed at 1/6 points, …" per compared series, in `series`'
/// order.
fn per_series(series: &[String], cells: &[Answer]) -> Vec<String> {
    series
        .iter()
        .skip(1)
        .filter_map(|s| {
            let vs: Vec<Verdict> = cells
                .iter()
                .filter(|c| c.series == *s)
                .map(|c| c.verdict)
                .collect();
            (!vs.is_empty()).then(|| format!("{s} vs {}: {}", series[0], verdict::headline(&vs)))
        })
        .collect()
}

/// The winner table's margins where neither side is the baseline: the best series' repeats
/// against the runner-up's, all of the table's such rows one family. Each is the tps
/// judgement (its verdict and interval).
pub fn margins(pairs: &[(&Sides, &Sides)], threshold_pct: f64) -> Vec<Judged> {
    verdict::judge_points(pairs, &Method::new(threshold_pct))
        .into_iter()
        .map(|p| {
            let tps = &p.metrics[0];
            Judged {
                verdict: tps.verdict,
                delta_pct: tps.delta_pct,
                lo_pct: tps.lo_pct,
                hi_pct: tps.hi_pct,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell's sides: `n` runs around `tps` (±1 %), p95 20 ms, 10,000 events each.
    fn sides(tps: f64, n: usize) -> Sides {
        let mut s = Sides::default();
        for k in 0..n {
            let wobble = 1.0 + 0.01 * ((k % 3) as f64 - 1.0);
            verdict::push_run(&mut s, [Some(tps * wobble), Some(20.0), None], 10_000, None);
        }
        s
    }

    fn paired(baseline: &str, verdict: &str) -> Verdicts {
        serde_json::from_value(serde_json::json!({
            "design": "paired", "method": "m", "baseline": baseline, "threshold_pct": 3.0,
            "alpha": 0.05, "slice_s": 2, "budget_s": null,
            "points": [{"workload": "oltp_read_only", "threads": 4, "rounds": 5,
                "looks": [5], "stopped": "decided", "seconds": 10.0, "orders": [],
                "comparisons": [{"series": "t/b", "verdict": verdict, "budget_needed_s": null,
                    "metrics": []}]}]
        }))
        .unwrap()
    }

    #[test]
    fn a_runs_kept_answer_is_read_where_it_answers_and_judged_anew_where_not() {
        let series = vec!["t/a".to_string(), "t/b".to_string()];
        let (base, cand) = (sides(1000.0, 3), sides(700.0, 3));
        let q = [Question {
            series: "t/b",
            workload: "oltp_read_only",
            threads: 4,
            base: &base,
            cand: &cand,
        }];
        // Judged now: 30 % fewer tps regressed, at the default threshold.
        let now = Answers::decide(None, None, &q, &series);
        assert_eq!(now.source, Source::Judged);
        assert_eq!(now.threshold_pct, verdict::DEFAULT_THRESHOLD_PCT);
        let a = now.cell("t/b", "oltp_read_only", 4).unwrap();
        assert_eq!(a.verdict, Verdict::Regressed);
        assert_eq!(a.tps.unwrap().verdict, Verdict::Regressed);
        assert!(
            a.tps.unwrap().delta_pct.is_none(),
            "the figures' ratio stays"
        );
        assert_eq!(now.headlines.len(), 1, "{:?}", now.headlines);
        assert!(
            now.headlines[0].starts_with("t/b vs t/a: "),
            "{:?}",
            now.headlines
        );
        // A paired run's own answer against the same baseline is the answer, whatever the
        // figures say (it was judged on the rounds, at its threshold).
        let v = paired("t/a", "unchanged");
        let kept = Answers::decide(Some(&v), None, &q, &series);
        assert_eq!(kept.source, Source::Paired);
        assert_eq!(kept.threshold_pct, 3.0);
        assert_eq!(
            kept.cell("t/b", "oltp_read_only", 4).unwrap().verdict,
            Verdict::Unchanged
        );
        assert_eq!(kept.cell("t/b", "oltp_read_only", 8), None);
        assert_eq!(
            kept.unjudged_note(),
            "not judged: no paired rounds at this point"
        );
        // Against another baseline the paired answer answers another question: judged anew,
        // at the run's threshold.
        let other = paired("t/z", "unchanged");
        let anew = Answers::decide(Some(&other), None, &q, &series);
        assert_eq!(anew.source, Source::Judged);
        assert_eq!(anew.threshold_pct, 3.0);
        assert_eq!(
            anew.cell("t/b", "oltp_read_only", 4).unwrap().verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn an_unpaired_runs_answer_is_all_or_nothing() {
        let series = vec!["t/a".to_string(), "t/b".to_string()];
        let (base, cand) = (sides(1000.0, 3), sides(1001.0, 3));
        let q = |threads| Question {
            series: "t/b",
            workload: "oltp_read_only",
            threads,
            base: &base,
            cand: &cand,
        };
        let u: Unpaired = serde_json::from_value(serde_json::json!({
            "design": "sequential", "method": "m", "baseline": "t/a", "threshold_pct": 10.0,
            "points": [{"series": "t/b", "workload": "oltp_read_only", "threads": 1,
                "verdict": "improved", "metrics": []}],
            "pooled": []
        }))
        .unwrap();
        let kept = Answers::decide(None, Some(&u), &[q(1)], &series);
        assert_eq!(kept.source, Source::Kept);
        assert_eq!(kept.cells[0].verdict, Verdict::Improved);
        // A question the run did not judge: every cell judged anew, one family.
        let anew = Answers::decide(None, Some(&u), &[q(1), q(2)], &series);
        assert_eq!(anew.source, Source::Judged);
        assert_eq!(anew.threshold_pct, 10.0);
        assert_eq!(anew.cells.len(), 2);
        assert!(anew.cells.iter().all(|c| c.verdict != Verdict::Improved));
    }
}
