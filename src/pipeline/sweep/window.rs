//! What one measurement of a point is given: its window (a sequential point's duration after
//! its warmup, a paired slice, a duet's turn, the warming of a series' connections), the
//! one place a point's engine configuration is made from the sweep, the point and the window,
//! and where its client sat (`Seat`).

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
    o.wl.table_size = spec.table_size_of(&p.target);
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

/// How a measurement's client sat beside the server: what its window can say of the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seat {
    /// The client's CPU is worth a column (`client_cpu_pct`): not a model's.
    pub has_client: bool,
    /// The client and the server were the only measured processes on this host, so what the
    /// rest of the host took meanwhile can be told from /proc/stat (not a duet's side, whose
    /// neighbours are measured too; not pods or a model).
    pub alone_here: bool,
}

impl Seat {
    /// A window that measured nothing: no CPU to tell.
    pub const NONE: Seat = Seat {
        has_client: false,
        alone_here: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::spec::size::Sized;

    /// A sized target's measurements read its own rows (what `[data] size` came to on it), a
    /// target not yet sized `table_size`.
    #[test]
    fn a_points_rows_are_its_targets() {
        let text = "name = \"s\"\n[data]\nsize = \"1G\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"a\"\nserver = {}\n[[targets]]\nname = \"b\"\nserver = {}\n";
        let spec = SweepSpec::parse(std::path::Path::new("s.toml"), text).unwrap();
        spec.data.sized.set(
            "a",
            Sized {
                asked_bytes: 1 << 30,
                rows: 4_321_000,
                bytes_per_row: 248.0,
                measured_bytes: 1 << 30,
            },
        );
        let plan = crate::pipeline::plan::Plan::build(&spec, &[]);
        let rows = |t: &str| {
            let p = plan.points.iter().find(|p| p.target == t).unwrap();
            config(&spec, p, Window::Point, None).wl.table_size
        };
        assert_eq!(rows("a"), 4_321_000);
        assert_eq!(rows("b"), spec.data.table_size);
    }
}
