//! `sweepbench run`: preflight, the run directory, then every point in plan order — one
//! target × config block at a time — with progress, per-point records and the final report.

use super::check::{finding_line, preflight_all, say_findings, target_kind};
use super::runner::{Ctx, Runner};
use super::tally::Tally;
use super::{block, load, SweepArgs};
use crate::exit::Exit;
use crate::pipeline::events::{Event, Events};
use crate::pipeline::plan::{Plan, Slot};
use crate::pipeline::preflight::{Finding, OnCapacity, Severity};
use crate::pipeline::results::{Manifest, RunDir, Shard, Summary};
use crate::pipeline::spec::SweepSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `sweepbench run`: says what it does on `ev`, the summary and the gate as output; however
/// it ends, results/<sweep>/last-attempt.txt says how (`attempt`).
pub async fn run(a: &SweepArgs, ev: &dyn Events) -> anyhow::Result<Exit> {
    let started = chrono::Utc::now();
    let ended = attempt(a, started, ev).await;
    match &ended {
        Ok((sweep_dir, exit, summary)) => {
            super::attempt::write(a, sweep_dir, started, *exit, summary, ev)
        }
        Err(e) => {
            // Stopped perhaps before the sweep file was read: its directory found leniently.
            let why = format!("sweepbench run: {e:#}\n");
            let sweep_dir = super::attempt::sweep_dir(a);
            super::attempt::write(a, &sweep_dir, started, crate::exit::exit_of(e), &why, ev);
        }
    }
    ended.map(|(_, exit, _)| exit)
}

/// The run itself: its sweep's results directory, its exit code and its summary (as
/// summary.txt keeps it).
async fn attempt(
    a: &SweepArgs,
    started: chrono::DateTime<chrono::Utc>,
    ev: &dyn Events,
) -> anyhow::Result<(PathBuf, Exit, String)> {
    let (spec, plan) = load(a, ev)?;
    let sweep_dir = a.results_dir.join(&spec.name);
    if spec.run.design.paired() && a.resume.is_some() {
        // A point's rounds, their orders and its looks are one experiment: half of one and
        // half of another would pair slices measured hours apart.
        anyhow::bail!("--resume: a paired run cannot be continued (its points' rounds are judged together); run the sweep again");
    }
    // One run of a sweep at a time: nightly jobs overlap when one runs long.
    let _lock = crate::pipeline::results::nightly::Lock::take(&sweep_dir)?;
    // Under the lock no run is in progress: a marker left in last-attempt.txt is a run that
    // never returned. Then this run's own marker, replaced when it ends.
    let never_ended = super::attempt::unfinished(&sweep_dir);
    super::attempt::started(a, &sweep_dir, started, None, ev);
    // Settings a killed run left changed on external targets go back first, or nothing runs.
    let journal = super::vars::Journal::at(&sweep_dir);
    let recovered = journal
        .recover(|t| target_kind(&spec, t).ok()?.external().cloned())
        .await?;
    for line in recovered {
        ev.warn(&line);
    }
    // A run before this one that never wrote its summary is said first, here and in this
    // run's summary: its mail never came.
    let killed = match a.resume {
        None => super::attempt::killed_before(&sweep_dir).or(never_ended),
        Some(_) => None,
    };
    if let Some(k) = &killed {
        ev.warn(k);
    }
    let limits = preflight(&spec, &plan, a.on_capacity, ev).await?;
    let opened = match &a.resume {
        Some(run) => RunDir::resume(run, &spec),
        None => RunDir::create(&a.results_dir, &spec),
    };
    let mut dir = opened?;
    super::attempt::started(a, &sweep_dir, started, Some(&dir.path), ev);
    let done: std::collections::BTreeSet<String> =
        dir.points().iter().map(|p| p.point_id.clone()).collect();
    let mut plan = plan;
    plan.points.retain(|p| !done.contains(&p.id));
    plan.host.retain(|p| !done.contains(&p.id));
    if a.resume.is_some() {
        let left = if spec.run.auto.is_some() {
            "the adaptive searches go on from there".to_string()
        } else {
            format!("{} to run", plan.points.len())
        };
        ev.note(&format!(
            "resuming {}: {} point(s) done, {left}",
            dir.path.display(),
            done.len(),
        ));
    }
    let started_at = chrono::Utc::now();
    // Who measured: the host and its speed now, so compare can tell a slower VM from a slower
    // server.
    let host = crate::pipeline::results::host::fingerprint(Some(&dir.path));
    dir.write_manifest(&manifest(
        &spec,
        &plan,
        &dir.run_id,
        (started_at, None),
        &host,
        None,
        a.shard,
    ))?;
    let threshold = a.threshold_pct;
    let t = run_points(&spec, &plan, &limits, &mut dir, ev, a.keep_k8s, threshold).await;
    ev.emit(Event::Finished);
    let end = manifest(
        &spec,
        &plan,
        &dir.run_id,
        (started_at, Some(chrono::Utc::now())),
        &host,
        Some(&t),
        a.shard,
    );
    if let Err(e) = dir.write_manifest(&end) {
        ev.warn(&format!("{e:#}"));
    }
    let (exit, summary) = conclude(a, (&spec, &plan), &dir, &t, killed.as_deref(), ev)?;
    Ok((sweep_dir, exit, summary))
}

/// A run's end, once its points ran: the series judged against the baseline (an unpaired
/// run of several), the report, the summary (with a killed predecessor first and an
/// interruption last), the gate; summary.txt kept. Returns the exit code and the summary.
fn conclude(
    a: &SweepArgs,
    (spec, plan): (&SweepSpec, &Plan),
    dir: &RunDir,
    t: &Tally,
    killed: Option<&str>,
    ev: &dyn Events,
) -> anyhow::Result<(Exit, String)> {
    let threshold = a.threshold_pct;
    // Several series measured apart: judged once here, kept for the report and the gate.
    let within = if t.interrupted {
        None
    } else {
        super::gate::judge_unpaired(spec, dir, threshold).unwrap_or_else(|e| {
            ev.warn(&format!(
                "judging the series against the baseline failed: {e:#}"
            ));
            None
        })
    };
    let (report, why, steps, steadiness) = match crate::pipeline::report::write(&dir.path, None) {
        Ok(m) => (
            format!("; report: {}", dir.path.join("report.html").display()),
            m.why,
            m.steps,
            m.stability_headlines,
        ),
        Err(e) => {
            ev.warn(&format!("writing the report failed: {e:#}"));
            (String::new(), Vec::new(), Vec::new(), Vec::new())
        }
    };
    let mut summary = t.summary(spec, plan, &dir.path, (&report, &why));
    // The answers the sweep asked for itself (each class's own, a chain's steps) lead, right
    // under the counts line, as they lead the report; stability closes the answers.
    let lines = |l: &[String]| l.iter().map(|s| format!("  {s}\n")).collect::<String>();
    if !steps.is_empty() {
        let at = summary.find('\n').map_or(summary.len(), |i| i + 1);
        summary.insert_str(at, &lines(&steps));
    }
    summary.push_str(&lines(&steadiness));
    if let Some(k) = killed {
        summary = format!("warning: {k}\n{summary}");
    }
    if t.interrupted {
        summary.push_str(&interrupted(
            plan,
            dir.points(),
            a.fail_on_regression.is_some(),
        ));
    }
    ev.output_text(&summary);
    let mut regressed = false;
    if let (Some((th, against)), false) = (&a.fail_on_regression, t.interrupted) {
        let (text, failing) =
            super::gate::apply(spec, dir, (*th, against, a.confirm), a.fail_on, within, ev)?;
        summary.push_str(&format!("\n{text}"));
        regressed = failing;
    }
    let kept = super::gate::keep_summary(&dir.path, &summary, ev);
    let exit = if t.interrupted {
        Exit::Interrupted
    } else if t.failed > 0 || !t.unwritten.is_empty() {
        Exit::Failed
    } else if regressed {
        Exit::Regression
    } else {
        Exit::Ok
    };
    Ok((exit, kept))
}

/// The preflight every run starts with: its findings said, and the run refused on a
/// blocking one (unless `--on-capacity=skip` can skip what exceeds a target's capacity).
/// Returns each target's thread limit.
async fn preflight(
    spec: &SweepSpec,
    plan: &Plan,
    on_capacity: OnCapacity,
    ev: &dyn Events,
) -> anyhow::Result<BTreeMap<String, u32>> {
    let (findings, limits) = preflight_all(spec, plan, on_capacity).await?;
    let blocking: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Blocking)
        .collect();
    let capacity_only = blocking.iter().all(|f| f.max_threads.is_some());
    let skippable = on_capacity == OnCapacity::Skip && capacity_only;
    if !blocking.is_empty() && !skippable {
        // The blocking ones are the error itself, which reaches the terminal and
        // last-attempt.txt alike: a mailed refusal names what to fix.
        let rest: Vec<Finding> = findings
            .iter()
            .filter(|f| f.severity != Severity::Blocking)
            .cloned()
            .collect();
        say_findings(&rest, ev, false);
        let lines: Vec<String> = blocking.iter().map(|f| finding_line(f)).collect();
        anyhow::bail!(
            "{} blocking finding(s); nothing was run (see `sweepbench check`):\n{}",
            blocking.len(),
            lines.join("\n")
        );
    }
    say_findings(&findings, ev, false);
    Ok(limits)
}

/// What an interrupted run says at the end of its summary: that it was, the workloads it
/// never reached, and that the gate did not judge it.
fn interrupted(plan: &Plan, kept: &[crate::pipeline::results::PointRecord], gated: bool) -> String {
    let mut never: Vec<&str> = Vec::new();
    for p in &plan.points {
        let name = p.workload.name();
        if !never.contains(&name) && !kept.iter().any(|r| r.workload == name) {
            never.push(name);
        }
    }
    let ok = kept
        .iter()
        .filter(|r| r.status == crate::pipeline::results::PointStatus::Ok)
        .count();
    let mut s =
        format!("interrupted (SIGINT or SIGTERM) with {ok} point(s) or slice(s) finished ok");
    if !never.is_empty() {
        s.push_str(&format!("; never ran: {}", never.join(", ")));
    }
    s.push('\n');
    if gated {
        s.push_str(
            "--fail-on-regression: not judged: the run was interrupted; run the sweep again\n",
        );
    }
    s
}

/// Runs the plan's points in order, expanding `threads = "auto"` slots as they come (see
/// `auto`). Points above a target's capacity limit (from `--on-capacity=skip`) are recorded
/// as skipped in their place.
async fn run_points(
    spec: &SweepSpec,
    plan: &Plan,
    limits: &BTreeMap<String, u32>,
    dir: &mut RunDir,
    ev: &dyn Events,
    keep_k8s: bool,
    threshold_pct: f64,
) -> Tally {
    let st = match block::RunState::new(&dir.path, ev) {
        Ok(s) => s,
        Err(e) => {
            ev.error(&format!("{e:#}"));
            return Tally {
                failed: plan.points.len() as u32,
                ..Tally::default()
            };
        }
    };
    let (run_id, run_path) = (dir.run_id.clone(), dir.path.clone());
    let cx = Ctx {
        spec,
        plan,
        limits,
        ev,
        threshold_pct,
        run_id: &run_id,
        run_path: &run_path,
        keep_k8s,
    };
    let mut r = Runner::new(cx, dir, st);
    crate::interrupt::install();
    if let Some(line) = spec.run.design.said() {
        r.note(line);
    }
    // The machine's own curve first, while no server of the sweep loads it.
    if !super::host::run(&mut r).await {
        let not_run = plan.max_points(spec).saturating_sub(r.measured());
        return r.finish(not_run);
    }
    if spec.run.design.paired() {
        super::paired::run(&mut r).await;
        return r.finish(0);
    }
    let mut left = plan.max_points(spec) - plan.host.len() as u64;
    for p in &plan.points {
        let go_on = if p.is_slot() {
            let per_slot = p.max_points(spec);
            let (go_on, used) = match p.slot {
                Slot::Sla => super::auto::sla(&mut r, p).await,
                _ => super::auto::expand(&mut r, p).await,
            };
            // A search that ended early frees the rest of its share of the bar.
            let unused = per_slot.saturating_sub(used);
            let (planned, _) = r.progress();
            r.replan(planned.saturating_sub(unused));
            left -= per_slot;
            go_on
        } else {
            left -= 1;
            r.point(p).await
        };
        if !go_on {
            break;
        }
    }
    r.close_block().await;
    r.finish(left)
}

/// manifest.json: what ran, where, when. Addresses are redacted.
fn manifest(
    spec: &SweepSpec,
    plan: &Plan,
    run_id: &str,
    (started, ended): (
        chrono::DateTime<chrono::Utc>,
        Option<chrono::DateTime<chrono::Utc>>,
    ),
    host: &crate::pipeline::results::host::Fingerprint,
    t: Option<&Tally>,
    shard: Option<(u32, u32)>,
) -> Manifest {
    let targets: Vec<serde_json::Value> = spec
        .targets
        .iter()
        .map(|x| {
            let mut v = x.kind.manifest(&x.name);
            // Threads from cores: the cores each target's counts were resolved from.
            if !spec.run.per_core.is_empty() {
                v["cores"] = serde_json::json!(x.cores);
                v["threads"] = serde_json::json!(spec.threads_of(&x.name));
            }
            v
        })
        .collect();
    let value = |v: serde_json::Result<serde_json::Value>| v.ok();
    Manifest {
        sweep: Some(spec.name.clone()),
        description: Some(spec.description.clone()),
        run_id: Some(run_id.to_string()),
        started_at: Some(started),
        ended_at: ended,
        host: Some(host.clone()),
        data: value(serde_json::to_value(&spec.data).map(|mut d| {
            // A sized data set's rows are each target's (in `sized`), not table_size.
            if spec.data.size.is_some() {
                if let Some(o) = d.as_object_mut() {
                    o.remove("table_size");
                }
            }
            d
        })),
        run: value(serde_json::to_value(&spec.run)),
        workload_options: value(serde_json::to_value(spec.workload_options.given())),
        targets: Some(targets.into()),
        configs: value(serde_json::to_value(&spec.configs)),
        baseline: spec.baseline.clone(),
        plan: plan
            .host
            .iter()
            .map(|p| p.id.clone())
            .chain(plan.points.iter().map(|p| p.id.clone()))
            .collect(),
        shard: shard.map(|(index, of)| Shard { index, of }),
        summary: t.map(|t| Summary {
            ok: t.ok,
            failed: t.failed,
            sla_overloaded: t.overloaded,
            skipped: t.skipped,
            not_run: t.not_run,
            interrupted: t.interrupted,
            not_written: t.unwritten.clone(),
        }),
        ..Manifest::new()
    }
}
