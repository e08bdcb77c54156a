//! Why: the server's cost per transaction beside throughput (status.csv), as a table per
//! workload with each series' ratio to the baseline, and for every decided change the
//! counters per transaction that moved with it, each with its own interval.

use super::{series_of, ReportModel};
use crate::pipeline::judge::verdict::t_quantile;
use crate::pipeline::results::cost::CostRow;
use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::{BTreeMap, HashMap};

/// The efficiency table's columns: a label and how to read it from one point's counters
/// (per transaction). The first source a point has is used: /proc for a managed server, the
/// server's own counters otherwise.
/// A column: its label, where to read it (source, counter; `a+b` sums two) in order of
/// preference, and the unit it is divided by.
type Column = (&'static str, &'static [(&'static str, &'static str)], f64);

const COLUMNS: &[Column] = &[
    ("CPU µs", &[("proc", "cpu_us")], 1.0),
    (
        "ctx switches",
        &[("proc", "ctx_switches_voluntary+ctx_switches_involuntary")],
        1.0,
    ),
    (
        "KB read",
        &[("proc", "io_read_bytes"), ("status", "Innodb_data_read")],
        1024.0,
    ),
    (
        "KB written",
        &[
            ("proc", "io_write_bytes"),
            ("status", "Innodb_data_written"),
        ],
        1024.0,
    ),
    (
        "buffer-pool reads",
        &[("status", "Innodb_buffer_pool_reads")],
        1.0,
    ),
    ("InnoDB fsyncs", &[("status", "Innodb_data_fsyncs")], 1.0),
];

pub const METHOD: &str = "Each point's cost is what the server's counters (SHOW GLOBAL STATUS, \
read on a connection of its own just before and after the measured window) and, for a managed \
server, its process (/proc: CPU, context switches of all its threads, bytes it made the storage \
read and write) counted over the window, divided by the transactions measured in it; a cell is \
the median over its repeats or slices. A counter \"moved\" with a decided change when its own \
interval (95 %, Bonferroni over the counters compared at that point; per round for a paired \
run, Welch over repeats otherwise) excludes no change; counters are ranked by the least change \
their interval allows.";

#[derive(Debug, Clone, serde::Serialize)]
pub struct EffCell {
    pub value: f64,
    /// The value over the baseline's at the same thread count.
    pub ratio: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EffRow {
    pub threads: u32,
    pub series: String,
    /// One per column; None where the point has no such counter.
    pub cells: Vec<Option<EffCell>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EffSection {
    pub workload: String,
    pub columns: Vec<&'static str>,
    pub rows: Vec<EffRow>,
    /// Server CPU per transaction against threads, a line per series (empty without CPU).
    pub cpu_svg: String,
}

/// A counter that moved with a decided change.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Moved {
    pub counter: String,
    pub base_per_txn: f64,
    pub cand_per_txn: f64,
    /// Relative change, percent, with its interval; None when either side counted zero in
    /// some window (then the difference per transaction, `diff_*`, is judged).
    pub change_pct: Option<f64>,
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
    pub diff_lo: f64,
    pub diff_hi: f64,
    /// How far the interval stays from no change (log scale), for the ranking.
    #[serde(skip)]
    rank: f64,
    /// As the report says it (`text`).
    pub line: String,
}

impl Moved {
    pub fn text(&self) -> String {
        let said = self.figures();
        match self.counter.as_str() {
            // No server counts the binary log's fsyncs; under sync_binlog = 1 this does.
            "Binlog_group_commits" => {
                format!("{said} (a binary-log fsync each where sync_binlog = 1)")
            }
            _ => said,
        }
    }

    fn figures(&self) -> String {
        match (self.change_pct, self.lo_pct, self.hi_pct) {
            (Some(c), Some(lo), Some(hi)) => format!(
                "{}/txn {:+.1} % [{:+.1}, {:+.1}] ({} → {})",
                self.counter,
                c,
                lo,
                hi,
                short(self.base_per_txn),
                short(self.cand_per_txn)
            ),
            _ => format!(
                "{}/txn {} → {} (difference [{}, {}])",
                self.counter,
                short(self.base_per_txn),
                short(self.cand_per_txn),
                short(self.diff_lo),
                short(self.diff_hi)
            ),
        }
    }
}

/// Why one decided change happened, as far as the counters say.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Why {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    pub verdict: crate::pipeline::judge::verdict::Verdict,
    /// Counters compared (those both series have in every window of the point).
    pub compared: usize,
    /// The counters that moved, most first (at most `SHOWN`).
    pub moved: Vec<Moved>,
    /// One line: "+23 % CPU µs/txn [15, 31], …" or "no counter moved".
    pub line: String,
    /// The differential flame graph of the change, relative to the run directory, where
    /// both points were profiled (report/profile.rs).
    pub flame: Option<String>,
    /// Where the server's on-CPU time moved between the two profiled windows, most first
    /// ("MYSQL_BIN_LOG::trx_group_commit_leader 0 → 20 %"); empty without profiles.
    pub frames: Vec<String>,
}

const SHOWN: usize = 5;
/// The least relative change of a counter per transaction that is named, as a fraction.
const MIN_MOVE: f64 = 0.01;
/// The least difference per transaction named for a counter that is zero in some window.
const MIN_DIFF: f64 = 0.0005;

/// Counters that name a cause (a read the buffer pool missed, an fsync, a temporary table on
/// disk, a lock wait) rather than a symptom (bytes, context switches, CPU): those that moved
/// come first.
const CAUSES: &[&str] = &[
    "Innodb_buffer_pool_reads",
    "Innodb_data_fsyncs",
    "Innodb_os_log_fsyncs",
    "Binlog_group_commits",
    "Created_tmp_disk_tables",
    "Sort_merge_passes",
    "Innodb_row_lock_waits",
    "Innodb_log_waits",
    "Select_full_join",
    "Select_scan",
    "Rocksdb_block_cache_miss",
    "Rocksdb_wal_synced",
    "Rocksdb_row_lock_deadlocks",
    "wsrep_local_cert_failures",
    "wsrep_local_bf_aborts",
    "wsrep_flow_control_paused_ns",
];

fn short(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A point's counters per transaction by (source, counter).
pub type PerTxn = BTreeMap<(String, String), f64>;

/// Each point's counters per transaction, by point id.
pub fn per_point(rows: &[CostRow]) -> HashMap<String, PerTxn> {
    let mut out: HashMap<String, PerTxn> = HashMap::new();
    for r in rows {
        if let Some(v) = r.per_txn {
            out.entry(r.point_id.clone())
                .or_default()
                .insert((r.source.clone(), r.counter.clone()), v);
        }
    }
    out
}

fn read(p: &PerTxn, sources: &[(&str, &str)], unit: f64) -> Option<f64> {
    sources.iter().find_map(|(src, names)| {
        let mut sum = 0.0;
        for n in names.split('+') {
            sum += p.get(&(src.to_string(), n.to_string()))?;
        }
        Some(sum / unit)
    })
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The ok records with counters, by (series, workload, threads).
fn groups<'a>(records: &'a [PointRecord], costs: &HashMap<String, PerTxn>) -> Groups<'a> {
    let mut g: BTreeMap<(String, String, u32), Vec<&PointRecord>> = BTreeMap::new();
    for r in records {
        if r.status == PointStatus::Ok && costs.contains_key(r.point_id.as_str()) {
            g.entry((series_of(r), r.workload.clone(), r.threads))
                .or_default()
                .push(r);
        }
    }
    g
}

/// The ok records with counters, by (series, workload, threads).
type Groups<'a> = BTreeMap<(String, String, u32), Vec<&'a PointRecord>>;

/// Adds the efficiency tables and the reasons of every decided change to `m`.
pub fn add(m: &mut ReportModel, records: &[PointRecord], rows: &[CostRow]) {
    if rows.is_empty() {
        return;
    }
    let costs = per_point(rows);
    let g = groups(records, &costs);
    m.efficiency = efficiency(m, &g, &costs);
    m.why = whys(m, &g, &costs);
}

/// Per workload: each series' cost per transaction at each thread count beside the
/// baseline's, and the chart of server CPU per transaction.
fn efficiency(m: &ReportModel, g: &Groups<'_>, costs: &HashMap<String, PerTxn>) -> Vec<EffSection> {
    let mut sections = Vec::new();
    for sec in &m.workloads {
        let mut out = EffSection {
            workload: sec.workload.clone(),
            columns: COLUMNS.iter().map(|c| c.0).collect(),
            rows: Vec::new(),
            cpu_svg: String::new(),
        };
        for row in &sec.rows {
            let value = |series: &str, col: usize| {
                let recs = g.get(&(series.to_string(), sec.workload.clone(), row.threads))?;
                let (_, src, unit) = COLUMNS[col];
                median(
                    recs.iter()
                        .filter_map(|r| read(&costs[r.point_id.as_str()], src, unit))
                        .collect(),
                )
            };
            for s in &m.series {
                let cells: Vec<Option<EffCell>> = (0..COLUMNS.len())
                    .map(|c| {
                        let v = value(s, c)?;
                        let base = value(&m.baseline, c);
                        Some(EffCell {
                            value: v,
                            ratio: base.filter(|b| *b > 0.0 && *s != m.baseline).map(|b| v / b),
                        })
                    })
                    .collect();
                if cells.iter().any(Option::is_some) {
                    out.rows.push(EffRow {
                        threads: row.threads,
                        series: s.clone(),
                        cells,
                    });
                }
            }
        }
        let lines: Vec<super::chart::Line> = m
            .series
            .iter()
            .map(|s| {
                let pts = out
                    .rows
                    .iter()
                    .filter(|r| r.series == *s)
                    .filter_map(|r| Some((r.threads, r.cells[0].as_ref()?.value)))
                    .collect();
                super::chart::Line::plain(s, pts)
            })
            .filter(|l| !l.points.is_empty())
            .collect();
        if !lines.is_empty() {
            out.cpu_svg = super::chart::svg(
                &format!("{}: server CPU per transaction", sec.workload),
                "CPU µs per transaction",
                &lines,
            );
        }
        if !out.rows.is_empty() {
            sections.push(out);
        }
    }
    sections
}

/// Why each decided change happened, as far as the counters say: those that moved between
/// the baseline's windows and the candidate's (paired by round in a paired run).
fn whys(m: &ReportModel, g: &Groups<'_>, costs: &HashMap<String, PerTxn>) -> Vec<Why> {
    let paired = m.paired.is_some();
    let mut whys = Vec::new();
    for sec in &m.workloads {
        for row in &sec.rows {
            for (i, cell) in row.cells.iter().enumerate().skip(1) {
                use crate::pipeline::judge::verdict::Verdict as V;
                let Some(c) = cell else { continue };
                let Some(verdict) = c
                    .verdict
                    .filter(|v| matches!(v, V::Regressed | V::Improved | V::Slower | V::Faster))
                else {
                    continue;
                };
                let key = |s: &str| (s.to_string(), sec.workload.clone(), row.threads);
                let (Some(base), Some(cand)) =
                    (g.get(&key(&m.baseline)), g.get(&key(&m.series[i])))
                else {
                    continue;
                };
                // Two engines: a counter of one engine reads 0 on the other's tables, which
                // is no reason; only what both sides' engines count is compared.
                // Copies are made only then: the same engine reads every counter as it is.
                let foreign = foreign_counters(&m.engines, &m.baseline, &m.series[i]);
                let kept: HashMap<&str, PerTxn> = if foreign.is_empty() {
                    HashMap::new()
                } else {
                    base.iter()
                        .chain(cand.iter())
                        .map(|r| {
                            let mut p = costs[r.point_id.as_str()].clone();
                            p.retain(|(_, n), _| !foreign.iter().any(|f| n.starts_with(f)));
                            (r.point_id.as_str(), p)
                        })
                        .collect()
                };
                let sides = |recs: &[&PointRecord]| -> Vec<(u32, &PerTxn)> {
                    recs.iter()
                        .map(|r| {
                            let id = r.point_id.as_str();
                            (r.repeat, kept.get(id).unwrap_or(&costs[id]))
                        })
                        .collect()
                };
                let (compared, moved) = moved(&sides(base), &sides(cand), paired);
                let mut line = if moved.is_empty() {
                    format!("no counter of {compared} moved beyond its noise")
                } else {
                    moved.iter().map(Moved::text).collect::<Vec<_>>().join("; ")
                };
                let (kb, kc) = (m.classes.get(&m.baseline), m.classes.get(&m.series[i]));
                if kb != kc {
                    let whole = "the whole host".to_string();
                    line = format!(
                        "in another instance class ({} → {}): the change is the class's CPU quota and memory first, and the server's counters per transaction are context: {line}",
                        kb.unwrap_or(&whole),
                        kc.unwrap_or(&whole)
                    );
                }
                if let Some(proxy) = through_proxy(m, &m.baseline, &m.series[i]) {
                    line = format!("reached through {proxy}: the change is the proxy's (see Proxy cost), and the server's counters per transaction are context, not its cause: {line}");
                }
                whys.push(Why {
                    series: m.series[i].clone(),
                    workload: sec.workload.clone(),
                    threads: row.threads,
                    verdict,
                    compared,
                    moved,
                    line,
                    flame: None,
                    frames: Vec::new(),
                });
            }
        }
    }
    whys
}

/// The proxy target when one of two series reaches the other's server through it (a managed
/// proxy, or `same_server_as`), from the report's proxy pairs.
fn through_proxy(m: &ReportModel, a: &str, b: &str) -> Option<String> {
    let target = |s: &str| s.split('/').next().unwrap_or(s).to_string();
    let (a, b) = (target(a), target(b));
    m.proxy_cost
        .iter()
        .find(|r| (r.proxy == b && r.direct == a) || (r.proxy == a && r.direct == b))
        .map(|r| r.proxy.clone())
}

/// The counter prefixes of an engine only one of two series' tables use (`Innodb_` when one
/// side is ROCKSDB), which `whys` leaves out; none when the engines agree or are unknown.
fn foreign_counters(engines: &BTreeMap<String, String>, a: &str, b: &str) -> Vec<&'static str> {
    let (Some(ea), Some(eb)) = (engines.get(a), engines.get(b)) else {
        return Vec::new();
    };
    if ea.eq_ignore_ascii_case(eb) {
        return Vec::new();
    }
    [("innodb", "Innodb_"), ("rocksdb", "Rocksdb_")]
        .into_iter()
        .filter(|(e, _)| !(ea.eq_ignore_ascii_case(e) && eb.eq_ignore_ascii_case(e)))
        .map(|(_, prefix)| prefix)
        .collect()
}

/// The counters that moved between two sides' windows (paired by round when `paired`): how
/// many were compared, and those whose interval excludes no change, most first.
pub fn moved(
    base: &[(u32, &PerTxn)],
    cand: &[(u32, &PerTxn)],
    paired: bool,
) -> (usize, Vec<Moved>) {
    // Counters every window of both sides has, levels and always-zero ones left out.
    let mut names: Vec<&(String, String)> = base
        .first()
        .map(|(_, p)| p.keys().collect())
        .unwrap_or_default();
    names.retain(|k| base.iter().chain(cand).all(|(_, p)| p.contains_key(*k)));
    names.retain(|k| base.iter().chain(cand).any(|(_, p)| p[*k] > 0.0));
    let k = names.len().max(1) as f64;
    let alpha = 0.05 / k;
    let mut out = Vec::new();
    for name in &names {
        let b: Vec<(u32, f64)> = base.iter().map(|(n, p)| (*n, p[*name])).collect();
        let c: Vec<(u32, f64)> = cand.iter().map(|(n, p)| (*n, p[*name])).collect();
        if let Some(m) = judge_counter(&label(&name.0, &name.1), &b, &c, paired, alpha) {
            out.push(m);
        }
    }
    // Causes first, then symptoms; within each, what moved most surely.
    let cause = |m: &Moved| {
        CAUSES
            .iter()
            .position(|c| *c == m.counter)
            .unwrap_or(CAUSES.len())
    };
    out.sort_by(|a, b| {
        let (ca, cb) = (cause(a) < CAUSES.len(), cause(b) < CAUSES.len());
        cb.cmp(&ca)
            .then(b.rank.total_cmp(&a.rank))
            .then(cause(a).cmp(&cause(b)))
    });
    out.truncate(SHOWN);
    for m in &mut out {
        m.line = m.text();
    }
    (names.len(), out)
}

/// The counters per transaction that a neighbour moves as much as the server does: its CPU
/// per transaction (a starved CPU's caches and frequency; lock holders descheduled) and its
/// context switches (run-queue waits).
const WITH_HOST_LOAD: &[&str] = &[
    "server CPU µs",
    "voluntary context switches",
    "involuntary context switches",
];

/// Where the two sides' host loads differ (`HostLoad::noticeable`): the counters that move
/// with a neighbour go last and say so, with the loads beside them — never the first reason
/// for a change the host may have made.
pub fn beside_host_load(moved: &mut Vec<Moved>, h: &crate::pipeline::judge::host_load::HostLoad) {
    let (Some(b), Some(c), Some(d)) = (h.base_pct, h.cand_pct, h.diff_pp()) else {
        return;
    };
    let (host, rest): (Vec<Moved>, Vec<Moved>) = std::mem::take(moved)
        .into_iter()
        .partition(|m| WITH_HOST_LOAD.contains(&m.counter.as_str()));
    *moved = rest;
    for mut m in host {
        m.line = format!(
            "{}, while other processes took {:.0} points {} of the host's CPU ({b:.0} % → {c:.0} %): not attributed to the server",
            m.line,
            d.abs(),
            if d > 0.0 { "more" } else { "less" }
        );
        moved.push(m);
    }
}

/// A counter as the report names it: the server's status counters by their own names, the
/// process's in words.
fn label(source: &str, counter: &str) -> String {
    match (source, counter) {
        ("proc", "cpu_us") => "server CPU µs".into(),
        ("proc", "ctx_switches_voluntary") => "voluntary context switches".into(),
        ("proc", "ctx_switches_involuntary") => "involuntary context switches".into(),
        ("proc", "io_read_bytes") => "bytes read from storage".into(),
        ("proc", "io_write_bytes") => "bytes written to storage".into(),
        (_, c) => c.to_string(),
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn var(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len().saturating_sub(1)).max(1) as f64
}

/// An interval (mean difference, half-width) for b → c on the scale `f`: paired by round
/// where both sides have it, Welch–Satterthwaite otherwise. None with too few windows.
fn interval(
    b: &[(u32, f64)],
    c: &[(u32, f64)],
    paired: bool,
    alpha: f64,
    f: impl Fn(f64) -> f64,
) -> Option<(f64, f64)> {
    if paired {
        let d: Vec<f64> = c
            .iter()
            .filter_map(|(n, y)| b.iter().find(|(m, _)| m == n).map(|(_, x)| f(*y) - f(*x)))
            .collect();
        if d.len() < 2 {
            return None;
        }
        let se = (var(&d) / d.len() as f64).sqrt();
        return Some((
            mean(&d),
            t_quantile(1.0 - alpha / 2.0, d.len() as f64 - 1.0) * se,
        ));
    }
    let x: Vec<f64> = b.iter().map(|p| f(p.1)).collect();
    let y: Vec<f64> = c.iter().map(|p| f(p.1)).collect();
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let (vx, vy) = (var(&x) / x.len() as f64, var(&y) / y.len() as f64);
    let se2 = vx + vy;
    let df = if se2 > 0.0 {
        se2.powi(2) / (vx.powi(2) / (x.len() as f64 - 1.0) + vy.powi(2) / (y.len() as f64 - 1.0))
    } else {
        (x.len() + y.len() - 2) as f64
    };
    Some((
        mean(&y) - mean(&x),
        t_quantile(1.0 - alpha / 2.0, df) * se2.sqrt(),
    ))
}

fn judge_counter(
    name: &str,
    b: &[(u32, f64)],
    c: &[(u32, f64)],
    paired: bool,
    alpha: f64,
) -> Option<Moved> {
    let (mb, mc) = (
        mean(&b.iter().map(|p| p.1).collect::<Vec<_>>()),
        mean(&c.iter().map(|p| p.1).collect::<Vec<_>>()),
    );
    let (dlo, dhi) = {
        let (d, h) = interval(b, c, paired, alpha, |x| x)?;
        (d - h, d + h)
    };
    let positive = b.iter().chain(c).all(|p| p.1 > 0.0);
    let mut m = Moved {
        counter: name.to_string(),
        base_per_txn: mb,
        cand_per_txn: mc,
        change_pct: None,
        lo_pct: None,
        hi_pct: None,
        diff_lo: dlo,
        diff_hi: dhi,
        rank: 0.0,
        line: String::new(),
    };
    if positive {
        let (d, h) = interval(b, c, paired, alpha, f64::ln)?;
        // Moved, and by enough to matter: a counter that surely moved by less than 1 %
        // (Bytes_received of the same statements) explains no change of throughput.
        if (d - h) * (d + h) <= 0.0 || (d - h).abs().min((d + h).abs()) < MIN_MOVE.ln_1p() {
            return None;
        }
        let pct = |x: f64| (x.exp() - 1.0) * 100.0;
        (m.change_pct, m.lo_pct, m.hi_pct) = (Some(pct(d)), Some(pct(d - h)), Some(pct(d + h)));
        m.rank = (d - h).abs().min((d + h).abs());
    } else {
        // Sure to differ by at least what the report can print (0.001 per transaction):
        // a lock wait in one transaction of ten thousand is not a reason.
        if dlo * dhi <= 0.0 || dlo.abs().min(dhi.abs()) < MIN_DIFF {
            return None;
        }
        // From (or to) zero: as far as a doubling, at least, when the interval is clear.
        m.rank = std::f64::consts::LN_2;
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows of one side: (round, per-transaction counters) with a known ratio and noise.
    fn side(seed: u64, rounds: u32, cpu: f64, fsync: f64, noise: f64) -> Vec<(u32, PerTxn)> {
        let mut x = seed;
        let mut rnd = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
        };
        (1..=rounds)
            .map(|n| {
                let mut p = PerTxn::new();
                let mut put = |s: &str, c: &str, v: f64| {
                    p.insert((s.to_string(), c.to_string()), v);
                };
                put("proc", "cpu_us", cpu * (1.0 + noise * rnd()));
                put(
                    "status",
                    "Innodb_data_fsyncs",
                    fsync * (1.0 + noise * rnd()),
                );
                put("status", "Innodb_rows_read", 18.0 * (1.0 + noise * rnd()));
                put("status", "Created_tmp_disk_tables", 0.0);
                (n, p)
            })
            .collect()
    }

    fn refs(v: &[(u32, PerTxn)]) -> Vec<(u32, &PerTxn)> {
        v.iter().map(|(n, p)| (*n, p)).collect()
    }

    #[test]
    fn a_doubled_counter_moves_first_and_an_a_a_pair_moves_nothing() {
        let mut aa_moved = 0;
        for seed in 0..40u64 {
            let a = side(seed, 12, 100.0, 1.0, 0.05);
            let b = side(seed + 1000, 12, 100.0, 1.0, 0.05);
            let (n, m) = moved(&refs(&a), &refs(&b), seed % 2 == 0);
            // The always-zero counter is not compared.
            assert_eq!(n, 3);
            aa_moved += m.len();
        }
        // Bonferroni over 3 counters at 5 %: about 2 of 40 A/A comparisons may show one.
        assert!(
            aa_moved <= 4,
            "A/A: {aa_moved} counters moved in 40 comparisons"
        );
        let a = side(1, 12, 100.0, 1.0, 0.05);
        let b = side(2, 12, 115.0, 2.0, 0.05);
        let (_, m) = moved(&refs(&a), &refs(&b), true);
        let names: Vec<&str> = m.iter().map(|m| m.counter.as_str()).collect();
        assert_eq!(names, ["Innodb_data_fsyncs", "server CPU µs"]);
        let f = &m[0];
        assert!((f.change_pct.unwrap() - 100.0).abs() < 10.0);
        assert!(f.lo_pct.unwrap() > 80.0 && f.hi_pct.unwrap() < 120.0);
        assert!(
            m[1].text().starts_with("server CPU µs/txn +1"),
            "{}",
            m[1].text()
        );
        assert!(m[1].text().contains(" % ["), "{}", m[1].text());
    }

    #[test]
    fn a_neighbours_counters_go_last_with_the_hosts_load_beside_them() {
        // CPU tripled and bytes written up 30 %, nothing else: CPU would be the first reason.
        let mut a = side(1, 12, 100.0, 1.0, 0.02);
        let mut b = side(2, 12, 300.0, 1.0, 0.02);
        for (n, p) in a.iter_mut().chain(b.iter_mut()) {
            let v = if p[&("proc".to_string(), "cpu_us".to_string())] > 200.0 {
                1300.0
            } else {
                1000.0
            };
            p.insert(("proc".into(), "io_write_bytes".into()), v + f64::from(*n));
        }
        let (_, mut m) = moved(&refs(&a), &refs(&b), true);
        let first: Vec<&str> = m.iter().map(|m| m.counter.as_str()).collect();
        assert_eq!(first, ["server CPU µs", "bytes written to storage"]);
        let h = crate::pipeline::judge::host_load::HostLoad {
            base_pct: Some(3.0),
            cand_pct: Some(41.0),
            withheld: String::new(),
        };
        beside_host_load(&mut m, &h);
        let names: Vec<&str> = m.iter().map(|m| m.counter.as_str()).collect();
        assert_eq!(names, ["bytes written to storage", "server CPU µs"]);
        assert!(
            m[1].line.ends_with(", while other processes took 38 points more of the host's CPU (3 % → 41 %): not attributed to the server"),
            "{}",
            m[1].line
        );
        assert!(!m[0].line.contains("not attributed"), "{}", m[0].line);
    }

    #[test]
    fn a_counter_from_zero_is_judged_by_its_difference() {
        let a = side(1, 6, 100.0, 1.0, 0.02);
        let mut b = side(2, 6, 100.0, 1.0, 0.02);
        for (_, p) in &mut b {
            p.insert(("status".into(), "Created_tmp_disk_tables".into()), 1.0);
        }
        let (n, m) = moved(&refs(&a), &refs(&b), true);
        assert_eq!(n, 4);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].counter, "Created_tmp_disk_tables");
        assert_eq!(m[0].change_pct, None);
        assert_eq!(
            m[0].text(),
            "Created_tmp_disk_tables/txn 0.000 → 1.00 (difference [1.00, 1.00])"
        );
        // Among counters that moved from zero, the one that names a cause leads.
        for (_, p) in &mut b {
            p.insert(("proc".into(), "io_read_bytes".into()), 4096.0);
            p.insert(("status".into(), "Innodb_buffer_pool_reads".into()), 0.25);
        }
        let mut a = a;
        for (_, p) in &mut a {
            p.insert(("proc".into(), "io_read_bytes".into()), 0.0);
            p.insert(("status".into(), "Innodb_buffer_pool_reads".into()), 0.0);
        }
        let (_, m) = moved(&refs(&a), &refs(&b), true);
        let names: Vec<&str> = m.iter().map(|m| m.counter.as_str()).collect();
        assert_eq!(
            names,
            [
                "Innodb_buffer_pool_reads",
                "Created_tmp_disk_tables",
                "bytes read from storage"
            ]
        );
    }

    #[test]
    fn binary_log_group_commits_say_what_they_count() {
        let m = Moved {
            counter: "Binlog_group_commits".into(),
            base_per_txn: 0.0,
            cand_per_txn: 1.0,
            change_pct: None,
            lo_pct: None,
            hi_pct: None,
            diff_lo: 0.98,
            diff_hi: 1.0,
            rank: 0.0,
            line: String::new(),
        };
        assert_eq!(
            m.text(),
            "Binlog_group_commits/txn 0.000 → 1.00 (difference [0.980, 1.00]) (a binary-log fsync each where sync_binlog = 1)"
        );
    }

    #[test]
    fn a_counter_one_side_lacks_is_not_compared() {
        let a = side(1, 6, 100.0, 1.0, 0.02);
        let mut b = side(2, 6, 300.0, 1.0, 0.02);
        // An older server without the counter on one side (MySQL 9's names differ too).
        for (_, p) in &mut b {
            p.remove(&("status".to_string(), "Innodb_data_fsyncs".to_string()));
        }
        let (n, m) = moved(&refs(&a), &refs(&b), false);
        assert_eq!(n, 2);
        assert_eq!(m[0].counter, "server CPU µs");
    }

    /// A counter that surely moved, but by less than matters, is not named: the same bytes
    /// per statement +0.2 % with no noise, a lock wait in one transaction of 10,000.
    #[test]
    fn a_sure_but_negligible_move_is_not_a_reason() {
        let a = side(1, 8, 100.0, 1.0, 0.001);
        let mut b = side(2, 8, 100.0, 1.0, 0.001);
        let mut a = a;
        for ((_, pa), (_, pb)) in a.iter_mut().zip(&mut b) {
            pa.insert(("status".into(), "Bytes_received".into()), 800.0);
            pb.insert(("status".into(), "Bytes_received".into()), 801.6);
            pa.insert(("status".into(), "Innodb_row_lock_waits".into()), 0.0);
            pb.insert(("status".into(), "Innodb_row_lock_waits".into()), 0.0001);
        }
        let (n, m) = moved(&refs(&a), &refs(&b), true);
        assert_eq!(n, 5, "both compared");
        assert!(m.is_empty(), "{m:?}");
        // The same counters moved by 3 % and 0.01 per transaction are named.
        for (_, pb) in &mut b {
            pb.insert(("status".into(), "Bytes_received".into()), 824.0);
            pb.insert(("status".into(), "Innodb_row_lock_waits".into()), 0.01);
        }
        let (_, m) = moved(&refs(&a), &refs(&b), true);
        let names: Vec<&str> = m.iter().map(|m| m.counter.as_str()).collect();
        assert_eq!(names, ["Innodb_row_lock_waits", "Bytes_received"]);
    }
}
