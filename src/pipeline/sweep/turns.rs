//! An interleaved round of the paired design: each series' slice measured in short turns
//! (`[run] interleave`), the series taking turns in a random order per turn, so that what
//! the machine does for a second or two — a neighbour's burst — falls on every side of the
//! round alike instead of on one slice and not the other. A side's turns add up to one
//! record: its counts, histogram, measured time and CPU summed over the round.

use super::measure::{settle, Measure, Measured};
use super::runner::Runner;
use super::slices::{others_share, slice_point, Quiet, Series, Sliced};
use super::window::Window;
use crate::engine::exec::{self, RunReport};
use crate::engine::workload::rand::Rng;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::results::{r4, PointStatus};
use crate::usage::HostCpu;
use std::time::Duration;

/// What one side gathered over the round's turns.
struct Side {
    report: Option<RunReport>,
    error: Option<String>,
    client_cpu_s: f64,
    server_cpu_s: Option<f64>,
    /// The host's CPU over this side's turns (summed), for the share others took.
    host: Option<HostCpu>,
}

/// The turns a slice of `slice_s` takes at turns of `turn_ms` (the last may be shorter).
pub(super) fn turns(slice_s: u64, turn_ms: u64) -> Vec<u64> {
    let total = slice_s * 1000;
    let n = total.div_ceil(turn_ms.max(1));
    (0..n).map(|k| turn_ms.min(total - k * turn_ms)).collect()
}

/// Measures round `n` of `cell`: every series' slice in turns, the first turn in `first`'s
/// order and each later one in an order drawn from `rng`. Returns one measurement per
/// series, in series order. A side whose turn fails (or is interrupted) ends the round.
pub(super) async fn round(
    r: &mut Runner<'_>,
    cell: &Point,
    series: &mut [Series],
    rigs: &mut [Result<exec::Rig, String>],
    first: &[usize],
    rng: &mut Rng,
    n: u32,
) -> Vec<Sliced> {
    let spec = r.spec;
    let points: Vec<Point> = series
        .iter()
        .map(|s| slice_point(cell, &s.key, n))
        .collect();
    // Made before the first turn, so each record's started_at is the round's.
    let mut recs: Vec<_> = points
        .iter()
        .zip(series.iter())
        .map(|(p, s)| PointRecord::new(r.run_id, p, &s.block.version))
        .collect();
    let mut sides: Vec<Side> = series
        .iter()
        .map(|_| Side {
            report: None,
            error: None,
            client_cpu_s: 0.0,
            server_cpu_s: Some(0.0),
            host: Some(HostCpu::default()),
        })
        .collect();
    // The counters around the whole round: between its turns a server is idle but for its
    // own background work, which its transactions of the round are charged with.
    let mut cost0 = Vec::new();
    for (s, p) in series.iter_mut().zip(&points) {
        cost0.push(s.block.window_start(p).await);
    }
    let ctx = r.run_at();
    let mut order = first.to_vec();
    'turns: for (k, ms) in turns(
        spec.run.design.slice_s,
        spec.run.design.turn_ms(cell.workload),
    )
    .into_iter()
    .enumerate()
    {
        if k > 0 {
            for i in (1..order.len()).rev() {
                order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
        }
        for &i in &order {
            if crate::interrupt::requested() {
                sides[i].error.get_or_insert_with(|| "interrupted".into());
                break 'turns;
            }
            let rig = match &mut rigs[i] {
                Ok(rig) => rig,
                Err(e) => {
                    sides[i].error = Some(e.clone());
                    break 'turns;
                }
            };
            let b = &series[i].block;
            let c = b.conn.clone().expect("an open block has a connection");
            let (h0, srv0) = (crate::usage::host_cpu(), b.server_cpu_seconds());
            let turn = Window::Turn(Duration::from_millis(ms));
            let got = Measure::Open(rig, &c)
                .run(spec, &points[i], turn, &mut recs[i], ctx, &mut Quiet)
                .await;
            let side = &mut sides[i];
            // Summed over the turns; unknown from the first turn that could not read it.
            side.server_cpu_s = match (side.server_cpu_s, srv0, b.server_cpu_seconds()) {
                (Some(s), Some(a), Some(z)) => Some(s + z - a),
                _ => None,
            };
            side.host = match (side.host, h0, crate::usage::host_cpu()) {
                (Some(h), Some(a), Some(z)) => Some(HostCpu {
                    busy_s: h.busy_s + z.busy_s - a.busy_s,
                    steal_s: h.steal_s + z.steal_s - a.steal_s,
                }),
                _ => None,
            };
            match got {
                Err(e) => {
                    side.error = Some(format!("{e:#}"));
                    break 'turns;
                }
                Ok(Measured::Sysbench { .. }) => unreachable!("a turn is the native engine's"),
                Ok(Measured::Report {
                    report: rep, cpu_s, ..
                }) => {
                    side.client_cpu_s += cpu_s;
                    let rep = *rep;
                    let stop = rep.fatal.is_some() || rep.interrupted;
                    match &mut side.report {
                        None => side.report = Some(rep),
                        Some(sum) => sum.absorb(&rep),
                    }
                    if stop {
                        break 'turns;
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, ((p, mut rec), side)) in points
        .into_iter()
        .zip(recs.drain(..))
        .zip(sides)
        .enumerate()
    {
        rec.status = PointStatus::Failed;
        let mut cpu = None;
        match (side.report, side.error) {
            (_, Some(e)) => rec.error = e,
            (None, None) => rec.error = "no turn was measured".into(),
            (Some(rep), None) => {
                let m = Ok(Measured::Report {
                    report: Box::new(rep),
                    cpu_s: side.client_cpu_s,
                    skew_ms: None,
                });
                settle(spec, &mut rec, &m);
                rec.server_cpu_s = side.server_cpu_s.map(r4);
                cpu = others_share(Some(HostCpu::default()), side.host, &rec);
                if let Ok(Measured::Report { report, .. }) = &m {
                    r.keep_samples(&p.id, report);
                }
            }
        }
        let b = &mut series[i].block;
        b.end_window(r.run_path, cost0[i].take(), &mut rec, r.ev)
            .await;
        out.push((i, p, rec, cpu));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::turns;

    #[test]
    fn a_slice_is_cut_into_turns_that_add_up_to_it() {
        assert_eq!(turns(2, 250), vec![250; 8]);
        assert_eq!(turns(1, 300), vec![300, 300, 300, 100]);
        assert_eq!(turns(2, 2000), vec![2000]);
        assert_eq!(turns(3, 1000).iter().sum::<u64>(), 3000);
    }
}
