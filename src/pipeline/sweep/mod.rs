//! `plan`, `check` and `run` for sweep files: plan the points, check every target can take
//! them before touching data, then measure each point with the engine and write it down
//! before starting the next.

mod attempt;
mod auto;
mod block;
mod bracket;
pub mod calibrate;
mod check;
mod cost;
mod data;
mod duet;
mod gate;
mod host;
mod measure;
mod paired;
mod paired_setup;
mod profile;
mod record;
mod rounds;
mod run;
mod runner;
mod servers;
mod sizing;
mod slices;
mod sysbench_driver;
mod tally;
mod turns;
mod vars;
pub(crate) mod window;

pub use check::check;
use data::ensure_data;
pub use run::run;

use crate::exit::Exit;
use crate::pipeline::events::Events;
use crate::pipeline::plan::{format_duration, Plan};
use crate::pipeline::preflight::OnCapacity;
use crate::pipeline::spec::design;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::{Filter, SweepSpec};
use std::path::{Path, PathBuf};

/// Options shared by plan / check / run.
#[derive(Debug, Clone)]
pub struct SweepArgs {
    pub file: PathBuf,
    /// The sweep file's text when it comes from the command line (`run --url`), not a file.
    pub inline: Option<String>,
    pub only: Vec<Filter>,
    /// `--shard I/N`: run only this part of the plan.
    pub shard: Option<(u32, u32)>,
    pub on_capacity: OnCapacity,
    pub results_dir: PathBuf,
    /// Continue this run directory.
    pub resume: Option<PathBuf>,
    /// Threshold (percent) and what a one-series sweep is compared with.
    pub fail_on_regression: Option<(f64, crate::pipeline::compare::Against)>,
    /// Which verdicts fail the gate (`--fail-on`).
    pub fail_on: crate::pipeline::judge::verdict::FailOn,
    /// Leave Kubernetes Jobs and ConfigMaps on the cluster.
    pub keep_k8s: bool,
    /// `run --confirm`: a gate about to fail against an earlier run measures its failing
    /// points again, paired (`compare::confirm`), and fails only when that agrees.
    pub confirm: bool,
    /// `run --budget`: overrides a paired sweep's `[run] budget`, seconds.
    pub budget_s: Option<u64>,
    /// `run --threshold`: the smallest change that matters, percent (paired verdicts, the gate).
    pub threshold_pct: f64,
}

/// The sweep, from its file or from the command line.
pub(crate) fn load_spec(a: &SweepArgs) -> anyhow::Result<SweepSpec> {
    let mut spec = match &a.inline {
        Some(text) => SweepSpec::parse(&a.file, text)?,
        None => SweepSpec::load(&a.file)?,
    };
    if let Some(b) = a.budget_s {
        if !spec.run.design.paired() {
            anyhow::bail!(
                "--budget applies to design = \"paired\"; add it to [run] in {}",
                a.file.display()
            );
        }
        spec.run.design.budget_s = Some(b);
    }
    Ok(spec)
}

fn load(a: &SweepArgs, ev: &dyn Events) -> anyhow::Result<(SweepSpec, Plan)> {
    let mut spec = load_spec(a)?;
    let mut plan = Plan::build(&spec, &a.only);
    let given = spec.run.design.budget_s.is_some();
    if spec.run.design.defaulted() && spec.run.design.paired() {
        default_paired(&mut spec, &plan, a);
    }
    raise_short_budget(&mut spec, &plan, given, ev);
    if spec.run.design.paired() && a.shard.is_some() {
        anyhow::bail!("--shard splits a sweep's series into parts, and design = \"paired\" measures them together in the same rounds: run it whole, or use design = \"sequential\"");
    }
    if let Some((i, n)) = a.shard {
        let groups = plan.shard(&spec, i, n);
        if plan.is_empty() {
            anyhow::bail!(
                "--shard {i}/{n}: the plan has {groups} block(s) to share out, so part {i} is empty; use at most {groups} parts"
            );
        }
    }
    if plan.is_empty() {
        anyhow::bail!("{}: the filters leave no point to run", a.file.display());
    }
    Ok((spec, plan))
}

/// A paired design chosen by default holds only where pairing can run: a part of a sweep
/// (`--shard`), a sequential run continued (`--resume`) and servers that would not fit in
/// memory together go back to sequential. Else it gets the sequential design's measuring
/// time as its budget, unless `--budget` or `[run] budget` gave one.
fn default_paired(spec: &mut SweepSpec, plan: &Plan, a: &SweepArgs) {
    let design = &mut spec.run.design;
    if plan.points.is_empty() {
        return design.fall_back("the sweep measures only the host");
    }
    if a.shard.is_some() {
        return design.fall_back("--shard measures the series apart");
    }
    if let Some(dir) = &a.resume {
        if !crate::pipeline::judge::verdicts_file::is_paired(dir) {
            return design.fall_back("--resume continues a sequential run");
        }
    }
    let series: std::collections::BTreeSet<(&str, &str)> = plan
        .points
        .iter()
        .map(|p| (p.target.as_str(), p.config.as_str()))
        .collect();
    let keys: Vec<(String, String)> = series
        .iter()
        .map(|(t, c)| (t.to_string(), c.to_string()))
        .collect();
    if let Err(e) = paired_setup::check_memory(spec, &keys) {
        let why = format!("the servers would not all fit in memory at once ({e:#})");
        return spec.run.design.fall_back(why);
    }
    if spec.run.design.budget_s.is_none() {
        let cells: std::collections::BTreeSet<(&str, u32)> = plan
            .points
            .iter()
            .map(|p| (p.workload.name(), p.threads))
            .collect();
        let budget = design::default_budget_s(&spec.run, cells.len(), keys.len());
        spec.run.design.budget_s = Some(budget);
    }
}

/// The least a paired sweep can measure: every point's warmups and `MIN_ROUNDS` rounds of
/// one slice per series (each slice with its setup), as the schedule charges them.
fn min_budget_s(spec: &SweepSpec, plan: &Plan) -> u64 {
    let cells: std::collections::BTreeSet<(&str, u32)> = plan
        .points
        .iter()
        .map(|p| (p.workload.name(), p.threads))
        .collect();
    let series = plan
        .points
        .iter()
        .map(|p| (&p.target, &p.config))
        .collect::<std::collections::BTreeSet<_>>()
        .len() as f64;
    let d = &spec.run.design;
    let per_cell = series * spec.run.warmup_s as f64
        + design::MIN_ROUNDS as f64 * series * (d.slice_s as f64 + slices::SLICE_SETUP_S);
    (cells.len() as f64 * per_cell).ceil() as u64
}

/// A budget below what the paired design needs is raised to that minimum, said on stderr
/// by `plan` and `run` alike: a run never measures past its stated budget silently. A budget
/// the file or `--budget` `given` gets a warning; the default (the sequential design's time)
/// a note.
fn raise_short_budget(spec: &mut SweepSpec, plan: &Plan, given: bool, ev: &dyn Events) {
    let Some(b) = spec
        .run
        .design
        .budget_s
        .filter(|_| spec.run.design.paired())
    else {
        return;
    };
    let min = min_budget_s(spec, plan);
    if b < min {
        let needs = format!(
            "what the paired design needs ({} rounds at least per point, each a {} s slice per series, and the warmups): raised to {}",
            design::MIN_ROUNDS,
            spec.run.design.slice_s,
            format_duration(min),
        );
        if given {
            ev.warn(&format!(
                "budget {} is below {needs} (give budget = \"{}\" or more to [run], or fewer points)",
                format_duration(b),
                format_duration(min)
            ));
        } else {
            ev.note(&format!(
                "note: the default budget (the sequential design's {}) is below {needs}",
                format_duration(b)
            ));
        }
        spec.run.design.budget_s = Some(min);
    }
}

/// What `threads = ["2×cores"]` resolved to on each target: "  small (1.5 cores): 2 = 1×cores,
/// 3 = 2×cores, 64".
fn threads_from_cores(spec: &SweepSpec) -> Vec<String> {
    use crate::pipeline::spec::cores;
    if spec.target_threads.is_empty() {
        return Vec::new();
    }
    let mut out = vec![if spec.run.design.paired() {
        "threads from each target's cores (paired: every series is measured at all of these counts, so series pair at equal threads):"
    } else {
        "threads per target, from its cores:"
    }
    .to_string()];
    for t in &spec.targets {
        let Some(c) = t.cores else { continue };
        let list: Vec<String> = spec
            .threads_of(&t.name)
            .iter()
            .map(|&n| {
                let named: Vec<String> = spec
                    .run
                    .per_core
                    .iter()
                    .filter(|&&m| cores::count(m, c) == n)
                    .map(|&m| cores::shown(m))
                    .collect();
                match named.is_empty() {
                    true => n.to_string(),
                    false => format!("{n} = {}", named.join(" = ")),
                }
            })
            .collect();
        out.push(format!(
            "  {} ({} core{}): {}",
            t.name,
            crate::pipeline::server::class::trim_number(c),
            if c == 1.0 { "" } else { "s" },
            list.join(", ")
        ));
    }
    out
}

/// The host tests' share of a paired sweep's ETA.
fn host_eta(spec: &SweepSpec, plan: &Plan) -> String {
    match plan.host.len() as u64 {
        0 => String::new(),
        n => format!(
            " + {} of host tests",
            format_duration(n * spec.run.duration_s)
        ),
    }
}

/// `sweepbench k8s render`: the manifests of the sweep's multi-client points (or of its
/// `shards` parts), as output.
pub fn k8s_render(a: &SweepArgs, shards: Option<u32>, ev: &dyn Events) -> anyhow::Result<Exit> {
    let (spec, plan) = load(a, ev)?;
    ev.output_text(&crate::pipeline::distributed::k8s::render(
        &spec, &plan, shards,
    )?);
    Ok(Exit::Ok)
}

/// `sweepbench plan`: every point, the connections each target needs, and an ETA.
pub fn plan(a: &SweepArgs, ev: &dyn Events) -> anyhow::Result<Exit> {
    let (spec, plan) = load(a, ev)?;
    let say = |line: String| ev.output(&line);
    match &spec.run.auto {
        Some(a) => say(format!(
            "sweep '{}': adaptive, at most {} points ({} slots of series × repeat, each choosing up to {} thread counts from {} to {} as it runs)",
            spec.name,
            plan.max_points(&spec),
            plan.points.len(),
            a.max_points,
            a.from,
            a.to
        )),
        None if spec.run.sla.is_some() => say(format!(
            "sweep '{}': at most {} points",
            spec.name,
            plan.max_points(&spec)
        )),
        None if spec.run.design.paired() => {}
        None => say(format!("sweep '{}': {} points", spec.name, plan.len())),
    }
    if !plan.host.is_empty() {
        say(format!(
            "host tests first, {} s each on this machine, no server loaded: {}",
            spec.run.duration_s,
            plan.host
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if let Some(o) = &spec.run.fileio {
            say(format!(
                "fileio: {} file(s), {}B in all, prepared in the run's work directory under TMPDIR before its first point and removed after its last",
                o.num,
                crate::engine::host::fileio::print_size(o.total as f64)
            ));
        }
    }
    let mut listed: Vec<&crate::pipeline::plan::Point> = plan.points.iter().collect();
    // target/config series, which a paired sweep measures together.
    let series = plan
        .points
        .iter()
        .map(|p| (&p.target, &p.config))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        .max(1);
    if spec.run.design.paired() {
        let d = &spec.run.design;
        let cells = plan.points.iter().filter(|p| p.repeat == 1).count() / series.max(1);
        let rounds = match d.budget_s {
            Some(b) => format!(
                "rounds until decided, at least {} per point, within a budget of {} for the sweep",
                design::MIN_ROUNDS,
                format_duration(b)
            ),
            None => format!("{} rounds per point", spec.run.repeats.max(2)),
        };
        let how = if d.duet() {
            "all of a round's slices in the same seconds"
        } else {
            "one after another in a random order"
        };
        say(format!(
            "sweep '{}': {cells} point(s) × {series} series, {} design: the series' servers up at once; each point measured in rounds of one {} s slice per series, {how}; {rounds}",
            spec.name,
            if d.duet() { "duet" } else { "paired" },
            d.slice_s
        ));
        // Each point once (its first series' id stands for it); the rounds are its repeats.
        let mut seen = std::collections::BTreeSet::new();
        listed.retain(|p| p.repeat == 1 && seen.insert((p.workload.name(), p.threads)));
    }
    if let Some(s) = &spec.run.sla {
        say(format!(
            "SLA search per native series after its closed-loop points: the highest open-loop rate with p99 ≤ {} ms, at most {} rates",
            s.p99_ms, s.max_steps
        ));
    }
    if let Some(line) = spec.run.design.said() {
        ev.output(&line);
    }
    for (i, p) in listed.iter().enumerate() {
        say(format!("  {:>4}  {}", i + 1, p.id));
    }
    say(format!(
        "connections per target (largest thread count + {} for sweepbench):",
        MARGIN
    ));
    for (t, n) in &plan.connections {
        let shown = spec
            .targets
            .iter()
            .find(|x| &x.name == t)
            .map_or_else(|| "managed server".into(), |x| x.kind.shown());
        say(format!("  {t}: {} ({shown})", n + MARGIN));
    }
    match spec.data.size {
        None => say(format!(
            "data: {} table(s) × {} rows, prepare = {}",
            spec.data.tables, spec.data.table_size, spec.data.prepare
        )),
        Some(size) => {
            say(format!(
                "data: {} table(s), size = {} on each target, prepare = {}; rows per table from the row size measured on each server when the run starts:",
                spec.data.tables,
                size.shown(),
                spec.data.prepare
            ));
            for t in plan.connections.keys() {
                use crate::pipeline::spec::size::{bytes, estimate, ASSUMED_ROW_BYTES};
                say(match estimate(&spec, t) {
                    Some(b) => format!(
                        "  {t}: ≈ {}, ≈ {} rows a table at ~{ASSUMED_ROW_BYTES} bytes a row",
                        bytes(b),
                        b / ASSUMED_ROW_BYTES / spec.data.tables as u64
                    ),
                    None => format!("  {t}: its buffer pool, read from the server"),
                });
            }
        }
    }
    let shapes = crate::pipeline::spec::shape::distinct(&spec.configs);
    if shapes.len() > 1 && spec.targets.iter().any(|t| t.kind.is_managed()) {
        let each: Vec<String> = shapes
            .iter()
            .map(|s| {
                let names: Vec<&str> = spec
                    .configs
                    .iter()
                    .filter(|c| crate::pipeline::spec::shape::of(c) == *s)
                    .map(|c| c.name.as_str())
                    .collect();
                let what = if s.is_empty() {
                    "the server's defaults"
                } else {
                    s.as_str()
                };
                format!("{} ({what})", names.join(", "))
            })
            .collect();
        say(format!(
            "data shapes: {} — each managed target prepares its data once per shape, under its first config: {}",
            shapes.len(),
            each.join("; ")
        ));
    }
    for line in threads_from_cores(&spec) {
        say(line);
    }
    if spec.run.design.paired() {
        let d = &spec.run.design;
        let series = series as u64;
        // A paired sweep holds every managed series' server up at once: one per target and
        // config.
        let managed = spec.targets.iter().filter(|t| t.kind.is_managed()).count();
        let starting = match managed * spec.configs.len().max(1) {
            0 => String::new(),
            1 => " + starting 1 server".to_string(),
            n => format!(" + starting {n} servers"),
        };
        let per_point =
            series * spec.run.warmup_s + spec.run.repeats.max(2) as u64 * series * d.slice_s;
        match d.budget_s {
            Some(b) => say(format!(
                "ETA: at most {} of measuring (the budget; points that decide early end sooner){starting} + prepare{}",
                format_duration(b),
                host_eta(&spec, &plan)
            )),
            None => say(format!(
                "ETA: {} ({} points × ({series} × {}s warmup + {} rounds × {series} × {}s slices){starting} + prepare{})",
                format_duration(listed.len() as u64 * per_point),
                listed.len(),
                spec.run.warmup_s,
                spec.run.repeats.max(2),
                d.slice_s,
                host_eta(&spec, &plan)
            )),
        }
        if let Some(c) = calibrate::load(&a.results_dir, &spec.name) {
            say(calibrate::summary(&c));
        }
        return Ok(Exit::Ok);
    }
    if plan.points.is_empty() {
        say(format!(
            "ETA: {} ({} host test points × {}s)",
            format_duration(plan.eta_s(&spec)),
            plan.host.len(),
            spec.run.duration_s
        ));
        return Ok(Exit::Ok);
    }
    say(format!(
        "ETA: {}{} ({} points × ({}s warmup + {}s run + ~2s set-up) + prepare{})",
        if spec.run.auto.is_some() {
            "at most "
        } else {
            ""
        },
        format_duration(plan.eta_s(&spec)),
        plan.max_points(&spec) - plan.host.len() as u64,
        spec.run.warmup_s,
        spec.run.duration_s,
        host_eta(&spec, &plan)
    ));
    if let Some(c) = calibrate::load(&a.results_dir, &spec.name) {
        say(calibrate::summary(&c));
    }
    Ok(Exit::Ok)
}

/// Connections sweepbench holds besides the workers (admin connection, headroom).
pub(crate) const MARGIN: u32 = 2;

/// How long a point may overrun its duration before it is ended as hung (a query stuck on a
/// lock or a dead network must not stall a nightly sweep): `[run] point_timeout`, by default
/// half the duration and at least 30 s.
fn point_grace_s(spec: &SweepSpec) -> f64 {
    spec.run.point_timeout_s as f64
}

/// `sweepbench report RUN_DIR`: re-renders report.md and report.html from the files.
/// `report RUN`: re-renders report.md and report.html and prints their paths; with `json`,
/// prints the report's model as JSON instead and writes nothing.
pub fn report(
    run: &Path,
    baseline: Option<&str>,
    json: bool,
    ev: &dyn Events,
) -> anyhow::Result<Exit> {
    // The figures are in points.csv; what the manifest adds (host, versions, the plan) is
    // missing from the report without it, which the reader should know.
    const LACKS: &str = "the report says nothing of the host, the tool's version or the plan";
    match crate::pipeline::results::load_manifest(run) {
        Ok(Some(_)) => {}
        Ok(None) => ev.warn(&format!("{}: no manifest.json: {LACKS}", run.display())),
        Err(e) => ev.warn(&format!("{e:#}: {LACKS}")),
    }
    if json {
        let m = crate::pipeline::report::model(run, baseline)?;
        ev.output_text(&crate::pipeline::report::render::json(&m)?);
        return Ok(Exit::Ok);
    }
    crate::pipeline::report::write(run, baseline)?;
    ev.output(&run.join("report.html").display().to_string());
    ev.output(&run.join("report.md").display().to_string());
    Ok(Exit::Ok)
}

/// The newest run directory of a sweep: where `latest` points, else the newest by name.
pub fn latest_run(results: &Path, sweep: &str) -> Option<PathBuf> {
    let root = results.join(sweep);
    if let Ok(target) = std::fs::read_link(root.join("latest")) {
        return Some(root.join(target));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !p.is_symlink())
        .collect();
    dirs.sort();
    dirs.pop()
}
