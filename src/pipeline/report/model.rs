//! The report's model: everything a report shows, as the renderers receive it (built in
//! mod.rs and files.rs; formatted by the templates only).

use super::{cost, host, proxy, winners};
use crate::pipeline::judge::verdict::{Sides, Verdict};
use crate::pipeline::results::PointStatus;

#[derive(Debug, Clone, serde::Serialize)]
pub struct Cell {
    pub tps: f64,
    pub qps: f64,
    pub lat_avg_ms: f64,
    pub p95_ms: f64,
    /// None when no repeat has it (imported sysbench logs print one percentile).
    pub p99_ms: Option<f64>,
    /// Client CPU per query (the load generator's own cost), microseconds; None if unknown.
    pub client_us_per_query: Option<f64>,
    /// The client's share of the CPU it could use, percent; None if unknown.
    pub client_cpu_pct: Option<f64>,
    /// The client may have limited this point (see CLIENT_BOUND_METHOD).
    pub client_bound: bool,
    /// Server CPU per query (managed servers), microseconds; None if unknown.
    pub server_us_per_query: Option<f64>,
    /// Repeats that ended ok.
    pub repeats: usize,
    /// (max − min) / median of tps over the repeats, percent; None with one repeat.
    pub spread_pct: Option<f64>,
    /// tps change against the baseline series at this thread count, percent.
    pub tps_delta_pct: Option<f64>,
    pub qps_delta_pct: Option<f64>,
    pub p95_delta_pct: Option<f64>,
    /// The point against the baseline (tps, p95 and p99 judged together), from the run's
    /// answers (`judge::answers`); None (written "") for the baseline itself or a point not
    /// judged.
    #[serde(serialize_with = "crate::pipeline::judge::verdict::word_or_empty")]
    pub verdict: Option<Verdict>,
    /// The same per metric, and the interval of the tps and p95 changes, percent.
    #[serde(serialize_with = "crate::pipeline::judge::verdict::word_or_empty")]
    pub tps_verdict: Option<Verdict>,
    #[serde(serialize_with = "crate::pipeline::judge::verdict::word_or_empty")]
    pub p95_verdict: Option<Verdict>,
    pub tps_lo_pct: Option<f64>,
    pub tps_hi_pct: Option<f64>,
    pub p95_lo_pct: Option<f64>,
    pub p95_hi_pct: Option<f64>,
    /// Why an undecided point is undecided ("noise unknown: 1 repeat …").
    pub verdict_note: String,
    /// Repeats (or slices) measured while the host was starved (`PointRecord::starved`).
    pub starved: usize,
    /// The repeats' tps, p95 and p99, as the verdicts and the chart's band read them.
    #[serde(skip)]
    pub sides: Sides,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub threads: u32,
    /// One per series, in series order; None where the point did not run ok.
    pub cells: Vec<Option<Cell>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Peak {
    pub series: String,
    pub tps: f64,
    pub threads: u32,
    pub qps: f64,
    pub lat_avg_ms: f64,
    pub p95_ms: f64,
    pub client_us_per_query: Option<f64>,
    pub client_cpu_pct: Option<f64>,
    pub client_bound: bool,
    pub server_us_per_query: Option<f64>,
    pub tps_delta_pct: Option<f64>,
    /// "still rising at 16 threads: add 32, 64" when the best is the highest thread count
    /// measured (no turn down, so no peak); empty otherwise.
    pub rising: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct WorkloadSection {
    pub workload: String,
    pub rows: Vec<Row>,
    pub peaks: Vec<Peak>,
    pub scaling_svg: String,
    pub latency_svg: String,
    /// p99 against throughput per series (the hockey stick).
    pub hockey_svg: String,
    /// The USL model of each series with ok points, in series order.
    pub scaling: Vec<crate::pipeline::judge::scaling::Scaling>,
    /// How each series' coefficients differ from the baseline's.
    pub scaling_notes: Vec<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct VarDiff {
    pub name: String,
    /// One value per series, in series order.
    pub values: Vec<String>,
    /// What it says about performance: the table leads with what moves it and folds away
    /// what always differs.
    pub weight: crate::pipeline::results::servers::Weight,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Problem {
    pub point_id: String,
    pub status: PointStatus,
    pub error: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ErrorCount {
    pub code: String,
    pub points: usize,
}

/// One row of the study's table (`study`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StudyRow {
    /// The target, as the study's "instance" column names it.
    pub target: String,
    /// Its instance class ("0.5 CPUs, 1 GiB"); empty when its server had the whole host.
    pub class: String,
    /// The config (a parameter template), with the driver where it is not the native one.
    pub template: String,
    pub version: String,
    pub workload: String,
    pub threads: u32,
    /// "2×cores" where the sweep asked for this count as a multiple of the target's cores.
    pub of_cores: String,
    pub qps: f64,
    pub tps: f64,
    pub lat_avg_ms: f64,
    pub p95_ms: f64,
    /// Repeats (or slices) the figures are the geometric means of.
    pub repeats: usize,
    /// Stalls and their seconds over the repeats (`stability`); None where the windows were
    /// too short to say (under `stability::MIN_SECONDS`).
    pub stalls: Option<usize>,
    pub stalled_s: Option<usize>,
}

/// Everything a report shows; renderers only format it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReportModel {
    pub sweep: String,
    pub run_id: String,
    pub description: String,
    /// `target/config` names, the baseline first.
    pub series: Vec<String>,
    pub baseline: String,
    /// Server version per series ("" when unknown).
    pub versions: Vec<String>,
    pub workloads: Vec<WorkloadSection>,
    pub var_diffs: Vec<VarDiff>,
    /// How many of `var_diffs` always differ between versions (folded away in the report).
    pub var_always: usize,
    /// What confounds the comparison (a changed default character set), said in the headline.
    pub confounders: Vec<String>,
    /// What reading the rows needs and is no confounder (thread counts from cores).
    pub notes: Vec<String>,
    /// The storage engine of each series' tables (servers/*/engine.txt), where known.
    pub engines: std::collections::BTreeMap<String, String>,
    /// Each series' tables in brief (servers/*/tables.tsv), in `series` order; "" where
    /// unknown, empty when no series has them.
    pub tables: Vec<String>,
    /// The instance class of each series' server (servers/*/class.txt), where it had one.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub classes: std::collections::BTreeMap<String, String>,
    pub problems: Vec<Problem>,
    /// Points measured while other processes took much of the host's CPU or the hypervisor
    /// stole it (`PointRecord::starved`), with why; shown, never left out of a verdict.
    pub starved: Vec<Problem>,
    /// The rule that marks a point starved, as the report states it.
    pub starved_rule: String,
    pub errors_by_code: Vec<ErrorCount>,
    /// Ignored errors (deadlocks, lock waits …) summed per series.
    pub ignored_errors: Vec<u64>,
    /// The same per series by server error code, e.g. "1213 × 5, 1205 × 2".
    pub ignored_by_code: Vec<String>,
    /// Settings that differ between series but cannot matter (e.g. sync_binlog with the
    /// binary log off).
    pub warnings: Vec<String>,
    /// One line per compared series: "b vs a: unchanged at 6/8 points, inconclusive at 2".
    pub headlines: Vec<String>,
    pub threshold_pct: f64,
    /// The thresholds in words, as every verdict states them ("±5 %, p95 and p99 ±10 %").
    pub threshold: String,
    pub verdict_method: &'static str,
    pub client_bound_method: &'static str,
    pub scaling_method: &'static str,
    pub points_total: usize,
    pub points_ok: usize,
    /// A paired run's own verdicts (verdicts.json): the decisive ones, judged round by round.
    pub paired: Option<crate::pipeline::judge::verdicts_file::Verdicts>,
    /// The same as a Markdown table.
    pub paired_markdown: Option<String>,
    /// Proxy targets against the targets they stand in front of ("Proxy cost").
    pub proxy_cost: Vec<proxy::ProxyCostRow>,
    /// What `--fail-on-regression` compared this run with, and its verdicts (gate.md).
    pub gate: Option<String>,
    /// Three or more series: the fastest per workload and thread count (`winners`).
    pub winners: Vec<winners::Winner>,
    pub winners_method: &'static str,
    pub steadiest_method: &'static str,
    /// "12 of 40 points ran on a starved host …", for the headline; empty when none did.
    pub starved_share: String,
    /// The machine's own curve (host tests) beside the servers'.
    pub host: Option<host::HostSection>,
    /// The server's cost per transaction per workload (status.csv), and for every decided
    /// change the counters that moved with it.
    pub efficiency: Vec<cost::EffSection>,
    pub why: Vec<cost::Why>,
    /// A chain's answer step by step (`steps`): also the first of `headlines`.
    pub steps: Vec<String>,
    /// What each node of a several-endpoint target did (`nodes`).
    pub nodes: Vec<super::nodes::NodeRow>,
    /// How steady each point's seconds were, where its window was long enough (`stability`).
    pub stability: Vec<super::stability::StabilityRow>,
    /// Each candidate's stability judged against the baseline's, as sentences
    /// (`stability::verdicts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stability_verdicts: Vec<String>,
    /// Each candidate's stability headline (`stability::headlines`), also among `headlines`;
    /// the run says them at its end beside its throughput answers.
    #[serde(skip)]
    pub stability_headlines: Vec<String>,
    /// Throughput over time per point of a long run, as SVG (`stability::charts`).
    pub stability_svg: Vec<String>,
    /// The study's layout of the run (`study`): every series' figures per workload and
    /// thread count with its class, template, version and stalls; in the report when
    /// `study_shown` (the sweep's `study_table = true`), in study.csv always.
    pub study: Vec<StudyRow>,
    pub study_shown: bool,
    pub cost_method: &'static str,
    /// On-CPU flame graphs where the sweep took them (`[run] profile = "perf"`).
    pub profiles: Option<super::profile::Profiles>,
}
