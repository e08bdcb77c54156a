//! A target's benchmark data: its database created when the server says it is missing, its
//! tables counted, and prepared (or prepared again) as `[data] prepare` asks, once per run.

use crate::engine::workload::prepare;
use crate::pipeline::events::Events;
use crate::pipeline::preflight;
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
    let ready = other.is_empty() && rows.iter().all(|r| *r == Some(spec.data.table_size as u64));
    let must = match spec.data.prepare {
        PreparePolicy::Never => return Ok(()),
        PreparePolicy::Always => true,
        PreparePolicy::Auto => !ready,
    };
    if !must {
        return Ok(());
    }
    let mut o = spec.engine_config(
        crate::engine::workload::WorkloadKind::ReadWrite,
        1,
        c.conn_options(),
    );
    o.threads = 1;
    o.quiet = true;
    o.wl.storage_engine = engine;
    // Only what is there is dropped: a fresh server is not told of tables it never had.
    if rows.iter().any(Option::is_some) {
        ev.note(&format!("{key}: dropping the sbtest tables there first"));
        prepare::cleanup(&o).await?;
    }
    let began = std::time::Instant::now();
    // A big data set takes minutes: say it is still going (the engine's own progress lines
    // are sysbench's, on the terminal, which a sweep's sink may not be).
    let preparing = prepare::prepare(&o);
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
                spec.data.tables,
                spec.data.table_size,
                began.elapsed().as_secs_f64()
            )),
        }
    }
    ev.note(&format!(
        "{key}: prepared {} table(s) × {} rows in {:.0} s",
        spec.data.tables,
        spec.data.table_size,
        began.elapsed().as_secs_f64()
    ));
    Ok(())
}
