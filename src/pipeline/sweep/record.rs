//! A point's record: the row of points.csv made from what a run measured, the rule that a
//! point with no event failed, and its per-second samples and histograms on disk.

use crate::engine::exec::RunReport;
use crate::engine::host::{HOST_CONFIG, HOST_TARGET};
use crate::engine::metrics::LatencySummary;
use crate::pipeline::events::Events;
use crate::pipeline::plan::{HostPoint, Point};
use crate::pipeline::results::{r4, PointRecord, PointStatus, RunDir};

/// The share of the host's CPU (all cores) that processes other than this client and the
/// measured server took over `wall_s`, and the share the hypervisor stole, from /proc/stat
/// read before and after; `ours_s` is the CPU this client and the server used meanwhile.
pub(super) fn host_shares(
    h0: Option<crate::usage::HostCpu>,
    h1: Option<crate::usage::HostCpu>,
    wall_s: f64,
    ours_s: f64,
) -> Option<(f64, f64)> {
    let (h0, h1) = (h0?, h1?);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let wall = wall_s.max(1e-3) * cores;
    let others = ((h1.busy_s - h0.busy_s) - ours_s).max(0.0) / wall;
    let steal = (h1.steal_s - h0.steal_s).max(0.0) / wall;
    Some((others.min(1.0), steal.min(1.0)))
}

/// The record's `others_cpu_pct` and `steal_pct` from `host_shares`' fractions.
pub(super) fn set_shares(rec: &mut PointRecord, shares: Option<(f64, f64)>) {
    rec.others_cpu_pct = shares.map(|(o, _)| r4(o * 100.0));
    rec.steal_pct = shares.map(|(_, s)| r4(s * 100.0));
}

/// Now, to the millisecond (as points.csv has always kept it).
fn now_ms() -> chrono::DateTime<chrono::Utc> {
    use chrono::Timelike;
    let now = chrono::Utc::now();
    now.with_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
        .unwrap_or(now)
}

/// The record of point `p` before it is measured: its identity and when it started.
pub(super) fn record(run_id: &str, p: &Point, version: &str) -> PointRecord {
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
pub(super) fn host_record(run_id: &str, p: &HostPoint) -> PointRecord {
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

pub(super) fn fill(rec: &mut PointRecord, r: &RunReport, cpu_s: f64) {
    let t = &r.totals;
    let lat = LatencySummary::new(&r.hist, t.events, t.lat_sum_ns, r.min_max_ns);
    let rate = |n: u64| {
        if r.window_s > 0.0 {
            n as f64 / r.window_s
        } else {
            0.0
        }
    };
    rec.duration_s = r4(r.elapsed_s);
    rec.transactions = t.events;
    rec.tps = r4(rate(t.events));
    rec.queries = t.queries();
    rec.qps = r4(rate(t.queries()));
    rec.reads = t.reads;
    rec.writes = t.writes;
    rec.other = t.other;
    rec.errors = t.errors;
    rec.reconnects = t.reconnects;
    rec.lat_min_ms = r4(lat.min_ms);
    rec.lat_avg_ms = r4(lat.avg_ms);
    rec.lat_p50_ms = Some(r4(lat.p50_ms));
    rec.lat_p95_ms = r4(lat.p95_ms);
    rec.lat_p99_ms = Some(r4(lat.p99_ms));
    rec.lat_p999_ms = Some(r4(lat.p999_ms));
    rec.lat_max_ms = r4(lat.max_ms);
    rec.client_cpu_s = r4(cpu_s);
    rec.errors_by_code = crate::pipeline::results::ErrorCounts(r.ignored_by_code.clone());
}

/// A point that completed no event measured nothing (a table locked for the whole window, a
/// stalled server): failed, never an ok 0 tps that comparisons, history and the scaling fit
/// would take for a figure.
pub(super) fn fail_if_empty(rec: &mut PointRecord) {
    if rec.status == PointStatus::Ok && rec.transactions == 0 {
        rec.status = PointStatus::Failed;
        rec.error = format!(
            "no event completed in the point's {:.1} s: the server answered nothing (locked tables? a stalled server?)",
            rec.duration_s
        );
    }
}

/// A point's per-second samples (intervals.csv) and histograms (.hlog); a failure to write
/// them is a warning, the point's record still counts.
pub(super) fn write_samples(dir: &mut RunDir, ev: &dyn Events, id: &str, r: &RunReport) {
    if let Err(e) = dir.append_intervals(id, &r.intervals) {
        ev.warn(&format!("{id}: per-second samples not written: {e:#}"));
    }
    let seconds: Vec<(f64, &crate::engine::metrics::TotalHist)> = r
        .intervals
        .iter()
        .map(|s| s.t_s)
        .zip(&r.interval_hists)
        .collect();
    if let Err(e) = dir.write_histogram(id, &r.hist, r.elapsed_s, &seconds) {
        ev.warn(&format!("{e:#}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_with_no_event_is_failed_not_ok() {
        let mut rec = PointRecord {
            status: PointStatus::Ok,
            transactions: 0,
            duration_s: 5.0,
            ..PointRecord::default()
        };
        fail_if_empty(&mut rec);
        assert_eq!(rec.status, PointStatus::Failed);
        assert!(
            rec.error
                .starts_with("no event completed in the point's 5.0 s"),
            "{}",
            rec.error
        );
        let mut ok = PointRecord {
            status: PointStatus::Ok,
            transactions: 1,
            ..PointRecord::default()
        };
        fail_if_empty(&mut ok);
        assert_eq!(ok.status, PointStatus::Ok);
    }
}
