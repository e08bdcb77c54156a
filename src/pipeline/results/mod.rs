//! The run directory: results/<sweep>/<UTC yyyymmddTHHMMSSZ>/ with the sweep file as run
//! (passwords redacted), manifest.json, points.csv and intervals.csv (a row appended as
//! each point ends; a crash loses only the point in progress, whose torn row reading drops), histograms/, servers/,
//! report.md / report.html, and results/<sweep>/latest.

pub mod cost;
pub mod host;
pub mod import;
mod made;
mod manifest;
pub mod nightly;
pub mod profile;
mod run_dir;
pub mod servers;

pub use manifest::{load_host, load_manifest, Manifest, MergedPart, Shard, Summary};
pub use run_dir::{file_stem, points_and_intervals_csv, write_atomic, RunDir};
pub use servers::{load_variables, variable_diffs, write_server, Variables};

use crate::engine::exec::IntervalStats;
use crate::pipeline::spec::SweepSpec;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// How a point ended (points.csv `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointStatus {
    /// Measured; its figures count.
    Ok,
    /// Ended by an error (the record's `error` says which); the default until a point ends.
    #[default]
    Failed,
    /// Not run: the target could not take it (`--on-capacity=skip`).
    Skipped,
    /// Ended by Ctrl-C / SIGTERM.
    Interrupted,
}

impl PointStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Ok => "ok",
            PointStatus::Failed => "failed",
            PointStatus::Skipped => "skipped",
            PointStatus::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for PointStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What measured a point (points.csv `driver`): the native engine, the sysbench binary, or
/// — an imported run — the sysbench whose log was read, by the version its header printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Driver {
    #[default]
    Native,
    Sysbench,
    /// "sysbench 1.0.20" (or "sysbench (unknown version)").
    Log(String),
}

impl From<crate::pipeline::spec::LoadDriver> for Driver {
    fn from(d: crate::pipeline::spec::LoadDriver) -> Self {
        match d {
            crate::pipeline::spec::LoadDriver::Native => Driver::Native,
            crate::pipeline::spec::LoadDriver::Sysbench => Driver::Sysbench,
        }
    }
}

impl std::fmt::Display for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Driver::Native => "native",
            Driver::Sysbench => "sysbench",
            Driver::Log(s) => s,
        })
    }
}

impl std::str::FromStr for Driver {
    type Err = std::convert::Infallible;
    /// Any text reads: empty (files of the first builds) is the native engine.
    fn from_str(s: &str) -> Result<Driver, Self::Err> {
        Ok(match s {
            "" | "native" => Driver::Native,
            "sysbench" => Driver::Sysbench,
            other => Driver::Log(other.to_string()),
        })
    }
}

/// Ignored errors by server error code (points.csv `errors_by_code`: "1205:2 1213:5").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCounts(pub std::collections::BTreeMap<u16, u64>);

impl std::fmt::Display for ErrorCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (code, n) in &self.0 {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{code}:{n}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for ErrorCounts {
    type Err = String;
    fn from_str(s: &str) -> Result<ErrorCounts, String> {
        let mut out = std::collections::BTreeMap::new();
        for part in s.split_whitespace() {
            let parsed = part
                .split_once(':')
                .and_then(|(c, n)| Some((c.parse::<u16>().ok()?, n.parse::<u64>().ok()?)));
            let (code, n) = parsed
                .ok_or_else(|| format!("'{part}' is not an error code and a count (1213:5)"))?;
            *out.entry(code).or_default() += n;
        }
        Ok(ErrorCounts(out))
    }
}

/// Serialized as the text `Display` writes and read back by `FromStr`, for points.csv.
macro_rules! as_text {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
as_text!(Driver);
as_text!(ErrorCounts);

/// What a point measured (`PointRecord::kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A scaling curve's point: as many events as the threads can run.
    ClosedLoop,
    /// A scaling curve's point at a fixed arrival rate (`[run] rate`), per second.
    Paced { rate: u64 },
    /// A step of an SLA search: an open-loop rate tried against the latency bound; never
    /// compared with a curve's points.
    SlaStep { rate: u64 },
}

/// One row of points.csv. Times are UTC RFC 3339, durations seconds, latencies milliseconds,
/// rates per second; empty cells mean "not measured".
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PointRecord {
    pub run_id: String,
    pub point_id: String,
    pub target: String,
    pub config: String,
    pub driver: Driver,
    pub server_version: String,
    pub workload: String,
    pub threads: u32,
    pub repeat: u32,
    pub status: PointStatus,
    pub error: String,
    /// When the point started measuring, to the millisecond; none for an imported log.
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    pub duration_s: f64,
    pub transactions: u64,
    pub tps: f64,
    pub queries: u64,
    pub qps: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub lat_min_ms: f64,
    pub lat_avg_ms: f64,
    /// Percentiles a log did not print (imports) are empty, not 0.
    pub lat_p50_ms: Option<f64>,
    pub lat_p95_ms: f64,
    pub lat_p99_ms: Option<f64>,
    pub lat_p999_ms: Option<f64>,
    pub lat_max_ms: f64,
    pub client_cpu_s: f64,
    /// The client's CPU as a share of what it could use: client_cpu_s over duration ×
    /// min(threads, cores), percent (0 when not measured).
    #[serde(default)]
    pub client_cpu_pct: f64,
    pub server_cpu_s: Option<f64>,
    /// Ignored errors by server error code.
    #[serde(default)]
    pub errors_by_code: ErrorCounts,
    /// Open-loop arrivals per second asked for (`run.rate`, or an SLA search's step); 0 for
    /// a closed loop.
    #[serde(default)]
    pub rate: u64,
    /// Client processes that measured the point together (`[run] clients`); 0 in files
    /// written before the column existed, which means one.
    #[serde(default)]
    pub clients: u32,
    /// With several clients: the spread of their actual start instants, ms.
    #[serde(default)]
    pub start_skew_ms: Option<f64>,
    /// The share of the host's CPU (all cores, percent) that processes other than this
    /// client and the measured server took while the point ran, and the share the hypervisor
    /// stole (/proc/stat); none where not measured (a remote client, a model, older files).
    #[serde(default)]
    pub others_cpu_pct: Option<f64>,
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// The MySQL error code that failed the point (a server's, or a client-side 2002, 2003,
    /// 2013…), when it had one; files written before the column have it in `error`'s text,
    /// read once at load (`fill_error_code`).
    #[serde(default)]
    pub error_code: Option<u16>,
    /// The server's CPU per transaction, µs (server_cpu_s over transactions): what a
    /// transaction costs the server, comparable across thread counts and runs; none where the
    /// server's CPU was not measured or nothing completed.
    #[serde(default)]
    pub server_cpu_us_per_txn: Option<f64>,
    /// An SLA search's open-loop step (true), or a point of a scaling curve (false), as the
    /// plan made it; empty in files written before the column, whose ids say it.
    #[serde(default)]
    pub sla_step: Option<bool>,
}

impl PointRecord {
    /// Every measured figure of the record by its column name (the optional ones when
    /// present).
    pub fn figures(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("duration_s", self.duration_s),
            ("tps", self.tps),
            ("qps", self.qps),
            ("lat_min_ms", self.lat_min_ms),
            ("lat_avg_ms", self.lat_avg_ms),
            ("lat_p95_ms", self.lat_p95_ms),
            ("lat_max_ms", self.lat_max_ms),
            ("client_cpu_s", self.client_cpu_s),
            ("client_cpu_pct", self.client_cpu_pct),
        ];
        for (name, x) in [
            ("lat_p50_ms", self.lat_p50_ms),
            ("lat_p99_ms", self.lat_p99_ms),
            ("lat_p999_ms", self.lat_p999_ms),
            ("server_cpu_s", self.server_cpu_s),
            ("start_skew_ms", self.start_skew_ms),
            ("others_cpu_pct", self.others_cpu_pct),
            ("steal_pct", self.steal_pct),
        ] {
            if let Some(x) = x {
                v.push((name, x));
            }
        }
        v
    }

    /// The figures a verdict judges, in its metrics' order: tps, p95 and p99 (None where not
    /// recorded).
    pub fn judged_figures(&self) -> [Option<f64>; 3] {
        [Some(self.tps), Some(self.lat_p95_ms), self.lat_p99_ms]
    }

    /// Why the record's count and rate cannot both be true: a measured point's transactions
    /// and tps × duration agree within the rounding of a second's edges, and an import's
    /// within sysbench's own; tenfold apart is an edit, not a measurement.
    pub fn disagrees(&self) -> Option<String> {
        if self.status != PointStatus::Ok || self.duration_s <= 0.0 {
            return None;
        }
        let implied = self.tps * self.duration_s;
        let n = self.transactions as f64;
        let apart = if n > implied {
            n / implied.max(1.0)
        } else {
            implied / n.max(1.0)
        };
        (apart > 10.0 && (n - implied).abs() > 100.0).then(|| {
            format!(
                "transactions = {} but tps × duration_s = {implied:.0}",
                self.transactions
            )
        })
    }

    /// The columns computed from the record's own figures, set where every record is written
    /// (`RunDir::append_point`) and where one is read (`load_points`, so older files have
    /// them too): a new derived column is its field, its name in `POINT_COLUMNS` and one line
    /// here.
    pub fn derive(&mut self) {
        self.server_cpu_us_per_txn = self
            .server_cpu_s
            .filter(|_| self.transactions > 0)
            .map(|s| r4(s * 1e6 / self.transactions as f64));
    }

    /// A failed point of a file written before the `error_code` column: its code read once
    /// from sysbench's wording in `error` ("… returned error 1062 (…)").
    pub fn fill_error_code(&mut self) {
        if self.status != PointStatus::Failed || self.error_code.is_some() {
            return;
        }
        self.error_code = self
            .error
            .split("error ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|c| c.parse().ok());
    }

    /// Fails the point with `e`'s message, keeping its error code.
    pub fn set_error(&mut self, e: &anyhow::Error) {
        self.error = format!("{e:#}");
        self.error_code = crate::engine::Fatal::code_in(e);
    }

    /// Fails the point with the engine's fatal error.
    pub fn set_fatal(&mut self, f: &crate::engine::Fatal) {
        self.error = f.message.clone();
        self.error_code = f.code;
    }

    /// Client processes that measured the point (1 for files without the column).
    pub fn client_count(&self) -> u32 {
        self.clients.max(1)
    }

    /// What the point measured: a point of a scaling curve (closed loop, or paced at
    /// `[run] rate`), or an SLA search's open-loop step. From the `sla_step` column; a file
    /// written before it says so in the id (`…/rate<R>/t<N>/r1`).
    pub fn kind(&self) -> PointKind {
        let step = self
            .sla_step
            .unwrap_or_else(|| crate::pipeline::plan::sla_rate_of(&self.point_id).is_some());
        match step {
            true => PointKind::SlaStep { rate: self.rate },
            false if self.rate > 0 => PointKind::Paced { rate: self.rate },
            false => PointKind::ClosedLoop,
        }
    }

    /// An SLA search's open-loop step, not a point of a scaling curve.
    pub fn is_sla_step(&self) -> bool {
        matches!(self.kind(), PointKind::SlaStep { .. })
    }

    /// A host test's point (`host/-/cpu/t4/r1`): the machine's own curve, no server.
    pub fn is_host(&self) -> bool {
        crate::engine::host::is_host(&self.target, &self.config)
    }
}

/// One row of intervals.csv: a point's figures over one second (sysbench's interval line).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalRow {
    pub point_id: String,
    /// Seconds since the measurement started, at the end of the interval.
    pub t_s: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub reads_s: f64,
    pub writes_s: f64,
    pub other_s: f64,
    pub errors_s: f64,
    pub reconnects_s: f64,
    pub lat_p50_ms: f64,
    /// Latency at the run's --percentile (95 unless set).
    pub lat_pct_ms: f64,
    pub lat_p99_ms: f64,
    pub lat_max_ms: f64,
}

/// A point is client-bound from this share of the CPU its client could use (the report
/// marks it, the scaling model leaves it out).
pub const CLIENT_BOUND_PCT: f64 = 50.0;

/// The client's CPU over what it could have used: one core per connection, at most all of
/// them. Percent, two decimals; 0 when unknown.
pub fn client_cpu_pct(cpu_s: f64, duration_s: f64, threads: u32, cores: u32) -> f64 {
    let usable = duration_s * threads.min(cores).max(1) as f64;
    if cpu_s <= 0.0 || usable <= 0.0 {
        return 0.0;
    }
    (cpu_s / usable * 1e4).round() / 100.0
}

/// A point is starved when other processes took at least this share of the host's CPU while
/// it ran, or the hypervisor stole at least `STARVED_STEAL_PCT`: the report lists such
/// points with the figures; nothing is left out of a verdict for it.
pub const STARVED_OTHERS_PCT: f64 = 25.0;
pub const STARVED_STEAL_PCT: f64 = 10.0;

impl PointRecord {
    /// Why the point counts as starved ("others took 31 % of the CPU"), if it does.
    pub fn starved(&self) -> Option<String> {
        let mut why = Vec::new();
        if let Some(o) = self.others_cpu_pct.filter(|&o| o >= STARVED_OTHERS_PCT) {
            why.push(format!("other processes took {o:.0} % of the host's CPU"));
        }
        if let Some(s) = self.steal_pct.filter(|&s| s >= STARVED_STEAL_PCT) {
            why.push(format!("the hypervisor stole {s:.0} %"));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

/// Rounded for the CSV: more digits than this are noise, not information.
pub fn r4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl IntervalRow {
    fn new(point_id: &str, s: &IntervalStats) -> IntervalRow {
        IntervalRow {
            point_id: point_id.to_string(),
            t_s: r4(s.t_s),
            threads: s.threads,
            tps: r4(s.tps),
            qps: r4(s.qps),
            reads_s: r4(s.reads_s),
            writes_s: r4(s.writes_s),
            other_s: r4(s.other_s),
            errors_s: r4(s.errors_s),
            reconnects_s: r4(s.reconnects_s),
            lat_p50_ms: r4(s.lat_p50_ms),
            lat_pct_ms: r4(s.lat_pct_ms),
            lat_p99_ms: r4(s.lat_p99_ms),
            lat_max_ms: r4(s.lat_max_ms),
        }
    }
}

/// A run's intervals.csv rows (none when it has no such file).
pub fn load_intervals(run: &Path) -> anyhow::Result<Vec<IntervalRow>> {
    let path = run.join("intervals.csv");
    if !path.is_file() {
        return Ok(Vec::new());
    }
    read_csv(&path, &["point_id", "t_s", "tps"])
}

/// Every row of a CSV file with a header, each error naming the file and row.
/// Reads a CSV file of ours; `required` columns must be in its header (a header cut short by
/// a crash or a full disk would otherwise read as a run with no points).
/// A file of appended rows without a torn last one: a crash while a row was written leaves
/// it without its newline, and that row (the point in progress) is dropped; a resumed run
/// measures it again.
pub(crate) fn whole_lines(path: &Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if !bytes.ends_with(b"\n") {
        bytes.truncate(bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
    }
    Ok(bytes)
}

fn read_csv<T: serde::de::DeserializeOwned>(
    path: &Path,
    required: &[&str],
) -> anyhow::Result<Vec<T>> {
    let bytes = whole_lines(path)?;
    let mut r = csv::Reader::from_reader(&bytes[..]);
    let header = r
        .headers()
        .with_context(|| format!("reading {}", path.display()))?
        .clone();
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|c| !header.iter().any(|h| h == *c))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: the header lacks {} — the file was cut short (a crash or a full disk while it was written?) or is not sweepbench's",
            path.display(),
            missing.join(", ")
        );
    }
    r.deserialize()
        .enumerate()
        .map(|(i, row)| row.with_context(|| format!("{}: row {}", path.display(), i + 2)))
        .collect()
}

/// The text of a run's gate.md (`RunDir::write_gate`), if `--fail-on-regression` judged it.
pub fn load_gate(run: &Path) -> Option<String> {
    std::fs::read_to_string(run.join("gate.md")).ok()
}

/// Reads a run's points.csv.
pub fn load_points(run: &Path) -> anyhow::Result<Vec<PointRecord>> {
    let path = run.join("points.csv");
    let mut points: Vec<PointRecord> = read_csv(
        &path,
        &[
            "point_id", "target", "config", "workload", "threads", "repeat", "status", "tps",
        ],
    )?;
    // sweepbench never writes an infinite or undefined figure: one is an edit or damage, and
    // would poison every mean, interval and chart axis built from it.
    for (i, p) in points.iter().enumerate() {
        if let Some((name, v)) = p
            .figures()
            .into_iter()
            .find(|(_, v)| !v.is_finite() || *v < 0.0)
        {
            bail!(
                "{}: row {}: {name} = {v} is not a finite, non-negative figure (the file was edited or damaged); correct or remove that row",
                path.display(),
                i + 2
            );
        }
        if let Some(why) = p.disagrees() {
            bail!(
                "{}: row {}: {why} (the file was edited or damaged); correct or remove that row",
                path.display(),
                i + 2
            );
        }
    }
    for p in &mut points {
        p.fill_error_code();
        p.derive();
    }
    Ok(points)
}

/// Per-second throughput samples of each point of a run (intervals.csv), keyed by point id.
/// Empty when the run has none (imported logs, runs from before per-second sampling).
/// The points of a run's scaling curves: every point but an SLA search's open-loop steps
/// (`…/rate<R>/t<N>/r1`), which measure another thing at the same thread counts and must not
/// be compared with closed-loop points.
pub fn load_curve_points(run: &Path) -> anyhow::Result<Vec<PointRecord>> {
    let mut v = load_points(run)?;
    v.retain(|p| !p.is_sla_step());
    Ok(v)
}

pub fn load_tps_samples(run: &Path) -> anyhow::Result<std::collections::HashMap<String, Vec<f64>>> {
    let mut out: std::collections::HashMap<String, Vec<f64>> = Default::default();
    for r in load_intervals(run)? {
        out.entry(r.point_id).or_default().push(r.tps);
    }
    Ok(out)
}

/// points.csv header, in `PointRecord` field order (a test keeps them equal).
pub const POINT_COLUMNS: &[&str] = &[
    "run_id",
    "point_id",
    "target",
    "config",
    "driver",
    "server_version",
    "workload",
    "threads",
    "repeat",
    "status",
    "error",
    "started_at",
    "duration_s",
    "transactions",
    "tps",
    "queries",
    "qps",
    "reads",
    "writes",
    "other",
    "errors",
    "reconnects",
    "lat_min_ms",
    "lat_avg_ms",
    "lat_p50_ms",
    "lat_p95_ms",
    "lat_p99_ms",
    "lat_p999_ms",
    "lat_max_ms",
    "client_cpu_s",
    "client_cpu_pct",
    "server_cpu_s",
    "errors_by_code",
    "rate",
    "clients",
    "start_skew_ms",
    "others_cpu_pct",
    "steal_pct",
    "error_code",
    "server_cpu_us_per_txn",
    "sla_step",
];

const INTERVAL_COLUMNS: &[&str] = &[
    "point_id",
    "t_s",
    "threads",
    "tps",
    "qps",
    "reads_s",
    "writes_s",
    "other_s",
    "errors_s",
    "reconnects_s",
    "lat_p50_ms",
    "lat_pct_ms",
    "lat_p99_ms",
    "lat_max_ms",
];

#[cfg(test)]
mod tests;
