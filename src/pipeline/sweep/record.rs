//! What the sweep adds to a point's record (made in results/made.rs): the CPU others took
//! and the hypervisor stole, the rule that a point with no event failed, and its per-second
//! samples and histograms on disk.

use crate::engine::exec::RunReport;
use crate::pipeline::events::Events;
use crate::pipeline::results::{r4, PointRecord, PointStatus, RunDir};

/// The share of the CPUs the run may use (its affinity; the whole host without one) that
/// processes other than this client and the measured server took over `wall_s`, and the share
/// the hypervisor stole, from what /proc/stat counted on those CPUs meanwhile (`host`, the
/// difference of two readings); `ours_s` is the CPU this client and the server used meanwhile.
/// Never over a CPU quota's count: a quota limits time, not which CPUs are shared.
pub(super) fn host_shares(host: crate::usage::HostCpu, wall_s: f64, ours_s: f64) -> (f64, f64) {
    let wall = wall_s.max(1e-3) * f64::from(host.cpus.max(1));
    let others = (host.busy_s - ours_s).max(0.0) / wall;
    let steal = host.steal_s.max(0.0) / wall;
    (others.min(1.0), steal.min(1.0))
}

/// The record's `others_cpu_pct` and `steal_pct` from `host_shares`' fractions.
pub(super) fn set_shares(rec: &mut PointRecord, shares: Option<(f64, f64)>) {
    rec.others_cpu_pct = shares.map(|(o, _)| r4(o * 100.0));
    rec.steal_pct = shares.map(|(_, s)| r4(s * 100.0));
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
