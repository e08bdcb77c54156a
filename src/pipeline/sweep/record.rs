//! A point's record: the row of points.csv made from what a run measured, the rule that a
//! point with no event failed, and its per-second samples and histograms on disk.

use super::run::say;
use crate::engine::exec::RunReport;
use crate::engine::metrics::LatencySummary;
use crate::pipeline::plan::Point;
use crate::pipeline::results::{r4, PointRecord, PointStatus, RunDir};
use indicatif::ProgressBar;

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
        driver: p.driver.parse().unwrap_or_default(),
        server_version: version.to_string(),
        workload: p.workload.name().into(),
        threads: p.threads,
        repeat: p.repeat,
        clients: p.clients,
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
pub(super) fn write_samples(dir: &mut RunDir, bar: &ProgressBar, p: &Point, r: &RunReport) {
    if let Err(e) = dir.append_intervals(&p.id, &r.intervals) {
        say(
            bar,
            format!("warning: {}: per-second samples not written: {e:#}", p.id),
        );
    }
    let seconds: Vec<(f64, &crate::engine::metrics::TotalHist)> = r
        .intervals
        .iter()
        .map(|s| s.t_s)
        .zip(&r.interval_hists)
        .collect();
    if let Err(e) = dir.write_histogram(&p.id, &r.hist, r.elapsed_s, &seconds) {
        say(bar, format!("warning: {e:#}"));
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
