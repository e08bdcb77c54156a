//! `sweepbench import`: saved sysbench output (1.0.x, 0.5, 0.4; with or without the header,
//! with or without interval lines, indentation lost or not) → a run directory whose points
//! can be reported and compared like live ones.

use crate::engine::exec::IntervalStats;
use crate::pipeline::results::{PointRecord, PointStatus, RunDir};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// What one log says.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub version: Option<String>,
    pub workload: Option<String>,
    pub threads: Option<u32>,
    pub transactions: Option<u64>,
    pub tps: Option<f64>,
    pub queries: Option<u64>,
    pub qps: Option<f64>,
    pub reads: Option<u64>,
    pub writes: Option<u64>,
    pub other: Option<u64>,
    pub errors: Option<u64>,
    pub reconnects: Option<u64>,
    /// "total number of events": what a run without transactions (0.5's nontrx modes,
    /// `--oltp-skip-trx`) counted instead.
    pub events: Option<u64>,
    /// 0.4/0.5's "read/write requests: N (x per sec.)".
    pub rw_requests: Option<(u64, Option<f64>)>,
    pub total_time_s: Option<f64>,
    pub lat_min_ms: Option<f64>,
    pub lat_avg_ms: Option<f64>,
    pub lat_max_ms: Option<f64>,
    pub lat_pct_ms: Option<f64>,
    pub percentile: Option<u32>,
    pub intervals: Vec<IntervalStats>,
    /// Lines whose figures sysbench could not have printed ("line 12: …"); a log with any
    /// is not imported.
    pub problems: Vec<String>,
}

/// Why a figure on `line` cannot be one sysbench printed: not finite, in exponent notation
/// (sysbench prints fixed-point), or too large for a counter.
fn implausible(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if word_start && b[i].is_ascii_alphabetic() {
            let end = b[i..]
                .iter()
                .position(|c| !c.is_ascii_alphabetic())
                .map_or(b.len(), |e| i + e);
            let w = line[i..end].to_ascii_lowercase();
            if w == "nan" || w == "inf" || w == "infinity" {
                return Some(format!("'{}' is not a number", &line[i..end]));
            }
            i = end;
            continue;
        }
        if b[i] == b'-'
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
        {
            let end = b[i + 1..]
                .iter()
                .position(|c| !(c.is_ascii_digit() || *c == b'.'))
                .map_or(b.len(), |e| i + 1 + e);
            return Some(format!(
                "'{}' is negative, which no count, rate or time sysbench prints is",
                &line[i..end]
            ));
        }
        if b[i].is_ascii_digit() {
            let int_end = b[i..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(b.len(), |e| i + e);
            if int_end - i > 19 {
                return Some(format!(
                    "'{}' is too large for any count or time",
                    &line[i..int_end]
                ));
            }
            let mut end = int_end;
            if b.get(end) == Some(&b'.') {
                end += b[end + 1..]
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .map_or(b.len() - end, |e| e + 1);
            }
            let exp = matches!(b.get(end), Some(b'e' | b'E'))
                && b.get(end + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'+' || *c == b'-');
            if exp {
                let tail = b[end + 1..]
                    .iter()
                    .skip(1)
                    .position(|c| !c.is_ascii_digit())
                    .map_or(b.len(), |e| end + 2 + e);
                return Some(format!(
                    "'{}' is in exponent notation, which sysbench never prints",
                    &line[i..tail]
                ));
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    None
}

/// The first number in `s` (digits, '.', leading '-').
fn first_num(s: &str) -> Option<f64> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let end = s[start..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(s.len(), |e| start + e);
    s[start..end].trim_end_matches('.').parse().ok()
}

/// "N (x per sec.)" → (N, x).
fn count_rate(s: &str) -> (Option<u64>, Option<f64>) {
    let n = first_num(s).map(|v| v as u64);
    let rate = s.split_once('(').and_then(|(_, r)| first_num(r));
    (n, rate)
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_once(key).map(|(_, rest)| rest.trim_start())
}

/// Parses one 1.0.x interval line: `[ 1s ] thds: 2 tps: … qps: … (r/w/o: a/b/c) lat (ms,95%): x err/s: … reconn/s: …`.
fn interval_10(l: &str) -> Option<IntervalStats> {
    let t = first_num(l.strip_prefix('[')?)?;
    let num = |k: &str| field(l, k).and_then(first_num);
    let rwo: Vec<f64> = field(l, "(r/w/o:")?
        .split(')')
        .next()?
        .split('/')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    Some(IntervalStats {
        t_s: t,
        threads: num("thds:")? as u32,
        tps: num("tps:")?,
        qps: num("qps:")?,
        reads_s: *rwo.first()?,
        writes_s: *rwo.get(1)?,
        other_s: *rwo.get(2)?,
        errors_s: num("err/s:").unwrap_or(0.0),
        reconnects_s: num("reconn/s:").unwrap_or(0.0),
        lat_pct_ms: field(l, "%):").and_then(first_num).unwrap_or(0.0),
        lat_p50_ms: 0.0,
        lat_p99_ms: 0.0,
        lat_max_ms: 0.0,
        queue_length: None,
        concurrency: None,
    })
}

/// 0.5 / 0.4 interval lines: `[   1s] threads: 2, tps: …, reads: …, writes: …, response time: 12.3ms (95%), …`.
fn interval_05(l: &str) -> Option<IntervalStats> {
    let t = first_num(l.strip_prefix('[')?)?;
    let num = |k: &str| field(l, k).and_then(first_num);
    let reads = num("reads:").or_else(|| num("reads/s:")).unwrap_or(0.0);
    let writes = num("writes:").or_else(|| num("writes/s:")).unwrap_or(0.0);
    Some(IntervalStats {
        t_s: t,
        threads: num("threads:")? as u32,
        tps: num("tps:")?,
        qps: reads + writes,
        reads_s: reads,
        writes_s: writes,
        other_s: 0.0,
        errors_s: num("errors:").unwrap_or(0.0),
        reconnects_s: num("reconnects:").unwrap_or(0.0),
        lat_pct_ms: num("response time:").unwrap_or(0.0),
        lat_p50_ms: 0.0,
        lat_p99_ms: 0.0,
        lat_max_ms: 0.0,
        queue_length: None,
        concurrency: None,
    })
}

/// What a `sysbench …` line says: its version (the banner) and the script it ran (a
/// command line).
fn command_line(p: &mut Parsed, rest: &str) {
    if let Some(v) = rest
        .split_whitespace()
        .next()
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    {
        // The log's words reach points.csv and every report: never raw.
        p.version = Some(crate::visible::visible(v).into_owned());
    }
    if let Some(w) = crate::engine::config::WorkloadKind::all()
        .map(|w| w.name())
        .find(|w| rest.contains(*w))
    {
        p.workload = Some(w.to_string());
    } else if rest.contains("--test=oltp") || rest.contains("oltp.lua") {
        p.workload = Some(
            if rest.contains("read-only=on") {
                "oltp_read_only"
            } else {
                "oltp_read_write"
            }
            .into(),
        );
    }
}

/// Parses a saved sysbench log. Lines are trimmed first, so logs pasted from web pages that
/// lost their indentation parse the same.
pub fn parse(text: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut in_latency = false;
    for (n, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if !l.starts_with("sysbench ") {
            if let Some(why) = implausible(l) {
                p.problems.push(format!("line {}: {why}: {l}", n + 1));
                continue;
            }
        }
        if let Some(rest) = l.strip_prefix("sysbench ") {
            command_line(&mut p, rest);
            continue;
        }
        if l.starts_with('[') {
            if l.contains("queue length:") {
                continue;
            }
            if let Some(i) = interval_10(l).or_else(|| interval_05(l)) {
                p.threads.get_or_insert(i.threads);
                p.intervals.push(i);
            }
            continue;
        }
        let lower = l.to_ascii_lowercase();
        if lower.starts_with("latency (ms):")
            || lower.starts_with("response time:")
            || lower.starts_with("per-request statistics:")
        {
            in_latency = true;
            continue;
        }
        if let Some(v) = field(l, "Number of threads:") {
            p.threads = first_num(v).map(|n| n as u32);
        } else if let Some(v) = l.strip_prefix("read:") {
            p.reads = first_num(v).map(|n| n as u64);
        } else if let Some(v) = l.strip_prefix("write:") {
            p.writes = first_num(v).map(|n| n as u64);
        } else if let Some(v) = l.strip_prefix("other:") {
            p.other = first_num(v).map(|n| n as u64);
        } else if let Some(v) = l.strip_prefix("total:") {
            p.queries.get_or_insert(first_num(v).unwrap_or(0.0) as u64);
        } else if let Some(v) = l.strip_prefix("transactions:") {
            (p.transactions, p.tps) = count_rate(v);
        } else if let Some(v) = l.strip_prefix("queries:") {
            let (n, r) = count_rate(v);
            p.queries = n.or(p.queries);
            p.qps = r;
        } else if let Some(v) = l.strip_prefix("ignored errors:") {
            p.errors = count_rate(v).0;
        } else if let Some(v) = l.strip_prefix("reconnects:") {
            p.reconnects = count_rate(v).0;
        } else if let Some(v) = l.strip_prefix("total number of events:") {
            p.events = first_num(v).map(|n| n as u64);
        } else if let Some(v) = l.strip_prefix("read/write requests:") {
            let (n, r) = count_rate(v);
            p.rw_requests = n.map(|n| (n, r));
        } else if let Some(v) = l.strip_prefix("total time:") {
            p.total_time_s = first_num(v);
        } else if in_latency {
            if let Some(v) = l.strip_prefix("min:") {
                p.lat_min_ms = first_num(v);
            } else if let Some(v) = l.strip_prefix("avg:") {
                p.lat_avg_ms = first_num(v);
            } else if let Some(v) = l.strip_prefix("max:") {
                p.lat_max_ms = first_num(v);
            } else if l.contains("percentile") {
                // "95th percentile: 3.82" (1.0) or "approx.  95 percentile: 3.82ms" (0.4/0.5)
                let (head, value) = l.split_once(':').unwrap_or(("", ""));
                p.percentile = first_num(head).map(|n| n as u32);
                p.lat_pct_ms = first_num(value);
            }
        }
    }
    if p.qps.is_none() {
        if let (Some(q), Some(t)) = (p.queries, p.total_time_s) {
            p.qps = (t > 0.0).then(|| q as f64 / t);
        }
    }
    p
}

/// One points.csv row from a parsed log. A log without a final report is summarised from its
/// interval lines (rates weighted by interval length; the percentile is the interval values'
/// time-weighted mean, and avg/max latency are left at 0 because the lines do not carry them).
pub fn record(
    p: &Parsed,
    target: &str,
    repeat: u32,
    threads_override: Option<u32>,
) -> anyhow::Result<PointRecord> {
    if !p.problems.is_empty() {
        bail!(
            "figures sysbench cannot have printed:\n  {}",
            p.problems.join("\n  ")
        );
    }
    let threads = threads_override
        .or(p.threads)
        .context("no thread count in the log (no header, no interval lines): give --threads")?;
    if threads == 0 {
        bail!("0 threads: a run needs at least one (the log's header, or --threads)");
    }
    let workload = p.workload.clone().unwrap_or_else(|| "unknown".into());
    let mut r = PointRecord {
        target: target.to_string(),
        config: "default".into(),
        driver: crate::pipeline::results::Driver::Log(format!(
            "sysbench {}",
            p.version.as_deref().unwrap_or("(unknown version)")
        )),
        workload: workload.clone(),
        threads,
        repeat,
        status: PointStatus::Ok,
        point_id: format!("{target}/default/{workload}/t{threads}/r{repeat}"),
        ..PointRecord::default()
    };
    if let Some(tx) = p.transactions {
        r.transactions = tx;
        r.tps = p.tps.unwrap_or(0.0);
        r.queries = p.queries.unwrap_or(0);
        r.qps = p.qps.unwrap_or(0.0);
        r.reads = p.reads.unwrap_or(0);
        r.writes = p.writes.unwrap_or(0);
        r.other = p.other.unwrap_or(0);
        r.errors = p.errors.unwrap_or(0);
        r.reconnects = p.reconnects.unwrap_or(0);
        r.duration_s = p.total_time_s.unwrap_or(0.0);
        r.lat_min_ms = p.lat_min_ms.unwrap_or(0.0);
        r.lat_avg_ms = p.lat_avg_ms.unwrap_or(0.0);
        r.lat_max_ms = p.lat_max_ms.unwrap_or(0.0);
        r.lat_p95_ms = p.lat_pct_ms.unwrap_or(0.0);
        if p.total_time_s.is_some_and(|t| t <= 0.0) {
            bail!("the log's run lasted 0 s: nothing was measured");
        }
        if tx == 0 {
            untransacted(p, &mut r)?;
        }
        return measured(r);
    }
    if p.intervals.is_empty() {
        bail!("neither a final report nor interval lines found");
    }
    let mut prev = 0.0;
    let (mut secs, mut tx, mut q, mut rd, mut wr, mut ot, mut pct) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for i in &p.intervals {
        let dt = (i.t_s - prev).max(0.0);
        prev = i.t_s;
        secs += dt;
        tx += i.tps * dt;
        q += i.qps * dt;
        rd += i.reads_s * dt;
        wr += i.writes_s * dt;
        ot += i.other_s * dt;
        pct += i.lat_pct_ms * dt;
    }
    r.duration_s = secs;
    r.transactions = tx.round() as u64;
    r.queries = q.round() as u64;
    r.reads = rd.round() as u64;
    r.writes = wr.round() as u64;
    r.other = ot.round() as u64;
    if secs > 0.0 {
        r.tps = tx / secs;
        r.qps = q / secs;
        r.lat_p95_ms = pct / secs;
    }
    r.error = "summarised from interval lines (no final report in the log)".into();
    measured(r)
}

/// A run that counted events and queries but no transaction (sysbench 0.5's
/// `--oltp-test-mode=nontrx`, `--oltp-skip-trx=on`, select_random_*): its events stand for
/// the transactions (tps is events/s) and its queries, or read/write requests, for the
/// queries; the record says so. With neither, nothing was measured (`measured` refuses it).
fn untransacted(p: &Parsed, r: &mut PointRecord) -> anyhow::Result<()> {
    let Some(secs) = p.total_time_s.filter(|t| *t > 0.0) else {
        return Ok(());
    };
    let events = p.events.unwrap_or(0);
    let (queries, from) = match (p.queries.filter(|q| *q > 0), p.rw_requests) {
        (Some(q), _) => (q, "queries"),
        (None, Some((n, _))) if n > 0 => (n, "read/write requests"),
        _ => (0, ""),
    };
    if events == 0 && queries == 0 {
        return Ok(());
    }
    if events == 0 {
        bail!("the log counts {queries} {from} but no transaction and no event: give the log's \"total number of events\" line");
    }
    r.transactions = events;
    r.tps = events as f64 / secs;
    r.queries = queries;
    r.qps = queries as f64 / secs;
    r.error = format!(
        "no transactions in the log (a non-transactional run): tps is its events/s ({events} events), qps its {}/s",
        if from.is_empty() { "queries" } else { from }
    );
    Ok(())
}

/// A point that measured nothing (no transaction, no time) is not one: refused, as a run's
/// point with no event is failed, never ok.
fn measured(r: PointRecord) -> anyhow::Result<PointRecord> {
    if r.transactions == 0 || r.tps <= 0.0 {
        bail!("the log records no completed transaction: nothing was measured");
    }
    // The same rule a run's points.csv is loaded by, so an import never writes a run that
    // cannot be read back.
    if let Some(why) = r.disagrees() {
        bail!("{why}: the log's figures contradict each other");
    }
    Ok(r)
}

/// `sweepbench import LOG… --out DIR`.
pub fn import(
    logs: &[PathBuf],
    out: &Path,
    target: Option<&str>,
    threads: Option<u32>,
) -> anyhow::Result<PathBuf> {
    if logs.is_empty() {
        bail!("no log files given");
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "imported".into());
    let spec_text = format!(
        "# imported from sysbench logs by sweepbench {}\nname = \"{name}\"\ndescription = \"imported: {}\"\n",
        env!("CARGO_PKG_VERSION"),
        logs.iter().map(|l| l.display().to_string()).collect::<Vec<_>>().join(", ")
    );
    // Every log is read and checked before anything is written: a failed import leaves
    // no partial directory behind.
    let mut seen: std::collections::BTreeMap<String, u32> = Default::default();
    let mut parsed = Vec::new();
    for log in logs {
        let text =
            std::fs::read_to_string(log).with_context(|| format!("reading {}", log.display()))?;
        let p = parse(&text);
        let t = target.map(str::to_string).unwrap_or_else(|| {
            log.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "sysbench".into())
        });
        if !crate::pipeline::spec::name_ok(&t) {
            let from = if target.is_some() {
                "--target".to_string()
            } else {
                format!(
                    "the target name taken from {} (give --target)",
                    log.display()
                )
            };
            bail!("{from} '{t}': {}", crate::pipeline::spec::NAME_RULE);
        }
        let key = format!("{t}/{:?}/{:?}", p.workload, threads.or(p.threads));
        let repeat = {
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        let rec = record(&p, &t, repeat, threads).with_context(|| format!("{}", log.display()))?;
        parsed.push((rec, p.intervals));
    }
    let existed = out.exists();
    let written = write_run(out, &spec_text, logs, parsed);
    if written.is_err() && !existed {
        let _ = std::fs::remove_dir_all(out);
    }
    written
}

fn write_run(
    out: &Path,
    spec_text: &str,
    logs: &[PathBuf],
    parsed: Vec<(PointRecord, Vec<IntervalStats>)>,
) -> anyhow::Result<PathBuf> {
    let mut dir = RunDir::create_at(out, spec_text)?;
    for (rec, intervals) in parsed {
        dir.append_intervals(&rec.point_id, &intervals)?;
        dir.append_point(&rec)?;
    }
    dir.write_manifest(&crate::pipeline::results::Manifest {
        imported_from: logs.iter().map(|l| l.display().to_string()).collect(),
        imported_at: Some(chrono::Utc::now()),
        ..crate::pipeline::results::Manifest::new()
    })?;
    Ok(dir.path)
}

#[cfg(test)]
mod tests;
