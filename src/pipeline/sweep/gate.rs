//! `run --fail-on-regression`: what a finished run is judged against (the sweep's baseline
//! series, or for a one-series sweep an earlier run of the same sweep) and the verdict.

use crate::pipeline::compare::{self, Against, Comparison, Run};
use crate::pipeline::results::{PointStatus, RunDir};
use crate::pipeline::spec::SweepSpec;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// A run that ended (not interrupted, not in progress) with at least one ok point.
fn finished(run: &Path) -> bool {
    let ended = crate::pipeline::results::load_manifest(run)
        .ok()
        .flatten()
        .is_some_and(|m| m.ended());
    ended
        && crate::pipeline::results::load_points(run)
            .is_ok_and(|p| p.iter().any(|r| r.status == PointStatus::Ok))
}

/// The newest `n` finished runs of the sweep older than `this`, oldest first. Searched from
/// the newest back, so a long history is not read to find last night.
fn earlier_runs(this: &Path, n: usize) -> anyhow::Result<Vec<PathBuf>> {
    let sweep_dir = this
        .parent()
        .context("the run directory has no parent (results/<sweep>)")?;
    let name = this.file_name().unwrap_or_default().to_owned();
    let mut found: Vec<PathBuf> = crate::pipeline::results::nightly::runs(sweep_dir)?
        .into_iter()
        .rev()
        .filter(|r| r.file_name().is_some_and(|x| x < name.as_os_str()) && finished(r))
        .take(n)
        .collect();
    found.reverse();
    Ok(found)
}

/// What was compared, in words, and the comparison; None when there is nothing to compare
/// with yet (the first run of a one-series sweep).
pub fn judge(
    spec: &SweepSpec,
    dir: &RunDir,
    threshold: f64,
    against: &Against,
) -> anyhow::Result<Option<(String, Comparison)>> {
    let this = Run::load(&dir.path)?;
    let mut series: Vec<(&str, &str)> = this
        .points
        .iter()
        .filter(|r| !r.is_host())
        .map(|r| (r.target.as_str(), r.config.as_str()))
        .collect();
    series.sort();
    series.dedup();
    if series.len() > 1 {
        let baseline = spec
            .baseline
            .clone()
            .unwrap_or_else(|| format!("{}/{}", spec.targets[0].name, spec.configs[0].name));
        let cmp = compare::within_run(&this, &baseline, threshold)?;
        return Ok(Some((
            format!("each series of this run against the baseline {baseline}"),
            cmp,
        )));
    }
    let (what, base) = match against {
        Against::Run(p) => (format!("run {}", p.display()), Run::load(p)?),
        Against::Previous => {
            let Some(prev) = earlier_runs(&dir.path, 1)?.pop() else {
                return Ok(None);
            };
            (
                format!("the previous finished run {}", prev.display()),
                Run::load(&prev)?,
            )
        }
        Against::Last(n) => {
            let last = earlier_runs(&dir.path, *n)?;
            if last.is_empty() {
                return Ok(None);
            }
            let names: Vec<String> = last
                .iter()
                .map(|p| {
                    p.file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .to_string()
                })
                .collect();
            let loaded = last
                .iter()
                .map(|p| Run::load(p))
                .collect::<anyhow::Result<Vec<Run>>>()?;
            (
                format!(
                    "the repeats of the last {} finished run(s) pooled ({})",
                    last.len(),
                    names.join(", ")
                ),
                Run::pooled(loaded),
            )
        }
    };
    let cmp = compare::compare(&base, &this, threshold, &[])?;
    Ok(Some((what, cmp)))
}

/// `--fail-on-regression` on a paired run: its own verdicts (verdicts.json), each candidate
/// series against the baseline at every point. Prints them; returns what was compared and
/// whether any point regressed.
pub fn paired(
    run: &Path,
    fail_on: crate::pipeline::judge::verdict::FailOn,
) -> anyhow::Result<(String, bool)> {
    let v = crate::pipeline::judge::verdicts_file::load(run)?
        .context("the paired run wrote no verdicts.json: no point completed a round")?;
    print!("{}", crate::pipeline::judge::verdicts_file::markdown(&v));
    // What the compared servers were told differently (SHOW GLOBAL VARIABLES of each).
    let vars = crate::pipeline::results::load_variables(run);
    if let Some(base) = vars.get(&v.baseline) {
        let mut lines = Vec::new();
        for (series, other) in vars.iter().filter(|(k, _)| **k != v.baseline) {
            for (n, values) in crate::pipeline::results::variable_diffs(&[base, other]) {
                lines.push(format!("  {series}: {n} {} → {}", values[0], values[1]));
            }
        }
        if !lines.is_empty() {
            println!(
                "server variables that differ from {}:\n{}",
                v.baseline,
                lines.join("\n")
            );
        }
    }
    Ok((
        format!(
            "each series against {} in the same rounds (paired design)",
            v.baseline
        ),
        crate::pipeline::judge::verdicts_file::any_failing(&v, fail_on),
    ))
}
