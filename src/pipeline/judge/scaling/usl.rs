//! The Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)), fitted by bounded
//! least squares: λ > 0, 0 ≤ σ < 1, κ ≥ 0, so the coefficients keep their physical meaning
//! (contention and coherency cannot be negative) and the peak is never NaN. A coarse grid over
//! (σ, κ) with λ solved exactly at each node finds the basin; Levenberg–Marquardt with every
//! step projected onto the bounds polishes it. Never panics: bad input is an `Err`.

/// A fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usl {
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
}

/// Why no model could be fitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("{0} concurrency level(s): the model's three coefficients need at least 3")]
    TooFewLevels(usize),
    #[error("a measurement is not a positive, finite concurrency and throughput")]
    BadMeasurement,
}

/// σ stays below this: at σ = 1 adding load adds nothing, and N* is 0.
const SIGMA_MAX: f64 = 0.999_999;

impl Usl {
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / denominator(self.sigma, self.kappa, n)
    }

    /// N* = √((1−σ)/κ), where throughput peaks; None when κ is 0 (no peak: the curve rises
    /// toward λ/σ for ever, or linearly).
    pub fn peak_concurrency(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }
}

fn denominator(sigma: f64, kappa: f64, n: f64) -> f64 {
    1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
}

/// g(N) = N / D(N): throughput per unit of λ.
fn shape(sigma: f64, kappa: f64, n: f64) -> f64 {
    n / denominator(sigma, kappa, n)
}

/// The λ minimizing the squared error for fixed (σ, κ) (the model is linear in λ), and that
/// error.
fn best_lambda(data: &[(f64, f64)], sigma: f64, kappa: f64) -> (f64, f64) {
    let (mut gx, mut gg) = (0.0, 0.0);
    for &(n, x) in data {
        let g = shape(sigma, kappa, n);
        gx += g * x;
        gg += g * g;
    }
    let lambda = if gg > 0.0 {
        (gx / gg).max(f64::MIN_POSITIVE)
    } else {
        1.0
    };
    (lambda, sse(data, sigma, kappa, lambda))
}

fn sse(data: &[(f64, f64)], sigma: f64, kappa: f64, lambda: f64) -> f64 {
    data.iter()
        .map(|&(n, x)| {
            let r = x - lambda * shape(sigma, kappa, n);
            r * r
        })
        .sum()
}

fn clamp(p: [f64; 3]) -> [f64; 3] {
    [
        p[0].max(f64::MIN_POSITIVE),
        p[1].clamp(0.0, SIGMA_MAX),
        p[2].max(0.0),
    ]
}

/// Solves the 3×3 system `a·x = b` by Gaussian elimination with partial pivoting; None when
/// it is singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let top = a[col];
        for row in col + 1..3 {
            let f = a[row][col] / top[col];
            for (x, t) in a[row].iter_mut().zip(top).skip(col) {
                *x -= f * t;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Levenberg–Marquardt from `p` = (λ, σ, κ), each step projected onto the bounds.
fn polish(data: &[(f64, f64)], mut p: [f64; 3]) -> [f64; 3] {
    let mut cost = sse(data, p[1], p[2], p[0]);
    let mut mu = 1e-3;
    for _ in 0..500 {
        // Jacobian of the model, and JᵀJ and Jᵀr.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for &(n, x) in data {
            let d = denominator(p[1], p[2], n);
            let model = p[0] * n / d;
            let j = [
                n / d,
                -p[0] * n * (n - 1.0) / (d * d),
                -p[0] * n * n * (n - 1.0) / (d * d),
            ];
            let r = x - model;
            for a in 0..3 {
                jtr[a] += j[a] * r;
                for b in 0..3 {
                    jtj[a][b] += j[a] * j[b];
                }
            }
        }
        let mut improved = false;
        while mu < 1e12 {
            let mut a = jtj;
            for (k, row) in a.iter_mut().enumerate() {
                row[k] += mu * jtj[k][k].max(1e-30);
            }
            let Some(step) = solve3(a, jtr) else {
                mu *= 10.0;
                continue;
            };
            let q = clamp([p[0] + step[0], p[1] + step[1], p[2] + step[2]]);
            let c = sse(data, q[1], q[2], q[0]);
            if c.is_finite() && c < cost {
                let done = (cost - c) <= 1e-15 * cost.max(1e-300);
                p = q;
                cost = c;
                mu = (mu / 3.0).max(1e-12);
                improved = !done;
                break;
            }
            mu *= 4.0;
        }
        if !improved {
            break;
        }
    }
    p
}

/// The distinct concurrency levels of valid data, ascending.
fn levels(data: &[(f64, f64)]) -> Result<Vec<f64>, FitError> {
    if data
        .iter()
        .any(|&(n, x)| !(n.is_finite() && x.is_finite() && n >= 1.0 && x > 0.0))
    {
        return Err(FitError::BadMeasurement);
    }
    let mut levels: Vec<f64> = data.iter().map(|d| d.0).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.len() < 3 {
        return Err(FitError::TooFewLevels(levels.len()));
    }
    Ok(levels)
}

/// Refits starting from `start`'s coefficients, without the grid: for resamples of data
/// `start` was fitted to.
pub fn refit(data: &[(f64, f64)], start: &Usl) -> Result<Usl, FitError> {
    levels(data)?;
    let p = polish(data, clamp([start.lambda, start.sigma, start.kappa]));
    Ok(Usl {
        lambda: p[0],
        sigma: p[1],
        kappa: p[2],
    })
}

/// Fits the model to (concurrency, throughput) measurements, repeats included.
pub fn fit(data: &[(f64, f64)]) -> Result<Usl, FitError> {
    let levels = levels(data)?;
    // Coarse grid: σ and κ on log scales with 0 included, λ exact at each node.
    let grid = |lo: f64, hi: f64, k: usize| -> Vec<f64> {
        std::iter::once(0.0)
            .chain((0..k).map(|i| lo * (hi / lo).powf(i as f64 / (k - 1) as f64)))
            .collect()
    };
    let n_max = levels[levels.len() - 1];
    // κ large enough to put the peak below N = 1, small enough to put it far beyond the data.
    let kappas = grid(1e-3 / (n_max * n_max * 100.0), 1.0, 80);
    let sigmas = grid(1e-5, SIGMA_MAX, 80);
    let mut best = (f64::INFINITY, [1.0, 0.0, 0.0]);
    for &s in &sigmas {
        for &k in &kappas {
            let (l, c) = best_lambda(data, s, k);
            if c < best.0 {
                best = (c, [l, s, k]);
            }
        }
    }
    let p = polish(data, best.1);
    Ok(Usl {
        lambda: p[0],
        sigma: p[1],
        kappa: p[2],
    })
}

/// 1 − SSE/SST of the model over `data` (1 is a perfect fit; near or below 0, no better than
/// the mean).
pub fn r_squared(m: &Usl, data: &[(f64, f64)]) -> f64 {
    let mean = data.iter().map(|d| d.1).sum::<f64>() / data.len().max(1) as f64;
    let sst: f64 = data.iter().map(|d| (d.1 - mean).powi(2)).sum();
    let sse = sse(data, m.sigma, m.kappa, m.lambda);
    if sst > 0.0 {
        1.0 - sse / sst
    } else {
        0.0
    }
}

/// True when the fit would rather have σ below 0 (the error falls as σ goes negative from its
/// bound): the data scale better than linearly somewhere, e.g. a low first point.
pub fn sigma_wants_negative(m: &Usl, data: &[(f64, f64)]) -> bool {
    if m.sigma > 0.0 {
        return false;
    }
    // d(SSE)/dσ = −2 Σ r ∂X/∂σ, with ∂X/∂σ = −λN(N−1)/D² ≤ 0.
    let grad: f64 = data
        .iter()
        .map(|&(n, x)| {
            let d = denominator(m.sigma, m.kappa, n);
            let r = x - m.throughput(n);
            -2.0 * r * (-m.lambda * n * (n - 1.0) / (d * d))
        })
        .sum();
    grad > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise: xorshift, then a sum of uniforms (close to normal), `rel` × x.
    fn noisy(data: &mut [(f64, f64)], rel: f64, mut seed: u64) {
        for d in data.iter_mut() {
            let mut u = 0.0;
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                u += (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            }
            d.1 *= 1.0 + rel * u * 1.7;
        }
    }

    fn sample(m: &Usl, levels: &[f64], repeats: usize) -> Vec<(f64, f64)> {
        levels
            .iter()
            .flat_map(|&n| std::iter::repeat_n((n, m.throughput(n)), repeats))
            .collect()
    }

    const LEVELS: [f64; 12] = [1., 2., 4., 8., 12., 16., 24., 32., 48., 64., 96., 128.];

    fn within(got: f64, want: f64, pct: f64) -> bool {
        ((got - want) / want).abs() * 100.0 <= pct
    }

    #[test]
    fn recovers_known_coefficients_from_noisy_data() {
        for (truth, seed) in [
            (
                Usl {
                    sigma: 0.02,
                    kappa: 0.0005,
                    lambda: 1000.0,
                },
                7,
            ),
            (
                Usl {
                    sigma: 0.08,
                    kappa: 0.0002,
                    lambda: 5500.0,
                },
                11,
            ),
            (
                Usl {
                    sigma: 0.04,
                    kappa: 0.001,
                    lambda: 300.0,
                },
                23,
            ),
        ] {
            let mut data = sample(&truth, &LEVELS, 3);
            noisy(&mut data, 0.01, seed);
            let m = fit(&data).unwrap();
            println!("{truth:?} → {m:?}");
            assert!(within(m.sigma, truth.sigma, 5.0), "σ {m:?} vs {truth:?}");
            assert!(within(m.kappa, truth.kappa, 5.0), "κ {m:?} vs {truth:?}");
            assert!(within(m.lambda, truth.lambda, 5.0), "λ {m:?} vs {truth:?}");
            assert!(r_squared(&m, &data) > 0.99);
            let peak = m.peak_concurrency().unwrap();
            let want = truth.peak_concurrency().unwrap();
            assert!(within(peak, want, 5.0), "N* {peak} vs {want}");
        }
    }

    #[test]
    fn an_amdahl_curve_has_no_coherency_and_no_peak() {
        let truth = Usl {
            sigma: 0.05,
            kappa: 0.0,
            lambda: 800.0,
        };
        let mut data = sample(&truth, &LEVELS, 2);
        noisy(&mut data, 0.005, 3);
        let m = fit(&data).unwrap();
        assert!(within(m.sigma, 0.05, 5.0), "{m:?}");
        // κ ≈ 0: coherency is under 1 % of the denominator even at the largest N, and a
        // peak, if any, lies beyond twice anything measured.
        let n = 128.0;
        assert!(
            m.kappa * n * (n - 1.0) < 0.01 * denominator(m.sigma, m.kappa, n),
            "{m:?}"
        );
        assert!(m.peak_concurrency().is_none_or(|p| p > 2.0 * n), "{m:?}");
    }

    #[test]
    fn bounds_hold_where_an_unbounded_fit_goes_negative() {
        // Superlinear at first (a cold first point): an unconstrained fit takes σ < 0.
        let data = [
            (1.0, 500.0),
            (2.0, 1300.0),
            (4.0, 2600.0),
            (8.0, 5000.0),
            (16.0, 8000.0),
            (32.0, 9000.0),
        ];
        let m = fit(&data).unwrap();
        assert!(m.sigma >= 0.0 && m.kappa >= 0.0 && m.lambda > 0.0, "{m:?}");
        assert!(sigma_wants_negative(&m, &data), "{m:?}");
        let clean = sample(
            &Usl {
                sigma: 0.03,
                kappa: 0.0004,
                lambda: 900.0,
            },
            &LEVELS,
            1,
        );
        let m = fit(&clean).unwrap();
        assert!(!sigma_wants_negative(&m, &clean), "{m:?}");
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert_eq!(fit(&[]), Err(FitError::TooFewLevels(0)));
        assert_eq!(
            fit(&[(1.0, 10.0), (2.0, 19.0), (2.0, 19.5)]),
            Err(FitError::TooFewLevels(2))
        );
        assert_eq!(
            fit(&[(1.0, f64::NAN), (2.0, 1.0), (4.0, 2.0)]),
            Err(FitError::BadMeasurement)
        );
        assert_eq!(
            fit(&[(0.0, 1.0), (2.0, 1.0), (4.0, 2.0)]),
            Err(FitError::BadMeasurement)
        );
        // Flat data: a fit, bounded, not NaN.
        let m = fit(&[(1.0, 100.0), (2.0, 100.0), (4.0, 100.0), (8.0, 100.0)]).unwrap();
        assert!(
            m.sigma.is_finite() && m.kappa.is_finite() && m.lambda.is_finite(),
            "{m:?}"
        );
    }

    /// The `usl` crate (archived; unbounded Levenberg–Marquardt) agrees where its fit stays
    /// inside the bounds: a cross-check against an independent implementation.
    #[test]
    fn agrees_with_the_usl_crate() {
        let truth = Usl {
            sigma: 0.03,
            kappa: 0.0003,
            lambda: 1200.0,
        };
        let mut data = sample(&truth, &LEVELS, 2);
        noisy(&mut data, 0.02, 99);
        let theirs = usl::Model::build(
            &data
                .iter()
                .map(|&(n, x)| usl::Measurement::concurrency_and_throughput(n as u32, x))
                .collect::<Vec<_>>(),
        );
        let ours = fit(&data).unwrap();
        assert!(
            within(ours.sigma, theirs.sigma, 1.0),
            "{ours:?} vs {theirs:?}"
        );
        assert!(
            within(ours.kappa, theirs.kappa, 1.0),
            "{ours:?} vs {theirs:?}"
        );
        assert!(
            within(ours.lambda, theirs.lambda, 1.0),
            "{ours:?} vs {theirs:?}"
        );
    }
}
