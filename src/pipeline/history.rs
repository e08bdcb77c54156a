//! `sweepbench history`: every run of a sweep, point by point (each target/config, workload
//! and thread count; tps and p95), the shifts in each series, and a verdict on the newest run.

use crate::engine::metrics::median;
use crate::pipeline::judge::trend::{self, Newest};
use crate::pipeline::judge::verdict::changepoint::{self, Shift};
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
}

pub struct Outcome {
    pub text: String,
    /// The newest run moved a series for the worse beyond the threshold.
    pub newest_regressed: bool,
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
    let Runs {
        per_run,
        paired,
        skipped,
    } = read_runs(&dirs, &ids)?;
    // Before a ratio has MIN_HISTORY earlier nights, the newest is judged against the earlier
    // nights' own paired intervals, as the nightly's gate judges it (judge::control).
    let early = early_judgement(&paired, threshold_pct);
    let trends: Vec<Trend> = per_run
        .into_iter()
        .map(|(key, values)| Trend { key, values })
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
    let mut s = skipped.concat();
    s += &header(sweep_dir, &ids);
    let j = judge_trends(
        &trends,
        &ids,
        newest,
        (threshold_pct, level),
        early.as_ref(),
    );
    s.push_str(&j.rows);
    let young_ratios = early.is_some() && trends.iter().any(|t| t.key.metric == "tps/control");
    s += &closing(
        &ids[newest],
        (judged, level, threshold_pct),
        &j,
        young_ratios,
    );
    // A slower VM is not a slower server: say when the machine changed under the newest run.
    if newest > 0 {
        if let (Some(a), Some(b)) = (
            crate::pipeline::results::load_host(&dirs[newest - 1]),
            crate::pipeline::results::load_host(&dirs[newest]),
        ) {
            for w in crate::pipeline::results::host::differences(&a, &b) {
                s.push_str(&format!("warning: {w}\n"));
            }
        }
    }
    if let Some(path) = html {
        let headline = format!(
            "newest run {}: regressed at {} of {judged} series",
            ids[newest],
            j.worse.len()
        );
        let p = page(sweep_dir, &ids, &trends, &s, &headline, !j.worse.is_empty())?;
        crate::pipeline::results::write_atomic(path, p.as_bytes())?;
    }
    Ok(Outcome {
        text: s,
        newest_regressed: !j.worse.is_empty(),
    })
}

/// The text's first lines: the sweep, its runs from the first to the newest, the columns.
fn header(sweep_dir: &Path, ids: &[String]) -> String {
    let newest = ids.len() - 1;
    format!(
        "{}: {} run(s), {} ({}) … {} ({})\n\n{:<48} {:>5} {:>12} {:>9} {:>22}  newest run\n",
        sweep_dir.display(),
        ids.len(),
        ids[0],
        date_of(&ids[0]),
        ids[newest],
        date_of(&ids[newest]),
        "point",
        "runs",
        "newest",
        "Δ",
        "prediction interval"
    )
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

/// The lines after the series: the shifts, the newest run's count of regressions, how a young
/// ratio was judged, and a regression of the host's own tests.
fn closing(
    newest_id: &str,
    (judged, level, threshold_pct): (usize, f64, f64),
    j: &Judged,
    early_ratios: bool,
) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\nshifts (E-divisive means, Welch t-test on the logs, p < {}):\n{}",
        changepoint::MAX_P,
        if j.shifts_text.is_empty() {
            "  none\n".to_string()
        } else {
            j.shifts_text.clone()
        }
    ));
    s.push_str(&format!(
        "\nnewest run {}: regressed at {} of {judged} series, improved at {} (beyond {} and outside the {:.2} % prediction interval of the runs since the last shift; {:.0} % family-wise).\n",
        newest_id,
        j.worse.len(),
        j.better,
        crate::pipeline::judge::verdict::fmt_threshold(threshold_pct),
        (1.0 - level) * 100.0,
        ALPHA * 100.0
    ));
    if early_ratios {
        s.push_str(&format!(
            "a tps/control ratio with fewer than {} earlier runs is judged against the earlier runs' own paired intervals, as the nightly's gate judges it ({})\n",
            changepoint::MIN_HISTORY,
            "docs/statistics.md, \"A nightly with a control\""
        ));
    }
    if !j.host_worse.is_empty() {
        s.push_str(&format!(
            "warning: the host's own tests regressed in the newest run ({}): the machine itself is slower, so the servers' figures may have moved with it; host series are not counted as regressed above\n",
            j.host_worse.join(", ")
        ));
    }
    s
}

/// What the runs hold: each series' value per run (None where it did not run), each run's
/// paired verdicts, and the runs left out.
struct Runs {
    per_run: BTreeMap<Key, Vec<Option<f64>>>,
    paired: Vec<Option<crate::pipeline::judge::verdicts_file::Verdicts>>,
    skipped: Vec<String>,
}

/// Reads the runs `dirs` (named `ids`), oldest first: each series' median of its ok repeats
/// per run, and a paired run's ratios to its control. An unreadable earlier run is left out
/// with a warning; the newest must be readable.
fn read_runs(dirs: &[std::path::PathBuf], ids: &[String]) -> anyhow::Result<Runs> {
    let mut per_run: BTreeMap<Key, Vec<Option<f64>>> = BTreeMap::new();
    // An unreadable earlier run is left out with a warning (one bad night must not block
    // every later history); the newest must be readable, it is what is judged.
    let mut skipped: Vec<String> = Vec::new();
    // Each run's paired verdicts (None: not paired, or left out), in the order of `dirs`.
    let mut paired = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
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
        // A paired run measured each series against its baseline (a control) in the same
        // rounds: that ratio is a series of its own, which a slower host does not move.
        let v = crate::pipeline::judge::verdicts_file::load(d)?;
        if let Some(v) = &v {
            for (k, ratio) in control_ratios(v) {
                per_run.entry(k).or_insert_with(|| vec![None; dirs.len()])[i] = Some(ratio);
            }
        }
        paired.push(v);
    }
    Ok(Runs {
        per_run,
        paired,
        skipped,
    })
}

/// The series judged: one line each (its newest value, the change, the interval, the word),
/// the shifts found, the series that regressed (servers' and the host's apart) and the
/// count that improved.
struct Judged {
    rows: String,
    shifts_text: String,
    worse: Vec<String>,
    host_worse: Vec<String>,
    better: usize,
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
    let mut s = String::new();
    let mut shifts_text = String::new();
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
            let run = &ids[present[sh.at].0];
            shifts_text.push_str(&format!(
                "  {}: from run {run} ({}), {:+.1} % (p {:.2e})\n",
                t.key.name(),
                date_of(run),
                sh.change_pct,
                sh.p
            ));
        }
        let Some(last) = t.values[newest] else {
            continue;
        };
        let verdict = verdict.or_else(|| early_ratio(early?, &t.key));
        let word = trend::word(verdict.as_ref(), host);
        let (delta, interval) = match &verdict {
            None => (String::new(), String::new()),
            Some(n) => (
                format!(
                    "{}%",
                    crate::pipeline::judge::verdict::fmt_change(n.change_pct)
                ),
                format!(
                    "[{}%, {}%]",
                    crate::pipeline::judge::verdict::fmt_change(n.lo_pct),
                    crate::pipeline::judge::verdict::fmt_change(n.hi_pct)
                ),
            ),
        };
        if verdict.as_ref().is_some_and(Newest::worse) {
            if host {
                host_worse.push(t.key.name());
            } else {
                worse.push(t.key.name());
            }
        }
        better += verdict.as_ref().is_some_and(Newest::better) as usize;
        s.push_str(&format!(
            "{:<48} {:>5} {:>12.2} {:>9} {:>22}  {word}\n",
            t.key.name(),
            xs.len(),
            last,
            delta,
            interval
        ));
    }
    Judged {
        rows: s,
        shifts_text,
        worse,
        host_worse,
        better,
    }
}

const HTML: &str = include_str!("../../templates/history.html.tera");

/// The HTML page (templates/history.html.tera): one throughput chart per workload (a line per
/// series × thread count, x = run dates), the headline, then the text.
fn page(
    sweep_dir: &Path,
    ids: &[String],
    trends: &[Trend],
    text: &str,
    headline: &str,
    regressed: bool,
) -> anyhow::Result<String> {
    let name = sweep_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // Axis labels: month-day (the text below has the full dates and times).
    let dates: Vec<String> = ids
        .iter()
        .map(|i| date_of(i).get(5..10).unwrap_or_default().to_string())
        .collect();
    let mut workloads: Vec<&str> = trends.iter().map(|t| t.key.workload.as_str()).collect();
    workloads.sort_unstable();
    workloads.dedup();
    let charts: Vec<String> = workloads
        .iter()
        .map(|w| {
            // Each series as a share of its own median, so that a 1-thread series moves as
            // visibly as a 64-thread one.
            let lines: Vec<crate::pipeline::report::chart::Line> = trends
                .iter()
                .filter(|t| t.key.workload == *w && t.key.metric.starts_with("tps"))
                .map(|t| {
                    let present: Vec<f64> = t.values.iter().flatten().copied().collect();
                    let med = median(&present).max(f64::MIN_POSITIVE);
                    crate::pipeline::report::chart::Line::plain(
                        &format!("{} t{}", t.key.series, t.key.threads),
                        t.values
                            .iter()
                            .enumerate()
                            .filter_map(|(i, v)| v.map(|v| (i as u32, v / med * 100.0)))
                            .collect(),
                    )
                })
                .collect();
            crate::pipeline::report::chart::trend_svg(
                &format!("{w}: throughput per run"),
                "tps, % of the series' median",
                &dates,
                &lines,
            )
        })
        .collect();
    let mut t = tera::Tera::default();
    t.add_raw_template("history.html", HTML)
        .map_err(|e| anyhow::anyhow!("the history template does not parse: {e:?}"))?;
    t.autoescape_on(vec!["history.html"]);
    let mut cx = tera::Context::new();
    cx.insert("sweep", &name);
    cx.insert("runs", &ids.len());
    cx.insert("first", &date_of(&ids[0]));
    cx.insert("last", &date_of(&ids[ids.len() - 1]));
    cx.insert("headline", headline);
    cx.insert("regressed", &regressed);
    cx.insert("charts", &charts);
    cx.insert("text", text);
    cx.insert("max_p", &changepoint::MAX_P);
    t.render("history.html", &cx)
        .map_err(|e| anyhow::anyhow!("rendering the history page: {e:?}"))
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
