//! The report's "Proxy cost" section: for each proxy target of the sweep and the target it
//! stands in front of, per config, workload and thread count, the throughput through the
//! proxy as a share of the direct one and the latency it adds.

use crate::engine::metrics::geo_mean;
use crate::pipeline::results::{PointRecord, PointStatus};

#[derive(Debug, Clone, serde::Serialize)]
pub struct ProxyCostRow {
    pub proxy: String,
    pub direct: String,
    pub config: String,
    pub workload: String,
    pub threads: u32,
    /// Geometric means of the ok repeats.
    pub direct_tps: f64,
    pub proxy_tps: f64,
    /// proxy_tps / direct_tps.
    pub ratio: f64,
    /// Mean latency and p95 through the proxy minus direct, ms (means over the repeats).
    pub avg_added_ms: f64,
    pub p95_added_ms: f64,
}

/// Which targets are proxies, and of which target, from the run's sweep.toml (leniently):
/// `proxy = { target = … }`, or a url target's `same_server_as`.
pub fn pairs(sweep_toml: &str) -> Vec<(String, String)> {
    let v: toml::Value =
        toml::from_str(sweep_toml).unwrap_or(toml::Value::Table(Default::default()));
    v.get("targets")
        .and_then(|t| t.as_array())
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    let name = t.get("name")?.as_str()?;
                    // A managed proxy, or a url the user says reaches the same server.
                    let of = match t.get("proxy") {
                        Some(p) => p.get("target")?.as_str()?,
                        None => t.get("same_server_as")?.as_str()?,
                    };
                    Some((name.to_string(), of.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn rows(points: &[PointRecord], pairs: &[(String, String)]) -> Vec<ProxyCostRow> {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut out = Vec::new();
    for (proxy, direct) in pairs {
        let mut keys: Vec<(String, String, u32)> = points
            .iter()
            .filter(|p| &p.target == proxy && p.status == PointStatus::Ok)
            .map(|p| (p.config.clone(), p.workload.clone(), p.threads))
            .collect();
        keys.sort();
        keys.dedup();
        for (config, workload, threads) in keys {
            let of = |t: &str| -> Vec<&PointRecord> {
                points
                    .iter()
                    .filter(|p| {
                        p.target == t
                            && p.config == config
                            && p.workload == workload
                            && p.threads == threads
                            && p.status == PointStatus::Ok
                            && p.tps > 0.0
                    })
                    .collect()
            };
            let (d, p) = (of(direct), of(proxy));
            if d.is_empty() || p.is_empty() {
                continue;
            }
            let tps = |v: &[&PointRecord]| geo_mean(&v.iter().map(|r| r.tps).collect::<Vec<_>>());
            let avg =
                |v: &[&PointRecord]| mean(&v.iter().map(|r| r.lat_avg_ms).collect::<Vec<_>>());
            let p95 =
                |v: &[&PointRecord]| mean(&v.iter().map(|r| r.lat_p95_ms).collect::<Vec<_>>());
            let (dt, pt) = (tps(&d), tps(&p));
            out.push(ProxyCostRow {
                proxy: proxy.clone(),
                direct: direct.clone(),
                config,
                workload,
                threads,
                direct_tps: dt,
                proxy_tps: pt,
                ratio: pt / dt,
                avg_added_ms: avg(&p) - avg(&d),
                p95_added_ms: p95(&p) - p95(&d),
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.proxy, &a.config, &a.workload, a.threads).cmp(&(
            &b.proxy,
            &b.config,
            &b.workload,
            b.threads,
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_the_ratio_of_the_two_and_the_latency_added() {
        let toml = "name = \"p\"\n[[targets]]\nname = \"direct\"\nserver = {}\n[[targets]]\nname = \"hap\"\nproxy = { kind = \"haproxy\", target = \"direct\" }\n";
        let pairs = pairs(toml);
        assert_eq!(pairs, vec![("hap".to_string(), "direct".to_string())]);
        let rec = |target: &str, tps: f64, avg: f64, p95: f64| PointRecord {
            target: target.into(),
            config: "default".into(),
            workload: "oltp_point_select".into(),
            threads: 4,
            status: PointStatus::Ok,
            tps,
            lat_avg_ms: avg,
            lat_p95_ms: p95,
            ..PointRecord::default()
        };
        let points = vec![
            rec("direct", 1000.0, 1.0, 2.0),
            rec("direct", 4000.0, 1.0, 2.0),
            rec("hap", 1000.0, 1.5, 3.0),
            rec("hap", 1000.0, 1.7, 3.4),
        ];
        let r = rows(&points, &pairs);
        assert_eq!(r.len(), 1);
        assert!((r[0].direct_tps - 2000.0).abs() < 1e-9, "{r:?}");
        assert!((r[0].ratio - 0.5).abs() < 1e-9, "{r:?}");
        assert!((r[0].avg_added_ms - 0.6).abs() < 1e-9, "{r:?}");
        assert!((r[0].p95_added_ms - 1.2).abs() < 1e-9, "{r:?}");
    }
}
