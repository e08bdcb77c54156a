//! `compare --confirm` (#47): the points a cross-run comparison regressed, or could not judge
//! for the host's load, measured again in one short paired run of the two sides' servers,
//! started anew from what each run recorded (its sweep.toml) — so a neighbour during one run,
//! or a machine that changed between two runs, cannot fail a comparison on its own.

use super::{Comparison, Row};
use crate::pipeline::judge::verdict::{FailOn, Metric, Verdict};
use std::path::{Path, PathBuf};

/// The two sides' names in the paired run, and its baseline series.
const BASE: &str = "base";
const CAND: &str = "candidate";

/// What the confirmation found, point by point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Confirmation {
    /// The paired run's directory.
    pub run: String,
    pub points: Vec<Confirmed>,
    /// The paired run's pooled answers, as sentences.
    pub pooled: Vec<String>,
    /// Whether the paired run found a change that fails (as `--fail-on-regression`).
    pub fails: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Confirmed {
    pub point: String,
    /// The cross-run verdict as said ("regressed", "not judged").
    pub cross_run: String,
    /// The paired verdict of the point (tps and its latency percentiles, as the paired run's
    /// own summary says it); None when the paired run did not reach the point.
    pub paired: Option<Verdict>,
    /// The paired change of tps, percent, and its interval.
    pub delta_pct: Option<f64>,
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
    pub rounds: u32,
}

/// The rows worth confirming: regressed (or what `fail_on` fails), not judged for the host's
/// load, or in a series and workload whose pooled answer fails; never a host test's row.
pub fn wanted(cmp: &Comparison, fail_on: FailOn) -> Vec<&Row> {
    cmp.rows
        .iter()
        .filter(|r| !r.is_host())
        .filter(|r| {
            fail_on.fails(r.verdict)
                || r.withheld().is_some()
                || cmp.pooled.iter().any(|p| {
                    fail_on.fails(p.verdict)
                        && p.workload == r.workload
                        && p.series == format!("{}/{}", r.target, r.config)
                })
        })
        .collect()
}

/// One table of a run's sweep.toml: the `[[kind]]` entry named `name`.
fn entry(doc: &toml::Table, kind: &str, name: &str) -> Option<toml::Table> {
    doc.get(kind)?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_table())
        .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        .cloned()
}

/// A run's sweep as it ran, or why it cannot be started again.
fn sweep_of(run: &Path) -> Result<toml::Table, String> {
    let path = run.join("sweep.toml");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!(
            "{} has no sweep.toml (a run imported from a sysbench log?): its servers cannot be started again",
            run.display()
        )
    })?;
    text.parse::<toml::Table>()
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A side's target as the paired run starts it: a managed server or a model, with every
/// key its run gave it; a model's neighbour is the host's, not the server's, and is left out.
fn target_of(
    doc: &toml::Table,
    run: &Path,
    target: &str,
    as_name: &str,
) -> Result<toml::Table, String> {
    let mut t = entry(doc, "targets", target)
        .ok_or_else(|| format!("{}: no target '{target}' in its sweep.toml", run.display()))?;
    if t.contains_key("synthetic") {
        if let Some(m) = t.get_mut("synthetic").and_then(|m| m.as_table_mut()) {
            m.remove("neighbour");
            m.remove("neighbour_cost");
        }
    } else if !t.contains_key("server") || t.contains_key("proxy") {
        return Err(format!(
            "{target} in {} is not a server sweepbench starts (a url, socket or proxy target): measure both in one sweep with design = \"paired\" instead",
            run.display()
        ));
    }
    t.insert("name".into(), as_name.into());
    Ok(t)
}

/// A side's config: its `[[configs]]` entry, or none for the implicit "default".
fn config_of(
    doc: &toml::Table,
    run: &Path,
    config: &str,
    as_name: &str,
) -> Result<toml::Table, String> {
    let mut c = match entry(doc, "configs", config) {
        Some(c) => c,
        None if config == "default" => toml::Table::new(),
        None => {
            return Err(format!(
                "{}: no config '{config}' in its sweep.toml",
                run.display()
            ))
        }
    };
    c.insert("name".into(), as_name.into());
    Ok(c)
}

/// Confirms what `cmp` would fail on (`wanted`): None when nothing would, else what one
/// paired run of the two sides' servers found at those points; an error says why it could not
/// run (`unavailable`). `starting` hears how many points, as the paired run starts.
pub fn confirm(
    (base, cand): (&Path, &Path),
    cmp: &Comparison,
    fail_on: FailOn,
    map: &[(String, String)],
    starting: impl FnOnce(usize),
) -> anyhow::Result<Option<Confirmation>> {
    let rows = wanted(cmp, fail_on);
    if rows.is_empty() {
        return Ok(None);
    }
    let (name, text) = sweep(base, cand, &rows, map).map_err(anyhow::Error::msg)?;
    starting(rows.len());
    measure(&name, &text, cand, &rows).map(Some)
}

/// What is said when the confirmation could not run: the cross-run verdict stands.
pub fn unavailable(e: &anyhow::Error) -> String {
    format!("\ncould not confirm: {e:#}; the cross-run verdict stands.\n")
}

/// The paired sweep that measures `rows` again, its name and text: the base run's target and
/// config as "base", the candidate's as "candidate", only those two series, the base run's
/// data and workload options, a budget of a minute per point (at least two).
fn sweep(
    base: &Path,
    cand: &Path,
    rows: &[&Row],
    map: &[(String, String)],
) -> Result<(String, String), String> {
    let (b, c) = (sweep_of(base)?, sweep_of(cand)?);
    let (first, mut doc) = (
        rows.first().ok_or("nothing to confirm")?,
        toml::Table::new(),
    );
    let name = format!(
        "{}-confirm",
        c.get("name").and_then(|n| n.as_str()).unwrap_or("compare")
    );
    doc.insert("name".into(), name.clone().into());
    doc.insert(
        "description".into(),
        format!(
            "compare --confirm of {} against {}",
            cand.display(),
            base.display()
        )
        .into(),
    );
    doc.insert("baseline".into(), format!("{BASE}/{BASE}").into());
    for key in ["data", "workload_options"] {
        if let Some(v) = b.get(key) {
            doc.insert(key.into(), v.clone());
        }
    }
    let base_target = map
        .iter()
        .find(|(_, new)| *new == first.target)
        .map_or(first.target.as_str(), |(old, _)| old.as_str());
    if rows
        .iter()
        .any(|r| r.target != first.target || r.config != first.config)
    {
        return Err("the points to confirm span several series: confirm one series at a time (compare one target/config's runs)".into());
    }
    // A series' rows go by driver before workload: sorted, each workload once.
    let mut workloads: Vec<String> = rows.iter().map(|r| r.workload.clone()).collect();
    workloads.sort_unstable();
    workloads.dedup();
    let mut threads: Vec<u32> = rows.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut run = toml::Table::new();
    run.insert("workloads".into(), workloads.into());
    run.insert(
        "threads".into(),
        threads
            .iter()
            .map(|&t| i64::from(t))
            .collect::<Vec<_>>()
            .into(),
    );
    run.insert("design".into(), "paired".into());
    run.insert(
        "budget".into(),
        format!("{}s", (60 * rows.len()).max(120)).into(),
    );
    doc.insert("run".into(), run.into());
    doc.insert(
        "targets".into(),
        vec![
            toml::Value::Table(target_of(&b, base, base_target, BASE)?),
            toml::Value::Table(target_of(&c, cand, &first.target, CAND)?),
        ]
        .into(),
    );
    doc.insert(
        "configs".into(),
        vec![
            toml::Value::Table(config_of(&b, base, &first.config, BASE)?),
            toml::Value::Table(config_of(&c, cand, &first.config, CAND)?),
        ]
        .into(),
    );
    // Only the two sides' own pairs, at only the points asked.
    let include: Vec<toml::Value> = rows
        .iter()
        .flat_map(|r| [BASE, CAND].map(|side| point_filter(side, side, &r.workload, r.threads)))
        .collect();
    doc.insert("include".into(), include.into());
    let text = toml::to_string(&doc).map_err(|e| e.to_string())?;
    Ok((name, text))
}

/// An `[[include]]` filter of one series (`target`, `config`) at one point.
fn point_filter(target: &str, config: &str, workload: &str, threads: u32) -> toml::Value {
    let mut f = toml::Table::new();
    f.insert("target".into(), target.into());
    f.insert("config".into(), config.into());
    f.insert("workload".into(), workload.into());
    f.insert("threads".into(), vec![i64::from(threads)].into());
    toml::Value::Table(f)
}

/// Runs the sweep `text` named `name` (this binary, `run … --quiet`, its output to stderr)
/// under `root`; the run's directory.
fn run_sweep(name: &str, text: &str, root: &Path) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("confirm.toml");
    std::fs::write(&file, text)?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .arg("run")
        .arg(&file)
        .arg("--results-dir")
        .arg(root)
        .arg("--quiet")
        .stdout(std::io::stderr())
        .status()
        .context("starting the paired run")?;
    let run = std::fs::canonicalize(root.join(name).join("latest")).with_context(|| {
        format!(
            "the paired run left no results under {}",
            root.join(name).display()
        )
    })?;
    if !status.success() {
        anyhow::bail!(
            "the paired run ended with {status} (its output is above; results in {})",
            run.display()
        );
    }
    Ok(run)
}

/// The results root a run's directory sits in (results/<sweep>/<run>).
fn root_of(run: &Path) -> PathBuf {
    run.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("results"))
}

/// Runs the paired sweep `name` under the candidate's results root and reads what it found
/// at `rows`.
fn measure(
    name: &str,
    sweep_text: &str,
    cand: &Path,
    rows: &[&Row],
) -> anyhow::Result<Confirmation> {
    use anyhow::Context;
    let run = run_sweep(name, sweep_text, &root_of(cand))?;
    let v = crate::pipeline::judge::verdicts_file::load(&run)?
        .context("the paired run wrote no verdicts.json: no point completed a round")?;
    let series = format!("{CAND}/{CAND}");
    let points = rows
        .iter()
        .map(|r| {
            let cell = v
                .points
                .iter()
                .find(|p| p.workload == r.workload && p.threads == r.threads);
            let comparison = cell.and_then(|p| p.comparisons.iter().find(|c| c.series == series));
            let tps = comparison.and_then(|c| c.metrics.iter().find(|m| m.metric == Metric::Tps));
            Confirmed {
                point: r.point.clone(),
                cross_run: r.said().into(),
                paired: comparison.map(|c| c.verdict),
                delta_pct: tps.and_then(|m| m.delta_pct),
                lo_pct: tps.and_then(|m| m.lo_pct),
                hi_pct: tps.and_then(|m| m.hi_pct),
                rounds: cell.map_or(0, |p| p.rounds),
            }
        })
        .collect();
    Ok(Confirmation {
        run: run.display().to_string(),
        points,
        pooled: v
            .pooled
            .iter()
            .map(|p| {
                crate::pipeline::judge::verdict::pooled::sentence(p, &v.baseline, v.threshold_pct)
            })
            .collect(),
        fails: crate::pipeline::judge::verdicts_file::any_failing(&v, FailOn::Regressed),
    })
}

/// The confirmation as text, for every output format's reader.
pub fn text(c: &Confirmation) -> String {
    use crate::pipeline::judge::verdict::fmt_change;
    let mut s = format!(
        "\nconfirmed in one paired run of the two sides' servers, started again ({}):\n",
        c.run
    );
    for p in &c.points {
        let paired = match (p.paired, p.delta_pct, p.lo_pct, p.hi_pct) {
            (Some(v), Some(d), Some(lo), Some(hi)) => format!(
                "{}: tps {} % [{}, {}] over {} rounds",
                v.as_str(),
                fmt_change(d),
                fmt_change(lo),
                fmt_change(hi),
                p.rounds
            ),
            (Some(v), ..) => format!("{} over {} rounds", v.as_str(), p.rounds),
            _ => "not reached (the paired run's budget ended first)".into(),
        };
        s.push_str(&format!(
            "  {}: across runs {}; paired {paired}\n",
            p.point, p.cross_run
        ));
    }
    for p in &c.pooled {
        s.push_str(&format!("  pooled: {p}\n"));
    }
    s.push_str(if c.fails {
        "the paired run confirms a regression.\n"
    } else {
        "the paired run confirms no regression: the cross-run verdict is not a failure.\n"
    });
    s
}

/// A nightly paired with its control about to fail (`control = "…"`, the README's nightly: a
/// url candidate beside a managed control): the failing points measured again in a fresh
/// paired run of the same sweep — the candidate as it is reached, the control's server started
/// anew — whose ratio to the control is judged against the same reference night(s), as the
/// night was. `earlier` are the reference runs' verdicts; returns the text said and whether
/// the confirmation fails too.
pub fn control(
    run: &Path,
    outcome: &crate::pipeline::judge::control::Outcome,
    earlier: &[crate::pipeline::judge::verdicts_file::Verdicts],
    (fail_on, what): (FailOn, &str),
) -> anyhow::Result<(String, bool, serde_json::Value)> {
    use anyhow::Context;
    let mut doc = sweep_of(run).map_err(anyhow::Error::msg)?;
    let name = format!(
        "{}-confirm",
        doc.get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("nightly")
    );
    let (control_target, control_config) = outcome
        .control
        .split_once('/')
        .context("the control names no target/config")?;
    // The failing points: each failing point, and every thread count of a failing pooled
    // answer.
    let mut wanted: Vec<(&str, &str, u32)> = Vec::new();
    for p in &outcome.points {
        let pooled_fails = outcome
            .pooled
            .iter()
            .any(|q| fail_on.fails(q.verdict) && q.series == p.series && q.workload == p.workload);
        if fail_on.fails(p.verdict) || pooled_fails {
            wanted.push((&p.series, &p.workload, p.threads));
        }
    }
    if wanted.is_empty() {
        anyhow::bail!("no point of the night fails on its own: nothing to measure again");
    }
    let mut include = Vec::new();
    for (series, workload, threads) in &wanted {
        let (t, c) = series.split_once('/').unwrap_or((series, "default"));
        include.push(point_filter(t, c, workload, *threads));
        include.push(point_filter(
            control_target,
            control_config,
            workload,
            *threads,
        ));
    }
    doc.insert("name".into(), name.clone().into());
    doc.insert(
        "description".into(),
        format!(
            "run --confirm of {}: the failing points again",
            run.display()
        )
        .into(),
    );
    doc.insert("include".into(), include.into());
    if let Some(r) = doc.get_mut("run").and_then(|r| r.as_table_mut()) {
        // A minute a point (two at least), and never more than the night itself had.
        let night = r
            .get("budget")
            .and_then(|b| b.as_str())
            .and_then(crate::pipeline::spec::parse_duration);
        let budget = ((60 * wanted.len() as u64).max(120)).min(night.unwrap_or(u64::MAX));
        r.insert("budget".into(), format!("{budget}s").into());
    }
    let text = toml::to_string(&doc)?;
    let again = run_sweep(&name, &text, &root_of(run))?;
    let fresh = crate::pipeline::judge::verdicts_file::load(&again)?
        .context("the paired run wrote no verdicts.json: no point completed a round")?;
    let judged = crate::pipeline::judge::control::judge(earlier, &fresh, outcome.threshold_pct);
    let fails = judged.failing(fail_on);
    let said = format!(
        "\nconfirmed in a fresh paired run of the candidate and the control, started again ({}): {}{}",
        again.display(),
        judged.text(what),
        if fails {
            "the fresh run confirms a regression.\n"
        } else {
            "the fresh run confirms no regression: the night's verdict is not a failure.\n"
        }
    );
    let json =
        serde_json::json!({"run": again.display().to_string(), "control": judged, "fails": fails});
    Ok((said, fails, json))
}
