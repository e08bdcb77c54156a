//! The report's "Per node" section: for a series whose target names several endpoints (a
//! Galera cluster), what each node did at each workload and thread count, from its own
//! counters in status.csv ("node2/…", "127.0.0.1:3307/…"): its share of the bytes the
//! clients sent (where the load went), its certification failures and brute-force aborts
//! (the conflicts), and the time flow control paused it. Summed over the repeats.

use crate::pipeline::results::cost::CostRow;
use crate::pipeline::results::PointRecord;
use std::collections::BTreeMap;

#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeRow {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    pub node: String,
    /// Percent of the clients' bytes (Bytes_received) this node took.
    pub share_pct: f64,
    pub cert_failures: u64,
    pub bf_aborts: u64,
    pub flow_paused_ms: f64,
}

/// One row per node of each multi-endpoint series' point, in series, workload, threads and
/// node order; empty when no target has several endpoints.
pub fn rows(records: &[PointRecord], costs: &[CostRow]) -> Vec<NodeRow> {
    let of: BTreeMap<&str, &PointRecord> =
        records.iter().map(|r| (r.point_id.as_str(), r)).collect();
    // (series, workload, threads) → node → [bytes, cert, bf, paused ns]
    type Key = (String, String, u32);
    let mut acc: BTreeMap<Key, BTreeMap<String, [u64; 4]>> = BTreeMap::new();
    for c in costs {
        let Some((node, counter)) = c.counter.split_once('/') else {
            continue;
        };
        let slot = match counter {
            "Bytes_received" => 0,
            "wsrep_local_cert_failures" => 1,
            "wsrep_local_bf_aborts" => 2,
            "wsrep_flow_control_paused_ns" => 3,
            _ => continue,
        };
        let Some(r) = of.get(c.point_id.as_str()) else {
            continue;
        };
        let key = (
            format!("{}/{}", r.target, r.config),
            r.workload.clone(),
            r.threads,
        );
        acc.entry(key)
            .or_default()
            .entry(node.to_string())
            .or_default()[slot] += c.delta;
    }
    let mut out = Vec::new();
    for ((series, workload, threads), nodes) in acc {
        let total: u64 = nodes.values().map(|v| v[0]).sum();
        for (node, v) in nodes {
            out.push(NodeRow {
                series: series.clone(),
                workload: workload.clone(),
                threads,
                node,
                share_pct: if total > 0 {
                    100.0 * v[0] as f64 / total as f64
                } else {
                    0.0
                },
                cert_failures: v[1],
                bf_aborts: v[2],
                flow_paused_ms: v[3] as f64 / 1e6,
            });
        }
    }
    out
}
