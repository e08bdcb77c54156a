//! Which series is fastest where: for a sweep of three or more series, per workload and
//! thread count, the best series by throughput, its margin over the runner-up (judged, the
//! same method as every other verdict) and its change against the baseline (the point's own
//! verdict, read from its cell).

use super::{Cell, WorkloadSection};
use crate::pipeline::judge::answers;
use crate::pipeline::judge::verdict::{Sides, Verdict};

/// One row of the winner table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Winner {
    pub workload: String,
    pub threads: u32,
    pub best: String,
    pub tps: f64,
    pub runner_up: String,
    /// best / runner-up − 1, percent, its interval and what the judgement says of it.
    pub margin_pct: f64,
    pub margin_lo_pct: Option<f64>,
    pub margin_hi_pct: Option<f64>,
    #[serde(serialize_with = "crate::pipeline::judge::verdict::word_or_empty")]
    pub margin: Option<Verdict>,
    /// The best against the baseline (its cell's change and verdict); None when the best is
    /// the baseline.
    pub vs_baseline_pct: Option<f64>,
    #[serde(serialize_with = "crate::pipeline::judge::verdict::word_or_empty")]
    pub baseline_verdict: Option<Verdict>,
    /// The steadiest series at this point where two or more had windows long enough to
    /// say (`add_steadiest`): "b/x: 0 stalls, CV 4.2 % — against the baseline: steadier";
    /// empty otherwise.
    pub steadiest: String,
}

/// How the steadiest is picked, stated under the table when a row has one.
pub const STEADIEST_METHOD: &str = "Steadiest: the series with the smallest share of \
stalled seconds at the point, then the lowest coefficient of variation of its seconds — a \
ranking, not a verdict; where it is not the baseline, its stability judged against the \
baseline's (Stability section) is beside it.";

/// How the margin is judged, stated under the table.
pub const METHOD: &str = "The best series per row by the geometric mean of its tps. Its margin \
over the runner-up: where either is the baseline, the point's own verdict and interval (the \
paired one in a paired run); between two candidates, judged as any change is (Welch interval \
over the two series' repeats or slices, Benjamini–Hochberg over the table's such rows). faster \
/ improved: the best is ahead; unchanged: a tie within ±threshold; inconclusive: the order is \
not established.";

/// The table, for three series or more (with two, the headline says it all).
pub fn table(sections: &[WorkloadSection], series: &[String], threshold_pct: f64) -> Vec<Winner> {
    if series.len() < 3 {
        return Vec::new();
    }
    // Each row, the two sides, and the margin when the point's own verdict gives it (the
    // runner-up or the best is the baseline).
    type Own = Option<(Option<Verdict>, Option<f64>, Option<f64>)>;
    let mut rows: Vec<(Winner, &Sides, &Sides, Own)> = Vec::new();
    for sec in sections {
        for row in &sec.rows {
            let mut ranked: Vec<(usize, &Cell)> = row
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
                .collect();
            ranked.sort_by(|a, b| b.1.tps.total_cmp(&a.1.tps));
            let [(bi, best), (ri, runner), ..] = ranked[..] else {
                continue;
            };
            let own: Own = if ri == 0 {
                Some((best.tps_verdict, best.tps_lo_pct, best.tps_hi_pct))
            } else if bi == 0 {
                Some((
                    runner.tps_verdict.map(mirrored),
                    inverse(runner.tps_hi_pct),
                    inverse(runner.tps_lo_pct),
                ))
            } else {
                None
            };
            rows.push((
                Winner {
                    workload: sec.workload.clone(),
                    threads: row.threads,
                    best: series[bi].clone(),
                    tps: best.tps,
                    runner_up: series[ri].clone(),
                    margin_pct: (best.tps / runner.tps - 1.0) * 100.0,
                    margin_lo_pct: None,
                    margin_hi_pct: None,
                    margin: None,
                    vs_baseline_pct: (bi != 0).then_some(best.tps_delta_pct).flatten(),
                    baseline_verdict: if bi == 0 { None } else { best.verdict },
                    steadiest: String::new(),
                },
                &runner.sides,
                &best.sides,
                own,
            ));
        }
    }
    // A margin over the baseline is the point's own verdict (read, never judged again); two
    // candidates are judged by the answers' `margins`, all of the table's such pairs as one
    // family.
    let fresh: Vec<usize> = (0..rows.len()).filter(|&k| rows[k].3.is_none()).collect();
    let pairs: Vec<(&Sides, &Sides)> = fresh.iter().map(|&k| (rows[k].1, rows[k].2)).collect();
    for (k, j) in fresh.iter().zip(answers::margins(&pairs, threshold_pct)) {
        let w = &mut rows[*k].0;
        w.margin = Some(j.verdict);
        (w.margin_lo_pct, w.margin_hi_pct) = (j.lo_pct, j.hi_pct);
    }
    rows.into_iter()
        .map(|(mut w, _, _, own)| {
            if let Some((v, lo, hi)) = own {
                w.margin = v;
                (w.margin_lo_pct, w.margin_hi_pct) = (lo, hi);
            }
            w
        })
        .collect()
}

/// The other side's view of a verdict: the baseline against a candidate that regressed
/// against it has improved on it, and so on.
fn mirrored(v: Verdict) -> Verdict {
    match v {
        Verdict::Regressed => Verdict::Improved,
        Verdict::Improved => Verdict::Regressed,
        Verdict::Slower => Verdict::Faster,
        Verdict::Faster => Verdict::Slower,
        Verdict::Unchanged => Verdict::Unchanged,
        Verdict::Inconclusive => Verdict::Inconclusive,
    }
}

/// A change's interval seen from the other side: 1 / (1 + x) − 1, bounds swapped.
fn inverse(x: Option<f64>) -> Option<f64> {
    x.map(|p| (1.0 / (1.0 + p / 100.0) - 1.0) * 100.0)
}

/// Fills each row's `steadiest` from the Stability section's rows and verdicts (`stability`),
/// where at least two series at the row's point had windows long enough to be read.
pub(super) fn add_steadiest(
    winners: &mut [Winner],
    rows: &[super::stability::StabilityRow],
    judged: &[super::stability::StabilityVerdict],
    baseline: &str,
) {
    for w in winners {
        let mut here: Vec<&super::stability::StabilityRow> = rows
            .iter()
            .filter(|r| r.workload == w.workload && r.threads == w.threads)
            .collect();
        if here.len() < 2 {
            continue;
        }
        let share =
            |r: &super::stability::StabilityRow| r.stalled_s as f64 / r.seconds.max(1) as f64;
        here.sort_by(|a, b| {
            share(a)
                .total_cmp(&share(b))
                .then(a.cv_pct.total_cmp(&b.cv_pct))
        });
        let s = here[0];
        let against = if s.series == baseline {
            " (the baseline)".to_string()
        } else {
            judged
                .iter()
                .find(|v| {
                    v.series == s.series && v.workload == w.workload && v.threads == w.threads
                })
                .map(|v| format!(" — against the baseline: {}", v.verdict))
                .unwrap_or_default()
        };
        w.steadiest = format!(
            "{}: {} stall{}, CV {:.1} %{against}",
            s.series,
            s.stalls,
            if s.stalls == 1 { "" } else { "s" },
            s.cv_pct
        );
    }
}
