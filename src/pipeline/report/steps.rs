//! Answers between pairs of series other than the baseline's questions: a chain's steps
//! (`chain = true`, as a version chain asks: each series against the one before it) and
//! each target's own answers (`per_target = true`, as instance classes ask: each target's
//! configs against that target's copy of the baseline's config). Judged on the cells'
//! repeats at every workload and thread count both ran, all pairs of a kind one family (as
//! the report's own questions are), one line per pair. The report's other answers stay
//! against the baseline.

use super::model::ReportModel;
use crate::pipeline::judge::verdict::{self, Method, Sides, Verdict};

/// Each pair (base, candidate) of series indexes judged over the cells both ran: its
/// verdicts and the range of its tps changes, as " (tps −3.1 % to +22.0 % by point)".
fn judged(m: &ReportModel, want: &[(usize, usize)]) -> Vec<(usize, usize, Vec<Verdict>, String)> {
    let mut pairs: Vec<(usize, &Sides, &Sides, f64)> = Vec::new();
    for sec in &m.workloads {
        for row in &sec.rows {
            for (k, &(a, b)) in want.iter().enumerate() {
                if let (Some(Some(a)), Some(Some(b))) = (row.cells.get(a), row.cells.get(b)) {
                    let change = (a.tps > 0.0).then(|| 100.0 * (b.tps / a.tps - 1.0));
                    pairs.push((k, &a.sides, &b.sides, change.unwrap_or(f64::NAN)));
                }
            }
        }
    }
    let verdicts = verdict::judge_points(
        &pairs
            .iter()
            .map(|(_, a, b, _)| (*a, *b))
            .collect::<Vec<_>>(),
        &Method::new(m.threshold_pct),
    );
    want.iter()
        .enumerate()
        .filter_map(|(k, &(a, b))| {
            let at: Vec<usize> = (0..pairs.len()).filter(|i| pairs[*i].0 == k).collect();
            if at.is_empty() {
                return None;
            }
            let vs: Vec<Verdict> = at.iter().map(|i| verdicts[*i].verdict).collect();
            let changes: Vec<f64> = at
                .iter()
                .map(|i| pairs[*i].3)
                .filter(|c| c.is_finite())
                .collect();
            let range = match (
                changes.iter().copied().reduce(f64::min),
                changes.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) => format!(" (tps {lo:+.1} % to {hi:+.1} % by point)"),
                _ => String::new(),
            };
            Some((a, b, vs, range))
        })
        .collect()
}

/// One line per step: "step A → B: improved at 4/6 points, … (tps −3.1 % to +22.0 %)".
pub fn lines(m: &ReportModel) -> Vec<String> {
    let want: Vec<(usize, usize)> = (1..m.series.len()).map(|i| (i - 1, i)).collect();
    judged(m, &want)
        .into_iter()
        .map(|(a, b, vs, range)| {
            format!(
                "step {} → {}: {}{range}",
                m.series[a],
                m.series[b],
                verdict::headline(&vs)
            )
        })
        .collect()
}

/// One line per target and config other than the baseline's config: "on small:
/// small/high-performance against small/default: improved at 2/2 points (…)".
pub fn per_target_lines(m: &ReportModel) -> Vec<String> {
    let Some((_, base_config)) = m.baseline.split_once('/') else {
        return Vec::new();
    };
    let mut want = Vec::new();
    for (b, s) in m.series.iter().enumerate() {
        let Some((target, config)) = s.split_once('/') else {
            continue;
        };
        if config != base_config {
            continue;
        }
        for (c, other) in m.series.iter().enumerate() {
            if other
                .split_once('/')
                .is_some_and(|(t, k)| t == target && k != base_config)
            {
                want.push((b, c));
            }
        }
    }
    judged(m, &want)
        .into_iter()
        .map(|(a, b, vs, range)| {
            let target = m.series[a].split('/').next().unwrap_or_default();
            format!(
                "on {target}: {} against {}: {}{range}",
                m.series[b],
                m.series[a],
                verdict::headline(&vs)
            )
        })
        .collect()
}
