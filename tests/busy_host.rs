//! A paired run on a busy host (#66 item 3): two real threads spin beside it, so other
//! processes take much of the CPU; what stays inconclusive is said to have done so on a busy
//! host, with what to do — never hours of measuring at that noise.

mod common;
use common::sweeps::*;
use common::*;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn a_busy_hosts_run_names_the_host_as_why_an_answer_stayed_open() {
    let dir = tempfile::tempdir().unwrap();
    // Two configs of one server, judged at a threshold no 12-second budget decides.
    let body = "name = \"busy\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\ndesign = \"paired\"\nwarmup = \"1s\"\nslice = \"1s\"\nbudget = \"12s\"\n[[targets]]\nname = \"local\"\nserver = {}\n[[configs]]\nname = \"a\"\n[[configs]]\nname = \"b\"\nvars = { innodb_flush_log_at_trx_commit = 1 }\n";
    let f = sweep_file(dir.path(), "busy", body);
    let stop = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            });
        }
        let out = run_in(dir.path(), &f, &["--threshold", "0.1%"]);
        stop.store(true, Ordering::Relaxed);
        out
    });
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("what stayed inconclusive did so on a busy host: other processes and the hypervisor took"),
        "{said}"
    );
    assert!(said.contains("on a quieter host"), "{said}");
    assert!(!said.contains("more of measuring"), "{said}");
    let summary =
        std::fs::read_to_string(dir.path().join("results/busy/latest/summary.txt")).unwrap();
    assert!(summary.contains("did so on a busy host"), "{summary}");
}
