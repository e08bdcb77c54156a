//! Exact merging of client processes' figures: counts add up per aligned second over the
//! window every client covered, histograms merge (so a percentile is that of every event of
//! every client, never an average of percentiles), client CPU adds up.

use super::End;
use crate::engine::exec::{IntervalStats, RunReport};
use crate::engine::metrics::{self, Counts, TotalHist};

/// One second of several clients (each closed at its own tick of that second).
pub fn interval(
    parts: &[(IntervalStats, TotalHist)],
    percentile: u32,
) -> (IntervalStats, TotalHist) {
    let mut h = metrics::total_hist();
    let mut s = IntervalStats::default();
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    for (x, xh) in parts {
        // Histograms of one process share bounds; a merge can only fail on a value beyond
        // them, which auto-resizing histograms take.
        let _ = h.add(xh);
        s.t_s = s.t_s.max(x.t_s);
        s.threads += x.threads;
        s.tps += x.tps;
        s.qps += x.qps;
        s.reads_s += x.reads_s;
        s.writes_s += x.writes_s;
        s.other_s += x.other_s;
        s.errors_s += x.errors_s;
        s.reconnects_s += x.reconnects_s;
        s.queue_length = add(s.queue_length, x.queue_length);
        s.concurrency = add(s.concurrency, x.concurrency);
    }
    s.lat_pct_ms = metrics::percentile_ms(&h, percentile as f64);
    s.lat_p50_ms = metrics::percentile_ms(&h, 50.0);
    s.lat_p99_ms = metrics::percentile_ms(&h, 99.0);
    s.lat_max_ms = if h.is_empty() {
        0.0
    } else {
        h.max() as f64 / 1e6
    };
    (s, h)
}

/// One client's whole run, decoded.
pub struct Part {
    pub client: u32,
    pub end: End,
    pub hist: TotalHist,
    /// Its seconds, in order.
    pub seconds: Vec<(IntervalStats, TotalHist)>,
}

/// The point as one run: totals and histograms of every client; seconds only where every
/// client has one (the common window); the first fatal error, named by its client. Returns
/// the report and the clients' CPU seconds summed.
pub fn report(parts: &[Part], percentile: u32) -> (RunReport, f64) {
    let mut totals = Counts::default();
    let mut hist = metrics::total_hist();
    let mut per_thread = Vec::new();
    let mut ignored = std::collections::BTreeMap::new();
    let mut min_max: Option<(u64, u64)> = None;
    let (mut elapsed, mut window, mut cpu) = (0.0f64, 0.0f64, 0.0);
    let mut unfinished: Option<u64> = None;
    for p in parts {
        let e = &p.end;
        totals.add(&e.totals);
        let _ = hist.add(&p.hist);
        per_thread.extend(e.per_thread.iter().copied());
        for (code, n) in &e.ignored_by_code {
            *ignored.entry(*code).or_insert(0) += n;
        }
        min_max = match (min_max, e.min_max_ns) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        };
        // The window every client covered is the longest: rates over it are never higher
        // than any client measured alone.
        elapsed = elapsed.max(e.elapsed_s);
        window = window.max(e.window_s);
        cpu += e.cpu_s;
        if let Some(n) = e.unfinished {
            unfinished = Some(unfinished.unwrap_or(0) + n);
        }
    }
    let common = parts.iter().map(|p| p.seconds.len()).min().unwrap_or(0);
    let (intervals, interval_hists): (Vec<_>, Vec<_>) = (0..common)
        .map(|k| {
            let at: Vec<(IntervalStats, TotalHist)> =
                parts.iter().map(|p| p.seconds[k].clone()).collect();
            interval(&at, percentile)
        })
        .unzip();
    let fatal = parts.iter().find_map(|p| {
        p.end
            .fatal
            .as_ref()
            .map(|f| crate::engine::Fatal::new(format!("client {}: {f}", p.client + 1), f.code))
    });
    let report = RunReport {
        threads: per_thread.len() as u32,
        elapsed_s: elapsed,
        window_s: window,
        totals,
        hist,
        min_max_ns: min_max,
        per_thread,
        intervals,
        interval_hists,
        fatal,
        unfinished,
        interrupted: parts.iter().any(|p| p.end.interrupted),
        ignored_by_code: ignored,
    };
    (report, cpu)
}
