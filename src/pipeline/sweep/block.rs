//! One target × config while its points run: an external server with the config's variables
//! applied, or a managed server started for it (from the target's prepared "golden" datadir,
//! so every config starts from the same data) — and everything recorded about it.

use super::vars;
use super::MARGIN;
use crate::pipeline::events::Events;
use crate::pipeline::plan::Plan;
use crate::pipeline::server::mycnf::{self, MycnfContext};
use crate::pipeline::server::{managed, ManagedServer, ServerSpec};
use crate::pipeline::spec::target::{ConnInfo, ManagedTarget, TargetKind};
use crate::pipeline::spec::{parse_duration, Config, SweepSpec};
use anyhow::Context;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Server variables that live in the datadir's format: a config that sets one cannot start
/// from another config's datadir and gets a fresh one.
const DATADIR_VARS: &[&str] = &[
    "innodb_page_size",
    "innodb_data_file_path",
    "innodb_undo_tablespaces",
    "lower_case_table_names",
    "innodb_checksum_algorithm",
];

/// State that outlives one block: prepared data per target.
pub struct RunState {
    /// Datadirs of managed servers live here and nowhere else; removed at the end.
    pub work: tempfile::TempDir,
    /// Marks `work` as in use; a killed run's is reaped by the next (`server::workdir`).
    _owner: crate::pipeline::server::workdir::Owner,
    /// Prepared datadir per managed target, copied for each of its configs.
    golden: BTreeMap<String, PathBuf>,
    /// External targets whose data this run already checked or prepared.
    prepared: BTreeSet<String>,
    /// results/<sweep>/<run>/servers/
    servers_dir: PathBuf,
    /// results/<sweep>/, where external targets' original settings are journaled.
    sweep_dir: PathBuf,
    /// Synthetic targets' virtual time, milliseconds since the run started: one clock for
    /// every synthetic block, so a model's drift moves as a machine's would between them.
    pub clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Which run of its sweep this is (1 for the first; its run directories counted): a
    /// synthetic model that varies by run draws from it, so night k draws the same in every
    /// results directory.
    pub run_seq: u64,
}

/// The run directories of a sweep (`latest` is a link, the rest are runs).
fn runs_of(sweep_dir: &Path) -> u64 {
    std::fs::read_dir(sweep_dir).map_or(1, |entries| {
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .count() as u64
    })
}

impl RunState {
    pub fn new(run_dir: &Path, ev: &dyn Events) -> anyhow::Result<RunState> {
        for line in crate::pipeline::server::workdir::reap_temp() {
            ev.note(&line);
        }
        let work = tempfile::Builder::new()
            .prefix("sweepbench-run-")
            .tempdir()
            .context("creating the run's work directory")?;
        let owner = crate::pipeline::server::workdir::mark(work.path())
            .context("marking the run's work directory as in use")?;
        Ok(RunState {
            work,
            _owner: owner,
            golden: BTreeMap::new(),
            prepared: BTreeSet::new(),
            servers_dir: run_dir.join("servers"),
            sweep_dir: run_dir.parent().unwrap_or(run_dir).to_path_buf(),
            clock: Default::default(),
            run_seq: run_dir.parent().map_or(1, runs_of),
        })
    }
}

pub enum Live {
    External(vars::Applied),
    Managed(Box<ManagedServer>),
    /// No server: the model computes each measurement, on the run's virtual clock.
    Synthetic(Box<Synthetic>),
}

pub struct Synthetic {
    pub model: crate::pipeline::server::synthetic::Model,
    pub config: String,
    pub clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub run_seq: u64,
}

impl Synthetic {
    /// Measures `o` for the point (target, config, repeat) at the clock's time, and moves the
    /// clock on by what a real run would have taken (warmup and time). With `real_time` it
    /// also takes that time, and an interrupt ends it with the seconds measured so far.
    pub async fn measure(
        &self,
        target: &str,
        repeat: u32,
        o: &crate::engine::config::EngineConfig,
    ) -> crate::engine::exec::RunReport {
        use std::sync::atomic::Ordering::Relaxed;
        let took_ms = (o.warmup_s + o.time_s.max(1)) * 1000;
        let at_ms = self.clock.fetch_add(took_ms, Relaxed);
        let measure = |o: &crate::engine::config::EngineConfig| {
            self.model
                .measure(&crate::pipeline::server::synthetic::Measure {
                    run: self.run_seq,
                    target,
                    config: &self.config,
                    repeat,
                    at_s: at_ms as f64 / 1000.0,
                    o,
                })
        };
        if !self.model.real_time {
            return measure(o);
        }
        let started = std::time::Instant::now();
        let whole = std::time::Duration::from_millis(took_ms);
        while started.elapsed() < whole && !crate::interrupt::requested() {
            let left = whole.saturating_sub(started.elapsed());
            tokio::time::sleep(left.min(std::time::Duration::from_millis(50))).await;
        }
        if !crate::interrupt::requested() {
            return measure(o);
        }
        // Cut short: the whole seconds measured after the warmup, or nothing.
        let measured = started.elapsed().as_secs().saturating_sub(o.warmup_s);
        let mut cut = o.clone();
        cut.time_s = measured.max(1);
        let mut r = measure(&cut);
        if measured == 0 {
            r.totals = Default::default();
            r.per_thread
                .iter_mut()
                .for_each(|c| *c = Default::default());
            r.hist.reset();
            r.intervals.clear();
            r.interval_hists.clear();
            r.min_max_ns = None;
            r.window_s = 0.0;
        }
        r.elapsed_s = started.elapsed().as_secs_f64().min(r.elapsed_s);
        r.interrupted = true;
        r
    }
}

pub struct Block {
    pub key: String,
    pub conn: Option<ConnInfo>,
    pub live: Option<Live>,
    /// Why this block's points cannot run.
    pub error: Option<String>,
    pub version: String,
    pub restart_per_point: bool,
    /// A proxy target's proxy, in front of the block's server; `conn` goes through it.
    pub proxy: Option<crate::pipeline::server::proxy::Haproxy>,
    /// Reads the server's status counters around each measured window (`cost`).
    pub costs: super::cost::Reader,
}

impl Block {
    /// Keeps a measured window's counters in status.csv (`cost::Reader::keep`), read now
    /// unless the window failed or has no reading before it.
    pub async fn keep_costs(
        &mut self,
        run: &std::path::Path,
        before: Option<crate::pipeline::results::cost::Sample>,
        rec: &crate::pipeline::results::PointRecord,
        ev: &dyn Events,
    ) {
        let failed = rec.status == crate::pipeline::results::PointStatus::Failed;
        let after = match (&before, failed) {
            (Some(_), false) => self.cost_sample().await,
            _ => None,
        };
        self.costs.keep(run, before, after, rec, ev).await;
    }

    fn failed(key: String, error: String) -> Block {
        Block {
            key,
            conn: None,
            live: None,
            error: Some(error),
            version: String::new(),
            restart_per_point: false,
            proxy: None,
            costs: Default::default(),
        }
    }

    pub async fn open(
        spec: &SweepSpec,
        plan: &Plan,
        target: &str,
        config: &Config,
        st: &mut RunState,
        ev: &dyn Events,
    ) -> Block {
        let key = format!("{target}/{}", config.name);
        let def = spec.targets.iter().find(|t| t.name == target);
        let kind = def.map(|t| t.kind.clone());
        let proxied = def.is_some_and(|t| t.proxy.is_some());
        let mut b = match kind {
            Some(TargetKind::External(c)) => {
                open_external(spec, key, target, c, config, st, ev).await
            }
            Some(TargetKind::Synthetic(m)) => match open_synthetic(key.clone(), *m, config, st) {
                Ok(b) => b,
                Err(e) => Block::failed(key, format!("{e:#}")),
            },
            Some(TargetKind::Managed(m)) => {
                let max_threads = plan.connections.get(target).copied().unwrap_or(1);
                match open_managed(spec, target, &m, config, max_threads, st, ev).await {
                    Ok(b) => b,
                    Err(e) => Block::failed(key, format!("{e:#}")),
                }
            }
            None => Block::failed(key, format!("target '{target}' is not defined")),
        };
        // The counters are read from the server itself, never through a proxy.
        b.costs.conn = b.conn.clone();
        if spec.run.profile == crate::pipeline::spec::profile::Profile::Perf
            && b.server_pid().is_some()
        {
            let dir = st
                .servers_dir
                .parent()
                .map(|r| r.join(crate::pipeline::results::profile::DIR));
            b.costs.profiler = dir.map(super::profile::Profiler::new);
        }
        if proxied && b.error.is_none() {
            let max_threads = plan.connections.get(target).copied().unwrap_or(1);
            if let Err(e) = b.start_proxy(st, max_threads).await {
                b.error = Some(format!("starting the proxy: {e:#}"));
            }
        }
        b
    }

    /// Starts HAProxy in front of the block's server (its data already prepared, its
    /// variables set) and points the block's connection at it.
    async fn start_proxy(&mut self, st: &RunState, connections: u32) -> anyhow::Result<()> {
        use crate::pipeline::server::proxy::Haproxy;
        let c = self.conn.clone().context("no connection")?;
        // Where the block's own connections would go (a socket, or host and port).
        let backend = crate::engine::db::endpoint(&c.conn_options(), 0);
        let dir = st
            .work
            .path()
            .join(format!("proxy-{}", self.key.replace('/', "__")));
        let p = tokio::task::spawn_blocking(move || Haproxy::start(&dir, &backend, connections))
            .await??;
        let mut through = c;
        through.host = "127.0.0.1".into();
        through.port = p.port;
        through.port_given = true;
        through.socket = None;
        self.conn = Some(through);
        self.proxy = Some(p);
        Ok(())
    }

    /// Stops the proxy, then puts external variables back or stops the managed server.
    pub async fn close(mut self) -> anyhow::Result<()> {
        drop(self.proxy.take());
        match self.live {
            Some(Live::External(a)) => a.restore().await,
            Some(Live::Managed(s)) => {
                tokio::task::spawn_blocking(move || drop(s)).await?;
                Ok(())
            }
            Some(Live::Synthetic(_)) | None => Ok(()),
        }
    }

    /// The managed server's process id (None for an external target).
    pub fn server_pid(&self) -> Option<u32> {
        match &self.live {
            Some(Live::Managed(s)) => s.pid(),
            _ => None,
        }
    }

    /// The counters at the start of the window of `point_id` (`cost::Reader::begin`): its
    /// profile starts too where the sweep asks for one.
    pub async fn window_start(
        &mut self,
        point_id: &str,
    ) -> Option<crate::pipeline::results::cost::Sample> {
        let pid = self.server_pid();
        self.costs.begin(pid, point_id).await
    }

    /// The server's counters now (status, and /proc for a managed server); None where
    /// neither can be read (a synthetic target, a server that refused the statement).
    pub async fn cost_sample(&mut self) -> Option<crate::pipeline::results::cost::Sample> {
        let pid = self.server_pid();
        self.costs.sample(pid).await
    }

    pub fn server_cpu_seconds(&self) -> Option<f64> {
        match &self.live {
            Some(Live::Managed(s)) => s.cpu_seconds(),
            _ => None,
        }
    }

    /// After a point that failed with `error`: a managed server that died is started again
    /// on its datadir (InnoDB recovers it) so the sweep can go on. Returns what its error log
    /// said. A killed server closes its connections before the kernel reports it ended, so
    /// when the point lost its connections the process is given a moment to be seen gone.
    pub async fn revive(&mut self, error: &str) -> Option<String> {
        let lost = ["error 2013", "error 2006", "Lost connection", "gone away"]
            .iter()
            .any(|k| error.contains(k));
        if lost {
            for _ in 0..60 {
                let running = match &mut self.live {
                    Some(Live::Managed(s)) => s.is_running(),
                    _ => false,
                };
                if !running {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        // A dead proxy is started again as a dead server is, for the next point.
        let mut proxy_note = None;
        if let Some(mut p) = self.proxy.take() {
            if let Some(st) = p.exited() {
                let tail = p.log_tail();
                let (p2, r) = tokio::task::spawn_blocking(move || {
                    let r = p.restart();
                    (p, r)
                })
                .await
                .ok()?;
                p = p2;
                proxy_note = Some(match r {
                    Ok(()) => format!(
                        "haproxy exited ({st}) and was restarted; its log ended with: {tail}"
                    ),
                    Err(e) => {
                        self.error = Some(format!(
                            "haproxy exited ({st}) and could not be restarted: {e:#}"
                        ));
                        format!("haproxy exited ({st}) and could not be restarted ({e:#}); its log ended with: {tail}")
                    }
                });
            }
            self.proxy = Some(p);
        }
        let dead = match &mut self.live {
            Some(Live::Managed(s)) => !s.is_running(),
            _ => false,
        };
        if !dead {
            return proxy_note;
        }
        let Some(Live::Managed(mut s)) = self.live.take() else {
            return None;
        };
        let tail = managed::log_tail(&s.error_log(), 8);
        let (s, r) = tokio::task::spawn_blocking(move || {
            let r = s.restart();
            (s, r)
        })
        .await
        .ok()?;
        self.live = Some(Live::Managed(s));
        let server_note = match r {
            Ok(()) => {
                format!("the server died and was restarted; its error log ended with: {tail}")
            }
            Err(e) => {
                self.error = Some(format!("the server died and could not be restarted: {e:#}"));
                format!("the server died and could not be restarted ({e:#}); its error log ended with: {tail}")
            }
        };
        Some(match proxy_note {
            Some(p) => format!("{p} | {server_note}"),
            None => server_note,
        })
    }

    /// `restart = "per-point"`: a cold server before each point.
    pub async fn before_point(&mut self) -> anyhow::Result<()> {
        if !self.restart_per_point {
            return Ok(());
        }
        if let Some(Live::Managed(s)) = self.live.take() {
            let (s, r) = tokio::task::spawn_blocking(move || {
                let mut s = s;
                let r = s.restart();
                (s, r)
            })
            .await?;
            self.live = Some(Live::Managed(s));
            r?;
        }
        Ok(())
    }
}

async fn open_external(
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
        live: Some(Live::External(applied)),
        restart_per_point: false,
        proxy: None,
        costs: Default::default(),
    };
    if b.error.is_none() && st.prepared.insert(target.to_string()) {
        if let Err(e) = super::ensure_data(spec, &c, &b.key, ev).await {
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

/// A synthetic target's block: nothing to start; servers/<key>/ records the model (its
/// parameters as the variables, so the report's variables diff shows what differs between
/// two models) and the config's variables, which the model does not read.
fn open_synthetic(
    key: String,
    model: crate::pipeline::server::synthetic::Model,
    config: &Config,
    st: &RunState,
) -> anyhow::Result<Block> {
    let version = format!("synthetic (seed {})", model.seed);
    let params = serde_json::to_value(&model)?;
    let mut vars: Vec<(String, String)> = params
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (format!("synthetic.{k}"), v.to_string()))
        .collect();
    for (k, v) in &config.vars {
        vars.push((k.clone(), mycnf::cnf_value(v)));
    }
    crate::pipeline::results::write_server(&st.servers_dir, &key, &version, &vars, None)?;
    Ok(Block {
        key,
        conn: None,
        version,
        error: None,
        restart_per_point: false,
        proxy: None,
        costs: Default::default(),
        live: Some(Live::Synthetic(Box::new(Synthetic {
            model,
            config: config.name.clone(),
            clock: st.clock.clone(),
            run_seq: st.run_seq,
        }))),
    })
}

fn managed_conn(port: u16) -> ConnInfo {
    ConnInfo {
        user: "root".into(),
        password: None,
        host: "127.0.0.1".into(),
        port,
        port_given: true,
        socket: None,
        db: "sbtest".into(),
        tls: Default::default(),
    }
}

async fn start(spec: ServerSpec) -> anyhow::Result<ManagedServer> {
    tokio::task::spawn_blocking(move || {
        let s = ManagedServer::start(&spec)?;
        managed::exec_root(&s, &["CREATE DATABASE IF NOT EXISTS sbtest"])?;
        Ok(s)
    })
    .await?
}

async fn open_managed(
    spec: &SweepSpec,
    target: &str,
    m: &ManagedTarget,
    config: &Config,
    max_threads: u32,
    st: &mut RunState,
    ev: &dyn Events,
) -> anyhow::Result<Block> {
    let key = format!("{target}/{}", config.name);
    let vars: Vec<(&str, String)> = config
        .vars
        .iter()
        .map(|(k, v)| (k.as_str(), mycnf::cnf_value(v)))
        .collect();
    let cnf = mycnf::render(
        config.mycnf.as_deref(),
        &MycnfContext {
            max_connections: max_threads + MARGIN + 16,
            vars,
            target,
            config: &config.name,
            redo_log_mb: mycnf::redo_log_mb(spec.data.tables, spec.data.table_size),
        },
    )?;
    let own_datadir = config
        .vars
        .iter()
        .any(|(k, _)| DATADIR_VARS.contains(&k.as_str()));
    let server_spec = ServerSpec {
        basedir: m.basedir.clone(),
        options: m.options.clone(),
        max_connections: 0,
        workdir: Some(st.work.path().to_path_buf()),
        mycnf: Some(cnf.clone()),
        seed_datadir: if own_datadir {
            None
        } else {
            st.golden.get(target).cloned()
        },
        startup_timeout_s: m
            .startup_timeout
            .as_deref()
            .and_then(parse_duration)
            .unwrap_or(0),
    };
    let seeded = server_spec.seed_datadir.is_some();
    let mut server = start(server_spec.clone())
        .await
        .with_context(|| format!("starting the managed server for {key}"))?;
    if !seeded {
        let c = managed_conn(server.port());
        ev.note(&format!(
            "preparing data on {key} (managed, {})",
            server.version()
        ));
        super::ensure_data(spec, &c, &key, ev)
            .await
            .context("preparing data")?;
        if !own_datadir {
            // Keep this datadir as the target's golden copy: stop cleanly, copy, restart
            // from a copy so this config starts exactly like the next ones.
            let golden = st.work.path().join(format!("golden-{target}"));
            let g2 = golden.clone();
            server = tokio::task::spawn_blocking(move || -> anyhow::Result<ManagedServer> {
                let mut s = server;
                s.stop();
                managed::copy_dir(&s.datadir(), &g2)?;
                drop(s);
                ManagedServer::start(&ServerSpec {
                    seed_datadir: Some(g2.clone()),
                    ..server_spec
                })
            })
            .await??;
            st.golden.insert(target.to_string(), golden);
        }
    }
    let c = managed_conn(server.port());
    let version = server.version().to_string();
    record_server(st, &key, &c, Some(&cnf)).await?;
    Ok(Block {
        key,
        conn: Some(c),
        version,
        error: None,
        restart_per_point: m.restart_per_point(),
        proxy: None,
        costs: Default::default(),
        live: Some(Live::Managed(Box::new(server))),
    })
}

/// servers/<target>__<config>/: version, SHOW GLOBAL VARIABLES, and the rendered my.cnf.
async fn record_server(
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
    conn.close().await;
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
    Ok(())
}
