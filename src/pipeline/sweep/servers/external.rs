//! An external target, a server sweepbench did not start: the config's variables set with
//! SET GLOBAL (journaled, put back when its block closes), its data checked or prepared once
//! per run, and its preflight read from the server itself.

use super::{ineffective_findings, record_server};
use crate::pipeline::events::Events;
use crate::pipeline::preflight::{self, Finding, Needs, OnCapacity, Severity};
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::{Config, SweepSpec};
use crate::pipeline::sweep::block::{Block, RunState, Server};
use crate::pipeline::sweep::vars;
use futures::future::BoxFuture;

impl Server for vars::Applied {
    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
        Box::pin(async move {
            let e = anyhow::anyhow!("an external server is not restarted by sweepbench");
            (self as Box<dyn Server>, Err(e))
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>> {
        Box::pin(self.restore())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What the server says it can take (connections, statements, tables, privileges, TLS),
/// under the watch as prepare is: a server that stops answering between the login and the
/// last query, or a Ctrl-C, ends the check instead of holding it.
pub(super) async fn preflight(
    spec: &SweepSpec,
    target: &str,
    c: &ConnInfo,
    n: &Needs,
    on: OnCapacity,
) -> Vec<Finding> {
    let endpoints = c.endpoints();
    let shaped = shape_findings(spec, target);
    if endpoints.len() == 1 {
        let mut out = preflight_one(spec, target, c, n, on).await;
        out.extend(shaped);
        return out;
    }
    // Several endpoints: each is checked as a server of its own for its share of the
    // connections (round-robin), every finding naming its node.
    let share = Needs {
        max_threads: n.max_threads.div_ceil(endpoints.len() as u32),
        ..n.clone()
    };
    let mut out = Vec::new();
    for e in &endpoints {
        for mut f in preflight_one(spec, target, &c.only(e), &share, on).await {
            f.message = format!("node {}:{}: {}", e.0, e.1, f.message);
            out.push(f);
        }
    }
    out.extend(shaped);
    out
}

/// A config whose variables shape data (`spec::shape`) on a server sweepbench did not start:
/// SET GLOBAL changes what tables made later get, not the sbtest tables there, so the series
/// runs on those as they are — said, with what measures that shape instead.
fn shape_findings(spec: &SweepSpec, target: &str) -> Vec<Finding> {
    spec.configs
        .iter()
        .filter_map(|c| {
            let vars = crate::pipeline::spec::shape::unreachable(c);
            (!vars.is_empty()).then(|| Finding {
                target: target.to_string(),
                severity: Severity::Warning,
                check: "data shape",
                message: format!(
                    "config {}: {} decide{} how tables are made, and SET GLOBAL does not change the sbtest tables already on this server: its series runs on them as they are. To measure tables of that shape, give the target a server started with {} (or a managed target, whose tables are made under each shape), or ALTER the tables to it before the run",
                    c.name,
                    vars.join(", "),
                    if vars.len() == 1 { "s" } else { "" },
                    if vars.len() == 1 { "it" } else { "them" }
                ),
                max_threads: None,
            })
        })
        .collect()
}

/// The preflight of one endpoint.
async fn preflight_one(
    spec: &SweepSpec,
    target: &str,
    c: &ConnInfo,
    n: &Needs,
    on: OnCapacity,
) -> Vec<Finding> {
    let o = c.conn_options();
    let checked = crate::engine::watch::watched(
        &o,
        "checking it",
        async { Ok(preflight::check_target(target, &o, c.is_local(), n, on).await) },
        || {},
    )
    .await;
    match checked {
        Ok((mut findings, facts)) => {
            if let Some(f) = facts {
                findings.extend(ineffective_findings(spec, target, Some(f.log_bin)));
            }
            findings
        }
        Err(e) => vec![Finding {
            target: target.to_string(),
            severity: Severity::Blocking,
            check: "server",
            message: format!("{e:#}"),
            max_threads: None,
        }],
    }
}

/// The block of `target` × `config`: the config's variables set (a refused one is the
/// block's error), the target's data checked or prepared once per run, the server recorded.
pub(super) async fn open(
    spec: &SweepSpec,
    key: String,
    target: &str,
    mut c: ConnInfo,
    config: &Config,
    st: &mut RunState,
    ev: &dyn Events,
) -> Block {
    c.resolve_password();
    let journal = vars::Journal::at(&st.sweep_dir);
    let applied = vars::Applied::apply(&c, &config.vars, target, journal).await;
    let mut b = Block {
        key,
        conn: Some(c.clone()),
        version: applied.version.clone(),
        error: applied.error.clone(),
        live: Some(Box::new(applied)),
        restart_per_point: false,
        proxy: None,
        costs: Default::default(),
    };
    if b.error.is_none() && st.prepared.insert(target.to_string()) {
        if let Err(e) = super::super::ensure_data(spec, &c, (target, &b.key), ev).await {
            b.error = Some(format!("preparing data: {e:#}"));
        }
    }
    if b.error.is_none() {
        if let Err(e) = record_server(st, &b.key, &c, None).await {
            b.error = Some(format!("{e:#}"));
        }
    }
    b
}
