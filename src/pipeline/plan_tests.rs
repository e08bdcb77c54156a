//! Unit tests of the plan: points, slots, shards and host points from sweep files.
use super::*;
use std::collections::BTreeSet;
use std::path::Path;

fn spec(extra_run: &str, tail: &str) -> SweepSpec {
    // One repeat unless the test says otherwise (the default is 3).
    let extra_run = if extra_run.contains("repeats") {
        extra_run.to_string()
    } else {
        format!("repeats = 1\n{extra_run}")
    };
    let text = format!(
        "name = \"p\"\n[data]\ntables = 2\ntable_size = 400000\n[run]\nworkloads = [\"oltp_read_only\", \"oltp_point_select\"]\nthreads = [8, 1, 2]\nduration = \"10s\"\nwarmup = \"5s\"\n{extra_run}\n[[targets]]\nname = \"a\"\nurl = \"mysql://root@h\"\n[[targets]]\nname = \"b\"\nurl = \"mysql://root@h2\"\n{tail}"
    );
    SweepSpec::parse(Path::new("p.toml"), &text).unwrap()
}

#[test]
fn points_are_grouped_and_ordered() {
    let s = spec("", "");
    let p = Plan::build(&s, &[]);
    assert_eq!(p.points.len(), 2 * 2 * 3);
    let ids: Vec<&str> = p.points.iter().take(6).map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "a/default/oltp_read_only/t1/r1",
            "a/default/oltp_read_only/t2/r1",
            "a/default/oltp_read_only/t8/r1",
            "a/default/oltp_point_select/t1/r1",
            "a/default/oltp_point_select/t2/r1",
            "a/default/oltp_point_select/t8/r1",
        ]
    );
    assert!(p.points[6..].iter().all(|x| x.target == "b"));
    assert_eq!(p.connections.get("a"), Some(&8));
}

#[test]
fn ids_are_unique_and_stable() {
    let s = spec(
        "repeats = 3",
        "[[configs]]\nname = \"x\"\n[[configs]]\nname = \"y\"\n",
    );
    let p1 = Plan::build(&s, &[]);
    let p2 = Plan::build(&s, &[]);
    assert_eq!(p1.points, p2.points);
    let mut ids: Vec<&String> = p1.points.iter().map(|p| &p.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2 * 2 * 2 * 3 * 3);
}

#[test]
fn interleaving_alternates_blocks_per_repeat() {
    let s = spec("repeats = 2\norder = \"interleaved\"", "");
    let p = Plan::build(&s, &[]);
    let seq: Vec<(String, u32)> = p
        .points
        .iter()
        .map(|x| (x.target.clone(), x.repeat))
        .collect();
    let blocks: Vec<(String, u32)> = seq.chunks(6).map(|c| c[0].clone()).collect();
    assert_eq!(
        blocks,
        vec![
            ("a".into(), 1),
            ("b".into(), 1),
            ("a".into(), 2),
            ("b".into(), 2)
        ]
    );
}

#[test]
fn filters_narrow_the_plan() {
    let s = spec("", "[[exclude]]\nworkload = \"oltp_point_select\"\nthreads = [8]\n[[include]]\ntarget = \"a\"\n");
    let p = Plan::build(&s, &[]);
    assert_eq!(p.points.len(), 5);
    assert!(p.points.iter().all(|x| x.target == "a"));
    let only = Filter::parse_only("threads=1").unwrap();
    let p = Plan::build(&s, &[only]);
    assert_eq!(p.points.len(), 2);
    assert!(!p.connections.contains_key("b"));
}

#[test]
fn drivers_alternate_between_repeats() {
    let s = spec(
        "repeats = 2\ndrivers = [\"native\", \"sysbench\"]",
        "[[include]]\ntarget = \"a\"\nthreads = [1]\nworkload = \"oltp_read_only\"\n",
    );
    let p = Plan::build(&s, &[]);
    let ids: Vec<&str> = p.points.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "a/default/native/oltp_read_only/t1/r1",
            "a/default/sysbench/oltp_read_only/t1/r1",
            "a/default/sysbench/oltp_read_only/t1/r2",
            "a/default/native/oltp_read_only/t1/r2",
        ]
    );
}

#[test]
fn defaults_give_three_repeats_after_a_warmup() {
    let text = "name = \"p\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 4]\nduration = \"30s\"\n[[targets]]\nname = \"a\"\nurl = \"mysql://root@h\"\n";
    let s = SweepSpec::parse(Path::new("p.toml"), text).unwrap();
    assert_eq!((s.run.repeats, s.run.warmup_s), (3, 3));
    assert_eq!(Plan::build(&s, &[]).points.len(), 6);
    assert_eq!(crate::pipeline::spec::default_warmup_s(2), 1);
    assert_eq!(crate::pipeline::spec::default_warmup_s(600), 10);
}

#[test]
fn eta_counts_points_and_prepares() {
    let s = spec("", "");
    let p = Plan::build(&s, &[]);
    // 12 points × (5 + 10 + 2) s + 2 targets × 800k rows / 200k rows/s.
    assert_eq!(p.eta_s(&s), 12 * 17 + 2 * 4);
    assert_eq!(format_duration(3723), "1h 02m 03s");
    assert_eq!(format_duration(65), "1m 05s");
}

/// `threads = "auto"`: one slot per series and repeat, interleaved as fixed points are;
/// a slot expands into thread counts with the slot's id pattern; the ETA and the
/// connections budget take the search's limits.
#[test]
fn auto_threads_plan_one_slot_per_series_and_repeat() {
    let text = |threads: &str| {
        format!(
            "name = \"p\"\n[data]\ntables = 2\ntable_size = 400000\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = {threads}\nduration = \"10s\"\nwarmup = \"5s\"\nrepeats = 2\norder = \"interleaved\"\n[[targets]]\nname = \"a\"\nurl = \"mysql://root@h\"\n[[targets]]\nname = \"b\"\nurl = \"mysql://root@h2\"\n[[exclude]]\ntarget = \"b\"\nthreads = [256]\n"
        )
    };
    let s = SweepSpec::parse(Path::new("p.toml"), &text("\"auto\"")).unwrap();
    let p = Plan::build(&s, &[]);
    let ids: Vec<&str> = p.points.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a/default/oltp_read_only/auto/r1",
            "b/default/oltp_read_only/auto/r1",
            "a/default/oltp_read_only/auto/r2",
            "b/default/oltp_read_only/auto/r2",
        ]
    );
    assert!(p.points.iter().all(Point::is_slot));
    assert_eq!(p.points[0].at(12).id, "a/default/oltp_read_only/t12/r1");
    assert_eq!(p.points[0].series(), "a/default/oltp_read_only");
    assert_eq!(p.connections["a"], 1024);
    assert_eq!(p.max_points(&s), 4 * 14);
    assert_eq!(p.eta_s(&s), 4 * 14 * 17 + 2 * 4);
    let s = SweepSpec::parse(
        Path::new("p.toml"),
        &text("{ from = 2, to = 64, max_points = 6, p99_ms = 20 }"),
    )
    .unwrap();
    let a = s.run.auto.as_ref().unwrap();
    assert_eq!(
        (a.from, a.to, a.max_points, a.p99_ms),
        (2, 64, 6, Some(20.0))
    );
    assert_eq!(s.run.threads, [2, 4, 8, 16, 32, 64]);
    assert_eq!(Plan::build(&s, &[]).connections["b"], 64);
    for (bad, says) in [
        ("\"some\"", "neither a list"),
        ("{ from = 8, to = 4 }", "1 ≤ from ≤ to"),
        ("{ drop = 10 }", "fractions"),
        ("{ step = 2 }", "step"),
        ("[0, 2]", "not a thread count"),
    ] {
        let e = SweepSpec::parse(Path::new("p.toml"), &text(bad)).unwrap_err();
        assert!(e.message.contains(says), "{bad}: {e}");
    }
}

/// `rates = "auto"`: one SLA slot per native series, right after its closed-loop points
/// of repeat 1; it expands into `…/rate<R>/t<N>/r1` points; `rates` and `sla` go together.
#[test]
fn an_sla_search_follows_each_series_first_repeat() {
    let text = |run: &str| {
        format!(
            "name = \"p\"\n[run]\nworkloads = [\"oltp_read_only\", \"oltp_point_select\"]\nthreads = [1, 8]\nrepeats = 2\n{run}\n[[targets]]\nname = \"a\"\nurl = \"mysql://root@h\"\n"
        )
    };
    let s = SweepSpec::parse(
        Path::new("p.toml"),
        &text("rates = \"auto\"\nsla = { p99_ms = 10 }"),
    )
    .unwrap();
    let p = Plan::build(&s, &[]);
    let ids: Vec<&str> = p.points.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a/default/oltp_read_only/t1/r1",
            "a/default/oltp_read_only/t8/r1",
            "a/default/oltp_read_only/sla/r1",
            "a/default/oltp_point_select/t1/r1",
            "a/default/oltp_point_select/t8/r1",
            "a/default/oltp_point_select/sla/r1",
            "a/default/oltp_read_only/t1/r2",
            "a/default/oltp_read_only/t8/r2",
            "a/default/oltp_point_select/t1/r2",
            "a/default/oltp_point_select/t8/r2",
        ]
    );
    assert_eq!(p.points[2].slot, Slot::Sla);
    let step = p.points[2].at_rate(1200, 16);
    assert_eq!(step.id, "a/default/oltp_read_only/rate1200/t16/r1");
    assert_eq!(sla_rate_of(&step.id), Some(1200));
    assert_eq!(sla_rate_of("a/default/oltp_read_only/t16/r1"), None);
    // A series is made from fields; it is the id without its thread count and repeat.
    let clients = Point {
        clients: 4,
        driver_in_id: true,
        ..p.points[0].clone()
    }
    .named();
    for q in [&p.points[0], &p.points[2], &step, &clients, &clients.at(8)] {
        let cut = q.id.rsplitn(3, '/').last().unwrap();
        assert_eq!(q.series(), cut, "{}", q.id);
    }
    assert_eq!(step.series(), "a/default/oltp_read_only/rate1200");
    assert_eq!(clients.series(), "a/default/native/oltp_read_only/c4");
    // 8 closed-loop points and 2 searches of at most 8 rates; 16 connections (2 × 8).
    assert_eq!(p.max_points(&s), 8 + 2 * 8);
    assert_eq!(p.connections["a"], 16);
    for (run, says) in [
        ("rates = \"auto\"", "needs run.sla"),
        ("sla = { p99_ms = 10 }", "needs run.rates"),
        (
            "rates = \"fast\"\nsla = { p99_ms = 10 }",
            "expected \"auto\"",
        ),
        ("rates = \"auto\"\nsla = { p99_ms = 0 }", "above 0"),
        (
            "rates = \"auto\"\nrate = 100\nsla = { p99_ms = 10 }",
            "remove run.rate",
        ),
        ("rates = \"auto\"\nsla = { p95_ms = 10 }", "p95_ms"),
    ] {
        let e = SweepSpec::parse(Path::new("p.toml"), &text(run)).unwrap_err();
        assert!(e.message.contains(says), "{run}: {e}");
    }
}

/// `--shard I/N`: an external target's configs stay in one part (one database is never
/// loaded by two parts at once); a managed target's blocks are dealt one by one.
#[test]
fn shards_deal_whole_blocks_and_keep_an_external_target_together() {
    let text = "name = \"p\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 8]\nrepeats = 1\n[[targets]]\nname = \"x\"\nurl = \"mysql://root@h\"\n[[targets]]\nname = \"m\"\nserver = {}\n[[configs]]\nname = \"c1\"\n[[configs]]\nname = \"c2\"\n";
    let s = SweepSpec::parse(Path::new("p.toml"), text).unwrap();
    let part = |i: u32, n: u32| {
        let mut p = Plan::build(&s, &[]);
        let groups = p.shard(&s, i, n);
        let blocks: BTreeSet<String> = p
            .points
            .iter()
            .map(|p| format!("{}/{}", p.target, p.config))
            .collect();
        (
            groups,
            blocks.into_iter().collect::<Vec<_>>(),
            p.connections,
        )
    };
    let (groups, one, conns) = part(1, 2);
    assert_eq!(groups, 3);
    assert_eq!(one, ["m/c2", "x/c1", "x/c2"]);
    assert_eq!(conns.keys().collect::<Vec<_>>(), ["m", "x"]);
    let (_, two, conns) = part(2, 2);
    assert_eq!(two, ["m/c1"]);
    assert_eq!(conns.keys().collect::<Vec<_>>(), ["m"]);
    assert!(part(3, 3).1 == ["m/c2"]);
    assert_eq!(parse_shard("2/4"), Ok((2, 4)));
    for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
        assert!(parse_shard(bad).is_err(), "{bad}");
    }
}

#[test]
fn host_tests_are_planned_once_before_the_servers() {
    let s = spec("repeats = 2", "");
    let mut with = s.clone();
    with.run.host_tests = vec![HostKind::Cpu, HostKind::Memory];
    let p = Plan::build(&with, &[]);
    let ids: Vec<&str> = p.host.iter().map(|h| h.id.as_str()).collect();
    // Repeat by repeat, each test at every thread count, ascending.
    assert_eq!(
        ids[..7],
        [
            "host/-/cpu/t1/r1",
            "host/-/cpu/t2/r1",
            "host/-/cpu/t8/r1",
            "host/-/memory/t1/r1",
            "host/-/memory/t2/r1",
            "host/-/memory/t8/r1",
            "host/-/cpu/t1/r2",
        ]
    );
    assert_eq!(p.host.len(), 2 * 3 * 2);
    // The servers' points are what they were, and the host needs no connections.
    assert_eq!(p.points, Plan::build(&s, &[]).points);
    assert_eq!(p.max_points(&with), (12 + 24) as u64);
    assert!(!p.connections.contains_key("host"));
    // --only reaches host points by their names.
    let only = [Filter::parse_only("workload=cpu threads=2").unwrap()];
    let f = Plan::build(&with, &only);
    assert!(f.points.is_empty());
    assert_eq!(
        f.host.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["host/-/cpu/t2/r1", "host/-/cpu/t2/r2"]
    );
    // A sharded sweep measures the host in its first part only.
    let mut a = Plan::build(&with, &[]);
    a.shard(&with, 1, 2);
    let mut b = Plan::build(&with, &[]);
    b.shard(&with, 2, 2);
    assert_eq!((a.host.len(), b.host.len()), (12, 0));
}
