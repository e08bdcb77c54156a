//! The host's load in a cross-run verdict (#47): what other processes took of the CPU and
//! what the hypervisor stole while each side's repeats ran (`others_cpu_pct` + `steal_pct`
//! of every point), and whether the difference between the two runs could be what a verdict
//! measured. A neighbour moves only the side it runs beside, so a busier side can make a
//! regression or an improvement (or hide one) that the server never had: such a verdict is not
//! given — the point is said "not judged" with the loads and the remedy. Inside one paired
//! run both sides share the neighbour and the rounds' covariate adjustment takes it out
//! (`verdict::paired`); repeats a run apart cannot separate a load that covers one whole side
//! from the change, so across runs the verdict is withheld rather than adjusted.

use super::verdict::Verdict;

/// A difference in the host's load (percentage points of the host's CPU, others + steal,
/// mean over each side's repeats) at which it may explain a change: above this machine's
/// own A/A spread of the figure (docs/statistics.md, "A busy host").
pub const DIFF_PP: f64 = 10.0;

/// A smaller difference (percentage points) that still puts the counters a neighbour moves
/// (the server's CPU and context switches per transaction) last among a decided change's
/// reasons, with the loads beside them: beyond the 0–0.4 % quiet runs show here, below what
/// withholds the verdict.
pub const NOTE_PP: f64 = 3.0;

/// A repeat's `others_cpu_pct` and `steal_pct`.
pub type Shares = (Option<f64>, Option<f64>);

/// One side's load: the mean share of the host's CPU other processes took plus what the
/// hypervisor stole over its ok repeats, percent; None when any repeat lacks the figures (an
/// imported sysbench log, a model, a remote client).
pub fn side_load(repeats: &[Shares]) -> Option<f64> {
    if repeats.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for (others, steal) in repeats {
        sum += (*others)? + steal.unwrap_or(0.0);
    }
    Some(sum / repeats.len() as f64)
}

/// Each point's load (`side_load` over its ok repeats), by `key` — a run's points as
/// `compare` and `history` group them.
pub fn by_point<K: Ord>(
    points: &[crate::pipeline::results::PointRecord],
    key: impl Fn(&crate::pipeline::results::PointRecord) -> K,
) -> std::collections::BTreeMap<K, Option<f64>> {
    let mut each: std::collections::BTreeMap<K, Vec<Shares>> = Default::default();
    for r in points
        .iter()
        .filter(|r| r.status == crate::pipeline::results::PointStatus::Ok)
    {
        each.entry(key(r))
            .or_default()
            .push((r.others_cpu_pct, r.steal_pct));
    }
    each.into_iter().map(|(k, v)| (k, side_load(&v))).collect()
}

/// The two sides' loads at one point and what they do to its verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HostLoad {
    /// Each side's load, percent of the host's CPU (`side_load`).
    pub base_pct: Option<f64>,
    pub cand_pct: Option<f64>,
    /// Why the point's verdict is not given ("the host was busier during …"); empty when it
    /// is. The views say "not judged" before it.
    pub withheld: String,
}

impl HostLoad {
    /// The busier side's excess, percentage points: positive when the candidate was busier;
    /// None when either side's load is unknown.
    pub fn diff_pp(&self) -> Option<f64> {
        Some(self.cand_pct? - self.base_pct?)
    }

    /// Whether the loads differ by enough to move a figure (`DIFF_PP`).
    pub fn differs(&self) -> bool {
        self.diff_pp().is_some_and(|d| d.abs() >= DIFF_PP)
    }

    /// Whether the loads differ by enough to qualify the counters a neighbour moves (`NOTE_PP`).
    pub fn noticeable(&self) -> bool {
        self.diff_pp().is_some_and(|d| d.abs() >= NOTE_PP)
    }
}

/// Judges the loads against a point's `verdict`: when they differ, every decided verdict
/// (regressed, improved, slower, faster, unchanged) is withheld; an inconclusive one is left
/// as it is. A neighbour's direction cannot be assumed: on this project's VM a bursty
/// neighbour slowed 2-thread points by a fifth and made 1-thread points 2.5 × *faster* (a busy
/// CPU is never idle, so the single client's wake-ups are not delayed; docs/statistics.md, "A
/// busy host"), so a load difference can make or hide a change either way. `names` are the
/// two sides as the reader knows them ("run B").
pub fn judge(
    base_pct: Option<f64>,
    cand_pct: Option<f64>,
    verdict: Verdict,
    names: (&str, &str),
) -> HostLoad {
    let mut h = HostLoad {
        base_pct,
        cand_pct,
        withheld: String::new(),
    };
    let (Some(d), Some(b), Some(c)) = (h.diff_pp(), base_pct, cand_pct) else {
        return h;
    };
    if d.abs() < DIFF_PP {
        return h;
    }
    let cand_busier = d > 0.0;
    if verdict != Verdict::Inconclusive {
        let (busy, busy_pct, quiet_pct) = if cand_busier {
            (names.1, c, b)
        } else {
            (names.0, b, c)
        };
        h.withheld = format!(
            "the host was busier during {busy} (other processes and the hypervisor {busy_pct:.0} % of the CPU against {quiet_pct:.0} %); re-run it, or use design = \"paired\""
        );
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_is_known_only_when_every_repeat_has_it() {
        assert_eq!(
            side_load(&[(Some(40.0), Some(2.0)), (Some(30.0), None)]),
            Some(36.0)
        );
        assert_eq!(side_load(&[(Some(40.0), None), (None, None)]), None);
        assert_eq!(side_load(&[]), None);
    }

    #[test]
    fn every_decided_verdict_is_withheld_when_the_loads_differ() {
        let names = ("RUN_A", "RUN_B");
        for v in [
            Verdict::Regressed,
            Verdict::Slower,
            Verdict::Unchanged,
            Verdict::Improved,
            Verdict::Faster,
        ] {
            let h = judge(Some(3.0), Some(41.0), v, names);
            assert_eq!(
                h.withheld,
                "the host was busier during RUN_B (other processes and the hypervisor 41 % of the CPU against 3 %); re-run it, or use design = \"paired\"",
                "{v:?}"
            );
            assert!(judge(Some(41.0), Some(3.0), v, names)
                .withheld
                .contains("busier during RUN_A (other processes and the hypervisor 41 % of the CPU against 3 %)"));
        }
        // An undecided point is left as it is.
        assert_eq!(
            judge(Some(3.0), Some(41.0), Verdict::Inconclusive, names).withheld,
            ""
        );
        // Loads within DIFF_PP, or unknown on a side: judged as ever.
        assert_eq!(
            judge(Some(3.0), Some(12.9), Verdict::Regressed, names).withheld,
            ""
        );
        assert_eq!(
            judge(None, Some(41.0), Verdict::Regressed, names).withheld,
            ""
        );
        assert!(judge(Some(3.0), Some(13.0), Verdict::Regressed, names).differs());
    }
}
