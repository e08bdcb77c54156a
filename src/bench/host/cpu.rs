//! `bench cpu`: sysbench 1.0.20's CPU test — each event counts the primes below
//! `--cpu-max-prime` by trial division.

use super::HostTest;
use crate::bench::options::RawOptions;
use anyhow::bail;

pub const HELP: &str =
    "cpu options:\n  --cpu-max-prime=N upper limit for primes generator [10000]\n";

pub use crate::engine::workload::primes::primes_below;

pub struct Cpu {
    max_prime: u64,
}

impl Cpu {
    pub fn of(raw: &RawOptions) -> anyhow::Result<Cpu> {
        let max_prime = raw.int("cpu_max_prime");
        if max_prime == 0 || max_prime > i32::MAX as u64 {
            bail!(
                "FATAL: Invalid value of cpu-max-prime: {}.",
                raw.get("cpu_max_prime")
            );
        }
        Ok(Cpu { max_prime })
    }
}

impl HostTest for Cpu {
    type Thread = ();

    fn describe(&self) -> String {
        format!("Prime numbers limit: {}\n\n", self.max_prime)
    }

    fn thread(&self, _: usize) {}

    fn event(&self, _: &mut ()) {
        std::hint::black_box(primes_below(std::hint::black_box(self.max_prime)));
    }

    fn per_thread(&self, _: u32) -> Option<u64> {
        None
    }

    fn interval_latency(&self) -> bool {
        true
    }

    fn interval_line(&self, events: u64, secs: f64, threads: u32, pct: u32, lat_ms: f64) -> String {
        format!(
            "thds: {threads} eps: {:.2} lat (ms,{pct}%): {lat_ms:.2}",
            events as f64 / secs
        )
    }

    fn cumulative(&self, events: u64, secs: f64) -> String {
        format!(
            "CPU speed:\n    events per second: {:8.2}\n\n",
            events as f64 / secs
        )
    }
}
