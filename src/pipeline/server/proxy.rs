//! A managed proxy in front of one server, on 127.0.0.1 and a free port: HAProxy in TCP mode,
//! or MySQL Router with a static route (`router`). Its configuration and log live in the
//! run's work directory; it is started as a watched child (it dies with this process) and
//! stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use super::router::{RouterOptions, RouterTls};
/// Where the proxy forwards to: where the server's own connections would go.
pub use crate::engine::db::Endpoint as Backend;

/// Which proxy, and what only that kind takes.
#[derive(Debug, Clone)]
pub enum ProxyKind {
    Haproxy,
    Router(RouterOptions),
}

impl ProxyKind {
    /// The proxy's name, as its messages say it.
    pub fn name(&self) -> &'static str {
        match self {
            ProxyKind::Haproxy => "haproxy",
            ProxyKind::Router(_) => "mysqlrouter",
        }
    }
}

pub struct Proxy {
    child: Child,
    pub port: u16,
    bin: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    name: &'static str,
}

/// The haproxy binary: where a server binary would be looked for (PATH, then /usr/sbin …).
fn haproxy_binary() -> anyhow::Result<PathBuf> {
    let dirs = super::managed::search_dirs(None);
    super::managed::find_in(&dirs, &["haproxy"]).ok_or_else(|| {
            anyhow::anyhow!(
                "proxy kind \"haproxy\": no haproxy binary on PATH or in /usr/sbin (apt-get install haproxy)"
            )
        })
}

/// The proxy on its configuration, its output to `log`; in the foreground (haproxy's -db;
/// mysqlrouter's default), not a daemon, so it is our child and dies with us.
fn spawn(bin: &Path, args: &[String], log: std::fs::File) -> anyhow::Result<Child> {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    super::managed::spawn_watched(cmd)
        .map_err(|e| anyhow::anyhow!("starting {}: {e}", bin.display()))
}

/// HAProxy's configuration: one TCP listener, one server, timeouts long enough for any point.
fn haproxy_config(port: u16, backend: &Backend, maxconn: u32) -> String {
    let server = match backend {
        Backend::Tcp(h, p) => format!("{h}:{p}"),
        Backend::Socket(s) => s.clone(),
    };
    format!(
        "global\n  maxconn {maxconn}\n\ndefaults\n  mode tcp\n  timeout connect 10s\n  timeout client 24h\n  timeout server 24h\n\nlisten mysql\n  bind 127.0.0.1:{port}\n  maxconn {maxconn}\n  server db {server} maxconn {maxconn}\n"
    )
}

impl Proxy {
    /// Starts the proxy of `kind` in `dir` in front of `backend`, taking up to `limit`
    /// client connections, and waits until it accepts connections (10 s at most).
    pub fn start(
        dir: &Path,
        kind: &ProxyKind,
        backend: &Backend,
        limit: u32,
    ) -> anyhow::Result<Proxy> {
        std::fs::create_dir_all(dir)?;
        let port = super::managed::free_port()?;
        let (bin, args) = match kind {
            ProxyKind::Haproxy => {
                let cfg = dir.join("haproxy.cfg");
                std::fs::write(&cfg, haproxy_config(port, backend, limit))?;
                let args = vec!["-db".into(), "-f".into(), cfg.display().to_string()];
                (haproxy_binary()?, args)
            }
            ProxyKind::Router(o) => super::router::prepare(dir, o, port, backend, limit)?,
        };
        let log = dir.join(format!("{}.log", kind.name()));
        let child = spawn(&bin, &args, std::fs::File::create(&log)?)?;
        let mut p = Proxy {
            child,
            port,
            bin,
            args,
            log,
            name: kind.name(),
        };
        p.wait_listening("at start")?;
        Ok(p)
    }

    /// Its name ("haproxy", "mysqlrouter").
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Starts it again after it died, on the same port and configuration (its clients' address
    /// stays right), its log appended to.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let log = std::fs::OpenOptions::new().append(true).open(&self.log)?;
        self.child = spawn(&self.bin, &self.args, log)?;
        self.wait_listening("at its restart")
    }

    fn wait_listening(&mut self, when: &str) -> anyhow::Result<()> {
        let port = self.port;
        let name = self.name;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = self.exited() {
                anyhow::bail!(
                    "{name} exited {when} ({st}); {} ends with:\n{}",
                    self.log.display(),
                    super::managed::log_tail(&self.log, 10)
                );
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "{name} did not listen on 127.0.0.1:{port} within 10 s {when}; {} ends with:\n{}",
                    self.log.display(),
                    super::managed::log_tail(&self.log, 10)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU seconds (user + system) the proxy has used so far: part of what a proxy target
    /// measures, so not counted as other processes' share of the host.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let cost = crate::usage::process_cost(self.pid())?;
        let us = cost.iter().find(|(n, _)| *n == "cpu_us")?.1;
        Some(us as f64 / 1e6)
    }

    /// How the proxy ended, if it has.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(st)) => Some(st.to_string()),
            _ => None,
        }
    }

    /// The end of its log, for a failure's message.
    pub fn log_tail(&self) -> String {
        super::managed::log_tail(&self.log, 8)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_listens_on_loopback_only_and_forwards_to_one_server() {
        let c = haproxy_config(4000, &Backend::Tcp("127.0.0.1".into(), 3307), 100);
        assert!(c.contains("\n  bind 127.0.0.1:4000\n"), "{c}");
        assert!(
            c.contains("\n  server db 127.0.0.1:3307 maxconn 100\n"),
            "{c}"
        );
        assert!(c.contains("\n  mode tcp\n"), "{c}");
        let s = haproxy_config(4000, &Backend::Socket("/tmp/x/sock".into()), 10);
        assert!(s.contains("\n  server db /tmp/x/sock maxconn 10\n"), "{s}");
    }
}
