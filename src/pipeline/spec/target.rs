//! Where a target lives: an external server (URL or socket), a managed one, or a synthetic
//! model of one. Passwords come
//! from the URL, SWEEPBENCH_PASSWORD / MYSQL_PWD or ~/.my.cnf `[client]`, and are never shown:
//! every display form is redacted.

use crate::engine::config::{ConnOptions, TlsOptions};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub enum TargetKind {
    External(ConnInfo),
    /// `server = {…}`: started by sweepbench (managed servers).
    Managed(ManagedTarget),
    /// `synthetic = { seed = 7, … }`: no server, a model of one (`pipeline::server::synthetic`).
    Synthetic(Box<crate::pipeline::server::synthetic::Model>),
}

impl TargetKind {
    /// The kind's word in manifest.json.
    pub fn name(&self) -> &'static str {
        match self {
            TargetKind::External(_) => "external",
            TargetKind::Managed(_) => "managed",
            TargetKind::Synthetic(_) => "synthetic",
        }
    }

    /// Where it connects, as `plan` shows it: the redacted URL, a model's seed, or "managed
    /// server".
    pub fn shown(&self) -> String {
        match self {
            TargetKind::External(c) => c.redacted(),
            TargetKind::Synthetic(m) => format!("synthetic, seed {}", m.seed),
            TargetKind::Managed(m) => match (&m.mariadb, &m.basedir) {
                (Some(v), Some(b)) => format!("managed server, MariaDB {v} from {}", b.display()),
                (None, Some(b)) => format!("managed server from {}", b.display()),
                _ => "managed server".into(),
            },
        }
    }

    /// Its manifest.json entry as target `name` (addresses redacted).
    pub fn manifest(&self, name: &str) -> serde_json::Value {
        let mut v = serde_json::json!({"name": name, "kind": self.name()});
        let (key, detail) = match self {
            TargetKind::External(c) => ("url", serde_json::json!(c.redacted())),
            TargetKind::Managed(m) => ("server", serde_json::to_value(m).unwrap_or_default()),
            TargetKind::Synthetic(m) => ("model", serde_json::to_value(m).unwrap_or_default()),
        };
        v[key] = detail;
        v
    }

    /// A server sweepbench starts (on this machine's loopback).
    pub fn is_managed(&self) -> bool {
        matches!(self, TargetKind::Managed(_))
    }

    /// A model: no server, its points computed.
    pub fn is_synthetic(&self) -> bool {
        matches!(self, TargetKind::Synthetic(_))
    }

    /// An external server's connection.
    pub fn external(&self) -> Option<&ConnInfo> {
        match self {
            TargetKind::External(c) => Some(c),
            _ => None,
        }
    }

    /// The kind ready to connect: an external server's password resolved (environment,
    /// ~/.my.cnf) at the moment it is needed, never kept in the spec.
    pub fn resolved(&self) -> TargetKind {
        match self {
            TargetKind::External(c) => {
                let mut c = c.clone();
                c.resolve_password();
                TargetKind::External(c)
            }
            other => other.clone(),
        }
    }
}

/// `proxy = { kind = "haproxy", target = "direct" }`, or `kind = "mysqlrouter"` with its
/// own `max_connections`, `tls` and `connection_sharing`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySpec {
    /// "haproxy" or "mysqlrouter" (ProxySQL is not supported: it is not installable here to
    /// test against).
    pub kind: String,
    /// The target whose server the proxy stands in front of.
    pub target: String,
    /// The proxy's own connection limit; absent = sized to the sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
    /// mysqlrouter: "passthrough" (default), "end" (at the router) or "disabled".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// mysqlrouter: share server connections between clients (needs tls "end" or "disabled").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_sharing: Option<bool>,
    /// mysqlrouter: the binary to run (default: PATH, then scripts/unpack-mysql.sh router's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<std::path::PathBuf>,
}

impl ProxySpec {
    /// What the managed proxy is started as.
    pub fn kind(&self) -> crate::pipeline::server::proxy::ProxyKind {
        use crate::pipeline::server::proxy::{ProxyKind, RouterOptions, RouterTls};
        match self.kind.as_str() {
            "mysqlrouter" => ProxyKind::Router(RouterOptions {
                binary: self.binary.clone(),
                tls: self
                    .tls
                    .as_deref()
                    .and_then(RouterTls::parse)
                    .unwrap_or_default(),
                sharing: self.connection_sharing.unwrap_or(false),
            }),
            _ => ProxyKind::Haproxy,
        }
    }
}

/// `server = { basedir = "…", restart = "per-point", startup_timeout = "120s", options = […],
/// cluster = { nodes = 3 } }`.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ManagedTarget {
    /// Install root (holding sbin/ or bin/); absent = this machine's server (or the build
    /// `mariadb` names).
    pub basedir: Option<std::path::PathBuf>,
    /// `mariadb = "11.8.9"` (or "11.8"): the version, found as this machine's server or in
    /// scripts/unpack-mariadb.sh's cache; its basedir is then `basedir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mariadb: Option<String>,
    /// "per-point" restarts the server before every point (cold caches).
    pub restart: Option<String>,
    /// How long to wait for start-up, e.g. "120s" (default 60s).
    pub startup_timeout: Option<String>,
    /// Extra server command-line options, e.g. ["--innodb-buffer-pool-size=2G"].
    #[serde(default)]
    pub options: Vec<String>,
    /// `cluster = { nodes = 3 }`: a Galera cluster of that many nodes instead of one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterSpec>,
    /// `class = { cpus = 1.5, memory = "2G" }`: the instance class the server is held to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassSpec>,
}

/// An instance class as the sweep file gives it.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    /// CPUs' worth of time (a quota: 1.5 is one and a half cores' time).
    pub cpus: f64,
    /// Memory limit: "2G", "512M".
    pub memory: String,
}

impl ClassSpec {
    /// The class, or what is wrong with the file's values.
    pub fn parse(&self) -> Result<crate::pipeline::server::class::Class, String> {
        if !(self.cpus.is_finite() && self.cpus >= 0.01) {
            return Err(format!(
                "server.class.cpus = {}: give the CPUs' worth of time, at least 0.01 (1.5 = one and a half cores)",
                self.cpus
            ));
        }
        let memory = crate::engine::host::size(&self.memory)
            .filter(|m| *m >= 256 << 20)
            .ok_or_else(|| {
                format!(
                    "server.class.memory = \"{}\": give a size of at least 256M, like \"2G\" or \"512M\"",
                    self.memory
                )
            })?;
        Ok(crate::pipeline::server::class::Class {
            cpus: self.cpus,
            memory,
        })
    }
}

/// A managed Galera cluster's shape.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub nodes: u32,
}

impl ManagedTarget {
    /// The instance class, when the file gives one (checked when it was read).
    pub fn class(&self) -> Option<crate::pipeline::server::class::Class> {
        self.class.as_ref().and_then(|c| c.parse().ok())
    }

    pub fn restart_per_point(&self) -> bool {
        self.restart.as_deref() == Some("per-point")
    }
}

/// How to reach an external server.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnInfo {
    pub user: String,
    pub password: Option<String>,
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub db: String,
    /// The URL gave a port: TCP, even to "localhost" (as the mariadb client does since 10.6;
    /// without a port "localhost" means the default Unix socket, as libmysqlclient reads it).
    pub port_given: bool,
    /// TLS, from the URL's `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key` (the mysql client's
    /// names).
    pub tls: TlsOptions,
    /// The endpoints after the first of a URL that names several
    /// (`mysql://u@h:p1,h:p2,h:p3/db`): the workload's connections go round-robin over all.
    pub more: Vec<(String, u16)>,
}

impl std::fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// A URL naming several endpoints (`mysql://u@h1:p1,h2:p2/db`) as one naming the first, and
/// the rest as (host, port) pairs (a port left out is 3306; IPv6 in brackets).
fn split_endpoints(text: &str) -> Result<(String, Vec<(String, u16)>), String> {
    let Some(rest) = text.strip_prefix("mysql://") else {
        return Ok((text.to_string(), Vec::new()));
    };
    // The authority ends at the first '/', '?' or '#' after the user part; the password may
    // hold ',' but never an unescaped '@'.
    let at = rest.rfind('@').map_or(0, |i| i + 1);
    let end = rest[at..]
        .find(['/', '?', '#'])
        .map_or(rest.len(), |i| at + i);
    let hosts = &rest[at..end];
    if !hosts.contains(',') {
        return Ok((text.to_string(), Vec::new()));
    }
    let mut parts = hosts.split(',');
    let first = parts.next().unwrap_or_default().to_string();
    let mut more = Vec::new();
    for p in parts {
        let (h, port) = match p.strip_prefix('[') {
            Some(v6) => {
                let (h, after) = v6
                    .split_once(']')
                    .ok_or_else(|| format!("endpoint '{p}': an IPv6 address closes with ']'"))?;
                (h.to_string(), after.strip_prefix(':'))
            }
            None => match p.rsplit_once(':') {
                Some((h, port)) => (h.to_string(), Some(port)),
                None => (p.to_string(), None),
            },
        };
        if h.is_empty() {
            return Err(format!("endpoint '{p}': the host is empty"));
        }
        let port = match port {
            None => 3306,
            Some(x) => x.parse::<u16>().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("endpoint '{p}': the port is not a number from 1 to 65535")
            })?,
        };
        more.push((percent_decode(&h)?, port));
    }
    Ok((
        format!("mysql://{}{}{}", &rest[..at], first, &rest[end..]),
        more,
    ))
}

/// `%40` → `@`: what the `url` crate leaves encoded in user, password, host and path.
fn percent_decode(s: &str) -> Result<String, String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| "a %-escape is not UTF-8".to_string())
}

impl ConnInfo {
    /// `mysql://user[:password]@host[:port][/db][?socket=/path]`, parsed by the `url` crate:
    /// IPv6 literals (`[::1]`), percent-encoded user, password and database.
    pub fn from_url(text: &str) -> Result<ConnInfo, String> {
        const SHAPE: &str = "expected mysql://user[:password]@host[:port][/db]";
        // Several endpoints ("h1:p1,h2:p2"): the url crate reads one host, so the first stands
        // in the URL it parses and the rest are read here.
        let (text, more) = split_endpoints(text)?;
        let text = text.as_str();
        let u = url::Url::parse(text).map_err(|e| {
            format!("{e}: {SHAPE} (a password holding '/', '?', '#' or '%' is written percent-encoded: %2F, %3F, %23, %25)")
        })?;
        if u.scheme() != "mysql" {
            return Err(SHAPE.into());
        }
        let user = percent_decode(u.username())?;
        if user.is_empty() {
            return Err("expected user@host (the user is required)".into());
        }
        // `***` is how a stored sweep.toml (and everything printed) hides a password: such a
        // URL is run again with the password from SWEEPBENCH_PASSWORD, MYSQL_PWD or
        // ~/.my.cnf, never with "***".
        let password = u
            .password()
            .map(percent_decode)
            .transpose()?
            .filter(|p| p != "***");
        let host = match u.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Domain(d)) if !d.is_empty() => percent_decode(d)?,
            _ => return Err("the host is empty".into()),
        };
        let port = u.port().unwrap_or(3306);
        let mut socket = None;
        let mut tls = TlsOptions::default();
        for (k, v) in u.query_pairs() {
            match k.replace('_', "-").as_str() {
                "socket" => socket = Some(v.to_string()),
                "ssl-mode" | "sslmode" => {
                    tls.mode = v.parse().map_err(|e| format!("ssl-mode={v}: {e}"))?
                }
                "ssl-ca" => tls.ca = Some(PathBuf::from(v.as_ref())),
                "ssl-cert" => tls.cert = Some(PathBuf::from(v.as_ref())),
                "ssl-key" => tls.key = Some(PathBuf::from(v.as_ref())),
                "ssl-cipher" => {
                    crate::engine::wire::tls::cipher_suites(&v)
                        .map_err(|e| e.replace("--mysql-ssl-cipher", "ssl-cipher"))?;
                    tls.cipher = Some(v.to_string())
                }
                // The parameter's value is not echoed: it may be a password.
                key => {
                    return Err(format!(
                        "unknown URL parameter '{key}' (socket, ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl-cipher; a password goes in mysql://user:password@host)"
                    ))
                }
            }
        }
        let db = percent_decode(u.path().trim_start_matches('/'))?;
        let db = if db.is_empty() {
            "sbtest".to_string()
        } else {
            db
        };
        if !db.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("database '{db}': use letters, digits and '_'"));
        }
        if !more.is_empty() && socket.is_some() {
            return Err("several endpoints and a socket: give one or the other".into());
        }
        let info = ConnInfo {
            user,
            password,
            host,
            port,
            port_given: u.port().is_some() || !more.is_empty(),
            socket,
            db,
            tls,
            more,
        };
        info.check_endpoints()?;
        Ok(info)
    }

    /// Every endpoint, the first included, in the URL's order.
    pub fn endpoints(&self) -> Vec<(String, u16)> {
        let mut v = vec![(self.host.clone(), self.port)];
        v.extend(self.more.iter().cloned());
        v
    }

    /// The hosts and the ports, each once in the URL's order: connections spread over them
    /// as sysbench spreads `--mysql-host` × `--mysql-port` (ports cycling fastest), so the
    /// endpoints must be exactly that product (one host with several ports, several hosts on
    /// one port, or every pair).
    fn hosts_and_ports(&self) -> (Vec<String>, Vec<u16>) {
        let mut hosts: Vec<String> = Vec::new();
        let mut ports: Vec<u16> = Vec::new();
        for (h, p) in self.endpoints() {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        (hosts, ports)
    }

    fn check_endpoints(&self) -> Result<(), String> {
        let all = self.endpoints();
        let (hosts, ports) = self.hosts_and_ports();
        let mut seen = std::collections::BTreeSet::new();
        if let Some((h, p)) = all.iter().find(|e| !seen.insert((*e).clone())) {
            return Err(format!("the endpoint {h}:{p} is named twice"));
        }
        if hosts.len() * ports.len() != all.len() {
            return Err(format!(
                "{} endpoints on {} hosts and {} ports: connections spread as sysbench spreads them, over every host × port, so give one host with several ports (h:p1,h:p2), several hosts on one port (h1:p,h2:p), or every pair",
                all.len(),
                hosts.len(),
                ports.len()
            ));
        }
        // The product in sysbench's order: the n-th connection's endpoint is the n-th pair.
        let product: Vec<(String, u16)> = hosts
            .iter()
            .flat_map(|h| ports.iter().map(move |p| (h.clone(), *p)))
            .collect();
        if product != all {
            return Err(format!(
                "list the endpoints host by host, each host's ports in one order ({}), as connections are spread in that order",
                product
                    .iter()
                    .map(|(h, p)| format!("{h}:{p}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        Ok(())
    }

    /// A local socket with the default user (`sbtest`) and database.
    pub fn from_socket(path: &str) -> ConnInfo {
        ConnInfo {
            user: "sbtest".into(),
            password: None,
            host: "localhost".into(),
            port: 3306,
            port_given: false,
            socket: Some(path.to_string()),
            db: "sbtest".into(),
            tls: TlsOptions::default(),
            more: Vec::new(),
        }
    }

    /// The URL with any password replaced by `***`: the only form ever printed or stored.
    pub fn redacted(&self) -> String {
        let pw = if self.password.is_some() { ":***" } else { "" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        // What the URL said of the transport is kept: a reader of manifest.json must see
        // that a target was measured over TLS.
        let mut params: Vec<String> = Vec::new();
        if let Some(s) = &self.socket {
            params.push(format!("socket={s}"));
        }
        let t = &self.tls;
        if t.mode != crate::engine::config::SslMode::Disabled {
            params.push(format!("ssl-mode={}", t.mode.word()));
        }
        for (k, v) in [
            ("ssl-ca", &t.ca),
            ("ssl-cert", &t.cert),
            ("ssl-key", &t.key),
        ] {
            if let Some(v) = v {
                params.push(format!("{k}={}", v.display()));
            }
        }
        if let Some(c) = &t.cipher {
            params.push(format!("ssl-cipher={c}"));
        }
        let query = if params.is_empty() {
            String::new()
        } else {
            format!("?{}", params.join("&"))
        };
        let bracket = |h: &str| {
            if h.contains(':') {
                format!("[{h}]")
            } else {
                h.to_string()
            }
        };
        let more: String = self
            .more
            .iter()
            .map(|(h, p)| format!(",{}:{p}", bracket(h)))
            .collect();
        match &self.socket {
            Some(_) => format!("mysql://{}{pw}@{host}/{}{query}", self.user, self.db),
            None => format!(
                "mysql://{}{pw}@{host}:{}{more}/{}{query}",
                self.user, self.port, self.db
            ),
        }
    }

    /// Fills a missing password from the environment or ~/.my.cnf.
    pub fn resolve_password(&mut self) {
        if self.password.is_some() {
            return;
        }
        if let Some(p) = crate::engine::config::password_from_env() {
            self.password = Some(p);
            return;
        }
        if let Some(home) = std::env::var_os("HOME") {
            let path = std::path::Path::new(&home).join(".my.cnf");
            if let Ok(text) = std::fs::read_to_string(path) {
                self.password = mycnf_client_password(&text);
            }
        }
    }

    /// Connection options in the engine's terms.
    pub fn conn_options(&self) -> ConnOptions {
        let (hosts, ports) = self.hosts_and_ports();
        ConnOptions {
            hosts,
            ports,
            sockets: self.socket.iter().cloned().collect(),
            user: self.user.clone(),
            password: self.password.clone(),
            db: self.db.clone(),
            allow_cleartext: false,
            tls: self.tls.clone(),
            tcp: self.port_given && self.socket.is_none(),
        }
    }

    /// One endpoint of several as a target of its own (its preflight, its counters).
    pub fn only(&self, endpoint: &(String, u16)) -> ConnInfo {
        ConnInfo {
            host: endpoint.0.clone(),
            port: endpoint.1,
            more: Vec::new(),
            ..self.clone()
        }
    }

    /// True when the server runs on this machine (so its datadir's disk can be checked).
    pub fn is_local(&self) -> bool {
        self.socket.is_some() || ["localhost", "127.0.0.1", "::1"].contains(&self.host.as_str())
    }
}

/// `password` from the `[client]` group of a my.cnf text.
pub fn mycnf_client_password(text: &str) -> Option<String> {
    let mut in_client = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_client = l == "[client]";
            continue;
        }
        if !in_client {
            continue;
        }
        if let Some((k, v)) = l.split_once('=') {
            if k.trim() == "password" {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|x| x.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
                    .unwrap_or(v);
                return Some(v.to_string());
            }
        }
    }
    None
}

/// A URL with its password (whatever characters it holds) replaced by `***`.
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    // The authority ends at the last '@' (a password may hold '@', '/' or spaces).
    match rest.rsplit_once('@') {
        Some((auth, host)) if auth.contains(':') => {
            let user = auth.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_string(),
    }
}

/// The sweep file's text as stored with a run: each target's `url` value (located by its span,
/// so spaces, quotes and escapes in a password do not matter) rewritten with the password
/// replaced by `***`, then any other `mysql://user:password@` (in comments) redacted too.
pub fn redact_source<'a>(
    text: &str,
    urls: impl Iterator<Item = &'a toml::Spanned<String>>,
) -> String {
    let mut spans: Vec<(std::ops::Range<usize>, String)> = urls
        .map(|u| {
            let lit = toml::Value::String(redact_url(u.get_ref())).to_string();
            (u.span(), lit)
        })
        .collect();
    spans.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (r, lit) in spans {
        if out.is_char_boundary(r.start) && r.end <= out.len() && out.is_char_boundary(r.end) {
            out.replace_range(r, &lit);
        }
    }
    redact_text(&out)
}

/// Every `mysql://user:password@` in free text (comments) with the password replaced by
/// `***`. The user ends at the first ':'; the password runs to the last '@' before a quote or
/// the end of the line, so one with spaces is caught too (and a later '@' on the line is
/// taken as the end: over-redacting a comment is the safe side).
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("mysql://") {
        let (head, tail) = rest.split_at(i + "mysql://".len());
        out.push_str(head);
        rest = tail;
        let line = &tail[..tail.find(['"', '\'', '\n']).unwrap_or(tail.len())];
        let user_end = line.find(|c: char| c == ':' || c == '@' || c == '/' || c.is_whitespace());
        if let Some(c) = user_end.filter(|&c| line[c..].starts_with(':')) {
            if let Some(a) = line.rfind('@').filter(|&a| a > c) {
                out.push_str(&line[..c]);
                out.push_str(":***");
                rest = &tail[a..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_defaults() {
        let c = ConnInfo::from_url("mysql://bench:s%40cret@db.example:3307/perf").unwrap();
        assert_eq!(
            (c.user.as_str(), c.password.as_deref()),
            ("bench", Some("s@cret"))
        );
        assert_eq!(
            (c.host.as_str(), c.port, c.db.as_str()),
            ("db.example", 3307, "perf")
        );
        let c = ConnInfo::from_url("mysql://root@127.0.0.1").unwrap();
        assert_eq!((c.port, c.db.as_str(), c.password), (3306, "sbtest", None));
        let c = ConnInfo::from_url("mysql://root@localhost/x?socket=/run/m.sock").unwrap();
        assert_eq!(c.socket.as_deref(), Some("/run/m.sock"));
        assert!(ConnInfo::from_url("postgres://a@b").is_err());
        // IPv6 literals, and '@', ':' and '/' in a password (the last percent-encoded).
        let c = ConnInfo::from_url("mysql://u:p@ss:w%2Frd@[::1]:3307/db").unwrap();
        assert_eq!(c.password.as_deref(), Some("p@ss:w/rd"));
        assert_eq!((c.host.as_str(), c.port), ("::1", 3307));
        assert_eq!(c.redacted(), "mysql://u:***@[::1]:3307/db");
        let c =
            ConnInfo::from_url("mysql://u:pw@db:3307/x?ssl-mode=verify_ca&ssl-ca=/ca.pem").unwrap();
        assert_eq!(
            c.redacted(),
            "mysql://u:***@db:3307/x?ssl-mode=VERIFY_CA&ssl-ca=/ca.pem"
        );
        // Several endpoints: the first as host and port, the rest in order; spread as
        // sysbench spreads host × port; a list that is no such product is refused.
        let c = ConnInfo::from_url("mysql://u:p,w@127.0.0.1:4001,127.0.0.1:4002,127.0.0.1:4003/db")
            .unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.password.as_deref()),
            ("127.0.0.1", 4001, Some("p,w"))
        );
        assert_eq!(
            c.more,
            [
                ("127.0.0.1".to_string(), 4002),
                ("127.0.0.1".to_string(), 4003)
            ]
        );
        let o = c.conn_options();
        assert_eq!(
            (o.hosts.clone(), o.ports.clone()),
            (vec!["127.0.0.1".to_string()], vec![4001, 4002, 4003])
        );
        let spread: Vec<String> = (0..6)
            .map(|n| format!("{:?}", crate::engine::db::endpoint(&o, n)))
            .collect();
        assert_eq!(spread[0], spread[3]);
        assert_ne!(spread[0], spread[1]);
        assert!(spread[2].contains("4003"), "{spread:?}");
        assert_eq!(
            c.redacted(),
            "mysql://u:***@127.0.0.1:4001,127.0.0.1:4002,127.0.0.1:4003/db"
        );
        let c = ConnInfo::from_url("mysql://u@a,b,c/db").unwrap();
        assert_eq!(c.conn_options().hosts, ["a", "b", "c"]);
        assert_eq!(c.conn_options().ports, [3306]);
        for (bad, says) in [
            ("mysql://u@a:1,b:2/db", "over every host × port"),
            ("mysql://u@a:1,a:1/db", "named twice"),
            (
                "mysql://u@a:1,b:2,a:2,b:1/db",
                "list the endpoints host by host",
            ),
            ("mysql://u@a:1,b:x/db", "the port is not a number"),
            ("mysql://u@a:1,:2/db", "the host is empty"),
        ] {
            let e = ConnInfo::from_url(bad).err().unwrap_or_default();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let c = ConnInfo::from_url("mysql://u@[::1]/db").unwrap();
        assert_eq!((c.host.as_str(), c.port, c.password), ("::1", 3306, None));
        let c = ConnInfo::from_url("mysql://u@localhost/db?socket=%2Frun%2Fm.sock").unwrap();
        assert_eq!(c.socket.as_deref(), Some("/run/m.sock"));
        assert!(ConnInfo::from_url("mysql://a@b:x").is_err());
    }

    #[test]
    fn localhost_with_a_port_is_tcp_to_that_port() {
        use crate::engine::db::endpoint;
        use crate::engine::wire::Endpoint;
        // As the mariadb client reads it since 10.6: a port given means TCP, even to
        // localhost (#22 N42: the port was ignored for the default socket, another server).
        let c = ConnInfo::from_url("mysql://u:p@localhost:37923/sbtest").unwrap();
        assert_eq!(
            endpoint(&c.conn_options(), 0),
            Endpoint::Tcp("localhost".into(), 37923)
        );
        // Without a port, or with a socket, "localhost" stays the Unix socket.
        let c = ConnInfo::from_url("mysql://u@localhost/db?socket=/run/m.sock").unwrap();
        assert_eq!(
            endpoint(&c.conn_options(), 0),
            Endpoint::Socket("/run/m.sock".into())
        );
        let c = ConnInfo::from_url("mysql://u@localhost:3307/db?socket=/run/m.sock").unwrap();
        assert!(!c.conn_options().tcp);
        let c = ConnInfo::from_url("mysql://u@localhost/db").unwrap();
        assert!(!c.conn_options().tcp);
    }

    #[test]
    fn redaction_hides_passwords() {
        let c = ConnInfo::from_url("mysql://bench:topsecret@h:1/d").unwrap();
        assert_eq!(c.redacted(), "mysql://bench:***@h:1/d");
        assert!(!format!("{c:?}").contains("topsecret"));
        let t = "url = \"mysql://bench:topsecret@h:1/d\"\nother = \"mysql://root@h\"\n";
        assert_eq!(
            redact_text(t),
            "url = \"mysql://bench:***@h:1/d\"\nother = \"mysql://root@h\"\n"
        );
        // A password with a space in a comment (#22 N17), and a URL without one untouched.
        let t = "# previously: mysql://root:Old Pass9zz@db.example/sbtest\n# mysql://u@h:1/x ok\n";
        assert_eq!(
            redact_text(t),
            "# previously: mysql://root:***@db.example/sbtest\n# mysql://u@h:1/x ok\n"
        );
    }

    #[test]
    fn stored_sweep_files_hide_any_password() {
        let pw = "Zq9 w'\"\\x@/!";
        let lit = toml::Value::String(format!("mysql://bench:{pw}@h:1/d")).to_string();
        let text =
            format!("# old: mysql://root:Zq9old@h\n[[targets]]\nname = \"a\"\nurl = {lit}\n");
        #[derive(serde::Deserialize)]
        struct T {
            url: toml::Spanned<String>,
        }
        #[derive(serde::Deserialize)]
        struct F {
            targets: Vec<T>,
        }
        let f: F = toml::from_str(&text).unwrap();
        assert_eq!(
            f.targets[0].url.get_ref(),
            &format!("mysql://bench:{pw}@h:1/d")
        );
        let stored = redact_source(&text, f.targets.iter().map(|t| &t.url));
        assert!(!stored.contains("Zq9"), "{stored}");
        assert!(
            stored.contains("url = \"mysql://bench:***@h:1/d\""),
            "{stored}"
        );
        let e = ConnInfo::from_url("mysql://u@h/d?password=Zq9").unwrap_err();
        assert!(!e.contains("Zq9"), "{e}");
        // Run again, the stored URL takes its password from where a URL without one does.
        let again = ConnInfo::from_url("mysql://bench:***@h:1/d").unwrap();
        assert_eq!(again.password, None);
        assert_eq!(again.redacted(), "mysql://bench@h:1/d");
    }

    #[test]
    fn client_password_from_mycnf() {
        let t = "[mysqld]\npassword=no\n[client]\nuser=x\npassword = \"p w\"\n";
        assert_eq!(mycnf_client_password(t).as_deref(), Some("p w"));
        assert_eq!(mycnf_client_password("[mysql]\npassword=a\n"), None);
    }
}
