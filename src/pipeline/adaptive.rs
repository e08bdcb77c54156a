//! `threads = "auto"`: which thread count to measure next, from what a series measured so
//! far. Double from `from` until throughput has fallen `drop` below its best for two steps,
//! p99 passes a limit, a point fails or has errors, or the ceiling (`to`, or what the server
//! can take) is reached; then close in on the best point by golden-section steps until the
//! bracket around it is within the resolution. Pure and stateless: the next probe is a
//! function of the probes taken, so a resumed run continues where it stopped.
//!
//! `rates = "auto"` with `sla = { p99_ms = … }`: the highest open-loop arrival rate whose
//! p99 (measured from each arrival, so queueing counts) meets the limit, by bisection under
//! the series' closed-loop peak.

/// The settings of an adaptive thread search (`threads = "auto"` or a table).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AutoThreads {
    pub from: u32,
    pub to: u32,
    /// Stop doubling once two steps in a row are this fraction below the best (0.10).
    pub drop: f64,
    /// Stop doubling once p99 exceeds this, milliseconds.
    pub p99_ms: Option<f64>,
    /// Refine until the peak's neighbours are within this fraction of its thread count (at
    /// least one thread).
    pub resolution: f64,
    /// At most this many thread counts per series.
    pub max_points: u32,
}

impl Default for AutoThreads {
    fn default() -> Self {
        AutoThreads {
            from: 1,
            to: 1024,
            drop: 0.10,
            p99_ms: None,
            resolution: 0.25,
            max_points: 14,
        }
    }
}

/// What one thread count measured (the first repeat's point).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub threads: u32,
    pub tps: f64,
    pub p99_ms: Option<f64>,
    /// The point ran ok and without errors worth stopping for.
    pub clean: bool,
}

/// What to measure next: a thread count (or, for an SLA search, a rate), or nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Next<T = u32> {
    Probe(T),
    /// The search is over, and why.
    Done(String),
}

impl AutoThreads {
    /// The doubling ladder from `from` up to `cap`, with `cap` itself as the last rung when
    /// it falls between two doublings.
    pub fn ladder(&self, cap: u32) -> Vec<u32> {
        let top = self.to.min(cap).max(self.from);
        let mut v = Vec::new();
        let mut n = self.from.max(1);
        while n < top {
            v.push(n);
            n = n.saturating_mul(2);
        }
        v.push(top);
        v
    }

    /// The next thread count to measure for a series whose probes so far are `probes`, with
    /// `cap` the most threads the target can take.
    pub fn next(&self, cap: u32, probes: &[Probe]) -> Next {
        let at = |n: u32| probes.iter().find(|p| p.threads == n);
        if probes.len() as u32 >= self.max_points {
            return Next::Done(format!(
                "{} thread counts measured (max_points)",
                probes.len()
            ));
        }
        // Doubling.
        let mut best = 0.0f64;
        let mut below = 0;
        let ladder = self.ladder(cap);
        let mut stopped = None;
        for (i, &n) in ladder.iter().enumerate() {
            let Some(p) = at(n) else {
                return Next::Probe(n);
            };
            if !p.clean {
                stopped = Some(format!("the point at {n} threads failed or had errors"));
                break;
            }
            if let (Some(lim), Some(l)) = (self.p99_ms, p.p99_ms) {
                if l > lim {
                    stopped = Some(format!(
                        "p99 {l:.1} ms at {n} threads passed the limit of {lim} ms"
                    ));
                    break;
                }
            }
            if p.tps >= best {
                best = p.tps;
                below = 0;
            } else if p.tps < best * (1.0 - self.drop) {
                below += 1;
            } else {
                below = 0;
            }
            if below >= 2 {
                stopped = Some(format!(
                    "throughput {:.0} % below its best for two doublings",
                    self.drop * 100.0
                ));
                break;
            }
            if i + 1 == ladder.len() {
                stopped = Some(if ladder[i] < self.to {
                    format!("the server takes at most {n} threads")
                } else {
                    format!("reached to = {n}")
                });
            }
        }
        let stopped = stopped.unwrap_or_default();
        // Never more thread counts than the doubling list the search replaces: the one that
        // goes a doubling past the highest count it measured (1, 2, …, 256 for a search that
        // doubled up to 128). Refinement spends only what that list would have cost more.
        let highest = probes.iter().map(|p| p.threads).max().unwrap_or(self.from);
        let list = AutoThreads {
            to: self.to.min(highest.saturating_mul(2)),
            ..self.clone()
        }
        .ladder(cap)
        .len();
        let spent = probes.len() >= list;
        // Refining: the best clean probe and its nearest measured neighbours.
        let clean: Vec<&Probe> = probes.iter().filter(|p| p.clean).collect();
        let Some(top) = clean.iter().max_by(|a, b| a.tps.total_cmp(&b.tps)) else {
            return Next::Done(stopped);
        };
        let b = top.threads;
        let lo = probes.iter().map(|p| p.threads).filter(|&n| n < b).max();
        let hi = clean.iter().map(|p| p.threads).filter(|&n| n > b).min();
        let tol = ((self.resolution * b as f64).floor() as u32).max(1);
        // Still rising at the ceiling: nothing below it can be the peak.
        let at_ceiling = hi.is_none() && Some(&b) == ladder.last();
        if at_ceiling {
            return Next::Done(format!(
                "{stopped}; peak at {b} threads: the best is the highest thread count measured, so the peak may lie beyond"
            ));
        }
        // Golden section: probe inside the wider side, 0.382 of the way from the best.
        let mut sides: Vec<(u32, u32)> = Vec::new();
        if let Some(h) = hi {
            sides.push((b, h));
        }
        if let Some(l) = lo {
            sides.push((l, b));
        }
        sides.sort_by_key(|&(a, z)| std::cmp::Reverse(z - a));
        let tps = |n: u32| at(n).filter(|p| p.clean).map_or(0.0, |p| p.tps);
        let mut flat = Vec::new();
        for (a, z) in sides {
            if z - a <= tol {
                continue;
            }
            // A side whose far end is within half the drop of the best is flat to one
            // measurement's noise: probing inside it cannot place the peak better.
            let far = if a == b { z } else { a };
            if tps(far) >= top.tps * (1.0 - self.drop / 2.0) {
                flat.push(far);
                continue;
            }
            let step = ((0.382 * (z - a) as f64).round() as u32).max(1);
            let x = if a == b { b + step } else { b - step };
            if x > a && x < z && at(x).is_none() {
                if spent {
                    return Next::Done(format!(
                        "{stopped}; peak at {b} threads after {} thread counts, as many as the doubling list to {} would take",
                        probes.len(),
                        self.to.min(highest.saturating_mul(2)).min(cap)
                    ));
                }
                return Next::Probe(x);
            }
        }
        let flat = match flat.as_slice() {
            [] => String::new(),
            f => format!(
                " (flat within {:.0} % to {} threads: one run each cannot tell them apart)",
                self.drop * 50.0,
                f.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        };
        Next::Done(format!(
            "{stopped}; peak at {b} threads, its measured neighbours within {tol}{flat}"
        ))
    }
}

/// `sla = { p99_ms = 10, threads = 32, max_steps = 8, resolution = 0.05 }` with
/// `rates = "auto"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sla {
    pub p99_ms: f64,
    /// Connections for the rate points; None: twice the series' peak thread count (at
    /// least 4), so arrivals rarely wait for a free connection.
    pub threads: Option<u32>,
    pub max_steps: u32,
    /// Stop when the rates that meet and miss are this fraction of the peak apart.
    pub resolution: f64,
}

/// One rate point, judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub rate: u64,
    /// p99 within the limit, the rate achieved (99 %), no errors, the point ok.
    pub meets: bool,
}

impl Sla {
    /// Connections for a series whose closed-loop peak was at `peak_threads`.
    pub fn threads_for(&self, peak_threads: u32) -> u32 {
        self.threads.unwrap_or((peak_threads * 2).max(4))
    }

    /// The highest rate that met the limit, and the lowest above it that did not.
    pub fn bracket(steps: &[Step]) -> (Option<u64>, Option<u64>) {
        let lo = steps.iter().filter(|s| s.meets).map(|s| s.rate).max();
        let hi = steps
            .iter()
            .filter(|s| !s.meets && Some(s.rate) > lo)
            .map(|s| s.rate)
            .min();
        (lo, hi)
    }

    /// The next rate to try under a closed-loop peak of `peak` transactions/s.
    pub fn next(&self, peak: f64, steps: &[Step]) -> Next<u64> {
        let top = peak.round().max(1.0) as u64;
        if steps.is_empty() {
            return Next::Probe(top);
        }
        let (lo, hi) = Self::bracket(steps);
        let Some(hi) = hi else {
            return Next::Done(format!(
                "p99 ≤ {} ms holds up to the closed-loop peak ({top}/s): throughput, not latency, limits it",
                self.p99_ms
            ));
        };
        let lo_v = lo.unwrap_or(0);
        let close = (hi - lo_v) as f64 <= self.resolution * peak;
        if close || steps.len() as u32 >= self.max_steps {
            return Next::Done(match lo {
                Some(l) => format!(
                    "capacity {l}/s at p99 ≤ {} ms ({hi}/s misses it)",
                    self.p99_ms
                ),
                None => format!("p99 ≤ {} ms is missed even at {hi}/s", self.p99_ms),
            });
        }
        let mid = (lo_v + hi) / 2;
        if mid == lo_v || steps.iter().any(|s| s.rate == mid) {
            return Next::Done(format!("no rate left between {lo_v}/s and {hi}/s"));
        }
        Next::Probe(mid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a model (`tps(n)`, p99 by Little's law) with relative noise
    /// from a fixed seed; returns the probes in the order taken and the end.
    fn search(
        cfg: &AutoThreads,
        cap: u32,
        tps: impl Fn(u32) -> f64,
        noise: f64,
    ) -> (Vec<Probe>, String) {
        let mut seed: u64 = 42;
        let mut probes: Vec<Probe> = Vec::new();
        for _ in 0..100 {
            match cfg.next(cap, &probes) {
                Next::Probe(n) => {
                    assert!(probes.iter().all(|p| p.threads != n), "{n} probed twice");
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let u = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                    let x = tps(n) * (1.0 + noise * u);
                    probes.push(Probe {
                        threads: n,
                        tps: x,
                        p99_ms: Some(n as f64 / x * 1e3 * 2.0),
                        clean: true,
                    });
                }
                Next::Done(why) => return (probes, why),
            }
        }
        panic!("the search did not end: {probes:?}");
    }

    fn usl(s: f64, k: f64, l: f64) -> impl Fn(u32) -> f64 {
        move |n| {
            let n = n as f64;
            l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))
        }
    }

    #[test]
    fn finds_a_usl_peak_with_fewer_points_than_the_fixed_list() {
        // N* = √(0.97/0.0006) ≈ 40.
        let cfg = AutoThreads::default();
        let (probes, why) = search(&cfg, 1024, usl(0.03, 0.0006, 1000.0), 0.02);
        let best = probes
            .iter()
            .max_by(|a, b| a.tps.total_cmp(&b.tps))
            .unwrap()
            .threads;
        // Within the resolution (25 %) of the true peak.
        assert!((30..=50).contains(&best), "best {best}: {probes:?}");
        // Doubling to 256 (the peak is flat: 64 is within 10 % of it); refinement only as far
        // as the list 1..512 would have cost: never more probes than the list.
        assert!(probes.len() <= 10, "{} probes: {probes:?}", probes.len());
        assert!(why.contains("below its best for two doublings"), "{why}");
        // The ladder stopped well short of 1024.
        assert!(probes.iter().all(|p| p.threads <= 256), "{probes:?}");
    }

    /// A flat, noisy top (the 2-core machine under load): over many seeds and noise levels
    /// the search never measures more thread counts than the doubling list a doubling past
    /// its highest count (#34: it had measured 11 where 1..256 takes 9).
    #[test]
    fn a_noisy_flat_top_never_costs_more_than_the_list() {
        let cfg = AutoThreads::default();
        // Rises to 16, flat to within a few percent after.
        let flat = |n: u32| 1000.0 * (n.min(16) as f64) / (1.0 + 0.002 * n as f64);
        for noise in [0.05, 0.15, 0.30] {
            for seed in 0..50u64 {
                let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut probes: Vec<Probe> = Vec::new();
                let why = loop {
                    match cfg.next(1024, &probes) {
                        Next::Probe(n) => {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            let u = (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                            // A neighbour's burst now and then takes a third.
                            let burst = if x % 5 == 0 { 0.67 } else { 1.0 };
                            probes.push(Probe {
                                threads: n,
                                tps: flat(n) * (1.0 + noise * u) * burst,
                                p99_ms: None,
                                clean: true,
                            });
                        }
                        Next::Done(why) => break why,
                    }
                };
                let highest = probes.iter().map(|p| p.threads).max().unwrap();
                let list = (highest.saturating_mul(2).min(1024) as f64).log2() as usize + 1;
                assert!(
                    probes.len() <= list,
                    "noise {noise}, seed {seed}: {} probes, list to {} has {list}: {probes:?} ({why})",
                    probes.len(),
                    highest * 2
                );
            }
        }
    }

    #[test]
    fn a_peak_at_two_threads_on_a_small_machine() {
        // What a 2-core host gives: a jump from 1 to 2, then a slow decline.
        let table = |n: u32| match n {
            1 => 890.0,
            2 => 4788.0,
            3 => 4349.0,
            4 => 4594.0,
            _ => 4600.0 - 400.0 * (n as f64).log2(),
        };
        let (probes, why) = search(&AutoThreads::default(), 1024, table, 0.0);
        let taken: Vec<u32> = probes.iter().map(|p| p.threads).collect();
        // 4 is within 5 % of 2: flat to one run's noise, so nothing is probed between them;
        // between 1 and 2 there is no thread count to probe.
        assert_eq!(taken, [1, 2, 4, 8, 16], "{why}");
        assert!(
            why.contains("peak at 2 threads") && why.contains("flat within 5 % to 4"),
            "{why}"
        );
    }

    #[test]
    fn stops_at_the_servers_ceiling_and_says_the_peak_may_lie_beyond() {
        let cfg = AutoThreads::default();
        let (probes, why) = search(&cfg, 100, |n| n as f64 * 10.0, 0.0);
        let taken: Vec<u32> = probes.iter().map(|p| p.threads).collect();
        assert_eq!(taken, [1, 2, 4, 8, 16, 32, 64, 100], "{why}");
        assert!(
            why.contains("takes at most 100") && why.contains("may lie beyond"),
            "{why}"
        );
    }

    #[test]
    fn a_p99_limit_or_a_failure_ends_the_doubling() {
        let cfg = AutoThreads {
            p99_ms: Some(5.0),
            ..AutoThreads::default()
        };
        // Latency N/X·2000 ms passes 5 ms from 8 threads (X(8) = 3200 → 5.0 ms: not past).
        let (probes, why) = search(&cfg, 1024, |n| 400.0 * (n as f64).min(8.0), 0.0);
        assert!(why.contains("passed the limit of 5 ms"), "{why}");
        assert_eq!(probes.iter().map(|p| p.threads).max(), Some(16));
        let mut probes = vec![
            Probe {
                threads: 1,
                tps: 100.0,
                p99_ms: None,
                clean: true,
            },
            Probe {
                threads: 2,
                tps: 190.0,
                p99_ms: None,
                clean: false,
            },
        ];
        match cfg.next(1024, &probes) {
            Next::Done(why) => assert!(why.contains("failed or had errors"), "{why}"),
            n => panic!("{n:?}"),
        }
        probes.truncate(1);
        assert_eq!(cfg.next(1024, &probes), Next::Probe(2));
    }

    #[test]
    fn max_points_bounds_the_search() {
        let cfg = AutoThreads {
            max_points: 5,
            ..AutoThreads::default()
        };
        let (probes, why) = search(&cfg, 1024, usl(0.01, 0.0001, 100.0), 0.0);
        assert_eq!(probes.len(), 5);
        assert!(why.contains("max_points"), "{why}");
    }

    /// Bisection against a server whose p99 passes the limit above 700/s: the capacity is
    /// the highest rate probed that met it, and the next probed rate above it did not.
    #[test]
    fn sla_bisection_brackets_the_capacity() {
        let sla = Sla {
            p99_ms: 10.0,
            threads: None,
            max_steps: 8,
            resolution: 0.05,
        };
        let mut steps: Vec<Step> = Vec::new();
        let why = loop {
            match sla.next(1000.0, &steps) {
                Next::Probe(r) => steps.push(Step {
                    rate: r,
                    meets: r <= 700,
                }),
                Next::Done(why) => break why,
            }
        };
        let rates: Vec<u64> = steps.iter().map(|s| s.rate).collect();
        assert_eq!(rates[0], 1000, "the peak first: {rates:?}");
        let (lo, hi) = Sla::bracket(&steps);
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(lo <= 700 && hi > 700 && hi - lo <= 50, "{rates:?}");
        assert!(why.contains(&format!("capacity {lo}/s")), "{why}");
        assert!(steps.len() <= 8);
        // Met at the peak: throughput limits, one step.
        assert!(matches!(
            sla.next(1000.0, &[Step { rate: 1000, meets: true }]),
            Next::Done(w) if w.contains("holds up to the closed-loop peak")
        ));
        // Never met.
        let mut steps: Vec<Step> = Vec::new();
        while let Next::Probe(r) = sla.next(1000.0, &steps) {
            steps.push(Step {
                rate: r,
                meets: false,
            });
        }
        assert_eq!(Sla::bracket(&steps).0, None);
        assert_eq!(sla.threads_for(8), 16);
        assert_eq!(sla.threads_for(1), 4);
    }
}
