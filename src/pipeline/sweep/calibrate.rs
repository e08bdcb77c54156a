//! `sweepbench calibrate SWEEP`: the sweep run twice on this machine (an A/A pair), then per
//! point the noise measured, the smallest drop the sweep's repeats can catch, and the repeats
//! that would resolve the threshold. Kept as results/<sweep>/calibration.json for `plan`.

use super::SweepArgs;
use crate::exit::Exit;
use crate::pipeline::compare::{self, Run};
use crate::pipeline::events::Events;
use crate::pipeline::judge::verdict::Metric;
use std::path::{Path, PathBuf};

/// One point's calibration.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PointNoise {
    pub point: String,
    pub tps_noise_pct: Option<f64>,
    pub p95_noise_pct: Option<f64>,
    pub p99_noise_pct: Option<f64>,
    /// The tps noise one run's per-second samples show: far below the run-to-run noise,
    /// longer points will not help and more repeats will.
    pub within_noise_pct: Option<f64>,
    /// The smallest tps drop the sweep's repeats would call regressed 80 % of the time.
    pub mde_pct: Option<f64>,
    /// Repeats per side that would resolve ±threshold for tps (None: more than 50).
    pub repeats_needed: Option<u32>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    pub sweep: String,
    pub runs: Vec<String>,
    pub threshold_pct: f64,
    pub repeats: u32,
    /// What the A/A comparison itself said (it should be nothing regressed).
    pub aa_headline: String,
    pub points: Vec<PointNoise>,
}

pub fn path(results_dir: &Path, sweep: &str) -> PathBuf {
    results_dir.join(sweep).join("calibration.json")
}

pub fn load(results_dir: &Path, sweep: &str) -> Option<Calibration> {
    serde_json::from_str(&std::fs::read_to_string(path(results_dir, sweep)).ok()?).ok()
}

fn median(v: Vec<f64>) -> Option<f64> {
    (!v.is_empty()).then(|| crate::engine::metrics::median(&v))
}

/// One line for `plan`: what a comparison of this sweep can resolve here.
pub fn summary(c: &Calibration) -> String {
    let mde = median(c.points.iter().filter_map(|p| p.mde_pct).collect());
    let worst = c
        .points
        .iter()
        .filter_map(|p| p.mde_pct)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let need = median(
        c.points
            .iter()
            .map(|p| p.repeats_needed.map_or(51.0, f64::from))
            .collect(),
    );
    format!(
        "calibration ({} runs, {} repeats): a comparison catches tps drops of {} at the median point, {} at the noisiest; ±{} needs {} repeats at the median point",
        c.runs.len(),
        c.repeats,
        mde.map_or("?".into(), |m| format!("{m:.0} %")),
        worst.map_or("?".into(), |m| format!("{m:.0} %")),
        crate::pipeline::judge::verdict::fmt_pct(c.threshold_pct),
        need.map_or("?".into(), |n| if n > 50.0 { "more than 50".into() } else { format!("{n:.0}") }),
    )
}

/// `sweepbench calibrate`: the sweep run twice (its runs say what they do on `ev`), then the
/// noise per point as output and in calibration.json.
pub async fn calibrate(a: &SweepArgs, threshold_pct: f64, ev: &dyn Events) -> anyhow::Result<Exit> {
    let spec = super::load_spec(a)?;
    let mut runs = Vec::new();
    for i in 1..=2 {
        ev.output(&format!("calibrate: run {i} of 2"));
        let mut one = a.clone();
        one.fail_on_regression = None;
        let exit = super::run(&one, ev).await?;
        if exit != Exit::Ok {
            ev.error(&format!(
                "run {i} ended with exit {}; no calibration",
                exit.code()
            ));
            return Ok(exit);
        }
        runs.push(
            super::latest_run(&a.results_dir, &spec.name)
                .ok_or_else(|| anyhow::anyhow!("run {i} left no run directory"))?,
        );
    }
    let loaded = runs
        .iter()
        .map(|r| Run::load(r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cmp = compare::compare(&loaded[0], &loaded[1], threshold_pct, &[])?;
    let noise = |r: &compare::Row, m: Metric| r.metric(m).and_then(|j| j.noise_pct);
    let cal = Calibration {
        sweep: spec.name.clone(),
        runs: runs
            .iter()
            .map(|r| {
                r.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string()
            })
            .collect(),
        threshold_pct,
        repeats: spec.run.repeats,
        aa_headline: cmp.headline.clone(),
        points: cmp
            .rows
            .iter()
            .map(|r| PointNoise {
                point: r.point.clone(),
                tps_noise_pct: noise(r, Metric::Tps),
                p95_noise_pct: noise(r, Metric::P95),
                p99_noise_pct: noise(r, Metric::P99),
                within_noise_pct: r.metric(Metric::Tps).and_then(|j| j.within_noise_pct),
                mde_pct: r.metric(Metric::Tps).and_then(|j| j.mde_pct),
                repeats_needed: r.metric(Metric::Tps).and_then(|j| j.repeats_needed),
            })
            .collect(),
    };
    let f = |x: Option<f64>| x.map_or("?".to_string(), |v| format!("{v:.1}%"));
    ev.output_text(&format!(
        "\n{:<48} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
        "point", "tps", "p95", "p99", "within", "MDE", "repeats"
    ));
    for p in &cal.points {
        ev.output_text(&format!(
            "{:<48} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
            p.point,
            f(p.tps_noise_pct),
            f(p.p95_noise_pct),
            f(p.p99_noise_pct),
            f(p.within_noise_pct),
            f(p.mde_pct),
            p.repeats_needed
                .map_or(">50".to_string(), |n| n.to_string())
        ));
    }
    ev.output_text(&format!(
        "\nnoise: run-to-run SD per metric at {} repeats; within: the tps noise of one run's mean from its per-second samples; MDE: the smallest tps drop a comparison of two such runs calls regressed 80 % of the time; repeats: per side, to resolve ±{}.\nA/A ({} vs {}): {}.\n{}",
        cal.repeats,
        crate::pipeline::judge::verdict::fmt_pct(threshold_pct),
        cal.runs[0],
        cal.runs[1],
        cal.aa_headline,
        summary(&cal)
    ));
    let between = cal
        .points
        .iter()
        .filter(
            |p| matches!((p.within_noise_pct, p.tps_noise_pct), (Some(w), Some(n)) if w < n / 2.0),
        )
        .count();
    ev.output_text(&format!(
        "run-to-run noise is more than twice the within-run noise at {between} of {} points: there, more repeats resolve more than longer points do",
        cal.points.len()
    ));
    let out = path(&a.results_dir, &spec.name);
    crate::pipeline::results::write_atomic(&out, serde_json::to_string_pretty(&cal)?.as_bytes())?;
    ev.output_text(&format!("written to {}", out.display()));
    Ok(Exit::Ok)
}
