//! A managed Galera cluster: N throwaway MariaDB nodes on 127.0.0.1, each with its own free
//! client, group (gcomm), IST and SST ports; the first bootstrapped from the given datadir,
//! the others joined by a state transfer from it, one at a time, and the whole cluster
//! Synced before it is handed over. Stopped (last node first) when dropped.

use super::managed::{self, ManagedServer, ServerSpec};
use anyhow::{bail, Context};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where Galera's provider library is looked for: under a basedir first (an unpacked
/// version), then Debian's place (galera-4, installed with mariadb-server).
const PROVIDER: &str = "lib/galera/libgalera_smm.so";

/// The largest cluster this machine's loopback is asked to hold: more nodes than that
/// measure the host's scheduler, not the cluster.
pub const MAX_NODES: u32 = 9;

/// A node's buffer pool where no config sets one (templates/mycnf/default.cnf.tera's).
pub const DEFAULT_POOL_MB: u64 = 512;

/// What a node takes besides its buffer pool: its gcache (64 MiB), threads and caches.
pub const NODE_OVERHEAD_MB: u64 = 300;

/// The system user a node runs as when this process is root (see `ServerSpec::user`).
pub const NODE_USER: &str = "mysql";

/// The Galera provider for servers under `basedir`, if there is one.
pub fn provider(basedir: Option<&Path>) -> Option<PathBuf> {
    let mut places = Vec::new();
    if let Some(b) = basedir {
        places.push(b.join("usr").join(PROVIDER));
        places.push(b.join(PROVIDER));
    }
    places.push(Path::new("/usr").join(PROVIDER));
    places.into_iter().find(|p| p.is_file())
}

/// The user nodes run as: `NODE_USER` when this process is root, else this process's own.
pub fn node_user() -> anyhow::Result<Option<String>> {
    if !managed::is_root() {
        return Ok(None);
    }
    if managed::user_ids(NODE_USER).is_none() {
        bail!(
            "a Galera node started by root must run as an unprivileged user (its rsync state transfer drops to one) and there is no user '{NODE_USER}': install mariadb-server, which creates it, or run sweepbench as another user"
        );
    }
    Ok(Some(NODE_USER.to_string()))
}

/// `n` distinct free ports on 127.0.0.1, all held until every one is chosen.
fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").context("finding a free port on 127.0.0.1"))
        .collect::<anyhow::Result<_>>()?;
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

/// One node's group ports.
#[derive(Debug, Clone, Copy)]
struct Ports {
    gcomm: u16,
    ist: u16,
    sst: u16,
}

/// The options that make a server node `i` (0-based) of the cluster.
fn node_options(provider: &Path, name: &str, i: usize, all: &[Ports]) -> Vec<String> {
    let me = all[i];
    let members: Vec<String> = all
        .iter()
        .map(|p| format!("127.0.0.1:{}", p.gcomm))
        .collect();
    let mut o = vec![
        "--wsrep-on=ON".to_string(),
        format!("--wsrep-provider={}", provider.display()),
        format!("--wsrep-cluster-name={name}"),
        format!("--wsrep-cluster-address=gcomm://{}", members.join(",")),
        format!("--wsrep-node-name=node{}", i + 1),
        format!("--wsrep-node-address=127.0.0.1:{}", me.gcomm),
        format!(
            "--wsrep-provider-options=base_port={g};gmcast.listen_addr=tcp://127.0.0.1:{g};ist.recv_addr=127.0.0.1:{i};gcache.size=64M",
            g = me.gcomm,
            i = me.ist
        ),
        format!("--wsrep-sst-receive-address=127.0.0.1:{}", me.sst),
        "--wsrep-sst-method=rsync".to_string(),
        "--binlog-format=ROW".to_string(),
        "--innodb-autoinc-lock-mode=2".to_string(),
    ];
    if i == 0 {
        o.push("--wsrep-new-cluster".to_string());
    }
    o
}

/// A running cluster. Node 1 (index 0) is the one bootstrapped.
#[derive(Debug)]
pub struct ManagedCluster {
    nodes: Vec<ManagedServer>,
    timeout: Duration,
    /// The first node `is_running` found exited, whose log `log_tail` says.
    down: Option<usize>,
}

impl ManagedCluster {
    /// Starts `n` nodes of the servers `base` describes: node 1 on `base`'s datadir (its
    /// seed, or a new one) bootstrapping the cluster, the others joining it one at a time by
    /// rsync state transfer, each Synced before the next starts.
    pub fn start(base: &ServerSpec, n: u32) -> anyhow::Result<ManagedCluster> {
        if !(2..=MAX_NODES).contains(&n) {
            bail!("a cluster of {n} nodes: give 2 to {MAX_NODES}");
        }
        let provider = provider(base.basedir.as_deref()).context(
            "no Galera provider (lib/galera/libgalera_smm.so): apt-get install galera-4",
        )?;
        let user = node_user()?;
        let ports = free_ports(3 * n as usize)?;
        let all: Vec<Ports> = ports
            .chunks(3)
            .map(|c| Ports {
                gcomm: c[0],
                ist: c[1],
                sst: c[2],
            })
            .collect();
        let name = format!("sweepbench-{}", std::process::id());
        let timeout = Duration::from_secs(if base.startup_timeout_s == 0 {
            120
        } else {
            base.startup_timeout_s
        });
        let mut c = ManagedCluster {
            nodes: Vec::new(),
            timeout,
            down: None,
        };
        for i in 0..n as usize {
            let mut spec = base.clone();
            spec.options.extend(node_options(&provider, &name, i, &all));
            spec.user = user.clone();
            spec.startup_timeout_s = timeout.as_secs();
            if i > 0 {
                spec.joiner = true;
                spec.seed_datadir = None;
            }
            let node = ManagedServer::start(&spec)
                .with_context(|| format!("starting node {} of {n}", i + 1))?;
            c.nodes.push(node);
            c.wait_synced(i + 1)?;
        }
        Ok(c)
    }

    pub fn nodes(&self) -> &[ManagedServer] {
        &self.nodes
    }

    /// Every node Synced, ready and Primary in a cluster of all of them, waited for as at
    /// the start (a node that fell behind during the last point catches up first).
    pub fn ready(&mut self) -> anyhow::Result<()> {
        self.wait_synced(self.nodes.len())
    }

    /// Waits until the first `upto` nodes are each Synced, ready and see `upto` members;
    /// names the node that is not, with what it says and its log.
    fn wait_synced(&mut self, upto: usize) -> anyhow::Result<()> {
        let until = Instant::now() + self.timeout;
        loop {
            let mut behind = None;
            for (i, node) in self.nodes.iter_mut().take(upto).enumerate() {
                if !node.is_running() {
                    bail!(
                        "node {} (127.0.0.1:{}) exited; its error log ends with:\n{}",
                        i + 1,
                        node.port(),
                        managed::log_tail(&node.error_log(), 12)
                    );
                }
                let s = wsrep_state(&node.socket());
                if !s.as_ref().is_ok_and(|s| s.synced(upto)) {
                    behind = Some((i, s));
                    break;
                }
            }
            let Some((i, s)) = behind else {
                return Ok(());
            };
            if Instant::now() > until {
                let node = &self.nodes[i];
                let said = match s {
                    Ok(s) => s.to_string(),
                    Err(e) => format!("cannot be asked ({e:#})"),
                };
                bail!(
                    "node {} (127.0.0.1:{}) is not Synced after {} s: {said}; its error log ends with:\n{}",
                    i + 1,
                    node.port(),
                    self.timeout.as_secs(),
                    managed::log_tail(&node.error_log(), 12)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops every node (the last first, so node 1 is the one safe to bootstrap from), then
    /// starts node 1 on its data and the others as new joiners, Synced as at the start.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.stop();
        for i in 0..self.nodes.len() {
            self.nodes[i]
                .restart()
                .with_context(|| format!("restarting node {}", i + 1))?;
            self.wait_synced(i + 1)?;
        }
        Ok(())
    }

    /// Stops every node, the last first, keeping their directories.
    pub fn stop(&mut self) {
        for node in self.nodes.iter_mut().rev() {
            node.stop();
        }
    }

    /// CPU seconds all nodes have used: the cluster is the server under test.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.nodes.iter().map(|n| n.cpu_seconds()).sum()
    }

    /// False once any node has exited (the first such is remembered for `log_tail`).
    pub fn is_running(&mut self) -> bool {
        self.down = self.nodes.iter_mut().position(|n| !n.is_running());
        self.down.is_none()
    }

    /// The error log of the node `is_running` last found exited (else node 1's), as
    /// `node N: …`.
    pub fn log_tail(&self) -> String {
        let i = self.down.unwrap_or(0);
        format!(
            "node {}: {}",
            i + 1,
            managed::log_tail(&self.nodes[i].error_log(), 8)
        )
    }
}

impl Drop for ManagedCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a node says of its place in the cluster.
#[derive(Debug, Default)]
pub struct WsrepState {
    pub comment: String,
    pub ready: String,
    pub status: String,
    pub size: u32,
}

impl WsrepState {
    fn synced(&self, size: usize) -> bool {
        self.comment == "Synced"
            && self.ready == "ON"
            && self.status == "Primary"
            && self.size as usize == size
    }
}

impl std::fmt::Display for WsrepState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "wsrep_local_state_comment = {}, wsrep_ready = {}, wsrep_cluster_status = {}, wsrep_cluster_size = {}",
            self.comment, self.ready, self.status, self.size
        )
    }
}

/// A node's wsrep state, asked over its socket as root.
fn wsrep_state(socket: &Path) -> anyhow::Result<WsrepState> {
    let mut c = managed::root_conn(socket)?;
    let rows = c
        .query_rows("SHOW GLOBAL STATUS LIKE 'wsrep_%'")
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    c.close();
    let mut s = WsrepState::default();
    for r in rows {
        let text = |i: usize| {
            r.get(i)
                .and_then(|v| v.as_deref())
                .map(|b| String::from_utf8_lossy(b).to_string())
                .unwrap_or_default()
        };
        let v = text(1);
        match text(0).as_str() {
            "wsrep_local_state_comment" => s.comment = v,
            "wsrep_ready" => s.ready = v,
            "wsrep_cluster_status" => s.status = v,
            "wsrep_cluster_size" => s.size = v.parse().unwrap_or(0),
            _ => {}
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_has_its_own_ports_and_only_the_first_bootstraps() {
        let all = [
            Ports {
                gcomm: 10,
                ist: 11,
                sst: 12,
            },
            Ports {
                gcomm: 20,
                ist: 21,
                sst: 22,
            },
        ];
        let p = Path::new("/usr/lib/galera/libgalera_smm.so");
        let one = node_options(p, "c", 0, &all);
        let two = node_options(p, "c", 1, &all);
        assert!(one.contains(&"--wsrep-new-cluster".to_string()));
        assert!(!two.contains(&"--wsrep-new-cluster".to_string()));
        for o in [&one, &two] {
            assert!(o.contains(
                &"--wsrep-cluster-address=gcomm://127.0.0.1:10,127.0.0.1:20".to_string()
            ));
        }
        assert!(two.contains(&"--wsrep-node-address=127.0.0.1:20".to_string()));
        assert!(two.contains(&"--wsrep-sst-receive-address=127.0.0.1:22".to_string()));
        assert!(two.iter().any(
            |o| o.contains("gmcast.listen_addr=tcp://127.0.0.1:20;ist.recv_addr=127.0.0.1:21")
        ));
        assert!(two.contains(&"--wsrep-node-name=node2".to_string()));
    }

    #[test]
    fn synced_means_every_word_and_the_whole_size() {
        let mut s = WsrepState {
            comment: "Synced".into(),
            ready: "ON".into(),
            status: "Primary".into(),
            size: 3,
        };
        assert!(s.synced(3));
        assert!(!s.synced(2));
        s.comment = "Donor/Desynced".into();
        assert!(!s.synced(3));
    }
}
