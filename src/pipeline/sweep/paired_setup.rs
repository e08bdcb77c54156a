//! What the paired design sets up before its first slice: the memory every server needs at
//! once (refused when it would not fit), each table read once so no slice pays for a cold
//! buffer pool, a duet's CPU isolation, and each point's connections opened, pinned and
//! warmed before its first round.

use super::block::Block;
use super::measure::{is_model, Measure, Measured};
use super::runner::Runner;
use super::slices::{Quiet, Series};
use super::window::{self, Window};
use crate::engine::exec;
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::design::Pin;
use crate::pipeline::spec::SweepSpec;

/// Memory a managed server takes beside its buffer pool (threads, log buffer, caches).
const SERVER_OVERHEAD_MB: u64 = 200;

/// Megabytes from a my.cnf size ("2G", "512M", "134217728").
pub(super) fn size_mb(v: &str) -> Option<u64> {
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

pub(super) fn available_mb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// The paired design keeps every managed server up at once: refuse what would not fit in
/// memory, naming each server's buffer pool.
pub(super) fn check_memory(spec: &SweepSpec, series: &[(String, String)]) -> anyhow::Result<()> {
    let mut need = 0;
    let mut parts = Vec::new();
    for (t, c) in series {
        let Some((nodes, class)) =
            spec.targets
                .iter()
                .find(|x| &x.name == t)
                .and_then(|x| match &x.kind {
                    crate::pipeline::spec::target::TargetKind::Managed(m) => {
                        Some((m.cluster.as_ref().map_or(1, |c| c.nodes as u64), m.class()))
                    }
                    _ => None,
                })
        else {
            continue;
        };
        // A class's server takes at most its memory limit.
        if let Some(k) = class {
            need += nodes * (k.memory >> 20);
            parts.push(format!("{t}/{c} class {}", k.shown()));
            continue;
        }
        let pool = spec
            .configs
            .iter()
            .find(|x| &x.name == c)
            .and_then(|x| x.vars.iter().find(|(k, _)| k == "innodb_buffer_pool_size"))
            .and_then(|(_, v)| size_mb(v))
            .unwrap_or(128);
        need += nodes * (pool + SERVER_OVERHEAD_MB);
        parts.push(if nodes > 1 {
            format!("{t}/{c} {nodes} × {pool} MiB")
        } else {
            format!("{t}/{c} {pool} MiB")
        });
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
    let Some(c) = &b.conn else { return Ok(()) };
    let o = c.conn_options();
    crate::engine::watch::watched(&o, "prewarming the tables", read_all(r, c), || {}).await
}

async fn read_all(r: &Runner<'_>, c: &super::ConnInfo) -> anyhow::Result<()> {
    let mut conn = crate::engine::admin::Admin::open(&c.conn_options(), 1).await?;
    for i in 1..=r.spec.data.tables {
        let t = format!("sbtest{i}");
        conn.first(format!("SELECT COUNT(*), SUM(LENGTH(c)) FROM `{t}`"))
            .await?;
        // A table without the k index is read whole by the statement before.
        let _ = conn
            .first(format!("SELECT SUM(k) FROM `{t}` FORCE INDEX (k_1)"))
            .await;
    }
    conn.close().await;
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

/// `run.pin`: each client worker of `rig` and the server thread serving its connection held
/// to fixed CPUs, worker i on the i-th CPU this process may use (round robin) and its server
/// thread on the same one (`Pin::Pairs`) or the next (`Pin::Apart`). Where a client thread
/// and its server thread run is otherwise the scheduler's lottery, and on a VM it moves a
/// one-thread point fourfold (docs/statistics.md, "Where the threads run"); pinned alike on
/// every side, it is the same for every slice. Managed servers only (an external server's
/// threads are not ours to move). Returns what was done.
pub(super) async fn pin_pairs(
    b: &Block,
    rig: &crate::engine::exec::Rig,
    how: Pin,
) -> anyhow::Result<String> {
    if b.server_pid().is_none() {
        anyhow::bail!("the server is external: its threads are not pinned");
    }
    let Some(c) = &b.conn else {
        anyhow::bail!("no connection")
    };
    let cpus = crate::affinity::allowed(0)?;
    if cpus.is_empty() {
        anyhow::bail!("this process may run on no CPU it can name");
    }
    let ids: Vec<String> = rig
        .workers()
        .iter()
        .map(|w| w.connection_id.to_string())
        .collect();
    let mut conn = crate::engine::admin::Admin::open(&c.conn_options(), 1).await?;
    let list = ids.join(",");
    // MariaDB names the server thread in PROCESSLIST; MySQL in performance_schema.
    let rows = match conn
        .rows(format!(
            "SELECT ID, TID FROM information_schema.PROCESSLIST WHERE ID IN ({list})"
        ))
        .await
    {
        Ok(r) => r,
        Err(_) => {
            conn.rows(format!("SELECT PROCESSLIST_ID, THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID IN ({list})"))
                .await?
        }
    };
    conn.close().await;
    let number = |v: &Option<String>| v.as_deref().and_then(|x| x.parse::<u64>().ok());
    let rows: Vec<(u64, u64)> = rows
        .iter()
        .filter_map(|r| Some((number(r.first()?)?, number(r.get(1)?)?)))
        .collect();
    let mut pinned = 0;
    for (i, w) in rig.workers().iter().enumerate() {
        let client = [cpus[i % cpus.len()]];
        let server = match how {
            Pin::Apart => [cpus[(i + 1) % cpus.len()]],
            _ => client,
        };
        let Some(&(_, tid)) = rows.iter().find(|(id, _)| *id == w.connection_id as u64) else {
            continue;
        };
        crate::affinity::pin(w.tid, &client)?;
        crate::affinity::pin(tid as i32, &server)?;
        pinned += 1;
    }
    if pinned < ids.len() {
        anyhow::bail!(
            "{} of {} connections' server threads not found (PROCESSLIST.TID, performance_schema.threads)",
            ids.len() - pinned,
            ids.len()
        );
    }
    Ok(format!(
        "{pinned} client/server thread pair(s) pinned over CPU(s) {}, {}",
        match how {
            Pin::Apart if cpus.len() > 1 => "each server thread beside its client's CPU",
            _ => "each server thread on its client's CPU",
        },
        cpus.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    ))
}

/// Each series' connections for point `cell`, opened once and warmed at its thread count
/// (not recorded); its slices run on them. Pinned first where the design asks (what was
/// pinned is said, and kept in `pinned`). A series that cannot measure has why instead.
pub(super) async fn open_rigs(
    r: &mut Runner<'_>,
    cell: &Point,
    series: &[Series],
    tag: &str,
    pinned: &mut Vec<String>,
) -> Vec<Result<exec::Rig, String>> {
    let spec = r.spec;
    let mut rigs: Vec<Result<exec::Rig, String>> = Vec::new();
    for s in series {
        let opts = s.block.conn.as_ref().map(|c| {
            let mut o = window::config(spec, cell, Window::Warm, Some(c));
            // The rig's workers start on the series' CPUs (a duet's isolation).
            o.cpus = s.cpus.clone();
            o
        });
        rigs.push(match (opts, &s.block.error) {
            (_, Some(e)) => Err(e.clone()),
            (None, None) => Err("no connection".to_string()),
            (Some(o), None) => exec::Rig::open(&o).await.map_err(|e| format!("{e:#}")),
        });
    }
    let pin = spec.run.design.pin;
    if pin != Pin::None && !spec.run.design.duet() {
        for (s, rig) in series.iter().zip(&rigs) {
            if let Ok(rig) = rig {
                match pin_pairs(&s.block, rig, pin).await {
                    Ok(m) => pinned.push(format!("{}: {m}", s.key)),
                    Err(e) => pinned.push(format!("{}: not pinned: {e:#}", s.key)),
                }
            }
        }
        r.note(format!("{tag}: {}", pinned.join("; ")));
    }
    // Warmed at the point's thread count once pinned, not recorded; a model needs none.
    let at = r.run_at();
    for (s, rig) in series.iter().zip(rigs.iter_mut()) {
        if is_model(&s.block) || rig.is_err() {
            continue;
        }
        let mut unkept = PointRecord::new(r.run_id, cell, &s.block.version);
        let warmed = match Measure::on_rig(&s.block, rig) {
            Ok(mut how) => {
                how.run(spec, cell, Window::Warm, &mut unkept, at, &mut Quiet)
                    .await
            }
            Err(e) => Err(anyhow::anyhow!(e)),
        };
        let failed = match warmed {
            Err(e) => Some(format!("warming: {e:#}")),
            Ok(Measured::Report { report, .. }) => report.fatal.map(|f| format!("warming: {f}")),
            Ok(Measured::Sysbench { .. }) => None,
        };
        if let Some(e) = failed {
            *rig = Err(e);
        }
    }
    rigs
}
