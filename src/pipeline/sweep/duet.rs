//! A duet's round of the paired design: every series' slice in the same seconds, each on
//! its own connections and client threads (`design = "duet"`).

use super::record::{fill, record};
use super::runner::Runner;
use super::slices::{slice_point, status, Quiet, Series};
use super::window::{self, Window};
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
    let opts: Vec<Option<crate::engine::config::EngineConfig>> = series
        .iter()
        .map(|s| {
            s.block
                .conn
                .as_ref()
                .map(|c| window::config(spec, cell, Window::Slice, Some(c)))
        })
        .collect();
    let srv0: Vec<Option<f64>> = series
        .iter()
        .map(|s| s.block.server_cpu_seconds())
        .collect();
    let mut cost0 = Vec::new();
    for (s, p) in series.iter_mut().zip(&points) {
        cost0.push(s.block.window_start(&p.id).await);
    }
    // Made before the slices start, so each record's started_at is the round's.
    let mut recs: Vec<PointRecord> = points
        .iter()
        .zip(series.iter())
        .map(|(p, s)| record(r.run_id, p, &s.block.version))
        .collect();
    let cpu0 = crate::usage::self_cpu_seconds();
    let mut quiet: Vec<Quiet> = series.iter().map(|_| Quiet).collect();
    let runs = rigs
        .iter_mut()
        .zip(&opts)
        .zip(quiet.iter_mut())
        .map(|((rig, o), q)| async move {
            match (rig, o) {
                (Ok(rig), Some(o)) => rig.run(o, q).await.map_err(|e| format!("{e:#}")),
                (Err(e), _) => Err(e.clone()),
                (_, None) => Err("no connection".to_string()),
            }
        });
    let reports = futures::future::join_all(runs).await;
    let client_cpu = (crate::usage::self_cpu_seconds() - cpu0) / series.len() as f64;
    let mut out = Vec::new();
    for (i, ((p, rep), mut rec)) in points
        .into_iter()
        .zip(reports)
        .zip(recs.drain(..))
        .enumerate()
    {
        let b = &mut series[i].block;
        rec.status = PointStatus::Failed;
        match rep {
            Err(e) => rec.error = e,
            Ok(rep) => {
                fill(&mut rec, &rep, client_cpu);
                rec.server_cpu_s = b.server_cpu_since(srv0[i]);
                rec.status = status(&rep, &mut rec);
                r.keep_samples(&p.id, &rep);
            }
        }
        b.end_window(r.run_path, cost0[i].take(), &mut rec, r.ev)
            .await;
        out.push((p, rec));
    }
    out
}
