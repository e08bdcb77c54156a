//! Measures what recording one event costs a worker (HDR histogram + single-writer counters),
//! the part of the hot path that is ours rather than the driver's.
//! Run: cargo run --release --example record_cost

use std::time::Instant;
use sweepbench::engine::metrics::{worker_hist, LiveCounts, Tally};

fn main() {
    let n: u64 = 20_000_000;
    let live = LiveCounts::new();
    let mut hist = worker_hist();
    let tally = Tally {
        reads: 14,
        writes: 4,
        other: 2,
        errors: 0,
        reconnects: 0,
    };
    // Latencies spread like a real run's (50 µs to 20 ms), precomputed so the loop measures
    // recording only.
    let mut rng = sweepbench::engine::workload::rand::Rng::seeded(1);
    let samples: Vec<u64> = (0..4096)
        .map(|_| (50_000.0 * (rng.unit() * 6.0).exp()) as u64)
        .collect();
    for &s in &samples {
        let _ = hist.record(s);
    }
    let t = Instant::now();
    for i in 0..n {
        let ns = samples[(i & 4095) as usize];
        live.record_event(&tally, ns);
        let _ = hist.record(ns);
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!("recording one event (counters + HDR): {per:.1} ns");
    let t = Instant::now();
    for i in 0..n {
        let _ = hist.record(samples[(i & 4095) as usize]);
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!("HDR record alone: {per:.1} ns");
    std::hint::black_box((&live, &hist));
}
