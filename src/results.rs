//! The run directory: results/<sweep>/<UTC yyyymmddTHHMMSSZ>/ with the sweep file as run
//! (passwords redacted), points.csv and intervals.csv, each row appended and flushed as soon
//! as its point ends so a crash loses only the point in progress.

use crate::exec::IntervalStats;
use crate::spec::target::redact_text;
use crate::spec::SweepSpec;
use anyhow::Context;
use std::fs::File;
use std::path::{Path, PathBuf};

/// One row of points.csv. Times are UTC RFC 3339, durations seconds, latencies milliseconds,
/// rates per second; empty cells mean "not measured".
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PointRecord {
    pub run_id: String,
    pub point_id: String,
    pub target: String,
    pub config: String,
    pub driver: String,
    pub server_version: String,
    pub workload: String,
    pub threads: u32,
    pub repeat: u32,
    /// ok, failed, skipped or interrupted.
    pub status: String,
    pub error: String,
    pub started_at: String,
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
    pub lat_p50_ms: f64,
    pub lat_p95_ms: f64,
    pub lat_p99_ms: f64,
    pub lat_p999_ms: f64,
    pub lat_max_ms: f64,
    pub client_cpu_s: f64,
    pub server_cpu_s: Option<f64>,
}

/// One row of intervals.csv.
#[derive(Debug, Clone, serde::Serialize)]
struct IntervalRecord<'a> {
    point_id: &'a str,
    t_s: f64,
    threads: u32,
    tps: f64,
    qps: f64,
    reads_s: f64,
    writes_s: f64,
    other_s: f64,
    errors_s: f64,
    reconnects_s: f64,
    lat_p50_ms: f64,
    lat_pct_ms: f64,
    lat_p99_ms: f64,
    lat_max_ms: f64,
}

pub struct RunDir {
    pub path: PathBuf,
    pub run_id: String,
    points: csv::Writer<File>,
    intervals: csv::Writer<File>,
}

impl RunDir {
    /// Creates the directory and its files before the first point, so an unwritable results
    /// directory fails the run at once rather than after hours of measuring.
    pub fn create(root: &Path, spec: &SweepSpec) -> anyhow::Result<RunDir> {
        let run_id = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
        let mut path = root.join(&spec.name).join(&run_id);
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = root.join(&spec.name).join(format!("{run_id}-{n}"));
        }
        std::fs::create_dir_all(&path)
            .with_context(|| format!("creating the results directory {}", path.display()))?;
        std::fs::write(path.join("sweep.toml"), redact_text(&spec.source))
            .with_context(|| format!("writing {}", path.join("sweep.toml").display()))?;
        let open = |name: &str| -> anyhow::Result<csv::Writer<File>> {
            let f = File::create(path.join(name))
                .with_context(|| format!("creating {}", path.join(name).display()))?;
            // Headers are written by hand below, once, before any record.
            Ok(csv::WriterBuilder::new().has_headers(false).from_writer(f))
        };
        let mut points = open("points.csv")?;
        let mut intervals = open("intervals.csv")?;
        // Headers now, so the files are valid CSV even if no point finishes.
        points.write_record(POINT_COLUMNS)?;
        points.flush()?;
        intervals.write_record(INTERVAL_COLUMNS)?;
        intervals.flush()?;
        Ok(RunDir {
            path,
            run_id,
            points,
            intervals,
        })
    }

    pub fn append_point(&mut self, r: &PointRecord) -> anyhow::Result<()> {
        self.points.serialize(r)?;
        self.points.flush().context("writing points.csv")?;
        Ok(())
    }

    pub fn append_intervals(
        &mut self,
        point_id: &str,
        series: &[IntervalStats],
    ) -> anyhow::Result<()> {
        for s in series {
            self.intervals.serialize(IntervalRecord {
                point_id,
                t_s: s.t_s,
                threads: s.threads,
                tps: s.tps,
                qps: s.qps,
                reads_s: s.reads_s,
                writes_s: s.writes_s,
                other_s: s.other_s,
                errors_s: s.errors_s,
                reconnects_s: s.reconnects_s,
                lat_p50_ms: s.lat_p50_ms,
                lat_pct_ms: s.lat_pct_ms,
                lat_p99_ms: s.lat_p99_ms,
                lat_max_ms: s.lat_max_ms,
            })?;
        }
        self.intervals.flush().context("writing intervals.csv")?;
        Ok(())
    }
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
    "server_cpu_s",
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
mod tests {
    use super::*;

    #[test]
    fn header_matches_the_record_fields() {
        let mut w = csv::WriterBuilder::new()
            .has_headers(true)
            .from_writer(vec![]);
        w.serialize(PointRecord::default()).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), POINT_COLUMNS.join(","));
    }
}
