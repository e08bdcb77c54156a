//! report.md and report.html of a run directory, built from its files alone (points.csv,
//! intervals.csv, servers/*/variables.tsv, sweep.toml).

use super::{render, ReportModel};
use std::path::Path;

/// Writes report.md and report.html for a run directory from its files alone, and returns
/// the model they show.
pub fn write(run: &Path, baseline: Option<&str>) -> anyhow::Result<ReportModel> {
    let model = model(run, baseline)?;
    crate::pipeline::results::write_atomic(
        &run.join("report.md"),
        render::markdown(&model)?.as_bytes(),
    )?;
    crate::pipeline::results::write_atomic(
        &run.join("report.html"),
        render::html(&model)?.as_bytes(),
    )?;
    Ok(model)
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
    say_tls(run, &mut m);
    let toml = std::fs::read_to_string(run.join("sweep.toml")).unwrap_or_default();
    m.proxy_cost = super::proxy::rows(&points, &super::proxy::pairs(&toml));
    m.gate = crate::pipeline::results::load_gate(run);
    if let Some(v) = paired {
        m.paired_markdown = Some(crate::pipeline::judge::verdicts_file::markdown(&v));
        // The paired verdicts are the run's verdicts, in the headline and in every table:
        // one verdict per point.
        m.headlines = v
            .pooled
            .iter()
            .map(|p| {
                crate::pipeline::judge::verdict::pooled::sentence(p, &v.baseline, v.threshold_pct)
            })
            .collect();
        let series: std::collections::BTreeSet<String> = v
            .points
            .iter()
            .flat_map(|c| c.comparisons.iter().map(|k| k.series.clone()))
            .collect();
        for s in series {
            let vs: Vec<_> = v
                .points
                .iter()
                .flat_map(|c| c.comparisons.iter().filter(|k| k.series == s))
                .map(|k| k.verdict)
                .collect();
            m.headlines.push(format!(
                "{s} vs {} point by point (paired): {}",
                v.baseline,
                crate::pipeline::judge::verdict::headline(&vs)
            ));
        }
        paired_cells(&mut m, &v);
        // The winner table reads the cells' verdicts: the paired ones now.
        m.winners = super::winners::table(&m.workloads, &m.series, v.threshold_pct);
        m.threshold_pct = v.threshold_pct;
        m.threshold = crate::pipeline::judge::verdict::fmt_threshold(v.threshold_pct);
        m.paired = Some(v);
    } else if let Some(u) = crate::pipeline::judge::verdicts_file::load_unpaired(run)? {
        unpaired_cells(&mut m, &u);
    }
    super::cost::add(&mut m, &points, &crate::pipeline::results::cost::load(run)?);
    super::profile::attach(run, &mut m, &points);
    Ok(m)
}

/// An unpaired run's cells show the verdicts judged once when it ended (verdicts.json, the
/// gate's too), and the report opens with their pooled answers. Where the report compares
/// other series than the run did (`report --baseline`, a cell the run did not judge), its own
/// judgement of every cell stands.
fn unpaired_cells(m: &mut ReportModel, u: &crate::pipeline::judge::verdicts_file::Unpaired) {
    let series = m.series.clone();
    if series.first() != Some(&u.baseline) {
        return;
    }
    // All of the run's verdicts or none: a report judging some cells itself would hold two
    // families.
    let all_judged = m.workloads.iter().all(|sec| {
        sec.rows.iter().all(|row| {
            row.cells.iter().enumerate().skip(1).all(|(i, c)| {
                c.is_none() || u.point(&series[i], &sec.workload, row.threads).is_some()
            })
        })
    });
    if !all_judged {
        return;
    }
    let mut per_series = vec![Vec::new(); series.len()];
    for sec in &mut m.workloads {
        for row in &mut sec.rows {
            for (i, cell) in row.cells.iter_mut().enumerate().skip(1) {
                let Some(c) = cell.as_mut() else { continue };
                if let Some(p) = u.point(&series[i], &sec.workload, row.threads) {
                    super::set_verdict(c, p.verdict, &p.metrics);
                    per_series[i].push(p.verdict);
                }
            }
        }
    }
    m.headlines = u
        .pooled
        .iter()
        .map(|p| crate::pipeline::judge::verdict::pooled::sentence(p, &u.baseline, u.threshold_pct))
        .chain(super::headlines(&series, &per_series))
        .collect();
    m.threshold_pct = u.threshold_pct;
    m.threshold = crate::pipeline::judge::verdict::fmt_threshold(u.threshold_pct);
    m.winners = super::winners::table(&m.workloads, &m.series, u.threshold_pct);
}

/// Every table cell of a paired run shows its point's paired verdict, change and interval
/// (verdicts.json), never a second, unpaired judgement of the same slices.
fn paired_cells(m: &mut ReportModel, v: &crate::pipeline::judge::verdicts_file::Verdicts) {
    use crate::pipeline::judge::verdict::Metric;
    let series = m.series.clone();
    for sec in &mut m.workloads {
        for row in &mut sec.rows {
            for (i, cell) in row.cells.iter_mut().enumerate().skip(1) {
                let Some(c) = cell.as_mut() else { continue };
                let k = v
                    .points
                    .iter()
                    .find(|p| p.workload == sec.workload && p.threads == row.threads)
                    .and_then(|p| p.comparisons.iter().find(|k| k.series == series[i]));
                let Some(k) = k else {
                    c.verdict = "";
                    c.tps_verdict = "";
                    c.p95_verdict = "";
                    (c.tps_lo_pct, c.tps_hi_pct, c.p95_lo_pct, c.p95_hi_pct) =
                        (None, None, None, None);
                    c.verdict_note = "not judged: no paired rounds at this point".into();
                    continue;
                };
                c.verdict = k.verdict.as_str();
                for j in &k.metrics {
                    match j.metric {
                        Metric::Tps => {
                            c.tps_verdict = j.verdict.as_str();
                            c.tps_delta_pct = j.delta_pct.or(c.tps_delta_pct);
                            (c.tps_lo_pct, c.tps_hi_pct) = (j.lo_pct, j.hi_pct);
                        }
                        Metric::P95 => {
                            c.p95_verdict = j.verdict.as_str();
                            c.p95_delta_pct = j.delta_pct.or(c.p95_delta_pct);
                            (c.p95_lo_pct, c.p95_hi_pct) = (j.lo_pct, j.hi_pct);
                        }
                        Metric::P99 => {}
                    }
                }
                c.verdict_note = k
                    .metrics
                    .iter()
                    .find(|j| j.judged && !j.note.is_empty())
                    .map(|j| format!("{} (paired): {}", j.metric.name(), j.note))
                    .unwrap_or_default();
            }
        }
    }
}

/// Each series whose target was reached over TLS says so beside its version, with the
/// mode (from manifest.json's redacted URL): a reader comparing two targets must see that
/// one paid for encryption.
fn say_tls(run: &Path, m: &mut ReportModel) {
    let Ok(Some(manifest)) = crate::pipeline::results::load_manifest(run) else {
        return;
    };
    let Some(targets) = manifest.targets.as_ref().and_then(|t| t.as_array()) else {
        return;
    };
    for t in targets {
        let (Some(name), Some(url)) = (t["name"].as_str(), t["url"].as_str()) else {
            continue;
        };
        let Some(mode) = url
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("ssl-mode="))
            .filter(|m| !m.eq_ignore_ascii_case("DISABLED"))
        else {
            continue;
        };
        let tls = if mode.eq_ignore_ascii_case("PREFERRED") {
            "over TLS if the server offered it (ssl-mode=PREFERRED)".to_string()
        } else {
            format!("over TLS (ssl-mode={mode})")
        };
        for (s, v) in m.series.iter().zip(m.versions.iter_mut()) {
            if s.split('/').next() == Some(name) {
                *v = if v.is_empty() {
                    tls.clone()
                } else {
                    format!("{v}, {tls}")
                };
            }
        }
    }
}

/// name, description, baseline and the SLA's p99 limit from the run's sweep.toml (leniently:
/// the file may name basedirs that no longer exist).
fn sweep_header(run: &Path) -> (String, String, Option<String>, Option<f64>) {
    let text = std::fs::read_to_string(run.join("sweep.toml")).unwrap_or_default();
    let v: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Table(Default::default()));
    // The file's own words go into report.md and report.html: control characters escaped.
    let get = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(|s| crate::visible::visible(s).into_owned())
    };
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
