//! `sweepbench compare BASE CANDIDATE`: judge every matching point and print the verdicts in
//! the asked format; exit 3 when something regressed.

use super::cli;
use crate::exit::Exit;
use crate::pipeline::compare;

/// Compares two run directories.
pub(super) fn run(
    base: &std::path::Path,
    candidate: &std::path::Path,
    threshold: f64,
    format: cli::CompareFormat,
    map: &[(String, String)],
) -> anyhow::Result<Exit> {
    let b = compare::Run::load(base)?;
    let c = compare::Run::load(candidate)?;
    let mut cmp = compare::compare(&b, &c, threshold, map)?;
    cmp.base = base.display().to_string();
    cmp.candidate = candidate.display().to_string();
    if cmp.rows.is_empty() {
        anyhow::bail!(
            "no point of the candidate matches the base (different targets? use --map old=new)"
        );
    }
    let out = match format {
        cli::CompareFormat::Text => compare::text(&cmp),
        cli::CompareFormat::Md => compare::markdown(&cmp),
        cli::CompareFormat::Html => compare::html(&cmp)?,
        cli::CompareFormat::Json => serde_json::to_string_pretty(&cmp)? + "\n",
    };
    print!("{out}");
    Ok(
        if cmp.fails(crate::pipeline::judge::verdict::FailOn::Regressed) {
            Exit::Regression
        } else {
            Exit::Ok
        },
    )
}
