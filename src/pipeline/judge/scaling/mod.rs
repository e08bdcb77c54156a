//! The scaling curve of one series (target × config × driver) and workload, modelled: the USL
//! fit with its quality and the reasons not to trust it, the knee of the fitted curve, the
//! measured peak, where latency turns up (the hockey stick), and how two series' coefficients
//! differ, with bootstrap intervals so a difference is claimed only when the data show it.

pub mod usl;

use crate::engine::metrics::{geo_mean, median};
use crate::pipeline::results::{PointRecord, PointStatus};
use usl::Usl;

/// Fewer concurrency levels than this and the fit is flagged (the USL's usual minimum).
pub const MIN_LEVELS: usize = 6;
/// A point with ignored errors above this share of its transactions is left out of the fit.
pub const MAX_ERROR_SHARE: f64 = 0.01;
/// A point whose ignored errors pass `MAX_ERROR_SHARE` of its transactions: left out of a
/// fit, and not meeting an SLA.
pub fn too_many_errors(r: &PointRecord) -> bool {
    r.transactions > 0 && r.errors as f64 > MAX_ERROR_SHARE * r.transactions as f64
}

/// How the model is fitted and judged, stated in reports.
pub const METHOD: &str = "Scaling model: the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + \
κN(N−1)) fitted by bounded least squares (λ > 0, 0 ≤ σ < 1, κ ≥ 0) to every ok point, repeats \
included; points with ignored errors above 1 % of transactions are left out, and client-bound \
points too unless fewer than 3 thread counts would remain (then kept, and flagged). σ is contention (serialised work), κ coherency (crosstalk); the peak N* = √((1−σ)/κ). \
Intervals: 95 %, residual bootstrap (200 resamples). Fewer than 6 thread counts, R² below 0.9, a \
peak beyond twice the largest thread count, σ held at 0 and a plateau after the peak are flagged. \
Knee: where the fitted curve bends most (Kneedle). Latency knee: the first thread count whose \
next step multiplies p99 by more than it multiplies throughput. Two series' coefficients are \
called different only when their intervals do not overlap.";

/// The highest open-loop rate of a series that met a p99 limit, and the step above it.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct SlaCapacity {
    pub p99_limit_ms: f64,
    /// Arrivals/s of the highest rate that met the limit, what it achieved and its p99;
    /// None when none did.
    pub rate: Option<u64>,
    pub tps: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The lowest rate above it that missed, and its p99 (None: the limit held up to the
    /// closed-loop peak, so throughput, not latency, is the limit).
    pub next_rate: Option<u64>,
    pub next_p99_ms: Option<f64>,
    /// Rates tried.
    pub steps: usize,
}

/// Whether an open-loop point meets a p99 limit: it ran ok, with errors within 1 %, kept up
/// with its arrivals, and its p99 (measured from each arrival) is within the limit. Arrivals
/// are a Poisson stream, so "kept up" allows three standard deviations of their count below
/// the rate (5 % at 1,000/s for 3 s, 1.2 % for 60 s) and never more than 1 % on top.
pub fn meets_sla(r: &PointRecord, p99_ms: f64) -> bool {
    let expected = r.rate as f64 * r.duration_s.max(1e-9);
    let slack = (3.0 / expected.sqrt()).max(0.01);
    r.status == PointStatus::Ok
        && !too_many_errors(r)
        && r.rate > 0
        && r.tps >= r.rate as f64 * (1.0 - slack)
        && r.lat_p99_ms.is_some_and(|l| l <= p99_ms)
}

/// The SLA capacity from a series' open-loop points.
pub fn sla_capacity(recs: &[&PointRecord], p99_ms: f64) -> Option<SlaCapacity> {
    if recs.is_empty() {
        return None;
    }
    let best = recs
        .iter()
        .filter(|r| meets_sla(r, p99_ms))
        .max_by_key(|r| r.rate);
    let next = recs
        .iter()
        .filter(|r| !meets_sla(r, p99_ms) && best.is_none_or(|b| r.rate > b.rate))
        .min_by_key(|r| r.rate);
    Some(SlaCapacity {
        p99_limit_ms: p99_ms,
        rate: best.map(|b| b.rate),
        tps: best.map(|b| b.tps),
        p99_ms: best.and_then(|b| b.lat_p99_ms),
        next_rate: next.map(|n| n.rate),
        next_p99_ms: next.and_then(|n| n.lat_p99_ms),
        steps: recs.len(),
    })
}

/// Bootstrap resamples behind each coefficient's interval.
const RESAMPLES: usize = 200;

/// What the fit says about one series, with what it rests on.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct Scaling {
    pub series: String,
    pub workload: String,
    /// Distinct thread counts, and points (repeats included), the fit used.
    pub levels: usize,
    pub points: usize,
    /// Points left out and why ("t256 r2: client-bound").
    pub left_out: Vec<String>,
    /// The fit; all None when there is none (`fit_error` says why).
    pub sigma: Option<f64>,
    pub kappa: Option<f64>,
    pub lambda: Option<f64>,
    /// 95 % bootstrap intervals (residual resampling), [low, high].
    pub sigma_ci: Option<[f64; 2]>,
    pub kappa_ci: Option<[f64; 2]>,
    pub r2: Option<f64>,
    /// N* = √((1−σ)/κ) and X(N*); None when κ ≈ 0 (no peak within the model).
    pub peak_threads: Option<f64>,
    pub peak_tps: Option<f64>,
    /// True when N* lies beyond twice the largest measured thread count (not trusted).
    pub peak_beyond_data: bool,
    /// Where the fitted curve bends most (Kneedle), threads.
    pub knee_threads: Option<f64>,
    /// The best median throughput measured, and at how many threads.
    pub measured_peak_threads: u32,
    pub measured_peak_tps: f64,
    /// Median throughput measured at one thread, beside the fitted λ.
    pub measured_x1: Option<f64>,
    /// The thread count from which p99 (p95 where p99 is unknown) grows by a larger factor
    /// than throughput: latency buys no more throughput.
    pub latency_knee_threads: Option<u32>,
    pub warnings: Vec<String>,
    pub fit_error: Option<String>,
    /// Capacity at a latency SLA (`rates = "auto"`), when the run searched for it.
    pub sla: Option<SlaCapacity>,
    /// The fitted curve up to the chart's edge, for drawing: at every thread count up to
    /// `CURVE_DENSE`, then in steps of 1/64 of a doubling (`curve_grid`).
    #[serde(skip)]
    pub curve: Vec<(u32, f64)>,
}

/// Per thread count (ascending): the geometric mean of tps (the report's cell figure, so a
/// series has one peak in every table) and the median p99 (p95 where no p99), over ok points.
fn medians(recs: &[&PointRecord]) -> Vec<(u32, f64, f64)> {
    let mut threads: Vec<u32> = recs.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    threads
        .into_iter()
        .map(|t| {
            let at: Vec<&&PointRecord> = recs.iter().filter(|r| r.threads == t).collect();
            let tps: Vec<f64> = at.iter().map(|r| r.tps).collect();
            let lat: Vec<f64> = at
                .iter()
                .map(|r| r.lat_p99_ms.unwrap_or(r.lat_p95_ms))
                .collect();
            (t, geo_mean(&tps), median(&lat))
        })
        .collect()
}

/// The first thread count whose next step multiplies latency by more than throughput.
fn latency_knee(m: &[(u32, f64, f64)]) -> Option<u32> {
    m.windows(2).find_map(|w| {
        let (a, b) = (w[0], w[1]);
        let ok = a.1 > 0.0 && b.1 > 0.0 && a.2 > 0.0 && b.2 > 0.0;
        (ok && (b.2 / a.2).ln() > (b.1 / a.1).ln().max(0.0) && b.2 > a.2 * 1.1).then_some(a.0)
    })
}

/// Kneedle on the fitted curve between `lo` and `hi` threads: where the normalized curve lies
/// furthest above the chord.
fn knee(m: &Usl, lo: f64, hi: f64) -> Option<f64> {
    if hi <= lo * 1.5 {
        return None;
    }
    let (y0, y1) = (m.throughput(lo), m.throughput(hi));
    if y1 <= y0 {
        return None;
    }
    let steps = 400;
    (0..=steps)
        .map(|i| {
            let x = i as f64 / steps as f64;
            let n = lo + x * (hi - lo);
            (n, (m.throughput(n) - y0) / (y1 - y0) - x)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|k| k.1 > 0.0)
        .map(|k| k.0)
}

/// Percentile `p` (0–1) of sorted `v`.
fn quantile(v: &[f64], p: f64) -> f64 {
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i.min(v.len() - 1)]
}

/// 95 % intervals of σ and κ by residual bootstrap: refits on fitted values plus resampled
/// residuals (a fixed seed, so a report is reproducible).
fn intervals(m: &Usl, data: &[(f64, f64)]) -> Option<([f64; 2], [f64; 2])> {
    let resid: Vec<f64> = data.iter().map(|&(n, x)| x - m.throughput(n)).collect();
    let mut rng = crate::engine::workload::rand::Rng::seeded(1);
    let (mut s, mut k) = (Vec::new(), Vec::new());
    for _ in 0..RESAMPLES {
        let sample: Vec<(f64, f64)> = data
            .iter()
            .map(|&(n, _)| {
                let r = resid[(rng.next_u64() % resid.len() as u64) as usize];
                (n, (m.throughput(n) + r).max(f64::MIN_POSITIVE))
            })
            .collect();
        if let Ok(b) = usl::refit(&sample, m) {
            s.push(b.sigma);
            k.push(b.kappa);
        }
    }
    if s.len() < RESAMPLES / 2 {
        return None;
    }
    s.sort_by(f64::total_cmp);
    k.sort_by(f64::total_cmp);
    Some((
        [quantile(&s, 0.025), quantile(&s, 0.975)],
        [quantile(&k, 0.025), quantile(&k, 0.975)],
    ))
}

/// Models one series' records of one workload. Client-bound points (as the report marks
/// them), points with errors and failed points are left out of the fit and listed.
pub fn analyse(series: &str, workload: &str, records: &[&PointRecord]) -> Scaling {
    let ok: Vec<&PointRecord> = records
        .iter()
        .copied()
        .filter(|r| r.status == PointStatus::Ok && r.tps > 0.0)
        .collect();
    let mut left_out = Vec::new();
    let mut used: Vec<&PointRecord> = Vec::new();
    let mut bound: Vec<&PointRecord> = Vec::new();
    for r in &ok {
        if too_many_errors(r) {
            left_out.push(format!("t{} r{}: errors above 1 %", r.threads, r.repeat));
        } else if r.client_cpu_pct >= crate::pipeline::results::CLIENT_BOUND_PCT {
            bound.push(r);
        } else {
            used.push(r);
        }
    }
    // Client-bound points are left out while enough others remain to fit; where the client
    // shares a small machine with the server nearly every point is, and the fit keeps them
    // with a warning rather than say nothing.
    let mut kept_bound = false;
    let levels_of = |v: &[&PointRecord]| {
        let mut l: Vec<u32> = v.iter().map(|r| r.threads).collect();
        l.sort_unstable();
        l.dedup();
        l.len()
    };
    if levels_of(&used) < 3 && !bound.is_empty() {
        used.extend(bound.iter().copied());
        kept_bound = true;
    } else {
        for r in &bound {
            left_out.push(format!("t{} r{}: client-bound", r.threads, r.repeat));
        }
    }
    let failed = records.len() - ok.len();
    if failed > 0 {
        left_out.push(format!("{failed} point(s) that did not run ok"));
    }
    let all = medians(&ok);
    let (measured_peak_threads, measured_peak_tps) = all
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or((0, 0.0), |m| (m.0, m.1));
    let data: Vec<(f64, f64)> = used.iter().map(|r| (r.threads as f64, r.tps)).collect();
    let mut levels: Vec<u32> = used.iter().map(|r| r.threads).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut s = Scaling {
        series: series.to_string(),
        workload: workload.to_string(),
        levels: levels.len(),
        points: data.len(),
        left_out,
        sigma: None,
        kappa: None,
        lambda: None,
        sigma_ci: None,
        kappa_ci: None,
        r2: None,
        peak_threads: None,
        peak_tps: None,
        peak_beyond_data: false,
        knee_threads: None,
        measured_peak_threads,
        measured_peak_tps,
        measured_x1: all.iter().find(|m| m.0 == 1).map(|m| m.1),
        latency_knee_threads: latency_knee(&all),
        warnings: Vec::new(),
        fit_error: None,
        sla: None,
        curve: Vec::new(),
    };
    let m = match usl::fit(&data) {
        Ok(m) => m,
        Err(e) => {
            s.fit_error = Some(e.to_string());
            return s;
        }
    };
    let n_min = levels[0] as f64;
    let n_max = *levels.last().expect("a fit has levels") as f64;
    let r2 = usl::r_squared(&m, &data);
    (s.sigma, s.kappa, s.lambda, s.r2) = (Some(m.sigma), Some(m.kappa), Some(m.lambda), Some(r2));
    if let Some((sc, kc)) = intervals(&m, &data) {
        (s.sigma_ci, s.kappa_ci) = (Some(sc), Some(kc));
    }
    if kept_bound {
        s.warnings.push(format!(
            "fitted with {} client-bound point(s): without them fewer than 3 thread counts remain, and the client may have limited them",
            bound.len()
        ));
    }
    if levels.len() < MIN_LEVELS {
        s.warnings.push(format!(
            "only {} thread counts: the USL needs {MIN_LEVELS} or more (12 are better) to be trusted",
            levels.len()
        ));
    }
    if r2 < 0.9 {
        s.warnings.push(format!(
            "poor fit (R² {r2:.2}): the USL does not describe these points"
        ));
    }
    if let Some(x1) = s.measured_x1 {
        let ratio = m.lambda / x1;
        if !(0.67..=1.5).contains(&ratio) {
            s.warnings.push(format!(
                "the fitted λ ({:.0}) is {ratio:.1}× the throughput measured at one thread ({x1:.0}): the first point does not follow the curve (one connection pays every wake-up on an idle machine)",
                m.lambda
            ));
        }
    }
    if usl::sigma_wants_negative(&m, &data) {
        s.warnings.push("σ would be negative (held at 0): the points scale better than linearly somewhere, e.g. a slow first point (cold caches) or idle threads".into());
    }
    match m.peak_concurrency() {
        Some(p) if p <= 1e6 => {
            s.peak_threads = Some(p);
            s.peak_tps = Some(m.throughput(p));
            if p > 2.0 * n_max {
                s.peak_beyond_data = true;
                s.warnings.push(format!(
                    "the predicted peak (N* ≈ {p:.0}) lies beyond twice the largest thread count measured ({n_max:.0}): not trusted; measure higher"
                ));
            }
            // A plateau: well past N*, throughput stays nearer its measured best than the
            // model's decline allows.
            if let Some(last) = all.last().filter(|l| l.0 as f64 > 1.5 * p) {
                let kept = last.1 / measured_peak_tps.max(f64::MIN_POSITIVE);
                let model = m.throughput(last.0 as f64) / m.throughput(p);
                if kept - model > 0.05 {
                    s.warnings.push(format!("throughput holds past the model's peak ({:.0} % of the best at {} threads; the USL says {:.0} %): a plateau the USL cannot describe, so trust the measured peak, not N*", kept * 100.0, last.0, model * 100.0));
                }
            }
        }
        _ => s.warnings.push("no peak within the model (κ ≈ 0): throughput levels off toward λ/σ rather than falling".into()),
    }
    let hi = s.peak_threads.map_or(n_max, |p| p.min(n_max));
    s.knee_threads = knee(&m, n_min, hi);
    let edge = (n_max as u32).max(2);
    s.curve = curve_grid(edge)
        .into_iter()
        .map(|n| (n, m.throughput(n as f64)))
        .collect();
    s
}

/// Thread counts drawn one by one; above, the curve is drawn on a log grid.
const CURVE_DENSE: u32 = 128;

/// The thread counts a fitted curve is drawn at, 1 to `edge`: every one up to
/// `CURVE_DENSE`, then 64 steps per doubling, so the drawing is as smooth on the chart's log
/// axis and its size stays in the thousands whatever thread count a file names.
fn curve_grid(edge: u32) -> Vec<u32> {
    let mut out: Vec<u32> = (1..=edge.min(CURVE_DENSE)).collect();
    let mut n = CURVE_DENSE as f64;
    while (n as u32) < edge {
        n *= 2f64.powf(1.0 / 64.0);
        let k = (n.round() as u32).min(edge);
        if out.last() != Some(&k) {
            out.push(k);
        }
    }
    out
}

/// How `other`'s coefficients differ from `base`'s, in words, when both were fitted: a
/// difference is named only when the 95 % intervals do not overlap.
pub fn compare(base: &Scaling, other: &Scaling) -> Option<String> {
    let (bs, os) = (base.sigma?, other.sigma?);
    let (bk, ok) = (base.kappa?, other.kappa?);
    let verdict = |b: Option<[f64; 2]>, o: Option<[f64; 2]>, up: &str, down: &str| match (b, o) {
        (Some(b), Some(o)) if o[0] > b[1] => up.to_string(),
        (Some(b), Some(o)) if o[1] < b[0] => down.to_string(),
        (Some(_), Some(_)) => "intervals overlap: no difference shown".to_string(),
        _ => "no interval: undecided".to_string(),
    };
    let sv = verdict(
        base.sigma_ci,
        other.sigma_ci,
        "more contention",
        "less contention",
    );
    let kv = verdict(
        base.kappa_ci,
        other.kappa_ci,
        "more coherency cost",
        "less coherency cost",
    );
    let peak = |s: &Scaling| {
        s.peak_threads
            .map_or("none".to_string(), |p| format!("{p:.0}"))
    };
    Some(format!(
        "{} vs {} ({}): σ {bs:.4} → {os:.4} ({sv}); κ {bk:.2e} → {ok:.2e} ({kv}); N* {} → {}",
        other.series,
        base.series,
        other.workload,
        peak(base),
        peak(other),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(threads: u32, repeat: u32, tps: f64, p99: f64) -> PointRecord {
        PointRecord {
            threads,
            repeat,
            tps,
            transactions: (tps * 10.0) as u64,
            status: PointStatus::Ok,
            lat_p95_ms: p99 * 0.9,
            lat_p99_ms: Some(p99),
            ..Default::default()
        }
    }

    /// Records of a USL curve at `levels`, two repeats each ±`jitter` (relative), with p99 by
    /// Little's law (N / X).
    fn curve(m: &Usl, levels: &[u32], jitter: f64) -> Vec<PointRecord> {
        levels
            .iter()
            .flat_map(|&n| {
                let x = m.throughput(n as f64);
                [1.0 - jitter, 1.0 + jitter]
                    .into_iter()
                    .enumerate()
                    .map(move |(i, f)| rec(n, i as u32 + 1, x * f, n as f64 / x * 1e3 * 1.5))
            })
            .collect()
    }

    const LEVELS: [u32; 10] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64];

    #[test]
    fn a_usl_series_is_fitted_with_its_peak_and_knees() {
        let truth = Usl {
            sigma: 0.05,
            kappa: 0.001,
            lambda: 1000.0,
        };
        let recs = curve(&truth, &LEVELS, 0.01);
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a/default", "oltp_read_only", &refs);
        assert_eq!((s.levels, s.points), (10, 20));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert!((s.sigma.unwrap() - 0.05).abs() < 0.005, "{s:?}");
        let ci = s.sigma_ci.unwrap();
        assert!(
            ci[0] <= s.sigma.unwrap() && s.sigma.unwrap() <= ci[1],
            "{s:?}"
        );
        // N* = √(0.95/0.001) ≈ 30.8, X(N*) from the model.
        assert!((s.peak_threads.unwrap() - 30.8).abs() < 2.0, "{s:?}");
        assert!(s.r2.unwrap() > 0.99);
        assert_eq!(s.measured_peak_threads, 32);
        let knee = s.knee_threads.unwrap();
        assert!(knee > 1.0 && knee < s.peak_threads.unwrap(), "{s:?}");
        assert!(s.latency_knee_threads.is_some());
        assert_eq!(s.curve.len(), 64);
    }

    #[test]
    fn the_drawn_curve_is_bounded_whatever_the_thread_counts() {
        assert_eq!(curve_grid(64), (1..=64).collect::<Vec<_>>());
        let g = curve_grid(u32::MAX);
        assert!(g.len() < 2_200, "{}", g.len());
        assert_eq!((g[0], g[127], *g.last().unwrap()), (1, 128, u32::MAX));
        assert!(g.windows(2).all(|w| w[0] < w[1]));
        // Steps of 1/64 of a doubling (1.1 %, rounded to whole threads) above 128.
        assert!(g
            .windows(2)
            .skip(127)
            .all(|w| (w[1] as f64 / w[0] as f64) < 1.02));
    }

    #[test]
    fn client_bound_and_failing_points_are_left_out_and_said_so() {
        let truth = Usl {
            sigma: 0.05,
            kappa: 0.001,
            lambda: 1000.0,
        };
        let mut recs = curve(&truth, &LEVELS, 0.01);
        recs[0].client_cpu_pct = 80.0;
        recs[1].errors = recs[1].transactions;
        recs[2].status = PointStatus::Failed;
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a/default", "w", &refs);
        assert_eq!(s.points, 17);
        assert_eq!(
            s.left_out,
            [
                "t1 r2: errors above 1 %",
                "t1 r1: client-bound",
                "1 point(s) that did not run ok"
            ]
        );
    }

    #[test]
    fn what_the_model_cannot_say_is_flagged() {
        let truth = Usl {
            sigma: 0.05,
            kappa: 0.001,
            lambda: 1000.0,
        };
        // Five levels: fitted, but flagged.
        let recs = curve(&truth, &[1, 2, 4, 8, 16], 0.01);
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a", "w", &refs);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("only 5 thread counts")),
            "{:?}",
            s.warnings
        );
        // Two levels: no fit, and why.
        let refs: Vec<&PointRecord> = recs.iter().filter(|r| r.threads <= 2).collect();
        let s = analyse("a", "w", &refs);
        assert!(s.sigma.is_none() && s.fit_error.as_deref().unwrap().contains("at least 3"));
        // Amdahl (κ = 0): no peak within the model.
        let amdahl = Usl {
            sigma: 0.05,
            kappa: 0.0,
            lambda: 1000.0,
        };
        let recs = curve(&amdahl, &LEVELS, 0.005);
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a", "w", &refs);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("no peak within the model") || w.contains("beyond twice")),
            "{:?}",
            s.warnings
        );
        // A plateau after a peak (flat to 256 threads): flagged.
        let mut recs = curve(
            &truth,
            &[1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256],
            0.01,
        );
        for r in recs.iter_mut().filter(|r| r.threads >= 48) {
            r.tps = truth.throughput(32.0);
        }
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a", "w", &refs);
        assert!(
            s.warnings.iter().any(|w| w.contains("plateau")),
            "{:?}",
            s.warnings
        );
        // A slow first point: λ far from X(1).
        let mut recs = curve(&truth, &LEVELS, 0.01);
        for r in recs.iter_mut().filter(|r| r.threads == 1) {
            r.tps /= 4.0;
        }
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a", "w", &refs);
        assert!(
            s.warnings.iter().any(|w| w.contains("first point")),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn coefficients_are_called_different_only_when_their_intervals_part() {
        let base = Usl {
            sigma: 0.03,
            kappa: 0.0005,
            lambda: 1000.0,
        };
        let more = Usl {
            sigma: 0.09,
            kappa: 0.0005,
            lambda: 1000.0,
        };
        let same = Usl {
            sigma: 0.031,
            kappa: 0.0005,
            lambda: 1000.0,
        };
        let fit = |m: &Usl, name: &str| {
            let recs = curve(m, &LEVELS, 0.02);
            let refs: Vec<&PointRecord> = recs.iter().collect();
            analyse(name, "w", &refs)
        };
        let (b, m, s) = (fit(&base, "b"), fit(&more, "m"), fit(&same, "s"));
        let text = compare(&b, &m).unwrap();
        assert!(text.contains("(more contention)"), "{text}");
        let text = compare(&b, &s).unwrap();
        assert!(
            text.contains("σ") && text.contains("no difference shown"),
            "{text}"
        );
        let none = analyse("n", "w", &[]);
        assert!(compare(&b, &none).is_none());
    }

    #[test]
    fn an_sla_step_meets_the_limit_only_when_it_kept_up_without_errors() {
        let step = |rate: u64, tps: f64, p99: f64| PointRecord {
            rate,
            tps,
            duration_s: 60.0,
            transactions: (tps * 60.0) as u64,
            status: PointStatus::Ok,
            lat_p99_ms: Some(p99),
            ..Default::default()
        };
        assert!(meets_sla(&step(1000, 995.0, 9.0), 10.0));
        assert!(!meets_sla(&step(1000, 995.0, 11.0), 10.0), "p99 over");
        // 60 s at 1,000/s: three standard deviations of the arrivals are 1.2 %.
        assert!(!meets_sla(&step(1000, 980.0, 9.0), 10.0), "fell behind");
        let mut e = step(1000, 1000.0, 1.0);
        e.errors = e.transactions / 50;
        assert!(!meets_sla(&e, 10.0), "errors");
        assert!(!meets_sla(&step(0, 1000.0, 1.0), 10.0), "closed loop");
        let recs = [
            step(1000, 1000.0, 12.0),
            step(500, 500.0, 4.0),
            step(750, 749.0, 8.0),
            step(875, 870.0, 10.5),
        ];
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let c = sla_capacity(&refs, 10.0).unwrap();
        assert_eq!((c.rate, c.next_rate, c.steps), (Some(750), Some(875), 4));
        assert_eq!(c.p99_ms, Some(8.0));
    }

    #[test]
    fn client_bound_points_are_kept_with_a_warning_when_too_few_remain() {
        let truth = Usl {
            sigma: 0.05,
            kappa: 0.001,
            lambda: 1000.0,
        };
        let mut recs = curve(&truth, &[1, 2, 4, 8], 0.01);
        for r in recs.iter_mut().filter(|r| r.threads <= 4) {
            r.client_cpu_pct = 70.0;
        }
        let refs: Vec<&PointRecord> = recs.iter().collect();
        let s = analyse("a", "w", &refs);
        assert!(s.sigma.is_some(), "{s:?}");
        assert_eq!(s.points, 8);
        assert!(s.left_out.is_empty(), "{:?}", s.left_out);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("fitted with 6 client-bound")),
            "{:?}",
            s.warnings
        );
    }
}
