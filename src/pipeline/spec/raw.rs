//! The sweep file as written: a serde mirror with spans, no semantics. Unknown keys are
//! refused here so typos never silently change a sweep.

use super::words::{Design, Isolate, Order, Pin, PreparePolicy, Profile, Word};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub baseline: Option<Spanned<String>>,
    /// `chain = true`: the report also answers each series against the one before it (a
    /// version chain's steps), besides every series against the baseline.
    pub chain: Option<bool>,
    /// `per_target = true`: the report also answers each target's configs against that
    /// target's copy of the baseline's config (instance classes: a winner per class).
    pub per_target: Option<bool>,
    /// `study_table = true`: the report also gives the published studies' layout (class ×
    /// template × version × threads → QPS, TPS, latency, stalls).
    pub study_table: Option<bool>,
    /// A pinned control series (a baseline whose ratio the other series are followed by,
    /// run over run): spec/mod.rs `baseline`.
    #[serde(default)]
    pub control: Option<Spanned<String>>,
    #[serde(default)]
    pub data: RawData,
    pub run: RawRun,
    #[serde(default)]
    pub workload_options: crate::engine::config::Overrides,
    /// The fileio host test's options, by sysbench's names (spec/mod.rs `fileio`).
    #[serde(default)]
    pub fileio: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    pub targets: Vec<RawTarget>,
    #[serde(default)]
    pub configs: Vec<RawConfig>,
    #[serde(default)]
    pub include: Vec<Spanned<BTreeMap<String, toml::Value>>>,
    #[serde(default)]
    pub exclude: Vec<Spanned<BTreeMap<String, toml::Value>>>,
    /// `kind = "local"` or `"kubernetes"` with its settings (spec/distributed.rs).
    #[serde(default)]
    pub executor: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawData {
    pub tables: Option<Spanned<u32>>,
    pub table_size: Option<Spanned<u32>>,
    /// `size = "2G"`, `"1.2 × buffer_pool"` or `"1.2 × memory"`: instead of table_size.
    pub size: Option<Spanned<String>>,
    pub storage_engine: Option<Spanned<String>>,
    pub prepare: Option<Spanned<Word<PreparePolicy>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRun {
    pub workloads: Spanned<Vec<Spanned<String>>>,
    /// A list of thread counts, "auto", or a table of `AutoThreads` settings.
    pub threads: Spanned<toml::Value>,
    pub duration: Option<Spanned<String>>,
    pub warmup: Option<Spanned<String>>,
    pub repeats: Option<Spanned<u32>>,
    pub report_interval: Option<Spanned<String>>,
    pub rate: Option<Spanned<u64>>,
    pub order: Option<Spanned<Word<Order>>>,
    pub point_timeout: Option<Spanned<String>>,
    pub drivers: Option<Spanned<Vec<Spanned<String>>>>,
    /// "auto": search the highest rate meeting `sla`.
    pub rates: Option<Spanned<String>>,
    pub sla: Option<Spanned<toml::Value>>,
    /// Client processes per point: a count or a list (an axis).
    pub clients: Option<Spanned<toml::Value>>,
    /// "sequential" or "paired" (spec/design.rs).
    pub design: Option<Spanned<Word<Design>>>,
    pub slice: Option<Spanned<String>>,
    pub budget: Option<Spanned<String>>,
    /// A duet's CPU isolation: "cpus" (each side its own cores) or "none".
    pub isolate: Option<Spanned<Word<Isolate>>>,
    /// Paired: how often the sides take turns within a round ("250ms"; "off": one turn).
    pub interleave: Option<Spanned<String>>,
    /// Paired: "pairs" (each client worker and its connection's server thread on one CPU)
    /// or "none".
    pub pin: Option<Spanned<Word<Pin>>>,
    /// "perf": an on-CPU profile of each managed server during one window per point.
    pub profile: Option<Spanned<Word<Profile>>>,
}

/// `sla = { p99_ms = 10, threads = 32, max_steps = 8, resolution = 0.05 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSla {
    pub p99_ms: Num,
    pub threads: Option<u32>,
    pub max_steps: Option<u32>,
    pub resolution: Option<Num>,
}

/// A number written as an integer or a float (`p99_ms = 10` or `10.5`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum Num {
    I(i64),
    F(f64),
}

impl Num {
    pub fn get(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

/// `threads = { from = 1, to = 1024, drop = 0.1, p99_ms = 50, resolution = 0.25, max_points = 14 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAuto {
    pub from: Option<u32>,
    pub to: Option<u32>,
    pub drop: Option<Num>,
    pub p99_ms: Option<Num>,
    pub resolution: Option<Num>,
    pub max_points: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTarget {
    pub name: Spanned<String>,
    pub url: Option<Spanned<String>>,
    pub socket: Option<Spanned<String>>,
    pub server: Option<Spanned<toml::Value>>,
    /// `{ seed = 7, lambda = 400, … }`: a model instead of a server.
    pub synthetic: Option<Spanned<toml::Value>>,
    /// `{ kind = "haproxy", target = "direct" }`: a proxy sweepbench starts in front of
    /// another target of the sweep.
    pub proxy: Option<Spanned<toml::Value>>,
    /// TLS for url/socket targets (as the URL's ssl-mode, ssl-ca, ssl-cert, ssl-key,
    /// ssl-cipher).
    pub ssl_mode: Option<Spanned<String>>,
    pub ssl_ca: Option<Spanned<String>>,
    pub ssl_cert: Option<Spanned<String>>,
    pub ssl_key: Option<Spanned<String>>,
    pub ssl_cipher: Option<Spanned<String>>,
    /// The storage engine of this target's tables, instead of `[data] storage_engine`.
    pub storage_engine: Option<Spanned<String>>,
    /// `same_server_as = "direct"`: this url target reaches the same server as that one,
    /// through a proxy the user runs (its cost is the proxy's, not the server's).
    pub same_server_as: Option<Spanned<String>>,
    /// `cores = 8`: the server's CPUs, for `threads = ["2×cores"]` on a target sweepbench
    /// does not start.
    pub cores: Option<Spanned<Num>>,
    /// `memory = "8G"`: the server's memory, for `[data] size = "1.2 × memory"` on a target
    /// sweepbench does not start.
    pub memory: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub name: Spanned<String>,
    pub mycnf: Option<Spanned<String>>,
    #[serde(default)]
    pub vars: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}
