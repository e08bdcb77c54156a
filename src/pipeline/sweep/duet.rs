//! A duet's round of the paired design: every series' slice in the same seconds, each on
//! its own connections and client threads (`design = "duet"`).

use super::bracket::Bracket;
use super::measure::{Measure, Measured};
use super::runner::Runner;
use super::slices::{slice_point, Quiet, Series, Slice};
use super::window::{Seat, Window};
use crate::engine::exec;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;

/// A duet's round: every series' slice in the same seconds, each on its own connections and
/// client threads, each in its own window. The client's CPU is shared out evenly between the
/// sides (one process measures them all), and what other processes took cannot be told
/// apart from the sides' own servers.
pub(super) async fn round(
    r: &mut Runner<'_>,
    cell: &Point,
    series: &mut [Series],
    rigs: &mut [Result<exec::Rig, String>],
    n: u32,
) -> Vec<Option<Slice>> {
    let spec = r.spec;
    let points: Vec<Point> = series
        .iter()
        .map(|s| slice_point(cell, &s.key, n))
        .collect();
    let mut windows = Vec::new();
    for (s, p) in series.iter_mut().zip(&points) {
        windows.push(Bracket::open(&mut s.block, p).await);
    }
    // Made before the slices start, so each record's started_at is the round's.
    let mut recs: Vec<PointRecord> = points
        .iter()
        .zip(series.iter())
        .map(|(p, s)| PointRecord::new(r.run_id, p, &s.block.version))
        .collect();
    let at = r.run_at();
    let cpu0 = crate::usage::self_cpu_seconds();
    let runs = series
        .iter()
        .zip(rigs.iter_mut())
        .zip(&points)
        .zip(recs.iter_mut())
        .map(|(((s, rig), p), rec)| async move {
            match Measure::on_rig(&s.block, rig) {
                Ok(mut how) => how.run(spec, p, Window::Slice, rec, at, &mut Quiet).await,
                Err(e) => Err(anyhow::anyhow!(e)),
            }
        });
    let mut measured = futures::future::join_all(runs).await;
    // Each side's measurement saw the whole process's CPU over the same seconds.
    let client_cpu = (crate::usage::self_cpu_seconds() - cpu0) / series.len() as f64;
    let stopped: Vec<_> = windows
        .into_iter()
        .zip(series.iter())
        .map(|(w, s)| w.stop(Some(&s.block)))
        .collect();
    let seat = Seat {
        has_client: true,
        alone_here: false,
    };
    let mut out = Vec::new();
    for (i, (((p, m), mut rec), window)) in points
        .into_iter()
        .zip(measured.iter_mut())
        .zip(recs)
        .zip(stopped)
        .enumerate()
    {
        if let Ok(Measured::Report { cpu_s, .. }) = m {
            *cpu_s = client_cpu;
        }
        let mut to = r.keep_to();
        let shares = window
            .close(Some(&mut series[i].block), &mut to, &mut rec, m, seat)
            .await;
        out.push(Some(Slice {
            point: p,
            rec,
            shares,
        }));
    }
    out
}
