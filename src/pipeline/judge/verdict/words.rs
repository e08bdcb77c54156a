//! How verdicts are said: thresholds, changes and intervals as every report prints them,
//! the headline's counts, and a threshold read from the command line.

use super::{pct, Verdict, TAIL_FACTOR};

/// "±5 %, p95 and p99 ±10 %": a threshold as every verdict states it.
pub fn fmt_threshold(threshold_pct: f64) -> String {
    format!(
        "±{}, p95 and p99 ±{}",
        fmt_pct(threshold_pct),
        fmt_pct(threshold_pct * TAIL_FACTOR)
    )
}

/// The sizes of an interval (log scale) that excludes 0, as percentages without their sign,
/// the smaller first: "3.4–12.1 %".
pub fn fmt_span(lo: f64, hi: f64) -> String {
    let (a, b) = (pct(lo).abs(), pct(hi).abs());
    format!("{:.1}–{:.1} %", a.min(b), a.max(b))
}

/// "5 %", "2.5 %".
pub fn fmt_pct(x: f64) -> String {
    format!("{} %", (x * 100.0).round() / 100.0)
}

/// A change in percent with its sign and one decimal ("+12.3"), or "unbounded" for one past
/// what a printed number can say (a ratio's interval from two or three noisy runs can reach
/// 10^20 %).
pub fn fmt_change(x: f64) -> String {
    if x.is_finite() && x.abs() < 1e5 {
        format!("{x:+.1}")
    } else if x < 0.0 {
        "−unbounded".into()
    } else {
        "unbounded".into()
    }
}

/// Counts of verdicts, for headlines: "unchanged at 6/8 points, inconclusive at 2".
pub fn headline(verdicts: &[Verdict]) -> String {
    let n = verdicts.len();
    let mut parts = Vec::new();
    for v in Verdict::ALL {
        let k = verdicts.iter().filter(|x| **x == v).count();
        if k > 0 {
            if parts.is_empty() {
                parts.push(format!("{v} at {k}/{n} points"));
            } else {
                parts.push(format!("{v} at {k}"));
            }
        }
    }
    if parts.is_empty() {
        "no point to compare".to_string()
    } else {
        parts.join(", ")
    }
}

/// The smallest change that matters unless the user says otherwise (`--threshold`): the
/// command line's default, the report's for a run that stored no verdicts, a sweep's gate.
pub const DEFAULT_THRESHOLD: &str = "5%";
/// `DEFAULT_THRESHOLD` in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// "5%", "5" or "5 %" → 5.0: a threshold in percent, for clap.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a threshold: give a percentage between 0 and 100, such as 5%"
        )),
    }
}

#[cfg(test)]
mod default_tests {
    #[test]
    fn the_default_threshold_is_one_number() {
        assert_eq!(
            super::parse_threshold(super::DEFAULT_THRESHOLD),
            Ok(super::DEFAULT_THRESHOLD_PCT)
        );
    }
}
