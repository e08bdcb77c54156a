//! One target × config while its points run: its live server behind the `Server` trait
//! (each kind in servers/), the connection the points use, a proxy in front where asked, the
//! counters' reader — and what the run keeps across blocks (`RunState`).

use crate::pipeline::events::Events;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;
use anyhow::Context;
use futures::future::BoxFuture;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// State that outlives one block: prepared data per target.
pub struct RunState {
    /// Datadirs of managed servers live here and nowhere else; removed at the end.
    pub work: tempfile::TempDir,
    /// Marks `work` as in use; a killed run's is reaped by the next (`server::workdir`).
    _owner: crate::pipeline::server::workdir::Owner,
    /// Prepared datadir per managed target, copied for each of its configs.
    pub(super) golden: BTreeMap<String, PathBuf>,
    /// External targets whose data this run already checked or prepared.
    pub(super) prepared: BTreeSet<String>,
    /// results/<sweep>/<run>/servers/
    pub(super) servers_dir: PathBuf,
    /// results/<sweep>/, where external targets' original settings are journaled.
    pub(super) sweep_dir: PathBuf,
    /// Synthetic targets' virtual time, milliseconds since the run started: one clock for
    /// every synthetic block, so a model's drift moves as a machine's would between them.
    pub clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Which run of its sweep this is (1 for the first; its run directories counted): a
    /// synthetic model that varies by run draws from it, so night k draws the same in every
    /// results directory.
    pub run_seq: u64,
    /// What this run removed that a killed run had left in TMPDIR, for its summary.
    pub reaped: Vec<String>,
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
        // What a killed run left is said even under --quiet, and again in the summary.
        let reaped = crate::pipeline::server::workdir::reap_temp();
        for line in &reaped {
            ev.warn(line);
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
            reaped,
        })
    }
}

/// A block's live server, whatever its kind (servers/: external, managed, synthetic). What
/// the sweep asks of a server is here; how each kind answers is in its own file.
pub trait Server: Send + Sync {
    /// The server process's id, where sweepbench runs it (its CPU and /proc counters).
    fn pid(&self) -> Option<u32> {
        None
    }

    /// Every process it runs as (a cluster's nodes), for their /proc counters.
    fn pids(&self) -> Vec<u32> {
        self.pid().into_iter().collect()
    }

    /// CPU seconds its process has used so far, where this machine can read them.
    fn cpu_seconds(&self) -> Option<f64> {
        None
    }

    /// False once a process sweepbench runs has exited; a server it did not start is
    /// taken to run.
    fn running(&mut self) -> bool {
        true
    }

    /// Whether `ready` has something to check before each point.
    fn checks_ready(&self) -> bool {
        false
    }

    /// Waits (blocking) until it can take a point: a cluster's nodes all Synced. An error
    /// says what is not ready, and the point fails with it.
    fn ready(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// The end of its error log, said with a point that failed because it died.
    fn log_tail(&self) -> String {
        String::new()
    }

    /// Starts it again on its own data (a cold server before each point, or one that died),
    /// handing itself back with how that went.
    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)>;

    /// Ends the block: variables put back, or the process stopped.
    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>>;

    /// The kind itself, for what only one kind does (a model computes its measurements).
    fn as_any(&self) -> &dyn std::any::Any;
}

pub struct Block {
    pub key: String,
    pub conn: Option<ConnInfo>,
    pub live: Option<Box<dyn Server>>,
    /// Why this block's points cannot run.
    pub error: Option<String>,
    pub version: String,
    pub restart_per_point: bool,
    /// A proxy target's proxy, in front of the block's server; `conn` goes through it.
    pub proxy: Option<crate::pipeline::server::proxy::Proxy>,
    /// Reads the server's status counters around each measured window (`cost`).
    pub costs: super::cost::Reader,
}

impl Block {
    /// Keeps a measured window's counters in status.csv (`cost::Reader::keep`), read now
    /// unless the window failed or has no reading before it.
    async fn keep_costs(
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

    /// A block whose points cannot run, for `error`.
    pub(super) fn failed(key: String, error: String) -> Block {
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

    /// The counters' reader reads the server itself (never through a proxy), with `perf`
    /// beside it where the sweep asks and the server's process is here.
    pub(super) fn watch_costs(&mut self, spec: &SweepSpec, st: &RunState) {
        self.costs.conn = self.conn.clone();
        if spec.run.profile == crate::pipeline::spec::words::Profile::Perf
            && self.server_pid().is_some()
        {
            let dir = st
                .servers_dir
                .parent()
                .map(|r| r.join(crate::pipeline::results::profile::DIR));
            self.costs.profiler = dir.map(super::profile::Profiler::new);
        }
    }

    /// The live server as its own kind, when it is `T`.
    pub fn live_as<T: 'static>(&self) -> Option<&T> {
        self.live.as_ref()?.as_any().downcast_ref::<T>()
    }

    /// Stops the proxy, then closes the server (variables put back, or the process stopped).
    pub async fn close(mut self) -> anyhow::Result<()> {
        drop(self.proxy.take());
        match self.live.take() {
            Some(s) => s.close().await,
            None => Ok(()),
        }
    }

    /// The server's process id, where sweepbench runs it.
    pub fn server_pid(&self) -> Option<u32> {
        self.live.as_ref()?.pid()
    }

    /// Every process of the server under test (a cluster's nodes), where sweepbench runs it.
    pub fn server_pids(&self) -> Vec<u32> {
        self.live.as_ref().map(|s| s.pids()).unwrap_or_default()
    }

    /// The counters at the start of a window of point `p` (`cost::Reader::begin`): its
    /// profile starts too where the sweep asks for one.
    pub async fn window_start(
        &mut self,
        p: &crate::pipeline::plan::Point,
    ) -> Option<crate::pipeline::results::cost::Sample> {
        let pids = self.server_pids();
        self.costs.begin(&pids, p).await
    }

    /// The server's counters now (status, and /proc for a managed server); None where
    /// neither can be read (a synthetic target, a server that refused the statement).
    pub async fn cost_sample(&mut self) -> Option<crate::pipeline::results::cost::Sample> {
        let pids = self.server_pids();
        self.costs.sample(&pids).await
    }

    pub fn server_cpu_seconds(&self) -> Option<f64> {
        self.live.as_ref()?.cpu_seconds()
    }

    /// CPU seconds the block's managed proxy has used so far, where it has one.
    pub fn proxy_cpu_seconds(&self) -> Option<f64> {
        self.proxy.as_ref()?.cpu_seconds()
    }

    /// Ends a measured window, whatever the design: its counters kept (status.csv), and
    /// after a window that failed, a server or proxy that died started again for the next,
    /// what that took said in the record's error.
    pub async fn end_window(
        &mut self,
        run: &std::path::Path,
        before: Option<crate::pipeline::results::cost::Sample>,
        rec: &mut crate::pipeline::results::PointRecord,
        ev: &dyn Events,
    ) {
        self.keep_costs(run, before, rec, ev).await;
        if rec.status == crate::pipeline::results::PointStatus::Failed {
            if let Some(note) = self.revive(&rec.error).await {
                rec.error = format!("{} | {note}", rec.error);
            }
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
        // Only a process sweepbench runs can be watched going.
        if lost && self.server_pid().is_some() {
            for _ in 0..60 {
                if !self.live.as_mut().is_some_and(|s| s.running()) {
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
                let name = p.name();
                let (p2, r) = tokio::task::spawn_blocking(move || {
                    let r = p.restart();
                    (p, r)
                })
                .await
                .ok()?;
                p = p2;
                proxy_note = Some(match r {
                    Ok(()) => format!(
                        "{name} exited ({st}) and was restarted; its log ended with: {tail}"
                    ),
                    Err(e) => {
                        self.error = Some(format!(
                            "{name} exited ({st}) and could not be restarted: {e:#}"
                        ));
                        format!("{name} exited ({st}) and could not be restarted ({e:#}); its log ended with: {tail}")
                    }
                });
            }
            self.proxy = Some(p);
        }
        if self.live.as_mut().is_none_or(|s| s.running()) {
            return proxy_note;
        }
        let s = self.live.take()?;
        let tail = s.log_tail();
        let (s, r) = s.restart().await;
        self.live = Some(s);
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
        if self.restart_per_point {
            if let Some(s) = self.live.take() {
                let (s, r) = s.restart().await;
                self.live = Some(s);
                r.context("restarting the server")?;
            }
        }
        if let Some(mut s) = self.live.take_if(|s| s.checks_ready()) {
            let (s, r) = tokio::task::spawn_blocking(move || {
                let r = s.ready();
                (s, r)
            })
            .await?;
            self.live = Some(s);
            r?;
        }
        Ok(())
    }
}
