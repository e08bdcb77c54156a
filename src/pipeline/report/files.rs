//! report.md and report.html of a run directory, built from its files alone (points.csv,
//! intervals.csv, servers/*/variables.tsv, sweep.toml).

use super::{render, ReportModel};
use std::path::Path;

/// Writes report.md and report.html for a run directory from its files alone.
pub fn write(run: &Path, baseline: Option<&str>) -> anyhow::Result<()> {
    let model = model(run, baseline)?;
    crate::pipeline::results::write_atomic(
        &run.join("report.md"),
        render::markdown(&model)?.as_bytes(),
    )?;
    crate::pipeline::results::write_atomic(
        &run.join("report.html"),
        render::html(&model)?.as_bytes(),
    )?;
    Ok(())
}

/// The report's model of a run directory, from its files alone.
pub fn model(run: &Path, baseline: Option<&str>) -> anyhow::Result<ReportModel> {
    let points = crate::pipeline::results::load_points(run)?;
    let (name, description, spec_baseline, sla_p99) = sweep_header(run);
    // Through results/<sweep>/latest the run is named by where the link points.
    let real = std::fs::canonicalize(run).unwrap_or_else(|_| run.to_path_buf());
    let run_id = real
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let paired = crate::pipeline::judge::verdicts_file::load(run)?;
    // A paired run's verdicts name their baseline: the tables hold the same one.
    let baseline = baseline
        .or(spec_baseline.as_deref())
        .or(paired.as_ref().map(|v| v.baseline.as_str()));
    let mut m = ReportModel::build(
        &name,
        &run_id,
        &description,
        &points,
        baseline,
        &crate::pipeline::results::load_variables(run),
        &crate::pipeline::results::load_tps_samples(run)?,
    );
    if let Some(p99) = sla_p99 {
        m.add_sla(&points, p99);
    }
    let toml = std::fs::read_to_string(run.join("sweep.toml")).unwrap_or_default();
    m.proxy_cost = super::proxy::rows(&points, &super::proxy::pairs(&toml));
    m.gate = crate::pipeline::results::load_gate(run);
    if let Some(v) = paired {
        m.paired_markdown = Some(crate::pipeline::judge::verdicts_file::markdown(&v));
        // The paired verdicts are the run's verdicts; the tables' unpaired ones are shown
        // for reference.
        m.headlines = v
            .points
            .iter()
            .flat_map(|c| c.comparisons.iter().map(|k| k.series.clone()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .map(|s| {
                let vs: Vec<_> = v
                    .points
                    .iter()
                    .flat_map(|c| c.comparisons.iter().filter(|k| k.series == s))
                    .map(|k| k.verdict)
                    .collect();
                format!(
                    "{s} vs {} (paired): {}",
                    v.baseline,
                    crate::pipeline::judge::verdict::headline(&vs)
                )
            })
            .collect();
        m.threshold_pct = v.threshold_pct;
        m.threshold = crate::pipeline::judge::verdict::fmt_threshold(v.threshold_pct);
        m.paired = Some(v);
    }
    Ok(m)
}

/// name, description, baseline and the SLA's p99 limit from the run's sweep.toml (leniently:
/// the file may name basedirs that no longer exist).
fn sweep_header(run: &Path) -> (String, String, Option<String>, Option<f64>) {
    let text = std::fs::read_to_string(run.join("sweep.toml")).unwrap_or_default();
    let v: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
    let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let name = get("name").unwrap_or_else(|| {
        run.parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    });
    let sla = v
        .get("run")
        .and_then(|r| r.get("sla"))
        .and_then(|s| s.get("p99_ms"))
        .and_then(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)));
    (
        name,
        get("description").unwrap_or_default(),
        get("baseline"),
        sla,
    )
}
