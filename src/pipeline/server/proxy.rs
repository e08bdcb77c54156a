//! A managed proxy: HAProxy in TCP mode on 127.0.0.1 and a free port, in front of one server,
//! its configuration and log in the run's work directory, started as a watched child (it
//! dies with this process) and stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the proxy forwards to: where the server's own connections would go.
pub use crate::engine::db::Endpoint as Backend;

pub struct Haproxy {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

/// The haproxy binary: where a server binary would be looked for (PATH, then /usr/sbin …).
fn binary() -> anyhow::Result<PathBuf> {
    let dirs = super::managed::search_dirs(None);
    super::managed::find_in(&dirs, &["haproxy"]).ok_or_else(|| {
            anyhow::anyhow!(
                "proxy kind \"haproxy\": no haproxy binary on PATH or in /usr/sbin (apt-get install haproxy)"
            )
        })
}

/// The configuration: one TCP listener, one server, timeouts long enough for any point.
fn config(port: u16, backend: &Backend, maxconn: u32) -> String {
    let server = match backend {
        Backend::Tcp(h, p) => format!("{h}:{p}"),
        Backend::Socket(s) => s.clone(),
    };
    format!(
        "global\n  maxconn {maxconn}\n\ndefaults\n  mode tcp\n  timeout connect 10s\n  timeout client 24h\n  timeout server 24h\n\nlisten mysql\n  bind 127.0.0.1:{port}\n  maxconn {maxconn}\n  server db {server} maxconn {maxconn}\n"
    )
}

impl Haproxy {
    /// Starts HAProxy in `dir` in front of `backend`, for up to `connections` clients, and
    /// waits until it accepts connections (10 s at most).
    pub fn start(dir: &Path, backend: &Backend, connections: u32) -> anyhow::Result<Haproxy> {
        let bin = binary()?;
        std::fs::create_dir_all(dir)?;
        let port = super::managed::free_port()?;
        let cfg = dir.join("haproxy.cfg");
        std::fs::write(&cfg, config(port, backend, connections.max(16) + 16))?;
        let log = dir.join("haproxy.log");
        let out = std::fs::File::create(&log)?;
        let mut cmd = Command::new(&bin);
        // -db: in the foreground, not a daemon, so it is our child and dies with us.
        cmd.arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        let child = super::managed::spawn_watched(cmd)
            .map_err(|e| anyhow::anyhow!("starting {}: {e}", bin.display()))?;
        let mut p = Haproxy { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = p.exited() {
                anyhow::bail!(
                    "haproxy exited at start ({st}); {} ends with:\n{}",
                    p.log.display(),
                    super::managed::log_tail(&p.log, 10)
                );
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(p);
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "haproxy did not listen on 127.0.0.1:{port} within 10 s; {} ends with:\n{}",
                    p.log.display(),
                    super::managed::log_tail(&p.log, 10)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
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

impl Drop for Haproxy {
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
        let c = config(4000, &Backend::Tcp("127.0.0.1".into(), 3307), 100);
        assert!(c.contains("\n  bind 127.0.0.1:4000\n"), "{c}");
        assert!(
            c.contains("\n  server db 127.0.0.1:3307 maxconn 100\n"),
            "{c}"
        );
        assert!(c.contains("\n  mode tcp\n"), "{c}");
        let s = config(4000, &Backend::Socket("/tmp/x/sock".into()), 10);
        assert!(s.contains("\n  server db /tmp/x/sock maxconn 10\n"), "{s}");
    }
}
