use super::merge::{self, Part};
use super::*;
use crate::engine::exec::IntervalStats;
use crate::engine::metrics::{percentile_ms, total_hist};
use crate::engine::workload::rand::Rng;

/// A client's latencies: its own mix of fast and slow events (ns).
fn samples(seed: u64, n: usize, slow_every: u64) -> Vec<u64> {
    let mut r = Rng::seeded(seed);
    (0..n)
        .map(|_| {
            let base = 200_000 + r.next_u64() % 800_000;
            if r.next_u64() % slow_every == 0 {
                base * 40
            } else {
                base
            }
        })
        .collect()
}

fn end_of(h: &TotalHist, events: u64) -> End {
    End {
        elapsed_s: 10.0,
        window_s: 10.0,
        totals: Counts {
            events,
            reads: events * 10,
            ..Counts::default()
        },
        hist: encode_hist(h).unwrap(),
        min_max_ns: Some((h.min(), h.max())),
        per_thread: vec![Counts::default(); 4],
        fatal: None,
        unfinished: None,
        interrupted: false,
        ignored_by_code: Default::default(),
        cpu_s: 1.5,
    }
}

#[test]
fn merged_percentiles_equal_those_of_one_histogram_fed_every_sample() {
    let clients = [
        samples(1, 50_000, 97),
        samples(2, 20_000, 13),
        samples(3, 5_000, 3),
    ];
    let mut one = total_hist();
    let mut parts = Vec::new();
    for (i, s) in clients.iter().enumerate() {
        let mut h = total_hist();
        for &v in s {
            h.record(v).unwrap();
            one.record(v).unwrap();
        }
        // Through the wire format the agents use.
        let end = end_of(&h, s.len() as u64);
        let hist = decode_hist(&end.hist).unwrap();
        assert_eq!(hist.len(), s.len() as u64);
        let second = (
            IntervalStats {
                t_s: 1.0,
                threads: 4,
                tps: s.len() as f64,
                ..IntervalStats::default()
            },
            hist.clone(),
        );
        parts.push(Part {
            client: i as u32,
            end,
            hist,
            seconds: vec![second],
        });
    }
    let (r, cpu) = merge::report(&parts, 95);
    assert_eq!(r.hist.len(), one.len());
    assert_eq!(r.totals.events, 75_000);
    assert_eq!(r.totals.reads, 750_000);
    assert_eq!(r.threads, 12);
    assert_eq!(cpu, 4.5);
    for p in [50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
        assert_eq!(percentile_ms(&r.hist, p), percentile_ms(&one, p), "p{p}");
    }
    assert_eq!(r.min_max_ns, Some((one.min(), one.max())));
    // The one second every client has: counts summed, percentiles of all its events.
    assert_eq!(r.intervals.len(), 1);
    assert_eq!(r.intervals[0].tps, 75_000.0);
    assert_eq!(r.intervals[0].threads, 12);
    assert_eq!(r.intervals[0].lat_pct_ms, percentile_ms(&one, 95.0));
    assert_eq!(r.intervals[0].lat_p99_ms, percentile_ms(&one, 99.0));
    // An average of the clients' p99s would be another number: the test can tell.
    let avg: f64 = parts
        .iter()
        .map(|p| percentile_ms(&p.hist, 99.0))
        .sum::<f64>()
        / 3.0;
    assert!((avg - percentile_ms(&one, 99.0)).abs() > 0.1);
}

#[test]
fn seconds_are_merged_only_where_every_client_has_one_and_a_fatal_names_its_client() {
    let h = {
        let mut h = total_hist();
        h.record(1_000_000).unwrap();
        h
    };
    let sec = |t: f64| {
        (
            IntervalStats {
                t_s: t,
                tps: 1.0,
                ..Default::default()
            },
            h.clone(),
        )
    };
    let mut a = end_of(&h, 1);
    a.fatal = Some("FATAL: boom".into());
    let parts = vec![
        Part {
            client: 0,
            end: end_of(&h, 1),
            hist: h.clone(),
            seconds: vec![sec(1.0), sec(2.0), sec(3.0)],
        },
        Part {
            client: 1,
            end: a,
            hist: h.clone(),
            seconds: vec![sec(1.0), sec(2.0)],
        },
    ];
    let (r, _) = merge::report(&parts, 95);
    assert_eq!(r.intervals.len(), 2);
    assert_eq!(r.interval_hists.len(), 2);
    assert_eq!(r.intervals[1].tps, 2.0);
    assert_eq!(r.fatal.as_deref(), Some("client 2: FATAL: boom"));
}

#[test]
fn shares_add_up_and_differ_by_at_most_one() {
    for total in [1u64, 2, 7, 8, 9, 100, 1001] {
        for k in 1..=5u32 {
            let s: Vec<u64> = (0..k).map(|i| share(total, k, i)).collect();
            assert_eq!(s.iter().sum::<u64>(), total, "{total} over {k}");
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }
}

/// What an agent builds from its task is what the one-client point would run, at its share.
#[test]
fn a_task_gives_the_engine_config_of_the_point_at_its_share() {
    let text = "name = \"x\"\n[data]\ntables = 3\ntable_size = 777\nstorage_engine = \"myisam\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [9]\nclients = 2\nduration = \"7s\"\nwarmup = \"2s\"\nrate = 101\n[workload_options]\nrange_size = 50\nskip_trx = \"on\"\nrand_type = \"pareto\"\nmysql_ignore_errors = [1062, 1213]\n[[targets]]\nname = \"t\"\nurl = \"mysql://u:secret@10.0.0.1:3307/db1?ssl-mode=REQUIRED\"\n";
    let spec = SweepSpec::parse(std::path::Path::new("x.toml"), text).unwrap();
    let plan = crate::pipeline::plan::Plan::build(&spec, &[]);
    let p = &plan.points[0];
    assert_eq!(p.id, "t/default/oltp_read_write/c2/t9/r1");
    assert_eq!(p.clients, 2);
    let crate::pipeline::spec::target::TargetKind::External(c) = &spec.targets[0].kind else {
        panic!("external")
    };
    for (i, threads, rate) in [(0, 5, 51), (1, 4, 50)] {
        let t = Task::new(&spec, p, c, i).unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert!(!json.contains("secret"), "{json}");
        let back: Task = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        let got = back.engine_config(c.password.clone()).unwrap();
        use crate::pipeline::sweep::window::{config, Window};
        let mut want = config(&spec, p, Window::Point, Some(c));
        (want.threads, want.rate) = (threads, rate);
        assert_eq!(got, want);
    }
}

/// Every field of a task is range-checked, the rate and the storage engine included (a
/// rate of u64::MAX ended in a clean run of 0 events; an engine name is spliced into
/// CREATE TABLE).
#[test]
fn a_task_out_of_range_is_refused_naming_its_field() {
    let text = "name = \"x\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [2]\nduration = \"2s\"\n[[targets]]\nname = \"t\"\nurl = \"mysql://u@127.0.0.1:3307/db1\"\n";
    let spec = SweepSpec::parse(std::path::Path::new("x.toml"), text).unwrap();
    let plan = crate::pipeline::plan::Plan::build(&spec, &[]);
    let crate::pipeline::spec::target::TargetKind::External(c) = &spec.targets[0].kind else {
        panic!("external")
    };
    let good = Task::new(&spec, &plan.points[0], c, 0).unwrap();
    assert!(good.check().is_ok());
    let refused = |t: Task| t.engine_config(None).unwrap_err().to_string();
    let e = refused(Task {
        rate: u64::MAX,
        ..good.clone()
    });
    assert!(
        e.contains("rate = 18446744073709551615: expected 0 to 10000000"),
        "{e}"
    );
    let at_most = Task {
        rate: crate::engine::config::MAX_RATE,
        ..good.clone()
    };
    assert!(at_most.check().is_ok());
    for engine in ["", "innodb; DROP DATABASE x", "in no db"] {
        let e = refused(Task {
            storage_engine: engine.into(),
            ..good.clone()
        });
        assert!(e.contains("storage_engine:"), "{engine}: {e}");
    }
}
