//! `sweepbench compare BASE CANDIDATE`: judge every matching point and print the verdicts in
//! the asked format; exit 3 when something regressed.

use super::cli;
use crate::exit::Exit;
use crate::pipeline::compare;

/// Compares two run directories; with `confirm`, measures the points that would fail again in
/// one paired run of the two sides' servers and lets that decide the exit code.
pub(super) fn run(
    base: &std::path::Path,
    candidate: &std::path::Path,
    threshold: f64,
    format: cli::CompareFormat,
    map: &[(String, String)],
    confirm: bool,
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
    let fail_on = crate::pipeline::judge::verdict::FailOn::Regressed;
    let mut fails = cmp.fails(fail_on);
    let confirmation = confirm.then(|| {
        compare::confirm::confirm((base, candidate), &cmp, fail_on, map, |n| {
            eprintln!(
                "confirming {n} point(s) in one paired run of the two sides' servers, started again…"
            )
        })
    });
    let said = match &confirmation {
        Some(Ok(Some(k))) => {
            fails = k.fails;
            compare::confirm::text(k)
        }
        Some(Ok(None)) => "\nnothing to confirm: no point regressed or was left unjudged.\n".into(),
        Some(Err(e)) => compare::confirm::unavailable(e),
        None => String::new(),
    };
    let out = match format {
        cli::CompareFormat::Text => compare::text(&cmp) + &said,
        cli::CompareFormat::Md => compare::markdown(&cmp) + &said,
        cli::CompareFormat::Html => compare::html(&cmp)?,
        cli::CompareFormat::Json => {
            let mut v = serde_json::to_value(&cmp)?;
            match &confirmation {
                Some(Ok(Some(k))) => v["confirmation"] = serde_json::to_value(k)?,
                Some(Ok(None)) => v["confirmation"] = serde_json::Value::Null,
                Some(Err(e)) => v["confirmation_unavailable"] = format!("{e:#}").into(),
                None => {}
            }
            serde_json::to_string_pretty(&v)? + "\n"
        }
    };
    print!("{out}");
    if matches!(format, cli::CompareFormat::Html) && !said.is_empty() {
        eprint!("{said}");
    }
    Ok(if fails { Exit::Regression } else { Exit::Ok })
}
