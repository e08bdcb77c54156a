//! Group-sequential boundaries: the confidence each look of a paired point draws its interval
//! at, so that the intervals of all its looks cover the truth together with probability
//! 1 − α (repeated confidence intervals, Jennison & Turnbull, "Group Sequential Methods",
//! ch. 9), with α spent over the looks by a spending function (Lan & DeMets 1983).
//!
//! The looks of one point are nested — round 20's mean contains round 10's — so the union
//! bound (α/looks at every look) pays for independence they do not have. Here the crossing
//! probabilities are computed for the looks as they are correlated: the mean log ratio after
//! nᵢ rounds is a Brownian motion observed at n₁ < n₂ < …, and the boundary cᵢ of look i is
//! the one at which the chance of crossing there first (having stayed inside at every earlier
//! look) is the α the spending function gives that look. Computed by numerical integration
//! of the continuation densities (Armitage, McPherson & Rowe 1969), not by simulation, so
//! the same looks always get the same levels.

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// How α is spent over a point's K looks: by look k, α·(k/K)^ρ. With ρ = 2 the last look
/// keeps most of α — a hard point is decided there — while the first looks keep enough for a
/// twofold change to stop early. Spending by look rather than by rounds matters because the
/// looks double (5, 10, 20, …): by rounds, the first looks of a long budget would get almost
/// nothing. Chosen on synthetic machines against the union bound and other spendings
/// (docs/statistics.md, "Looks").
pub const SPENDING_POWER: f64 = 2.0;

fn std_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("the standard normal")
}

/// Points of the grid a continuation density is carried on, per unit of its width in
/// standard deviations; enough for crossing probabilities to 1e-6 of α.
const GRID_PER_SD: f64 = 24.0;

/// A density on an even grid over (−b, b): values at its nodes and their Simpson weights.
struct Grid {
    x: Vec<f64>,
    w: Vec<f64>,
}

impl Grid {
    /// Nodes over (−b, b) with `n` (made odd) of them, Simpson's rule.
    fn over(b: f64, n: usize) -> Grid {
        let n = n.max(3) | 1;
        let h = 2.0 * b / (n - 1) as f64;
        let x = (0..n).map(|i| -b + h * i as f64).collect();
        let w = (0..n)
            .map(|i| {
                let k = if i == 0 || i == n - 1 {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                k * h / 3.0
            })
            .collect();
        Grid { x, w }
    }
}

/// The two-sided critical values (z scale) of looks after `looks` rounds (increasing), for a
/// total two-sided miss `alpha` spent as α·(k/K)^ρ by look k of K. A one-look schedule gets
/// the fixed-sample z quantile.
pub fn boundaries(looks: &[u32], alpha: f64, rho: f64) -> Vec<f64> {
    let k = looks.len() as f64;
    let cumulative: Vec<f64> = (1..=looks.len())
        .map(|i| alpha * (i as f64 / k).powf(rho))
        .collect();
    crossing_values(looks, &cumulative)
}

/// The critical values at which a path first crosses at look i (after `looks[i]` rounds)
/// with the probability `cumulative[i] − cumulative[i − 1]`: `cumulative` is the α spent by
/// each look, increasing, its last the total.
pub fn crossing_values(looks: &[u32], cumulative: &[f64]) -> Vec<f64> {
    let nd = std_normal();
    let mut out = Vec::with_capacity(looks.len());
    // The density of the sum S = Σ d over the rounds so far, on the paths that have stayed
    // inside every earlier boundary: None before the first look.
    let mut dens: Option<(Grid, Vec<f64>)> = None;
    let mut prev_n = 0.0;
    let mut prev_spent = 0.0;
    for (&n, &now) in looks.iter().zip(cumulative) {
        let n = n.max(1) as f64;
        let want = (now - prev_spent).max(1e-300);
        let c = match &dens {
            None => nd.inverse_cdf(1.0 - want / 2.0),
            Some((g, f)) => {
                let sd = (n - prev_n).sqrt();
                let cross = |c: f64| -> f64 {
                    let b = c * n.sqrt();
                    g.x.iter()
                        .zip(&g.w)
                        .zip(f)
                        .map(|((&u, &w), &fu)| {
                            w * fu * (nd.cdf((-b - u) / sd) + nd.sf((b - u) / sd))
                        })
                        .sum()
                };
                // The crossing probability falls as c grows: bisect.
                let (mut lo, mut hi) = (0.0, 40.0);
                for _ in 0..80 {
                    let mid = 0.5 * (lo + hi);
                    if cross(mid) > want {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                0.5 * (lo + hi)
            }
        };
        out.push(c);
        // The continuation density at this look, carried on to the next; beyond ten standard
        // deviations there is nothing to carry.
        let width = c.min(10.0);
        let g = Grid::over(
            width * n.sqrt(),
            (2.0 * width * GRID_PER_SD).ceil() as usize + 1,
        );
        let f: Vec<f64> = match &dens {
            None => {
                g.x.iter()
                    .map(|&s| nd.pdf(s / n.sqrt()) / n.sqrt())
                    .collect()
            }
            Some((pg, pf)) => {
                let sd = (n - prev_n).sqrt();
                g.x.iter()
                    .map(|&s| {
                        pg.x.iter()
                            .zip(&pg.w)
                            .zip(pf)
                            .map(|((&u, &w), &fu)| w * fu * nd.pdf((s - u) / sd) / sd)
                            .sum()
                    })
                    .collect()
            }
        };
        dens = Some((g, f));
        prev_n = n;
        prev_spent = now.max(prev_spent);
    }
    out
}

/// The two-sided nominal miss of each look's interval: 2·(1 − Φ(cᵢ)).
pub fn nominal_misses(looks: &[u32], alpha: f64, rho: f64) -> Vec<f64> {
    let nd = std_normal();
    boundaries(looks, alpha, rho)
        .into_iter()
        .map(|c| 2.0 * nd.sf(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// O'Brien–Fleming-type spending of a two-sided α, each side spending α/2 as
    /// 2 − 2Φ(z₁₋α/₄/√t), for comparison with published boundaries.
    fn obf(looks: &[u32], alpha: f64) -> Vec<f64> {
        let nd = std_normal();
        let z = nd.inverse_cdf(1.0 - alpha / 4.0);
        let last = *looks.last().unwrap() as f64;
        let cumulative: Vec<f64> = looks
            .iter()
            .map(|&n| 4.0 * nd.sf(z / (n as f64 / last).sqrt()))
            .collect();
        crossing_values(looks, &cumulative)
    }

    #[test]
    fn lan_demets_obrien_fleming_boundaries_match_the_published_ones() {
        // Five equally spaced looks, two-sided α = 0.05 (gsDesign's sfLDOF; Jennison &
        // Turnbull, table 7.6): 4.877, 3.357, 2.680, 2.290, 2.031.
        let c = obf(&[1, 2, 3, 4, 5], 0.05);
        let published = [4.877, 3.357, 2.680, 2.290, 2.031];
        for (got, want) in c.iter().zip(published) {
            assert!((got - want).abs() < 0.002, "{c:?}");
        }
    }

    #[test]
    fn the_looks_spend_exactly_alpha_and_one_look_is_the_fixed_sample_level() {
        let nd = std_normal();
        let one = boundaries(&[20], 0.05, SPENDING_POWER);
        assert!((one[0] - nd.inverse_cdf(0.975)).abs() < 1e-9);
        // Simulated Brownian paths at the looks cross some boundary 5 % of the time.
        let looks = [5u32, 10, 20, 33];
        let c = boundaries(&looks, 0.05, SPENDING_POWER);
        let mut rng = crate::engine::workload::rand::Rng::seeded(4);
        let trials = 200_000;
        let mut crossed = 0;
        for _ in 0..trials {
            let (mut s, mut n0) = (0.0, 0u32);
            for (k, &n) in looks.iter().enumerate() {
                for _ in n0..n {
                    let u = rng.unit().max(1e-12);
                    s += (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos();
                }
                n0 = n;
                if s.abs() / (n as f64).sqrt() >= c[k] {
                    crossed += 1;
                    break;
                }
            }
        }
        let rate = crossed as f64 / trials as f64;
        assert!((rate - 0.05).abs() < 0.0025, "{rate} with {c:?}");
        // Correlated looks cost less than the union bound's α/looks at the last one.
        let bonferroni = nd.inverse_cdf(1.0 - 0.05 / 8.0);
        assert!(c[3] < bonferroni - 0.2, "{c:?}");
    }
}
