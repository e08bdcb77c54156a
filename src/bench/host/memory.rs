//! `bench memory`: sysbench 1.0.20's memory test — each event reads, writes or walks one
//! `--memory-block-size` block (in order or at random offsets) of a buffer shared by every
//! thread (`global`) or each thread's own (`local`), until `--memory-total-size` is moved.

use super::{size, HostTest};
use crate::bench::options::RawOptions;
use crate::engine::workload::rand::Rng;
use anyhow::bail;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const HELP: &str = "memory options:\n  --memory-block-size=SIZE    size of memory block for test [1K]\n  --memory-total-size=SIZE    total size of data to transfer [100G]\n  --memory-scope=STRING       memory access scope {global,local} [global]\n  --memory-hugetlb[=on|off]   allocate memory from HugeTLB pool [off]\n  --memory-oper=STRING        type of memory operations {read, write, none} [write]\n  --memory-access-mode=STRING memory access mode {seq,rnd} [seq]\n";

const WORD: usize = std::mem::size_of::<usize>();

#[derive(Clone, Copy, PartialEq)]
enum Oper {
    Read,
    Write,
    None,
}

pub struct Memory {
    block: usize,
    total: u64,
    global: bool,
    oper: Oper,
    random: bool,
    /// The buffer every thread uses under `--memory-scope=global`.
    shared: Option<Arc<Vec<AtomicUsize>>>,
}

impl Memory {
    pub fn of(raw: &RawOptions) -> anyhow::Result<Memory> {
        let given = |n: &str| raw.get(n).to_string();
        let block = size(&given("memory_block_size"))
            .filter(|&b| b as usize >= WORD && b.is_power_of_two() && b <= 1 << 34)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "FATAL: Invalid value for memory-block-size: {}",
                    given("memory_block_size")
                )
            })? as usize;
        let total = size(&given("memory_total_size")).ok_or_else(|| {
            anyhow::anyhow!(
                "FATAL: Invalid value for memory-total-size: {}",
                given("memory_total_size")
            )
        })?;
        let global = match given("memory_scope").as_str() {
            "global" => true,
            "local" => false,
            s => bail!("FATAL: Invalid value for memory-scope: {s}"),
        };
        let oper = match given("memory_oper").as_str() {
            "read" => Oper::Read,
            "write" => Oper::Write,
            "none" => Oper::None,
            s => bail!("FATAL: Invalid value for memory-oper: {s}"),
        };
        let random = match given("memory_access_mode").as_str() {
            "seq" => false,
            "rnd" => true,
            s => bail!("FATAL: Invalid value for memory-access-mode: {s}"),
        };
        if raw.flag("memory_hugetlb") {
            eprintln!("WARNING: --memory-hugetlb: sweepbench allocates ordinary pages");
        }
        Ok(Memory {
            block,
            total,
            global,
            oper,
            random,
            shared: global.then(|| Arc::new(buffer(block))),
        })
    }
}

fn buffer(block: usize) -> Vec<AtomicUsize> {
    (0..block / WORD).map(|_| AtomicUsize::new(0)).collect()
}

/// A thread's buffer (its own, or the shared one) and its random numbers.
pub struct Thread {
    buf: Arc<Vec<AtomicUsize>>,
    rng: Rng,
}

impl HostTest for Memory {
    type Thread = Thread;

    fn describe(&self) -> String {
        let oper = match self.oper {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        };
        format!(
            "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {oper}\n  scope: {}\n\n",
            self.block / 1024,
            self.total / 1024 / 1024,
            if self.global { "global" } else { "local" }
        )
    }

    fn thread(&self, i: usize) -> Thread {
        Thread {
            buf: match &self.shared {
                Some(b) => b.clone(),
                None => Arc::new(buffer(self.block)),
            },
            rng: Rng::seeded(0x6d65_6d00 + i as u64),
        }
    }

    /// Word-sized relaxed loads and stores, as sysbench's ck_pr_load/store: they are not
    /// optimised away, and threads sharing the global buffer do not race in Rust's terms.
    fn event(&self, t: &mut Thread) {
        let words = t.buf.len();
        match (self.oper, self.random) {
            (Oper::Write, false) => {
                for (i, w) in t.buf.iter().enumerate() {
                    w.store(words - i, Ordering::Relaxed);
                }
            }
            (Oper::Read, false) => {
                for w in t.buf.iter() {
                    std::hint::black_box(w.load(Ordering::Relaxed));
                }
            }
            (Oper::None, false) => {
                for i in 0..words {
                    std::hint::black_box(i);
                }
            }
            (oper, true) => {
                for i in 0..words {
                    let at = (t.rng.unit() * words as f64) as usize % words;
                    match oper {
                        Oper::Write => t.buf[at].store(i * WORD, Ordering::Relaxed),
                        Oper::Read => {
                            std::hint::black_box(t.buf[at].load(Ordering::Relaxed));
                        }
                        Oper::None => {
                            std::hint::black_box(at);
                        }
                    }
                }
            }
        }
    }

    fn per_thread(&self, threads: u32) -> Option<u64> {
        (self.total > 0).then(|| self.total / self.block as u64 / threads.max(1) as u64)
    }

    fn interval_latency(&self) -> bool {
        false
    }

    fn interval_line(&self, events: u64, secs: f64, _: u32, _: u32, _: f64) -> String {
        format!(
            "{:.2} MiB/sec",
            events as f64 * self.block as f64 / 1048576.0 / secs
        )
    }

    fn cumulative(&self, events: u64, secs: f64) -> String {
        let mut s = format!(
            "Total operations: {events} ({:8.2} per second)\n\n",
            events as f64 / secs
        );
        if self.oper != Oper::None {
            let mb = events as f64 * self.block as f64 / 1048576.0;
            s.push_str(&format!(
                "{mb:.2} MiB transferred ({:.2} MiB/sec)\n\n",
                mb / secs
            ));
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysbench_reads_them() {
        assert_eq!(size("1K"), Some(1024));
        assert_eq!(size("100G"), Some(100 << 30));
        assert_eq!(size("512"), Some(512));
        assert_eq!(size("x"), None);
    }
}
