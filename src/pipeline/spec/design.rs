//! `[run] design`, `slice` and `budget`: how a sweep's series are measured against each other
//! — one after another (`sequential`), or in rounds of short slices, one per series in a
//! random order, judged pair by pair and run until decided (`paired`).

use super::raw::RawSweep;
use super::target::TargetKind;
use super::{Config, Ctx, RunSpec, SpecError, Target};

/// Rounds a budgeted paired point runs before its first look: fewer leave the t quantile of
/// the interval too wide to decide anything.
pub const MIN_ROUNDS: u32 = 5;
/// A slice when the sweep file does not say.
pub const DEFAULT_SLICE_S: u64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Every point of a series measured on its own, `repeats` times (`order` applies).
    Sequential,
    /// All series up at once; each point measured in rounds of one slice per series.
    Paired,
    /// As paired, but a round's slices run in the same seconds, each series with its own
    /// client threads: what interferes hits both sides of a pair alike.
    Duet,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DesignSpec {
    pub design: Design,
    /// Length of one measured slice, seconds (paired).
    pub slice_s: u64,
    /// Measuring time the whole sweep may spend, seconds: rounds go on until each point is
    /// decided or its share is spent. None: `repeats` rounds per point.
    pub budget_s: Option<u64>,
}

impl Default for DesignSpec {
    fn default() -> Self {
        DesignSpec {
            design: Design::Sequential,
            slice_s: DEFAULT_SLICE_S,
            budget_s: None,
        }
    }
}

impl DesignSpec {
    /// Paired or duet: the series measured together, in rounds.
    pub fn paired(&self) -> bool {
        matches!(self.design, Design::Paired | Design::Duet)
    }

    pub fn duet(&self) -> bool {
        self.design == Design::Duet
    }
}

/// Reads a `[run]` duration: the value (if given), its key and its default.
type Dur<'a> = dyn Fn(&Option<toml::Spanned<String>>, &str, u64) -> Result<u64, SpecError> + 'a;

/// Reads `design`, `slice` and `budget` (durations read by `dur`, as `[run]`'s others are).
pub(super) fn parse(cx: &Ctx<'_>, raw: &RawSweep, dur: &Dur<'_>) -> Result<DesignSpec, SpecError> {
    let r = &raw.run;
    let design = match r.design.as_ref().map(|d| (d.get_ref().as_str(), d.span())) {
        None | Some(("sequential", _)) => Design::Sequential,
        Some(("paired", _)) => Design::Paired,
        Some(("duet", _)) => Design::Duet,
        Some((other, span)) => {
            return Err(cx.err(
                span,
                format!("run.design = '{other}': expected sequential, paired or duet"),
            ))
        }
    };
    let slice_s = dur(&r.slice, "slice", DEFAULT_SLICE_S)?;
    if slice_s == 0 {
        return Err(cx.err(
            r.slice.as_ref().map_or(0..0, |s| s.span()),
            "run.slice must be at least 1s",
        ));
    }
    let budget_s = match &r.budget {
        None => None,
        Some(b) => Some(dur(&r.budget, "budget", 0)?).filter(|_| !b.get_ref().is_empty()),
    };
    if design == Design::Sequential {
        for (key, v) in [("slice", &r.slice), ("budget", &r.budget)] {
            if let Some(v) = v {
                return Err(cx.err(
                    v.span(),
                    format!("run.{key} applies to design = \"paired\"; add it, or remove {key}"),
                ));
            }
        }
    }
    Ok(DesignSpec {
        design,
        slice_s,
        budget_s,
    })
}

/// What a paired sweep needs: two or more series to pair, measured by the native engine in
/// one process per point, on servers that can each hold their own config at once.
pub(super) fn check(
    cx: &Ctx<'_>,
    raw: &RawSweep,
    run: &RunSpec,
    targets: &[Target],
    configs: &[Config],
) -> Result<(), SpecError> {
    if !run.design.paired() {
        return Ok(());
    }
    let span = raw.run.design.as_ref().map_or(0..0, |d| d.span());
    let name = if run.design.duet() { "duet" } else { "paired" };
    let refuse = |why: String| Err(cx.err(span.clone(), format!("run.design = \"{name}\": {why}")));
    let series = targets.len() * configs.len();
    if series < 2 {
        return refuse(format!("pairs series measured in the same rounds, and this sweep has one ({}); add a target or a config, or use design = \"sequential\"", targets[0].name));
    }
    if run.drivers != ["native"] {
        return refuse(
            "slices are measured by the native engine only; remove \"sysbench\" from run.drivers"
                .into(),
        );
    }
    if run.clients != [1] {
        return refuse("slices run in this process: use clients = 1".into());
    }
    if run.auto.is_some() || run.sla.is_some() {
        return refuse("needs a list of thread counts (threads = \"auto\" and rates = \"auto\" search one series at a time)".into());
    }
    if run.rate > 0 {
        return refuse("open-loop points (rate) are not sliced; remove run.rate".into());
    }
    for t in targets {
        match &t.kind {
            TargetKind::External(_) if configs.len() > 1 => {
                return refuse(format!("target '{}' is an external server, which cannot hold {} configs at the same time; pair managed targets, or external targets with one config", t.name, configs.len()));
            }
            TargetKind::Managed(m) if m.restart_per_point() => {
                return refuse(format!("target '{}' restarts per point, which a round of slices cannot; remove restart", t.name));
            }
            _ => {}
        }
    }
    Ok(())
}
