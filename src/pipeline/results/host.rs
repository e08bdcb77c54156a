//! The host a run measured from: its identity (CPU model, cores, memory, kernel) and a
//! two-second probe of its CPU speed and fsync latency, kept in manifest.json so that
//! `compare` can say when a difference may be the machine's rather than the server's.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Probe {
    /// Million simple integer operations per second on one core (median of rounds).
    pub cpu_mops: f64,
    /// (max − min) / median of the rounds, percent.
    pub cpu_spread_pct: f64,
    /// sysbench's CPU test on one thread (`--cpu-max-prime=10000`), events per second over
    /// 0.3 s, as `bench cpu` counts them (on the project's VM 1.45× sysbench 1.0.20's own
    /// figure: compare hosts with one tool). 0 in runs made before it was measured.
    #[serde(default)]
    pub cpu_eps: f64,
    /// Median latency of a 4 KiB write + fdatasync in the results directory, microseconds.
    pub fsync_us: f64,
    /// (p90 − p10) / median of the fsyncs, percent.
    pub fsync_spread_pct: f64,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    #[serde(default)]
    pub hostname: String,
    #[serde(default)]
    pub cpu: String,
    /// The CPUs this process may use: its affinity's count, capped by a CPU quota.
    #[serde(default)]
    pub cores: usize,
    /// The CPUs its affinity allows (`taskset`, a cpuset): what the host's load of a point
    /// is counted over. 0 in runs made before it was recorded.
    #[serde(default)]
    pub cpus_allowed: usize,
    /// Its cgroup's CPU quota in CPUs (a pod's CPU limit), where there is one: time, not
    /// CPUs, so the host's load is still counted over `cpus_allowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    #[serde(default)]
    pub memory_bytes: u64,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub probe: Option<Probe>,
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// This machine's identity, and with `probe_dir` the probe (about two seconds; a file is
/// written and removed there).
pub fn fingerprint(probe_dir: Option<&Path>) -> Fingerprint {
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let mem_kb: u64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    Fingerprint {
        hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        cpu,
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpus_allowed: crate::affinity::allowed(std::process::id() as i32).map_or(0, |c| c.len()),
        cpu_quota: crate::usage::cpu_quota(),
        memory_bytes: mem_kb * 1024,
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        probe: probe_dir.and_then(probe),
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// A fixed integer workload (an LCG) for `d`: million steps per second.
fn cpu_round(d: Duration) -> f64 {
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut steps: u64 = 0;
    while start.elapsed() < d {
        for _ in 0..10_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        }
        steps += 10_000;
    }
    std::hint::black_box(x);
    steps as f64 / start.elapsed().as_secs_f64() / 1e6
}

/// sysbench cpu's events per second on this thread for `d`.
fn cpu_eps(d: Duration) -> f64 {
    let start = Instant::now();
    let mut events = 0u64;
    while start.elapsed() < d {
        std::hint::black_box(crate::engine::workload::primes::primes_below(
            std::hint::black_box(10_000),
        ));
        events += 1;
    }
    events as f64 / start.elapsed().as_secs_f64()
}

fn probe(dir: &Path) -> Option<Probe> {
    let cpu = sorted(
        (0..9)
            .map(|_| cpu_round(Duration::from_millis(100)))
            .collect(),
    );
    let path = dir.join(".fsync-probe");
    let mut f = std::fs::File::create(&path).ok()?;
    let block = [0u8; 4096];
    let mut lat = Vec::new();
    for _ in 0..40 {
        let t = Instant::now();
        if f.write_all(&block).is_err() || f.sync_data().is_err() {
            break;
        }
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(f);
    let _ = std::fs::remove_file(&path);
    let lat = sorted(lat);
    if lat.len() < 10 {
        return None;
    }
    let q = |v: &[f64], p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    let cpu_med = q(&cpu, 0.5);
    let fs_med = q(&lat, 0.5);
    Some(Probe {
        cpu_mops: (cpu_med * 10.0).round() / 10.0,
        cpu_eps: (cpu_eps(Duration::from_millis(300)) * 100.0).round() / 100.0,
        cpu_spread_pct: ((cpu[cpu.len() - 1] - cpu[0]) / cpu_med * 1000.0).round() / 10.0,
        fsync_us: (fs_med * 10.0).round() / 10.0,
        fsync_spread_pct: ((q(&lat, 0.9) - q(&lat, 0.1)) / fs_med * 1000.0).round() / 10.0,
    })
}

/// Why a difference between two runs may be the host's: a different machine, or a probe
/// that moved beyond its own noise (three times its spread, and at least 10 % for the CPU and
/// 50 % for fsync).
pub fn differences(base: &Fingerprint, cand: &Fingerprint) -> Vec<String> {
    let mut out = Vec::new();
    for (what, a, b) in [
        ("host", &base.hostname, &cand.hostname),
        ("CPU", &base.cpu, &cand.cpu),
        ("kernel", &base.kernel, &cand.kernel),
    ] {
        if a != b && !a.is_empty() && !b.is_empty() {
            out.push(format!(
                "the runs come from different machines: {what} {a} vs {b}"
            ));
        }
    }
    if base.cores != cand.cores && base.cores > 0 && cand.cores > 0 {
        out.push(format!(
            "the runs come from different machines: {} vs {} cores",
            base.cores, cand.cores
        ));
    }
    if let (Some(a), Some(b)) = (&base.probe, &cand.probe) {
        let moved = |x: f64, y: f64, sx: f64, sy: f64, floor: f64| {
            let d = (y - x) / x * 100.0;
            (x > 0.0 && d.abs() > (3.0 * sx.max(sy)).max(floor)).then_some(d)
        };
        if let Some(d) = moved(
            a.cpu_mops,
            b.cpu_mops,
            a.cpu_spread_pct,
            b.cpu_spread_pct,
            10.0,
        ) {
            out.push(format!(
                "the host's CPU probe moved {d:+.0} % ({} → {} M ops/s): a slower or busier machine looks like a slower server",
                a.cpu_mops, b.cpu_mops
            ));
        }
        if let Some(d) = moved(
            a.fsync_us,
            b.fsync_us,
            a.fsync_spread_pct,
            b.fsync_spread_pct,
            50.0,
        ) {
            out.push(format!(
                "the host's fsync probe moved {d:+.0} % ({} → {} µs per 4 KiB fdatasync): write workloads may differ for the disk's sake",
                a.fsync_us, b.fsync_us
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_and_leaves_nothing_behind() {
        let d = tempfile::tempdir().unwrap();
        let f = fingerprint(Some(d.path()));
        let p = f.probe.expect("probe ran");
        assert!(p.cpu_mops > 0.0 && p.fsync_us > 0.0, "{p:?}");
        // At least one event of sysbench's CPU test was timed.
        assert!(p.cpu_eps > 0.0, "{p:?}");
        assert!(!f.kernel.is_empty() && f.memory_bytes > 0);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn differences_name_the_machine_or_the_probe() {
        let probe = Probe {
            cpu_mops: 1000.0,
            cpu_spread_pct: 2.0,
            cpu_eps: 2400.0,
            fsync_us: 500.0,
            fsync_spread_pct: 20.0,
        };
        let a = Fingerprint {
            hostname: "db1".into(),
            cpu: "X".into(),
            cores: 2,
            kernel: "6.1".into(),
            probe: Some(probe.clone()),
            ..Fingerprint::default()
        };
        assert!(differences(&a, &a).is_empty());
        let mut b = a.clone();
        b.probe = Some(Probe {
            cpu_mops: 970.0, // −3 %: within the noise
            fsync_us: 1600.0,
            ..probe
        });
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("fsync probe moved +220 %"), "{d:?}");
        b.cores = 4;
        b.hostname = "db2".into();
        let d = differences(&a, &b);
        assert!(d.iter().any(|x| x.contains("host db1 vs db2")), "{d:?}");
        assert!(d.iter().any(|x| x.contains("2 vs 4 cores")), "{d:?}");
    }
}
