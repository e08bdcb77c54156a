//! A sweep's host tests (`workloads = ["cpu"]`): the machine's own scaling curve at the
//! sweep's thread counts, measured by the engine's host runner before any server's point, so
//! the report can draw it beside the servers' and `compare` can tell a slower host.

use super::record::{fail_if_empty, fill, host_record, host_shares, set_shares, write_samples};
use super::run::Runner;
use crate::pipeline::results::PointStatus;

/// Measures the plan's host points in order and keeps their records. False when the run
/// must stop (an interrupt, or records that can no longer be written).
pub(super) async fn run(r: &mut Runner<'_>) -> bool {
    let time_s = r.spec.run.duration_s;
    for p in &r.plan.host {
        if crate::interrupt::requested() {
            r.t.interrupted = true;
            return false;
        }
        r.bar.set_message(p.id.clone());
        let mut rec = host_record(&r.dir.run_id, p);
        let (test, threads) = (p.test, p.threads);
        let (h0, began) = (crate::usage::host_cpu(), std::time::Instant::now());
        let cpu0 = crate::usage::self_cpu_seconds();
        let measured = tokio::task::spawn_blocking(move || test.measure(threads, time_s)).await;
        let cpu_s = crate::usage::self_cpu_seconds() - cpu0;
        match measured {
            Ok(report) => {
                fill(&mut rec, &report, cpu_s);
                rec.status = if report.interrupted {
                    PointStatus::Interrupted
                } else {
                    PointStatus::Ok
                };
                fail_if_empty(&mut rec);
                // What else ran on the machine meanwhile: this client is the test.
                let wall = began.elapsed().as_secs_f64();
                set_shares(
                    &mut rec,
                    host_shares(h0, crate::usage::host_cpu(), wall, cpu_s),
                );
                write_samples(r.dir, r.bar, &p.id, &report);
            }
            Err(e) => {
                rec.status = PointStatus::Failed;
                rec.error = format!("the host test's threads failed: {e}");
            }
        }
        r.t.host += 1;
        if !r.keep(rec, &p.id, 0) {
            return false;
        }
    }
    true
}
