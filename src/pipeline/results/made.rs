//! How a record is made: its identity from the plan's point as it starts, its figures from
//! the engine's report — the only place a `PointRecord` is built from a measurement.

use super::{r4, ErrorCounts, PointRecord};
use crate::engine::exec::RunReport;
use crate::engine::host::{HOST_CONFIG, HOST_TARGET};
use crate::engine::metrics::LatencySummary;
use crate::pipeline::plan::{HostPoint, Point};

/// Now, to the millisecond (as points.csv has always kept it).
fn now_ms() -> chrono::DateTime<chrono::Utc> {
    use chrono::Timelike;
    let now = chrono::Utc::now();
    now.with_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
        .unwrap_or(now)
}

impl PointRecord {
    /// The record of point `p` before it is measured: its identity and when it started.
    pub fn new(run_id: &str, p: &Point, version: &str) -> PointRecord {
        PointRecord {
            run_id: run_id.to_string(),
            point_id: p.id.clone(),
            target: p.target.clone(),
            config: p.config.clone(),
            driver: p.driver.into(),
            server_version: version.to_string(),
            workload: p.workload.name().into(),
            threads: p.threads,
            repeat: p.repeat,
            clients: p.clients,
            sla_step: Some(p.rate > 0),
            started_at: Some(now_ms()),
            ..PointRecord::default()
        }
    }

    /// The record of host point `p` before it is measured: the machine's series, no server.
    pub fn of_host(run_id: &str, p: &HostPoint) -> PointRecord {
        PointRecord {
            run_id: run_id.to_string(),
            point_id: p.id.clone(),
            target: HOST_TARGET.into(),
            config: HOST_CONFIG.into(),
            workload: p.test.name().into(),
            threads: p.threads,
            repeat: p.repeat,
            clients: 1,
            sla_step: Some(false),
            started_at: Some(now_ms()),
            ..PointRecord::default()
        }
    }

    /// The figures of the engine's report `r` — counts, rates over its measured window,
    /// latencies, errors by code — and the client CPU it cost.
    pub fn fill(&mut self, r: &RunReport, cpu_s: f64) {
        let t = &r.totals;
        let lat = LatencySummary::new(&r.hist, t.events, t.lat_sum_ns, r.min_max_ns);
        let rate = |n: u64| {
            if r.window_s > 0.0 {
                n as f64 / r.window_s
            } else {
                0.0
            }
        };
        self.duration_s = r4(r.elapsed_s);
        self.transactions = t.events;
        self.tps = r4(rate(t.events));
        self.queries = t.queries();
        self.qps = r4(rate(t.queries()));
        self.reads = t.reads;
        self.writes = t.writes;
        self.other = t.other;
        self.errors = t.errors;
        self.reconnects = t.reconnects;
        self.lat_min_ms = r4(lat.min_ms);
        self.lat_avg_ms = r4(lat.avg_ms);
        self.lat_p50_ms = Some(r4(lat.p50_ms));
        self.lat_p95_ms = r4(lat.p95_ms);
        self.lat_p99_ms = Some(r4(lat.p99_ms));
        self.lat_p999_ms = Some(r4(lat.p999_ms));
        self.lat_max_ms = r4(lat.max_ms);
        self.client_cpu_s = r4(cpu_s);
        self.errors_by_code = ErrorCounts(r.ignored_by_code.clone());
    }
}
