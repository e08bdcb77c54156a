//! What one measurement of a point is given: its window (a sequential point's duration after
//! its warmup, a paired slice, a duet's turn, the warming of a series' connections), and the
//! one place a point's engine configuration is made from the sweep, the point and the window.

use super::point_grace_s;
use crate::engine::config::{EngineConfig, ForcedShutdown};
use crate::pipeline::plan::Point;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;

/// The time a measurement of a point runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// A sequential point: `[run] duration` after `[run] warmup`.
    Point,
    /// One slice of a paired point: `[run] slice`, no warmup (its connections are warm).
    Slice,
    /// A series' connections warmed before a paired point, not recorded: the warmup (at least
    /// 1 s), no warmup of its own.
    Warm,
    /// One turn of an interleaved round: as long as given (which may be under a second), no
    /// warmup, no per-second samples.
    Turn(std::time::Duration),
}

/// The engine configuration of point `p` measured over `window`, connecting as `conn` says
/// (None: a model, which connects to nothing): the sweep's workload settings, the point's
/// thread count and rate, per-second samples (intervals.csv and the verdicts' noise), and
/// the point timeout as a forced shutdown.
pub fn config(
    spec: &SweepSpec,
    p: &Point,
    window: Window,
    conn: Option<&ConnInfo>,
) -> EngineConfig {
    let mut o = spec.engine_config(
        p.workload,
        p.threads,
        conn.map(ConnInfo::conn_options).unwrap_or_default(),
    );
    o.report_interval_s = 1;
    o.forced_shutdown = ForcedShutdown::Seconds(point_grace_s(spec));
    if p.rate > 0 {
        o.rate = p.rate;
    }
    match window {
        Window::Point => {}
        Window::Slice => (o.time_s, o.warmup_s) = (spec.run.design.slice_s, 0),
        Window::Warm => (o.time_s, o.warmup_s) = (spec.run.warmup_s.max(1), 0),
        Window::Turn(_) => (o.warmup_s, o.report_interval_s) = (0, 0),
    }
    o
}
