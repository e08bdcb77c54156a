//! The options that are numbers within bounds (`--rand-pareto-h`, the per-event counts,
//! `--rand-spec-iter`, `--percentile`): each a type whose `TryFrom` refuses what sysbench
//! would misrun on, so the command line and a sweep file refuse it alike.

/// `--rand-pareto-h`: the pareto distribution's h, strictly between 0 and 1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct ParetoH(f64);

impl TryFrom<f64> for ParetoH {
    type Error = String;
    fn try_from(h: f64) -> Result<ParetoH, String> {
        if 0.0 < h && h < 1.0 {
            Ok(ParetoH(h))
        } else {
            Err("must be between 0 and 1".into())
        }
    }
}

impl From<ParetoH> for f64 {
    fn from(h: ParetoH) -> f64 {
        h.0
    }
}

/// The most times one event may repeat something: statements of one kind, random points,
/// ranges. sysbench sets no bound; beyond a million, one event would outlast any run (and
/// `--mysql-dry-run` would spin on it).
pub const MAX_PER_EVENT: u32 = 1_000_000;

/// A per-event count (`--point-selects`, `--random-points`, …), 0 to `MAX_PER_EVENT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct PerEvent(u32);

impl TryFrom<u32> for PerEvent {
    type Error = String;
    fn try_from(n: u32) -> Result<PerEvent, String> {
        if n <= MAX_PER_EVENT {
            Ok(PerEvent(n))
        } else {
            Err(format!("{n} is more than {MAX_PER_EVENT} per event"))
        }
    }
}

impl From<PerEvent> for u32 {
    fn from(n: PerEvent) -> u32 {
        n.0
    }
}

/// The most uniform draws `--rand-type=special`/`gaussian` averages per random number
/// (sysbench's default is 12): each costs every random number it makes.
pub const MAX_SPEC_ITER: u32 = 1_000;

/// `--rand-spec-iter`, 1 to `MAX_SPEC_ITER` (0 is taken as 1, as sysbench does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct SpecIter(u32);

impl TryFrom<u32> for SpecIter {
    type Error = String;
    fn try_from(n: u32) -> Result<SpecIter, String> {
        if n <= MAX_SPEC_ITER {
            Ok(SpecIter(n.max(1)))
        } else {
            Err(format!(
                "{n} is more than {MAX_SPEC_ITER} draws per random number"
            ))
        }
    }
}

impl From<SpecIter> for u32 {
    fn from(n: SpecIter) -> u32 {
        n.0
    }
}

/// `--percentile`: the latency percentile reported, 1–100, or 0 for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct Percentile(u32);

impl TryFrom<u32> for Percentile {
    type Error = String;
    fn try_from(p: u32) -> Result<Percentile, String> {
        if p <= 100 {
            Ok(Percentile(p))
        } else {
            Err("must be between 1 and 100, or 0 to disable".into())
        }
    }
}

impl From<Percentile> for u32 {
    fn from(p: Percentile) -> u32 {
        p.0
    }
}
