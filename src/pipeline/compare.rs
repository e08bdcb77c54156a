//! `sweepbench compare` and `run --fail-on-regression`: two sets of points (live or imported
//! runs, or two series of one run) matched point by point and judged by `verdict`. Pure
//! except for `Run::load`.

use crate::pipeline::judge::host_load::{self, HostLoad};
use crate::pipeline::judge::verdict::pooled::{self, PointChange, Pooled};
use crate::pipeline::judge::verdict::{self, Judgement, Method, Metric, Sides, Verdict};
use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A run's points with the per-second samples that go with them.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub points: Vec<PointRecord>,
    /// Per-second tps by point id (empty for imported runs).
    pub tps_samples: HashMap<String, Vec<f64>>,
    /// The host that measured it (manifest.json), when known.
    pub host: Option<crate::pipeline::results::host::Fingerprint>,
    /// SHOW GLOBAL VARIABLES per series (servers/<target>__<config>/variables.tsv).
    pub variables: BTreeMap<String, BTreeMap<String, String>>,
    /// The storage engine of each series' tables (servers/<target>__<config>/engine.txt).
    pub engines: BTreeMap<String, String>,
    /// The instance class of each series' server (servers/<target>__<config>/class.txt).
    pub classes: BTreeMap<String, String>,
    /// The server's counters per transaction by point id (status.csv).
    pub costs: HashMap<String, crate::pipeline::report::cost::PerTxn>,
    /// The median run-to-run tps noise `calibrate` measured for this run's sweep on this
    /// host (results/<sweep>/calibration.json), percent, and over how many points.
    pub calibrated_noise: Option<(f64, usize)>,
    /// How the reader knows this side ("run 20261205T101500Z"), for sentences about it;
    /// empty: "the base run" / "the candidate run".
    pub label: String,
}

impl Run {
    pub fn load(dir: &Path) -> anyhow::Result<Run> {
        // Through results/<sweep>/latest the run is named by where the link points.
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let label = real
            .file_name()
            .map(|n| format!("run {}", n.to_string_lossy()))
            .unwrap_or_default();
        Ok(Run {
            label,
            points: crate::pipeline::results::load_curve_points(dir)?,
            tps_samples: crate::pipeline::results::load_tps_samples(dir)?,
            host: crate::pipeline::results::load_host(dir),
            variables: crate::pipeline::results::load_variables(dir),
            engines: crate::pipeline::results::servers::load_engines(dir),
            classes: crate::pipeline::results::servers::load_classes(dir),
            costs: crate::pipeline::report::cost::per_point(&crate::pipeline::results::cost::load(
                dir,
            )?),
            calibrated_noise: dir.parent().and_then(calibrated_noise),
        })
    }

    /// Several runs as one side: their repeats pooled (for `--against last-N`).
    pub fn pooled(runs: Vec<Run>) -> Run {
        // Point ids repeat from run to run: prefix each with its run's place.
        let mut out = Run {
            label: format!("the last {} runs", runs.len()),
            ..Run::default()
        };
        for (i, r) in runs.into_iter().enumerate() {
            out.host = r.host.clone();
            out.calibrated_noise = r.calibrated_noise;
            out.variables = r.variables.clone();
            out.engines = r.engines.clone();
            out.classes = r.classes.clone();
            out.points.extend(r.points.into_iter().map(|p| PointRecord {
                point_id: format!("{i}:{}", p.point_id),
                ..p
            }));
            out.tps_samples.extend(
                r.tps_samples
                    .into_iter()
                    .map(|(id, v)| (format!("{i}:{id}"), v)),
            );
            out.costs
                .extend(r.costs.into_iter().map(|(id, v)| (format!("{i}:{id}"), v)));
        }
        out
    }
}

/// What `run --fail-on-regression` compares a one-series sweep with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// The newest finished run of the same sweep before this one.
    Previous,
    /// The last N finished runs, their repeats pooled.
    Last(usize),
    /// A run directory.
    Run(std::path::PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    target: String,
    config: String,
    /// Native points and sysbench-driven ones are different series.
    driver: String,
    workload: String,
    /// Client processes per point: another client count is another series.
    clients: u32,
    threads: u32,
}

impl Key {
    fn name(&self) -> String {
        let d = if self.driver.is_empty() {
            String::new()
        } else {
            format!("{}/", self.driver)
        };
        let c = match self.clients {
            1 => String::new(),
            k => format!("c{k}/"),
        };
        format!(
            "{}/{}/{d}{}/{c}t{}",
            self.target, self.config, self.workload, self.threads
        )
    }
}

/// The series and point a record belongs to, with `map`'s renamed targets.
fn key_of(r: &PointRecord, map: &[(String, String)]) -> Key {
    let target = map
        .iter()
        .find(|(old, _)| *old == r.target)
        .map_or(r.target.clone(), |(_, new)| new.clone());
    Key {
        target,
        config: r.config.clone(),
        driver: if r.driver == crate::pipeline::results::Driver::Sysbench {
            "sysbench".into()
        } else {
            String::new()
        },
        workload: r.workload.clone(),
        clients: r.client_count(),
        threads: r.threads,
    }
}

fn sides(run: &Run, map: &[(String, String)]) -> BTreeMap<Key, Sides> {
    let mut out: BTreeMap<Key, Sides> = BTreeMap::new();
    for r in run.points.iter().filter(|r| r.status == PointStatus::Ok) {
        let s = out.entry(key_of(r, map)).or_default();
        verdict::push_run(
            s,
            r.judged_figures(),
            r.transactions,
            run.tps_samples.get(&r.point_id).map(Vec::as_slice),
        );
    }
    out
}

/// A point whose verdict the host's load could explain, made undecided: the verdict
/// inconclusive, each metric's too (its interval stays, for the reader), the reason said
/// where the verdict's reason goes (its counters were never gathered).
fn withhold(row: &mut Row) {
    let Some(why) = row.withheld().map(str::to_string) else {
        return;
    };
    row.verdict = Verdict::Inconclusive;
    for j in &mut row.metrics {
        if j.verdict != Verdict::Inconclusive {
            j.verdict = Verdict::Inconclusive;
            j.note = format!("not judged: {why}");
        }
    }
    row.why = why;
}

/// The counters per transaction of each point's ok repeats (status.csv), by point, for the
/// reasons of its change.
fn costs_by_key<'a>(
    run: &'a Run,
    map: &[(String, String)],
) -> BTreeMap<Key, Vec<(u32, &'a crate::pipeline::report::cost::PerTxn)>> {
    let mut out: BTreeMap<Key, Vec<_>> = BTreeMap::new();
    for r in run.points.iter().filter(|r| r.status == PointStatus::Ok) {
        if let Some(c) = run.costs.get(&r.point_id) {
            out.entry(key_of(r, map)).or_default().push((r.repeat, c));
        }
    }
    out
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub point: String,
    pub target: String,
    pub config: String,
    pub workload: String,
    pub threads: u32,
    /// Medians over the ok repeats.
    pub base_tps: f64,
    pub cand_tps: f64,
    /// The point's verdict: regressed, improved, unchanged or inconclusive.
    pub verdict: Verdict,
    /// One judgement per metric: tps, p95, p99.
    pub metrics: Vec<Judgement>,
    /// The reason in a few words.
    pub why: String,
    /// A decided change's server counters per transaction that moved with it (status.csv of
    /// both runs; Welch over the repeats), most first.
    pub counters: Vec<crate::pipeline::report::cost::Moved>,
    /// What other processes and the hypervisor took of the host's CPU on each side, and the
    /// verdict withheld when that could explain it (`host_load`); None when neither side
    /// recorded it.
    pub host_load: Option<HostLoad>,
}

impl Row {
    pub fn metric(&self, m: Metric) -> Option<&Judgement> {
        self.metrics.iter().find(|j| j.metric == m)
    }

    /// Why the point's verdict was not given (the host's load differed), if it was not.
    pub fn withheld(&self) -> Option<&str> {
        self.host_load
            .as_ref()
            .map(|h| h.withheld.as_str())
            .filter(|w| !w.is_empty())
    }

    /// The verdict as the views print it: "not judged" where it was withheld.
    pub fn said(&self) -> &'static str {
        if self.withheld().is_some() {
            "not judged"
        } else {
            self.verdict.as_str()
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    /// What was compared (run directories, or a description), for the reader.
    pub base: String,
    pub candidate: String,
    pub threshold_pct: f64,
    /// The thresholds in words ("±5 %, p95 and p99 ±10 %").
    pub threshold: String,
    pub method: &'static str,
    /// "regressed at 1/10 points, unchanged at 3, inconclusive at 6".
    pub headline: String,
    pub rows: Vec<Row>,
    /// Point keys present on one side only.
    pub only_base: Vec<String>,
    pub only_candidate: Vec<String>,
    /// Why a difference may be the host's (different machine, probe moved).
    pub host_warnings: Vec<String>,
    /// Server variables that differ between the two sides of a compared series:
    /// "local/default: innodb_flush_log_at_trx_commit 2 → 1".
    pub var_diffs: Vec<String>,
    /// What the per-second samples suggest (a warmup too short), and what would decide the
    /// undecided points.
    pub notes: Vec<String>,
    /// One answer per series and workload, pooled over the thread counts (`pooled_of`).
    pub pooled: Vec<Pooled>,
    /// What the pooled sentences compare with: "the base run", or the baseline series.
    pub pooled_base: String,
}

impl Row {
    /// A host test's row (`host/-/cpu`): the machine itself, no server.
    pub fn is_host(&self) -> bool {
        crate::engine::host::is_host(&self.target, &self.config)
    }
}

/// Each series' tps changes pooled over its thread counts, per workload: the rows' estimates
/// on the log scale, each with the standard error its interval implies (the interval's
/// confidence and its Welch degrees of freedom, approximated by the repeats), as a paired
/// run pools its points (`verdict::pooled`).
fn pooled_of(rows: &[Row], threshold_pct: f64) -> Vec<Pooled> {
    let mut by: BTreeMap<(String, String), Vec<PointChange>> = BTreeMap::new();
    // A withheld point's interval is the neighbour's as much as the server's: left out.
    for r in rows
        .iter()
        .filter(|r| !r.is_host() && r.withheld().is_none())
    {
        let Some(j) = r.metric(Metric::Tps) else {
            continue;
        };
        let interval = (j.delta_pct, j.lo_pct, j.hi_pct, j.confidence);
        let df = (j.n_base + j.n_cand).saturating_sub(2) as f64;
        if let Some((d, se)) = pooled::log_change(interval, df, None) {
            by.entry((format!("{}/{}", r.target, r.config), r.workload.clone()))
                .or_default()
                .push(PointChange {
                    threads: r.threads,
                    d,
                    se,
                    verdict: Some(j.verdict),
                });
        }
    }
    let questions: Vec<_> = by.into_iter().map(|((s, w), p)| (s, w, p)).collect();
    pooled::answers(&questions, threshold_pct)
}

/// The median tps noise of a sweep's calibration (`calibrate` keeps it beside the sweep's
/// runs) and its point count; None without one. Read as JSON values: the file is
/// sweep/calibrate.rs's, which uses this module.
fn calibrated_noise(sweep_dir: &Path) -> Option<(f64, usize)> {
    let text = std::fs::read_to_string(sweep_dir.join("calibration.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let noise: Vec<f64> = v["points"]
        .as_array()?
        .iter()
        .filter_map(|p| p["tps_noise_pct"].as_f64())
        .collect();
    (!noise.is_empty()).then(|| (crate::engine::metrics::median(&noise), noise.len()))
}

/// One line on the points the runs' own noise left undecided, how that noise compares with
/// what `calibrate` measured on this host, and what would decide them.
fn undecided_note(rows: &[Row], calibrated: Option<(f64, usize)>) -> Option<String> {
    let noise: Vec<f64> = rows
        .iter()
        .filter(|r| !r.is_host() && r.verdict == Verdict::Inconclusive && r.withheld().is_none())
        .filter_map(|r| r.metric(Metric::Tps).and_then(|j| j.noise_pct))
        .collect();
    if noise.is_empty() {
        return None;
    }
    let lo = noise.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = noise.iter().copied().fold(0.0, f64::max);
    let median = crate::engine::metrics::median(&noise);
    let against = match calibrated {
        Some((c, n)) if c > 0.0 => format!(
            "; this host's calibration of the sweep measured {c:.1} % (median of {n} points), so these runs were {}",
            match median / c {
                x if x >= 1.5 => format!("{x:.1}× noisier than usual: run again at a quieter time"),
                x if x <= 1.0 / 1.5 => format!("{:.1}× quieter than usual", 1.0 / x),
                _ => "about as noisy as usual: more repeats would decide them".to_string(),
            }
        ),
        _ => " (`sweepbench calibrate` measures what this host usually shows)".to_string(),
    };
    Some(format!(
        "{} point(s) undecided at a run-to-run noise of {lo:.1}–{hi:.1} % of tps (median {median:.1} %){against}; a paired sweep (design = \"paired\") measures both sides in the same rounds, which takes most of that noise out, and decides what repeats a run apart cannot",
        noise.len()
    ))
}

impl Comparison {
    /// Whether a point or a pooled answer fails a gate that fails on `fail_on`.
    pub fn fails(&self, fail_on: verdict::FailOn) -> bool {
        self.rows
            .iter()
            .any(|r| !r.is_host() && fail_on.fails(r.verdict))
            || self.pooled.iter().any(|p| fail_on.fails(p.verdict))
    }

    /// The pooled answers as sentences, the answer first.
    pub fn answers(&self) -> Vec<String> {
        self.pooled
            .iter()
            .map(|p| pooled::sentence(p, &self.pooled_base, self.threshold_pct))
            .collect()
    }

    /// The servers' regressed points (a slower machine, the host tests' rows, is said in
    /// `host_warnings`, not counted here: the gate fails on a slower server only).
    pub fn regressed(&self) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regressed && !r.is_host())
            .collect()
    }
}

fn interval(j: &Judgement) -> String {
    match (j.lo_pct, j.hi_pct) {
        (Some(lo), Some(hi)) => {
            format!("[{}, {}]", verdict::fmt_change(lo), verdict::fmt_change(hi))
        }
        _ => String::new(),
    }
}

fn why(verdict: Verdict, js: &[Judgement]) -> String {
    match verdict {
        Verdict::Regressed | Verdict::Improved => js
            .iter()
            .filter(|j| j.verdict == verdict)
            .map(|j| {
                format!(
                    "{} {} % {}",
                    j.metric.name(),
                    verdict::fmt_change(j.delta_pct.unwrap_or(0.0)),
                    interval(j)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        Verdict::Unchanged => String::new(),
        Verdict::Slower | Verdict::Faster | Verdict::Inconclusive => js
            .iter()
            .find(|j| j.verdict == verdict && !j.note.is_empty())
            .map(|j| format!("{}: {}", j.metric.name(), j.note))
            .unwrap_or_default(),
    }
}

/// Compares candidate with base. `map` renames base targets (`--map old=new`); a rename onto
/// The server variables that differ between the base and the candidate side of each
/// compared series (both runs recorded them), leaving out those that differ between any two
/// servers (ports, paths, ids).
fn variable_diffs(base: &Run, cand: &Run, rows: &[Row], map: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let series: std::collections::BTreeSet<(String, String)> = rows
        .iter()
        .map(|r| (r.target.clone(), r.config.clone()))
        .collect();
    for (target, config) in series {
        let old = map
            .iter()
            .find(|(_, new)| *new == target)
            .map_or(target.clone(), |(old, _)| old.clone());
        // The tables' engine is no server variable, and the first thing to say when it differs.
        if let (Some(eb), Some(ec)) = (
            base.engines.get(&format!("{old}/{config}")),
            cand.engines.get(&format!("{target}/{config}")),
        ) {
            if !eb.eq_ignore_ascii_case(ec) {
                out.push(format!(
                    "{target}/{config}: the tables' storage engine {eb} → {ec} (the comparison is of the engines as much as of the servers)"
                ));
            }
        }
        // So is the instance class: a quota or memory limit moves throughput first.
        let whole = "the whole host".to_string();
        let (kb, kc) = (
            base.classes.get(&format!("{old}/{config}")),
            cand.classes.get(&format!("{target}/{config}")),
        );
        if kb != kc {
            out.push(format!(
                "{target}/{config}: the server's instance class {} → {} (the comparison is of the classes first)",
                kb.unwrap_or(&whole),
                kc.unwrap_or(&whole)
            ));
        }
        let (Some(b), Some(c)) = (
            base.variables.get(&format!("{old}/{config}")),
            cand.variables.get(&format!("{target}/{config}")),
        ) else {
            continue;
        };
        for (n, values) in crate::pipeline::results::variable_diffs(&[b, c]) {
            out.push(format!(
                "{target}/{config}: {n} {} → {}",
                values[0], values[1]
            ));
        }
    }
    out
}

/// a target the base also holds is refused, since the two would merge into one series.
pub fn compare(
    base: &Run,
    cand: &Run,
    threshold_pct: f64,
    map: &[(String, String)],
) -> anyhow::Result<Comparison> {
    for (old, new) in map {
        if old != new && base.points.iter().any(|r| r.target == *new) {
            anyhow::bail!(
                "--map {old}={new}: the base run holds a target named {new} too, so the two would merge into one series; compare runs that hold one of them, or map {new} away as well"
            );
        }
    }
    let b = sides(base, map);
    let c = sides(cand, &[]);
    let matched: Vec<(&Key, &Sides, &Sides)> = b
        .iter()
        .filter_map(|(k, bs)| c.get(k).map(|cs| (k, bs, cs)))
        .collect();
    let pairs: Vec<(&Sides, &Sides)> = matched.iter().map(|(_, b, c)| (*b, *c)).collect();
    let judged = verdict::judge_points(&pairs, &Method::new(threshold_pct));
    let (b_costs, c_costs) = (costs_by_key(base, map), costs_by_key(cand, &[]));
    let (b_loads, c_loads) = (
        host_load::by_point(&base.points, |r| key_of(r, map)),
        host_load::by_point(&cand.points, |r| key_of(r, &[])),
    );
    let names = (
        if base.label.is_empty() {
            "the base run"
        } else {
            &base.label
        },
        if cand.label.is_empty() {
            "the candidate run"
        } else {
            &cand.label
        },
    );
    let rows: Vec<Row> = matched
        .iter()
        .zip(judged)
        .map(|((k, bs, cs), p)| {
            let (bl, cl) = (
                b_loads.get(*k).copied().flatten(),
                c_loads.get(*k).copied().flatten(),
            );
            let host =
                (bl.is_some() || cl.is_some()).then(|| host_load::judge(bl, cl, p.verdict, names));
            let mut row = Row {
                point: k.name(),
                target: k.target.clone(),
                config: k.config.clone(),
                workload: k.workload.clone(),
                threads: k.threads,
                // The statistic Δ is computed from, so "base → cand" and Δ agree.
                base_tps: crate::engine::metrics::geo_mean(&bs[0].runs),
                cand_tps: crate::engine::metrics::geo_mean(&cs[0].runs),
                verdict: p.verdict,
                why: why(p.verdict, &p.metrics),
                // A withheld verdict has no reasons to give.
                counters: if matches!(
                    p.verdict,
                    Verdict::Regressed | Verdict::Improved | Verdict::Slower | Verdict::Faster
                ) && host.as_ref().is_none_or(|h| h.withheld.is_empty())
                {
                    let (bc, cc) = (b_costs.get(*k), c_costs.get(*k));
                    let (bc, cc) = (
                        bc.map_or(&[][..], Vec::as_slice),
                        cc.map_or(&[][..], Vec::as_slice),
                    );
                    let mut moved = crate::pipeline::report::cost::moved(bc, cc, false).1;
                    if let Some(h) = host.as_ref().filter(|h| h.noticeable()) {
                        crate::pipeline::report::cost::beside_host_load(&mut moved, h);
                    }
                    moved
                } else {
                    Vec::new()
                },
                metrics: p.metrics,
                host_load: host,
            };
            withhold(&mut row);
            row
        })
        .collect();
    let verdicts: Vec<Verdict> = rows
        .iter()
        .filter(|r| !r.is_host())
        .map(|r| r.verdict)
        .collect();
    let var_diffs = variable_diffs(base, cand, &rows, map);
    let mut host_warnings = match (&base.host, &cand.host) {
        (Some(a), Some(b)) => crate::pipeline::results::host::differences(a, b),
        _ => Vec::new(),
    };
    host_warnings.extend(host_tests_moved(&rows));
    let slow_in = |r: &Run| {
        r.points
            .iter()
            .filter(|p| p.status == PointStatus::Ok)
            .filter_map(|p| r.tps_samples.get(&p.point_id))
            .filter(|v| verdict::slow_start(v))
            .count()
    };
    let slow = slow_in(base) + slow_in(cand);
    let mut notes = if slow > 0 {
        vec![format!(
            "the first second of {slow} run(s) was much slower than the rest: the warmup may be too short for these points (raise [run] warmup)"
        )]
    } else {
        Vec::new()
    };
    notes.extend(undecided_note(
        &rows,
        cand.calibrated_noise.or(base.calibrated_noise),
    ));
    notes.extend(load_unknown_note(base, cand, names));
    let pooled = pooled_of(&rows, threshold_pct);
    Ok(Comparison {
        base: String::new(),
        candidate: String::new(),
        host_warnings,
        var_diffs,
        notes,
        threshold_pct,
        threshold: verdict::fmt_threshold(threshold_pct),
        method: verdict::METHOD,
        headline: with_withheld(verdict::headline(&verdicts), &rows),
        rows,
        pooled,
        pooled_base: "the base run".into(),
        only_base: b
            .keys()
            .filter(|k| !c.contains_key(*k))
            .map(Key::name)
            .collect(),
        only_candidate: c
            .keys()
            .filter(|k| !b.contains_key(*k))
            .map(Key::name)
            .collect(),
    })
}

/// The headline with the points not judged for the host's load counted: "inconclusive at
/// 3 (2 not judged: the host's load differed between the sides)".
fn with_withheld(headline: String, rows: &[Row]) -> String {
    let k = rows
        .iter()
        .filter(|r| !r.is_host() && r.withheld().is_some())
        .count();
    if k == 0 {
        return headline;
    }
    format!("{headline} ({k} not judged: the host's load differed between the sides)")
}

/// Where a side recorded no host load — a sysbench log, or a run the other side's figures
/// show could have had them — its verdicts are as ever, and the reader is told the load is
/// unknown. Two runs that never record it (models, clients elsewhere) are not remarked on.
fn load_unknown_note(base: &Run, cand: &Run, names: (&str, &str)) -> Option<String> {
    let has = |r: &Run| r.points.iter().any(|p| p.others_cpu_pct.is_some());
    let which: Vec<&str> = [(base, cand, names.0), (cand, base, names.1)]
        .into_iter()
        .filter(|(r, other, _)| !has(r) && (imported(r) || has(other)))
        .map(|(_, _, n)| n)
        .collect();
    (!which.is_empty()).then(|| format!(
        "the host's load during {} is unknown (its points hold no CPU figures of other processes: an imported sysbench log, or a url target, whose server's CPU this host cannot read), so a neighbour's share of the CPU cannot be told from a change there",
        which.join(" and ")
    ))
}

/// Whether a run's points came from sysbench logs (`import`).
fn imported(run: &Run) -> bool {
    run.points
        .iter()
        .any(|p| matches!(p.driver, crate::pipeline::results::Driver::Log(_)))
}

/// What the host tests' rows say of the machine: a host test that regressed or improved
/// means the servers' figures moved with the machine as well.
fn host_tests_moved(rows: &[Row]) -> Vec<String> {
    let mut tests: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.is_host()) {
        if !tests.contains(&r.workload.as_str()) {
            tests.push(&r.workload);
        }
    }
    tests
        .iter()
        .filter_map(|&t| {
            let mine: Vec<Verdict> = rows
                .iter()
                .filter(|r| r.is_host() && r.workload == t)
                .map(|r| r.verdict)
                .collect();
            let moved = mine
                .iter()
                .any(|v| matches!(v, Verdict::Regressed | Verdict::Improved));
            moved.then(|| {
                format!(
                    "the host's own {t} test (no server) {}: the machine itself is slower or faster, so the servers' changes may be the machine's; host rows are shown, not counted as the servers' regressions",
                    verdict::headline(&mine)
                )
            })
        })
        .collect()
}

/// Within one run: every target/config against the baseline one, judged as one comparison
/// (one family for the false-alarm control).
pub fn within_run(run: &Run, baseline: &str, threshold_pct: f64) -> anyhow::Result<Comparison> {
    let (bt, bc) = baseline.split_once('/').unwrap_or((baseline, "default"));
    let mut groups: Vec<(String, String)> = run
        .points
        .iter()
        // The host's own tests are not a series to hold against a server.
        .filter(|r| !r.is_host())
        .map(|r| (r.target.clone(), r.config.clone()))
        .filter(|(t, c)| !(t == bt && c == bc))
        .collect();
    groups.sort();
    groups.dedup();
    // Each series is compared as if it were the baseline's target/config under its own name:
    // one base copy per series, all in one comparison.
    let mut base = Run {
        points: Vec::new(),
        tps_samples: run.tps_samples.clone(),
        host: None,
        variables: BTreeMap::new(),
        engines: BTreeMap::new(),
        classes: BTreeMap::new(),
        costs: run.costs.clone(),
        calibrated_noise: run.calibrated_noise,
        label: "the baseline's points".into(),
    };
    let mut cand = Run {
        points: Vec::new(),
        tps_samples: run.tps_samples.clone(),
        host: None,
        variables: BTreeMap::new(),
        engines: BTreeMap::new(),
        classes: BTreeMap::new(),
        costs: run.costs.clone(),
        calibrated_noise: run.calibrated_noise,
        label: "the candidate's points".into(),
    };
    for (t, c) in &groups {
        let name = format!("{t}/{c}");
        // Each side's recorded variables under the renamed series ("name" + "/" + ""), so
        // the comparison names what differs from the baseline.
        if let Some(v) = run.variables.get(baseline) {
            base.variables.insert(format!("{name}/"), v.clone());
        }
        if let Some(v) = run.variables.get(&name) {
            cand.variables.insert(format!("{name}/"), v.clone());
        }
        for r in run
            .points
            .iter()
            .filter(|r| r.target == bt && r.config == bc)
        {
            base.points.push(PointRecord {
                target: name.clone(),
                config: String::new(),
                ..r.clone()
            });
        }
        for r in run
            .points
            .iter()
            .filter(|r| r.target == *t && r.config == *c)
        {
            cand.points.push(PointRecord {
                target: name.clone(),
                config: String::new(),
                ..r.clone()
            });
        }
    }
    let mut cmp = compare(&base, &cand, threshold_pct, &[])?;
    for d in &mut cmp.var_diffs {
        *d = d.replacen("/: ", ": ", 1);
    }
    for r in &mut cmp.rows {
        if let Some((t, c)) = r.target.clone().split_once('/') {
            r.target = t.to_string();
            r.config = c.to_string();
        }
        r.point = format!("{}/{}/{}/t{}", r.target, r.config, r.workload, r.threads);
    }
    cmp.pooled = pooled_of(&cmp.rows, threshold_pct);
    cmp.pooled_base = format!("{bt}/{bc}");
    Ok(cmp)
}

pub mod confirm;
mod render;
pub use render::{html, markdown, text};

#[cfg(test)]
mod tests;
