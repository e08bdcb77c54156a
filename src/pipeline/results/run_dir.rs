//! Writing a run directory as the sweep goes: `RunDir` creates results/<sweep>/<run>/, keeps
//! the sweep file, manifest, histograms and gate files, each written atomically
//! (`write_atomic`), and appends each point's row to points.csv and its seconds to
//! intervals.csv (a crash mid-row leaves a torn last line, which reading drops): a crash
//! loses only the point in progress, and a long sweep does not rewrite its files per point.

use super::*;

pub struct RunDir {
    pub path: PathBuf,
    pub run_id: String,
    points: Vec<PointRecord>,
}

fn io_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        anyhow::anyhow!(
            "no space left on the disk of {}: free space, or give --results-dir on another filesystem",
            path.display()
        )
    } else {
        anyhow::anyhow!("writing {}: {e}", path.display())
    }
}

/// Appends CSV rows (no header) to `path`, written out before it returns; a write that
/// fails is cut off again, so no torn row is left for the next one to follow.
fn append_rows<T: serde::Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    use std::io::Write;
    if rows.is_empty() {
        return Ok(());
    }
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    let before = f.metadata().map_err(|e| io_error(path, e))?.len();
    if let Err(e) = f.write_all(&bytes).and_then(|()| f.sync_data()) {
        let _ = f.set_len(before);
        return Err(io_error(path, e));
    }
    Ok(())
}

/// Writes a file so that readers see the old or the new content, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(path, e)
    })?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

fn csv_bytes<T: serde::Serialize>(header: &[&str], rows: &[T]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.serialize(r)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

/// points.csv and intervals.csv of `records` and `intervals`, as a run writes them.
pub fn points_and_intervals_csv(
    records: &[PointRecord],
    intervals: &[IntervalRow],
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    Ok((
        csv_bytes(POINT_COLUMNS, records)?,
        csv_bytes(INTERVAL_COLUMNS, intervals)?,
    ))
}

/// A point id as a file name.
pub fn file_stem(point_id: &str) -> String {
    point_id.replace('/', "__")
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
        std::fs::create_dir_all(path.join("histograms"))
            .with_context(|| format!("creating the results directory {}", path.display()))?;
        write_atomic(&path.join("sweep.toml"), spec.source.as_bytes())?;
        let d = RunDir::open(&path, Vec::new(), Vec::new())?;
        d.link_latest();
        Ok(d)
    }

    /// Reopens an interrupted run to finish it: refuses when the sweep file changed since,
    /// keeps the points that ended ok or were skipped, and drops the rest so they run again.
    pub fn resume(path: &Path, spec: &SweepSpec) -> anyhow::Result<RunDir> {
        let stored = std::fs::read_to_string(path.join("sweep.toml")).with_context(|| {
            format!("{} is not a run directory (no sweep.toml)", path.display())
        })?;
        if stored != spec.source {
            anyhow::bail!(
                "the sweep file changed since {} was started (its sweep.toml differs from {}): start a new run instead of resuming",
                path.display(),
                spec.path.display()
            );
        }
        let mut points = load_points(path)?;
        points.retain(|p| p.status == PointStatus::Ok || p.status == PointStatus::Skipped);
        let keep: std::collections::BTreeSet<String> =
            points.iter().map(|p| p.point_id.clone()).collect();
        let mut intervals = load_intervals(path)?;
        intervals.retain(|r| keep.contains(&r.point_id));
        RunDir::open(path, points, intervals)
    }

    /// The directory named by its path, with these rows written out (whole, atomically:
    /// later rows are appended).
    fn open(
        path: &Path,
        points: Vec<PointRecord>,
        intervals: Vec<IntervalRow>,
    ) -> anyhow::Result<RunDir> {
        let d = RunDir {
            path: path.to_path_buf(),
            run_id: path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            points,
        };
        write_atomic(
            &d.path.join("points.csv"),
            &csv_bytes(POINT_COLUMNS, &d.points)?,
        )?;
        write_atomic(
            &d.path.join("intervals.csv"),
            &csv_bytes(INTERVAL_COLUMNS, &intervals)?,
        )?;
        Ok(d)
    }

    /// A run directory at exactly `path` (for imports), with `sweep_text` as its sweep.toml.
    pub fn create_at(path: &Path, sweep_text: &str) -> anyhow::Result<RunDir> {
        std::fs::create_dir_all(path.join("histograms"))
            .with_context(|| format!("creating {}", path.display()))?;
        write_atomic(&path.join("sweep.toml"), sweep_text.as_bytes())?;
        RunDir::open(path, Vec::new(), Vec::new())
    }

    /// results/<sweep>/latest → this run (relative, replaced atomically).
    fn link_latest(&self) {
        let Some(parent) = self.path.parent() else {
            return;
        };
        let tmp = parent.join(".latest.tmp");
        let _ = std::fs::remove_file(&tmp);
        if std::os::unix::fs::symlink(&self.run_id, &tmp).is_ok() {
            let _ = std::fs::rename(&tmp, parent.join("latest"));
        }
    }

    /// Appends a measured point to points.csv, its derived columns computed
    /// (`PointRecord::derive`).
    pub fn append_point(&mut self, r: &PointRecord) -> anyhow::Result<()> {
        let mut r = r.clone();
        r.derive();
        append_rows(&self.path.join("points.csv"), std::slice::from_ref(&r))
            .context("writing points.csv")?;
        self.points.push(r);
        Ok(())
    }

    pub fn points(&self) -> &[PointRecord] {
        &self.points
    }

    pub fn append_intervals(
        &mut self,
        point_id: &str,
        series: &[IntervalStats],
    ) -> anyhow::Result<()> {
        let rows: Vec<IntervalRow> = series
            .iter()
            .map(|s| IntervalRow::new(point_id, s))
            .collect();
        append_rows(&self.path.join("intervals.csv"), &rows).context("writing intervals.csv")
    }

    /// histograms/<point>.hlog: the point's latency histogram (nanoseconds) as an HdrHistogram
    /// interval log, mergeable and readable by HdrHistogram tools. The first entry, tagged with
    /// the point, is the whole measured window; then one entry per second tagged `second`
    /// (the samples the verdicts use), so tools that sum entries should pick one tag.
    pub fn write_histogram(
        &self,
        point_id: &str,
        h: &crate::engine::metrics::TotalHist,
        duration_s: f64,
        seconds: &[(f64, &crate::engine::metrics::TotalHist)],
    ) -> anyhow::Result<()> {
        use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
        use hdrhistogram::serialization::V2DeflateSerializer;
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        {
            let mut w = IntervalLogWriterBuilder::new()
                .add_comment(&format!(
                    "sweepbench point {point_id}; values in nanoseconds"
                ))
                .with_max_value_divisor(1e6)
                .begin_log_with(&mut buf, &mut ser)?;
            let tag_text = file_stem(point_id).replace([',', ' '], "_");
            let tag = Tag::new(&tag_text);
            w.write_histogram(
                h,
                std::time::Duration::ZERO,
                std::time::Duration::from_secs_f64(duration_s.max(0.0)),
                tag,
            )
            .map_err(|e| anyhow::anyhow!("encoding the histogram of {point_id}: {e:?}"))?;
            let mut start = 0.0f64;
            for (end, sh) in seconds {
                w.write_histogram(
                    *sh,
                    std::time::Duration::from_secs_f64(start.max(0.0)),
                    std::time::Duration::from_secs_f64((end - start).max(0.0)),
                    Tag::new("second"),
                )
                .map_err(|e| anyhow::anyhow!("encoding the histograms of {point_id}: {e:?}"))?;
                start = *end;
            }
        }
        write_atomic(
            &self
                .path
                .join("histograms")
                .join(format!("{}.hlog", file_stem(point_id))),
            &buf,
        )
    }

    /// Adds one series' search (`threads = "auto"`, or an SLA search) to adaptive.json: the
    /// thread counts or rates in the order measured, and why the search stopped.
    pub fn log_search(&self, series: &str, steps: &[u64], why: &str) -> anyhow::Result<()> {
        let path = self.path.join("adaptive.json");
        let mut all: serde_json::Map<String, serde_json::Value> = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        all.insert(
            series.to_string(),
            serde_json::json!({ "threads": steps, "stopped": why }),
        );
        write_atomic(&path, serde_json::to_string_pretty(&all)?.as_bytes())
    }

    /// gate.md and gate.json: what `--fail-on-regression` compared this run with, and its
    /// verdicts (the text it printed; the comparison as JSON), kept beside the report.
    pub fn write_gate(&self, text: &str, json: &serde_json::Value) -> anyhow::Result<()> {
        write_atomic(&self.path.join("gate.md"), text.as_bytes())?;
        write_atomic(
            &self.path.join("gate.json"),
            serde_json::to_string_pretty(json)?.as_bytes(),
        )
    }

    pub fn write_manifest(&self, m: &Manifest) -> anyhow::Result<()> {
        write_atomic(
            &self.path.join("manifest.json"),
            serde_json::to_string_pretty(m)?.as_bytes(),
        )
    }
}
