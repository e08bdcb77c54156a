//! The server's cost of each measured window: its status counters read on an administrative
//! connection of its own (never a workload connection, never through a proxy) and its
//! process's /proc counters, just before the window and just after it.

use crate::pipeline::plan::Point;
use crate::pipeline::results::cost::{self, Sample};
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::target::ConnInfo;
use std::path::Path;

/// A block's reader of its server's counters; the connection is opened at the first reading
/// and again after a reading fails (a restarted server).
#[derive(Default)]
pub struct Reader {
    /// Where the server is (None: a synthetic target, nothing to read).
    pub conn: Option<ConnInfo>,
    admin: Option<crate::engine::admin::Admin>,
    /// The server is MariaDB, whose readings' own cost `cost::rows` takes off.
    mariadb: bool,
    /// When connecting last failed: a server that is down is not tried again for a minute,
    /// so its failing points do not each wait out a login deadline.
    failed_at: Option<std::time::Instant>,
    /// `[run] profile = "perf"` on a managed server: the first window of each point is
    /// profiled between `begin` and `keep`.
    pub profiler: Option<super::profile::Profiler>,
    /// What the profiler has to say (it could not start), for `keep` to say.
    note: Option<String>,
    /// A target of several endpoints: every node by the name its counters are kept under
    /// ("<host:port>/<counter>"), the ones after the first each read on a connection of its
    /// own.
    nodes: Vec<(String, Option<crate::engine::admin::Admin>)>,
    /// The names the nodes are kept under, where they have names of their own (a managed
    /// cluster's "node1", "node2", …: its ports change with every start).
    pub node_names: Vec<String>,
}

impl Reader {
    /// The counters now: the status counters where a connection works, the processes' where
    /// `pids` are ours to read (a cluster's nodes, summed); None when neither is.
    pub async fn sample(&mut self, pids: &[u32]) -> Option<Sample> {
        let mut s = match self.status().await {
            Some(rows) => {
                let mut s = Sample::from_status(rows.iter().map(|(n, v)| (n.as_str(), v.as_str())));
                s.reading_rows = self.mariadb.then_some(rows.len() as u64);
                s
            }
            None => Sample::default(),
        };
        self.sample_nodes(&mut s).await;
        let mut proc: Vec<(&'static str, u64)> = Vec::new();
        for p in pids.iter().filter_map(|p| crate::usage::process_cost(*p)) {
            for (name, v) in p {
                match proc.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, total)) => *total += v,
                    None => proc.push((name, v)),
                }
            }
        }
        s.add_proc(&proc);
        (!s.values.is_empty()).then_some(s)
    }

    /// The counters at the start of the window of `point_id`, and its profile started if it
    /// is one to profile.
    pub async fn begin(&mut self, pids: &[u32], p: &Point) -> Option<Sample> {
        // perf reads the machine's threads and maps before it samples: on a loaded host
        // that has taken longer than a 2 s slice. The counters are read after the wait, so
        // it is in no window.
        if self.start_profile(pids.first().copied(), p) {
            self.profile_attached().await;
        }
        self.sample(pids).await
    }

    /// Waits for a profile just started to have attached (`Profiler::attached`).
    pub async fn profile_attached(&mut self) {
        if let Some(p) = self.profiler.as_mut() {
            p.attached().await;
        }
    }

    /// Starts the profile of a window of `p` if it is one to profile (a sequential
    /// point's, as its warmup starts, so perf has attached when the window does); true when
    /// one started.
    pub fn start_profile(&mut self, pid: Option<u32>, p: &Point) -> bool {
        let (Some(profiler), Some(pid)) = (self.profiler.as_mut(), pid) else {
            return false;
        };
        self.note = profiler.start(pid, p).or(self.note.take());
        profiler.recording()
    }

    /// Opens the administrative connection now if it is not open, so that a reading due at
    /// a window's start is one statement, not a login: the transactions of the milliseconds
    /// a reading takes are counted in the window but not in its deltas.
    pub async fn ready(&mut self) {
        if self.admin.is_none() {
            self.connect().await;
        }
    }

    async fn connect(&mut self) {
        if self.failed_at.is_some_and(|t| t.elapsed().as_secs() < 60) {
            return;
        }
        let Some(c) = self.conn.as_ref().map(ConnInfo::conn_options) else {
            return;
        };
        self.admin = crate::engine::admin::Admin::open_no_db(&c).await.ok();
        match self.admin.as_mut() {
            None => self.failed_at = Some(std::time::Instant::now()),
            Some(a) => {
                let v = a.value("SELECT VERSION()").await.ok().flatten();
                self.mariadb = v.is_some_and(|v| v.contains("MariaDB"));
            }
        }
    }

    /// A target of several endpoints: every node's counters kept under its name
    /// ("node2/wsrep_local_cert_failures", or "127.0.0.1:3307/…"), and the unprefixed ones
    /// made the sum over the nodes — the workload's transactions are spread over all of them,
    /// so a counter per transaction is the cluster's, not the first node's share of it.
    async fn sample_nodes(&mut self, s: &mut Sample) {
        let Some(c) = &self.conn else {
            return;
        };
        if c.more.is_empty() {
            return;
        }
        if self.nodes.is_empty() {
            let first = std::iter::once((c.host.clone(), c.port));
            self.nodes = first
                .chain(c.more.iter().cloned())
                .enumerate()
                .map(|(i, (h, p))| {
                    let name = self.node_names.get(i).cloned();
                    (name.unwrap_or_else(|| format!("{h}:{p}")), None)
                })
                .collect();
        }
        let first: Vec<(&'static str, String, u64)> = s
            .values
            .iter()
            .map(|(src, n, v)| (*src, format!("{}/{n}", self.nodes[0].0), *v))
            .collect();
        let mut prefixed = first;
        let mut node_rows: Vec<(String, u64)> = s
            .reading_rows
            .map(|r| (self.nodes[0].0.clone(), r))
            .into_iter()
            .collect();
        for (e, (name, admin)) in c.more.iter().zip(self.nodes.iter_mut().skip(1)) {
            if admin.is_none() {
                *admin = crate::engine::admin::Admin::open_no_db(&c.only(e).conn_options())
                    .await
                    .ok();
            }
            let Some(a) = admin.as_mut() else {
                continue;
            };
            match a.pairs("SHOW GLOBAL STATUS").await {
                Ok(rows) => {
                    let node = Sample::from_status(
                        rows.iter()
                            .map(|(k, v)| (k.as_str(), v.as_deref().unwrap_or_default())),
                    );
                    node_rows.push((name.clone(), rows.len() as u64));
                    for (src, n, v) in node.values {
                        match s.values.iter_mut().find(|(x, m, _)| *x == src && *m == n) {
                            Some((_, _, total)) => *total += v,
                            None => s.values.push((src, n.clone(), v)),
                        }
                        prefixed.push((src, format!("{name}/{n}"), v));
                    }
                }
                Err(_) => *admin = None,
            }
        }
        s.values.extend(prefixed);
        if s.reading_rows.is_some() {
            s.node_rows = node_rows;
        }
    }

    async fn status(&mut self) -> Option<Vec<(String, String)>> {
        for _ in 0..2 {
            if self.admin.is_none() {
                self.connect().await;
            }
            let conn = self.admin.as_mut()?;
            match conn.pairs("SHOW GLOBAL STATUS").await {
                Ok(rows) => {
                    return Some(
                        rows.into_iter()
                            .map(|(k, v)| (k, v.unwrap_or_default()))
                            .collect(),
                    )
                }
                // A server restarted since (restart = "per-point", a revived one): once more
                // on a new connection.
                Err(_) => self.admin = None,
            }
        }
        None
    }
}

impl Reader {
    /// Keeps a measured window's counters in status.csv: the deltas between `before` and
    /// `after` (None for a window that failed or has no reading before it), per transaction
    /// and query of `rec`, and says what the profiler has to say. A file that cannot be
    /// written is said as a warning, and the sweep goes on (the counters explain a point; they are
    /// not its measurement).
    pub async fn keep(
        &mut self,
        run: &Path,
        before: Option<Sample>,
        after: Option<Sample>,
        rec: &PointRecord,
        ev: &dyn crate::pipeline::events::Events,
    ) {
        // After the reading: perf's writing its data is not the window's.
        let stopped = match self.profiler.as_mut() {
            Some(p) => p.stop().await,
            None => None,
        };
        if let Some(note) = self.note.take().or(stopped) {
            ev.note(&format!("{}: {note}", rec.point_id));
        }
        let (Some(before), Some(after)) = (before, after) else {
            return;
        };
        let rows = cost::rows(
            &rec.point_id,
            &before,
            &after,
            rec.transactions,
            rec.queries,
        );
        if let Err(e) = cost::append(run, &rows) {
            ev.warn(&format!(
                "{}: status counters not written: {e:#}",
                rec.point_id
            ));
        }
    }
}
