//! What a report shows beside its tables and verdicts, each read off the records or the
//! servers' variables: the series in order (baseline first), the variables that differ, the
//! points that failed or ran starved, the errors ignored per series.

use super::{series_of, Problem, VarDiff};
use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::BTreeMap;

/// The series of `records` in the order first met, `baseline` (where it is one of them,
/// else the first) moved to the front; and the baseline.
pub(super) fn series_with_baseline(
    records: &[PointRecord],
    baseline: Option<&str>,
) -> (Vec<String>, String) {
    let mut series: Vec<String> = Vec::new();
    for r in records {
        if !series.contains(&series_of(r)) {
            series.push(series_of(r));
        }
    }
    let baseline = baseline
        .filter(|b| series.iter().any(|s| s == b))
        .map(str::to_string)
        .or_else(|| series.first().cloned())
        .unwrap_or_default();
    if let Some(i) = series.iter().position(|s| *s == baseline) {
        let b = series.remove(i);
        series.insert(0, b);
    }
    (series, baseline)
}

/// Each series' server version, as its first record that has one says.
pub(super) fn versions(records: &[PointRecord], series: &[String]) -> Vec<String> {
    series
        .iter()
        .map(|s| {
            records
                .iter()
                .find(|r| series_of(r) == *s && !r.server_version.is_empty())
                .map(|r| r.server_version.clone())
                .unwrap_or_default()
        })
        .collect()
}

/// The servers' variables as the report shows them: what differs between the series (ranked),
/// how many always differ, the confounders, and the warnings about settings that cannot act.
pub(super) struct VariablesView {
    pub diffs: Vec<VarDiff>,
    pub always: usize,
    pub confounders: Vec<String>,
    pub warnings: Vec<String>,
}

impl VariablesView {
    pub fn of(series: &[String], variables: &BTreeMap<String, BTreeMap<String, String>>) -> Self {
        let mut var_diffs = Vec::new();
        let mut confounders = Vec::new();
        if series.len() > 1 && series.iter().all(|s| variables.contains_key(s)) {
            use crate::pipeline::results::servers;
            let sides: Vec<&crate::pipeline::results::Variables> =
                series.iter().map(|s| &variables[s]).collect();
            let diffs = crate::pipeline::results::variable_diffs(&sides);
            confounders.extend(servers::charset_confounder(&diffs, series));
            for (name, values, weight) in servers::ranked(diffs) {
                var_diffs.push(VarDiff {
                    name,
                    values,
                    weight,
                });
            }
        }
        let var_always = var_diffs
            .iter()
            .filter(|d| d.weight == crate::pipeline::results::servers::Weight::AlwaysDiffers)
            .count();
        let warnings = var_diffs
            .iter()
            .filter(|d| crate::pipeline::preflight::NEED_BINLOG.contains(&d.name.as_str()))
            .filter_map(|d| {
                let off: Vec<&str> = series
                    .iter()
                    .filter(|s| {
                        let v = &variables[s.as_str()];
                        // A Galera node replicates by its binlog_format (ROW) with the log
                        // off: there the variable acts.
                        let galera = v
                            .get("wsrep_on")
                            .is_some_and(|x| crate::pipeline::preflight::is_on(x));
                        !galera
                            && v.get("log_bin")
                                .is_some_and(|x| !crate::pipeline::preflight::is_on(x))
                    })
                    .map(String::as_str)
                    .collect();
                (!off.is_empty()).then(|| {
                    format!(
                        "{} differs between series but has no effect where the binary log is off (log_bin = OFF on {})",
                        d.name,
                        off.join(", ")
                    )
                })
            })
            .collect();
        VariablesView {
            diffs: var_diffs,
            always: var_always,
            confounders,
            warnings,
        }
    }
}

/// The points that did not end ok, those that ran on a starved host, and the failed points
/// counted by error code.
pub(super) fn problems(
    records: &[PointRecord],
    host_records: &[PointRecord],
) -> (Vec<Problem>, Vec<Problem>, BTreeMap<String, usize>) {
    let problems: Vec<Problem> = records
        .iter()
        .chain(host_records)
        .filter(|r| r.status != PointStatus::Ok)
        .map(|r| Problem {
            point_id: r.point_id.clone(),
            status: r.status,
            error: r.error.clone(),
        })
        .collect();
    let starved: Vec<Problem> = records
        .iter()
        .chain(host_records)
        .filter(|r| r.status == PointStatus::Ok)
        .filter_map(|r| {
            r.starved().map(|why| Problem {
                point_id: r.point_id.clone(),
                status: r.status,
                error: why,
            })
        })
        .collect();
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == PointStatus::Failed) {
        let code = r
            .error_code
            .map_or_else(|| "(no server code)".to_string(), |c| c.to_string());
        *by_code.entry(code).or_default() += 1;
    }
    (problems, starved, by_code)
}

/// Per series: the errors its points ignored, by code ("1213 × 4, 1205 × 1"), and in all.
pub(super) fn ignored(records: &[PointRecord], series: &[String]) -> (Vec<String>, Vec<u64>) {
    let ignored_by_code = series
        .iter()
        .map(|s| {
            let mut by: BTreeMap<String, u64> = BTreeMap::new();
            for r in records.iter().filter(|r| series_of(r) == *s) {
                for (c, n) in &r.errors_by_code.0 {
                    *by.entry(c.to_string()).or_default() += n;
                }
            }
            by.iter()
                .map(|(c, n)| format!("{c} × {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let ignored_errors = series
        .iter()
        .map(|s| {
            records
                .iter()
                .filter(|r| series_of(r) == *s)
                .map(|r| r.errors)
                .sum()
        })
        .collect();
    (ignored_by_code, ignored_errors)
}
