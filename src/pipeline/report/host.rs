//! The host's own curve in a report (`workloads = ["cpu"]`): each host test's events per
//! second per thread count, and the speedup over one thread of the host beside every server
//! series', so a server that stops scaling where the machine still does stands out.

use super::{chart, WorkloadSection};
use crate::engine::metrics::{geo_mean, spread_pct};
use crate::pipeline::results::{PointRecord, PointStatus};

/// One thread count of a host test: geometric means over the repeats that ended ok.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostRow {
    pub threads: u32,
    pub eps: f64,
    /// (max − min) / median of the repeats' events per second, percent; None with one.
    pub spread_pct: Option<f64>,
    pub p95_ms: f64,
    pub repeats: usize,
    /// Events per second over the one-thread figure; None without a one-thread point.
    pub speedup: Option<f64>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct HostTest {
    /// sysbench's name: cpu, memory.
    pub name: String,
    pub event: &'static str,
    pub rows: Vec<HostRow>,
}

/// One thread count of the speedup table: one value per curve.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SpeedupRow {
    pub threads: u32,
    pub values: Vec<Option<f64>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct HostSection {
    pub tests: Vec<HostTest>,
    /// The speedup table's curves: `host cpu`, …, then `series workload` of every server
    /// series with a one-thread point.
    pub curves: Vec<String>,
    pub speedup: Vec<SpeedupRow>,
    pub speedup_svg: String,
    pub method: &'static str,
}

pub const METHOD: &str = "Host tests run on the machine sweepbench runs on, before any server of the sweep is started or loaded, with sysbench 1.0.20's default options (cpu: primes below 10000 per event; memory: 1 KiB blocks written in order to one shared buffer; fileio: the sweep's [fileio] options, random reads and writes with fsyncs unless it says otherwise, on files in the run's work directory), for the sweep's duration at each thread count, no warmup. Speedup = throughput at N threads ÷ throughput at 1 thread (geometric means of the repeats); N is a perfect speedup. A server series well below the host's cpu speedup at the same thread count is limited by the server (or its client), not by the machine's cores.";

/// The host section of a report from its host points, with the servers' speedups from the
/// workload sections; None when the run has no host test.
pub fn section(
    host: &[PointRecord],
    workloads: &[WorkloadSection],
    series: &[String],
) -> Option<HostSection> {
    if host.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for r in host {
        if !names.contains(&r.workload.as_str()) {
            names.push(&r.workload);
        }
    }
    let tests: Vec<HostTest> = names
        .iter()
        .map(|&name| {
            let mine: Vec<&PointRecord> = host
                .iter()
                .filter(|r| r.workload == name && r.status == PointStatus::Ok)
                .collect();
            let mut threads: Vec<u32> = mine.iter().map(|r| r.threads).collect();
            threads.sort_unstable();
            threads.dedup();
            let mut rows: Vec<HostRow> = threads
                .iter()
                .map(|&t| {
                    let at: Vec<&&PointRecord> = mine.iter().filter(|r| r.threads == t).collect();
                    let eps: Vec<f64> = at.iter().map(|r| r.tps).collect();
                    let p95: Vec<f64> = at.iter().map(|r| r.lat_p95_ms).collect();
                    HostRow {
                        threads: t,
                        eps: geo_mean(&eps),
                        spread_pct: spread_pct(&eps),
                        p95_ms: geo_mean(&p95),
                        repeats: at.len(),
                        speedup: None,
                    }
                })
                .collect();
            let one = rows.iter().find(|r| r.threads == 1).map(|r| r.eps);
            for r in &mut rows {
                r.speedup = one.filter(|&x| x > 0.0).map(|x| r.eps / x);
            }
            HostTest {
                name: name.to_string(),
                event: crate::engine::host::HostKind::from_name(name)
                    .map_or("events", |k| k.event()),
                rows,
            }
        })
        .collect();
    // Every curve as (name, [(threads, speedup)]).
    let mut curves: Vec<(String, Vec<(u32, f64)>)> = tests
        .iter()
        .map(|t| {
            let pts = t
                .rows
                .iter()
                .filter_map(|r| Some((r.threads, r.speedup?)))
                .collect();
            (format!("host {}", t.name), pts)
        })
        .collect();
    for w in workloads {
        for (i, s) in series.iter().enumerate() {
            let tps = |r: &super::Row| r.cells[i].as_ref().map(|c| c.tps);
            let Some(one) = w
                .rows
                .iter()
                .find(|r| r.threads == 1)
                .and_then(tps)
                .filter(|&x| x > 0.0)
            else {
                continue;
            };
            let pts = w
                .rows
                .iter()
                .filter_map(|r| Some((r.threads, tps(r)? / one)))
                .collect();
            curves.push((format!("{s} {}", w.workload), pts));
        }
    }
    curves.retain(|(_, pts): &(String, Vec<(u32, f64)>)| !pts.is_empty());
    let mut threads: Vec<u32> = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.0))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let speedup = threads
        .iter()
        .map(|&t| SpeedupRow {
            threads: t,
            values: curves
                .iter()
                .map(|(_, p)| p.iter().find(|x| x.0 == t).map(|x| x.1))
                .collect(),
        })
        .collect();
    let mut lines: Vec<chart::Line> = curves
        .iter()
        .map(|(n, p)| chart::Line::plain(n, p.clone()))
        .collect();
    if threads.len() > 1 {
        lines.push(chart::Line::plain(
            "perfect (N)",
            threads.iter().map(|&t| (t, t as f64)).collect(),
        ));
    }
    Some(HostSection {
        tests,
        speedup_svg: chart::svg(
            "speedup over one thread: host and servers",
            "× one thread",
            &lines,
        ),
        curves: curves.into_iter().map(|(n, _)| n).collect(),
        speedup,
        method: METHOD,
    })
}

/// The host's records apart from the servers' (which every other part of a report reads).
pub fn split(records: &[PointRecord]) -> (Vec<PointRecord>, Vec<PointRecord>) {
    records.iter().cloned().partition(|r| r.is_host())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's test record, at a p95 of 1 ms.
    fn rec(t: &str, c: &str, w: &str, threads: u32, repeat: u32, tps: f64) -> PointRecord {
        super::super::tests::rec(t, c, w, threads, repeat, tps, 1.0)
    }

    #[test]
    fn the_hosts_speedup_is_drawn_beside_the_servers() {
        let mut recs = Vec::new();
        for r in 1..=2 {
            recs.push(rec("host", "-", "cpu", 1, r, 1000.0));
            recs.push(rec("host", "-", "cpu", 2, r, 2000.0 - 100.0 * r as f64));
            recs.push(rec("a", "default", "oltp_read_only", 1, r, 500.0));
            recs.push(rec("a", "default", "oltp_read_only", 2, r, 600.0));
        }
        let (host, servers) = split(&recs);
        assert_eq!(host.len(), 4);
        assert!(servers.iter().all(|r| r.target == "a"));
        let m = super::super::ReportModel::build(
            "s",
            "r",
            "",
            &recs,
            None,
            &Default::default(),
            &Default::default(),
        );
        // The host is not a server series: no column, not the baseline.
        assert_eq!(m.series, vec!["a/default".to_string()]);
        assert_eq!(m.baseline, "a/default");
        let h = m.host.expect("a host section");
        assert_eq!(h.tests.len(), 1);
        let cpu = &h.tests[0];
        assert_eq!(cpu.name, "cpu");
        assert_eq!(cpu.rows.len(), 2);
        // 1900 and 1800 at two threads: their geometric mean over 1000.
        let two = (1900.0f64 * 1800.0).sqrt();
        assert!((cpu.rows[1].eps - two).abs() < 1e-9);
        assert!((cpu.rows[1].speedup.unwrap() - two / 1000.0).abs() < 1e-9);
        assert_eq!(cpu.rows[1].repeats, 2);
        assert_eq!(h.curves, vec!["host cpu", "a/default oltp_read_only"]);
        assert_eq!(h.speedup.len(), 2);
        assert_eq!(h.speedup[1].threads, 2);
        assert!((h.speedup[1].values[1].unwrap() - 1.2).abs() < 1e-9);
        assert!(h.speedup_svg.contains("<svg"));
        // Without host points there is no section.
        assert!(section(&[], &[], &[]).is_none());
    }
}
