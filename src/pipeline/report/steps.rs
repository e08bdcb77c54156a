//! A chain's answer step by step (`chain = true` in the sweep, as a version chain asks): each
//! series against the one before it, at every workload and thread count both ran, judged on
//! the cells' repeats (all steps one family, as the report's own questions are), one line per
//! step. The report's other answers stay against the baseline.

use super::model::ReportModel;
use crate::pipeline::judge::verdict::{self, Method, Sides, Verdict};

/// Whether the run's sweep.toml asks for step answers (leniently: a bad file asks nothing).
pub fn asked(sweep_toml: &str) -> bool {
    toml::from_str::<toml::Value>(sweep_toml)
        .ok()
        .and_then(|v| v.get("chain")?.as_bool())
        .unwrap_or(false)
}

/// One line per step: "step A → B: improved at 4/6 points, … (tps −3.1 % to +22.0 %)".
pub fn lines(m: &ReportModel) -> Vec<String> {
    let mut pairs: Vec<(usize, &Sides, &Sides, f64)> = Vec::new();
    for sec in &m.workloads {
        for row in &sec.rows {
            for i in 1..m.series.len() {
                if let (Some(Some(a)), Some(Some(b))) = (row.cells.get(i - 1), row.cells.get(i)) {
                    let change = (a.tps > 0.0).then(|| 100.0 * (b.tps / a.tps - 1.0));
                    pairs.push((i, &a.sides, &b.sides, change.unwrap_or(f64::NAN)));
                }
            }
        }
    }
    let judged = verdict::judge_points(
        &pairs
            .iter()
            .map(|(_, a, b, _)| (*a, *b))
            .collect::<Vec<_>>(),
        &Method::new(m.threshold_pct),
    );
    (1..m.series.len())
        .filter_map(|i| {
            let at: Vec<usize> = (0..pairs.len()).filter(|k| pairs[*k].0 == i).collect();
            if at.is_empty() {
                return None;
            }
            let vs: Vec<Verdict> = at.iter().map(|k| judged[*k].verdict).collect();
            let changes: Vec<f64> = at
                .iter()
                .map(|k| pairs[*k].3)
                .filter(|c| c.is_finite())
                .collect();
            let range = match (
                changes.iter().copied().reduce(f64::min),
                changes.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) => format!(" (tps {lo:+.1} % to {hi:+.1} % by point)"),
                _ => String::new(),
            };
            Some(format!(
                "step {} → {}: {}{range}",
                m.series[i - 1],
                m.series[i],
                verdict::headline(&vs)
            ))
        })
        .collect()
}
