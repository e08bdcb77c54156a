//! A managed target that is a Galera cluster (`server = { cluster = { nodes = 3 } }`): its
//! data prepared once on a single server before any cluster forms (so the ids are 1..N, as
//! the workload reads them, not Galera's 1, 4, 7, …), every config's cluster bootstrapped
//! from that datadir and joined by state transfer; the block's connections spread over the
//! nodes, each node's counters kept under its name.

use super::process::{close_in_thread, managed_conn, restart_in_thread, start};
use super::record_server;
use crate::pipeline::events::Events;
use crate::pipeline::preflight::{Finding, Severity};
use crate::pipeline::server::cluster::{self as galera, ManagedCluster};
use crate::pipeline::server::{managed, ServerSpec};
use crate::pipeline::spec::target::ManagedTarget;
use crate::pipeline::spec::SweepSpec;
use crate::pipeline::sweep::block::{Block, RunState, Server};
use anyhow::Context;
use futures::future::BoxFuture;
use std::path::PathBuf;

/// The datadir a cluster's first node starts from: kept from an earlier config of its data
/// shape, or to be made (prepared on a single server) at `path` and kept for the configs of
/// that shape after it.
pub(super) enum GoldenOf {
    Have(PathBuf),
    /// Prepared into `path`, then kept in the run's golden copies as `keep_as`.
    Make {
        path: PathBuf,
        keep_as: String,
    },
}

impl Server for ManagedCluster {
    fn pid(&self) -> Option<u32> {
        self.nodes().first()?.pid()
    }

    fn pids(&self) -> Vec<u32> {
        self.nodes().iter().filter_map(|n| n.pid()).collect()
    }

    fn cpu_seconds(&self) -> Option<f64> {
        ManagedCluster::cpu_seconds(self)
    }

    fn running(&mut self) -> bool {
        self.is_running()
    }

    fn checks_ready(&self) -> bool {
        true
    }

    fn ready(&mut self) -> anyhow::Result<()> {
        ManagedCluster::ready(self)
    }

    fn log_tail(&self) -> String {
        ManagedCluster::log_tail(self)
    }

    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
        restart_in_thread(self, ManagedCluster::restart, "the cluster")
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>> {
        close_in_thread(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What can be checked before a cluster starts: Galera's provider, rsync (the state
/// transfer), the user its nodes run as, and whether the host holds that many servers.
pub(super) fn preflight(
    spec: &SweepSpec,
    target: &str,
    m: &ManagedTarget,
    nodes: u32,
) -> Vec<Finding> {
    let finding = |severity, message: String| Finding {
        target: target.to_string(),
        severity,
        check: "cluster",
        message,
        max_threads: None,
    };
    let mut all = Vec::new();
    match galera::provider(m.basedir.as_deref()) {
        Some(p) => all.push(finding(
            Severity::Info,
            format!(
                "a Galera cluster of {nodes} nodes on 127.0.0.1 ({}), joined by rsync state transfer",
                p.display()
            ),
        )),
        None => all.push(finding(
            Severity::Blocking,
            "a managed cluster needs Galera's provider (lib/galera/libgalera_smm.so) and there is none: apt-get install galera-4".into(),
        )),
    }
    let dirs = managed::search_dirs(None);
    for (what, names) in [
        ("rsync", &["rsync"][..]),
        ("wsrep_sst_rsync", &["wsrep_sst_rsync"][..]),
    ] {
        if managed::find_in(&dirs, names).is_none() {
            all.push(finding(
                Severity::Blocking,
                format!("a joining node's state transfer runs {what}, which is not on PATH: apt-get install rsync mariadb-server"),
            ));
        }
    }
    if let Err(e) = galera::node_user() {
        all.push(finding(Severity::Blocking, format!("{e:#}")));
    }
    all.extend(memory_finding(spec, target, m.class(), nodes));
    all
}

/// A cluster whose nodes' buffer pools (or classes' memory limits) would not fit in the
/// memory available.
fn memory_finding(
    spec: &SweepSpec,
    target: &str,
    class: Option<crate::pipeline::server::class::Class>,
    nodes: u32,
) -> Option<Finding> {
    use crate::pipeline::sweep::paired_setup::{available_mb, size_mb};
    if let Some(c) = class {
        let need = nodes as u64 * (c.memory >> 20);
        let free = available_mb()?;
        return (need > free * 8 / 10).then(|| Finding {
            target: target.to_string(),
            severity: Severity::Blocking,
            check: "cluster",
            message: format!(
                "a cluster of {nodes} nodes in class {} needs up to {need} MiB of the {free} MiB this host has available: give fewer nodes or a smaller class",
                c.shown()
            ),
            max_threads: None,
        });
    }
    let pool = spec
        .configs
        .iter()
        .filter_map(|c| {
            let v = c
                .vars
                .iter()
                .find(|(k, _)| k == "innodb_buffer_pool_size")?;
            size_mb(&v.1)
        })
        .max()
        .unwrap_or(galera::DEFAULT_POOL_MB);
    let need = nodes as u64 * (pool + galera::NODE_OVERHEAD_MB);
    let free = available_mb()?;
    (need > free * 8 / 10).then(|| Finding {
        target: target.to_string(),
        severity: Severity::Blocking,
        check: "cluster",
        message: format!(
            "a cluster of {nodes} nodes needs about {need} MiB ({nodes} × a {pool} MiB buffer pool and {} MiB more each) of the {free} MiB this host has available: give fewer nodes or a smaller innodb_buffer_pool_size",
            galera::NODE_OVERHEAD_MB
        ),
        max_threads: None,
    })
}

/// The block of `target` × a config on a cluster of `nodes` nodes.
#[allow(clippy::too_many_arguments)]
pub(super) async fn open(
    spec: &SweepSpec,
    (target, key): (&str, String),
    nodes: u32,
    server_spec: ServerSpec,
    golden: GoldenOf,
    cnf: &str,
    st: &mut RunState,
    ev: &dyn Events,
) -> anyhow::Result<Block> {
    let seed = match golden {
        GoldenOf::Have(g) => g,
        GoldenOf::Make { path, keep_as } => {
            let made = prepare_golden(spec, (target, &key), server_spec.clone(), path, ev).await?;
            st.golden.insert(keep_as, made.clone());
            made
        }
    };
    ev.note(&format!(
        "starting a Galera cluster of {nodes} nodes for {key}"
    ));
    let server_spec_class = server_spec.class;
    let base = ServerSpec {
        seed_datadir: Some(seed),
        ..server_spec
    };
    let cluster = tokio::task::spawn_blocking(move || ManagedCluster::start(&base, nodes))
        .await?
        .with_context(|| format!("starting the cluster for {key}"))?;
    let ports: Vec<u16> = cluster.nodes().iter().map(|n| n.port()).collect();
    let mut c = managed_conn(ports[0]);
    c.more = ports[1..]
        .iter()
        .map(|p| ("127.0.0.1".to_string(), *p))
        .collect();
    let version = cluster.nodes()[0].version().to_string();
    record_server(st, &key, &c, Some(cnf)).await?;
    if let Some(class) = server_spec_class {
        let each = format!("{} each node", class.shown());
        crate::pipeline::results::servers::write_class(&st.servers_dir, &key, &each)?;
    }
    let restart_per_point = spec
        .targets
        .iter()
        .find(|t| t.name == target)
        .is_some_and(|t| matches!(&t.kind, crate::pipeline::spec::target::TargetKind::Managed(m) if m.restart_per_point()));
    let mut b = Block {
        key,
        conn: Some(c),
        version,
        error: None,
        restart_per_point,
        proxy: None,
        costs: Default::default(),
        live: Some(Box::new(cluster)),
    };
    b.costs.node_names = (1..=nodes).map(|i| format!("node{i}")).collect();
    Ok(b)
}

/// The cluster's data, prepared on a single server of the same spec (no Galera yet: its
/// auto_increment_increment is 1), stopped cleanly and copied to `golden`.
async fn prepare_golden(
    spec: &SweepSpec,
    (target, key): (&str, &str),
    server_spec: ServerSpec,
    golden: PathBuf,
    ev: &dyn Events,
) -> anyhow::Result<PathBuf> {
    let server = start(server_spec)
        .await
        .with_context(|| format!("starting a single server to prepare {key}'s data"))?;
    ev.note(&format!(
        "preparing data for {key} on a single server ({}) before the cluster forms: ids 1..table_size, as the workload reads them",
        server.version()
    ));
    let c = managed_conn(server.port());
    crate::pipeline::sweep::ensure_data(spec, &c, (target, key), ev)
        .await
        .context("preparing data")?;
    tokio::task::spawn_blocking(move || -> anyhow::Result<PathBuf> {
        let mut s = server;
        s.stop();
        managed::copy_dir(&s.datadir(), &golden)?;
        Ok(golden)
    })
    .await?
}
