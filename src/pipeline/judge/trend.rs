//! `history`'s judgement of one series over the runs: its shifts (E-divisive means), and the
//! newest run against the runs since the last shift before it, said in the same words as
//! every other verdict (`Verdict`): outside their prediction interval and beyond the
//! threshold is regressed or improved, outside it but within the threshold slower or faster,
//! inside it unchanged when the change and its interval lie within ±threshold, else
//! inconclusive. Pure; `pipeline::history` reads the runs and prints.

use crate::pipeline::judge::verdict::changepoint::{self, Shift};
use crate::pipeline::judge::verdict::{Metric, Verdict};

/// The newest run of one series against the runs before it: the change, the prediction
/// interval of a new run's change, and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Newest {
    pub change_pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
    pub verdict: Verdict,
}

impl Newest {
    /// Moved for the worse beyond the threshold: what fails a nightly.
    pub fn worse(&self) -> bool {
        self.verdict == Verdict::Regressed
    }

    pub fn better(&self) -> bool {
        self.verdict == Verdict::Improved
    }
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
        let threshold = threshold_of(metric, threshold_pct);
        Newest {
            change_pct: d,
            lo_pct: lo,
            hi_pct: hi,
            verdict: verdict_of(d, (lo, hi), out, metric_of(metric), threshold),
        }
    });
    (shifts, newest)
}

/// The verdict of a change `d` (percent) whose prediction interval is `pi` (percent, around
/// no change), `out` of which it lies.
fn verdict_of(d: f64, (lo, hi): (f64, f64), out: bool, metric: Metric, threshold: f64) -> Verdict {
    let worse = (d < 0.0) == metric.higher_is_better();
    let beyond = d.abs() > threshold;
    match (out, beyond, worse) {
        (true, true, true) => Verdict::Regressed,
        (true, true, false) => Verdict::Improved,
        (true, false, true) => Verdict::Slower,
        (true, false, false) => Verdict::Faster,
        (false, ..) => {
            // The change's own interval: the newest value's, with the interval's spread.
            let at = |p: f64| ((1.0 + d / 100.0) * (1.0 + p / 100.0) - 1.0) * 100.0;
            if at(lo) >= -threshold && at(hi) <= threshold {
                Verdict::Unchanged
            } else {
                Verdict::Inconclusive
            }
        }
    }
}

/// The newest run's verdict in its word, or why it was not judged; a host test's regression
/// is the machine's and said so.
pub fn word(n: Option<&Newest>, host: bool) -> String {
    match n {
        None => format!(
            "not judged: needs {} earlier runs",
            changepoint::MIN_HISTORY
        ),
        Some(n) if n.worse() && host => "regressed: the machine (not counted)".to_string(),
        Some(n) => n.verdict.as_str().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newest_run_far_below_a_steady_history_regresses_and_a_like_one_is_unchanged() {
        let steady = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0];
        let mut fell = steady.to_vec();
        fell.push(700.0);
        let (_, n) = judge(&fell, true, "tps", 10.0, 0.01);
        let n = n.unwrap();
        assert!(n.worse() && !n.better(), "{n:?}");
        assert_eq!(word(Some(&n), false), "regressed");
        assert_eq!(word(Some(&n), true), "regressed: the machine (not counted)");
        // The same fall of latency is better.
        let (_, n) = judge(&fell, true, "p95", 10.0, 0.01);
        assert_eq!(n.unwrap().verdict, Verdict::Improved);
        let mut like = steady.to_vec();
        like.push(1001.0);
        let (_, n) = judge(&like, true, "tps", 10.0, 0.01);
        assert_eq!(word(n.as_ref(), false), "unchanged");
        // Not the newest run's value, or too short a history: not judged.
        assert_eq!(judge(&fell, false, "tps", 10.0, 0.01).1, None);
        assert_eq!(judge(&[1000.0, 700.0], true, "tps", 10.0, 0.01).1, None);
        assert!(word(None, false).starts_with("not judged"));
    }

    #[test]
    fn the_words_are_the_verdicts_own() {
        // Outside the interval: beyond the threshold regressed or improved, within it slower
        // or faster (a fall of tps, a rise of p95 is the worse way).
        let v = |d: f64, out: bool, m: Metric| verdict_of(d, (-3.0, 3.0), out, m, 10.0);
        assert_eq!(v(-20.0, true, Metric::Tps), Verdict::Regressed);
        assert_eq!(v(20.0, true, Metric::Tps), Verdict::Improved);
        assert_eq!(v(-6.0, true, Metric::Tps), Verdict::Slower);
        assert_eq!(v(6.0, true, Metric::Tps), Verdict::Faster);
        assert_eq!(v(6.0, true, Metric::P95), Verdict::Slower);
        // Inside it: unchanged only when the change's interval is within ±threshold.
        assert_eq!(v(2.0, false, Metric::Tps), Verdict::Unchanged);
        assert_eq!(
            verdict_of(2.0, (-15.0, 15.0), false, Metric::Tps, 10.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            verdict_of(-12.0, (-15.0, 15.0), false, Metric::Tps, 10.0),
            Verdict::Inconclusive
        );
        // Every word history says is a verdict's.
        for w in Verdict::ALL {
            let n = Newest {
                change_pct: 0.0,
                lo_pct: 0.0,
                hi_pct: 0.0,
                verdict: w,
            };
            assert_eq!(word(Some(&n), false), w.as_str());
        }
    }
}
