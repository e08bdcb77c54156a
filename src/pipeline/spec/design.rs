//! `[run] design`, `slice` and `budget`: how a sweep's series are measured against each other
//! — one after another (`sequential`), or in rounds of short slices, one per series in a
//! random order, judged pair by pair and run until decided (`paired`).

use super::raw::RawSweep;
use super::target::TargetKind;
pub use super::words::{Design, Isolate, Pin};
use super::{Config, Ctx, RunSpec, SpecError, Target};

/// Rounds a budgeted paired point runs before its first look: fewer leave the t quantile of
/// the interval too wide to decide anything.
pub const MIN_ROUNDS: u32 = 5;
/// CPUs each side of a duet needs before "auto" isolates them: with one, a side's server and
/// client share a core, which on a VM runs a one-thread point several times faster than on
/// two (no cross-core wake-ups) — a different machine from the one measured alone
/// (docs/statistics.md, "A duet").
pub const ISOLATE_MIN_CPUS: usize = 2;
/// A slice when the sweep file does not say.
pub const DEFAULT_SLICE_S: u64 = 2;
/// A turn of an interleaved round when the sweep file does not say, for workloads that write
/// nothing (`interleave = "auto"`, the default). Turns cut a neighbour's noise threefold at
/// 16 threads, and 100 ms turns cut it at 4 threads where 250 ms ones did not (per-round tps
/// noise 2.3–4.8 % against 7–11 %, with the bursty neighbour); but what one side defers — a
/// lazy server's log fsync once a second — then lands in the other side's turns, which
/// exaggerated a durable against lazy change twofold (docs/statistics.md, "Interleaved
/// turns"): a workload that writes keeps its slices in one piece unless the file asks for
/// turns.
pub const DEFAULT_INTERLEAVE_MS: u64 = 100;

/// Where a paired design pins when the sweep file does not say.
pub const DEFAULT_PIN: Pin = Pin::None;
/// The shortest turn: below it the edges of a turn (the events in flight when it ends) weigh
/// too much in its rate.
pub const MIN_INTERLEAVE_MS: u64 = 100;

#[derive(Debug, Clone, serde::Serialize)]
pub struct DesignSpec {
    pub design: Design,
    /// Length of one measured slice, seconds (paired).
    pub slice_s: u64,
    /// Paired (not duet): a round's slices are measured in turns of this many milliseconds,
    /// the sides alternating in a random order per turn, so that what the machine does for a
    /// second or two falls on every side of the round alike. 0: each slice in one turn.
    pub interleave_ms: u64,
    /// `interleave = "auto"`: turns only for workloads that write nothing (`turn_ms`).
    pub interleave_auto: bool,
    /// Paired: where each client worker and the server thread serving its connection are
    /// held, alike on every side (managed servers).
    pub pin: Pin,
    /// Measuring time the whole sweep may spend, seconds: rounds go on until each point is
    /// decided or its share is spent. None: `repeats` rounds per point.
    pub budget_s: Option<u64>,
    /// How the design was chosen: "file" (`[run] design`), or "default" — paired for a sweep
    /// of several series that can be paired, sequential otherwise (`why` says why).
    pub chosen: &'static str,
    /// Why a sweep of several series stayed sequential by default; empty otherwise.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// A duet's CPU isolation (each side's server threads and client workers held to its
    /// own share of the CPUs).
    pub isolate: Isolate,
}

impl Default for DesignSpec {
    fn default() -> Self {
        DesignSpec {
            design: Design::Sequential,
            slice_s: DEFAULT_SLICE_S,
            interleave_ms: DEFAULT_INTERLEAVE_MS,
            interleave_auto: true,
            pin: DEFAULT_PIN,
            budget_s: None,
            chosen: "file",
            why: String::new(),
            isolate: Isolate::Auto,
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

    /// The turns a point of `workload` measures each slice in, milliseconds; 0: one piece (a
    /// duet, `interleave = "off"`, or a workload that writes under `"auto"`).
    pub fn turn_ms(&self, workload: crate::engine::config::WorkloadKind) -> u64 {
        if self.duet() || (self.interleave_auto && workload.writes()) {
            0
        } else {
            self.interleave_ms
        }
    }

    /// Chosen by default rather than named in the sweep file.
    pub fn defaulted(&self) -> bool {
        self.chosen == "default"
    }

    /// Back to one series after another, for a default that cannot hold (`--shard`,
    /// `--resume`, servers that would not fit in memory together); `why` says which.
    pub fn fall_back(&mut self, why: impl Into<String>) {
        self.design = Design::Sequential;
        self.budget_s = None;
        self.why = why.into();
    }

    /// One line for `plan` and the start of a run: the design and, when it was a default,
    /// why, and how to choose the other.
    pub fn said(&self) -> Option<String> {
        match (self.chosen, self.design) {
            ("default", Design::Paired) => Some(
                "design: paired, the default for a sweep of several series (add design = \"sequential\" to [run] to measure one series after another)".into(),
            ),
            ("default", _) if !self.why.is_empty() => {
                Some(format!("design: sequential, as {}", self.why))
            }
            _ => None,
        }
    }
}

/// The measuring time a sequential design would spend on `cells` points of `series` series
/// (each point `repeats` × (warmup + duration)): the budget a default paired design gets, so
/// it never costs more than the design it replaces and stops sooner where it decides.
pub fn default_budget_s(run: &RunSpec, cells: usize, series: usize) -> u64 {
    (cells * series) as u64 * run.repeats.max(1) as u64 * (run.warmup_s + run.duration_s)
}

/// Reads a `[run]` duration: the value (if given), its key and its default.
type Dur<'a> = dyn Fn(&Option<toml::Spanned<String>>, &str, u64) -> Result<u64, SpecError> + 'a;

/// Reads `design`, `slice` and `budget` (durations read by `dur`, as `[run]`'s others are).
pub(super) fn parse(cx: &Ctx<'_>, raw: &RawSweep, dur: &Dur<'_>) -> Result<DesignSpec, SpecError> {
    let r = &raw.run;
    let design = super::words::or(&r.design, Design::Sequential);
    let slice_s = dur(&r.slice, "slice", DEFAULT_SLICE_S)?;
    if slice_s == 0 {
        return Err(cx.err(
            r.slice.as_ref().map_or(0..0, |s| s.span()),
            "run.slice must be at least 1s",
        ));
    }
    let chosen = if r.design.is_some() {
        "file"
    } else {
        "default"
    };
    let budget_s = match &r.budget {
        None => None,
        Some(b) => Some(dur(&r.budget, "budget", 0)?).filter(|_| !b.get_ref().is_empty()),
    };
    if design == Design::Sequential && chosen == "file" {
        for (key, v) in [("slice", &r.slice), ("budget", &r.budget)] {
            if let Some(v) = v {
                return Err(cx.err(
                    v.span(),
                    format!("run.{key} applies to design = \"paired\"; add it, or remove {key}"),
                ));
            }
        }
    }
    let isolate = super::words::or(&r.isolate, Isolate::Auto);
    let interleave_auto = matches!(
        r.interleave.as_ref().map(|v| v.get_ref().trim()),
        None | Some("auto")
    );
    let interleave_ms = match r.interleave.as_ref().map(|v| (v.get_ref().trim(), v.span())) {
        None | Some(("auto", _)) => DEFAULT_INTERLEAVE_MS,
        Some(("off", _)) => 0,
        Some((text, span)) => match parse_ms(text) {
            Some(ms) if ms >= MIN_INTERLEAVE_MS && ms <= slice_s * 1000 => ms,
            _ => {
                return Err(cx.err(
                    span,
                    format!("run.interleave = '{text}': expected a turn from {MIN_INTERLEAVE_MS}ms to the slice ({slice_s}s), such as \"250ms\", \"off\" for one turn per slice, or \"auto\" (turns for workloads that write nothing)"),
                ))
            }
        },
    };
    if let (Some(v), true) = (&r.interleave, chosen == "file" && design != Design::Paired) {
        return Err(cx.err(
            v.span(),
            "run.interleave applies to design = \"paired\" (a duet's sides already share their seconds)",
        ));
    }
    let pin = super::words::or(&r.pin, DEFAULT_PIN);
    if let (Some(v), true) = (&r.pin, chosen == "file" && design != Design::Paired) {
        return Err(cx.err(
            v.span(),
            "run.pin applies to design = \"paired\" (a duet isolates its sides with run.isolate)",
        ));
    }
    if let (Some(v), false) = (&r.isolate, design == Design::Duet) {
        return Err(cx.err(
            v.span(),
            "run.isolate applies to design = \"duet\" (the other designs measure one side at a time)",
        ));
    }
    Ok(DesignSpec {
        design,
        slice_s,
        interleave_ms,
        interleave_auto,
        pin,
        budget_s,
        chosen,
        why: String::new(),
        isolate,
    })
}

/// A turn's length: `100ms`, `0.5s`, `1s`.
fn parse_ms(s: &str) -> Option<u64> {
    let (num, scale) = match s.strip_suffix("ms") {
        Some(n) => (n, 1.0),
        None => (s.strip_suffix('s').unwrap_or(s), 1000.0),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v > 0.0 && v * scale < 1e12).then(|| (v * scale).round() as u64)
}

/// What a paired sweep needs: two or more series to pair, measured by the native engine in
/// one process per point, on servers that can each hold their own config at once. A sweep
/// file that names the design is refused with the reason; without one, a sweep of several
/// series that can be paired is paired, and one that cannot stays sequential (`why`).
pub(super) fn check(
    cx: &Ctx<'_>,
    raw: &RawSweep,
    run: &mut RunSpec,
    local: bool,
    targets: &[Target],
    configs: &[Config],
) -> Result<(), SpecError> {
    let series = targets.len() * configs.len();
    if run.design.defaulted() {
        // Why the default stays sequential, if it does; one series needs no saying.
        let why = if series < 2 {
            Some(format!("this sweep has one series ({})", targets[0].name))
        } else if let Some(why) = unfit(run, local, targets, configs) {
            Some(format!("this sweep {why}"))
        } else if raw.run.order.is_some() {
            Some("run.order arranges a sequential design's repeats".into())
        } else {
            None
        };
        let slice_or_budget = raw
            .run
            .slice
            .as_ref()
            .or(raw.run.budget.as_ref())
            .or(raw.run.interleave.as_ref())
            .map(|v| v.span())
            .or(raw.run.pin.as_ref().map(|v| v.span()));
        match (why, slice_or_budget) {
            (Some(why), Some(span)) => {
                return Err(cx.err(
                    span,
                    format!("run.slice and run.budget apply to the paired design, which this sweep cannot use: {why}"),
                ));
            }
            (Some(why), None) if series >= 2 => run.design.why = why,
            (Some(_), None) => {}
            (None, _) => run.design.design = Design::Paired,
        }
        return Ok(());
    }
    if !run.design.paired() {
        return Ok(());
    }
    let span = raw.run.design.as_ref().map_or(0..0, |d| d.span());
    let name = if run.design.duet() { "duet" } else { "paired" };
    if series < 2 {
        return Err(cx.err(span, format!("run.design = \"{name}\": pairs series measured in the same rounds, and this sweep has one ({}); add a target or a config, or use design = \"sequential\"", targets[0].name)));
    }
    match unfit(run, local, targets, configs) {
        Some(why) => Err(cx.err(span, format!("run.design = \"{name}\": this sweep {why}"))),
        None => Ok(()),
    }
}

/// Why a sweep of several series cannot be measured in rounds of slices, with the remedy;
/// None when it can.
fn unfit(run: &RunSpec, local: bool, targets: &[Target], configs: &[Config]) -> Option<String> {
    if run.driver_in_ids() {
        return Some("is measured by sysbench too, and slices are measured by the native engine only (remove \"sysbench\" from run.drivers)".into());
    }
    if run.clients != [1] {
        return Some("runs several client processes per point, and slices run in this process (use clients = 1)".into());
    }
    if run.auto.is_some() || run.sla.is_some() {
        return Some("searches thread counts or rates one series at a time (threads = \"auto\" or rates = \"auto\"), and rounds need a list of thread counts".into());
    }
    if run.rate > 0 {
        return Some("has open-loop points (run.rate), which are not sliced".into());
    }
    if !local {
        return Some("names an [executor], and slices run in this process".into());
    }
    for t in targets {
        match &t.kind {
            TargetKind::External(_) if configs.len() > 1 => {
                return Some(format!("has the external server '{}', which cannot hold {} configs at the same time (pair managed targets, or external targets with one config)", t.name, configs.len()));
            }
            TargetKind::Managed(m) if m.restart_per_point() => {
                return Some(format!("restarts target '{}' per point, which a round of slices cannot (remove restart)", t.name));
            }
            _ => {}
        }
    }
    None
}
