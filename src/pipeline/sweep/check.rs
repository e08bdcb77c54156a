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
    match spec
        .targets
        .iter()
        .find(|t| t.name == target)
        .map(|t| &t.kind)
    {
        Some(TargetKind::External(c)) => {
            let mut c = c.clone();
            c.resolve_password();
            Ok(TargetKind::External(c))
        }
        Some(m) => Ok(m.clone()),
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
    Needs {
        max_threads: plan.connections.get(target).copied().unwrap_or(0),
        stmts_per_conn: stmts,
        data: spec.data.clone(),
        margin: MARGIN,
    }
}

/// Says the preflight's findings: `check`'s answer (`answer`), or what a run saw before it
/// started, where a blocking finding is an error and the rest are notes.
pub(super) fn say_findings(findings: &[Finding], ev: &dyn Events, answer: bool) {
    for f in findings {
        let tag = match f.severity {
            Severity::Info => "ok  ",
            Severity::Warning => "warn",
            Severity::Blocking => "FAIL",
        };
        let line = format!("[{tag}] {} {}: {}", f.target, f.check, f.message);
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
        let (findings, facts) = match target_kind(spec, target)? {
            TargetKind::External(c) => {
                let n = needs(spec, plan, target);
                let o = c.conn_options();
                // Under the watch, as prepare is: a server that stops answering between the
                // login and the last query, or a Ctrl-C, ends the check instead of holding it.
                let checked = crate::engine::watch::watched(
                    &o,
                    "checking it",
                    async { Ok(preflight::check_target(target, &o, c.is_local(), &n, on).await) },
                    || {},
                )
                .await;
                match checked {
                    Ok(r) => r,
                    Err(e) => (
                        vec![Finding {
                            target: target.clone(),
                            severity: Severity::Blocking,
                            check: "server",
                            message: format!("{e:#}"),
                            max_threads: None,
                        }],
                        None,
                    ),
                }
            }
            TargetKind::Managed(m) => {
                all.push(managed_finding(target, &m));
                all.extend(ineffective_findings(spec, target, None));
                continue;
            }
            TargetKind::Synthetic(m) => {
                all.push(Finding {
                    target: target.clone(),
                    severity: Severity::Info,
                    check: "server",
                    message: format!("synthetic (seed {}): no server; its points are computed from the model, in virtual time", m.seed),
                    max_threads: None,
                });
                // A model with a connection limit is held to it as a server is.
                let facts = preflight::ServerFacts {
                    max_connections: m.max_connections.map_or(u64::MAX, u64::from),
                    max_prepared_stmt_count: u64::MAX,
                    ..Default::default()
                };
                let n = needs(spec, plan, target);
                (preflight::capacity_findings(target, &facts, &n), None)
            }
        };
        if let Some(f) = &facts {
            all.extend(ineffective_findings(spec, target, Some(f.log_bin)));
        }
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

/// A managed target is sized by us; what can be checked before starting it is its binary.
fn managed_finding(target: &str, m: &crate::pipeline::spec::target::ManagedTarget) -> Finding {
    let (severity, message) =
        match crate::pipeline::server::managed::find_server(m.basedir.as_deref()) {
            Ok(bin) => (
                Severity::Info,
                format!(
                "managed server {} (started for each config, max_connections sized to the sweep)",
                bin.display()
            ),
            ),
            Err(e) => (Severity::Blocking, format!("{e:#}")),
        };
    Finding {
        target: target.to_string(),
        severity,
        check: "server",
        message,
        max_threads: None,
    }
}

/// Config variables that will do nothing on a target: an external server's binary log is as
/// it is (`log_bin`, read by the preflight); a managed one's my.cnf template decides.
fn ineffective_findings(spec: &SweepSpec, target: &str, log_bin: Option<bool>) -> Vec<Finding> {
    spec.configs
        .iter()
        .flat_map(|c| {
            let on = log_bin.unwrap_or_else(|| {
                c.mycnf
                    .as_deref()
                    .and_then(|p| std::fs::read_to_string(p).ok())
                    .is_some_and(|t| t.contains("log_bin") || t.contains("log-bin"))
            });
            preflight::ineffective_vars(&c.vars, on)
                .into_iter()
                .map(|m| Finding {
                    target: target.to_string(),
                    severity: Severity::Warning,
                    check: "vars",
                    message: format!("config {}: {m}", c.name),
                    max_threads: None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
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
