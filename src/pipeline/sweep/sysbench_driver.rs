//! The `sysbench` driver: runs the sysbench binary for a point (same server, same options) and
//! reads its output with the import parser, so the two load generators can be compared point
//! by point, and users can run their own Lua scripts through sweeps.

use crate::engine::workload::WorkloadKind;
use crate::pipeline::import;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;
use anyhow::{bail, Context};

fn args(spec: &SweepSpec, w: WorkloadKind, threads: u32, c: &ConnInfo, time_s: u64) -> Vec<String> {
    let mut a = vec![w.name().to_string()];
    match &c.socket {
        Some(s) => a.push(format!("--mysql-socket={s}")),
        None => {
            a.push(format!("--mysql-host={}", c.host));
            a.push(format!("--mysql-port={}", c.port));
        }
    }
    a.push(format!("--mysql-user={}", c.user));
    if let Some(p) = &c.password {
        // sysbench reads the password only from its command line.
        a.push(format!("--mysql-password={p}"));
    }
    a.push(format!("--mysql-db={}", c.db));
    a.extend([
        format!("--tables={}", spec.data.tables),
        format!("--table-size={}", spec.data.table_size),
        format!("--threads={threads}"),
        format!("--time={time_s}"),
        // Per-second samples, as the native driver takes.
        "--report-interval=1".to_string(),
    ]);
    if spec.run.rate > 0 {
        a.push(format!("--rate={}", spec.run.rate));
    }
    a.extend(spec.workload_options.sysbench_args());
    a.push("run".into());
    a
}

async fn sysbench(args: &[String]) -> anyhow::Result<String> {
    let out = tokio::process::Command::new("sysbench")
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .context("running sysbench (apt-get install sysbench)")?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let fatal = stdout
            .lines()
            .chain(err.lines())
            .find(|l| l.contains("FATAL") || l.contains("invalid option"))
            .unwrap_or("");
        bail!("sysbench exited with {}: {fatal}", out.status);
    }
    Ok(stdout)
}

/// Runs one point with sysbench and fills `rec`. sysbench 1.0.20 has no --warmup-time, so a
/// warmup is a separate, discarded sysbench run of that length.
pub async fn run_point(
    spec: &SweepSpec,
    w: WorkloadKind,
    threads: u32,
    c: &ConnInfo,
    rec: &mut PointRecord,
) -> anyhow::Result<Vec<crate::engine::exec::IntervalStats>> {
    if spec.run.warmup_s > 0 {
        sysbench(&args(spec, w, threads, c, spec.run.warmup_s)).await?;
    }
    let cpu0 = crate::usage::children_cpu_seconds();
    let out = sysbench(&args(spec, w, threads, c, spec.run.duration_s)).await?;
    let cpu = crate::usage::children_cpu_seconds() - cpu0;
    let parsed = import::parse(&out);
    let mut r = import::record(&parsed, &rec.target, rec.repeat, Some(threads))?;
    r.point_id = rec.point_id.clone();
    r.config = rec.config.clone();
    r.driver = "sysbench".into();
    r.workload = w.name().into();
    r.started_at = rec.started_at.clone();
    r.server_version = rec.server_version.clone();
    r.run_id = rec.run_id.clone();
    r.client_cpu_s = (cpu * 1e4).round() / 1e4;
    *rec = r;
    Ok(parsed.intervals)
}
