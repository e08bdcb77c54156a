//! `[data] size` on one target: the bytes it asks for there (a size, or a multiple of the
//! server's buffer pool or memory), the row size measured on that server by a small probe
//! prepare, and the tables' own bytes once prepared (information_schema's data and index
//! length after ANALYZE TABLE).

use crate::engine::admin::Admin;
use crate::engine::config::EngineConfig;
use crate::engine::workload::prepare;
use crate::pipeline::spec::size::{bytes, SizeOf, Sized};
use crate::pipeline::spec::SweepSpec;

/// How far the prepared bytes may be from those asked before the run says so.
pub const TOLERANCE: f64 = 0.10;
/// How far they may be before the data is prepared once more at the row size the full
/// tables showed.
pub const REPREPARE_ABOVE: f64 = 0.05;
/// The probe's rows: enough that InnoDB's extents (1 MiB each) are a few percent of it, and
/// never more than the target's own tables would hold.
const PROBE_MAX_ROWS: u64 = 200_000;
const PROBE_MIN_ROWS: u64 = 10_000;
use crate::pipeline::spec::size::ASSUMED_ROW_BYTES;

/// The bytes `size` asks for on `target`, reading its buffer pool from the server.
pub async fn asked(
    spec: &SweepSpec,
    target: &str,
    size: SizeOf,
    c: &mut Admin,
) -> anyhow::Result<u64> {
    Ok(match size {
        SizeOf::Bytes(b) => b,
        SizeOf::BufferPool(f) => {
            let pool: u64 = c
                .value("SELECT @@innodb_buffer_pool_size")
                .await?
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| anyhow::anyhow!("the server has no innodb_buffer_pool_size to size the data by; give data.size in bytes"))?;
            (pool as f64 * f) as u64
        }
        SizeOf::Memory(f) => {
            let m = spec
                .targets
                .iter()
                .find(|t| t.name == target)
                .and_then(|t| t.memory)
                .ok_or_else(|| anyhow::anyhow!("target '{target}': its memory is not known"))?;
            (m as f64 * f) as u64
        }
    })
}

/// The sbtest tables' bytes on the server (data + indexes), their statistics refreshed first.
pub async fn measured(c: &mut Admin, db: &str, tables: u32) -> anyhow::Result<u64> {
    for t in 1..=tables {
        // A result set (Table, Op, Msg_type, Msg_text): read, not just sent.
        c.rows(format!("ANALYZE TABLE `{db}`.`sbtest{t}`")).await?;
    }
    let v = c
        .value(format!(
            "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = {} AND table_name LIKE 'sbtest%'",
            crate::engine::admin::quote(db)
        ))
        .await?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Whether tables already there hold what is asked: every one present with the same rows,
/// their bytes within the tolerance. Some(sizing) to reuse them.
pub async fn reusable(
    c: &mut Admin,
    db: &str,
    tables: u32,
    rows: &[Option<u64>],
    asked: u64,
) -> anyhow::Result<Option<Sized>> {
    let Some(Some(n)) = rows.first().copied() else {
        return Ok(None);
    };
    if n == 0 || n > u32::MAX as u64 || rows.iter().any(|r| *r != Some(n)) {
        return Ok(None);
    }
    let have = measured(c, db, tables).await?;
    let off = (have as f64 - asked as f64).abs() / asked as f64;
    Ok((off <= TOLERANCE).then_some(Sized {
        asked_bytes: asked,
        rows: n as u32,
        bytes_per_row: have as f64 / (n * tables as u64) as f64,
        measured_bytes: have,
    }))
}

/// Measures this server's bytes per row: one table of probe rows prepared, measured and
/// dropped. `o` is the prepare's configuration (tables and rows are set here).
pub async fn row_bytes(c: &mut Admin, o: &EngineConfig, asked: u64) -> anyhow::Result<f64> {
    let per_table = asked / ASSUMED_ROW_BYTES / o.wl.tables.max(1) as u64;
    let probe = per_table.clamp(PROBE_MIN_ROWS, PROBE_MAX_ROWS);
    let mut p = o.clone();
    p.wl.tables = 1;
    p.wl.table_size = probe as u32;
    prepare::prepare(&p).await?;
    let have = measured(c, &o.conn.db, 1).await?;
    prepare::cleanup(&p).await?;
    let per_row = have as f64 / probe as f64;
    // An engine that keeps fresh rows in memory (MyRocks' memtable) reports next to nothing.
    if !(20.0..=20_000.0).contains(&per_row) {
        anyhow::bail!(
            "the server reports {} for {probe} probe rows ({per_row:.0} bytes a row), which cannot size the data: give data.table_size in rows instead of size",
            bytes(have)
        );
    }
    Ok(per_row)
}

/// Rows per table for `asked` bytes over `tables` tables at `per_row` bytes a row.
pub fn rows_for(asked: u64, tables: u32, per_row: f64) -> u32 {
    let rows = asked as f64 / per_row / tables.max(1) as f64;
    rows.round().clamp(1.0, u32::MAX as f64) as u32
}

/// "prepared 4 table(s) × 1234 rows: 614 MiB (asked 1.2 × buffer_pool = 614 MiB, +0.4 %)".
pub fn said(size: SizeOf, tables: u32, s: &Sized) -> String {
    format!(
        "{tables} table(s) × {} rows: {} (asked {} = {}, {:+.1} %; {:.0} bytes a row)",
        s.rows,
        bytes(s.measured_bytes),
        size.shown(),
        bytes(s.asked_bytes),
        (s.measured_bytes as f64 / s.asked_bytes as f64 - 1.0) * 100.0,
        s.bytes_per_row
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_from_the_bytes_asked_and_the_row_size() {
        assert_eq!(rows_for(614 << 20, 4, 230.0), 699_811);
        assert_eq!(rows_for(100, 4, 230.0), 1);
        let s = Sized {
            asked_bytes: 100 << 20,
            rows: 1000,
            bytes_per_row: 226.4,
            measured_bytes: 104 << 20,
        };
        assert_eq!(
            said(SizeOf::BufferPool(1.2), 2, &s),
            "2 table(s) × 1000 rows: 104 MiB (asked 1.2 × buffer_pool = 100 MiB, +4.0 %; 226 bytes a row)"
        );
    }
}
