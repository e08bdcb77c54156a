//! sysbench 1.0.20's memory test: each event reads, writes or walks one block (in order or at
//! random offsets) of a buffer shared by every thread (`global`) or each thread's own
//! (`local`), until the total size is moved.

use super::HostTest;
use crate::engine::workload::rand::Rng;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const WORD: usize = std::mem::size_of::<usize>();

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Oper {
    Read,
    Write,
    None,
}

pub struct Memory {
    pub block: usize,
    pub total: u64,
    pub global: bool,
    pub oper: Oper,
    pub random: bool,
    /// The buffer every thread uses under `--memory-scope=global`.
    shared: Option<Arc<Vec<AtomicUsize>>>,
}

impl Memory {
    /// `block` bytes a power of two of at least a word (the caller checks it, with its own
    /// words).
    pub fn new(block: usize, total: u64, global: bool, oper: Oper, random: bool) -> Memory {
        Memory {
            block,
            total,
            global,
            oper,
            random,
            shared: global.then(|| Arc::new(buffer(block))),
        }
    }
}

impl Default for Memory {
    /// sysbench's defaults: 1 KiB blocks, 100 GiB in all, written in order to one shared
    /// buffer.
    fn default() -> Memory {
        Memory::new(1024, 100 << 30, true, Oper::Write, false)
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
}
