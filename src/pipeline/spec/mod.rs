//! Sweep files: TOML → validated `SweepSpec`. Every error names file:line:column and the key,
//! and unknown keys are refused with the nearest valid name.

mod adaptive;
pub mod cores;
pub mod design;
pub mod distributed;
mod filter;
mod host;
mod lexical;
pub mod quick;
pub mod raw;
mod sections;
pub mod shape;
pub mod size;
pub mod target;
pub mod words;

/// Whether `s` may name a sweep (it names its results directory): letters, digits, '-', '_'
/// and '.', starting with a letter or digit.
pub fn valid_name(s: &str) -> bool {
    lexical::name_ok(s)
}

use lexical::{element_span, fraction, toml_literal, unknown_field_hint};
pub use lexical::{name_ok, parse_duration, var_name_ok, NAME_RULE};

pub use filter::Filter;

use crate::engine::config::{self, ConnOptions, EngineConfig, Overrides, WorkloadKind};
use crate::visible::visible;
use raw::RawSweep;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use target::TargetKind;
use toml::Spanned;

/// A problem in a sweep file, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    /// The file's path and the message quote what the file (or its name) holds: shown with
    /// control characters escaped, so a hostile sweep file cannot drive the terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, message) = (visible(&self.file), visible(&self.message));
        // Line 0: the file as a whole (it cannot be read), not a place in it.
        if self.line == 0 {
            return write!(f, "{file}: {message}");
        }
        write!(f, "{file}:{}:{}: {message}", self.line, self.column)
    }
}

impl std::error::Error for SpecError {}

pub use words::{Order, PreparePolicy};

#[derive(Debug, Clone, serde::Serialize)]
pub struct DataSpec {
    pub tables: u32,
    /// Rows per table (`table_size`); with `size`, a placeholder until each target is sized
    /// (`SweepSpec::table_size_of`).
    pub table_size: u32,
    pub storage_engine: String,
    pub prepare: PreparePolicy,
    /// `size = "2G"` or relative to each target's server, instead of `table_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<size::SizeOf>,
    /// What each target's `size` came to, once its data is prepared.
    pub sized: size::SizedTargets,
}

/// Repeats per point when a sweep file does not say: the fewest with which the verdicts
/// (docs/statistics.md) can measure run-to-run noise and reach a verdict at 5 % on a quiet
/// machine.
pub const DEFAULT_REPEATS: u32 = 3;
/// Repeats (or a paired design's fixed rounds) per point at most: beyond this a plan is
/// months long, and its ids and counters stop making sense.
pub const MAX_REPEATS: u32 = 10_000;

/// Warmup when a sweep file does not say: a tenth of the duration, 1 to 10 s, so the samples
/// the verdicts use start after connections, caches and the buffer pool settled.
pub fn default_warmup_s(duration_s: u64) -> u64 {
    (duration_s / 10).clamp(1, 10)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSpec {
    /// The server workloads, in file order.
    pub workloads: Vec<WorkloadKind>,
    /// The host tests among `workloads` (`cpu`, `memory`): the machine's own curve, measured
    /// once per thread count and repeat before any server's points (`host/-/cpu/t4/r1`).
    pub host_tests: Vec<crate::engine::host::HostKind>,
    /// The fileio host test's options (`[fileio]`, sysbench's defaults and `rndrw`), when
    /// `host_tests` has it.
    pub fileio: Option<crate::engine::host::fileio::FileIoOptions>,
    /// Ascending, without duplicates; with `auto`, the doubling ladder up to `to`. With
    /// multipliers of cores, every target's counts together (`SweepSpec::threads_of` gives
    /// one target's).
    pub threads: Vec<u32>,
    /// `"2×cores"` entries of `threads`: multipliers of each target's cores.
    pub per_core: Vec<f64>,
    /// `threads = "auto"` (or a table): thread counts chosen while the sweep runs.
    pub auto: Option<crate::pipeline::adaptive::AutoThreads>,
    /// `rates = "auto"` with `sla`: each native series' capacity at a p99 limit.
    pub sla: Option<crate::pipeline::adaptive::Sla>,
    pub duration_s: u64,
    pub warmup_s: u64,
    pub repeats: u32,
    /// How often progress lines are printed, seconds (0: never). Samples are taken every
    /// second whatever this says.
    pub report_interval_s: u64,
    pub rate: u64,
    pub order: Order,
    /// How long a point may run past its duration before it is ended as hung, seconds.
    pub point_timeout_s: u64,
    /// Load generators: the native engine and/or the sysbench binary, in the file's order.
    pub drivers: Vec<LoadDriver>,
    /// Client processes each point's threads are split over; ascending (an axis).
    pub clients: Vec<u32>,
    /// Sequential or paired, with the paired design's slice and budget.
    pub design: design::DesignSpec,
    pub profile: words::Profile,
}

impl RunSpec {
    /// True when points name their driver (anything but the native engine alone).
    pub fn driver_in_ids(&self) -> bool {
        self.drivers != [LoadDriver::Native]
    }

    /// Whether the sysbench binary measures points too.
    pub fn uses_sysbench(&self) -> bool {
        self.drivers.contains(&LoadDriver::Sysbench)
    }
}

/// What generates a point's load (`[run] drivers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadDriver {
    /// The native engine.
    Native,
    /// The sysbench binary on this host.
    Sysbench,
}

impl LoadDriver {
    /// The name in sweep files, point ids and points.csv.
    pub fn name(self) -> &'static str {
        match self {
            LoadDriver::Native => "native",
            LoadDriver::Sysbench => "sysbench",
        }
    }
}

impl std::fmt::Display for LoadDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    /// For a proxy target, the server of the target it stands in front of (a managed one is
    /// started for it alone, from the same spec).
    pub kind: TargetKind,
    /// `proxy = { kind = "haproxy", target = "…" }`: measured through a proxy sweepbench
    /// starts.
    pub proxy: Option<target::ProxySpec>,
    /// `storage_engine = "rocksdb"`: this target's tables, instead of `[data]`'s engine.
    pub storage_engine: Option<String>,
    /// Its server's CPUs: `cores = N`, a managed server's class, or this host's for a managed
    /// server without one; None when not known.
    pub cores: Option<f64>,
    /// Its server's memory, bytes: a managed server's class, this host's RAM for a managed
    /// server without one, or `memory = "8G"` on another target; None when not known.
    pub memory: Option<u64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Config {
    pub name: String,
    pub mycnf: Option<PathBuf>,
    /// Server variables as (name, value) in SQL literal form.
    pub vars: Vec<(String, String)>,
}

/// A validated sweep.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub path: PathBuf,
    /// The file's text with every password redacted (`target::redact_source`): what a run
    /// stores as sweep.toml.
    pub source: String,
    pub name: String,
    pub description: String,
    pub baseline: Option<String>,
    /// `control = "target/config"`: the baseline is a pinned control measured in the same
    /// rounds, and the gate follows each other series' ratio to it from run to run
    /// (`judge::control`) instead of judging the series against it within the run.
    pub control: bool,
    pub data: DataSpec,
    pub run: RunSpec,
    /// sysbench options for every point, as `--name=value` pairs.
    /// `[workload_options]`, typed.
    pub workload_options: Overrides,
    pub targets: Vec<Target>,
    pub configs: Vec<Config>,
    pub include: Vec<Filter>,
    pub exclude: Vec<Filter>,
    /// Where client processes run.
    pub executor: distributed::Executor,
    /// Each target's thread counts when `run.threads` has multipliers of cores (else empty:
    /// every target runs `run.threads`).
    pub target_threads: std::collections::BTreeMap<String, Vec<u32>>,
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, message: impl Into<String>) -> SpecError {
        let (line, column) = line_col(self.text, span.start);
        SpecError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

impl SweepSpec {
    pub fn load(path: &Path) -> Result<SweepSpec, SpecError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| SpecError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read the sweep file: {e}"),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let text = String::from_utf8_lossy(good);
            let (line, column) = line_col(&text, text.len());
            SpecError {
                file: file.clone(),
                line,
                column,
                message: format!(
                    "byte 0x{:02x} is not UTF-8: save the sweep file as UTF-8",
                    e.as_bytes()[good.len()]
                ),
            }
        })?;
        SweepSpec::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<SweepSpec, SpecError> {
        let file = path.display().to_string();
        let cx = Ctx { file: &file, text };
        let raw: RawSweep = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            cx.err(span, unknown_field_hint(e.message()))
        })?;
        let name = raw.name.get_ref().clone();
        if !name_ok(&name) {
            return Err(cx.err(
                raw.name.span(),
                format!("name '{name}': {NAME_RULE} (it names the results directory)"),
            ));
        }
        let data = Self::data(&cx, &raw)?;
        let mut run = Self::run(&cx, &raw)?;
        run.fileio = host::fileio(&cx, &raw, &run)?;
        Self::check_clients(&cx, &raw, &run)?;
        let executor = Self::executor(&cx, &raw)?;
        if raw.targets.is_empty() {
            return Err(cx.err(0..0, "no [[targets]]: add at least one target"));
        }
        let mut targets = Self::targets(&cx, &raw)?;
        cores::cores(&cx, &raw, &mut targets)?;
        cores::memory(&cx, &raw, &mut targets, data.size)?;
        let target_threads = cores::resolve(&cx, &raw, &run.threads, &run.per_core, &targets)?;
        if !target_threads.is_empty() {
            let mut all: Vec<u32> = target_threads.values().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            run.threads = all;
        }
        if let Some(t) = raw
            .targets
            .iter()
            .find(|t| t.name.get_ref() == crate::engine::host::HOST_TARGET)
        {
            if !run.host_tests.is_empty() {
                return Err(cx.err(
                    t.name.span(),
                    "targets: 'host' names the host tests' series (run.workloads has cpu or memory); give this target another name",
                ));
            }
        }
        Self::check_executor(&cx, &raw, &targets, &run, &executor)?;
        Self::sysbench_tls(&cx, &raw, &targets, &run)?;
        Self::synthetic_limits(&cx, &raw, &targets, &run, &executor)?;
        let configs = Self::configs(&cx, &raw)?;
        let filters = |list: &[Spanned<std::collections::BTreeMap<String, toml::Value>>]| -> Result<Vec<Filter>, SpecError> {
            list.iter().map(|f| Self::filter(&cx, f)).collect()
        };
        let include = filters(&raw.include)?;
        let exclude = filters(&raw.exclude)?;
        let baseline = Self::baseline(&cx, &raw, &targets, &configs)?;
        design::check(
            &cx,
            &raw,
            &mut run,
            matches!(executor, distributed::Executor::Local),
            &targets,
            &configs,
        )?;
        if let Some(c) = &raw.control {
            if !run.design.paired() {
                return Err(cx.err(
                    c.span(),
                    "control = … needs the series measured in the same rounds: set design = \"paired\" in [run] (a control measured at another time absorbs none of the host's noise)".to_string(),
                ));
            }
        }
        let spec = SweepSpec {
            path: path.to_path_buf(),
            source: target::redact_source(text, raw.targets.iter().filter_map(|t| t.url.as_ref())),
            name,
            description: raw.description.clone().unwrap_or_default(),
            baseline,
            control: raw.control.is_some(),
            data,
            run,
            workload_options: raw.workload_options.clone(),
            targets,
            configs,
            include,
            exclude,
            executor,
            target_threads,
        };
        Ok(spec)
    }

    /// `baseline = "target[/config]"` (or `control = …`, a baseline that is a pinned control),
    /// checked against the sweep's targets and configs.
    fn baseline(
        cx: &Ctx<'_>,
        raw: &RawSweep,
        targets: &[Target],
        configs: &[Config],
    ) -> Result<Option<String>, SpecError> {
        let (key, given) = match (&raw.baseline, &raw.control) {
            (Some(_), Some(c)) => return Err(cx.err(
                c.span(),
                "control and baseline both given: the control is the baseline; keep one of them"
                    .to_string(),
            )),
            (None, Some(c)) => ("control", Some(c)),
            (b, None) => ("baseline", b.as_ref()),
        };
        Ok(match given {
            None => None,
            Some(b) => {
                let s = b.get_ref().clone();
                let (t, c) = s
                    .split_once('/')
                    .unwrap_or((s.as_str(), configs[0].name.as_str()));
                if !targets.iter().any(|x| x.name == t) || !configs.iter().any(|x| x.name == c) {
                    return Err(cx.err(
                        b.span(),
                        format!("{key} '{s}' names no target/config of this sweep"),
                    ));
                }
                Some(format!("{t}/{c}"))
            }
        })
    }

    fn data(cx: &Ctx<'_>, raw: &RawSweep) -> Result<DataSpec, SpecError> {
        let d = &raw.data;
        let prepare = words::or(&d.prepare, PreparePolicy::Auto);
        let engine = d
            .storage_engine
            .as_ref()
            .map_or("innodb".to_string(), |e| e.get_ref().clone());
        if let Err(why) = config::check_engine_name(&engine) {
            let span = d.storage_engine.as_ref().map_or(0..0, |e| e.span());
            return Err(cx.err(span, format!("data.storage_engine: {why}")));
        }
        let tables = d.tables.as_ref().map_or(1, |t| *t.get_ref());
        if tables == 0 || tables > config::MAX_TABLES {
            return Err(cx.err(
                d.tables.as_ref().map_or(0..0, |t| t.span()),
                format!(
                    "data.tables = {tables}: expected 1 to {} (each connection prepares every statement on every table)",
                    config::MAX_TABLES
                ),
            ));
        }
        let table_size = d.table_size.as_ref().map_or(10_000, |t| *t.get_ref());
        if table_size == 0 {
            // sysbench prepares empty tables and `bench` does too; a sweep would record the
            // speed of finding nothing as a point.
            return Err(cx.err(
                d.table_size.as_ref().map_or(0..0, |t| t.span()),
                "data.table_size must be at least 1: a point selecting from empty tables measures nothing",
            ));
        }
        let size = match &d.size {
            None => None,
            Some(_) if d.table_size.is_some() => {
                return Err(cx.err(
                    d.size.as_ref().map_or(0..0, |s| s.span()),
                    "data: give size or table_size, not both (size derives each target's rows from its measured row size)",
                ))
            }
            Some(s) => Some(size::SizeOf::parse(s.get_ref()).ok_or_else(|| {
                cx.err(
                    s.span(),
                    format!("data.size = \"{}\": expected a size such as \"2G\" (at least 1M), or \"1.2 × buffer_pool\" / \"1.2 × memory\" (each target's own)", s.get_ref()),
                )
            })?),
        };
        Ok(DataSpec {
            tables,
            table_size,
            storage_engine: engine,
            prepare,
            size,
            sized: Default::default(),
        })
    }

    /// `[run] workloads`: the sysbench scripts (the table's, those on the common tables) and
    /// the host tests, each once in the order given; an unknown name refused with the
    /// nearest known one.
    fn workloads(
        cx: &Ctx<'_>,
        r: &raw::RawRun,
    ) -> Result<(Vec<WorkloadKind>, Vec<crate::engine::host::HostKind>), SpecError> {
        let mut workloads = Vec::new();
        let mut host_tests = Vec::new();
        for w in r.workloads.get_ref() {
            if let Some(h) = crate::engine::host::HostKind::from_name(w.get_ref()) {
                if !host_tests.contains(&h) {
                    host_tests.push(h);
                }
                continue;
            }
            let kind = WorkloadKind::from_name(w.get_ref()).ok_or_else(|| {
                // A workload of a table per thread is not yet run in sweeps (below).
                let names: Vec<&str> = WorkloadKind::all()
                    .filter(|k| k.uses_oltp_tables())
                    .map(|k| k.name())
                    .collect();
                let hint = names
                    .iter()
                    .chain(&["cpu", "memory", "fileio"])
                    .map(|n| (strsim::levenshtein(w.get_ref(), n), *n))
                    .min()
                    .filter(|(d, _)| *d <= 4)
                    .map(|(_, n)| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                cx.err(
                    w.span(),
                    format!(
                        "run.workloads: unknown workload '{}'{hint}; sweeps run {}, and the host tests cpu, memory and fileio",
                        w.get_ref(),
                        names.join(", ")
                    ),
                )
            })?;
            if !kind.uses_oltp_tables() {
                return Err(cx.err(
                    w.span(),
                    format!(
                        "run.workloads: {} needs one table per thread and is not supported in sweeps yet",
                        kind.name()
                    ),
                ));
            }
            if !workloads.contains(&kind) {
                workloads.push(kind);
            }
        }
        Ok((workloads, host_tests))
    }

    fn run(cx: &Ctx<'_>, raw: &RawSweep) -> Result<RunSpec, SpecError> {
        let r = &raw.run;
        let (workloads, host_tests) = Self::workloads(cx, r)?;
        if workloads.is_empty() && host_tests.is_empty() {
            return Err(cx.err(r.workloads.span(), "run.workloads is empty"));
        }
        let (threads, per_core, auto) = Self::threads(cx, &r.threads)?;
        let sla = Self::sla(cx, r)?;
        let dur = |v: &Option<Spanned<String>>,
                   key: &str,
                   default: u64|
         -> Result<u64, SpecError> {
            match v {
                None => Ok(default),
                Some(s) => {
                    let v = s.get_ref();
                    // All digits but too big to count is a length, not a typo.
                    let digits = v.trim().trim_end_matches(['h', 'm', 's']).trim();
                    let long = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                    match parse_duration(v) {
                        Some(d) if d <= config::MAX_SECONDS => Ok(d),
                        _ if long => Err(cx.err(s.span(), format!("run.{key} = '{v}': more than ten years"))),
                        _ => Err(cx.err(s.span(), format!("run.{key} = '{v}': expected a duration such as \"60s\", \"5m\" or \"1h\""))),
                    }
                }
            }
        };
        let duration_s = dur(&r.duration, "duration", 60)?;
        if duration_s == 0 {
            return Err(cx.err(
                r.duration.as_ref().map_or(0..0, |d| d.span()),
                "run.duration must be more than 0s",
            ));
        }
        let order = words::or(&r.order, Order::Sequential);
        let repeats = r.repeats.as_ref().map_or(DEFAULT_REPEATS, |x| *x.get_ref());
        if repeats == 0 {
            return Err(cx.err(
                r.repeats.as_ref().map_or(0..0, |x| x.span()),
                "run.repeats must be at least 1",
            ));
        }
        if repeats > MAX_REPEATS {
            return Err(cx.err(
                r.repeats.as_ref().map_or(0..0, |x| x.span()),
                format!("run.repeats = {repeats}: at most {MAX_REPEATS} (with design = \"paired\", a budget runs rounds until each point is decided)"),
            ));
        }
        let clients = Self::clients(cx, raw)?;
        let design = design::parse(cx, raw, &dur)?;
        Ok(RunSpec {
            design,
            profile: words::or(&r.profile, words::Profile::Off),
            clients,
            workloads,
            host_tests,
            fileio: None,
            threads,
            per_core,
            auto,
            sla,
            duration_s,
            warmup_s: dur(&r.warmup, "warmup", default_warmup_s(duration_s))?,
            repeats,
            report_interval_s: dur(&r.report_interval, "report_interval", 10)?,
            rate: match &r.rate {
                Some(x) if *x.get_ref() > config::MAX_RATE => {
                    return Err(cx.err(
                        x.span(),
                        format!(
                            "run.rate = {}: expected 0 (closed loop) to {} transactions/s",
                            x.get_ref(),
                            config::MAX_RATE
                        ),
                    ))
                }
                x => x.as_ref().map_or(0, |x| *x.get_ref()),
            },
            order,
            point_timeout_s: dur(&r.point_timeout, "point_timeout", (duration_s / 2).max(30))?,
            drivers: match &r.drivers {
                None => vec![LoadDriver::Native],
                Some(list) => {
                    let mut out: Vec<LoadDriver> = Vec::new();
                    for d in list.get_ref() {
                        let driver = match d.get_ref().as_str() {
                            "native" => LoadDriver::Native,
                            "sysbench" => LoadDriver::Sysbench,
                            other => {
                                return Err(cx.err(d.span(), format!("run.drivers: unknown driver '{other}': expected \"native\" or \"sysbench\"")))
                            }
                        };
                        if !out.contains(&driver) {
                            out.push(driver);
                        }
                    }
                    if out.is_empty() {
                        return Err(cx.err(list.span(), "run.drivers is empty"));
                    }
                    out
                }
            },
        })
    }

    fn filter(
        cx: &Ctx<'_>,
        f: &Spanned<std::collections::BTreeMap<String, toml::Value>>,
    ) -> Result<Filter, SpecError> {
        let mut out = Filter::default();
        for (k, v) in f.get_ref() {
            let bad = || {
                cx.err(
                    f.span(),
                    format!("filter key '{k}' has a value of the wrong type"),
                )
            };
            match k.as_str() {
                "target" => out.target = Some(v.as_str().ok_or_else(bad)?.to_string()),
                "config" => out.config = Some(v.as_str().ok_or_else(bad)?.to_string()),
                "workload" => out.workload = Some(v.as_str().ok_or_else(bad)?.to_string()),
                "threads" => {
                    out.threads = Some(match v {
                        toml::Value::Integer(i) => vec![*i as u32],
                        toml::Value::Array(a) => a
                            .iter()
                            .map(|x| x.as_integer().map(|i| i as u32).ok_or_else(bad))
                            .collect::<Result<_, _>>()?,
                        _ => return Err(bad()),
                    })
                }
                other => {
                    return Err(cx.err(
                        f.span(),
                        format!(
                            "filter key '{other}': expected target, config, workload or threads"
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The thread counts `target` runs: its own when `run.threads` has multipliers of cores,
    /// else `run.threads`.
    pub fn threads_of(&self, target: &str) -> &[u32] {
        self.target_threads
            .get(target)
            .map_or(&self.run.threads, Vec::as_slice)
    }

    /// Rows per table on `target`: what its `[data] size` came to once prepared, else
    /// `table_size`.
    pub fn table_size_of(&self, target: &str) -> u32 {
        self.data
            .sized
            .get(target)
            .map_or(self.data.table_size, |s| s.rows)
    }

    /// The storage engine of `target`'s tables: its own `storage_engine`, else `[data]`'s.
    pub fn engine_of(&self, target: &str) -> &str {
        self.targets
            .iter()
            .find(|t| t.name == target)
            .and_then(|t| t.storage_engine.as_deref())
            .unwrap_or(&self.data.storage_engine)
    }

    /// What the engine runs for one point: sysbench's defaults, then `[data]`, `[run]` and
    /// `[workload_options]`, connecting as `conn` says.
    pub fn engine_config(
        &self,
        workload: WorkloadKind,
        threads: u32,
        conn: ConnOptions,
    ) -> EngineConfig {
        let mut c = EngineConfig::new(workload);
        c.conn = conn;
        c.threads = threads;
        c.time_s = self.run.duration_s;
        c.warmup_s = self.run.warmup_s;
        c.rate = self.run.rate;
        c.wl.tables = self.data.tables;
        c.wl.table_size = self.data.table_size;
        c.wl.storage_engine = self.data.storage_engine.clone();
        self.workload_options.apply(&mut c);
        c
    }
}

#[cfg(test)]
mod design_tests;
#[cfg(test)]
mod tests;
