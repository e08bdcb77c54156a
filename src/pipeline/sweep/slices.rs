//! What every design that measures in slices shares (paired rounds, duet rounds, turns): a
//! series, a slice's point, the CPU others took during it.

use super::block::Block;
use crate::engine::exec::Observer;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;

/// Time between slices (the report of one, the start of the next), for budgeting.
pub const SLICE_SETUP_S: f64 = 0.1;

pub struct Quiet;
impl Observer for Quiet {}

/// One slice measured: the series' index, its point, its record and the CPU shares others
/// took during it (`others_share`).
pub type Sliced = (usize, Point, PointRecord, Option<(f64, f64)>);

/// One series of the sweep: target/config, its open block, and the CPUs a duet gives it
/// (empty: any).
pub struct Series {
    pub key: String,
    pub block: Block,
    pub cpus: Vec<usize>,
}

/// The share of the host's CPU (all cores) that processes other than this client and the
/// measured server took during a slice, and the share the hypervisor stole.
pub fn others_share(
    h0: Option<crate::usage::HostCpu>,
    h1: Option<crate::usage::HostCpu>,
    rec: &PointRecord,
) -> Option<(f64, f64)> {
    let ours = rec.client_cpu_s + rec.server_cpu_s?;
    super::record::host_shares(h0, h1, rec.duration_s, ours)
}

/// The plan's point for one series' slice in round `n`.
pub fn slice_point(cell: &Point, key: &str, n: u32) -> Point {
    let (target, config) = key.split_once('/').expect("series keys are target/config");
    cell.of_series(target, config, n)
}
