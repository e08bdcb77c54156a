//! A Ctrl-C is remembered for the whole process: one that arrives before a run starts (between
//! two points of a sweep) ends that run at once, reported as interrupted, instead of being
//! lost. Its own test binary, since it signals itself.

mod common;
use common::*;
use sweepbench::bench::options::{build, parse_args};

struct Silent;
impl sweepbench::engine::exec::Observer for Silent {}

#[test]
fn a_signal_before_the_run_ends_it_at_once_as_interrupted() {
    let conn = fresh_db("interrupt");
    bench_ok(
        "oltp_point_select prepare --tables=1 --table-size=100",
        &conn,
    );
    sweepbench::interrupt::install();
    assert!(!sweepbench::interrupt::requested());
    // SAFETY: signals this process, whose handler only stores a flag.
    assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
    assert!(
        sweepbench::interrupt::requested(),
        "the process is still here"
    );
    let words = "oltp_point_select --tables=1 --table-size=100 --threads=2 --time=60";
    let (pos, raw, _) = parse_args(&args(words, &conn)).unwrap();
    let o = build(&pos[0], &raw).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let r = rt
        .block_on(sweepbench::engine::exec::run(&o, &mut Silent))
        .unwrap();
    assert!(r.interrupted);
    assert!(r.fatal.is_none(), "{:?}", r.fatal);
    assert!(r.elapsed_s < 30.0, "ran {} s of 60", r.elapsed_s);
}
