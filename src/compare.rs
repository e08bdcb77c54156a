//! `sweepbench compare`: two runs' points.csv (live or imported), matched point by point, with
//! a regression verdict per point. Pure except for `load`.

use crate::metrics::{change_pct, median, spread_pct};
use crate::results::PointRecord;
use std::collections::BTreeMap;

pub const METHOD: &str = "Points match on target, config, workload and threads; figures are medians over \
ok repeats. Noise = the larger (max − min) / median spread of the two sides' repeats, per metric (0 \
with a single repeat; the noise column shows the tps one). A point regresses when tps drops, or p95 \
or p99 latency rises, by more than both the threshold and that metric's noise (and latency by more \
than 0.1 ms); it improves when tps rises by more than both.";

/// Latency increases smaller than this (ms) are never a regression.
pub const LATENCY_FLOOR_MS: f64 = 0.1;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    target: String,
    config: String,
    /// Native points and sysbench-driven ones are different series.
    driver: String,
    workload: String,
    threads: u32,
}

#[derive(Debug, Default, Clone)]
struct Side {
    tps: Vec<f64>,
    p95: Vec<f64>,
    p99: Vec<f64>,
}

/// Spread of the repeats in percent, 0 with a single repeat.
fn spread(v: &[f64]) -> f64 {
    spread_pct(v).unwrap_or(0.0)
}

/// Change in percent, 0 when there is no base.
fn pct(new: f64, base: f64) -> f64 {
    change_pct(new, base).unwrap_or(0.0)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub target: String,
    pub config: String,
    pub workload: String,
    pub threads: u32,
    pub base_tps: f64,
    pub cand_tps: f64,
    pub tps_delta_pct: f64,
    pub p95_delta_pct: f64,
    pub p99_delta_pct: f64,
    pub noise_pct: f64,
    /// "regressed", "improved" or "ok".
    pub verdict: &'static str,
    pub why: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub threshold_pct: f64,
    pub method: &'static str,
    pub rows: Vec<Row>,
    /// Point keys present on one side only.
    pub only_base: Vec<String>,
    pub only_candidate: Vec<String>,
}

impl Comparison {
    pub fn regressed(&self) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == "regressed")
            .collect()
    }
}

fn sides(recs: &[PointRecord], map: &[(String, String)]) -> BTreeMap<Key, Side> {
    let mut out: BTreeMap<Key, Side> = BTreeMap::new();
    for r in recs.iter().filter(|r| r.status == "ok") {
        let target = map
            .iter()
            .find(|(old, _)| *old == r.target)
            .map_or(r.target.clone(), |(_, new)| new.clone());
        let s = out
            .entry(Key {
                target,
                config: r.config.clone(),
                driver: if r.driver == "sysbench" {
                    "sysbench".into()
                } else {
                    String::new()
                },
                workload: r.workload.clone(),
                threads: r.threads,
            })
            .or_default();
        s.tps.push(r.tps);
        s.p95.push(r.lat_p95_ms);
        s.p99.push(r.lat_p99_ms);
    }
    out
}

fn key_name(k: &Key) -> String {
    let d = if k.driver.is_empty() {
        String::new()
    } else {
        format!("{}/", k.driver)
    };
    format!("{}/{}/{d}{}/t{}", k.target, k.config, k.workload, k.threads)
}

/// Compares candidate with base. `map` renames base targets (`--map old=new`).
pub fn compare(
    base: &[PointRecord],
    cand: &[PointRecord],
    threshold_pct: f64,
    map: &[(String, String)],
) -> Comparison {
    let b = sides(base, map);
    let c = sides(cand, &[]);
    let mut rows = Vec::new();
    for (k, bs) in &b {
        let Some(cs) = c.get(k) else { continue };
        // Each metric is judged against its own noise: latency percentiles scatter more
        // between repeats than throughput does.
        let noise = |b: &[f64], c: &[f64]| spread(b).max(spread(c));
        let tps_noise = noise(&bs.tps, &cs.tps);
        let limit = threshold_pct.max(tps_noise);
        let tps_d = pct(median(&cs.tps), median(&bs.tps));
        // Latency is compared only where both sides measured it (imported logs may lack p99).
        let lat = |bv: &[f64], cv: &[f64]| {
            if median(bv) > 0.0 && median(cv) > 0.0 {
                pct(median(cv), median(bv))
            } else {
                0.0
            }
        };
        let p95_d = lat(&bs.p95, &cs.p95);
        let p99_d = lat(&bs.p99, &cs.p99);
        let mut why = Vec::new();
        if tps_d < -limit {
            why.push(format!("tps {tps_d:+.1} %"));
        }
        // A latency rise must also be large in absolute terms: sub-millisecond tails move by
        // tens of microseconds between runs without meaning anything.
        let lat_up = |d: f64, bv: &[f64], cv: &[f64]| {
            d > threshold_pct.max(noise(bv, cv)) && median(cv) - median(bv) > LATENCY_FLOOR_MS
        };
        if lat_up(p95_d, &bs.p95, &cs.p95) {
            why.push(format!("p95 {p95_d:+.1} %"));
        }
        if lat_up(p99_d, &bs.p99, &cs.p99) {
            why.push(format!("p99 {p99_d:+.1} %"));
        }
        let verdict = if !why.is_empty() {
            "regressed"
        } else if tps_d > limit {
            "improved"
        } else {
            "ok"
        };
        rows.push(Row {
            target: k.target.clone(),
            config: k.config.clone(),
            workload: k.workload.clone(),
            threads: k.threads,
            base_tps: median(&bs.tps),
            cand_tps: median(&cs.tps),
            tps_delta_pct: tps_d,
            p95_delta_pct: p95_d,
            p99_delta_pct: p99_d,
            noise_pct: tps_noise,
            verdict,
            why: why.join(", "),
        });
    }
    Comparison {
        threshold_pct,
        method: METHOD,
        rows,
        only_base: b
            .keys()
            .filter(|k| !c.contains_key(*k))
            .map(key_name)
            .collect(),
        only_candidate: c
            .keys()
            .filter(|k| !b.contains_key(*k))
            .map(key_name)
            .collect(),
    }
}

/// Within one run: every target/config against the baseline one, as if they were two runs.
pub fn within_run(recs: &[PointRecord], baseline: &str, threshold_pct: f64) -> Comparison {
    let (bt, bc) = baseline.split_once('/').unwrap_or((baseline, "default"));
    let base: Vec<PointRecord> = recs
        .iter()
        .filter(|r| r.target == bt && r.config == bc)
        .cloned()
        .collect();
    let mut rows = Vec::new();
    let mut groups: Vec<(String, String)> = recs
        .iter()
        .map(|r| (r.target.clone(), r.config.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    for (t, c) in groups.into_iter().filter(|(t, c)| !(t == bt && c == bc)) {
        let cand: Vec<PointRecord> = recs
            .iter()
            .filter(|r| r.target == t && r.config == c)
            .cloned()
            .collect();
        // Compare as the same target/config so the points match.
        let renamed: Vec<PointRecord> = base
            .iter()
            .map(|r| PointRecord {
                target: t.clone(),
                config: c.clone(),
                ..r.clone()
            })
            .collect();
        rows.extend(compare(&renamed, &cand, threshold_pct, &[]).rows);
    }
    Comparison {
        threshold_pct,
        method: METHOD,
        rows,
        only_base: vec![],
        only_candidate: vec![],
    }
}

/// Plain-text table.
pub fn text(c: &Comparison) -> String {
    let mut s = format!(
        "{:<44} {:>10} {:>10} {:>8} {:>8} {:>8} {:>7}  verdict\n",
        "point", "base tps", "cand tps", "Δ tps", "Δ p95", "Δ p99", "noise"
    );
    for r in &c.rows {
        s.push_str(&format!(
            "{:<44} {:>10.2} {:>10.2} {:>7.1}% {:>7.1}% {:>7.1}% {:>6.1}%  {}{}\n",
            format!("{}/{}/{}/t{}", r.target, r.config, r.workload, r.threads),
            r.base_tps,
            r.cand_tps,
            r.tps_delta_pct,
            r.p95_delta_pct,
            r.p99_delta_pct,
            r.noise_pct,
            r.verdict,
            if r.why.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.why)
            }
        ));
    }
    for k in &c.only_base {
        s.push_str(&format!("unmatched, only in base: {k}\n"));
    }
    for k in &c.only_candidate {
        s.push_str(&format!("unmatched, only in candidate: {k}\n"));
    }
    let reg = c.regressed();
    s.push_str(&format!(
        "\n{} regressed, {} matched points, threshold {} %.\n{}\n",
        reg.len(),
        c.rows.len(),
        c.threshold_pct,
        c.method
    ));
    s
}

/// GitHub-flavoured Markdown table.
pub fn markdown(c: &Comparison) -> String {
    let mut s = String::from("| point | base tps | cand tps | Δ tps | Δ p95 | Δ p99 | noise | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
    for r in &c.rows {
        let v = if r.verdict == "regressed" {
            format!("**regressed** ({})", r.why)
        } else {
            r.verdict.to_string()
        };
        s.push_str(&format!(
            "| {}/{}/{}/t{} | {:.2} | {:.2} | {:+.1} % | {:+.1} % | {:+.1} % | {:.1} % | {v} |\n",
            r.target,
            r.config,
            r.workload,
            r.threads,
            r.base_tps,
            r.cand_tps,
            r.tps_delta_pct,
            r.p95_delta_pct,
            r.p99_delta_pct,
            r.noise_pct
        ));
    }
    for k in c
        .only_base
        .iter()
        .map(|k| format!("only in base: {k}"))
        .chain(
            c.only_candidate
                .iter()
                .map(|k| format!("only in candidate: {k}")),
        )
    {
        s.push_str(&format!("\n- unmatched, {k}"));
    }
    s.push_str(&format!(
        "\n\n{} regressed of {} matched points (threshold {} %). {}\n",
        c.regressed().len(),
        c.rows.len(),
        c.threshold_pct,
        c.method
    ));
    s
}

/// A small self-contained HTML page.
pub fn html(c: &Comparison) -> String {
    let esc = |x: &str| {
        x.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>sweepbench compare</title><style>body{font-family:sans-serif}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}.regressed{background:#fbe3e3}.improved{background:#e3f4e1}table{border-collapse:collapse}</style></head><body><table><tr><th>point</th><th>base tps</th><th>cand tps</th><th>Δ tps</th><th>Δ p95</th><th>Δ p99</th><th>noise</th><th>verdict</th></tr>");
    for r in &c.rows {
        s.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:+.1} %</td><td>{:+.1} %</td><td>{:+.1} %</td><td>{:.1} %</td><td>{} {}</td></tr>",
            r.verdict,
            esc(&format!("{}/{}/{}/t{}", r.target, r.config, r.workload, r.threads)),
            r.base_tps, r.cand_tps, r.tps_delta_pct, r.p95_delta_pct, r.p99_delta_pct, r.noise_pct, r.verdict, esc(&r.why)
        ));
    }
    s.push_str(&format!(
        "</table><p>{} regressed of {} matched points (threshold {} %). {}</p></body></html>\n",
        c.regressed().len(),
        c.rows.len(),
        c.threshold_pct,
        esc(c.method)
    ));
    s
}

/// "5%", "5" or "0.05"-style threshold → percent.
pub fn parse_threshold(s: &str) -> Option<f64> {
    let t = s.trim().trim_end_matches('%').trim();
    t.parse::<f64>().ok().filter(|v| *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(target: &str, threads: u32, repeat: u32, tps: f64, p95: f64) -> PointRecord {
        PointRecord {
            target: target.into(),
            config: "default".into(),
            workload: "oltp_point_select".into(),
            threads,
            repeat,
            status: "ok".into(),
            tps,
            lat_p95_ms: p95,
            lat_p99_ms: p95 * 2.0,
            ..PointRecord::default()
        }
    }

    #[test]
    fn regressions_need_both_threshold_and_noise() {
        let base = vec![
            rec("a", 1, 1, 100.0, 1.0),
            rec("a", 1, 2, 102.0, 1.0),
            rec("a", 8, 1, 400.0, 2.0),
        ];
        let cand = vec![
            rec("a", 1, 1, 94.0, 1.0),
            rec("a", 1, 2, 95.0, 1.0),
            rec("a", 8, 1, 240.0, 3.2),
            rec("a", 64, 1, 1.0, 1.0),
        ];
        let c = compare(&base, &cand, 5.0, &[]);
        assert_eq!(c.rows.len(), 2);
        // −6.4 % at 1 thread: beyond 5 %, and the repeats spread less (2.0 %, 1.1 %) → regressed.
        assert_eq!(c.rows[0].verdict, "regressed");
        assert_eq!(c.rows[1].verdict, "regressed");
        assert!(c.rows[1].why.contains("tps -40.0 %") && c.rows[1].why.contains("p95 +60.0 %"));
        assert_eq!(c.only_candidate, vec!["a/default/oltp_point_select/t64"]);
        let c = compare(&base, &cand, 25.0, &[]);
        assert_eq!(c.regressed().len(), 1);
    }

    #[test]
    fn noise_raises_the_bar() {
        let base = vec![rec("a", 1, 1, 100.0, 1.0), rec("a", 1, 2, 130.0, 1.0)];
        let cand = vec![rec("a", 1, 1, 90.0, 1.0), rec("a", 1, 2, 100.0, 1.0)];
        // −17 % but the repeats spread by 26 %: within the noise.
        let c = compare(&base, &cand, 5.0, &[]);
        assert_eq!(c.rows[0].verdict, "ok");
        assert!((c.rows[0].noise_pct - 26.087).abs() < 0.01);
    }

    #[test]
    fn map_renames_base_targets() {
        let base = vec![rec("old", 1, 1, 100.0, 1.0)];
        let cand = vec![rec("new", 1, 1, 100.0, 1.0)];
        assert_eq!(compare(&base, &cand, 5.0, &[]).rows.len(), 0);
        let c = compare(&base, &cand, 5.0, &[("old".into(), "new".into())]);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].verdict, "ok");
    }

    #[test]
    fn within_a_run_each_series_faces_the_baseline() {
        let mut v = vec![
            rec("a", 1, 1, 100.0, 1.0),
            rec("b", 1, 1, 50.0, 1.0),
            rec("c", 1, 1, 101.0, 1.0),
        ];
        v[1].config = "default".into();
        let c = within_run(&v, "a/default", 10.0);
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.regressed().len(), 1);
        assert_eq!(c.regressed()[0].target, "b");
        assert_eq!(parse_threshold("5%"), Some(5.0));
        assert_eq!(parse_threshold("x"), None);
    }
}
