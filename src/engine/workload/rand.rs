//! Per-worker random numbers and sysbench 1.0.20's distributions (uniform, gaussian, special,
//! pareto) plus 1.1's zipfian, computed in f64 and truncated exactly as `sb_rand.c` does.

use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::engine::config::{RandParams, RandType};

/// xoroshiro128+, the generator sysbench gives every thread. Bit-exact streams are not a goal
/// (sysbench seeds from libc `random()`); the distributions are.
#[derive(Debug, Clone)]
pub struct Rng {
    s0: u64,
    s1: u64,
}

impl Rng {
    /// Seeds through splitmix64 so that nearby seeds (thread numbers) give unrelated streams.
    pub fn seeded(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let (s0, s1) = (next(), next());
        Rng { s0, s1: s1 | 1 }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(24) ^ s1 ^ (s1 << 16);
        self.s1 = s1.rotate_left(37);
        result
    }

    /// Uniform in [0, 1) from the top 52 bits, as `sb_rand_uniform_double`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// `sb_rand_uniform(a, b)`: every value of [a, b] equally likely. Table choice always uses it.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        (a as f64 + (self.unit() * (b as f64 - a as f64 + 1.0))) as u32
    }

    pub fn gaussian(&mut self, a: u32, b: u32, iter: u32) -> u32 {
        let n = b as f64 - a as f64 + 1.0;
        let mut sum = 0.0;
        for _ in 0..iter {
            sum += self.unit() * n;
        }
        (a as f64 + sum / iter as f64) as u32
    }

    /// sysbench's "special" hot-spot distribution; see the spec for why the same `u` is reused.
    pub fn special(&mut self, a: u32, b: u32, p: &RandParams) -> u32 {
        let t = b as f64 - a as f64;
        let u = self.unit();
        if u < (100.0 - p.spec_res) / 100.0 {
            let mut sum = 0.0;
            for _ in 0..p.spec_iter {
                sum += self.unit();
            }
            return (a as f64 + t * sum / p.spec_iter as f64) as u32;
        }
        let d = t * p.spec_pct / 100.0;
        (a as f64 + u * (d + 1.0) + t / 2.0 - d / 2.0) as u32
    }

    pub fn pareto(&mut self, a: u32, b: u32, h: f64) -> u32 {
        let power = h.ln() / (1.0 - h).ln();
        (a as f64 + (b as f64 - a as f64 + 1.0) * self.unit().powf(power)) as u32
    }

    /// Zipfian over [a, b] with exponent `s` by rejection-inversion (Hörmann & Derflinger 1996),
    /// the method sysbench 1.1 uses: rank 1 (value a) is the most frequent.
    pub fn zipfian(&mut self, a: u32, b: u32, s: f64) -> u32 {
        let n = b as f64 - a as f64 + 1.0;
        let h = |x: f64| -> f64 {
            if (s - 1.0).abs() < 1e-12 {
                x.ln()
            } else {
                (x.powf(1.0 - s) - 1.0) / (1.0 - s)
            }
        };
        let h_inv = |y: f64| -> f64 {
            if (s - 1.0).abs() < 1e-12 {
                y.exp()
            } else {
                (1.0 + y * (1.0 - s)).powf(1.0 / (1.0 - s))
            }
        };
        let h_x1 = h(1.5) - 1.0;
        let h_n = h(n + 0.5);
        let threshold = 2.0 - h_inv(h(2.5) - 2f64.powf(-s));
        loop {
            let u = h_n + self.unit() * (h_x1 - h_n);
            let x = h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, n);
            if k - x <= threshold || u >= h(k + 0.5) - k.powf(-s) {
                return a + (k as u32 - 1);
            }
        }
    }

    /// `rand.default(a, b)`: the distribution chosen with `--rand-type`.
    #[inline]
    pub fn default_dist(&mut self, a: u32, b: u32, p: &RandParams) -> u32 {
        match p.kind {
            RandType::Uniform => self.uniform(a, b),
            RandType::Gaussian => self.gaussian(a, b, p.spec_iter),
            RandType::Special => self.special(a, b, p),
            RandType::Pareto => self.pareto(a, b, p.pareto_h),
            RandType::Zipfian => self.zipfian(a, b, p.zipfian_exp),
        }
    }

    /// Fills `out` from a sysbench string template: `#` → digit, `@` → letter, others copied.
    pub fn fill_template(&mut self, template: &[u8], out: &mut [u8]) {
        for (o, &t) in out.iter_mut().zip(template) {
            *o = match t {
                b'#' => b'0' + (self.unit() * 10.0) as u8,
                b'@' => b'a' + (self.unit() * 26.0) as u8,
                other => other,
            };
        }
    }

    /// Writes groups of 11 random digits joined by `-` (sysbench's c and pad values). Each
    /// group's digits are read off one 64-bit draw as a binary fraction (×10, take the integer
    /// part): 11 digits use 37 of its bits, so every digit is uniform to within 2^-27, at one
    /// draw per group instead of one per digit.
    pub fn fill_digit_groups(&mut self, out: &mut [u8]) {
        for group in out.chunks_mut(12) {
            let mut x = self.next_u64();
            for (i, o) in group.iter_mut().enumerate() {
                *o = if i == 11 {
                    b'-'
                } else {
                    let wide = x as u128 * 10;
                    x = wide as u64;
                    b'0' + (wide >> 64) as u8
                };
            }
        }
    }
}

/// The seed a run uses: `--rand-seed`, or the clock when it is 0 (sysbench's rule).
pub fn effective_seed(seed: u64) -> u64 {
    if seed != 0 {
        return seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Length of the `c` value: ten groups of eleven digits and nine dashes.
pub const C_LEN: usize = 119;
/// Length of the `pad` value: five groups.
pub const PAD_LEN: usize = 59;

/// A process-wide sequence of distinct 32-bit values (`sysbench.rand.unique()`): a counter passed
/// through a bijection of u32, so no two calls in a run return the same value.
#[derive(Debug)]
pub struct UniqueSeq {
    next: AtomicU64,
    key: u32,
}

impl UniqueSeq {
    pub fn new(seed: u64) -> UniqueSeq {
        UniqueSeq {
            next: AtomicU64::new(0),
            key: (seed as u32) | 1,
        }
    }

    pub fn next(&self) -> u32 {
        let n = self.next.fetch_add(1, Ordering::Relaxed) as u32;
        // Each step is invertible on u32, so the composition is a permutation.
        let mut x = n.wrapping_mul(0x9E37_79B1) ^ self.key;
        x ^= x >> 16;
        x = x.wrapping_mul(0x85EB_CA6B);
        x ^= x >> 13;
        x = x.wrapping_mul(0xC2B2_AE35);
        x ^ (x >> 16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kind: RandType) -> RandParams {
        RandParams {
            kind,
            ..RandParams::default()
        }
    }

    #[test]
    fn uniform_covers_bounds_evenly() {
        let mut r = Rng::seeded(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            let v = r.uniform(1, 10);
            counts[(v - 1) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn special_puts_three_quarters_in_the_hot_band() {
        // Spec §5: table_size=10000 → ids 4975..=5051 get 75.9 % of draws.
        let p = params(RandType::Special);
        let mut r = Rng::seeded(7);
        let n = 400_000;
        let hot = (0..n)
            .map(|_| r.special(1, 10_000, &p))
            .filter(|v| (4975..=5051).contains(v))
            .count();
        let share = hot as f64 / n as f64;
        assert!((0.75..0.77).contains(&share), "hot share {share}");
    }

    #[test]
    fn special_on_small_table_matches_verified_band() {
        // Spec §2: table_size=1000 → every k in [239, 770].
        let p = params(RandType::Special);
        let mut r = Rng::seeded(3);
        for _ in 0..200_000 {
            let v = r.special(1, 1000, &p);
            assert!((1..=1000).contains(&v));
        }
        let mut lo = u32::MAX;
        let mut hi = 0;
        for _ in 0..200_000 {
            let v = r.special(1, 1000, &p);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        assert!(lo >= 150 && hi <= 850, "range {lo}..{hi}");
    }

    #[test]
    fn gaussian_is_centred_with_irwin_hall_spread() {
        let mut r = Rng::seeded(11);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.gaussian(1, 10_000, 12) as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let sd = var.sqrt();
        // Irwin–Hall of 12 uniforms scaled by n/12: sd = n / 12 (since var of one = 1/12).
        assert!((mean - 5000.5).abs() < 20.0, "mean {mean}");
        assert!((sd - 10_000.0 / 12.0).abs() < 20.0, "sd {sd}");
    }

    #[test]
    fn pareto_concentrates_on_the_low_end() {
        // Spec §5: ≈53 % of draws in the lowest 1 % of the range.
        let mut r = Rng::seeded(5);
        let n = 200_000;
        let low = (0..n)
            .filter(|_| r.pareto(1, 100_000, 0.2) <= 1_000)
            .count();
        let share = low as f64 / n as f64;
        assert!((0.51..0.55).contains(&share), "low share {share}");
    }

    #[test]
    fn zipfian_follows_the_power_law() {
        let mut r = Rng::seeded(9);
        let n = 500_000;
        let mut counts = vec![0u32; 1001];
        for _ in 0..n {
            let v = r.zipfian(1, 1000, 0.8);
            assert!((1..=1000).contains(&v));
            counts[v as usize] += 1;
        }
        // P(k) ∝ k^-0.8, so P(1)/P(2) = 2^0.8 and P(1)/P(10) = 10^0.8.
        let r12 = counts[1] as f64 / counts[2] as f64;
        let r110 = counts[1] as f64 / counts[10] as f64;
        assert!((r12 - 2f64.powf(0.8)).abs() < 0.08, "p1/p2 {r12}");
        assert!((r110 - 10f64.powf(0.8)).abs() < 0.5, "p1/p10 {r110}");
    }

    #[test]
    fn digit_groups_have_sysbench_shape() {
        let mut r = Rng::seeded(2);
        let mut c = [0u8; C_LEN];
        r.fill_digit_groups(&mut c);
        let s = std::str::from_utf8(&c).unwrap();
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups
            .iter()
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
    }

    #[test]
    fn every_digit_position_is_uniform() {
        let mut r = Rng::seeded(5);
        let mut pad = [0u8; PAD_LEN];
        // counts[position in group][digit]
        let mut counts = [[0u32; 10]; 11];
        let rows = 40_000;
        for _ in 0..rows {
            r.fill_digit_groups(&mut pad);
            for g in pad.chunks(12) {
                for (pos, &d) in g.iter().take(11).enumerate() {
                    counts[pos][(d - b'0') as usize] += 1;
                }
            }
        }
        let expected = rows as f64 * 5.0 / 10.0;
        for (pos, row) in counts.iter().enumerate() {
            for (digit, &n) in row.iter().enumerate() {
                let dev = (n as f64 - expected).abs() / expected;
                assert!(
                    dev < 0.03,
                    "position {pos} digit {digit}: {n} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn unique_sequence_never_repeats() {
        let seq = UniqueSeq::new(42);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(seq.next()));
        }
    }
}
