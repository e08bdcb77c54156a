//! The report's "Stability" section (#46 item 4, its measurement): from each point's
//! per-second throughput, how steady it was — the coefficient of variation of its seconds,
//! its worst second, and its stalls (runs of seconds below half the point's median second)
//! with their total length — per series, workload and thread count, over the repeats. Only
//! points of at least `MIN_SECONDS` seconds are read: a 2-second slice has no stalls to see.
//! Judged too (`verdicts`): each candidate's share of stalled seconds against the baseline's,
//! window by window (a paired run's rounds as pairs, else the repeats of each side), with a
//! 95 % interval and a verdict at `STALL_THRESHOLD_PP`.

use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::{BTreeMap, HashMap};

/// The shortest window whose seconds say something about stalls.
pub const MIN_SECONDS: usize = 10;

/// A second below this share of the point's median second is a stalled one.
pub const STALL_SHARE: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StabilityRow {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    /// Seconds read, over the repeats.
    pub seconds: usize,
    /// Mean over the repeats of the coefficient of variation of the seconds, percent.
    pub cv_pct: f64,
    /// The worst second as a share of its point's median second, percent (lowest repeat).
    pub worst_pct: f64,
    /// Runs of consecutive stalled seconds, and the seconds they lasted, over the repeats.
    pub stalls: usize,
    pub stalled_s: usize,
}

/// One point's stability: (cv %, worst as % of median, stalls, stalled seconds).
type Steadiness = (f64, f64, usize, usize);

/// One point's seconds, measured (`Steadiness`).
pub fn of_seconds(tps: &[f64]) -> Option<Steadiness> {
    if tps.len() < MIN_SECONDS {
        return None;
    }
    let mut sorted = tps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    if median <= 0.0 {
        return None;
    }
    let n = tps.len() as f64;
    let mean = tps.iter().sum::<f64>() / n;
    let var = tps.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let cv = 100.0 * var.sqrt() / mean.max(f64::MIN_POSITIVE);
    let worst = 100.0 * sorted[0] / median;
    let (mut stalls, mut stalled, mut inside) = (0, 0, false);
    for low in stalled_seconds(tps) {
        if low {
            stalled += 1;
            if !inside {
                stalls += 1;
            }
        }
        inside = low;
    }
    Some((cv, worst, stalls, stalled))
}

/// Which of one window's seconds are stalled: below `STALL_SHARE` of the window's median
/// second (what `of_seconds` counts and the chart marks).
pub fn stalled_seconds(tps: &[f64]) -> Vec<bool> {
    let mut sorted = tps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let line = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0) * STALL_SHARE;
    tps.iter().map(|x| *x < line).collect()
}

/// One row per series, workload and thread count whose ok points have at least
/// `MIN_SECONDS` seconds, in that order.
pub fn rows(records: &[PointRecord], samples: &HashMap<String, Vec<f64>>) -> Vec<StabilityRow> {
    type Key = (String, String, u32);
    let mut acc: BTreeMap<Key, Vec<(usize, Steadiness)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == PointStatus::Ok) {
        let Some(s) = samples.get(&r.point_id) else {
            continue;
        };
        if let Some(m) = of_seconds(s) {
            let key = (
                format!("{}/{}", r.target, r.config),
                r.workload.clone(),
                r.threads,
            );
            acc.entry(key).or_default().push((s.len(), m));
        }
    }
    acc.into_iter()
        .map(|((series, workload, threads), v)| StabilityRow {
            series,
            workload,
            threads,
            seconds: v.iter().map(|(n, _)| n).sum(),
            cv_pct: v.iter().map(|(_, m)| m.0).sum::<f64>() / v.len() as f64,
            worst_pct: v.iter().map(|(_, m)| m.1).fold(f64::INFINITY, f64::min),
            stalls: v.iter().map(|(_, m)| m.2).sum(),
            stalled_s: v.iter().map(|(_, m)| m.3).sum(),
        })
        .collect()
}

/// The smallest change in the share of stalled seconds that counts, percentage points.
pub const STALL_THRESHOLD_PP: f64 = 1.0;
/// The smallest change in the seconds' coefficient of variation that counts, as a ratio.
pub const CV_THRESHOLD_RATIO: f64 = 1.25;

/// One candidate's stability at one point against the baseline's: the mean share of stalled
/// seconds on each side, their difference with its 95 % interval, and the verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StabilityVerdict {
    pub series: String,
    pub baseline: String,
    pub workload: String,
    pub threads: u32,
    /// Mean share of stalled seconds per window, percent.
    pub base_pct: f64,
    pub cand_pct: f64,
    /// cand − base, percentage points, and its 95 % interval.
    pub diff_pp: f64,
    pub lo_pp: f64,
    pub hi_pp: f64,
    /// Geometric mean of the windows' coefficients of variation, percent, on each side; the
    /// candidate's over the baseline's with its 95 % interval, and that verdict alone.
    pub base_cv_pct: f64,
    pub cand_cv_pct: f64,
    pub cv_ratio: f64,
    pub cv_lo: f64,
    pub cv_hi: f64,
    pub cv_verdict: &'static str,
    /// Windows compared: pairs (paired) or the smaller side's count.
    pub n: usize,
    pub paired: bool,
    /// The stalls' verdict: "steadier", "less steady", "unchanged" or "inconclusive".
    pub stall_verdict: &'static str,
    /// Both together (`combined`).
    pub verdict: &'static str,
}

impl StabilityVerdict {
    /// "less steady: stalled 10.0 % of its seconds against 0.0 %, +10.0 pp [+8.1, +11.9]".
    pub fn said(&self) -> String {
        format!(
            "{}: stalled {:.1} % of its seconds against {:.1} %, {:+.1} pp [{:+.1}, {:+.1}] ({}); CV {:.1} % against {:.1} %, ×{:.2} [{:.2}, {:.2}] ({}); over {} {}",
            self.verdict,
            self.cand_pct,
            self.base_pct,
            self.diff_pp,
            self.lo_pp,
            self.hi_pp,
            self.stall_verdict,
            self.cand_cv_pct,
            self.base_cv_pct,
            self.cv_ratio,
            self.cv_lo,
            self.cv_hi,
            self.cv_verdict,
            self.n,
            if self.paired { "paired rounds" } else { "windows a side" }
        )
    }
}

/// The verdict of a difference in stalled share whose 95 % interval is [lo, hi].
pub fn word(lo: f64, hi: f64) -> &'static str {
    word_at(lo, hi, STALL_THRESHOLD_PP)
}

/// The verdict of a difference whose 95 % interval is [lo, hi] against the smallest change
/// that counts, `t` (a rise is less steady).
fn word_at(lo: f64, hi: f64, t: f64) -> &'static str {
    if hi < -t {
        "steadier"
    } else if lo > t {
        "less steady"
    } else if lo >= -t && hi <= t {
        "unchanged"
    } else {
        "inconclusive"
    }
}

/// The stalls' verdict and the CV's together: worse in either (and better in neither) is
/// less steady, better in either (and worse in neither) steadier, unchanged in both
/// unchanged; anything else — one better, one worse, or undecided — inconclusive.
pub fn combined(stalls: &'static str, cv: &'static str) -> &'static str {
    let either = |w: &str| stalls == w || cv == w;
    match (either("less steady"), either("steadier")) {
        (true, false) => "less steady",
        (false, true) => "steadier",
        _ if stalls == "unchanged" && cv == "unchanged" => "unchanged",
        _ => "inconclusive",
    }
}

/// The difference of `cand` and `base` (shares of stalled seconds per window, keyed by
/// repeat or round) and its 95 % interval: by pairs of the same round when `paired`, else
/// Welch's over each side's windows. None with fewer than 2 windows (or pairs) a side.
pub fn interval(
    base: &BTreeMap<u32, f64>,
    cand: &BTreeMap<u32, f64>,
    paired: bool,
) -> Option<(f64, f64, f64, usize)> {
    use crate::pipeline::judge::verdict::{mean_var, t_quantile};
    if paired {
        let d: Vec<f64> = cand
            .iter()
            .filter_map(|(r, c)| base.get(r).map(|b| c - b))
            .collect();
        if d.len() < 2 {
            return None;
        }
        let (m, var) = mean_var(&d);
        let h = t_quantile(0.975, d.len() as f64 - 1.0) * (var / d.len() as f64).sqrt();
        return Some((m, m - h, m + h, d.len()));
    }
    let (b, c): (Vec<f64>, Vec<f64>) = (
        base.values().copied().collect(),
        cand.values().copied().collect(),
    );
    if b.len() < 2 || c.len() < 2 {
        return None;
    }
    let ((mb, vb), (mc, vc)) = (mean_var(&b), mean_var(&c));
    let (sb, sc) = (vb / b.len() as f64, vc / c.len() as f64);
    let se = (sb + sc).sqrt();
    // Welch–Satterthwaite; identical constant sides have no spread to estimate.
    let df = if se > 0.0 {
        (sb + sc).powi(2)
            / (sb.powi(2) / (b.len() as f64 - 1.0) + sc.powi(2) / (c.len() as f64 - 1.0))
    } else {
        1.0
    };
    let h = t_quantile(0.975, df) * se;
    let d = mc - mb;
    Some((d, d - h, d + h, b.len().min(c.len())))
}

/// Every candidate series' stability against `baseline`'s at each workload and thread count
/// where both have windows of at least `MIN_SECONDS`: the share of stalled seconds per window
/// (its own median's half as the line), compared round by round in a `paired` run, else
/// repeat against repeat unpaired.
pub fn verdicts(
    records: &[PointRecord],
    samples: &HashMap<String, Vec<f64>>,
    baseline: &str,
    paired: bool,
) -> Vec<StabilityVerdict> {
    type Cell = (String, u32);
    let mut shares: BTreeMap<(String, Cell), BTreeMap<u32, f64>> = BTreeMap::new();
    // ln of each window's CV: a ratio of spreads is judged as a difference of logs.
    let mut log_cvs: BTreeMap<(String, Cell), BTreeMap<u32, f64>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == PointStatus::Ok) {
        let Some(s) = samples.get(&r.point_id) else {
            continue;
        };
        if let Some((cv, _, _, stalled)) = of_seconds(s) {
            let key = (
                format!("{}/{}", r.target, r.config),
                (r.workload.clone(), r.threads),
            );
            log_cvs
                .entry(key.clone())
                .or_default()
                .insert(r.repeat, cv.max(0.01).ln());
            shares
                .entry(key)
                .or_default()
                .insert(r.repeat, 100.0 * stalled as f64 / s.len() as f64);
        }
    }
    let mut out = Vec::new();
    for ((series, (workload, threads)), cand) in &shares {
        if series == baseline {
            continue;
        }
        let Some(base) = shares.get(&(baseline.to_string(), (workload.clone(), *threads))) else {
            continue;
        };
        let mean = |m: &BTreeMap<u32, f64>| m.values().sum::<f64>() / m.len() as f64;
        let (stall_verdict, (d, lo, hi, n)) = match interval(base, cand, paired) {
            Some(i) => (word(i.1, i.2), i),
            None => (
                "inconclusive",
                (mean(cand) - mean(base), f64::NAN, f64::NAN, 1),
            ),
        };
        let key = (series.clone(), (workload.clone(), *threads));
        let (lb, lc) = (
            &log_cvs[&(baseline.to_string(), key.1.clone())],
            &log_cvs[&key],
        );
        let (cv_verdict, (cd, clo, chi, _)) = match interval(lb, lc, paired) {
            Some(i) => (word_at(i.1, i.2, CV_THRESHOLD_RATIO.ln()), i),
            None => ("inconclusive", (mean(lc) - mean(lb), f64::NAN, f64::NAN, 1)),
        };
        out.push(StabilityVerdict {
            series: series.clone(),
            baseline: baseline.to_string(),
            workload: workload.clone(),
            threads: *threads,
            base_pct: mean(base),
            cand_pct: mean(cand),
            diff_pp: d,
            lo_pp: lo,
            hi_pp: hi,
            base_cv_pct: mean(lb).exp(),
            cand_cv_pct: mean(lc).exp(),
            cv_ratio: cd.exp(),
            cv_lo: clo.exp(),
            cv_hi: chi.exp(),
            cv_verdict,
            n,
            paired,
            stall_verdict,
            verdict: combined(stall_verdict, cv_verdict),
        });
    }
    out
}

/// Throughput over time for each workload and thread count with windows of at least
/// `MIN_SECONDS`: one small multiple per point, one line per series made of all its windows
/// one after another in repeat order (a paired run's rounds), each window's stalled seconds
/// marked as they are counted. Every window is drawn, not the first alone: a stall that
/// fell in the third round is in the verdict and must be in the picture.
pub fn charts(records: &[PointRecord], samples: &HashMap<String, Vec<f64>>) -> Vec<String> {
    // (workload, threads) → series → its windows by repeat.
    type Windows<'a> = BTreeMap<String, BTreeMap<u32, &'a Vec<f64>>>;
    let mut cells: BTreeMap<(String, u32), Windows<'_>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == PointStatus::Ok) {
        let Some(s) = samples.get(&r.point_id).filter(|s| s.len() >= MIN_SECONDS) else {
            continue;
        };
        cells
            .entry((r.workload.clone(), r.threads))
            .or_default()
            .entry(format!("{}/{}", r.target, r.config))
            .or_default()
            .insert(r.repeat, s);
    }
    cells
        .into_iter()
        .map(|((workload, threads), series)| {
            let lines: Vec<(String, Vec<Vec<f64>>)> = series
                .into_iter()
                .map(|(name, windows)| {
                    let first = windows.keys().next().copied().unwrap_or(1);
                    let last = windows.keys().last().copied().unwrap_or(1);
                    let label = if first == last {
                        format!("{name} r{first}")
                    } else {
                        format!("{name} r{first}–r{last}")
                    };
                    (label, windows.into_values().cloned().collect())
                })
                .collect();
            super::chart::over_time_svg(
                &format!(
                    "{workload}, {threads} threads: tps per second, windows joined (stalls marked)"
                ),
                &lines,
                stalled_seconds,
            )
        })
        .filter(|svg| !svg.is_empty())
        .collect()
}

/// One headline per candidate with a stability verdict: "Stability (stalled seconds):
/// high-stability/default steadier than default/default at 2 of 3 points, unchanged at 1".
pub fn headlines(v: &[StabilityVerdict]) -> Vec<String> {
    let mut by: BTreeMap<(&str, &str), Vec<&'static str>> = BTreeMap::new();
    for x in v {
        by.entry((&x.series, &x.baseline))
            .or_default()
            .push(x.verdict);
    }
    by.into_iter()
        .map(|((series, baseline), words)| {
            let n = words.len();
            let parts: Vec<String> = ["steadier", "less steady", "unchanged", "inconclusive"]
                .iter()
                .filter_map(|w| {
                    let k = words.iter().filter(|x| *x == w).count();
                    (k > 0).then(|| format!("{w} at {k} of {n} point{}", if n == 1 { "" } else { "s" }))
                })
                .collect();
            format!(
                "Stability (share of stalled seconds, 95 % intervals, ±{STALL_THRESHOLD_PP} pp): {series} against {baseline}: {}",
                parts.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intervals and verdicts on known differences: a steady pair is unchanged (no spread,
    /// no difference), a 10-point rise with little spread is less steady, a spread too wide
    /// to decide is inconclusive; a single window a side decides nothing.
    #[test]
    fn stalled_shares_are_judged_with_an_interval() {
        let m = |v: &[f64]| -> BTreeMap<u32, f64> {
            v.iter()
                .enumerate()
                .map(|(i, x)| (i as u32 + 1, *x))
                .collect()
        };
        let zero = m(&[0.0, 0.0, 0.0]);
        let (d, lo, hi, n) = interval(&zero, &zero, false).unwrap();
        assert_eq!((d, lo, hi, n), (0.0, 0.0, 0.0, 3));
        assert_eq!(word(lo, hi), "unchanged");
        let stalling = m(&[10.0, 9.0, 11.0]);
        let (d, lo, hi, _) = interval(&zero, &stalling, false).unwrap();
        assert!(
            (d - 10.0).abs() < 1e-9 && lo > 5.0 && hi < 15.0,
            "{lo} {hi}"
        );
        assert_eq!(word(lo, hi), "less steady");
        assert_eq!(word(-hi, -lo), "steadier");
        let (_, lo, hi, _) = interval(&zero, &m(&[0.0, 12.0, 0.0]), false).unwrap();
        assert_eq!(word(lo, hi), "inconclusive");
        // Paired: the rounds' differences, not the sides' spreads.
        let base = m(&[5.0, 20.0, 35.0]);
        let cand = m(&[7.0, 22.0, 37.0]);
        let (d, lo, hi, n) = interval(&base, &cand, true).unwrap();
        assert_eq!((d, lo, hi, n), (2.0, 2.0, 2.0, 3));
        assert_eq!(word(lo, hi), "less steady");
        assert!(interval(&m(&[1.0]), &m(&[2.0]), false).is_none());
        assert_eq!(combined("unchanged", "less steady"), "less steady");
        assert_eq!(combined("steadier", "inconclusive"), "steadier");
        assert_eq!(combined("steadier", "less steady"), "inconclusive");
        assert_eq!(combined("unchanged", "inconclusive"), "inconclusive");
        assert_eq!(combined("unchanged", "unchanged"), "unchanged");
        // A CV 1.5 times the baseline's, steady across windows: less steady beyond ×1.25.
        let (_, lo, hi, _) =
            interval(&m(&[0.0, 0.05, -0.05]), &m(&[0.4, 0.45, 0.36]), false).unwrap();
        assert_eq!(word_at(lo, hi, CV_THRESHOLD_RATIO.ln()), "less steady");
    }

    #[test]
    fn stalls_are_runs_of_seconds_below_half_the_median() {
        // 20 seconds at 1000 with two stalls: 2 seconds at 100, then 1 second at 0.
        let mut s = vec![1000.0; 20];
        s[5] = 100.0;
        s[6] = 100.0;
        s[15] = 0.0;
        let (cv, worst, stalls, stalled) = of_seconds(&s).unwrap();
        assert_eq!((stalls, stalled), (2, 3));
        assert_eq!(worst, 0.0);
        assert!(cv > 30.0, "{cv}");
        // A steady point: no stall, its worst second near the median.
        let steady: Vec<f64> = (0..30).map(|i| 1000.0 + (i % 3) as f64 * 10.0).collect();
        let (cv, worst, stalls, stalled) = of_seconds(&steady).unwrap();
        assert_eq!((stalls, stalled), (0, 0));
        assert!(worst > 98.0 && cv < 1.0, "{worst} {cv}");
        // A dip to 60 % is no stall; too few seconds say nothing.
        let mut dip = vec![1000.0; 12];
        dip[3] = 600.0;
        assert_eq!(of_seconds(&dip).unwrap().2, 0);
        assert!(of_seconds(&[1000.0; 9]).is_none());
    }
}
