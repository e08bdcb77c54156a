//! Synthetic targets (`synthetic = { seed = 7 }`): a server that does not exist, modelled,
//! so that sweeps, reports, compare, history, the gate and the paired design run without a
//! database, in virtual time (a 60 s point is computed, not waited for) and the same for the
//! same seed, every time.
//!
//! The model: each workload's throughput follows the Universal Scalability Law,
//! X(N) = λN / (1 + σ(N − 1) + κN(N − 1)), scaled per config; a measurement's rate is X
//! times the machine's mood — a random walk in virtual time (`drift`, shared by every target
//! of the same seed, as one machine's mood is), a run-to-run effect of its own (`noise`), and
//! now and then a neighbour's burst (`burst`, `burst_loss`) — and its per-second samples wander
//! around that rate. Latency is lognormal (`latency_spread`) with the mean Little's law gives a
//! closed loop (N / X), or, at an open-loop `rate`, the single-event latency stretched by the
//! load (1 / (1 − ρ)); arrivals beyond X fill the queue as in sysbench. Statements per event
//! come from the workload's own event plan, so `[workload_options]` move qps as they would.
//! Stalls of a known count and length (`stall_every`, `stall_len`, `stall_depth`) test what
//! the report says of a run's stability.

use crate::engine::config::{EngineConfig, WorkloadKind, WorkloadOptions};
use crate::engine::exec::{IntervalStats, RunReport, QUEUE_FULL};
use crate::engine::metrics::{total_hist, Counts, TotalHist};
use crate::engine::workload::rand::Rng;
use crate::engine::workload::EventPlan;
use std::collections::BTreeMap;

/// What a sweep file's `synthetic = { … }` may set; everything but `seed` has a default.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// Same seed, same figures.
    pub seed: u64,
    /// Events per second of one thread alone, for oltp_read_only (other workloads scale it
    /// by their cost; `workloads` sets any directly).
    #[serde(default = "defaults::lambda")]
    pub lambda: f64,
    /// Contention (USL σ, 0 ≤ σ < 1) and coherency (κ ≥ 0).
    #[serde(default = "defaults::sigma")]
    pub sigma: f64,
    #[serde(default = "defaults::kappa")]
    pub kappa: f64,
    /// Run-to-run noise: the SD of ln(rate) between measurements of one point.
    #[serde(default = "defaults::noise")]
    pub noise: f64,
    /// The machine's drift: SD of ln(mood) added every 10 s of virtual time.
    #[serde(default)]
    pub drift: f64,
    /// The chance a measurement is hit by a neighbour's burst, and the share of its rate a
    /// burst takes at most.
    #[serde(default)]
    pub burst: f64,
    #[serde(default = "defaults::burst_loss")]
    pub burst_loss: f64,
    /// Ignored errors (deadlocks, code 1213) per event.
    #[serde(default)]
    pub errors: f64,
    /// Stalls of known count and length (a checkpoint's flush storm): one starts every
    /// `stall_every` seconds of a measurement (at the middle of each period; 0, none) and
    /// lasts `stall_len` seconds, at `stall_depth` of the rate.
    #[serde(default)]
    pub stall_every: u64,
    #[serde(default = "defaults::stall_len")]
    pub stall_len: u64,
    #[serde(default = "defaults::stall_depth")]
    pub stall_depth: f64,
    /// A neighbour beside this target: the share of the host's CPU another process takes
    /// during each of its measurements, percent (0, none), recorded as the point's
    /// `others_cpu_pct` (±2 points between measurements); the measurement keeps
    /// 1 − `neighbour_cost` × that share of its rate (a starved 2-core host loses a little
    /// more than the neighbour takes).
    #[serde(default)]
    pub neighbour: f64,
    #[serde(default = "defaults::neighbour_cost")]
    pub neighbour_cost: f64,
    /// SD of ln(latency) between events.
    #[serde(default = "defaults::latency_spread")]
    pub latency_spread: f64,
    /// Throughput factor per config name (1 where not named).
    #[serde(default)]
    pub configs: BTreeMap<String, f64>,
    /// λ per workload name, replacing the default cost ratio.
    #[serde(default)]
    pub workloads: BTreeMap<String, f64>,
    /// Throughput factor per thread count ("16" = 1.07; 1 where not named): an effect that
    /// differs by thread count, as real changes often do.
    #[serde(default)]
    pub threads: BTreeMap<String, f64>,
    /// Each measurement takes the wall time a real one would (its warmup and time), and
    /// SIGINT/SIGTERM cut it short as they cut a real point: for trying Ctrl-C, the sweep lock
    /// and `--resume` without a server. By default a point is computed at once.
    #[serde(default)]
    pub real_time: bool,
    /// The connections the modelled server takes (as its max_connections): the preflight
    /// holds a sweep to it as it holds a real server; none, no limit.
    #[serde(default)]
    pub max_connections: Option<u32>,
    /// Each run of the sweep draws anew (from its sequence number: night k draws the same
    /// wherever it runs), as nights on a real machine differ — for history and the nightly;
    /// by default the same seed gives the same figures in every run.
    #[serde(default)]
    pub vary_by_run: bool,
}

mod defaults {
    pub fn lambda() -> f64 {
        400.0
    }
    pub fn sigma() -> f64 {
        0.05
    }
    pub fn kappa() -> f64 {
        0.0005
    }
    pub fn noise() -> f64 {
        0.02
    }
    pub fn burst_loss() -> f64 {
        0.3
    }
    pub fn latency_spread() -> f64 {
        0.4
    }
    pub fn stall_len() -> u64 {
        3
    }
    pub fn stall_depth() -> f64 {
        0.1
    }
    pub fn neighbour_cost() -> f64 {
        1.25
    }
}

/// One thread's events per second relative to oltp_read_only's: fewer statements, more
/// events.
fn cost_ratio(w: WorkloadKind) -> f64 {
    w.spec().synthetic_cost
}

impl Model {
    /// Refuses values outside their meaning, naming the key.
    pub fn check(&self) -> Result<(), String> {
        let within = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err(format!("synthetic.{name} = {v}: expected {lo} to {hi}"))
            }
        };
        if !(self.lambda.is_finite() && self.lambda > 0.0 && self.lambda <= 1e9) {
            return Err(format!(
                "synthetic.lambda = {}: expected events per second above 0 (at most 1e9)",
                self.lambda
            ));
        }
        within("sigma", self.sigma, 0.0, 0.999)?;
        within("kappa", self.kappa, 0.0, 1.0)?;
        within("noise", self.noise, 0.0, 2.0)?;
        within("drift", self.drift, 0.0, 1.0)?;
        within("burst", self.burst, 0.0, 1.0)?;
        within("burst_loss", self.burst_loss, 0.0, 0.99)?;
        within("errors", self.errors, 0.0, 100.0)?;
        within("stall_depth", self.stall_depth, 0.0, 1.0)?;
        within("neighbour", self.neighbour, 0.0, 95.0)?;
        within("neighbour_cost", self.neighbour_cost, 0.0, 2.0)?;
        if self.stall_every > 0 && !(1..self.stall_every).contains(&self.stall_len) {
            return Err(format!(
                "synthetic.stall_len = {}: expected 1 to {} (shorter than stall_every)",
                self.stall_len,
                self.stall_every - 1
            ));
        }
        within("latency_spread", self.latency_spread, 0.01, 3.0)?;
        for (k, v) in &self.configs {
            within(&format!("configs.{k}"), *v, 1e-6, 1e6)?;
        }
        for (k, v) in &self.threads {
            if k.parse::<u32>().map_or(true, |n| n == 0) {
                return Err(format!("synthetic.threads: '{k}' is not a thread count"));
            }
            within(&format!("threads.{k}"), *v, 1e-6, 1e6)?;
        }
        for (k, v) in &self.workloads {
            if WorkloadKind::from_name(k).is_none() {
                return Err(format!("synthetic.workloads: '{k}' is not a workload"));
            }
            if !(v.is_finite() && *v > 0.0 && *v <= 1e9) {
                return Err(format!(
                    "synthetic.workloads.{k} = {v}: expected events per second above 0"
                ));
            }
        }
        Ok(())
    }

    /// One thread's events per second for this workload with these options: an event that
    /// runs more statements than sysbench's default takes proportionally longer.
    fn lambda_of(&self, w: WorkloadKind, wl: &WorkloadOptions) -> f64 {
        let base = self
            .workloads
            .get(w.name())
            .copied()
            .unwrap_or(self.lambda * cost_ratio(w));
        let statements = |o: &WorkloadOptions| {
            let (r, wr, ot) = EventPlan::new(w, o).expected_counts();
            (r + wr + ot).max(1) as f64
        };
        base * statements(&EngineConfig::new(w).wl) / statements(wl)
    }

    /// X(N) for a workload (with these options) and config, events per second, before the
    /// machine's mood.
    pub fn throughput(&self, w: WorkloadKind, wl: &WorkloadOptions, config: &str, n: u32) -> f64 {
        let by_threads = self
            .threads
            .get(&n.max(1).to_string())
            .copied()
            .unwrap_or(1.0);
        let n = n.max(1) as f64;
        let f = self.configs.get(config).copied().unwrap_or(1.0) * by_threads;
        f * self.lambda_of(w, wl) * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }

    /// ln(mood) at virtual second `t`: a random walk of `drift` per 10 s, the same for every
    /// target of this seed.
    fn walk(&self, t: f64) -> f64 {
        if self.drift == 0.0 {
            return 0.0;
        }
        let steps = (t.max(0.0) / 10.0) as u64;
        let mut rng = Rng::seeded(self.seed ^ 0x6d6f_6f64);
        (0..steps.min(1_000_000))
            .map(|_| normal(&mut rng))
            .sum::<f64>()
            * self.drift
    }
}

fn normal(rng: &mut Rng) -> f64 {
    let u = rng.unit().max(1e-12);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos()
}

/// The standard normal quantile.
fn probit(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0).map_or(0.0, |n| n.inverse_cdf(p.clamp(1e-12, 1.0 - 1e-12)))
}

/// One measurement of a synthetic target: what it is of, and when.
pub struct Measure<'a> {
    /// Which run of its sweep this is (its draws' seed when the model varies by run).
    pub run: u64,
    pub target: &'a str,
    pub config: &'a str,
    /// Distinguishes the measurements of one point (its repeat, a paired slice's round).
    pub repeat: u32,
    /// The virtual second at which it starts.
    pub at_s: f64,
    /// The engine configuration a real target would run (threads, time, rate, workload
    /// options).
    pub o: &'a EngineConfig,
}

/// A 64-bit mix of the model's seed and what is measured: the same measurement gets the same
/// draws, whatever else the sweep measured before it.
fn seed_of(seed: u64, parts: &[&str], nums: &[u64]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    let mut eat = |b: u8| h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    for p in parts {
        p.bytes().for_each(&mut eat);
        eat(0xff);
    }
    for n in nums {
        n.to_le_bytes().into_iter().for_each(&mut eat);
    }
    h
}

/// Latency quantiles recorded into a histogram: `k` evenly spaced quantiles of a lognormal
/// with this mean, `count` events spread over them.
fn lognormal_hist(mean_s: f64, spread: f64, count: u64, k: u64) -> TotalHist {
    let mut h = total_hist();
    if count == 0 {
        return h;
    }
    let median = mean_s * (-spread * spread / 2.0).exp();
    let k = k.min(count).max(1);
    for i in 0..k {
        let z = probit((i as f64 + 0.5) / k as f64);
        let ns = (median * (spread * z).exp() * 1e9).clamp(1.0, 1e15) as u64;
        let n = count / k + u64::from(i < count % k);
        let _ = h.record_n(ns, n);
    }
    h
}

impl Model {
    /// The share of the rate second `s` (1-based) of a measurement keeps: `stall_depth`
    /// inside a stall, else all of it.
    fn stall_factor(&self, s: u64) -> f64 {
        if self.stall_every == 0 {
            return 1.0;
        }
        let at = (s - 1) % self.stall_every;
        let start = self.stall_every / 2;
        if (start..start + self.stall_len).contains(&at) {
            self.stall_depth
        } else {
            1.0
        }
    }

    /// The share of the host's CPU the neighbour took during measurement `m`, percent; None
    /// without one.
    pub fn neighbour_pct(&self, m: &Measure<'_>) -> Option<f64> {
        if self.neighbour <= 0.0 {
            return None;
        }
        let run = if self.vary_by_run { m.run } else { 0 };
        let mut rng = Rng::seeded(seed_of(
            self.seed,
            &[m.target, m.config, m.o.workload.name(), "neighbour"],
            &[m.o.threads as u64, m.repeat as u64, run],
        ));
        Some((self.neighbour + 2.0 * normal(&mut rng)).clamp(0.0, 100.0))
    }

    /// What one measurement of `m.o` (its threads, time, rate) gives: the same report a real
    /// run does, computed. Arrivals beyond the throughput end it as sysbench's full queue does.
    pub fn measure(&self, m: &Measure<'_>) -> RunReport {
        let o = m.o;
        let w = o.workload;
        let run = if self.vary_by_run { m.run } else { 0 };
        let mut rng = Rng::seeded(seed_of(
            self.seed,
            &[m.target, m.config, w.name()],
            &[o.threads as u64, m.repeat as u64, o.rate, o.time_s, run],
        ));
        let secs = o.time_s.max(1);
        let capacity = self.throughput(w, &o.wl, m.config, o.threads);
        let mut mood = self.walk(m.at_s + secs as f64 / 2.0) + self.noise * normal(&mut rng);
        if rng.unit() < self.burst {
            mood += (1.0 - self.burst_loss * rng.unit()).ln();
        }
        if let Some(share) = self.neighbour_pct(m) {
            mood += (1.0 - self.neighbour_cost * share / 100.0).max(0.05).ln();
        }
        let x = capacity * mood.exp();
        let (rate, mean_s, fatal) = if o.rate > 0 {
            let rho = o.rate as f64 / x;
            let alone = 1.0 / self.throughput(w, &o.wl, m.config, 1);
            if rho >= 1.0 {
                (x, alone * 50.0, Some(QUEUE_FULL.into()))
            } else {
                (o.rate as f64, alone / (1.0 - rho), None)
            }
        } else {
            (x, o.threads as f64 / x, None)
        };
        let (r_per, w_per, o_per) = EventPlan::new(w, &o.wl).expected_counts();
        let spread = self.latency_spread;
        let mut intervals = Vec::with_capacity(secs as usize);
        let mut interval_hists = Vec::with_capacity(secs as usize);
        let mut totals = Counts::default();
        let mut own = 0.0;
        for s in 1..=secs {
            // The seconds wander around the measurement's rate (AR(1), ρ = 0.5, 2 %).
            own = 0.5 * own + 0.866 * 0.02 * normal(&mut rng);
            let events = (rate * own.exp() * self.stall_factor(s)).round().max(0.0) as u64;
            let errors = (events as f64 * self.errors).round() as u64;
            let c = Counts {
                events,
                reads: events * r_per,
                writes: events * w_per,
                other: events * o_per,
                errors,
                reconnects: 0,
                lat_sum_ns: (events as f64 * mean_s * 1e9) as u64,
            };
            totals.add(&c);
            let h = lognormal_hist(mean_s, spread, events, 32);
            let ms = |q: f64| h.value_at_quantile(q) as f64 / 1e6;
            intervals.push(IntervalStats {
                t_s: s as f64,
                threads: o.threads,
                tps: events as f64,
                qps: c.queries() as f64,
                reads_s: c.reads as f64,
                writes_s: c.writes as f64,
                other_s: c.other as f64,
                errors_s: errors as f64,
                reconnects_s: 0.0,
                lat_pct_ms: ms(o.percentile.clamp(1, 100) as f64 / 100.0),
                lat_p50_ms: ms(0.5),
                lat_p99_ms: ms(0.99),
                lat_max_ms: h.max() as f64 / 1e6,
                queue_length: (o.rate > 0).then_some(0),
                concurrency: (o.rate > 0).then_some((rate * mean_s).round() as u64),
            });
            interval_hists.push(h);
        }
        let hist = lognormal_hist(mean_s, spread, totals.events, 400);
        let min_max_ns = (totals.events > 0).then(|| (hist.min(), hist.max()));
        let n = o.threads.max(1) as u64;
        let per_thread = (0..n)
            .map(|i| {
                let share = |v: u64| v / n + u64::from(i < v % n);
                Counts {
                    events: share(totals.events),
                    reads: share(totals.reads),
                    writes: share(totals.writes),
                    other: share(totals.other),
                    errors: share(totals.errors),
                    reconnects: 0,
                    lat_sum_ns: totals.lat_sum_ns / n,
                }
            })
            .collect();
        let mut ignored_by_code = BTreeMap::new();
        if totals.errors > 0 {
            ignored_by_code.insert(1213u16, totals.errors);
        }
        RunReport {
            threads: o.threads,
            elapsed_s: secs as f64,
            window_s: secs as f64,
            totals,
            hist,
            min_max_ns,
            per_thread,
            intervals,
            interval_hists,
            fatal,
            unfinished: None,
            interrupted: false,
            ignored_by_code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        toml::from_str("seed = 7").unwrap()
    }

    fn cfg(threads: u32, time_s: u64) -> EngineConfig {
        let mut c = EngineConfig::new(WorkloadKind::ReadOnly);
        c.threads = threads;
        c.time_s = time_s;
        c
    }

    fn measure(m: &Model, o: &EngineConfig, repeat: u32) -> RunReport {
        m.measure(&Measure {
            run: 1,
            target: "t",
            config: "default",
            repeat,
            at_s: 0.0,
            o,
        })
    }

    #[test]
    fn the_same_measurement_gives_the_same_figures() {
        let m = model();
        let o = cfg(8, 5);
        let (a, b) = (measure(&m, &o, 1), measure(&m, &o, 1));
        assert_eq!(a.totals, b.totals);
        assert_eq!(
            a.hist.value_at_quantile(0.95),
            b.hist.value_at_quantile(0.95)
        );
        assert_ne!(
            a.totals,
            measure(&m, &o, 2).totals,
            "another repeat, other draws"
        );
        // Another run draws the same, unless the model varies by run.
        let other_run = |m: &Model| {
            m.measure(&Measure {
                run: 2,
                target: "t",
                config: "default",
                repeat: 1,
                at_s: 0.0,
                o: &o,
            })
            .totals
        };
        assert_eq!(other_run(&m), a.totals);
        let varying = Model {
            vary_by_run: true,
            ..m.clone()
        };
        assert_ne!(other_run(&varying), measure(&varying, &o, 1).totals);
    }

    #[test]
    fn stalls_fall_where_and_as_long_as_asked() {
        let m: Model = toml::from_str("seed = 1\nstall_every = 10\nstall_len = 2").unwrap();
        assert!(m.check().is_ok());
        let low: Vec<u64> = (1..=30).filter(|s| m.stall_factor(*s) < 1.0).collect();
        assert_eq!(low, [6, 7, 16, 17, 26, 27]);
        let bad: Model = toml::from_str("seed = 1\nstall_every = 4\nstall_len = 4").unwrap();
        assert!(bad.check().unwrap_err().contains("synthetic.stall_len = 4"));
    }

    #[test]
    fn throughput_follows_the_usl_and_latency_littles_law() {
        let m: Model =
            toml::from_str("seed = 1\nnoise = 0\nlambda = 1000\nsigma = 0.1\nkappa = 0.001")
                .unwrap();
        for n in [1u32, 4, 16, 64] {
            let o = cfg(n, 20);
            let r = measure(&m, &o, 1);
            let x = 1000.0 * n as f64 / (1.0 + 0.1 * (n - 1) as f64 + 0.001 * (n * (n - 1)) as f64);
            let tps = r.totals.events as f64 / r.window_s;
            assert!((tps / x - 1.0).abs() < 0.03, "{n}: {tps} against {x}");
            // Little's law: mean latency × throughput = the threads in flight.
            let mean_s = r.totals.lat_sum_ns as f64 / r.totals.events as f64 / 1e9;
            assert!(
                (mean_s * tps / n as f64 - 1.0).abs() < 0.03,
                "{n}: {mean_s}"
            );
            // oltp_read_only: 14 reads and BEGIN/COMMIT per event.
            assert_eq!(r.totals.reads, 14 * r.totals.events);
            assert_eq!(r.totals.other, 2 * r.totals.events);
        }
    }

    #[test]
    fn arrivals_beyond_capacity_fill_the_queue() {
        let m = model();
        let mut o = cfg(4, 5);
        let x = m.throughput(WorkloadKind::ReadOnly, &o.wl, "default", 4);
        o.rate = (x * 0.5) as u64;
        let r = measure(&m, &o, 1);
        assert!(r.fatal.is_none());
        assert!((r.totals.events as f64 / 5.0 / o.rate as f64 - 1.0).abs() < 0.05);
        o.rate = (x * 3.0) as u64;
        assert_eq!(measure(&m, &o, 1).fatal.as_deref(), Some(QUEUE_FULL));
    }

    #[test]
    fn configs_scale_and_values_outside_their_meaning_are_refused() {
        let m: Model = toml::from_str("seed = 3\nconfigs = { fast = 1.5 }").unwrap();
        let wl = EngineConfig::new(WorkloadKind::ReadWrite).wl;
        let base = m.throughput(WorkloadKind::ReadWrite, &wl, "default", 8);
        assert!((m.throughput(WorkloadKind::ReadWrite, &wl, "fast", 8) / base - 1.5).abs() < 1e-12);
        // More statements per event, proportionally fewer events.
        let mut more = wl.clone();
        more.point_selects = 24; // 20 statements per event → 34
        let (r, w, o) = EventPlan::new(WorkloadKind::ReadWrite, &more).expected_counts();
        let ratio = 20.0 / (r + w + o) as f64;
        let slower = m.throughput(WorkloadKind::ReadWrite, &more, "default", 8);
        assert!(
            (slower / base - ratio).abs() < 1e-12,
            "{slower} {base} {ratio}"
        );
        assert!(m.check().is_ok());
        for bad in [
            "sigma = 1.5",
            "lambda = 0",
            "noise = -1",
            "workloads = { oltp_nope = 5 }",
            "configs = { x = 0 }",
            "lambda = inf",
        ] {
            let m: Model = toml::from_str(&format!("seed = 1\n{bad}")).unwrap();
            assert!(m.check().is_err(), "{bad}");
        }
        assert!(
            toml::from_str::<Model>("seed = 1\nlamda = 5").is_err(),
            "unknown keys"
        );
    }
}
