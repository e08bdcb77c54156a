//! The preflight's rules on facts given: capacity, privileges, settings that do nothing.

use super::*;

fn needs(threads: u32) -> Needs {
    Needs {
        max_threads: threads,
        stmts_per_conn: 11,
        data: DataSpec {
            tables: 1,
            table_size: 10,
            storage_engine: "innodb".into(),
            prepare: PreparePolicy::Auto,
            size: None,
            sized: Default::default(),
        },
        margin: 2,
        auto_inc: true,
    }
}

fn facts() -> ServerFacts {
    ServerFacts {
        max_connections: 151,
        max_prepared_stmt_count: 16382,
        threads_connected: 1,
        ..ServerFacts::default()
    }
}

#[test]
fn binlog_settings_without_a_binary_log_are_named() {
    let v = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, x)| (k.to_string(), x.to_string()))
            .collect()
    };
    let stable = v(&[
        ("sync_binlog", "1"),
        ("innodb_flush_log_at_trx_commit", "1"),
    ]);
    let m = ineffective_vars(&stable, false);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("sync_binlog = 1 has no effect: the binary log is off"));
    assert!(ineffective_vars(&stable, true).is_empty());
    // A config that turns the binary log on itself is fine; one that sets it OFF is not.
    let on = v(&[("log_bin", "'mysql-bin'"), ("sync_binlog", "1")]);
    assert!(ineffective_vars(&on, false).is_empty());
    let off = v(&[("log_bin", "OFF"), ("binlog_format", "'ROW'")]);
    assert_eq!(ineffective_vars(&off, false).len(), 1);
}

#[test]
fn classic_151_vs_256_is_blocking_with_remedies() {
    let f = capacity_findings("t", &facts(), &needs(256));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].check, "max_connections");
    assert_eq!(f[0].severity, Severity::Blocking);
    assert_eq!(f[0].max_threads, Some(148));
    assert!(f[0].message.contains("max_connections = 151"));
    assert!(f[0].message.contains("needs 259"));
    assert!(f[0].message.contains("SET GLOBAL max_connections = 275"));
    assert!(capacity_findings("t", &facts(), &needs(148)).is_empty());
}

#[test]
fn prepared_statement_limit_counts_all_connections() {
    let mut fa = facts();
    fa.max_connections = 10_000;
    fa.max_prepared_stmt_count = 1000;
    let f = capacity_findings("t", &fa, &needs(100));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].check, "max_prepared_stmt_count");
    assert_eq!(f[0].max_threads, Some(90));
}

#[test]
fn grants_are_read_per_database() {
    let g = vec![
        "GRANT USAGE ON *.* TO `u`@`%`".to_string(),
        "GRANT SELECT, INSERT ON `sbtest`.* TO `u`@`%`".to_string(),
    ];
    assert_eq!(
        missing_privileges(&g, "sbtest"),
        vec!["UPDATE", "DELETE", "CREATE", "DROP", "INDEX"]
    );
    let g = vec!["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION".to_string()];
    assert!(missing_privileges(&g, "x").is_empty());
}
