//! What every design that measures in slices shares (paired rounds, duet rounds, turns): a
//! series, a slice's point, a measured slice.

use super::block::Block;
use crate::engine::exec::Observer;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;

/// Time between slices (the report of one, the start of the next), for budgeting.
pub const SLICE_SETUP_S: f64 = 0.1;

pub struct Quiet;
impl Observer for Quiet {}

/// One slice measured, not yet kept (a round gives them indexed by series): its point, its
/// record, and the shares of the host's CPU others took and the
/// hypervisor stole during it (None where they cannot be told).
pub struct Slice {
    pub point: Point,
    pub rec: PointRecord,
    pub shares: Option<(f64, f64)>,
}

impl Slice {
    /// Whether the slice measured something a verdict can use.
    pub fn ok(&self) -> bool {
        self.rec.status == crate::pipeline::results::PointStatus::Ok && self.rec.transactions > 0
    }
}

/// One series of the sweep: target/config, its open block, and the CPUs a duet gives it
/// (empty: any).
pub struct Series {
    pub key: String,
    pub block: Block,
    pub cpus: Vec<usize>,
}

/// The plan's point for one series' slice in round `n`.
pub fn slice_point(cell: &Point, key: &str, n: u32) -> Point {
    let (target, config) = key.split_once('/').expect("series keys are target/config");
    cell.of_series(target, config, n)
}
