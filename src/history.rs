//! `sweepbench history`: every run of a sweep, point by point (each target/config, workload
//! and thread count; tps and p95), the shifts in each series, and a verdict on the newest run.

use crate::metrics::median;
use crate::nightly::runs;
use crate::results::{load_points, PointRecord};
use crate::verdict::changepoint::{self, Shift};
use crate::verdict::ALPHA;
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
    /// "tps" or "p95".
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

/// The newest run of one series against the runs since its last shift.
#[derive(Debug, Clone)]
struct Newest {
    change_pct: f64,
    lo_pct: f64,
    hi_pct: f64,
    worse: bool,
    better: bool,
}

pub struct Outcome {
    pub text: String,
    /// The newest run moved a series for the worse beyond the threshold.
    pub newest_regressed: bool,
}

fn series_of(r: &PointRecord) -> String {
    crate::report::series_of(r)
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
    let mut per_run: BTreeMap<Key, Vec<Option<f64>>> = BTreeMap::new();
    for (i, d) in dirs.iter().enumerate() {
        let mut groups: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
        for p in load_points(d)?.iter().filter(|p| p.status == "ok") {
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
    }
    let trends: Vec<Trend> = per_run
        .into_iter()
        .map(|(key, values)| Trend { key, values })
        .collect();
    let newest = dirs.len() - 1;
    // The newest run is judged in every series it has; one false-alarm budget for all.
    let judged = trends
        .iter()
        .filter(|t| t.values[newest].is_some())
        .count()
        .max(1);
    let level = ALPHA / judged as f64;
    let mut s = format!(
        "{}: {} run(s), {} ({}) … {} ({})\n\n{:<48} {:>5} {:>12} {:>9} {:>22}  newest run\n",
        sweep_dir.display(),
        dirs.len(),
        ids[0],
        date_of(&ids[0]),
        ids[newest],
        date_of(&ids[newest]),
        "point",
        "runs",
        "newest",
        "Δ",
        "prediction interval"
    );
    let mut shifts_text = String::new();
    let mut worse = Vec::new();
    let mut better = 0;
    for t in &trends {
        let present: Vec<(usize, f64)> = t
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .collect();
        let xs: Vec<f64> = present.iter().map(|p| p.1).collect();
        let found: Vec<Shift> = changepoint::shifts(&xs, changepoint::MAX_P);
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
        // The runs since the last shift before the newest one.
        let since = found
            .iter()
            .map(|sh| sh.at)
            .filter(|&a| a < xs.len() - 1)
            .max()
            .unwrap_or(0);
        let earlier = &xs[since..xs.len() - 1];
        let verdict = changepoint::newest_outside(earlier, last, level).map(|(d, lo, hi, out)| {
            let higher_better = t.key.metric == "tps";
            let beyond = d.abs() > threshold_pct;
            Newest {
                change_pct: d,
                lo_pct: lo,
                hi_pct: hi,
                worse: out && beyond && ((d < 0.0) == higher_better),
                better: out && beyond && ((d > 0.0) == higher_better),
            }
        });
        let (delta, interval, word) = match &verdict {
            None => (
                String::new(),
                String::new(),
                format!(
                    "not judged: needs {} earlier runs",
                    changepoint::MIN_HISTORY
                ),
            ),
            Some(n) => (
                format!("{:+.1}%", n.change_pct),
                format!("[{:+.1}%, {:+.1}%]", n.lo_pct, n.hi_pct),
                if n.worse {
                    "WORSE".to_string()
                } else if n.better {
                    "better".to_string()
                } else if (n.change_pct.abs() > threshold_pct) && !n.worse {
                    "within the noise".to_string()
                } else {
                    "steady".to_string()
                },
            ),
        };
        if verdict.as_ref().is_some_and(|n| n.worse) {
            worse.push(t.key.name());
        }
        better += verdict.as_ref().is_some_and(|n| n.better) as usize;
        s.push_str(&format!(
            "{:<48} {:>5} {:>12.2} {:>9} {:>22}  {word}\n",
            t.key.name(),
            xs.len(),
            last,
            delta,
            interval
        ));
    }
    s.push_str(&format!(
        "\nshifts (E-divisive means, Welch t-test on the logs, p < {}):\n{}",
        changepoint::MAX_P,
        if shifts_text.is_empty() {
            "  none\n".to_string()
        } else {
            shifts_text
        }
    ));
    s.push_str(&format!(
        "\nnewest run {}: worse at {} of {judged} series, better at {better} (beyond ±{} and outside the {:.2} % prediction interval of the runs since the last shift; {:.0} % family-wise).\n",
        ids[newest],
        worse.len(),
        crate::verdict::fmt_pct(threshold_pct),
        (1.0 - level) * 100.0,
        ALPHA * 100.0
    ));
    if let Some(path) = html {
        crate::results::write_atomic(path, page(sweep_dir, &ids, &trends, &s).as_bytes())?;
    }
    Ok(Outcome {
        text: s,
        newest_regressed: !worse.is_empty(),
    })
}

/// The HTML page: one throughput chart per workload (a line per series × thread count, x =
/// run dates), then the text.
fn page(sweep_dir: &Path, ids: &[String], trends: &[Trend], text: &str) -> String {
    let name = sweep_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let esc = |x: &str| x.replace('&', "&amp;").replace('<', "&lt;");
    let dates: Vec<String> = ids.iter().map(|i| date_of(i)).collect();
    let mut workloads: Vec<&str> = trends.iter().map(|t| t.key.workload.as_str()).collect();
    workloads.dedup();
    workloads.sort_unstable();
    workloads.dedup();
    let charts: String = workloads
        .iter()
        .map(|w| {
            let lines: Vec<crate::report::chart::Line> = trends
                .iter()
                .filter(|t| t.key.workload == *w && t.key.metric == "tps")
                .map(|t| {
                    crate::report::chart::Line::plain(
                        &format!("{} t{}", t.key.series, t.key.threads),
                        t.values
                            .iter()
                            .enumerate()
                            .filter_map(|(i, v)| v.map(|v| (i as u32, v)))
                            .collect(),
                    )
                })
                .collect();
            crate::report::chart::trend_svg(
                &format!("{w}: throughput per run"),
                "transactions/s",
                &dates,
                &lines,
            )
        })
        .collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{n} history</title><style>body{{font-family:sans-serif;max-width:1100px;margin:2rem auto}}pre{{background:#f6f6f6;padding:1rem;overflow-x:auto}}svg{{max-width:100%;height:auto}}</style></head><body><h1>{n}: history</h1>{charts}<pre>{text}</pre></body></html>\n",
        n = esc(&name),
        text = esc(text),
    )
}
