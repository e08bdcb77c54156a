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
    if !model.study.is_empty() {
        super::study::write_csv(&run.join("study.csv"), &model.study)?;
    }
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
    let unpaired = match paired {
        Some(_) => None,
        None => crate::pipeline::judge::verdicts_file::load_unpaired(run)?,
    };
    // A paired run's verdicts name their baseline: the tables hold the same one.
    let baseline = baseline
        .or(spec_baseline.as_deref())
        .or(paired.as_ref().map(|v| v.baseline.as_str()));
    let head = super::Head {
        sweep: &name,
        run_id: &run_id,
        description: &description,
    };
    let (variables, tps_samples) = (
        crate::pipeline::results::load_variables(run),
        crate::pipeline::results::load_tps_samples(run)?,
    );
    let inputs = super::Inputs {
        variables: &variables,
        tps_samples: &tps_samples,
        paired: paired.as_ref(),
        unpaired: unpaired.as_ref(),
    };
    let mut m = ReportModel::of(head, &points, baseline, inputs);
    if let Some(p99) = sla_p99 {
        m.add_sla(&points, p99);
    }
    // The study's table names each series' version alone (say_tls adds the TLS mode).
    let versions = m.versions.clone();
    say_tls(run, &mut m);
    let (note, of_cores) = threads_from_cores(run);
    m.notes.extend(note);
    m.engines = crate::pipeline::results::servers::load_engines(run);
    m.confounders
        .extend(crate::pipeline::results::servers::engine_confounder(
            &m.engines, &m.series,
        ));
    let shapes = crate::pipeline::results::servers::load_tables(run);
    if !shapes.is_empty() {
        m.tables = m
            .series
            .iter()
            .map(|s| shapes.get(s).map(|t| t.shown()).unwrap_or_default())
            .collect();
    }
    if let Some(c) =
        crate::pipeline::results::servers::tables_confounder(&shapes, &variables, &m.series)
    {
        // The tables say what the variables only suggest.
        if c.contains("did not reach them") {
            m.confounders
                .retain(|x| !x.starts_with("The servers' default character set"));
        }
        m.confounders.push(c);
    }
    m.classes = crate::pipeline::results::servers::load_classes(run);
    m.confounders
        .extend(crate::pipeline::results::servers::class_confounder(
            &m.classes, &m.series,
        ));
    let toml = std::fs::read_to_string(run.join("sweep.toml")).unwrap_or_default();
    m.proxy_cost = super::proxy::rows(&points, &super::proxy::pairs(&toml));
    if asked(&toml, "chain") {
        m.steps = super::steps::lines(&m);
        m.headlines.splice(0..0, m.steps.clone());
    }
    if asked(&toml, "per_target") {
        let own = super::steps::per_target_lines(&m, &points);
        m.steps.splice(0..0, own.clone());
        m.headlines.splice(0..0, own);
    }
    m.gate = crate::pipeline::results::load_gate(run);
    let costs = crate::pipeline::results::cost::load(run)?;
    m.nodes = super::nodes::rows(&points, &costs);
    m.stability = super::stability::rows(&points, &tps_samples);
    m.stability_svg = super::stability::charts(&points, &tps_samples);
    let judged = super::stability::verdicts(&points, &tps_samples, &m.baseline, m.paired.is_some());
    m.stability_headlines = super::stability::headlines(&judged);
    m.headlines.extend(m.stability_headlines.clone());
    super::winners::add_steadiest(&mut m.winners, &m.stability, &judged, &m.baseline);
    m.stability_verdicts = judged
        .iter()
        .map(|v| {
            format!(
                "{} against {}, {} t{}: {}",
                v.series,
                v.baseline,
                v.workload,
                v.threads,
                v.said()
            )
        })
        .collect();
    m.study = super::study::rows(
        &m.series,
        &m.workloads,
        &m.classes,
        &m.stability,
        &versions,
        &of_cores,
    );
    m.study_shown = asked(&toml, "study_table");
    super::cost::add(&mut m, &points, &costs);
    super::profile::attach(run, &mut m, &points);
    Ok(m)
}

/// Whether the run's sweep.toml sets `key` true (leniently: a bad file asks nothing):
/// `chain` (a chain's steps), `per_target` (each target's own answers), `study_table`.
fn asked(sweep_toml: &str, key: &str) -> bool {
    toml::from_str::<toml::Value>(sweep_toml)
        .ok()
        .and_then(|v| v.get(key)?.as_bool())
        .unwrap_or(false)
}

/// Each target's name and cores.
type CoresOf = Vec<(String, f64)>;

/// With `threads = ["2×cores"]`: the multiples asked and each target's cores, from the
/// manifest; None when the sweep's counts were absolute.
fn core_counts(run: &Path) -> Option<(Vec<f64>, CoresOf)> {
    let manifest = crate::pipeline::results::load_manifest(run).ok()??;
    let per_core: Vec<f64> = manifest.run.as_ref()?["per_core"]
        .as_array()?
        .iter()
        .filter_map(|m| m.as_f64())
        .collect();
    if per_core.is_empty() {
        return None;
    }
    let targets = manifest
        .targets
        .as_ref()?
        .as_array()?
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["cores"].as_f64()?)))
        .collect();
    Some((per_core, targets))
}

/// What each target's counts are multiples of ("small (0.5 cores): 1 = 2×cores, 4 =
/// 8×cores"), so a row's thread count reads as the study's; and the same per target and
/// count for the study's table.
fn threads_from_cores(run: &Path) -> (Option<String>, super::study::OfCores) {
    use crate::pipeline::spec::cores::{count, shown};
    let mut of_cores = super::study::OfCores::new();
    let Some((per_core, targets)) = core_counts(run) else {
        return (None, of_cores);
    };
    let said: Vec<String> = targets
        .iter()
        .map(|(name, cores)| {
            let each: Vec<String> = per_core
                .iter()
                .map(|&m| {
                    let n = count(m, *cores);
                    // Two multiples may round to one count: the first names it.
                    of_cores
                        .entry((name.clone(), n))
                        .or_insert_with(|| shown(m));
                    format!("{n} = {}", shown(m))
                })
                .collect();
            format!(
                "{name} ({} core{}): {}",
                crate::pipeline::server::class::trim_number(*cores),
                if *cores == 1.0 { "" } else { "s" },
                each.join(", ")
            )
        })
        .collect();
    (
        Some(format!(
            "Thread counts from each target's cores — {}.",
            said.join("; ")
        )),
        of_cores,
    )
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
