//! Each run as its gate judged it (gate.json, written by `run --fail-on-regression`): the
//! newest run's verdicts and outcome, which `history` says as its own (so the two exit codes
//! agree), and every run's outcome over time.

use super::Key;
use crate::pipeline::judge::trend::Newest;
use crate::pipeline::judge::verdict::{Metric, Verdict};
use crate::pipeline::results::nightly::ACCEPTED;
use serde::Deserialize;
use std::path::Path;

/// How one run ended at its gate, for the list of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Night {
    Passed,
    Failed,
    /// The first finished run: nothing to compare with yet (passes).
    First,
    /// Made the reference with `sweepbench accept`, whatever its gate said.
    Accepted,
    /// Run without --fail-on-regression.
    NotGated,
    Interrupted,
    Killed,
}

impl Night {
    pub fn said(self) -> &'static str {
        match self {
            Night::Passed => "passed",
            Night::Failed => "FAILED",
            Night::First => "passed (the first: nothing to compare with)",
            Night::Accepted => "accepted (the reference from then on)",
            Night::NotGated => "not gated (run without --fail-on-regression)",
            Night::Interrupted => "interrupted: not judged",
            Night::Killed => "never ended (killed, or the machine went down): not judged",
        }
    }
}

/// The newest run's gate: how it judged, its outcome, and the verdicts it gave per history
/// series (where its questions are history's: the ratio to a pinned control, or the same
/// series in earlier runs).
pub struct Gated {
    /// What the run was compared with, in the gate's words; None for the first run.
    pub compared: Option<String>,
    pub passed: bool,
    pub accepted: bool,
    /// The flag the run was gated with ("--fail-on-regression").
    pub flag: String,
    pub threshold_pct: Option<f64>,
    /// Each point's verdict and, where the gate withheld it for the host's load, why.
    pub(super) points: Vec<(Key, Newest, String)>,
    /// The pooled answers that failed the gate, as sentences.
    pub pooled: Vec<String>,
}

impl Gated {
    /// What fails history's exit code: the gate failed and the run was not accepted since.
    pub fn failing(&self) -> bool {
        !self.passed && !self.accepted
    }

    pub(super) fn verdict(&self, key: &Key) -> Option<(&Newest, &str)> {
        self.points
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(_, n, why)| (n, why.as_str()))
    }
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    compared: Option<String>,
    passed: Option<bool>,
    #[serde(default)]
    flag: Option<String>,
    #[serde(default)]
    threshold_pct: Option<f64>,
    #[serde(default)]
    control: Option<Control>,
    #[serde(default)]
    comparison: Option<Comparison>,
}

#[derive(Deserialize)]
struct Control {
    control: String,
    points: Vec<RatioPoint>,
    #[serde(default)]
    pooled: Vec<PooledAnswer>,
}

#[derive(Deserialize)]
struct RatioPoint {
    series: String,
    workload: String,
    threads: u32,
    delta_pct: f64,
    lo_pct: f64,
    hi_pct: f64,
    verdict: Verdict,
}

#[derive(Deserialize)]
struct PooledAnswer {
    series: String,
    workload: String,
    verdict: Verdict,
    delta_pct: f64,
    lo_pct: f64,
    hi_pct: f64,
}

#[derive(Deserialize)]
struct Comparison {
    rows: Vec<CompareRow>,
    #[serde(default)]
    pooled: Vec<PooledAnswer>,
}

#[derive(Deserialize)]
struct CompareRow {
    target: String,
    config: String,
    workload: String,
    threads: u32,
    metrics: Vec<CompareMetric>,
    #[serde(default)]
    host_load: Option<HostLoadAnswer>,
}

#[derive(Deserialize)]
struct HostLoadAnswer {
    #[serde(default)]
    withheld: String,
}

#[derive(Deserialize)]
struct CompareMetric {
    metric: Metric,
    verdict: Verdict,
    delta_pct: Option<f64>,
    lo_pct: Option<f64>,
    hi_pct: Option<f64>,
}

fn read(run: &Path) -> Option<File> {
    let text = std::fs::read_to_string(run.join("gate.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The run's gate as gate.json keeps it; None for a run that was not gated (or whose
/// gate.json cannot be read).
pub fn load(run: &Path) -> Option<Gated> {
    let f = read(run)?;
    let passed = f.passed?;
    let mut points = Vec::new();
    let mut pooled = Vec::new();
    let said = |p: &PooledAnswer, against: &str| {
        format!(
            "{} {} against {against}: {} [{}, {}] %, {}",
            p.series,
            p.workload,
            crate::pipeline::judge::verdict::fmt_change(p.delta_pct),
            crate::pipeline::judge::verdict::fmt_change(p.lo_pct),
            crate::pipeline::judge::verdict::fmt_change(p.hi_pct),
            p.verdict.as_str()
        )
    };
    let fails = |v: Verdict| matches!(v, Verdict::Regressed | Verdict::Slower);
    if let Some(c) = &f.control {
        for p in &c.points {
            let key = Key {
                series: format!("{} ÷ {}", p.series, c.control),
                workload: p.workload.clone(),
                threads: p.threads,
                metric: "tps/control",
            };
            points.push((
                key,
                Newest {
                    change_pct: p.delta_pct,
                    lo_pct: p.lo_pct,
                    hi_pct: p.hi_pct,
                    verdict: p.verdict,
                },
                String::new(),
            ));
        }
        for p in c.pooled.iter().filter(|p| fails(p.verdict)) {
            pooled.push(said(p, "the earlier runs, relative to the control"));
        }
    }
    // A comparison with earlier runs of the same series is history's question; one of each
    // series against the baseline in the same run is not, and only its outcome is said.
    if let (Some(c), Some("earlier")) = (&f.comparison, f.kind.as_deref()) {
        for r in &c.rows {
            for m in &r.metrics {
                let metric = match m.metric {
                    Metric::Tps => "tps",
                    Metric::P95 => "p95",
                    _ => continue,
                };
                let (Some(d), Some(lo), Some(hi)) = (m.delta_pct, m.lo_pct, m.hi_pct) else {
                    continue;
                };
                let key = Key {
                    series: format!("{}/{}", r.target, r.config),
                    workload: r.workload.clone(),
                    threads: r.threads,
                    metric,
                };
                points.push((
                    key,
                    Newest {
                        change_pct: d,
                        lo_pct: lo,
                        hi_pct: hi,
                        verdict: m.verdict,
                    },
                    r.host_load
                        .as_ref()
                        .map(|h| h.withheld.clone())
                        .unwrap_or_default(),
                ));
            }
        }
    }
    if let Some(c) = &f.comparison {
        for p in c.pooled.iter().filter(|p| fails(p.verdict)) {
            pooled.push(said(p, "its base"));
        }
    }
    Some(Gated {
        compared: f.compared,
        passed,
        accepted: run.join(ACCEPTED).is_file(),
        flag: f.flag.unwrap_or_else(|| "--fail-on-regression".to_string()),
        threshold_pct: f.threshold_pct,
        points,
        pooled,
    })
}

/// How the run ended at its gate (or before it: `ended`, history's reading of its manifest).
pub fn night(run: &Path, ended: Option<super::Unfinished>) -> Night {
    match ended {
        Some(super::Unfinished::Interrupted) => return Night::Interrupted,
        Some(super::Unfinished::Killed) => return Night::Killed,
        None => {}
    }
    if run.join(ACCEPTED).is_file() {
        return Night::Accepted;
    }
    match read(run) {
        None => Night::NotGated,
        Some(f) if f.compared.is_none() && f.passed == Some(true) => Night::First,
        Some(f) => match f.passed {
            Some(true) => Night::Passed,
            Some(false) => Night::Failed,
            None => Night::NotGated,
        },
    }
}
