//! sysbench's CPU event: the primes below a limit counted by trial division. `bench cpu`
//! runs it as its test, and the host probe times it so hosts compare in the unit DBAs know.

/// The primes below `max_prime`, counted as sysbench's `cpu_execute_event` does (trial
/// division up to √c, from c = 3, in 64-bit integers). Returns the count, so the work is used.
pub fn primes_below(max_prime: u64) -> u64 {
    let mut n = 0;
    for c in 3..max_prime {
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        while (l as f64) <= t {
            if c % l == 0 {
                break;
            }
            l += 1;
        }
        if l as f64 > t {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_counted_as_sysbench_counts_them() {
        // 3..10: 3, 5, 7 (sysbench starts at 3, so 2 is not counted).
        assert_eq!(primes_below(10), 3);
        // π(10000) = 1229, less the prime 2.
        assert_eq!(primes_below(10_000), 1228);
        assert_eq!(primes_below(3), 0);
    }
}
