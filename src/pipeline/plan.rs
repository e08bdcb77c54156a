//! The planner: a validated sweep → the ordered list of points to measure. Pure: no I/O.

use crate::engine::host::{HostKind, HOST_CONFIG, HOST_TARGET};
use crate::engine::workload::WorkloadKind;
use crate::pipeline::spec::{Filter, Order, SweepSpec};
use std::collections::BTreeMap;

/// One measurement: a workload at a thread count on one target × config. With
/// `threads = "auto"` a plan holds one slot per series and repeat instead (`threads` 0, id
/// `…/auto/r<repeat>`), which the runner expands into the thread counts it chooses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Point {
    /// Stable id: `target/config/workload/t<threads>/r<repeat>`.
    pub id: String,
    pub target: String,
    pub config: String,
    pub workload: WorkloadKind,
    pub threads: u32,
    /// 1-based.
    pub repeat: u32,
    /// "native" or "sysbench".
    pub driver: String,
    /// Open-loop arrivals per second of an SLA search's point; 0 otherwise.
    pub rate: u64,
    pub slot: Slot,
    /// Client processes the threads are split over (`[run] clients`); ids name it when
    /// above 1 (`…/workload/c2/t8/r1`), so each client count is its own series.
    pub clients: u32,
}

/// What a plan entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Slot {
    /// One measurement.
    Point,
    /// `threads = "auto"`: the thread counts a search chooses (`…/auto/rR`).
    AutoThreads,
    /// `rates = "auto"`: the rates an SLA search chooses (`…/sla/r1`), after the series'
    /// closed-loop points of repeat 1.
    Sla,
}

/// A host test's measurement (`run.workloads` has cpu or memory): the machine's own curve,
/// no server, id `host/-/cpu/t4/r1`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostPoint {
    pub id: String,
    pub test: HostKind,
    pub threads: u32,
    /// 1-based.
    pub repeat: u32,
}

/// The ordered points of a sweep plus what the servers must provide.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Plan {
    /// The host tests' points, measured before any server's (on a machine no server loads).
    pub host: Vec<HostPoint>,
    pub points: Vec<Point>,
    /// Largest thread count per target (connections the target must accept).
    pub connections: BTreeMap<String, u32>,
}

/// Seconds a point costs beyond its warmup and duration (connect, prepare statements, write).
const POINT_OVERHEAD_S: u64 = 2;
/// Rows per second assumed for the ETA of a prepare (measured: docs/performance.md).
const PREPARE_ROWS_PER_S: u64 = 200_000;

impl Plan {
    /// Points grouped so each target × config runs as one block (a server starts once per
    /// block); inside a block workloads in file order, threads ascending. With
    /// `order = "interleaved"` repeat r of every block comes before repeat r + 1.
    pub fn build(spec: &SweepSpec, only: &[Filter]) -> Plan {
        let keep = |t: &str, c: &str, name: &str, n: u32| {
            if n == AUTO {
                let m = |f: &Filter, ex: bool| f.matches_series(t, c, name, ex);
                return (spec.include.is_empty() || spec.include.iter().any(|f| m(f, false)))
                    && !spec.exclude.iter().any(|f| m(f, true))
                    && only.iter().all(|f| m(f, false));
            }
            (spec.include.is_empty() || spec.include.iter().any(|f| f.matches(t, c, name, n)))
                && !spec.exclude.iter().any(|f| f.matches(t, c, name, n))
                && only.iter().all(|f| f.matches(t, c, name, n))
        };
        let counts = match &spec.run.auto {
            Some(_) => vec![AUTO],
            None => spec.run.threads.clone(),
        };
        let mut blocks: Vec<Vec<Vec<Point>>> = Vec::new(); // block → repeat → points
        for t in &spec.targets {
            for c in &spec.configs {
                let mut per_repeat = Vec::new();
                for r in 1..=spec.run.repeats {
                    let mut pts = Vec::new();
                    // Drivers alternate between repeats (A-B, B-A) so drift hits both alike.
                    let mut drivers = spec.run.drivers.clone();
                    if r % 2 == 0 {
                        drivers.reverse();
                    }
                    for &w in &spec.run.workloads {
                        for (&n, &k) in counts
                            .iter()
                            .flat_map(|n| spec.run.clients.iter().map(move |k| (n, k)))
                        {
                            // Every client process needs a thread.
                            if !keep(&t.name, &c.name, w.name(), n) || (n != AUTO && n < k) {
                                continue;
                            }
                            let cl = clients_part(k);
                            for d in &drivers {
                                let driver = if spec.run.driver_in_ids() {
                                    format!("{d}/")
                                } else {
                                    String::new()
                                };
                                let at = if n == AUTO {
                                    "auto".to_string()
                                } else {
                                    format!("t{n}")
                                };
                                pts.push(Point {
                                    id: format!(
                                        "{}/{}/{driver}{}/{cl}{at}/r{r}",
                                        t.name,
                                        c.name,
                                        w.name()
                                    ),
                                    target: t.name.clone(),
                                    config: c.name.clone(),
                                    workload: w,
                                    threads: n,
                                    repeat: r,
                                    driver: d.clone(),
                                    rate: 0,
                                    slot: if n == AUTO {
                                        Slot::AutoThreads
                                    } else {
                                        Slot::Point
                                    },
                                    clients: k,
                                });
                            }
                        }
                        // The SLA search of each native series, once its closed-loop points of
                        // repeat 1 have given it a peak.
                        let native = drivers.iter().any(|d| d == "native");
                        if r == 1
                            && spec.run.sla.is_some()
                            && native
                            && keep(&t.name, &c.name, w.name(), AUTO)
                        {
                            let driver = if spec.run.driver_in_ids() {
                                "native/"
                            } else {
                                ""
                            };
                            for &k in &spec.run.clients {
                                let cl = clients_part(k);
                                pts.push(Point {
                                    id: format!(
                                        "{}/{}/{driver}{}/{cl}sla/r1",
                                        t.name,
                                        c.name,
                                        w.name()
                                    ),
                                    target: t.name.clone(),
                                    config: c.name.clone(),
                                    workload: w,
                                    threads: AUTO,
                                    repeat: 1,
                                    driver: "native".into(),
                                    rate: 0,
                                    slot: Slot::Sla,
                                    clients: k,
                                });
                            }
                        }
                    }
                    per_repeat.push(pts);
                }
                blocks.push(per_repeat);
            }
        }
        let mut points = Vec::new();
        match spec.run.order {
            Order::Sequential => {
                for b in blocks {
                    points.extend(b.into_iter().flatten());
                }
            }
            Order::Interleaved => {
                for r in 0..spec.run.repeats as usize {
                    for b in &blocks {
                        points.extend(b[r].iter().cloned());
                    }
                }
            }
        }
        let mut connections = BTreeMap::new();
        for p in &points {
            let most = match (p.slot, &spec.run.auto, &spec.run.sla) {
                (Slot::AutoThreads, Some(a), _) => a.to,
                // Twice the series' peak by default: twice its largest possible thread count.
                (Slot::Sla, auto, Some(s)) => s.threads.unwrap_or_else(|| {
                    let top = auto
                        .as_ref()
                        .map_or(spec.run.threads.last().copied().unwrap_or(1), |a| a.to);
                    (top * 2).max(4)
                }),
                _ => p.threads,
            };
            let e = connections.entry(p.target.clone()).or_insert(0);
            *e = (*e).max(most);
        }
        // Repeat by repeat, as an interleaved sweep's blocks, so the machine's drift hits
        // every count alike.
        let mut host = Vec::new();
        for r in 1..=spec.run.repeats {
            for &test in &spec.run.host_tests {
                for &n in &spec.run.threads {
                    if keep(HOST_TARGET, HOST_CONFIG, test.name(), n) {
                        host.push(HostPoint {
                            id: format!("{HOST_TARGET}/{HOST_CONFIG}/{}/t{n}/r{r}", test.name()),
                            test,
                            threads: n,
                            repeat: r,
                        });
                    }
                }
            }
        }
        Plan {
            host,
            points,
            connections,
        }
    }

    /// Points the plan may run: its fixed points, at most `max_points` per auto slot and
    /// `max_steps` per SLA search.
    pub fn max_points(&self, spec: &SweepSpec) -> u64 {
        self.host.len() as u64 + self.points.iter().map(|p| p.max_points(spec)).sum::<u64>()
    }

    /// Entries of the plan: host points and server points (an auto slot counted once).
    pub fn len(&self) -> usize {
        self.host.len() + self.points.len()
    }

    /// Nothing to measure: no host test and no server point.
    pub fn is_empty(&self) -> bool {
        self.host.is_empty() && self.points.is_empty()
    }

    /// Estimated seconds for the whole plan (auto slots at their most), including one
    /// prepare per target.
    pub fn eta_s(&self, spec: &SweepSpec) -> u64 {
        let per_point = spec
            .run
            .warmup_s
            .saturating_add(spec.run.duration_s)
            .saturating_add(POINT_OVERHEAD_S);
        let rows = spec.data.tables as u64 * spec.data.table_size as u64;
        let prepare = rows.div_ceil(PREPARE_ROWS_PER_S) * self.connections.len() as u64;
        // A host test has no warmup and no server to set up.
        let host = self.host.len() as u64 * spec.run.duration_s;
        let servers = self.max_points(spec) - self.host.len() as u64;
        servers
            .saturating_mul(per_point)
            .saturating_add(prepare)
            .saturating_add(host)
    }
}

/// The part of a point id that names its client processes: `c<K>/` above one, else nothing.
fn clients_part(k: u32) -> String {
    if k > 1 {
        format!("c{k}/")
    } else {
        String::new()
    }
}

/// `--shard I/N`: 1 ≤ I ≤ N.
pub fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{s}': expected I/N with 1 ≤ I ≤ N, e.g. 1/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

impl Plan {
    /// Keeps the `i`-th (1-based) of `n` disjoint parts: whole groups, dealt round-robin in
    /// plan order. A managed target × config block is a group (each part starts its own
    /// server); an external target is one group with all its configs, so two parts never load
    /// one database at once. Returns how many groups there were.
    pub fn shard(&mut self, spec: &SweepSpec, i: u32, n: u32) -> usize {
        let managed = |t: &str| {
            spec.targets.iter().any(|x| {
                x.name == t
                    && matches!(
                        x.kind,
                        crate::pipeline::spec::target::TargetKind::Managed(_)
                    )
            })
        };
        let group = |p: &Point| {
            if managed(&p.target) {
                format!("{}/{}", p.target, p.config)
            } else {
                p.target.clone()
            }
        };
        let mut order: Vec<String> = Vec::new();
        for p in &self.points {
            let g = group(p);
            if !order.contains(&g) {
                order.push(g);
            }
        }
        // The host's curve is measured once, by the first part.
        if i != 1 {
            self.host.clear();
        }
        self.points.retain(|p| {
            let k = order.iter().position(|g| *g == group(p)).unwrap_or(0);
            k as u32 % n == i - 1
        });
        let kept: std::collections::BTreeSet<&str> =
            self.points.iter().map(|p| p.target.as_str()).collect();
        self.connections.retain(|t, _| kept.contains(t.as_str()));
        order.len()
    }
}

/// The `threads` of an auto slot.
pub const AUTO: u32 = 0;

impl Point {
    /// A slot (of `threads = "auto"` or an SLA search), not a measurement.
    pub fn is_slot(&self) -> bool {
        self.slot != Slot::Point
    }

    /// How many measurements this entry may become.
    pub fn max_points(&self, spec: &SweepSpec) -> u64 {
        match self.slot {
            Slot::Point => 1,
            Slot::AutoThreads => spec.run.auto.as_ref().map_or(1, |a| a.max_points as u64),
            Slot::Sla => spec.run.sla.as_ref().map_or(1, |s| s.max_steps as u64),
        }
    }

    /// The open-loop measurement at `rate` arrivals/s over `threads` connections that an SLA
    /// slot expands into: `…/rate<R>/t<threads>/r1`.
    pub fn at_rate(&self, rate: u64, threads: u32) -> Point {
        Point {
            id: self
                .id
                .replace("/sla/", &format!("/rate{rate}/t{threads}/")),
            threads,
            rate,
            slot: Slot::Point,
            ..self.clone()
        }
    }

    /// The measurement at `threads` that an auto slot expands into.
    pub fn at(&self, threads: u32) -> Point {
        Point {
            id: self.id.replace("/auto/", &format!("/t{threads}/")),
            threads,
            slot: Slot::Point,
            ..self.clone()
        }
    }

    /// The series a point belongs to: its id without the thread count and repeat.
    pub fn series(&self) -> String {
        series_of(&self.id).to_string()
    }
}

/// The series of a point id (`target/config/[driver/]workload`): the id without its thread
/// count and repeat (an SLA point's keeps its `rate<R>` part: it is not a closed-loop point).
pub fn series_of(id: &str) -> &str {
    id.rsplitn(3, '/').last().unwrap_or(id)
}

/// The arrival rate of an SLA search's point id (`…/rate<R>/t<N>/r1`), None for others.
pub fn sla_rate_of(id: &str) -> Option<u64> {
    series_of(id)
        .rsplit('/')
        .next()?
        .strip_prefix("rate")?
        .parse()
        .ok()
}

/// `1h 02m 03s` style.
pub fn format_duration(s: u64) -> String {
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m {sec:02}s"),
        (h, m, sec) => format!("{h}h {m:02}m {sec:02}s"),
    }
}

#[cfg(test)]
mod tests {
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
}
