//! The SQL text sysbench 1.0.20 sends: table DDL, per-table statements, and the literal
//! substitution used when prepared statements are disabled.

use super::Stmt;
use crate::engine::config::WorkloadOptions;
use std::fmt::Write;

/// `CREATE TABLE sbtestN(...)` exactly as `oltp_common.lua` builds it.
pub fn create_table(table: u32, o: &WorkloadOptions) -> String {
    let id_def = if o.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let id_index = if o.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
         {id_index} (id)\n) /*! ENGINE = {} */ {}",
        o.storage_engine,
        o.create_table_options.as_str()
    )
}

pub fn create_index(table: u32) -> String {
    format!("CREATE INDEX k_{table} ON sbtest{table}(k)")
}

pub fn drop_table(table: u32) -> String {
    format!("DROP TABLE IF EXISTS sbtest{table}")
}

/// bulk_insert's own two-column table.
pub fn create_bulk_table(table: u32) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS sbtest{table} (\n          id INTEGER NOT NULL,\n          \
         k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id)\n        )"
    )
}

/// The prefix of prepare's multi-row INSERT (no space before `VALUES`' tuples).
pub fn load_prefix(table: u32, auto_inc: bool) -> String {
    if auto_inc {
        format!("INSERT INTO sbtest{table}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{table}(id, k, c, pad) VALUES")
    }
}

/// Prepare's multi-row INSERT of `rows` rows with placeholders, for the binary protocol.
pub fn load_statement(table: u32, auto_inc: bool, rows: u64) -> String {
    let tuple = if auto_inc { "(?,?,?)" } else { "(?,?,?,?)" };
    let mut s = load_prefix(table, auto_inc);
    s.reserve(rows as usize * (tuple.len() + 1));
    for i in 0..rows {
        if i > 0 {
            s.push(',');
        }
        s.push_str(tuple);
    }
    s
}

/// sysbench's bulk-insert buffer size: a statement is sent before it would exceed this.
pub const BULK_BUFFER: usize = 512 * 1024;

/// Text of a per-table prepared statement, with `?` placeholders.
pub fn stmt_text(stmt: Stmt, table: u32) -> String {
    match stmt {
        Stmt::PointSelect => format!("SELECT c FROM sbtest{table} WHERE id=?"),
        Stmt::SimpleRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        Stmt::SumRange => format!("SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        Stmt::OrderRange => {
            format!("SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        Stmt::DistinctRange => {
            format!("SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        Stmt::IndexUpdate => format!("UPDATE sbtest{table} SET k=k+1 WHERE id=?"),
        Stmt::NonIndexUpdate => format!("UPDATE sbtest{table} SET c=? WHERE id=?"),
        Stmt::Delete => format!("DELETE FROM sbtest{table} WHERE id=?"),
        Stmt::Insert => format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
    }
}

/// select_random_points' statement with `n` placeholders (the script's own layout).
pub fn random_points_text(n: u32) -> String {
    let points = vec!["?"; n as usize].join(", ");
    format!(
        "\n        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ({points})\n        "
    )
}

/// select_random_ranges' statement with `n` ranges.
pub fn random_ranges_text(n: u32) -> String {
    let ranges = vec!["k BETWEEN ? AND ? "; n as usize].join("OR ");
    format!("\n        SELECT count(k)\n          FROM sbtest1\n          WHERE {ranges}")
}

/// A parameter of one execution, borrowed from the worker's reusable buffers.
pub use crate::engine::wire::Arg;

/// Replaces each `?` of `template` with the next argument, as sysbench's client-side emulation
/// does (ints in decimal, strings in single quotes, no escaping), into a reused buffer.
pub fn substitute(out: &mut String, template: &str, args: &[Arg<'_>]) {
    out.clear();
    let mut args = args.iter();
    for piece in template.split_inclusive('?') {
        match piece.strip_suffix('?') {
            Some(head) => {
                out.push_str(head);
                match args.next() {
                    Some(Arg::Int(v)) => {
                        let _ = write!(out, "{v}");
                    }
                    Some(Arg::Str(s)) => {
                        out.push('\'');
                        out.push_str(std::str::from_utf8(s).unwrap_or(""));
                        out.push('\'');
                    }
                    None => out.push('?'),
                }
            }
            None => out.push_str(piece),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{EngineConfig, Overrides, WorkloadKind};

    /// oltp_read_write's shape with `options` (a sweep file's `[workload_options]`) laid over.
    fn wl(options: &str) -> WorkloadOptions {
        let mut c = EngineConfig::new(WorkloadKind::ReadWrite);
        toml::from_str::<Overrides>(options).unwrap().apply(&mut c);
        c.wl
    }

    #[test]
    fn ddl_matches_oltp_common() {
        assert_eq!(
            create_table(3, &wl("")),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ "
        );
        let t = create_table(1, &wl("auto_inc = false\nsecondary = true"));
        assert!(t.contains("id INTEGER NOT NULL,\n"));
        assert!(t.contains("KEY xid (id)"));
        let t = create_table(1, &wl("create_table_options = \"ROW_FORMAT=COMPACT\""));
        assert!(
            t.ends_with(") /*! ENGINE = innodb */ ROW_FORMAT=COMPACT"),
            "{t}"
        );
    }

    #[test]
    fn substitution_matches_sysbench_text_mode() {
        let mut out = String::new();
        substitute(&mut out, &stmt_text(Stmt::PointSelect, 2), &[Arg::Int(502)]);
        assert_eq!(out, "SELECT c FROM sbtest2 WHERE id=502");
        substitute(
            &mut out,
            &stmt_text(Stmt::NonIndexUpdate, 1),
            &[Arg::Str(b"12-34"), Arg::Int(-7)],
        );
        assert_eq!(out, "UPDATE sbtest1 SET c='12-34' WHERE id=-7");
    }

    #[test]
    fn random_statements_have_the_right_placeholders() {
        assert_eq!(random_points_text(3).matches('?').count(), 3);
        let r = random_ranges_text(10);
        assert_eq!(r.matches('?').count(), 20);
        assert_eq!(r.matches(" OR ").count(), 9);
    }
}
