//! verdicts.json: a run's verdicts per point, judged once and read by the report, the
//! regression gate and `history` — a paired run's (rounds, looks, why it stopped, each candidate
//! against the baseline) written as each point ends, an unpaired run's with several series
//! (`Unpaired`) when it ends.

use crate::pipeline::judge::verdict::paired::PairedJudgement;
use crate::pipeline::judge::verdict::pooled::{PointChange, Pooled};
use crate::pipeline::judge::verdict::{fmt_threshold, Metric, Verdict};
use std::path::Path;

/// One point's paired comparison of one candidate series with the baseline.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    pub series: String,
    pub verdict: Verdict,
    pub metrics: Vec<PairedJudgement>,
    /// For an inconclusive point: the measuring time (seconds) the rounds it needs would take.
    pub budget_needed_s: Option<u64>,
}

/// Why a paired point's rounds ended (verdicts.json's `stopped`, in these words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stopped {
    /// A look found every comparison decided.
    Decided,
    /// Its share of the budget was spent.
    Budget,
    /// Given up at a look: what it lacked needed far more than its share; the rest went to
    /// the next points.
    Futile,
    /// The fixed count of rounds ran (no budget).
    Rounds,
    /// A slice failed.
    Failed,
    /// Interrupted (Ctrl-C, SIGTERM).
    Interrupted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stopped::Decided => "decided",
            Stopped::Budget => "budget",
            Stopped::Futile => "futile",
            Stopped::Rounds => "rounds",
            Stopped::Failed => "failed",
            Stopped::Interrupted => "interrupted",
        })
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Cell {
    pub workload: String,
    pub threads: u32,
    pub rounds: u32,
    pub looks: Vec<u32>,
    /// Why its rounds ended.
    pub stopped: Stopped,
    pub seconds: f64,
    /// Each round's order of series.
    pub orders: Vec<Vec<String>>,
    /// The series, baseline first: the order of `cpu_pct`'s entries.
    #[serde(default)]
    pub series: Vec<String>,
    /// Per round and series: the CPU share (percent of all cores) other processes took during
    /// the slice, and the share stolen by the hypervisor; null where not measured.
    #[serde(default)]
    pub cpu_pct: Vec<Vec<Option<[f64; 2]>>>,
    /// Per series: how its client/server thread pairs were pinned (`run.pin`), or why not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<String>,
    /// The turns this point's slices were measured in, milliseconds (0: one piece; absent in
    /// runs before `interleave = "auto"`, where `interleave_ms` held for every point).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub turn_ms: u64,
    pub comparisons: Vec<Comparison>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Verdicts {
    pub design: String,
    pub method: String,
    pub baseline: String,
    pub threshold_pct: f64,
    pub alpha: f64,
    pub slice_s: u64,
    /// Paired: the turns each slice was measured in, milliseconds (0 or absent: one turn).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interleave_ms: u64,
    /// `interleave = "auto"`: turns only for the points whose workload writes nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleave_auto: bool,
    pub budget_s: Option<u64>,
    /// A duet's CPU isolation, per series ("local/a: server and client on CPU 0"); empty
    /// when the sides shared every CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isolation: Vec<String>,
    pub points: Vec<Cell>,
    /// The answer per candidate series and workload, pooled over the thread counts
    /// (`verdict::pooled`); filled from the points when an older file lacks it.
    #[serde(default)]
    pub pooled: Vec<Pooled>,
}

/// One point's tps change of one candidate: the log ratio to the baseline, its standard error
/// and the rounds it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRatio {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    pub d: f64,
    pub se: f64,
    pub rounds: u32,
    /// The point's own tps verdict.
    pub verdict: Verdict,
}

/// Every judged tps change of `points`: a point's standard error as it kept it, or (an older
/// file) from its interval, confidence and rounds.
pub fn point_ratios(points: &[Cell]) -> Vec<PointRatio> {
    let mut out = Vec::new();
    for c in points {
        for k in &c.comparisons {
            let Some(j) = k.metrics.iter().find(|j| j.metric == Metric::Tps) else {
                continue;
            };
            let interval = (j.delta_pct, j.lo_pct, j.hi_pct, j.confidence);
            let df = j.rounds as f64 - 1.0;
            if let Some((d, se)) =
                crate::pipeline::judge::verdict::pooled::log_change(interval, df, j.se_log)
            {
                out.push(PointRatio {
                    series: k.series.clone(),
                    workload: c.workload.clone(),
                    threads: c.threads,
                    d,
                    se,
                    rounds: j.rounds,
                    verdict: j.verdict,
                });
            }
        }
    }
    out
}

/// Each (candidate, workload) question of `points` with its points' tps changes.
fn questions(points: &[Cell]) -> Vec<(String, String, Vec<PointChange>)> {
    let mut by: std::collections::BTreeMap<(String, String), Vec<PointChange>> = Default::default();
    for p in point_ratios(points) {
        by.entry((p.series, p.workload))
            .or_default()
            .push(PointChange {
                threads: p.threads,
                d: p.d,
                se: p.se,
                verdict: Some(p.verdict),
            });
    }
    by.into_iter().map(|((s, w), p)| (s, w, p)).collect()
}

/// The pooled answers of a paired run's points, judged once where verdicts.json is written.
pub fn pool(points: &[Cell], threshold_pct: f64) -> Vec<Pooled> {
    crate::pipeline::judge::verdict::pooled::answers(&questions(points), threshold_pct)
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// An unpaired run's verdicts (a sequential design with several series): each candidate
/// series' points against the baseline's at the same thread count, every metric of every point
/// one family (verdict's method), with the pooled answers — judged once when the run ended.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Unpaired {
    /// Always "sequential": what tells this file from a paired run's.
    pub design: String,
    pub method: String,
    pub baseline: String,
    pub threshold_pct: f64,
    pub points: Vec<UnpairedPoint>,
    pub pooled: Vec<Pooled>,
}

/// One candidate point's verdict against the baseline's, with one judgement per metric.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct UnpairedPoint {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    pub verdict: Verdict,
    pub metrics: Vec<crate::pipeline::judge::verdict::Judgement>,
}

/// The design an unpaired run's verdicts.json names.
pub const UNPAIRED: &str = "sequential";

impl Unpaired {
    /// The stored verdict of `series` at (workload, threads), if it was judged.
    pub fn point(&self, series: &str, workload: &str, threads: u32) -> Option<&UnpairedPoint> {
        self.points
            .iter()
            .find(|p| p.series == series && p.workload == workload && p.threads == threads)
    }
}

/// Keeps an unpaired run's verdicts as its verdicts.json.
pub fn write_unpaired(run: &Path, v: &Unpaired) -> anyhow::Result<()> {
    crate::pipeline::results::write_atomic(
        &run.join("verdicts.json"),
        serde_json::to_string_pretty(v)?.as_bytes(),
    )
}

/// The design a run's verdicts.json names, without reading the rest.
fn design_of(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Design {
        design: String,
    }
    serde_json::from_str::<Design>(text).ok().map(|d| d.design)
}

/// The run's verdicts.json parsed as `T` when its design is (`unpaired`) or is not an
/// unpaired run's; None when the run has none or it is the other kind.
fn read<T: serde::de::DeserializeOwned>(run: &Path, unpaired: bool) -> anyhow::Result<Option<T>> {
    let path = run.join("verdicts.json");
    match std::fs::read_to_string(&path) {
        Ok(text) if (design_of(&text).as_deref() == Some(UNPAIRED)) == unpaired => {
            serde_json::from_str::<T>(&text)
                .map(Some)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
    }
}

/// An unpaired run's verdicts.json, if it has one (None for a paired run's).
pub fn load_unpaired(run: &Path) -> anyhow::Result<Option<Unpaired>> {
    read(run, true)
}

/// The run's paired verdicts.json, if it has one (None for an unpaired run's).
pub fn load(run: &Path) -> anyhow::Result<Option<Verdicts>> {
    Ok(read::<Verdicts>(run, false)?.map(|mut v| {
        if v.pooled.is_empty() {
            v.pooled = pool(&v.points, v.threshold_pct);
        }
        v
    }))
}

/// Whether the run was paired and kept its verdicts (a readable paired verdicts.json).
pub fn is_paired(run: &Path) -> bool {
    load(run).is_ok_and(|v| v.is_some())
}

/// "−12.3 % [−15.0, −9.4]", or "unbounded" past what a printed number can say.
fn change(j: &PairedJudgement) -> String {
    let num = |x: Option<f64>| x.map_or("?".into(), crate::pipeline::judge::verdict::fmt_change);
    match (j.delta_pct, j.lo_pct, j.hi_pct) {
        (Some(_), Some(_), Some(_)) => format!(
            "{} % [{}, {}]",
            num(j.delta_pct),
            num(j.lo_pct),
            num(j.hi_pct)
        ),
        (Some(_), _, _) => format!("{} %", num(j.delta_pct)),
        _ => "–".into(),
    }
}

/// The verdicts as a Markdown table with the method, for report.md and the terminal.
pub fn markdown(v: &Verdicts) -> String {
    let mut s = format!(
        "{} design: {} s slices{}{}, threshold {}, baseline {}.\n\n",
        if v.design == "duet" { "Duet" } else { "Paired" },
        v.slice_s,
        if v.interleave_ms > 0 && v.interleave_auto {
            format!(
                " in turns of {} ms where the workload writes nothing",
                v.interleave_ms
            )
        } else if v.interleave_ms > 0 {
            format!(" in turns of {} ms", v.interleave_ms)
        } else {
            String::new()
        },
        v.budget_s
            .map(|b| format!(", budget {}", crate::pipeline::plan::format_duration(b)))
            .unwrap_or_default(),
        fmt_threshold(v.threshold_pct),
        v.baseline
    );
    s.push_str("| point | series | verdict | rounds | base → cand tps (geometric means) | Δ tps [interval] | Δ p95 [interval] | noise paired / unpaired | note |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for c in &v.points {
        for k in &c.comparisons {
            let m = |name: &str| k.metrics.iter().find(|j| j.metric.name() == name);
            let tps = m("tps");
            let cols = tps.map_or(
                ("–".to_string(), "–".to_string(), "–".to_string()),
                |j| {
                    (
                        match (j.base, j.cand) {
                            (Some(b), Some(c)) => format!("{b:.2} → {c:.2}"),
                            _ => "–".into(),
                        },
                        change(j),
                        match (j.noise_pct, j.unpaired_noise_pct) {
                            (Some(a), Some(b)) => format!("{a:.1} % / {b:.1} %"),
                            _ => "–".into(),
                        },
                    )
                },
            );
            let p95 = m("p95").map_or("–".into(), change);
            let note = k
                .metrics
                .iter()
                .filter(|j| j.judged)
                .filter_map(|j| {
                    j.raw_delta_pct.map(|raw| {
                        format!(
                            "{}: Δ at equal CPU taken by other processes (before: {raw:+.1} %)",
                            j.metric.name()
                        )
                    })
                })
                .chain(
                    k.metrics
                        .iter()
                        .filter(|j| j.judged && !j.note.is_empty())
                        .map(|j| format!("{}: {}", j.metric.name(), j.note)),
                )
                .chain(k.budget_needed_s.map(|b| {
                    format!(
                        "about {} of measuring would decide it",
                        crate::pipeline::plan::format_duration(b)
                    )
                }))
                .collect::<Vec<_>>()
                .join("; ");
            s.push_str(&format!(
                "| {} t{} | {} | **{}** | {} ({}) | {} | {} | {} | {} | {} |\n",
                c.workload,
                c.threads,
                k.series,
                k.verdict,
                c.rounds,
                c.stopped,
                cols.0,
                cols.1,
                p95,
                cols.2,
                note
            ));
        }
    }
    s.push_str(&format!("\n{}\n", v.method));
    s
}

/// Whether any point's verdict fails the gate (`fail_on`).
pub fn any_failing(v: &Verdicts, fail_on: crate::pipeline::judge::verdict::FailOn) -> bool {
    v.points
        .iter()
        .flat_map(|c| &c.comparisons)
        .any(|k| fail_on.fails(k.verdict))
}
