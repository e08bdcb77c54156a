//! Answers between pairs of series other than the baseline's questions: a chain's steps
//! (`chain = true`, as a version chain asks: each series against the one before it) and
//! each target's own answers (`per_target = true`, as instance classes ask: each target's
//! configs against that target's copy of the baseline's config). Judged on the cells'
//! repeats at every workload and thread count both ran, all pairs of a kind one family (as
//! the report's own questions are), one line per pair; in a paired run each target's pairs
//! are judged on their rounds instead, as the run judged the baseline's. The report's other
//! answers stay against the baseline.

use super::model::ReportModel;
use crate::pipeline::judge::verdict::paired::{judge_point, Rounds, JUDGED};
use crate::pipeline::judge::verdict::{self, Method, Sides, Verdict};
use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::BTreeMap;

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
            Some((a, b, vs, range(&changes, "")))
        })
        .collect()
}

/// A pair's tps changes as " (tps −3.1 % to +22.0 % by point[, how])", or " (how)" alone
/// when no point has a change; nothing when neither.
fn range(changes: &[f64], how: &str) -> String {
    let lo = changes.iter().copied().reduce(f64::min);
    let hi = changes.iter().copied().reduce(f64::max);
    match (lo, hi, how) {
        (Some(lo), Some(hi), "") => format!(" (tps {lo:+.1} % to {hi:+.1} % by point)"),
        (Some(lo), Some(hi), how) => format!(" (tps {lo:+.1} % to {hi:+.1} % by point, {how})"),
        (_, _, "") => String::new(),
        (_, _, how) => format!(" ({how})"),
    }
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
/// small/high-performance against small/default: improved at 2/2 points (…)". In a paired
/// run each pair is judged on its rounds (`paired_by_round`); otherwise on the cells' repeats.
pub fn per_target_lines(m: &ReportModel, points: &[PointRecord]) -> Vec<String> {
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
    let judged = match m.paired {
        Some(_) => paired_by_round(m, points, &want),
        None => judged(m, &want),
    };
    judged
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

/// Each pair judged as a paired run judges its baseline. A pair whose base is the run's
/// baseline is the run's own question: its verdicts are the run's (verdicts.json), so the
/// report gives one answer to it. Any other pair (another class's default against its
/// templates) is judged on the per-round ratio of the slices both measured in the same round
/// (rounds where either side failed left out), tps and p95, the CPU other processes took as
/// the covariate, its interval drawn once at the run's final level (α per point, split over
/// the judged metrics). The run's looks stopped its points by the baseline's verdicts, not
/// by these pairs'.
fn paired_by_round(
    m: &ReportModel,
    points: &[PointRecord],
    want: &[(usize, usize)],
) -> Vec<(usize, usize, Vec<Verdict>, String)> {
    // (series, workload, threads) → round → its slice.
    let mut slices: BTreeMap<(String, &str, u32), BTreeMap<u32, &PointRecord>> = BTreeMap::new();
    for r in points.iter().filter(|r| r.status == PointStatus::Ok) {
        slices
            .entry((format!("{}/{}", r.target, r.config), &r.workload, r.threads))
            .or_default()
            .insert(r.repeat, r);
    }
    let cells: Vec<(&str, u32)> = slices
        .keys()
        .map(|(_, w, t)| (*w, *t))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let miss = verdict::ALPHA / JUDGED.len() as f64;
    let rounds_of = |side: &[&PointRecord]| Rounds {
        tps: side.iter().map(|r| r.tps).collect(),
        p95: side.iter().map(|r| r.lat_p95_ms).collect(),
        p99: side
            .iter()
            .map(|r| r.lat_p99_ms.unwrap_or(r.lat_p95_ms))
            .collect(),
        events: side.iter().map(|r| r.transactions).collect(),
        others: side.iter().filter_map(|r| r.others_cpu_pct).collect(),
    };
    // The run's own verdict of `series` at a point, when it judged it against its baseline.
    let own = |series: &str, w: &str, t: u32| -> Option<(Verdict, Option<f64>)> {
        let v = m.paired.as_ref().filter(|v| v.baseline == m.baseline)?;
        let cell = v
            .points
            .iter()
            .find(|c| c.workload == w && c.threads == t)?;
        let c = cell.comparisons.iter().find(|c| c.series == series)?;
        Some((c.verdict, c.metrics.first().and_then(|j| j.delta_pct)))
    };
    want.iter()
        .filter_map(|&(a, b)| {
            let (mut vs, mut changes) = (Vec::new(), Vec::new());
            for &(w, t) in &cells {
                let (Some(base), Some(cand)) = (
                    slices.get(&(m.series[a].clone(), w, t)),
                    slices.get(&(m.series[b].clone(), w, t)),
                ) else {
                    continue;
                };
                let (v, change) = match own(&m.series[b], w, t)
                    .filter(|_| m.series[a] == m.baseline)
                {
                    Some(run) => run,
                    None => {
                        let both: Vec<u32> = base
                            .keys()
                            .filter(|k| cand.contains_key(k))
                            .copied()
                            .collect();
                        let b: Vec<&PointRecord> = both.iter().map(|k| base[k]).collect();
                        let c: Vec<&PointRecord> = both.iter().map(|k| cand[k]).collect();
                        let p = judge_point(&rounds_of(&b), &rounds_of(&c), m.threshold_pct, miss);
                        (p.verdict, p.metrics.first().and_then(|j| j.delta_pct))
                    }
                };
                vs.push(v);
                changes.extend(change);
            }
            if vs.is_empty() {
                return None;
            }
            Some((a, b, vs, range(&changes, "paired by round")))
        })
        .collect()
}
