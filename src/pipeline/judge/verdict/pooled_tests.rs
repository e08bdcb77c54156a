//! The pooled estimate's arithmetic; its behaviour on synthetic machines with a known truth is
//! checked beside the paired method's (paired_tests.rs).

use super::*;

fn at(d: &[f64], se: f64) -> Vec<PointChange> {
    d.iter()
        .enumerate()
        .map(|(i, &d)| PointChange {
            threads: 1 << i,
            d,
            se,
            verdict: None,
        })
        .collect()
}

/// Points that agree exactly: the mean is theirs, no spread between them, and the interval
/// is the fixed-effect one on t with k − 1 degrees of freedom.
#[test]
fn agreeing_points_pool_to_their_common_change() {
    let (mu, lo, hi, tau) = pool(&at(&[-0.05; 4], 0.02), 0.05).unwrap();
    assert!((mu + 0.05).abs() < 1e-12);
    assert_eq!(tau, 0.0);
    let half = 0.02 / 2.0 * t_quantile(0.975, 3.0);
    assert!((hi - mu - half).abs() < 1e-12 && (mu - lo - half).abs() < 1e-12);
}

/// Points that disagree more than their errors allow widen the interval: the between-point
/// variance is estimated (DerSimonian–Laird: Q − (k − 1) over c) and the HKSJ scale is used.
#[test]
fn disagreeing_points_widen_the_interval() {
    let d = [-0.20, 0.0, -0.10, 0.05];
    let se = 0.01;
    let (mu, lo, hi, tau) = pool(&at(&d, se), 0.05).unwrap();
    // Equal weights: the mean is the plain mean; τ² = Q/Σw·… by hand.
    let m = d.iter().sum::<f64>() / 4.0;
    assert!((mu - m).abs() < 1e-12);
    let q: f64 = d.iter().map(|x| (x - m).powi(2) / (se * se)).sum();
    let w = 1.0 / (se * se);
    let c = 4.0 * w - 4.0 * w * w / (4.0 * w);
    let tau2 = (q - 3.0) / c;
    assert!((tau - tau2.sqrt()).abs() < 1e-12);
    // The HKSJ variance of equal weights is the sample variance of the points over k.
    let var = d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0 / 4.0;
    let half = var.sqrt() * t_quantile(0.975, 3.0);
    assert!((hi - mu - half).abs() < 1e-9, "{} vs {half}", hi - mu);
    assert!(lo < -0.2 && hi > 0.0);
}

#[test]
fn one_point_is_not_pooled_and_the_reading_follows_the_interval() {
    assert!(pool(&at(&[-0.1], 0.01), 0.05).is_none());
    let ln = |p: f64| (1.0 + p / 100.0).ln();
    assert_eq!(read(ln(-12.0), ln(-6.0), 5.0), Verdict::Regressed);
    assert_eq!(read(ln(-12.0), ln(-3.4), 5.0), Verdict::Slower);
    assert_eq!(read(ln(-3.0), ln(4.0), 5.0), Verdict::Unchanged);
    assert_eq!(read(ln(-8.0), ln(4.0), 5.0), Verdict::Inconclusive);
    assert_eq!(read(ln(1.0), ln(9.0), 5.0), Verdict::Faster);
    let qs = vec![
        (
            "m/slow".to_string(),
            "oltp_read_only".to_string(),
            at(&[-0.07, -0.06, -0.08], 0.01),
        ),
        (
            "m/slow".to_string(),
            "oltp_point_select".to_string(),
            at(&[-0.07], 0.01),
        ),
    ];
    let a = answers(&qs, 5.0);
    // One question had two or more points: it alone shares α.
    assert_eq!(a.len(), 1);
    assert!((a[0].confidence - 0.95).abs() < 1e-12);
    assert_eq!((a[0].points, a[0].lower, a[0].higher), (3, 3, 0));
    let s = sentence(&a[0], "m/default", 5.0);
    assert!(
        s.starts_with("m/slow is slower than m/default for oltp_read_only by 6.8 % [")
            && s.contains("(lower at 3 of 3 thread counts)"),
        "{s}"
    );
}

/// Two regressions too different for a two-point pooled interval (the bp 8 MB sweep: −23 %
/// and −47 %, each decided) are answered "regressed at every thread count"; one point short
/// of agreement, or a pooled answer already as strong, is left alone.
#[test]
fn every_point_regressed_settles_an_undecided_pooled_answer() {
    use Verdict::*;
    let q = vec![(
        "m/bp8m".to_string(),
        "oltp_read_only".to_string(),
        at(&[(0.77f64).ln(), (0.53f64).ln()], 0.02),
    )];
    let mut p = answers(&q, 5.0).remove(0);
    assert_eq!(p.verdict, Inconclusive, "{p:?}");
    let undecided = p.clone();
    settle_by_points(&mut p, &[Regressed, Regressed]);
    assert_eq!((p.verdict, p.every_point), (Regressed, true));
    let s = sentence(&p, "m/bp1g", 5.0);
    assert!(
        s.starts_with("m/bp8m is slower than m/bp1g for oltp_read_only at every thread count measured (2 of 2: each regressed, beyond −5 %)"),
        "{s}"
    );
    assert!(
        s.ends_with("its interval unbounded with 2 thread counts"),
        "{s}"
    );
    let s = sentence(&undecided, "m/bp1g", 5.0);
    assert!(
        s.ends_with("with no useful bound from 2 thread counts (lower at 2, higher at 0 of 2 thread counts)"),
        "{s}"
    );
    let mut q2 = undecided.clone();
    settle_by_points(&mut q2, &[Regressed, Slower]);
    assert_eq!((q2.verdict, q2.every_point), (Slower, true));
    let mut q3 = undecided.clone();
    settle_by_points(&mut q3, &[Regressed, Inconclusive]);
    assert_eq!(q3, undecided);
    // A count that does not match the pooled points (a point without an interval) decides
    // nothing.
    let mut q4 = undecided.clone();
    settle_by_points(&mut q4, &[Regressed, Regressed, Regressed]);
    assert_eq!(q4, undecided);
    // Points that carry their own verdicts are settled where they are pooled.
    let mut own = q.clone();
    for c in &mut own[0].2 {
        c.verdict = Some(Regressed);
    }
    let settled = answers(&own, 5.0).remove(0);
    assert_eq!((settled.verdict, settled.every_point), (Regressed, true));
    let mut regressed = undecided;
    regressed.verdict = Regressed;
    let before = regressed.clone();
    settle_by_points(&mut regressed, &[Slower, Slower]);
    assert_eq!(regressed, before, "a stronger pooled answer stays");
}
