//! `history`'s judgement of one series over the runs: its shifts (E-divisive means), and the
//! newest run against the runs since the last shift before it — outside their prediction
//! interval and beyond the threshold is worse or better, inside is steady or "within the
//! noise". Pure; `pipeline::history` reads the runs and prints.

use crate::pipeline::judge::verdict::changepoint::{self, Shift};
use crate::pipeline::judge::verdict::{Metric, Verdict};

/// The newest run of one series against the runs before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Newest {
    pub change_pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
    pub worse: bool,
    pub better: bool,
    /// Judged against the earlier runs' own paired intervals (too few runs for a prediction
    /// interval): that judgement's verdict, said as it is (slower, inconclusive, …).
    pub verdict: Option<Verdict>,
}

/// A history metric ("tps", "p95", "tps/control", …) as a verdict's metric: what its
/// threshold is and which way is better.
fn metric_of(name: &str) -> Metric {
    if name.starts_with("tps") {
        Metric::Tps
    } else {
        Metric::P95
    }
}

/// The threshold a history metric is judged at, percent.
pub fn threshold_of(metric: &str, threshold_pct: f64) -> f64 {
    metric_of(metric).threshold_pct(threshold_pct)
}

/// One series' values in run order (`xs`, the runs where it ran) judged: the shifts, and
/// when its newest value is the newest run's (`newest_ran`), that value against the values
/// since the last shift before it at two-sided level `level`. None for the newest when it did
/// not run or has too few earlier values (`changepoint::MIN_HISTORY`).
pub fn judge(
    xs: &[f64],
    newest_ran: bool,
    metric: &str,
    threshold_pct: f64,
    level: f64,
) -> (Vec<Shift>, Option<Newest>) {
    let shifts = changepoint::shifts(xs, changepoint::MAX_P);
    if !newest_ran || xs.is_empty() {
        return (shifts, None);
    }
    let last = xs[xs.len() - 1];
    let since = shifts
        .iter()
        .map(|sh| sh.at)
        .filter(|&a| a < xs.len() - 1)
        .max()
        .unwrap_or(0);
    let earlier = &xs[since..xs.len() - 1];
    let newest = changepoint::newest_outside(earlier, last, level).map(|(d, lo, hi, out)| {
        let higher_better = metric_of(metric).higher_is_better();
        let beyond = d.abs() > threshold_of(metric, threshold_pct);
        Newest {
            change_pct: d,
            lo_pct: lo,
            hi_pct: hi,
            worse: out && beyond && ((d < 0.0) == higher_better),
            better: out && beyond && ((d > 0.0) == higher_better),
            verdict: None,
        }
    });
    (shifts, newest)
}

/// The newest run's verdict in a word: WORSE (or the machine's, for the host's own tests),
/// better, "within the noise" (beyond the threshold but inside the prediction interval),
/// steady; or why it was not judged.
pub fn word(n: Option<&Newest>, metric: &str, threshold_pct: f64, host: bool) -> String {
    match n {
        None => format!(
            "not judged: needs {} earlier runs",
            changepoint::MIN_HISTORY
        ),
        Some(n) if n.worse && host => "worse: the machine (not counted)".to_string(),
        Some(n) if n.worse => "WORSE".to_string(),
        Some(n) if n.better => "better".to_string(),
        // Within ±threshold is history's "steady"; the rest in the paired judgement's words.
        Some(Newest {
            verdict: Some(v), ..
        }) if *v != Verdict::Unchanged => v.as_str().to_string(),
        Some(n) if n.change_pct.abs() > threshold_of(metric, threshold_pct) => {
            "within the noise".to_string()
        }
        Some(_) => "steady".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newest_run_far_below_a_steady_history_is_worse_and_a_like_one_steady() {
        let steady = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0];
        let mut fell = steady.to_vec();
        fell.push(700.0);
        let (_, n) = judge(&fell, true, "tps", 10.0, 0.01);
        let n = n.unwrap();
        assert!(n.worse && !n.better, "{n:?}");
        assert_eq!(word(Some(&n), "tps", 10.0, false), "WORSE");
        assert_eq!(
            word(Some(&n), "tps", 10.0, true),
            "worse: the machine (not counted)"
        );
        // The same fall of latency is better.
        let (_, n) = judge(&fell, true, "p95", 10.0, 0.01);
        assert!(n.unwrap().better);
        let mut like = steady.to_vec();
        like.push(1001.0);
        let (_, n) = judge(&like, true, "tps", 10.0, 0.01);
        assert_eq!(word(n.as_ref(), "tps", 10.0, false), "steady");
        // Not the newest run's value, or too short a history: not judged.
        assert_eq!(judge(&fell, false, "tps", 10.0, 0.01).1, None);
        assert_eq!(judge(&[1000.0, 700.0], true, "tps", 10.0, 0.01).1, None);
        assert!(word(None, "tps", 10.0, false).starts_with("not judged"));
        // A ratio judged by its paired intervals is said in that judgement's words: a fall
        // whose interval excludes no change but not the threshold is slower, not noise.
        let early = Newest {
            change_pct: -41.4,
            lo_pct: -64.3,
            hi_pct: -3.7,
            worse: false,
            better: false,
            verdict: Some(Verdict::Slower),
        };
        assert_eq!(word(Some(&early), "tps/control", 5.0, false), "slower");
        let same = Newest {
            change_pct: 0.5,
            lo_pct: -2.9,
            hi_pct: 4.1,
            verdict: Some(Verdict::Unchanged),
            ..early
        };
        assert_eq!(word(Some(&same), "tps/control", 5.0, false), "steady");
    }
}
