//! The host's load in a cross-run verdict (#47): what other processes took of the CPU and
//! what the hypervisor stole while each side's repeats ran (`others_cpu_pct` + `steal_pct`
//! of every point), and whether the difference between the two runs could be what a verdict
//! measured. A neighbour slows only the side it runs beside, so a busier candidate can make
//! a regression (or hide an improvement) that the server never had: such a verdict is not
//! given — the point is said "not judged" with the loads and the remedy. Inside one paired
//! run both sides share the neighbour and the rounds' covariate adjustment takes it out
//! (`verdict::paired`); repeats a run apart cannot separate a load that covers one whole side
//! from the change, so across runs the verdict is withheld rather than adjusted.

use super::verdict::Verdict;

/// A difference in the host's load (percentage points of the host's CPU, others + steal,
/// mean over each side's repeats) at which it may explain a change: above this machine's
/// own A/A spread of the figure (docs/statistics.md, "A busy host").
pub const DIFF_PP: f64 = 10.0;

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
}

/// Judges the loads against a point's `verdict`: a verdict the load difference could have
/// produced is withheld — with the candidate busier, regressed, slower and unchanged (an
/// improvement may be hidden); with the base busier, improved, faster and unchanged. The
/// opposite verdicts stand (the load worked against them, so the change is at least what was
/// measured), and so does inconclusive. `names` are the two sides as the reader knows them
/// ("RUN_B").
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
    let biased = match verdict {
        Verdict::Regressed | Verdict::Slower => cand_busier,
        Verdict::Improved | Verdict::Faster => !cand_busier,
        Verdict::Unchanged => true,
        Verdict::Inconclusive => false,
    };
    if biased {
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
    fn only_a_verdict_the_load_could_make_is_withheld() {
        let names = ("RUN_A", "RUN_B");
        // The candidate busier: its regression and its "unchanged" are the load's to explain.
        for v in [Verdict::Regressed, Verdict::Slower, Verdict::Unchanged] {
            let h = judge(Some(3.0), Some(41.0), v, names);
            assert_eq!(
                h.withheld,
                "the host was busier during RUN_B (other processes and the hypervisor 41 % of the CPU against 3 %); re-run it, or use design = \"paired\"",
                "{v:?}"
            );
        }
        // An improvement despite a busier candidate stands; so does an undecided point.
        for v in [Verdict::Improved, Verdict::Faster, Verdict::Inconclusive] {
            assert_eq!(judge(Some(3.0), Some(41.0), v, names).withheld, "", "{v:?}");
        }
        // The base busier: the mirror.
        assert!(judge(Some(41.0), Some(3.0), Verdict::Improved, names)
            .withheld
            .contains("busier during RUN_A"));
        assert_eq!(
            judge(Some(41.0), Some(3.0), Verdict::Regressed, names).withheld,
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
