//! `bench cpu`: sysbench 1.0.20's CPU test (`engine::host::cpu`) — its option and its lines.

use super::Printed;
use crate::bench::options::RawOptions;
use crate::engine::host::cpu::Cpu;
use anyhow::bail;

pub const HELP: &str =
    "cpu options:\n  --cpu-max-prime=N upper limit for primes generator [10000]\n";

pub fn of(raw: &RawOptions) -> anyhow::Result<Cpu> {
    let max_prime = raw.int("cpu_max_prime");
    if max_prime == 0 || max_prime > i32::MAX as u64 {
        bail!(
            "FATAL: Invalid value of cpu-max-prime: {}.",
            raw.get("cpu_max_prime")
        );
    }
    Ok(Cpu::new(max_prime))
}

impl Printed for Cpu {
    fn describe(&self) -> String {
        format!("Prime numbers limit: {}\n\n", self.max_prime)
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
