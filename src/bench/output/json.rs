//! `--format json`: the final report's figures, p50/p95/p99/p99.9/max, and every interval.

use crate::engine::config::EngineConfig;
use crate::engine::exec::{IntervalStats, RunReport};
use crate::engine::metrics::{self, Counts, LatencySummary};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    pub tool: &'static str,
    pub version: &'static str,
    pub workload: &'static str,
    pub threads: u32,
    pub total_time_s: f64,
    pub totals: Counts,
    pub queries: u64,
    pub tps: f64,
    pub qps: f64,
    pub latency_ms: LatencySummary,
    pub percentile: u32,
    pub percentile_ms: f64,
    pub per_thread_events: Vec<u64>,
    pub intervals: &'a [IntervalStats],
    pub fatal: Option<&'a str>,
    pub unfinished_on_forced_shutdown: Option<u64>,
    pub interrupted: bool,
    pub ignored_errors_by_code: &'a std::collections::BTreeMap<u16, u64>,
    /// Peak resident memory of this process so far, KiB (the client's footprint).
    pub client_max_rss_kb: u64,
}

/// The report as a JSON value (callers may add fields such as checkpoints).
pub fn value(r: &RunReport, o: &EngineConfig) -> serde_json::Value {
    let rate = |n: u64| {
        if r.window_s > 0.0 {
            n as f64 / r.window_s
        } else {
            0.0
        }
    };
    let j = JsonReport {
        tool: "sweepbench",
        version: env!("CARGO_PKG_VERSION"),
        workload: o.workload.name(),
        threads: r.threads,
        total_time_s: r.elapsed_s,
        totals: r.totals,
        queries: r.totals.queries(),
        tps: rate(r.totals.events),
        qps: rate(r.totals.queries()),
        latency_ms: LatencySummary::new(
            &r.hist,
            r.totals.events,
            r.totals.lat_sum_ns,
            r.min_max_ns,
        ),
        percentile: o.percentile,
        percentile_ms: metrics::percentile_ms(&r.hist, o.percentile.max(1) as f64),
        per_thread_events: r.per_thread.iter().map(|c| c.events).collect(),
        intervals: &r.intervals,
        fatal: r.fatal.as_deref(),
        unfinished_on_forced_shutdown: r.unfinished,
        interrupted: r.interrupted,
        ignored_errors_by_code: &r.ignored_by_code,
        client_max_rss_kb: crate::usage::max_rss_kb(),
    };
    serde_json::to_value(&j).expect("report serialises")
}
