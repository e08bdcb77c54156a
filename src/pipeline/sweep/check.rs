//! `sweepbench check`, and the preflight every run starts with: what each target must
//! allow (connections, statements, tables, privileges), read from the servers before any data
//! is touched, and the findings printed.

use super::{load, SweepArgs, MARGIN};
use crate::engine::workload::EventPlan;
use crate::exit::Exit;
use crate::pipeline::events::Events;
use crate::pipeline::plan::Plan;
use crate::pipeline::preflight::{self, Finding, Needs, OnCapacity, Severity};
use crate::pipeline::spec::target::TargetKind;
use crate::pipeline::spec::SweepSpec;
use std::collections::BTreeMap;

/// The target's kind, with an external target's password resolved.
pub(super) fn target_kind(spec: &SweepSpec, target: &str) -> anyhow::Result<TargetKind> {
    match spec.targets.iter().find(|t| t.name == target) {
        Some(t) => Ok(t.kind.resolved()),
        None => anyhow::bail!("target '{target}' is not defined"),
    }
}

fn needs(spec: &SweepSpec, plan: &Plan, target: &str) -> Needs {
    let stmts = spec
        .run
        .workloads
        .iter()
        .map(|&w| {
            let o = spec.engine_config(w, 1, Default::default());
            let p = EventPlan::new(w, &o.wl);
            if o.ps_mode == crate::engine::config::PsMode::Disable {
                0
            } else {
                p.statements_per_connection(o.wl.tables)
            }
        })
        .max()
        .unwrap_or(0);
    let auto_inc = spec
        .run
        .workloads
        .first()
        .is_none_or(|&w| spec.engine_config(w, 1, Default::default()).wl.auto_inc);
    let mut data = spec.data.clone();
    data.storage_engine = spec.engine_of(target).to_string();
    // The target's memory is known here, its buffer pool only to its server.
    if let Some(crate::pipeline::spec::size::SizeOf::Memory(f)) = data.size {
        let memory = spec
            .targets
            .iter()
            .find(|t| t.name == target)
            .and_then(|t| t.memory);
        data.size =
            memory.map(|m| crate::pipeline::spec::size::SizeOf::Bytes((m as f64 * f) as u64));
    }
    Needs {
        max_threads: plan.connections.get(target).copied().unwrap_or(0),
        stmts_per_conn: stmts,
        data,
        margin: MARGIN,
        auto_inc,
    }
}

/// A finding as `check` and `run` say it: "[FAIL] target check: message".
pub(super) fn finding_line(f: &Finding) -> String {
    let tag = match f.severity {
        Severity::Info => "ok  ",
        Severity::Warning => "warn",
        Severity::Blocking => "FAIL",
    };
    format!("[{tag}] {} {}: {}", f.target, f.check, f.message)
}

/// Says the preflight's findings: `check`'s answer (`answer`), or what a run saw before it
/// started, where a blocking finding is an error and the rest are notes.
pub(super) fn say_findings(findings: &[Finding], ev: &dyn Events, answer: bool) {
    for f in findings {
        let line = finding_line(f);
        match f.severity {
            _ if answer => ev.output(&line),
            Severity::Blocking => ev.error(&line),
            _ => ev.note(&line),
        }
    }
}

/// Runs the preflight for every target of the plan. Returns the findings and, with
/// `--on-capacity=skip`, the thread limit per target.
pub(super) async fn preflight_all(
    spec: &SweepSpec,
    plan: &Plan,
    on: OnCapacity,
) -> Result<(Vec<Finding>, BTreeMap<String, u32>), anyhow::Error> {
    let mut all = Vec::new();
    let mut limits = BTreeMap::new();
    // A synthetic target opens no connection.
    let total: u64 = plan
        .connections
        .iter()
        .filter(|(t, _)| !target_kind(spec, t).is_ok_and(|k| k.is_synthetic()))
        .map(|(_, &n)| (n + MARGIN) as u64)
        .sum();
    all.extend(preflight::fd_findings(total));
    for target in plan.connections.keys() {
        let kind = target_kind(spec, target)?;
        let findings =
            super::servers::preflight(spec, target, &kind, &needs(spec, plan, target), on).await;
        for mut f in findings {
            if let (Severity::Blocking, Some(max)) = (f.severity, f.max_threads) {
                let e = limits.entry(target.clone()).or_insert(u32::MAX);
                *e = (*e).min(max);
                // An adaptive search stops at what the target can take: for it the limit is
                // a ceiling, not a reason to refuse the sweep.
                if spec.run.auto.is_some() {
                    f.severity = Severity::Warning;
                    f.message = format!(
                        "{} — threads = \"auto\": the search stops at {max} threads on {target}",
                        f.message
                    );
                }
            }
            all.push(f);
        }
    }
    Ok((all, limits))
}

/// `sweepbench check`: preflight only. Exit 2 on a blocking finding.
pub async fn check(a: &SweepArgs, ev: &dyn Events) -> anyhow::Result<Exit> {
    let (spec, plan) = load(a, ev)?;
    let (findings, _) = preflight_all(&spec, &plan, a.on_capacity).await?;
    say_findings(&findings, ev, true);
    let blocking = findings
        .iter()
        .filter(|f| f.severity == Severity::Blocking)
        .count();
    if blocking > 0 {
        ev.output(&format!(
            "{blocking} blocking finding(s): the sweep cannot run as planned"
        ));
        Ok(Exit::BadInput)
    } else {
        ev.output(&format!("all checks passed for {} point(s)", plan.len()));
        Ok(Exit::Ok)
    }
}
