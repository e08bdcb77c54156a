//! How a paired point's round measures one slice per series, chosen once per point: one
//! slice after another in the round's order (and a model's slices, computed), all of them in
//! the same seconds (a duet), or in short turns that alternate between the series
//! (interleaved). Every slice is measured inside `bracket::Bracket`.

use super::bracket::Bracket;
use super::measure::{is_model, Measure};
use super::runner::Runner;
use super::slices::{slice_point, Quiet, Series, Slice};
use super::window::{Seat, Window};
use crate::engine::exec;
use crate::engine::workload::rand::Rng;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::SweepSpec;

/// How a round measures its slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Round {
    /// One slice after another, in the round's order; `computed`: the series are models.
    OneByOne { computed: bool },
    /// Every series' slice in the same seconds, each on its own connections.
    Duet,
    /// Each slice measured in turns of `turn_ms` that alternate between the series.
    Interleaved { turn_ms: u64 },
}

impl Round {
    /// The round the design asks for at `cell`. Every series is a model or none is (the
    /// sweep file's check): a model's slices are computed one after another, on the run's
    /// virtual clock, whatever the design.
    pub fn of(spec: &SweepSpec, cell: &Point, series: &[Series]) -> Round {
        let turn_ms = spec.run.design.turn_ms(cell.workload);
        if series.iter().all(|s| is_model(&s.block)) {
            Round::OneByOne { computed: true }
        } else if spec.run.design.duet() {
            Round::Duet
        } else if turn_ms > 0 {
            Round::Interleaved { turn_ms }
        } else {
            Round::OneByOne { computed: false }
        }
    }

    /// The turn length verdicts.json keeps for the point (0: not interleaved).
    pub fn turn_ms(self) -> u64 {
        match self {
            Round::Interleaved { turn_ms } => turn_ms,
            _ => 0,
        }
    }

    /// Whether the slices are a model's: they take virtual time, not the wall clock's.
    pub fn computed(self) -> bool {
        self == Round::OneByOne { computed: true }
    }

    /// How a round went, for its line: "(one 2 s slice each)".
    pub fn describe(self, slice_s: u64) -> String {
        match self {
            Round::OneByOne { computed: true } => format!("one {slice_s} s slice each, computed"),
            Round::OneByOne { computed: false } => format!("one {slice_s} s slice each"),
            Round::Duet => format!("one {slice_s} s slice, all at once"),
            Round::Interleaved { turn_ms } => {
                format!("{slice_s} s each, in turns of {turn_ms} ms")
            }
        }
    }

    /// Measures round `n` of `cell`: a slice per series, indexed by series. One by one, the
    /// round ends at the first slice that failed or at an interrupt (the slices after it are
    /// None); interleaved, the turns after the first are drawn from `rng`.
    #[allow(clippy::too_many_arguments)]
    pub async fn run(
        self,
        r: &mut Runner<'_>,
        cell: &Point,
        series: &mut [Series],
        rigs: &mut [Result<exec::Rig, String>],
        order: &[usize],
        rng: &mut Rng,
        n: u32,
    ) -> Vec<Option<Slice>> {
        match self {
            Round::OneByOne { .. } => {
                let mut out: Vec<Option<Slice>> = series.iter().map(|_| None).collect();
                for &i in order {
                    if crate::interrupt::requested() {
                        break;
                    }
                    let s = slice(r, cell, &mut series[i], &mut rigs[i], n).await;
                    let ok = s.ok();
                    out[i] = Some(s);
                    if !ok {
                        break;
                    }
                }
                out
            }
            Round::Duet => super::duet::round(r, cell, series, rigs, n).await,
            Round::Interleaved { .. } => {
                super::turns::round(r, cell, series, rigs, order, rng, n).await
            }
        }
    }
}

/// One slice of series `s` in round `n`, on its open connections (or computed by its model).
async fn slice(
    r: &mut Runner<'_>,
    cell: &Point,
    s: &mut Series,
    rig: &mut Result<exec::Rig, String>,
    n: u32,
) -> Slice {
    let p = slice_point(cell, &s.key, n);
    let window = Bracket::open(&mut s.block, &p).await;
    let mut rec = PointRecord::new(r.run_id, &p, &s.block.version);
    let at = r.run_at();
    let (measured, seat) = match Measure::on_rig(&s.block, rig) {
        Ok(mut how) => {
            let m = how
                .run(r.spec, &p, Window::Slice, &mut rec, at, &mut Quiet)
                .await;
            (m, how.seat())
        }
        Err(e) => (Err(anyhow::anyhow!(e)), Seat::NONE),
    };
    let mut to = r.keep_to();
    let shares = window
        .close(Some(&mut s.block), &mut to, &mut rec, &measured, seat)
        .await;
    Slice {
        point: p,
        rec,
        shares,
    }
}
