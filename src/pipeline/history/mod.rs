//! `sweepbench history`: every run of a sweep, point by point (each target/config, workload
//! and thread count; tps and p95), the shifts in each series, and a verdict on the newest run
//! — read and judged into one `HistoryModel` here, said by render.rs (text, HTML) as compare
//! is said by compare/render.rs.

mod gated;
mod render;

use crate::engine::metrics::median;
use crate::pipeline::judge::host_load;
use crate::pipeline::judge::trend::{self, Newest};
use crate::pipeline::judge::verdict::changepoint::{self, Shift};
use crate::pipeline::judge::verdict::Verdict;
use crate::pipeline::judge::verdict::ALPHA;
use crate::pipeline::results::nightly::runs;
use crate::pipeline::results::{load_curve_points, PointRecord, PointStatus};
use anyhow::bail;
use std::collections::BTreeMap;
use std::path::Path;

/// Series longer than this are judged on their newest runs only (E-divisive is quadratic).
const MAX_RUNS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    series: String,
    workload: String,
    threads: u32,
    /// "tps" or "p95"; "tps/control" or "p95/control" for a paired run's ratio of a series
    /// to its baseline.
    metric: &'static str,
}

impl Key {
    fn name(&self) -> String {
        format!(
            "{}/{}/t{} {}",
            self.series, self.workload, self.threads, self.metric
        )
    }
}

/// One series over the runs: the median of each run's ok repeats, None where it did not run.
struct Trend {
    key: Key,
    values: Vec<Option<f64>>,
    /// Each run's host load at the point (`host_load::side_load`), None where unknown or for
    /// a ratio to a control (measured in the same rounds, immune to it).
    loads: Vec<Option<f64>>,
}

pub struct Outcome {
    pub text: String,
    /// The newest run moved a series for the worse beyond the threshold.
    pub newest_regressed: bool,
}

/// A sweep's runs as history reads and judges them: what render.rs says.
pub struct HistoryModel {
    pub sweep_dir: std::path::PathBuf,
    /// The runs judged, oldest first (their directories' names).
    pub ids: Vec<String>,
    /// Earlier runs left out, each a warning line.
    pub skipped: Vec<String>,
    /// One per series the newest run has.
    pub rows: Vec<Row>,
    pub shifts: Vec<ShiftRow>,
    /// Series the newest run was judged in, and the two-sided level each was judged at.
    pub judged: usize,
    pub level: f64,
    pub threshold_pct: f64,
    /// Series whose newest run regressed: the servers' (what fails), the host's own tests'.
    pub regressed: Vec<String>,
    pub host_regressed: Vec<String>,
    pub improved: usize,
    /// A young tps/control ratio was judged against paired intervals.
    pub young_ratios: bool,
    /// How the machine changed under the newest run.
    pub host_changes: Vec<String>,
    /// The newest run as its gate judged it: its verdicts replace the trend's where they
    /// answer the same question, and its outcome is history's exit code.
    pub gate: Option<gated::Gated>,
    /// Why the newest run is not judged: it did not end by itself.
    pub newest_unfinished: Option<&'static str>,
    /// Every run's outcome at its gate, oldest first.
    pub nights: Vec<gated::Night>,
    /// Every series' values per run, for the page's charts.
    trends: Vec<Trend>,
}

/// One series' newest run.
pub struct Row {
    pub name: String,
    /// Runs the series has.
    pub runs: usize,
    pub newest: f64,
    /// Its verdict with the change and interval; None: too few earlier runs.
    pub verdict: Option<Newest>,
    /// One of the host's own tests.
    pub host: bool,
    /// The verdict is the newest run's gate's (else the trend's).
    pub gated: bool,
    /// Why the trend's verdict was not given: the host was busier in the newest run, or in
    /// the earlier ones, by enough to make it (`host_load::judge`); empty when it was.
    pub withheld: String,
    key: Key,
}

/// A shift found in a series: where, by how much, at what p.
pub struct ShiftRow {
    pub name: String,
    pub run: String,
    pub change_pct: f64,
    pub p: f64,
}

fn series_of(r: &PointRecord) -> String {
    crate::pipeline::report::series_of(r)
}

/// Each compared series' paired ratio to the baseline (candidate / control, from the
/// verdicts' geometric means or their CPU-adjusted change), per point and metric.
fn control_ratios(v: &crate::pipeline::judge::verdicts_file::Verdicts) -> Vec<(Key, f64)> {
    let mut out = Vec::new();
    for c in &v.points {
        for k in &c.comparisons {
            for (metric, name) in [
                (crate::pipeline::judge::verdict::Metric::Tps, "tps/control"),
                (crate::pipeline::judge::verdict::Metric::P95, "p95/control"),
            ] {
                let Some(d) = k.metrics.iter().find(|j| j.metric == metric) else {
                    continue;
                };
                let Some(delta) = d.delta_pct.filter(|x| x.is_finite()) else {
                    continue;
                };
                let ratio = 1.0 + delta / 100.0;
                if ratio > 0.0 {
                    out.push((
                        Key {
                            series: format!("{} ÷ {}", k.series, v.baseline),
                            workload: c.workload.clone(),
                            threads: c.threads,
                            metric: name,
                        },
                        ratio,
                    ));
                }
            }
        }
    }
    out
}

/// The newest night's tps ratio to the control at `key` judged against the earlier nights'
/// paired intervals, for a ratio with too few earlier nights for a prediction interval.
fn early_ratio(o: &crate::pipeline::judge::control::Outcome, key: &Key) -> Option<Newest> {
    if key.metric != "tps/control" {
        return None;
    }
    let c = o.points.iter().find(|p| {
        key.series == format!("{} ÷ {}", p.series, o.control)
            && p.workload == key.workload
            && p.threads == key.threads
    })?;
    Some(Newest {
        change_pct: c.delta_pct,
        lo_pct: c.lo_pct,
        hi_pct: c.hi_pct,
        verdict: c.verdict,
    })
}

/// The date of a run directory named yyyymmddTHHMMSSZ, as "2026-11-30 02:00".
fn date_of(id: &str) -> String {
    chrono::NaiveDateTime::parse_from_str(id.get(..16).unwrap_or(id), "%Y%m%dT%H%M%SZ")
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| id.to_string())
}

pub fn history(
    sweep_dir: &Path,
    threshold_pct: f64,
    html: Option<&Path>,
) -> anyhow::Result<Outcome> {
    let mut dirs = runs(sweep_dir)?;
    if dirs.is_empty() {
        bail!("no runs under {}", sweep_dir.display());
    }
    if dirs.len() > MAX_RUNS {
        dirs.drain(..dirs.len() - MAX_RUNS);
    }
    let ids: Vec<String> = dirs
        .iter()
        .map(|d| {
            d.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    // How each run ended, read once from its manifest: its baselines, its line in the list
    // of runs and, for the newest, whether it is judged at all.
    let ended: Vec<Option<Unfinished>> = dirs.iter().map(|d| unfinished(d)).collect();
    let Runs {
        per_run,
        loads,
        paired,
        skipped,
    } = read_runs(&dirs, &ids, &ended)?;
    // Before a ratio has MIN_HISTORY earlier nights, the newest is judged against the earlier
    // nights' own paired intervals, as the nightly's gate judges it (judge::control).
    let early = early_judgement(&paired, threshold_pct);
    let trends: Vec<Trend> = per_run
        .into_iter()
        .map(|(key, values)| {
            // A ratio to a control was measured beside it in the same rounds.
            let loads = if key.metric.ends_with("/control") {
                vec![None; values.len()]
            } else {
                loads
                    .get(&(key.series.clone(), key.workload.clone(), key.threads))
                    .cloned()
                    .unwrap_or_else(|| vec![None; values.len()])
            };
            Trend { key, values, loads }
        })
        .collect();
    let newest = dirs.len() - 1;
    if !trends.iter().any(|t| t.values[newest].is_some()) {
        bail!(
            "the newest run {} has no ok point: nothing to judge (did it fail, or was it cut short?)",
            dirs[newest].display()
        );
    }
    // The newest run is judged in every series it has; one false-alarm budget for all.
    let judged = trends
        .iter()
        .filter(|t| t.values[newest].is_some())
        .count()
        .max(1);
    let level = ALPHA / judged as f64;
    let mut j = judge_trends(
        &trends,
        &ids,
        newest,
        (threshold_pct, level),
        early.as_ref(),
    );
    let newest_unfinished = ended[newest].map(Unfinished::said);
    // A run that did not end is judged by nobody, as its gate never ran.
    let gate = if newest_unfinished.is_some() {
        j.unjudge();
        None
    } else {
        gated::load(&dirs[newest])
    };
    if let Some(g) = &gate {
        j.take_gate(g);
    }
    let nights = dirs
        .iter()
        .zip(&ended)
        .map(|(d, e)| gated::night(d, *e))
        .collect();
    // A slower VM is not a slower server: say when the machine changed under the newest run.
    let mut host_changes = Vec::new();
    if newest > 0 {
        if let (Some(a), Some(b)) = (
            crate::pipeline::results::load_host(&dirs[newest - 1]),
            crate::pipeline::results::load_host(&dirs[newest]),
        ) {
            host_changes = crate::pipeline::results::host::differences(&a, &b);
        }
    }
    let model = HistoryModel {
        sweep_dir: sweep_dir.to_path_buf(),
        young_ratios: early.is_some() && trends.iter().any(|t| t.key.metric == "tps/control"),
        ids,
        skipped,
        rows: j.rows,
        shifts: j.shifts,
        judged,
        level,
        threshold_pct,
        regressed: j.worse,
        host_regressed: j.host_worse,
        improved: j.better,
        host_changes,
        gate,
        newest_unfinished,
        nights,
        trends,
    };
    let text = render::text(&model);
    if let Some(path) = html {
        let p = render::page(&model, &text)?;
        crate::pipeline::results::write_atomic(path, p.as_bytes())?;
    }
    // The gate's outcome where the newest run was gated: the two exit codes agree.
    let newest_regressed = match &model.gate {
        Some(g) => g.failing(),
        None => !model.regressed.is_empty(),
    };
    Ok(Outcome {
        text,
        newest_regressed,
    })
}

/// Before a ratio has MIN_HISTORY earlier nights, the newest is judged against the earlier
/// nights' own paired intervals, as the nightly's gate judges it (judge::control); None
/// unless the newest run and an earlier one are paired.
fn early_judgement(
    paired: &[Option<crate::pipeline::judge::verdicts_file::Verdicts>],
    threshold_pct: f64,
) -> Option<crate::pipeline::judge::control::Outcome> {
    paired.last().cloned().flatten().and_then(|now| {
        let before: Vec<_> = paired[..paired.len() - 1]
            .iter()
            .flatten()
            .cloned()
            .collect();
        let from = before.len().saturating_sub(changepoint::MIN_HISTORY);
        (!before.is_empty())
            .then(|| crate::pipeline::judge::control::judge(&before[from..], &now, threshold_pct))
    })
}

/// How a run did not end by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unfinished {
    Interrupted,
    /// Never ended: killed, the machine went down, or still running.
    Killed,
}

impl Unfinished {
    fn said(self) -> &'static str {
        match self {
            Unfinished::Interrupted => "it was interrupted",
            Unfinished::Killed => "it never ended (killed, or the machine went down)",
        }
    }
}

/// Why a run did not end by itself, from its manifest; None for a run that ended, or one
/// without a manifest (imported logs, older runs).
fn unfinished(run: &Path) -> Option<Unfinished> {
    let m = crate::pipeline::results::load_manifest(run).ok()??;
    if m.ended() {
        None
    } else if m.ended_at.is_some() {
        Some(Unfinished::Interrupted)
    } else {
        Some(Unfinished::Killed)
    }
}

/// What the runs hold: each series' value per run (None where it did not run), each run's
/// paired verdicts, and the runs left out.
struct Runs {
    per_run: BTreeMap<Key, Vec<Option<f64>>>,
    /// Each point's host load per run, keyed by (series, workload, threads).
    loads: BTreeMap<(String, String, u32), Vec<Option<f64>>>,
    paired: Vec<Option<crate::pipeline::judge::verdicts_file::Verdicts>>,
    skipped: Vec<String>,
}

/// Reads the runs `dirs` (named `ids`), oldest first: each series' median of its ok repeats
/// per run, and a paired run's ratios to its control. An unreadable earlier run is left out
/// with a warning, as is one that did not end (`ended`); the newest must be readable.
fn read_runs(
    dirs: &[std::path::PathBuf],
    ids: &[String],
    ended: &[Option<Unfinished>],
) -> anyhow::Result<Runs> {
    let mut per_run: BTreeMap<Key, Vec<Option<f64>>> = BTreeMap::new();
    let mut loads: BTreeMap<(String, String, u32), Vec<Option<f64>>> = BTreeMap::new();
    // An unreadable earlier run is left out with a warning (one bad night must not block
    // every later history); the newest must be readable, it is what is judged.
    let mut skipped: Vec<String> = Vec::new();
    // Each run's paired verdicts (None: not paired, or left out), in the order of `dirs`.
    let mut paired = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        // An earlier run that did not end by itself measured part of its plan, perhaps under
        // what stopped it: shown as such, never a baseline (as the gate never takes it).
        if let Some(why) = ended[i].filter(|_| i + 1 < dirs.len()) {
            skipped.push(format!(
                "warning: run {} left out: {}\n",
                ids[i],
                why.said()
            ));
            paired.push(None);
            continue;
        }
        let mut groups: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
        let points = match load_curve_points(d) {
            Ok(p) => p,
            Err(e) if i + 1 < dirs.len() => {
                skipped.push(format!("warning: run {} left out: {e:#}\n", ids[i]));
                paired.push(None);
                continue;
            }
            Err(e) => bail!("the newest run {} cannot be read: {e:#}", d.display()),
        };
        for p in points.iter().filter(|p| p.status == PointStatus::Ok) {
            for (metric, v) in [("tps", p.tps), ("p95", p.lat_p95_ms)] {
                if v > 0.0 {
                    groups
                        .entry(Key {
                            series: series_of(p),
                            workload: p.workload.clone(),
                            threads: p.threads,
                            metric,
                        })
                        .or_default()
                        .push(v);
                }
            }
        }
        for (k, v) in groups {
            per_run.entry(k).or_insert_with(|| vec![None; dirs.len()])[i] = Some(median(&v));
        }
        let each = host_load::by_point(&points, |p| (series_of(p), p.workload.clone(), p.threads));
        for (k, load) in each {
            loads.entry(k).or_insert_with(|| vec![None; dirs.len()])[i] = load;
        }
        // A paired run measured each series against its baseline (a control) in the same
        // rounds: that ratio is a series of its own, which a slower host does not move.
        let v = crate::pipeline::judge::verdicts_file::load(d)?;
        if let Some(v) = &v {
            for (k, ratio) in control_ratios(v) {
                per_run.entry(k).or_insert_with(|| vec![None; dirs.len()])[i] = Some(ratio);
            }
        }
        // Only a run that can be the gate's reference (it passed, or was accepted) is a
        // baseline for a young ratio, as the gate takes it.
        let newest = i + 1 == dirs.len();
        paired.push(v.filter(|_| newest || crate::pipeline::results::nightly::reference(d)));
    }
    Ok(Runs {
        per_run,
        loads,
        paired,
        skipped,
    })
}

/// The series judged: a row each, the shifts found, the series that regressed (servers' and
/// the host's apart) and the count that improved.
struct Judged {
    rows: Vec<Row>,
    shifts: Vec<ShiftRow>,
    worse: Vec<String>,
    host_worse: Vec<String>,
    better: usize,
}

impl Judged {
    /// No verdict on the newest run: it did not end by itself.
    fn unjudge(&mut self) {
        for r in &mut self.rows {
            r.verdict = None;
        }
        self.worse.clear();
        self.host_worse.clear();
        self.better = 0;
    }

    /// The gate's verdicts where it asked a row's question; the rows it did not keep the
    /// trend's, said as such and not counted (the gate's outcome is the answer).
    fn take_gate(&mut self, g: &gated::Gated) {
        self.worse.clear();
        self.better = 0;
        for r in &mut self.rows {
            if let Some((n, withheld)) = g.verdict(&r.key) {
                r.verdict = Some(n.clone());
                r.gated = true;
                r.withheld = withheld.to_string();
                if n.worse() {
                    self.worse.push(r.name.clone());
                }
                self.better += n.better() as usize;
            }
        }
    }
}

/// The newest run's verdict against the host's load (#47): the median load of the earlier
/// runs that have it against the newest's; a verdict that difference could have made is
/// made inconclusive, and why is returned ("" when it stands).
fn load_withheld(t: &Trend, newest: usize, id: &str, n: &mut Newest) -> String {
    let earlier: Vec<f64> = t.loads[..newest].iter().flatten().copied().collect();
    let base = (!earlier.is_empty()).then(|| median(&earlier));
    let h = host_load::judge(
        base,
        t.loads[newest],
        n.verdict,
        ("the earlier runs", &format!("run {id}")),
    );
    if !h.withheld.is_empty() {
        n.verdict = Verdict::Inconclusive;
    }
    h.withheld
}

/// Judges every series' newest run at `level` (the family's share of α) against its runs
/// since its last shift, or a young ratio against `early`'s paired judgement.
fn judge_trends(
    trends: &[Trend],
    ids: &[String],
    newest: usize,
    (threshold_pct, level): (f64, f64),
    early: Option<&crate::pipeline::judge::control::Outcome>,
) -> Judged {
    let mut rows = Vec::new();
    let mut shifts = Vec::new();
    let mut worse = Vec::new();
    // The host's own tests (`host/-`): a worse one is the machine's, said apart and not
    // counted as a server's regression.
    let host_series = format!(
        "{}/{}",
        crate::engine::host::HOST_TARGET,
        crate::engine::host::HOST_CONFIG
    );
    let mut host_worse = Vec::new();
    let mut better = 0;
    for t in trends {
        let host = t.key.series == host_series;
        let present: Vec<(usize, f64)> = t
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .collect();
        let xs: Vec<f64> = present.iter().map(|p| p.1).collect();
        let newest_ran = t.values[newest].is_some();
        let (found, verdict): (Vec<Shift>, Option<Newest>) =
            trend::judge(&xs, newest_ran, t.key.metric, threshold_pct, level);
        for sh in &found {
            shifts.push(ShiftRow {
                name: t.key.name(),
                run: ids[present[sh.at].0].clone(),
                change_pct: sh.change_pct,
                p: sh.p,
            });
        }
        let Some(last) = t.values[newest] else {
            continue;
        };
        let mut verdict = verdict.or_else(|| early_ratio(early?, &t.key));
        let withheld = verdict
            .as_mut()
            .map(|n| load_withheld(t, newest, &ids[newest], n))
            .unwrap_or_default();
        if verdict.as_ref().is_some_and(Newest::worse) {
            if host {
                host_worse.push(t.key.name());
            } else {
                worse.push(t.key.name());
            }
        }
        better += verdict.as_ref().is_some_and(Newest::better) as usize;
        rows.push(Row {
            name: t.key.name(),
            runs: xs.len(),
            newest: last,
            verdict,
            host,
            gated: false,
            withheld,
            key: t.key.clone(),
        });
    }
    Judged {
        rows,
        shifts,
        worse,
        host_worse,
        better,
    }
}

#[cfg(test)]
mod tests;
