//! Multi-client points (`[run] clients = N`): a point's threads split over N `sweepbench
//! agent` processes that start together and stream their figures back as JSON lines; the
//! controller merges them exactly (merge.rs). The agent's side is agent.rs; local.rs runs the
//! agents on this machine. Passwords travel on the agent's standard input or in its
//! environment, never in a task or on a command line.

pub mod agent;
pub mod local;
pub mod merge;

use crate::engine::config::{ConnOptions, EngineConfig, ForcedShutdown, SslMode, TlsOptions};
use crate::engine::exec::IntervalStats;
use crate::engine::metrics::{Counts, TotalHist};
use crate::pipeline::plan::Point;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How late (ms after the common instant) a client may start before its point fails: its
/// first second would not overlap the others'.
pub const LATE_LIMIT_MS: f64 = 250.0;

/// What one client process runs: its share of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub point: String,
    /// 0-based.
    pub client: u32,
    pub clients: u32,
    pub workload: String,
    /// This client's share of the point's threads (and of its rate).
    pub threads: u32,
    pub rate: u64,
    pub duration_s: u64,
    pub warmup_s: u64,
    pub point_timeout_s: u64,
    pub tables: u32,
    pub table_size: u32,
    pub storage_engine: String,
    /// `[workload_options]` as given, in TOML.
    pub workload_options: String,
    pub conn: Conn,
}

/// Where to connect, without the password.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conn {
    pub user: String,
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub db: String,
    pub ssl_mode: String,
    pub ssl_ca: Option<PathBuf>,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    pub ssl_cipher: Option<String>,
    /// TCP even to "localhost" (the target's URL gave a port).
    #[serde(default)]
    pub tcp: bool,
}

fn ssl_mode_name(m: SslMode) -> &'static str {
    match m {
        SslMode::Disabled => "DISABLED",
        SslMode::Preferred => "PREFERRED",
        SslMode::Required => "REQUIRED",
        SslMode::VerifyCa => "VERIFY_CA",
        SslMode::VerifyIdentity => "VERIFY_IDENTITY",
    }
}

impl Conn {
    pub fn of(c: &ConnInfo) -> Conn {
        Conn {
            user: c.user.clone(),
            host: c.host.clone(),
            port: c.port,
            socket: c.socket.clone(),
            db: c.db.clone(),
            ssl_mode: ssl_mode_name(c.tls.mode).into(),
            ssl_ca: c.tls.ca.clone(),
            ssl_cert: c.tls.cert.clone(),
            ssl_key: c.tls.key.clone(),
            ssl_cipher: c.tls.cipher.clone(),
            tcp: c.port_given && c.socket.is_none(),
        }
    }

    fn options(&self, password: Option<String>) -> anyhow::Result<ConnOptions> {
        Ok(ConnOptions {
            hosts: vec![self.host.clone()],
            ports: vec![self.port],
            sockets: self.socket.iter().cloned().collect(),
            user: self.user.clone(),
            password,
            db: self.db.clone(),
            allow_cleartext: false,
            tls: TlsOptions {
                mode: self
                    .ssl_mode
                    .parse()
                    .map_err(|e| anyhow::anyhow!("ssl_mode '{}': {e}", self.ssl_mode))?,
                ca: self.ssl_ca.clone(),
                cert: self.ssl_cert.clone(),
                key: self.ssl_key.clone(),
                cipher: self.ssl_cipher.clone(),
            },
            tcp: self.tcp,
        })
    }
}

/// Client `i`'s share of `total` (threads or arrivals/s): as even as integers allow, the
/// first clients taking one more.
pub fn share(total: u64, clients: u32, i: u32) -> u64 {
    let k = clients.max(1) as u64;
    total / k + u64::from((i as u64) < total % k)
}

impl Task {
    /// The task of client `i` of point `p` against `c`.
    pub fn new(spec: &SweepSpec, p: &Point, c: &ConnInfo, i: u32) -> anyhow::Result<Task> {
        let given = spec.workload_options.given();
        Ok(Task {
            point: p.id.clone(),
            client: i,
            clients: p.clients,
            workload: p.workload.name().into(),
            threads: share(p.threads as u64, p.clients, i) as u32,
            rate: share(
                if p.rate > 0 { p.rate } else { spec.run.rate },
                p.clients,
                i,
            ),
            duration_s: spec.run.duration_s,
            warmup_s: spec.run.warmup_s,
            point_timeout_s: spec.run.point_timeout_s,
            tables: spec.data.tables,
            table_size: spec.table_size_of(&p.target),
            storage_engine: spec.data.storage_engine.clone(),
            workload_options: toml::to_string(&given)?,
            conn: Conn::of(c),
        })
    }

    /// Refuses a task whose values are out of their stated ranges: a task file is input
    /// like any other (a mounted ConfigMap, a controller's line), and the engine assumes
    /// tables ≥ 1, threads ≥ 1 and durations it can add to an instant.
    pub fn check(&self) -> anyhow::Result<()> {
        use crate::engine::config::MAX_SECONDS;
        let bad = |what: String| Err(anyhow::anyhow!("task for point '{}': {what}", self.point));
        if self.clients == 0 || self.client >= self.clients {
            return bad(format!(
                "client {} of {}: the index must be below the count, the count at least 1",
                self.client, self.clients
            ));
        }
        for (name, v, min) in [
            ("threads", self.threads as u64, 1),
            ("tables", self.tables as u64, 1),
            ("table_size", self.table_size as u64, 1),
            ("duration_s", self.duration_s, 1),
            ("warmup_s", self.warmup_s, 0),
            ("point_timeout_s", self.point_timeout_s, 0),
            ("rate", self.rate, 0),
        ] {
            let max = match name {
                "tables" => crate::engine::config::MAX_TABLES as u64,
                "threads" => crate::engine::config::MAX_THREADS as u64,
                "rate" => crate::engine::config::MAX_RATE,
                _ if name.ends_with("_s") => MAX_SECONDS,
                _ => u32::MAX as u64,
            };
            if v < min || v > max {
                return bad(format!("{name} = {v}: expected {min} to {max}"));
            }
        }
        if let Err(why) = crate::engine::config::check_engine_name(&self.storage_engine) {
            return bad(format!("storage_engine: {why}"));
        }
        Ok(())
    }

    /// The engine's configuration for this share: what `sweep::point_options` gives the
    /// one-client point, at this client's threads and rate.
    pub fn engine_config(&self, password: Option<String>) -> anyhow::Result<EngineConfig> {
        self.check()?;
        let w = crate::engine::config::WorkloadKind::from_name(&self.workload)
            .ok_or_else(|| anyhow::anyhow!("unknown workload '{}'", self.workload))?;
        let mut c = EngineConfig::new(w);
        c.conn = self.conn.options(password)?;
        c.threads = self.threads;
        c.time_s = self.duration_s;
        c.warmup_s = self.warmup_s;
        c.rate = self.rate;
        c.wl.tables = self.tables;
        c.wl.table_size = self.table_size;
        c.wl.storage_engine = self.storage_engine.clone();
        let o: crate::engine::config::Overrides = toml::from_str(&self.workload_options)
            .map_err(|e| anyhow::anyhow!("workload options: {}", e.message()))?;
        o.apply(&mut c);
        c.report_interval_s = 1;
        c.forced_shutdown = ForcedShutdown::Seconds(self.point_timeout_s as f64);
        Ok(c)
    }
}

/// The first line a controller writes to an agent's standard input.
#[derive(Serialize, Deserialize)]
pub struct Hello {
    pub task: Task,
    pub password: Option<String>,
}

/// The second: when to start (Unix time, ns), or to give up.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Go {
    StartAt(u64),
    Abort,
}

/// What an agent prints, one JSON object per line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Msg {
    /// Connected and prepared.
    Ready {
        client: u32,
        threads: u32,
    },
    /// The clock started: when (Unix ns) and how late after the instant asked for.
    Started {
        client: u32,
        at_unix_ns: u64,
        late_ms: f64,
    },
    /// One second's figures and its histogram (`hist`: HdrHistogram V2, base64).
    Interval {
        stats: IntervalStats,
        hist: String,
    },
    End(Box<End>),
    Error {
        message: String,
    },
}

/// A client's whole run.
#[derive(Debug, Serialize, Deserialize)]
pub struct End {
    pub elapsed_s: f64,
    pub window_s: f64,
    pub totals: Counts,
    pub hist: String,
    pub min_max_ns: Option<(u64, u64)>,
    pub per_thread: Vec<Counts>,
    pub fatal: Option<crate::engine::Fatal>,
    pub unfinished: Option<u64>,
    pub interrupted: bool,
    pub ignored_by_code: BTreeMap<u16, u64>,
    /// The client's own CPU over the run, seconds.
    pub cpu_s: f64,
}

/// A histogram in HdrHistogram's V2 encoding, base64: exact, and readable by HdrHistogram
/// tools in every language.
pub fn encode_hist(h: &TotalHist) -> anyhow::Result<String> {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("encoding a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(buf))
}

pub fn decode_hist(s: &str) -> anyhow::Result<TotalHist> {
    use hdrhistogram::serialization::Deserializer;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| anyhow::anyhow!("a histogram is not base64: {e}"))?;
    let h: TotalHist = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("decoding a histogram: {e:?}"))?;
    let mut out = crate::engine::metrics::total_hist();
    out.add(&h)
        .map_err(|e| anyhow::anyhow!("a histogram out of range: {e:?}"))?;
    Ok(out)
}

/// Nanoseconds since the Unix epoch: the one clock client processes (and machines) share.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests;
