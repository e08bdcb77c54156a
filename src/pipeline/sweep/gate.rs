//! `run --fail-on-regression`: what a finished run is judged against (the sweep's baseline
//! series, or for a one-series sweep an earlier run of the same sweep) and the verdict.

use crate::pipeline::compare::{self, Against, Comparison, Run};
use crate::pipeline::events::Events;
use crate::pipeline::judge::verdict::FailOn;
use crate::pipeline::judge::verdicts_file::Verdicts;
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

/// The newest `n` finished runs of the sweep older than `this` for which `also` holds and
/// that can be a reference (their gate passed, or they were accepted: a regression fails every
/// night until it is fixed or accepted; a night cleared by `--confirm` is neither), oldest first; and the finished runs after the newest
/// of them that failed their gate. Searched from the newest back, so a long history is not
/// read to find last night.
fn earlier_runs(
    this: &Path,
    n: usize,
    also: fn(&Path) -> bool,
) -> anyhow::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let sweep_dir = this
        .parent()
        .context("the run directory has no parent (results/<sweep>)")?;
    let name = this.file_name().unwrap_or_default().to_owned();
    let newest_first = crate::pipeline::results::nightly::runs(sweep_dir)?
        .into_iter()
        .rev()
        .filter(|r| r.file_name().is_some_and(|x| x < name.as_os_str()) && also(r) && finished(r))
        .filter(|r| !crate::pipeline::results::nightly::cleared_by_confirmation(r));
    let mut failed = Vec::new();
    let mut found = Vec::new();
    for r in newest_first {
        if crate::pipeline::results::nightly::reference(&r) {
            found.push(r);
            if found.len() == n {
                break;
            }
        } else if found.is_empty() {
            failed.push(r);
        }
    }
    found.reverse();
    failed.reverse();
    Ok((found, failed))
}

/// How the reference runs are named in the gate's lines: "the previous finished run X", or,
/// when later runs failed the gate, the last one that passed it and those that did not.
fn reference_said(last: &[PathBuf], failed: &[PathBuf]) -> String {
    let names = run_names(last);
    let which = match (last.len(), failed.is_empty()) {
        (1, true) => format!("the previous finished run {}", last[0].display()),
        (1, false) => format!(
            "the last finished run that passed the gate or was accepted, {}",
            last[0].display()
        ),
        (_, true) => format!(
            "the last {} finished runs ({})",
            last.len(),
            names.join(", ")
        ),
        (_, false) => format!(
            "the last {} finished runs that passed the gate or were accepted ({})",
            last.len(),
            names.join(", ")
        ),
    };
    if failed.is_empty() {
        which
    } else {
        format!(
            "{which}; still judged against it: the {} run(s) since failed the gate ({}) — `sweepbench accept RUN` makes a run the reference when its change was meant",
            failed.len(),
            run_names(failed).join(", ")
        )
    }
}

/// The run directories' names (their ids), for the lines that say what was compared.
fn run_names(runs: &[PathBuf]) -> Vec<String> {
    runs.iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect()
}

/// The series of a run's points, the host's tests left out.
fn series_of(run: &Run) -> Vec<(&str, &str)> {
    let mut series: Vec<(&str, &str)> = run
        .points
        .iter()
        .filter(|r| !r.is_host())
        .map(|r| (r.target.as_str(), r.config.as_str()))
        .collect();
    series.sort();
    series.dedup();
    series
}

/// The sweep's baseline series, "target/config".
fn baseline_of(spec: &SweepSpec) -> String {
    spec.baseline
        .clone()
        .unwrap_or_else(|| format!("{}/{}", spec.targets[0].name, spec.configs[0].name))
}

/// An unpaired run with several series, judged once as it ends: each series against the
/// baseline (compare's within-run comparison, one family), kept as its verdicts.json, which
/// the report reads; the gate takes the same comparison. None for a paired run (its points
/// were judged as they ended) or a run of one series.
pub fn judge_unpaired(
    spec: &SweepSpec,
    dir: &RunDir,
    threshold: f64,
) -> anyhow::Result<Option<Comparison>> {
    use crate::pipeline::judge::verdicts_file::{self, Unpaired, UnpairedPoint};
    if spec.run.design.paired() {
        return Ok(None);
    }
    let this = Run::load(&dir.path)?;
    if series_of(&this).len() < 2 {
        return Ok(None);
    }
    let baseline = baseline_of(spec);
    let cmp = compare::within_run(&this, &baseline, threshold)?;
    let kept = Unpaired {
        design: verdicts_file::UNPAIRED.to_string(),
        method: cmp.method.to_string(),
        baseline,
        threshold_pct: threshold,
        points: cmp
            .rows
            .iter()
            .filter(|r| !r.is_host())
            .map(|r| UnpairedPoint {
                series: if r.config.is_empty() {
                    r.target.clone()
                } else {
                    format!("{}/{}", r.target, r.config)
                },
                workload: r.workload.clone(),
                threads: r.threads,
                verdict: r.verdict,
                metrics: r.metrics.clone(),
            })
            .collect(),
        pooled: cmp.pooled.clone(),
    };
    verdicts_file::write_unpaired(&dir.path, &kept)?;
    Ok(Some(cmp))
}

/// A gate's judgement: how, what in words, the comparison, and the earlier run it was
/// compared with (the newest, when pooled).
pub type Judged = (Kind, String, Comparison, Option<PathBuf>);

/// How it was compared, what was compared in words, the comparison and, against earlier runs,
/// the newest of them (what `--confirm` starts again); None when there is nothing to compare
/// with yet (the first run of a one-series sweep). `within` is the run's own comparison of
/// its series (`judge_unpaired`), judged once.
pub fn judge(
    spec: &SweepSpec,
    dir: &RunDir,
    threshold: f64,
    against: &Against,
    within: Option<Comparison>,
) -> anyhow::Result<Option<Judged>> {
    let baseline = baseline_of(spec);
    let within_said = format!("each series of this run against the baseline {baseline}");
    if let Some(cmp) = within {
        return Ok(Some((Kind::Within, within_said, cmp, None)));
    }
    let this = Run::load(&dir.path)?;
    if series_of(&this).len() > 1 {
        let cmp = compare::within_run(&this, &baseline, threshold)?;
        return Ok(Some((Kind::Within, within_said, cmp, None)));
    }
    let (what, base, base_dir) = match against {
        Against::Run(p) => (format!("run {}", p.display()), Run::load(p)?, p.clone()),
        Against::Previous => {
            let (mut last, failed) = earlier_runs(&dir.path, 1, |_| true)?;
            let Some(prev) = last.pop() else {
                return Ok(None);
            };
            (
                reference_said(std::slice::from_ref(&prev), &failed),
                Run::load(&prev)?,
                prev,
            )
        }
        Against::Last(n) => {
            let (last, failed) = earlier_runs(&dir.path, *n, |_| true)?;
            if last.is_empty() {
                return Ok(None);
            }
            let loaded = last
                .iter()
                .map(|p| Run::load(p))
                .collect::<anyhow::Result<Vec<Run>>>()?;
            let newest = last.last().cloned().unwrap_or_default();
            (
                format!("the repeats of {} pooled", reference_said(&last, &failed)),
                Run::pooled(loaded),
                newest,
            )
        }
    };
    let cmp = compare::compare(&base, &this, threshold, &[])?;
    Ok(Some((Kind::Earlier, what, cmp, Some(base_dir))))
}

/// `--fail-on-regression` on a paired run with a pinned control (`control = …`): each
/// series' ratio to the control in this run against the same ratio in the earlier run(s)
/// `against` names. Returns what was compared and the judgement; None for the first run.
/// Returns what the night was compared with, the outcome, and the reference runs' verdicts.
pub fn control(
    dir: &RunDir,
    threshold: f64,
    against: &Against,
) -> anyhow::Result<
    Option<(
        String,
        crate::pipeline::judge::control::Outcome,
        Vec<Verdicts>,
    )>,
> {
    let load = |p: &Path| -> anyhow::Result<crate::pipeline::judge::verdicts_file::Verdicts> {
        crate::pipeline::judge::verdicts_file::load(p)?.with_context(|| {
            format!(
                "{} has no verdicts.json: it was not a paired run against the control",
                p.display()
            )
        })
    };
    let now =
        load(&dir.path).context("this run completed no round of the control and a candidate")?;
    let (what, earlier) = match against {
        Against::Run(p) => (format!("run {}", p.display()), vec![p.clone()]),
        Against::Previous | Against::Last(_) => {
            let n = match against {
                Against::Last(n) => *n,
                _ => 1,
            };
            // Finished runs of this sweep that were paired against the control.
            let (last, failed) = earlier_runs(
                &dir.path,
                n,
                crate::pipeline::judge::verdicts_file::is_paired,
            )?;
            if last.is_empty() {
                return Ok(None);
            }
            (reference_said(&last, &failed), last)
        }
    };
    let earlier = earlier
        .iter()
        .map(|p| load(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let outcome = crate::pipeline::judge::control::judge(&earlier, &now, threshold);
    Ok(Some((what, outcome, earlier)))
}

/// What the compared servers were told differently (SHOW GLOBAL VARIABLES of each), as the
/// report ranks it: what moves performance first, then the rest; what differs between any two
/// builds (versions, GTID positions, a variable one lacks) only counted; a changed default
/// character set or collation called out as a confounder.
fn variables_said(
    baseline: &str,
    vars: &std::collections::BTreeMap<String, crate::pipeline::results::Variables>,
) -> String {
    use crate::pipeline::results::servers::{charset_confounder, ranked, Weight};
    let Some(base) = vars.get(baseline) else {
        return String::new();
    };
    let mut out = String::new();
    for (series, other) in vars.iter().filter(|(k, _)| *k != baseline) {
        let diffs = crate::pipeline::results::variable_diffs(&[base, other]);
        if diffs.is_empty() {
            continue;
        }
        let pair = [baseline.to_string(), series.clone()];
        let confounder = charset_confounder(&diffs, &pair);
        out.push_str(&format!(
            "server variables of {series} that differ from {baseline} (what moves performance first):\n"
        ));
        let mut always = 0;
        for (n, values, w) in ranked(diffs) {
            match w {
                Weight::AlwaysDiffers => always += 1,
                _ => out.push_str(&format!("  {n} {} → {}\n", values[0], values[1])),
            }
        }
        if always > 0 {
            out.push_str(&format!(
                "  and {always} more that differ between any two versions or builds (version strings, GTID positions, variables one server lacks)\n"
            ));
        }
        if let Some(c) = confounder {
            out.push_str(&format!("  {c}\n"));
        }
    }
    out
}

/// `--fail-on-regression` on a paired run: its own verdicts (verdicts.json), each candidate
/// series against the baseline at every point. Says them as output; returns what was
/// compared and whether any point regressed.
pub fn paired(run: &Path, fail_on: FailOn, ev: &dyn Events) -> anyhow::Result<(String, bool)> {
    let v = crate::pipeline::judge::verdicts_file::load(run)?
        .context("the paired run wrote no verdicts.json: no point completed a round")?;
    ev.output_text(&crate::pipeline::judge::verdicts_file::markdown(&v));
    let vars = crate::pipeline::results::load_variables(run);
    ev.output_text(&variables_said(&v.baseline, &vars));
    Ok((
        format!(
            "each series against {} in the same rounds (paired design)",
            v.baseline
        ),
        crate::pipeline::judge::verdicts_file::any_failing(&v, fail_on),
    ))
}

/// The gate's flag as the user gave it, for its lines.
fn gate_flag(fail_on: FailOn) -> &'static str {
    match fail_on {
        FailOn::Regressed => "--fail-on-regression",
        FailOn::Slower => "--fail-on slower",
    }
}

/// How a gate judged, kept in gate.json as "kind" for `history`, which says the newest run's
/// verdict as its gate gave it: the ratio to a pinned control against earlier runs, each
/// series against the baseline in the same rounds or the same run, or the run against
/// earlier runs of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Control,
    Paired,
    Within,
    Earlier,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Control => "control",
            Kind::Paired => "paired",
            Kind::Within => "within",
            Kind::Earlier => "earlier",
        }
    }
}

/// Runs the gate the sweep asks for on a finished run, says what it compared and every
/// verdict, keeps them in the run (gate.md, gate.json and its report) and returns the lines
/// for the run's summary and whether the gate fails.
pub fn apply(
    spec: &SweepSpec,
    dir: &RunDir,
    (threshold, against, confirm): (f64, &Against, bool),
    fail_on: FailOn,
    within: Option<Comparison>,
    ev: &dyn Events,
) -> anyhow::Result<(String, bool)> {
    let flag = gate_flag(fail_on);
    let first = |what: &str| {
        format!(
            "{flag}: the first finished run of '{}'{what}: nothing to compare with yet\n",
            spec.name
        )
    };
    let (kind, text, judged, failing) = if spec.control {
        match control(dir, threshold, against)? {
            None => (
                Kind::Control,
                first(" paired with its control"),
                None,
                false,
            ),
            Some((what, o, earlier)) => {
                let mut failing = o.failing(fail_on);
                let mut j = serde_json::json!({"compared": what, "control": o});
                let mut said = o.text(&what);
                // About to fail: the failing points measured again in a fresh paired run
                // against the same reference; one that cannot run is said, and the gate
                // fails as it would.
                if confirm && failing {
                    match compare::confirm::control(&dir.path, &o, &earlier, (fail_on, &what)) {
                        Ok((text, fails, k)) => {
                            said.push_str(&text);
                            failing = fails;
                            j["confirmation"] = k;
                        }
                        Err(e) => said.push_str(&compare::confirm::unavailable(&e)),
                    }
                }
                // The outcome last, as the paired gate says it: the line a reader of
                // summary.txt looks for.
                let text = format!(
                    "{flag}: compared {said}{flag}: {}\n",
                    if failing { "FAILED" } else { "passed" }
                );
                (Kind::Control, text, Some(j), failing)
            }
        }
    } else if spec.run.design.paired() {
        let (what, failing) = paired(&dir.path, fail_on, ev)?;
        let text = format!(
            "{flag}: {what}: {}\n",
            if failing { "FAILED" } else { "passed" }
        );
        (
            Kind::Paired,
            text,
            Some(serde_json::json!({"compared": what})),
            failing,
        )
    } else {
        match judge(spec, dir, threshold, against, within).context("--fail-on-regression")? {
            None => (Kind::Earlier, first(""), None, false),
            Some((kind, what, cmp, base_dir)) => {
                let mut text = format!("{flag}: compared {what}\n{}", compare::text(&cmp));
                let mut failing = cmp.fails(fail_on);
                let mut j = serde_json::json!({"compared": what, "comparison": cmp});
                // About to fail: the failing points measured again, paired; a confirmation
                // that cannot run is said, and the gate fails as it would.
                if let (true, true, Some(base)) = (confirm, failing, base_dir) {
                    match compare::confirm::confirm((&base, &dir.path), &cmp, fail_on, &[], |_| {})
                    {
                        Ok(Some(k)) => {
                            text.push_str(&compare::confirm::text(&k));
                            failing = k.fails;
                            j["confirmation"] = serde_json::to_value(&k)?;
                        }
                        Ok(None) => {}
                        Err(e) => text.push_str(&compare::confirm::unavailable(&e)),
                    }
                }
                (kind, text, Some(j), failing)
            }
        }
    };
    ev.output("");
    ev.output_text(&text);
    // What history reads back: how the gate judged, at what threshold, and its outcome.
    let mut json = judged.unwrap_or_else(|| serde_json::json!({"compared": null, "first": true}));
    json["kind"] = kind.as_str().into();
    json["flag"] = flag.into();
    json["threshold_pct"] = threshold.into();
    json["passed"] = (!failing).into();
    // Kept in the run directory and its report, not only in the cron log.
    let kept = dir
        .write_gate(&text, &json)
        .and_then(|()| crate::pipeline::report::write(&dir.path, None));
    if let Err(e) = kept {
        ev.warn(&format!("the gate's verdicts not kept in the run: {e:#}"));
    }
    Ok((text, failing))
}

/// Writes the run's summary.txt: what the terminal said at the end (the counts, the answers,
/// the gate's verdicts) and each failed point with its error — the file a cron job mails or
/// logs. Returns the text written.
pub fn keep_summary(run: &Path, summary: &str, ev: &dyn Events) -> String {
    let mut s = summary.to_string();
    let failed: Vec<String> = crate::pipeline::results::load_points(run)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.status == PointStatus::Failed)
        // An error quotes a server, a proxy or a log: never raw in a mail.
        .map(|r| format!("  {}: {}", r.point_id, crate::visible::visible(&r.error)))
        .collect();
    if !failed.is_empty() {
        s.push_str(&format!("\nfailed points:\n{}\n", failed.join("\n")));
    }
    if let Err(e) = crate::pipeline::results::write_atomic(&run.join("summary.txt"), s.as_bytes()) {
        ev.warn(&format!("summary.txt not written: {e:#}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed point's error that holds a terminal's escape codes and a bell (from a server
    /// or proxy that sent them raw) is written to summary.txt escaped.
    #[test]
    fn summary_txt_shows_a_failed_points_control_characters_escaped() {
        use crate::pipeline::results::{PointRecord, RunDir};
        let d = tempfile::tempdir().unwrap();
        let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
        dir.append_point(&PointRecord {
            point_id: "a/default/w/t1/r1".into(),
            status: PointStatus::Failed,
            error: "FATAL: error 1040 (\u{1b}[31mRED\u{1b}[0m evil \u{7} message)".into(),
            ..PointRecord::default()
        })
        .unwrap();
        keep_summary(
            &dir.path,
            "sweep 'x': 0 ok, 1 failed\n",
            &crate::pipeline::events::Collect::default(),
        );
        let text = std::fs::read_to_string(dir.path.join("summary.txt")).unwrap();
        assert!(
            text.contains(
                "a/default/w/t1/r1: FATAL: error 1040 (\\e[31mRED\\e[0m evil \\a message)"
            ),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
    }

    #[test]
    fn the_paired_gate_ranks_the_variables_and_counts_what_always_differs() {
        let v = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<crate::pipeline::results::Variables>()
        };
        let mut vars = std::collections::BTreeMap::new();
        vars.insert(
            "m/10.11".to_string(),
            v(&[
                ("aria_sort_buffer_size", "1"),
                ("character_set_server", "latin1"),
                ("innodb_flush_log_at_trx_commit", "1"),
                ("version", "10.11.19"),
                ("gtid_binlog_pos", ""),
            ]),
        );
        vars.insert(
            "m/11.8".to_string(),
            v(&[
                ("aria_sort_buffer_size", "2"),
                ("character_set_server", "utf8mb4"),
                ("innodb_flush_log_at_trx_commit", "2"),
                ("version", "11.8.9"),
                ("gtid_binlog_pos", "0-1-5"),
            ]),
        );
        let said = variables_said("m/10.11", &vars);
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(
            lines[..4],
            [
                "server variables of m/11.8 that differ from m/10.11 (what moves performance first):",
                "  character_set_server latin1 → utf8mb4",
                "  innodb_flush_log_at_trx_commit 1 → 2",
                "  aria_sort_buffer_size 1 → 2",
            ],
            "{said}"
        );
        assert!(
            lines[4].starts_with("  and 2 more that differ between any two"),
            "{said}"
        );
        assert!(
            lines[5].contains("character_set_server (latin1 on m/10.11, utf8mb4 on m/11.8)"),
            "{said}"
        );
        assert!(
            lines[5].contains("vars = { character_set_server = \"latin1\" }"),
            "{said}"
        );
        assert_eq!(variables_said("m/none", &vars), "");
    }
}
