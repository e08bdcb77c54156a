//! Counts heap allocations per query on the run's hot path, in-process, against a real
//! MariaDB. The workload's own client reuses one read and one write buffer per connection and
//! every argument buffer, so a measured query allocates nothing; what remains per run
//! (threads, connections, statement texts, per-interval histograms) is removed by taking the
//! difference of two run lengths.

mod common;
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use sweepbench::bench::options::{build, parse_args};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct Silent;
impl sweepbench::engine::exec::Observer for Silent {}

fn allocations_for(workload: &str, events: u64, conn: &[String]) -> u64 {
    allocations_with(workload, events, conn, "")
}

fn allocations_with(workload: &str, events: u64, conn: &[String], extra: &str) -> u64 {
    let words = format!(
        "{workload} --tables=2 --table-size=1000 --threads=1 --time=0 --events={events} {extra}"
    );
    let (pos, raw, _) = parse_args(&args(&words, conn)).unwrap();
    let o = build(&pos[0], &raw).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = rt
        .block_on(sweepbench::engine::exec::run(&o, &mut Silent))
        .unwrap();
    assert_eq!(r.totals.events, events);
    ALLOCS.load(Ordering::Relaxed) - before
}

/// The allocation counter is process-wide, so the plain and the TLS measurements are one
/// test, one after the other.
#[test]
fn measured_queries_do_not_allocate_and_over_tls_only_for_rustls_records() {
    measured_queries_do_not_allocate();
    queries_over_tls_allocate_only_for_rustls_records();
}

fn measured_queries_do_not_allocate() {
    let conn = fresh_db("allocs");
    bench_ok(
        "oltp_read_write prepare --tables=2 --table-size=1000",
        &conn,
    );
    // The difference between two run lengths removes set-up and tear-down (signed: set-up
    // varies a little from run to run, so a zero-allocation hot path can come out below 0).
    let per_event = |w: &str, n: u64| {
        (allocations_for(w, 3 * n, &conn) as f64 - allocations_for(w, n, &conn) as f64)
            / (2 * n) as f64
    };
    let point = per_event("oltp_point_select", 5000);
    let rw = per_event("oltp_read_write", 100) / 20.0;
    println!("allocations per query: point_select {point:.3}, read_write {rw:.3}");
    // Zero in steady state; the slack is for the allocator's own bookkeeping of thread
    // start-up, which differs a little between runs.
    assert!(
        point < 0.01,
        "point_select allocates {point:.3} times per query"
    );
    assert!(rw < 0.01, "read_write allocates {rw:.3} times per query");
}

/// The same over TLS. rustls allocates for each record it sends and receives (its buffered
/// and unbuffered APIs alike, 0.23): 2 per point select, measured at 4 % of the client's
/// instructions over TLS (docs/performance.md) and held here so it cannot grow unnoticed.
fn queries_over_tls_allocate_only_for_rustls_records() {
    let p = common::tls::pki();
    let s = common::tls::tls_server(&p);
    let conn = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", s.port()),
        "--mysql-user=tlsu".into(),
        "--mysql-password=tls pw".into(),
        "--mysql-db=tlsdb".into(),
        "--mysql-ssl=on".into(),
    ];
    let out = bench(&args(
        "oltp_point_select prepare --tables=2 --table-size=1000",
        &conn,
    ));
    assert!(out.status.success(), "{}", text(&out));
    let n = 5000;
    let point = (allocations_with("oltp_point_select", 3 * n, &conn, "") as f64
        - allocations_with("oltp_point_select", n, &conn, "") as f64)
        / (2 * n) as f64;
    println!("allocations per query over TLS: point_select {point:.3}");
    assert!(
        point <= 2.01,
        "point_select over TLS allocates {point:.3} times per query (2 known)"
    );
}
