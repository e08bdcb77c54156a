//! sysbench 1.0.20's CPU test: each event counts the primes below a limit by trial division.

use super::HostTest;
use crate::engine::workload::primes::primes_below;

/// sysbench's `--cpu-max-prime` default.
pub const DEFAULT_MAX_PRIME: u64 = 10_000;

pub struct Cpu {
    pub max_prime: u64,
}

impl Cpu {
    pub fn new(max_prime: u64) -> Cpu {
        Cpu { max_prime }
    }
}

impl HostTest for Cpu {
    type Thread = ();

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
}
