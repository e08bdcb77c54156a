//! MySQL Router as a managed proxy: where its binary is (PATH, or the tree
//! `scripts/unpack-mysql.sh router` unpacks), its configuration — one static route on
//! 127.0.0.1 to one server, with a connection limit, TLS passed through, ended at the router
//! or off, and optionally connection sharing — and the certificate it ends TLS with.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

use crate::engine::db::Endpoint as Backend;

/// How the router treats TLS from its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RouterTls {
    /// Forwarded untouched: the client's TLS session is with the server.
    #[default]
    Passthrough,
    /// Ended at the router (a certificate of its own), and started again to the server.
    End,
    /// No TLS on either side.
    Disabled,
}

impl RouterTls {
    pub fn parse(s: &str) -> Option<RouterTls> {
        match s {
            "passthrough" => Some(RouterTls::Passthrough),
            "end" => Some(RouterTls::End),
            "disabled" => Some(RouterTls::Disabled),
            _ => None,
        }
    }
}

/// What a router proxy is started with.
#[derive(Debug, Clone, Default)]
pub struct RouterOptions {
    /// The mysqlrouter to run; None looks on PATH, then in the unpacked trees.
    pub binary: Option<PathBuf>,
    pub tls: RouterTls,
    /// `connection_sharing = 1`: server connections shared between idle clients. Needs TLS
    /// ended or off, and a MySQL server behind it (it sets `session_track_gtids`).
    pub sharing: bool,
}

/// The directories `scripts/unpack-mysql.sh router` unpacks into (its default cache).
fn unpacked_routers() -> Vec<PathBuf> {
    let Some(cache) = super::versions::cache_dir() else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .map(|d| {
            d.flatten()
                .map(|e| e.path().join("mysqlrouter"))
                .filter(|p| {
                    p.is_file()
                        && p.parent()
                            .and_then(|d| d.file_name())
                            .is_some_and(|n| n.to_string_lossy().starts_with("mysql-router-"))
                })
                .collect()
        })
        .unwrap_or_default();
    // Newest version last (a name sort is close enough for one major).
    found.sort();
    found
}

/// The mysqlrouter binary, or why there is none and the one command that makes one.
pub fn binary(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(b) = given {
        if b.is_file() {
            return Ok(b.to_path_buf());
        }
        bail!(
            "proxy kind \"mysqlrouter\": binary {} does not exist (scripts/unpack-mysql.sh router prints the path of one)",
            b.display()
        );
    }
    let dirs = super::managed::search_dirs(None);
    if let Some(b) = super::managed::find_in(&dirs, &["mysqlrouter"]) {
        return Ok(b);
    }
    unpacked_routers().pop().context(
        "proxy kind \"mysqlrouter\": no mysqlrouter on PATH or unpacked; run scripts/unpack-mysql.sh router (it unpacks Debian's MySQL Router into ~/.cache/sweepbench, installing nothing)",
    )
}

/// The router's plugins: beside an unpacked wrapper, else where Debian installs them.
fn plugin_folder(bin: &Path) -> PathBuf {
    let beside = bin
        .parent()
        .map(|d| d.join("root/usr/lib/mysqlrouter/plugin"));
    beside
        .into_iter()
        .chain([
            PathBuf::from("/usr/lib/mysqlrouter/plugin"),
            PathBuf::from("/usr/lib/x86_64-linux-gnu/mysqlrouter/plugin"),
        ])
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/usr/lib/mysqlrouter/plugin"))
}

/// The configuration: logs to its stderr (our log file), its state in `dir`, one route.
pub fn config(
    dir: &Path,
    plugins: &Path,
    port: u16,
    backend: (&str, u16),
    limit: u32,
    o: &RouterOptions,
) -> String {
    let (client, server) = match o.tls {
        RouterTls::Passthrough => ("PASSTHROUGH", None),
        RouterTls::End => ("PREFERRED", Some("PREFERRED")),
        RouterTls::Disabled => ("DISABLED", Some("DISABLED")),
    };
    let mut route = format!(
        "[routing:sweepbench]\nbind_address = 127.0.0.1\nbind_port = {port}\ndestinations = {}:{}\nrouting_strategy = first-available\nprotocol = classic\nmax_connections = {limit}\nclient_ssl_mode = {client}\n",
        backend.0, backend.1
    );
    if let Some(s) = server {
        route.push_str(&format!("server_ssl_mode = {s}\n"));
    }
    if o.tls == RouterTls::End {
        route.push_str(&format!(
            "client_ssl_cert = {}\nclient_ssl_key = {}\n",
            dir.join("router-cert.pem").display(),
            dir.join("router-key.pem").display()
        ));
    }
    if o.sharing {
        route.push_str("connection_sharing = 1\n");
    }
    format!(
        "[DEFAULT]\nlogging_folder =\nruntime_folder = {run}\ndata_folder = {data}\nplugin_folder = {plugins}\nmax_total_connections = {total}\n\n[logger]\nlevel = INFO\n\n{route}",
        run = dir.join("run").display(),
        data = dir.join("data").display(),
        plugins = plugins.display(),
        total = limit.max(512) + 16,
    )
}

/// Writes the router's configuration (and, for TLS ended at the router, a throwaway
/// certificate) in `dir`; returns the binary and its arguments.
pub fn prepare(
    dir: &Path,
    o: &RouterOptions,
    port: u16,
    backend: &Backend,
    limit: u32,
) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let bin = binary(o.binary.as_deref())?;
    let Backend::Tcp(h, p) = backend else {
        bail!("proxy kind \"mysqlrouter\" routes to TCP only, and the server is reached over a socket: give the target a host and port");
    };
    if o.sharing && o.tls == RouterTls::Passthrough {
        bail!("proxy connection_sharing needs the router to see the protocol: set tls = \"end\" or \"disabled\" (passthrough forwards TLS untouched)");
    }
    std::fs::create_dir_all(dir.join("run"))?;
    std::fs::create_dir_all(dir.join("data"))?;
    if o.tls == RouterTls::End {
        certificate(dir)?;
    }
    let cfg = dir.join("mysqlrouter.conf");
    std::fs::write(
        &cfg,
        config(dir, &plugin_folder(&bin), port, (h, *p), limit, o),
    )?;
    Ok((bin, vec!["-c".into(), cfg.display().to_string()]))
}

/// A self-signed certificate and key for the router's end of TLS (openssl).
fn certificate(dir: &Path) -> anyhow::Result<()> {
    let out = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=sweepbench-router"])
        .arg("-keyout")
        .arg(dir.join("router-key.pem"))
        .arg("-out")
        .arg(dir.join("router-cert.pem"))
        .output()
        .context("running openssl to make the router's certificate (apt-get install openssl)")?;
    if !out.status.success() {
        bail!(
            "openssl could not make the router's certificate: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_route_on_loopback_with_its_limit_and_tls_mode() {
        let o = RouterOptions::default();
        let c = config(
            Path::new("/w"),
            Path::new("/p"),
            4000,
            ("127.0.0.1", 3307),
            40,
            &o,
        );
        assert!(
            c.contains("\nbind_address = 127.0.0.1\nbind_port = 4000\n"),
            "{c}"
        );
        assert!(c.contains("\ndestinations = 127.0.0.1:3307\n"), "{c}");
        assert!(c.contains("\nmax_connections = 40\n"), "{c}");
        assert!(c.contains("\nclient_ssl_mode = PASSTHROUGH\n"), "{c}");
        assert!(!c.contains("server_ssl_mode"), "{c}");
        assert!(c.contains("\nplugin_folder = /p\n"), "{c}");
        let end = RouterOptions {
            tls: RouterTls::End,
            sharing: true,
            ..Default::default()
        };
        let c = config(
            Path::new("/w"),
            Path::new("/p"),
            4000,
            ("127.0.0.1", 3307),
            40,
            &end,
        );
        assert!(
            c.contains("\nclient_ssl_mode = PREFERRED\nserver_ssl_mode = PREFERRED\n"),
            "{c}"
        );
        assert!(
            c.contains("\nclient_ssl_cert = /w/router-cert.pem\n"),
            "{c}"
        );
        assert!(c.contains("\nconnection_sharing = 1\n"), "{c}");
    }
}
