//! sysbench 1.0.20's text: header, interval lines and final report, byte for byte (spec §9),
//! so scripts that grep sysbench output keep working.

use crate::engine::config::EngineConfig;
use crate::engine::exec::RunReport;
use crate::engine::metrics::{self, sysbench_hist, LatencySummary};
use std::fmt::Write;

/// The first line of every command, as sysbench's: log parsers match `^sysbench [0-9]`, and
/// the parenthesis says who is speaking.
pub fn banner() -> String {
    format!(
        "sysbench 1.0.20-compatible (sweepbench {})",
        env!("CARGO_PKG_VERSION")
    )
}

/// sysbench's header line for `--report-checkpoints` ("Report checkpoint(s) at 1, 3
/// seconds"), None without checkpoints.
pub fn checkpoints_line(at_s: &[u64]) -> Option<String> {
    (!at_s.is_empty()).then(|| {
        let list: Vec<String> = at_s.iter().map(u64::to_string).collect();
        format!("Report checkpoint(s) at {} seconds\n", list.join(", "))
    })
}

/// The run header up to "Initializing worker threads...".
pub fn header(o: &EngineConfig, seed_given: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", banner());
    s.push_str("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", o.threads);
    if o.rate > 0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", o.rate);
    }
    if o.report_interval_s > 0 {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            o.report_interval_s
        );
    }
    if let Some(at) = checkpoints_line(&o.checkpoints_s) {
        s.push_str(&at);
    }
    if o.warmup_s > 0 {
        let _ = writeln!(s, "Warmup time: {}s", o.warmup_s);
    }
    if seed_given {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({}).",
            o.rand_seed
        );
    } else {
        s.push_str("Initializing random number generator from current time\n");
    }
    s.push_str("\n\nInitializing worker threads...\n");
    s
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// The final report: optional histogram, SQL statistics, general statistics, latency, fairness.
pub fn final_report(r: &RunReport, o: &EngineConfig) -> String {
    let mut s = String::new();
    let t = &r.totals;
    let secs = r.window_s;
    if o.histogram {
        s.push_str("Latency histogram (values are in milliseconds)\n");
        s.push_str("       value  ------------- distribution ------------- count\n");
        let buckets = sysbench_hist::buckets(&r.hist);
        let max = buckets.iter().map(|b| b.1).max().unwrap_or(1);
        for (value, count) in buckets {
            let stars = ((40.0 * count as f64 / max as f64).round()) as usize;
            let _ = writeln!(s, "{value:12.3} |{:<40} {count}", "*".repeat(stars));
        }
        s.push_str(" \n");
    }
    let _ = write!(
        s,
        "SQL statistics:\n    queries performed:\n        read:                            {}\n        write:                           {}\n        other:                           {}\n        total:                           {}\n",
        t.reads, t.writes, t.other, t.queries()
    );
    let _ = writeln!(
        s,
        "    transactions:                        {:<6} ({:.2} per sec.)",
        t.events,
        per_sec(t.events, secs)
    );
    let _ = writeln!(
        s,
        "    queries:                             {:<6} ({:.2} per sec.)",
        t.queries(),
        per_sec(t.queries(), secs)
    );
    let _ = writeln!(
        s,
        "    ignored errors:                      {:<6} ({:.2} per sec.)",
        t.errors,
        per_sec(t.errors, secs)
    );
    let _ = writeln!(
        s,
        "    reconnects:                          {:<6} ({:.2} per sec.)",
        t.reconnects,
        per_sec(t.reconnects, secs)
    );
    s.push('\n');
    s.push_str(&general(r, o));
    s
}

/// The blocks every sysbench test ends with: general statistics, latency and fairness.
pub fn general(r: &RunReport, o: &EngineConfig) -> String {
    let mut s = String::new();
    let t = &r.totals;
    let lat = LatencySummary::new(&r.hist, t.events, t.lat_sum_ns, r.min_max_ns);
    s.push_str("General statistics:\n");
    let _ = writeln!(
        s,
        "    total time:                          {:.4}s",
        r.elapsed_s
    );
    let _ = writeln!(s, "    total number of events:              {}", t.events);
    if let Some(n) = r.unfinished {
        let _ = writeln!(
            s,
            "    Number of unfinished transactions on forced shutdown: {n}"
        );
    }
    s.push('\n');
    s.push_str("Latency (ms):\n");
    let _ = writeln!(s, "         min: {:>39.2}", lat.min_ms);
    let _ = writeln!(s, "         avg: {:>39.2}", lat.avg_ms);
    let _ = writeln!(s, "         max: {:>39.2}", lat.max_ms);
    if o.percentile == 0 {
        s.push_str("         percentile stats:               disabled\n");
    } else {
        let p = metrics::percentile_ms(&r.hist, o.percentile as f64);
        let _ = writeln!(s, "        {:>3}th percentile: {:>27.2}", o.percentile, p);
    }
    let _ = writeln!(s, "         sum: {:>39.2}", lat.sum_ms);
    s.push('\n');
    let events: Vec<f64> = r.per_thread.iter().map(|c| c.events as f64).collect();
    let times: Vec<f64> = r
        .per_thread
        .iter()
        .map(|c| c.lat_sum_ns as f64 / 1e9)
        .collect();
    let (ev_avg, ev_sd) = metrics::mean_stddev(&events);
    let (t_avg, t_sd) = metrics::mean_stddev(&times);
    s.push_str("Threads fairness:\n");
    let _ = writeln!(
        s,
        "    events (avg/stddev):           {ev_avg:.4}/{ev_sd:.2}"
    );
    let _ = writeln!(s, "    execution time (avg/stddev):   {t_avg:.4}/{t_sd:.2}");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::metrics::{total_hist, Counts};

    fn report() -> RunReport {
        let mut hist = total_hist();
        for v in [1_240_000u64, 2_000_000, 3_000_000, 40_360_000] {
            hist.record(v).unwrap();
        }
        let per = Counts {
            events: 1013,
            lat_sum_ns: 2_999_600_000,
            ..Counts::default()
        };
        RunReport {
            threads: 2,
            elapsed_s: 3.0043,
            window_s: 3.0043,
            totals: Counts {
                events: 2027,
                reads: 28448,
                writes: 8118,
                other: 4059,
                errors: 5,
                reconnects: 0,
                lat_sum_ns: 5_999_140_000,
            },
            hist,
            min_max_ns: Some((1_240_000, 40_360_000)),
            per_thread: vec![
                per,
                Counts {
                    events: 1014,
                    ..per
                },
            ],
            intervals: vec![],
            interval_hists: vec![],
            fatal: None,
            unfinished: None,
            interrupted: false,
            ignored_by_code: Default::default(),
        }
    }

    fn opts() -> EngineConfig {
        EngineConfig::new(crate::engine::config::WorkloadKind::ReadWrite)
    }

    #[test]
    fn final_report_has_sysbench_layout() {
        let text = final_report(&report(), &opts());
        let want_prefix = "SQL statistics:
    queries performed:
        read:                            28448
        write:                           8118
        other:                           4059
        total:                           40625
    transactions:                        2027   (674.70 per sec.)
    queries:                             40625  (13522.28 per sec.)
    ignored errors:                      5      (1.66 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          3.0043s
    total number of events:              2027

Latency (ms):
         min:                                    1.24
         avg:                                    2.96
         max:                                   40.36
";
        assert!(text.starts_with(want_prefix), "{text}");
        assert!(text.contains("\n         sum:                                 5999.14\n"));
        assert!(text.contains("\n         95th percentile: "));
        assert!(text.ends_with(
            "Threads fairness:\n    events (avg/stddev):           1013.5000/0.50\n    execution time (avg/stddev):   2.9996/0.00\n\n"
        ));
    }

    /// The whole text layout (header, interval lines with --rate's queue line, histogram,
    /// final report): a change shows as a reviewed diff (`cargo insta review`).
    #[test]
    fn text_output_layout_is_reviewed() {
        let mut o = opts();
        o.threads = 2;
        o.time_s = 3;
        o.rate = 700;
        o.report_interval_s = 1;
        o.histogram = true;
        o.rand_seed = 42;
        let line = crate::engine::exec::IntervalStats {
            t_s: 1.0004,
            threads: 2,
            tps: 674.0,
            qps: 13480.0,
            reads_s: 9436.0,
            writes_s: 2696.0,
            other_s: 1348.0,
            lat_pct_ms: 3.96,
            queue_length: Some(0),
            concurrency: Some(2),
            ..Default::default()
        };
        let text = format!(
            "{}{}\n{}",
            header(&o, true),
            line.sysbench_line(o.percentile),
            final_report(&report(), &o)
        );
        insta::assert_snapshot!(text);
    }
}
