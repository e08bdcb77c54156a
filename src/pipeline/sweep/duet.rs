//! A duet's round of the paired design: every series' slice in the same seconds, each on
//! its own connections and client threads (`design = "duet"`).

use super::measure::{settle, Measure, Measured};
use super::runner::Runner;
use super::slices::{slice_point, Quiet, Series};
use super::window::Window;
use crate::engine::exec;
use crate::pipeline::plan::Point;
use crate::pipeline::results::{PointRecord, PointStatus};

/// A duet's round: every series' slice in the same seconds, each on its own connections and
/// client threads. The client's CPU is shared out evenly between the sides (one process
/// measures them all).
pub(super) async fn round(
    r: &mut Runner<'_>,
    cell: &Point,
    series: &mut [Series],
    rigs: &mut [Result<exec::Rig, String>],
    n: u32,
) -> Vec<(Point, PointRecord)> {
    let spec = r.spec;
    let points: Vec<Point> = series
        .iter()
        .map(|s| slice_point(cell, &s.key, n))
        .collect();
    let conns: Vec<_> = series.iter().map(|s| s.block.conn.clone()).collect();
    let srv0: Vec<Option<f64>> = series
        .iter()
        .map(|s| s.block.server_cpu_seconds())
        .collect();
    let mut cost0 = Vec::new();
    for (s, p) in series.iter_mut().zip(&points) {
        cost0.push(s.block.window_start(p).await);
    }
    // Made before the slices start, so each record's started_at is the round's.
    let mut recs: Vec<PointRecord> = points
        .iter()
        .zip(series.iter())
        .map(|(p, s)| PointRecord::new(r.run_id, p, &s.block.version))
        .collect();
    let ctx = r.run_at();
    let cpu0 = crate::usage::self_cpu_seconds();
    let runs = rigs
        .iter_mut()
        .zip(&conns)
        .zip(&points)
        .zip(recs.iter_mut())
        .map(|(((rig, c), p), rec)| async move {
            match (rig, c) {
                (Ok(rig), Some(c)) => {
                    Measure::Open(rig, c)
                        .run(spec, p, Window::Slice, rec, ctx, &mut Quiet)
                        .await
                }
                (Err(e), _) => Err(anyhow::anyhow!("{e}")),
                (_, None) => Err(anyhow::anyhow!("no connection")),
            }
        });
    let mut measured = futures::future::join_all(runs).await;
    // Each side's measurement saw the whole process's CPU over the same seconds.
    let client_cpu = (crate::usage::self_cpu_seconds() - cpu0) / series.len() as f64;
    let mut out = Vec::new();
    for (i, ((p, m), mut rec)) in points
        .into_iter()
        .zip(measured.iter_mut())
        .zip(recs)
        .enumerate()
    {
        if let Ok(Measured::Report { cpu_s, .. }) = m {
            *cpu_s = client_cpu;
        }
        let b = &mut series[i].block;
        rec.status = PointStatus::Failed;
        settle(spec, &mut rec, m);
        if let Ok(Measured::Report { report, .. }) = &*m {
            rec.server_cpu_s = b.server_cpu_since(srv0[i]);
            r.keep_samples(&p.id, report);
        }
        b.end_window(r.run_path, cost0[i].take(), &mut rec, r.ev)
            .await;
        out.push((p, rec));
    }
    out
}
