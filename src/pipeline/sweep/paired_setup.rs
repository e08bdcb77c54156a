//! What the paired design sets up before its first slice: the memory every server needs at
//! once (refused when it would not fit), each table read once so no slice pays for a cold
//! buffer pool, and a duet's CPU isolation.

use super::block::Block;
use super::paired::Series;
use super::run::Runner;
use crate::pipeline::spec::SweepSpec;

/// Memory a managed server takes beside its buffer pool (threads, log buffer, caches).
const SERVER_OVERHEAD_MB: u64 = 200;

/// Megabytes from a my.cnf size ("2G", "512M", "134217728").
fn size_mb(v: &str) -> Option<u64> {
    let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
    let (num, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1.0 / 1024.0),
        'm' | 'M' => (&v[..v.len() - 1], 1.0),
        'g' | 'G' => (&v[..v.len() - 1], 1024.0),
        't' | 'T' => (&v[..v.len() - 1], 1024.0 * 1024.0),
        _ => (v, 1.0 / 1024.0 / 1024.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|n| (n * mult).ceil() as u64)
}

fn available_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// The paired design keeps every managed server up at once: refuse what would not fit in
/// memory, naming each server's buffer pool.
pub(super) fn check_memory(spec: &SweepSpec, series: &[(String, String)]) -> anyhow::Result<()> {
    use crate::pipeline::spec::target::TargetKind;
    let mut need = 0;
    let mut parts = Vec::new();
    for (t, c) in series {
        let managed = spec
            .targets
            .iter()
            .any(|x| &x.name == t && matches!(x.kind, TargetKind::Managed(_)));
        if !managed {
            continue;
        }
        let pool = spec
            .configs
            .iter()
            .find(|x| &x.name == c)
            .and_then(|x| x.vars.iter().find(|(k, _)| k == "innodb_buffer_pool_size"))
            .and_then(|(_, v)| size_mb(v))
            .unwrap_or(128);
        need += pool + SERVER_OVERHEAD_MB;
        parts.push(format!("{t}/{c} {pool} MiB"));
    }
    let Some(free) = available_mb() else {
        return Ok(());
    };
    if need > free * 8 / 10 {
        anyhow::bail!(
            "design = \"paired\" keeps {} managed servers up at once: about {need} MiB (buffer pools {}, plus {SERVER_OVERHEAD_MB} MiB each) of {free} MiB available; lower innodb_buffer_pool_size in the configs, pair fewer series, or use design = \"sequential\"",
            parts.len(),
            parts.join(", ")
        );
    }
    Ok(())
}

/// Reads every table once through its primary key and its secondary index, so the first
/// measured slice does not pay for a cold buffer pool.
pub(super) async fn prewarm(r: &Runner<'_>, b: &Block) -> anyhow::Result<()> {
    use mysql_async::prelude::Queryable;
    let Some(c) = &b.conn else { return Ok(()) };
    let mut conn = crate::engine::db::open(
        &c.conn_options(),
        crate::engine::db::opts(&c.conn_options(), 1),
    )
    .await?;
    for i in 1..=r.spec.data.tables {
        let t = format!("sbtest{i}");
        let _: Option<(i64, Option<i64>)> = conn
            .query_first(format!("SELECT COUNT(*), SUM(LENGTH(c)) FROM `{t}`"))
            .await?;
        let _: Option<Option<i64>> = conn
            .query_first(format!("SELECT SUM(k) FROM `{t}` FORCE INDEX (k_1)"))
            .await
            .or_else(|_| Ok::<_, mysql_async::Error>(None))?;
    }
    let _ = conn.disconnect().await;
    Ok(())
}

/// A duet's isolation: the CPUs this process may use, shared out evenly between the series;
/// each managed server's threads and each series' client workers are held to its share.
/// Unless `forced`, only when every share has `ISOLATE_MIN_CPUS`. Returns what was done, per
/// series, for verdicts.json (nothing when the sides share every CPU).
pub(super) fn isolate(r: &Runner<'_>, series: &mut [Series], forced: bool) -> Vec<String> {
    use crate::pipeline::spec::design::ISOLATE_MIN_CPUS;
    let cpus = crate::affinity::allowed(0).unwrap_or_default();
    let need = if forced { 1 } else { ISOLATE_MIN_CPUS } * series.len();
    let groups = crate::affinity::split(&cpus, series.len()).filter(|_| cpus.len() >= need);
    let Some(groups) = groups else {
        r.note(format!(
            "duet: {} CPU(s) for {} series, fewer than {need}: the sides are not isolated (they share every CPU; isolate = \"cpus\" gives each side one)",
            cpus.len(),
            series.len()
        ));
        return Vec::new();
    };
    let mut said = Vec::new();
    for (s, g) in series.iter_mut().zip(groups) {
        let list = g
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let server = match s.block.server_pid() {
            Some(pid) => match crate::affinity::pin_process(pid, &g) {
                Ok(_) => format!("server and client on CPU {list}"),
                Err(e) => format!("client on CPU {list}; the server could not be pinned ({e})"),
            },
            None => format!("client on CPU {list}; the server is external (not pinned)"),
        };
        said.push(format!("{}: {server}", s.key));
        s.cpus = g;
    }
    r.note(format!("duet isolation: {}", said.join("; ")));
    said
}
