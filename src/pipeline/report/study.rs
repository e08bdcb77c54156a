//! The study's own table (#46 item 6): the layout of the published parameter-template
//! studies — one row per instance class (target), template (config), version, workload and
//! thread count, with QPS, TPS, average latency, p95 and stalls — so a DBA can set a run
//! beside a vendor's table. Read off the report's cells (geometric means over the repeats) and its
//! stability rows; shown in the report when the sweep asks (`study_table = true`), written
//! as study.csv for every run.

use super::model::{StudyRow, WorkloadSection};
use super::stability::StabilityRow;
use std::collections::BTreeMap;
use std::path::Path;

/// Each target's thread counts that were multiples of its cores, as said ("2×cores"),
/// keyed by target and count.
pub type OfCores = BTreeMap<(String, u32), String>;

/// The table: targets in the order the series first name them, then each target's series
/// in series order, each workload, each thread count.
/// `series` in the report's order with each one's `versions`; `classes` keyed by series.
pub fn rows(
    series: &[String],
    workloads: &[WorkloadSection],
    classes: &BTreeMap<String, String>,
    stability: &[StabilityRow],
    versions: &[String],
    of_cores: &OfCores,
) -> Vec<StudyRow> {
    let mut targets: Vec<&str> = Vec::new();
    for s in series {
        let t = s.split('/').next().unwrap_or(s);
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    let stability: BTreeMap<(&str, &str, u32), (usize, usize)> = stability
        .iter()
        .map(|r| {
            (
                (r.series.as_str(), r.workload.as_str(), r.threads),
                (r.stalls, r.stalled_s),
            )
        })
        .collect();
    let mut out = Vec::new();
    for target in targets {
        for (i, series) in series.iter().enumerate() {
            let Some(template) = series
                .strip_prefix(target)
                .and_then(|rest| rest.strip_prefix('/'))
            else {
                continue;
            };
            for sec in workloads {
                for row in &sec.rows {
                    let Some(Some(cell)) = row.cells.get(i) else {
                        continue;
                    };
                    let steady =
                        stability.get(&(series.as_str(), sec.workload.as_str(), row.threads));
                    out.push(StudyRow {
                        target: target.to_string(),
                        class: classes.get(series).cloned().unwrap_or_default(),
                        template: template.to_string(),
                        version: versions.get(i).cloned().unwrap_or_default(),
                        workload: sec.workload.clone(),
                        threads: row.threads,
                        of_cores: of_cores
                            .get(&(target.to_string(), row.threads))
                            .cloned()
                            .unwrap_or_default(),
                        qps: cell.qps,
                        tps: cell.tps,
                        lat_avg_ms: cell.lat_avg_ms,
                        p95_ms: cell.p95_ms,
                        repeats: cell.repeats,
                        stalls: steady.map(|s| s.0),
                        stalled_s: steady.map(|s| s.1),
                    });
                }
            }
        }
    }
    out
}

/// study.csv: the table's rows, one per line, figures unrounded.
pub fn write_csv(path: &Path, rows: &[StudyRow]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "target",
        "class",
        "template",
        "version",
        "workload",
        "threads",
        "of_cores",
        "qps",
        "tps",
        "lat_avg_ms",
        "p95_ms",
        "repeats",
        "stalls",
        "stalled_s",
    ])?;
    let opt = |x: Option<usize>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in rows {
        w.write_record([
            r.target.clone(),
            r.class.clone(),
            r.template.clone(),
            r.version.clone(),
            r.workload.clone(),
            r.threads.to_string(),
            r.of_cores.clone(),
            r.qps.to_string(),
            r.tps.to_string(),
            r.lat_avg_ms.to_string(),
            r.p95_ms.to_string(),
            r.repeats.to_string(),
            opt(r.stalls),
            opt(r.stalled_s),
        ])?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| anyhow::anyhow!("study.csv: {e}"))?;
    crate::pipeline::results::write_atomic(path, &bytes)
}
