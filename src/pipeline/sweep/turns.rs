//! An interleaved round of the paired design: each series' slice measured in short turns
//! (`[run] interleave`), the series taking turns in a random order per turn, so that what
//! the machine does for a second or two — a neighbour's burst — falls on every side of the
//! round alike instead of on one slice and not the other. A side's turns add up to one
//! record: its counts, histogram, measured time and CPU summed over the round.

use super::bracket::{Bracket, Meter, Spent};
use super::measure::{Measure, Measured, RunAt};
use super::runner::Runner;
use super::slices::{slice_point, Quiet, Series, Slice};
use super::window::{Seat, Window};
use crate::engine::exec::{self, RunReport};
use crate::engine::workload::rand::Rng;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::SweepSpec;
use std::time::Duration;

/// What one side gathered over the round's turns.
struct Side {
    report: Option<RunReport>,
    error: Option<String>,
    client_cpu_s: f64,
    /// The server's and the host's CPU and the time over this side's turns (summed).
    spent: Spent,
    seat: Seat,
}

impl Side {
    /// What the side's turns measured, added up: one slice's measurement.
    fn measured(self) -> anyhow::Result<Measured> {
        match (self.report, self.error) {
            (_, Some(e)) => Err(anyhow::anyhow!(e)),
            (None, None) => Err(anyhow::anyhow!("no turn was measured")),
            (Some(rep), None) => Ok(Measured::Report {
                report: Box::new(rep),
                cpu_s: self.client_cpu_s,
                skew_ms: None,
            }),
        }
    }

    /// Measures one turn of this side's slice and adds it to what the side gathered. False
    /// when the round must end: the turn failed or was interrupted, or the side cannot
    /// measure.
    #[allow(clippy::too_many_arguments)]
    async fn turn(
        &mut self,
        spec: &SweepSpec,
        s: &Series,
        rig: &mut Result<exec::Rig, String>,
        p: &Point,
        rec: &mut PointRecord,
        turn: Window,
        at: RunAt<'_>,
    ) -> bool {
        if crate::interrupt::requested() {
            self.error.get_or_insert_with(|| "interrupted".into());
            return false;
        }
        let mut how = match Measure::on_rig(&s.block, rig) {
            Ok(how) => how,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        self.seat = how.seat();
        let meter = Meter::start(Some(&s.block));
        let got = how.run(spec, p, turn, rec, at, &mut Quiet).await;
        self.spent.absorb(meter.stop(Some(&s.block)));
        match got {
            Err(e) => {
                self.error = Some(format!("{e:#}"));
                false
            }
            Ok(Measured::Sysbench { .. }) => unreachable!("a turn is the native engine's"),
            Ok(Measured::Report {
                report: rep, cpu_s, ..
            }) => {
                self.client_cpu_s += cpu_s;
                let rep = *rep;
                let stop = rep.fatal.is_some() || rep.interrupted;
                match &mut self.report {
                    None => self.report = Some(rep),
                    Some(sum) => sum.absorb(&rep),
                }
                !stop
            }
        }
    }
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
) -> Vec<Option<Slice>> {
    let spec = r.spec;
    let points: Vec<Point> = series
        .iter()
        .map(|s| slice_point(cell, &s.key, n))
        .collect();
    // One window per side around the whole round, for its counters: between its turns a
    // server is idle but for its own background work, which its transactions of the round
    // are charged with. Its CPU and time are summed over its turns instead.
    let mut windows = Vec::new();
    for (s, p) in series.iter_mut().zip(&points) {
        windows.push(Bracket::open(&mut s.block, p).await);
    }
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
            spent: Spent::nothing(),
            seat: Seat::NONE,
        })
        .collect();
    let at = r.run_at();
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
            let turn = Window::Turn(Duration::from_millis(ms));
            let side = &mut sides[i];
            if !side
                .turn(
                    spec,
                    &series[i],
                    &mut rigs[i],
                    &points[i],
                    &mut recs[i],
                    turn,
                    at,
                )
                .await
            {
                break 'turns;
            }
        }
    }
    let mut out = Vec::new();
    for (i, (((p, mut rec), side), window)) in points
        .into_iter()
        .zip(recs)
        .zip(sides)
        .zip(windows)
        .enumerate()
    {
        let (spent, seat) = (side.spent, side.seat);
        let measured = side.measured();
        let mut to = r.keep_to();
        let shares = window
            .spent(spent)
            .close(
                Some(&mut series[i].block),
                &mut to,
                &mut rec,
                &measured,
                seat,
            )
            .await;
        out.push(Some(Slice {
            point: p,
            rec,
            shares,
        }));
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
