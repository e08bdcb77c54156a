//! The kinds of target a block measures — external, managed (one server, or a Galera cluster:
//! cluster.rs), synthetic, each in its own file with how it opens, closes, restarts and is
//! checked before a run — and a proxy in front of
//! any of them. The one place a target's kind is matched: a new kind is its file, its arm
//! here and its entry in spec/target.rs.

mod cluster;
mod external;
mod managed;
mod process;
mod proxy;
pub(super) mod synthetic;

use crate::pipeline::events::Events;
use crate::pipeline::plan::Plan;
use crate::pipeline::preflight::{self, Finding, Needs, OnCapacity, Severity};
use crate::pipeline::spec::target::{ConnInfo, TargetKind};
use crate::pipeline::spec::{Config, SweepSpec};
use crate::pipeline::sweep::block::{Block, RunState};

/// Opens `target` × `config`: its server started or its variables set, its data ready,
/// recorded in servers/; then the counters' reader and, for a proxied target, the proxy.
/// A block that cannot run carries why, and its points fail with it.
pub(super) async fn open(
    spec: &SweepSpec,
    plan: &Plan,
    target: &str,
    config: &Config,
    st: &mut RunState,
    ev: &dyn Events,
) -> Block {
    let key = format!("{target}/{}", config.name);
    let def = spec.targets.iter().find(|t| t.name == target);
    let max_threads = plan.connections.get(target).copied().unwrap_or(1);
    let mut b = match def.map(|t| t.kind.clone()) {
        Some(TargetKind::External(c)) => external::open(spec, key, target, c, config, st, ev).await,
        Some(TargetKind::Synthetic(m)) => synthetic::open(key.clone(), *m, config, st)
            .unwrap_or_else(|e| Block::failed(key, format!("{e:#}"))),
        Some(TargetKind::Managed(m)) => {
            managed::open(spec, target, &m, config, max_threads, st, ev)
                .await
                .unwrap_or_else(|e| Block::failed(key, format!("{e:#}")))
        }
        None => Block::failed(key, format!("target '{target}' is not defined")),
    };
    b.watch_costs(spec, st);
    if let (Some(p), None) = (def.and_then(|t| t.proxy.as_ref()), &b.error) {
        if let Err(e) = proxy::start(&mut b, p, st, max_threads).await {
            b.error = Some(format!("starting the proxy ({}): {e:#}", p.kind));
        }
    }
    b
}

/// What `target` can take, checked before any data is touched: its findings, by its kind.
pub(super) async fn preflight(
    spec: &SweepSpec,
    target: &str,
    kind: &TargetKind,
    n: &Needs,
    on: OnCapacity,
) -> Vec<Finding> {
    let mut all = match kind {
        TargetKind::External(c) => external::preflight(spec, target, c, n, on).await,
        TargetKind::Managed(m) => managed::preflight(spec, target, m),
        TargetKind::Synthetic(m) => synthetic::preflight(target, m, n),
    };
    let def = spec.targets.iter().find(|t| t.name == target);
    if let Some(p) = def.and_then(|t| t.proxy.as_ref()) {
        all.extend(proxy::preflight(target, p, n));
    }
    all
}

/// servers/<target>__<config>/: version, SHOW GLOBAL VARIABLES, the rendered my.cnf, the
/// tables' engine and their shape as information_schema has them (tables.tsv).
pub(super) async fn record_server(
    st: &RunState,
    key: &str,
    c: &ConnInfo,
    cnf: Option<&str>,
) -> anyhow::Result<()> {
    let o = c.conn_options();
    let mut conn = crate::engine::admin::Admin::open_no_db(&o)
        .await
        .map_err(|e| anyhow::anyhow!("connecting to {}: {e}", c.redacted()))?;
    let version = conn.value("SELECT VERSION()").await?;
    let rows = conn.pairs("SHOW GLOBAL VARIABLES").await?;
    // The tables as the server made them (ANALYZE-free figures: information_schema's).
    let tables = conn
        .rows(format!(
            "SELECT table_name, engine, row_format, table_collation, avg_row_length, data_length, index_length FROM information_schema.tables WHERE table_schema = {} AND table_name LIKE 'sbtest%' ORDER BY table_name",
            crate::engine::admin::quote(&c.db)
        ))
        .await
        .unwrap_or_default();
    conn.close().await;
    let page = rows
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("innodb_page_size"))
        .and_then(|(_, v)| v.clone())
        .unwrap_or_default();
    let tables: Vec<Vec<String>> = tables
        .into_iter()
        .map(|r| {
            let mut row: Vec<String> = r.into_iter().map(Option::unwrap_or_default).collect();
            row.push(page.clone());
            row
        })
        .collect();
    // The engine the tables were made with: not a server variable, and what a comparison of
    // engines is about (engine.txt, read by the report's engine line and its counters).
    let mut engines: Vec<&str> = tables
        .iter()
        .filter_map(|r| r.get(1).map(String::as_str))
        .filter(|e| !e.is_empty())
        .collect();
    engines.sort_by_key(|e| e.to_ascii_lowercase());
    engines.dedup();
    let engine = engines.join(",");
    crate::pipeline::results::servers::write_tables(&st.servers_dir, key, &tables)?;
    let vars: Vec<(String, String)> = rows
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect();
    crate::pipeline::results::write_server(
        &st.servers_dir,
        key,
        &version.unwrap_or_default(),
        &vars,
        cnf,
    )?;
    if !engine.is_empty() {
        crate::pipeline::results::servers::write_engine(&st.servers_dir, key, &engine)?;
    }
    Ok(())
}

/// Config variables that will do nothing on a target: an external server's binary log is as
/// it is (`log_bin`, read by the preflight); a managed one's my.cnf template decides.
pub(super) fn ineffective_findings(
    spec: &SweepSpec,
    target: &str,
    log_bin: Option<bool>,
) -> Vec<Finding> {
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
