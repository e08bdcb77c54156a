//! A target's benchmark data: its database created when the server says it is missing, its
//! tables counted, and prepared (or prepared again) as `[data] prepare` asks, once per run.

use super::sizing;
use crate::engine::workload::prepare;
use crate::pipeline::events::Events;
use crate::pipeline::preflight;
use crate::pipeline::spec::size::{bytes, SizeOf, Sized};
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::{PreparePolicy, SweepSpec};

/// How often a long prepare says it is still going.
const PREPARE_NOTE_EVERY: std::time::Duration = std::time::Duration::from_secs(15);

/// An administrative connection to the benchmark database, created first when the server
/// says it is missing.
async fn data_conn(
    o: &crate::engine::config::EngineConfig,
    ev: &dyn Events,
) -> anyhow::Result<crate::engine::admin::Admin> {
    use crate::engine::admin::Admin;
    use crate::engine::db::cannot_connect;
    match Admin::open(&o.conn, 0).await {
        Ok(c) => Ok(c),
        // ER_BAD_DB_ERROR: the database does not exist yet.
        Err(e) if e.code() == Some(1049) => {
            let mut c = Admin::open_no_db(&o.conn)
                .await
                .map_err(|e| cannot_connect(&o.conn, 0, e.code(), &e))?;
            c.exec(format!("CREATE DATABASE IF NOT EXISTS `{}`", o.conn.db))
                .await
                .map_err(|e| anyhow::anyhow!("cannot create database '{}': {e}", o.conn.db))?;
            ev.note(&format!("Created database '{}'", o.conn.db));
            c.close().await;
            Admin::connect(&o.conn, 0).await
        }
        Err(e) => Err(cannot_connect(&o.conn, 0, e.code(), &e)),
    }
}

/// Prepares `target`'s data when the policy asks (once per target per run), with the
/// target's storage engine, saying what it does as `key`'s notes; the engine's own
/// sysbench-style lines stay unprinted.
pub(crate) async fn ensure_data(
    spec: &SweepSpec,
    c: &ConnInfo,
    (target, key): (&str, &str),
    ev: &dyn Events,
) -> anyhow::Result<()> {
    let engine = spec.engine_of(target).to_string();
    let mut o = spec.engine_config(spec.run.workloads[0], 1, c.conn_options());
    o.quiet = true;
    let rows = crate::engine::watch::watched(
        &o.conn,
        "counting the rows of the tables",
        async {
            let mut conn = data_conn(&o, ev).await?;
            let rows = preflight::table_rows(&mut conn, &c.db, spec.data.tables).await?;
            let other = preflight::tables_not_of(&mut conn, &c.db, &engine).await?;
            conn.close().await;
            Ok((rows, other))
        },
        || {},
    )
    .await?;
    let (rows, other) = rows;
    if !other.is_empty() {
        ev.note(&format!(
            "{key}: {} of another engine than {engine}: prepared again",
            other.join(", ")
        ));
    }
    let mut o = spec.engine_config(
        crate::engine::workload::WorkloadKind::ReadWrite,
        1,
        c.conn_options(),
    );
    o.threads = 1;
    o.quiet = true;
    o.wl.storage_engine = engine;
    let sizing = match spec.data.size {
        None => None,
        Some(size) => {
            let present = (rows.as_slice(), other.is_empty());
            match sized(spec, (target, key), size, &o, present, ev).await? {
                Sizing::Reused => return Ok(()),
                Sizing::Rows(n, per_row, asked) => Some((n, per_row, asked, size)),
            }
        }
    };
    if let Some((n, ..)) = sizing {
        o.wl.table_size = n;
    }
    let ready = other.is_empty() && rows.iter().all(|r| *r == Some(spec.data.table_size as u64));
    let must = match spec.data.prepare {
        PreparePolicy::Never => return Ok(()),
        PreparePolicy::Always => true,
        PreparePolicy::Auto => !ready || sizing.is_some(),
    };
    if !must {
        return Ok(());
    }
    // Only what is there is dropped: a fresh server is not told of tables it never had (a
    // sized target's were, before its probe).
    if sizing.is_none() && rows.iter().any(Option::is_some) {
        ev.note(&format!("{key}: dropping the sbtest tables there first"));
        prepare::cleanup(&o).await?;
    }
    prepare_noted(&o, key, ev).await?;
    if let Some((rows, per_row, asked, size)) = sizing {
        let s = Sized {
            asked_bytes: asked,
            rows,
            bytes_per_row: per_row,
            measured_bytes: measured(&o, ev).await?,
        };
        let s = corrected(&mut o, key, s, ev).await?;
        record(spec, (target, key), size, s, ev);
    }
    Ok(())
}

/// Prepares what `o` says, saying every `PREPARE_NOTE_EVERY` that it is still going (a big
/// data set takes minutes; the engine's own progress lines are sysbench's, on the terminal,
/// which a sweep's sink may not be) and how long it took.
async fn prepare_noted(
    o: &crate::engine::config::EngineConfig,
    key: &str,
    ev: &dyn Events,
) -> anyhow::Result<()> {
    let began = std::time::Instant::now();
    let preparing = prepare::prepare(o);
    tokio::pin!(preparing);
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::now() + PREPARE_NOTE_EVERY,
        PREPARE_NOTE_EVERY,
    );
    loop {
        tokio::select! {
            done = &mut preparing => {
                done?;
                break;
            }
            _ = tick.tick() => ev.note(&format!(
                "{key}: preparing {} table(s) × {} rows, {:.0} s so far",
                o.wl.tables,
                o.wl.table_size,
                began.elapsed().as_secs_f64()
            )),
        }
    }
    ev.note(&format!(
        "{key}: prepared {} table(s) × {} rows in {:.0} s",
        o.wl.tables,
        o.wl.table_size,
        began.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The sbtest tables' bytes on `o`'s server.
async fn measured(o: &crate::engine::config::EngineConfig, ev: &dyn Events) -> anyhow::Result<u64> {
    let mut conn = data_conn(o, ev).await?;
    let have = sizing::measured(&mut conn, &o.conn.db, o.wl.tables).await;
    conn.close().await;
    have
}

/// A sized data set further than `sizing::REPREPARE_ABOVE` from what was asked is prepared
/// once more at the row size the full tables showed: a row takes fewer bytes in a big table
/// than in the probe's (InnoDB reserves whole extents ahead), by up to a tenth here.
async fn corrected(
    o: &mut crate::engine::config::EngineConfig,
    key: &str,
    s: Sized,
    ev: &dyn Events,
) -> anyhow::Result<Sized> {
    let off = s.measured_bytes as f64 / s.asked_bytes.max(1) as f64 - 1.0;
    if off.abs() <= sizing::REPREPARE_ABOVE || s.measured_bytes == 0 {
        return Ok(s);
    }
    let per_row = s.measured_bytes as f64 / (s.rows as f64 * o.wl.tables as f64);
    let rows = sizing::rows_for(s.asked_bytes, o.wl.tables, per_row);
    ev.note(&format!(
        "{key}: the tables hold {} ({:+.1} % of the {} asked): a row takes {per_row:.0} bytes at this size, not the probe's {:.0}; prepared again with {rows} rows a table",
        bytes(s.measured_bytes),
        off * 100.0,
        bytes(s.asked_bytes),
        s.bytes_per_row
    ));
    prepare::cleanup(o).await?;
    o.wl.table_size = rows;
    prepare_noted(o, key, ev).await?;
    Ok(Sized {
        rows,
        bytes_per_row: per_row,
        measured_bytes: measured(o, ev).await?,
        ..s
    })
}

/// What `[data] size` decided for a target before its prepare.
enum Sizing {
    /// The tables there hold what is asked: nothing to prepare.
    Reused,
    /// Prepare this many rows per table (this server's bytes a row measured, the bytes
    /// asked); the tables that were there are dropped.
    Rows(u32, f64, u64),
}

/// Sizes `target`'s data: the tables `present` (their rows, and whether all are of the
/// target's engine) reused when they hold what is asked, else dropped, this server's row
/// size measured by a probe and the rows per table derived from it.
async fn sized(
    spec: &SweepSpec,
    (target, key): (&str, &str),
    size: SizeOf,
    o: &crate::engine::config::EngineConfig,
    (rows, same_engine): (&[Option<u64>], bool),
    ev: &dyn Events,
) -> anyhow::Result<Sizing> {
    let mut conn = data_conn(o, ev).await?;
    let asked = sizing::asked(spec, target, size, &mut conn).await?;
    if same_engine && spec.data.prepare != PreparePolicy::Always {
        if let Some(s) =
            sizing::reusable(&mut conn, &o.conn.db, spec.data.tables, rows, asked).await?
        {
            conn.close().await;
            record(spec, (target, key), size, s, ev);
            return Ok(Sizing::Reused);
        }
    }
    if spec.data.prepare == PreparePolicy::Never {
        conn.close().await;
        anyhow::bail!(
            "data.size asks for {} ({}) on {key} and the tables there do not hold it (within {:.0} %), and prepare = \"never\": prepare them, or set prepare = \"auto\"",
            bytes(asked),
            size.shown(),
            sizing::TOLERANCE * 100.0
        );
    }
    if rows.iter().any(Option::is_some) {
        ev.note(&format!("{key}: dropping the sbtest tables there first"));
        prepare::cleanup(o).await?;
    }
    let per_row = sizing::row_bytes(&mut conn, o, asked).await?;
    conn.close().await;
    let rows = sizing::rows_for(asked, spec.data.tables, per_row);
    ev.note(&format!(
        "{key}: data.size {} = {}: {per_row:.0} bytes a row measured here, so {} table(s) × {rows} rows",
        size.shown(),
        bytes(asked),
        spec.data.tables
    ));
    Ok(Sizing::Rows(rows, per_row, asked))
}

/// Keeps a target's sizing for its measurements and the manifest, saying what the tables
/// hold and warning when it is off by more than the tolerance.
fn record(spec: &SweepSpec, (target, key): (&str, &str), size: SizeOf, s: Sized, ev: &dyn Events) {
    let line = sizing::said(size, spec.data.tables, &s);
    let off = (s.measured_bytes as f64 / s.asked_bytes.max(1) as f64 - 1.0).abs();
    if off > sizing::TOLERANCE {
        ev.warn(&format!(
            "{key}: the data is {line}: more than {:.0} % off",
            sizing::TOLERANCE * 100.0
        ));
    } else {
        ev.note(&format!("{key}: data {line}"));
    }
    spec.data.sized.set(target, s);
}
