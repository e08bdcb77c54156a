//! The planner: a validated sweep → the ordered list of points to measure. Pure: no I/O.

use crate::engine::host::{HostKind, HOST_CONFIG, HOST_TARGET};
use crate::engine::workload::WorkloadKind;
use crate::pipeline::spec::{Filter, LoadDriver, Order, SweepSpec};
use std::collections::BTreeMap;

/// One measurement: a workload at a thread count on one target × config. With
/// `threads = "auto"` a plan holds one slot per series and repeat instead (`threads` 0, id
/// `…/auto/r<repeat>`), which the runner expands into the thread counts it chooses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Point {
    /// Stable id: `target/config/[driver/]workload/[c<clients>/]t<threads>/r<repeat>`, made
    /// from the other fields by `Point::named` and never read back.
    pub id: String,
    pub target: String,
    pub config: String,
    pub workload: WorkloadKind,
    pub threads: u32,
    /// 1-based.
    pub repeat: u32,
    pub driver: LoadDriver,
    /// Open-loop arrivals per second of an SLA search's point; 0 otherwise.
    pub rate: u64,
    pub slot: Slot,
    /// Client processes the threads are split over (`[run] clients`); ids name it when
    /// above 1 (`…/workload/c2/t8/r1`), so each client count is its own series.
    pub clients: u32,
    /// The id names the driver (a sweep that runs both).
    pub driver_in_id: bool,
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
        let mut blocks: Vec<Vec<Vec<Point>>> = Vec::new(); // block → repeat → points
        for t in &spec.targets {
            // A paired design measures every series in each of its cells' rounds: with
            // thread counts from cores, each at every target's counts (so series still pair
            // at equal threads); a sequential one runs each target's own.
            let counts = match &spec.run.auto {
                Some(_) => vec![AUTO],
                None if spec.run.design.paired() => spec.run.threads.clone(),
                None => spec.threads_of(&t.name).to_vec(),
            };
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
                        let point = |driver, threads, repeat, slot, clients| {
                            Point {
                                id: String::new(),
                                target: t.name.clone(),
                                config: c.name.clone(),
                                workload: w,
                                threads,
                                repeat,
                                driver,
                                rate: 0,
                                slot,
                                clients,
                                driver_in_id: spec.run.driver_in_ids(),
                            }
                            .named()
                        };
                        for (&n, &k) in counts
                            .iter()
                            .flat_map(|n| spec.run.clients.iter().map(move |k| (n, k)))
                        {
                            // Every client process needs a thread.
                            if !keep(&t.name, &c.name, w.name(), n) || (n != AUTO && n < k) {
                                continue;
                            }
                            for &d in &drivers {
                                let slot = if n == AUTO {
                                    Slot::AutoThreads
                                } else {
                                    Slot::Point
                                };
                                pts.push(point(d, n, r, slot, k));
                            }
                        }
                        // The SLA search of each native series, once its closed-loop points of
                        // repeat 1 have given it a peak.
                        let native = drivers.contains(&LoadDriver::Native);
                        if r == 1
                            && spec.run.sla.is_some()
                            && native
                            && keep(&t.name, &c.name, w.name(), AUTO)
                        {
                            for &k in &spec.run.clients {
                                pts.push(point(LoadDriver::Native, AUTO, 1, Slot::Sla, k));
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
    /// prepare per target — per data shape of its configs for a managed one (`spec::shape`).
    pub fn eta_s(&self, spec: &SweepSpec) -> u64 {
        let per_point = spec
            .run
            .warmup_s
            .saturating_add(spec.run.duration_s)
            .saturating_add(POINT_OVERHEAD_S);
        // A sized target's rows as estimated from the file (an external server's buffer pool
        // is not known: table_size's default stands in).
        let prepare: u64 = self
            .connections
            .keys()
            .map(|t| {
                let rows = crate::pipeline::spec::size::estimate(spec, t)
                    .map_or(spec.data.tables as u64 * spec.data.table_size as u64, |b| {
                        b / crate::pipeline::spec::size::ASSUMED_ROW_BYTES
                    });
                rows.div_ceil(PREPARE_ROWS_PER_S) * prepares_of(spec, t)
            })
            .sum();
        // A host test has no warmup and no server to set up.
        let host = self.host.len() as u64 * spec.run.duration_s;
        let servers = self.max_points(spec) - self.host.len() as u64;
        servers
            .saturating_mul(per_point)
            .saturating_add(prepare)
            .saturating_add(host)
    }
}

/// How many times target `t`'s data is prepared: once per data shape among the configs for a
/// managed target (each shape's tables made under it), once for any other.
pub fn prepares_of(spec: &SweepSpec, t: &str) -> u64 {
    let managed = spec
        .targets
        .iter()
        .any(|d| d.name == t && d.kind.is_managed());
    if managed {
        crate::pipeline::spec::shape::distinct(&spec.configs).len() as u64
    } else {
        1
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
            spec.targets
                .iter()
                .any(|x| x.name == t && x.kind.is_managed())
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
            threads,
            rate,
            slot: Slot::Point,
            ..self.clone()
        }
        .named()
    }

    /// The measurement at `threads` that an auto slot expands into.
    pub fn at(&self, threads: u32) -> Point {
        Point {
            threads,
            slot: Slot::Point,
            ..self.clone()
        }
        .named()
    }

    /// The same point of another series (`target/config`) in round `n` of a paired design
    /// (its repeat is the round).
    pub fn of_series(&self, target: &str, config: &str, n: u32) -> Point {
        Point {
            target: target.to_string(),
            config: config.to_string(),
            repeat: n,
            ..self.clone()
        }
        .named()
    }

    /// The point with its id made from its fields: `target/config/[driver/]workload/
    /// [c<clients>/]` then `t<threads>`, `auto` (a thread search's slot), `sla` (an SLA
    /// search's slot) or `rate<R>/t<threads>` (one of its steps), then `/r<repeat>`.
    pub fn named(mut self) -> Point {
        let at = match self.slot {
            Slot::AutoThreads => "auto".to_string(),
            Slot::Sla => "sla".to_string(),
            Slot::Point if self.rate > 0 => format!("rate{}/t{}", self.rate, self.threads),
            Slot::Point => format!("t{}", self.threads),
        };
        self.id = format!("{}{at}/r{}", self.head(), self.repeat);
        self
    }

    /// `target/config/[driver/]workload/[c<clients>/]`: what every id of the point's series
    /// starts with.
    fn head(&self) -> String {
        let driver = if self.driver_in_id {
            format!("{}/", self.driver)
        } else {
            String::new()
        };
        format!(
            "{}/{}/{driver}{}/{}",
            self.target,
            self.config,
            self.workload.name(),
            clients_part(self.clients),
        )
    }

    /// The series a point belongs to, from its fields: its id without the thread count and
    /// repeat (an SLA step's keeps its `rate<R>`: it is not a closed-loop point).
    pub fn series(&self) -> String {
        let mut s = self.head();
        if self.slot == Slot::Point && self.rate > 0 {
            s.push_str(&format!("rate{}", self.rate));
        }
        s.trim_end_matches('/').to_string()
    }
}

/// The arrival rate in an SLA step's id (`…/rate<R>/t<N>/r1`), None for others: how a
/// points.csv written before the `sla_step` column tells its steps.
pub fn sla_rate_of(id: &str) -> Option<u64> {
    id.rsplitn(3, '/')
        .last()?
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
#[path = "plan_tests.rs"]
mod tests;
