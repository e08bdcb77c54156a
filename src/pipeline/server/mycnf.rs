//! my.cnf for managed servers, rendered from a tera template: the built-in
//! templates/mycnf/default.cnf.tera or a config's own `mycnf` file. Values in `vars` come last,
//! so they override the template's.

use anyhow::Context;
use std::path::Path;

const DEFAULT: &str = include_str!("../../../templates/mycnf/default.cnf.tera");

/// What a template can use.
#[derive(Debug, serde::Serialize)]
pub struct MycnfContext<'a> {
    pub max_connections: u32,
    /// (name, value) pairs as my.cnf wants them (no SQL quoting).
    pub vars: Vec<(&'a str, String)>,
    pub target: &'a str,
    pub config: &'a str,
    /// innodb_log_file_size in MiB, sized to the data (`redo_log_mb`).
    pub redo_log_mb: u64,
    /// innodb_buffer_pool_size in MiB: `DEFAULT_BUFFER_POOL_MB`, or the class's share.
    pub buffer_pool_mb: u64,
}

/// The buffer pool of a managed server without a class or a config that sets one.
pub const DEFAULT_BUFFER_POOL_MB: u64 = 512;

/// A redo log sized to the data: twice its estimated size (about 250 bytes a row with its
/// indexes), in steps of 64 MiB, from 64 MiB to 1 GiB. Every managed datadir and golden copy
/// carries it, so a fixed 256 MiB made a 2,000-row sweep take over half a GB of temp space.
pub fn redo_log_mb(tables: u32, table_size: u32) -> u64 {
    let data_mb = (tables as u64 * table_size as u64 * 250).div_ceil(1 << 20);
    (2 * data_mb).div_ceil(64).clamp(1, 16) * 64
}

/// Renders `template` (a file path) or the built-in default.
pub fn render(template: Option<&Path>, cx: &MycnfContext<'_>) -> anyhow::Result<String> {
    let (name, text) = match template {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p)
                .with_context(|| format!("reading my.cnf template {}", p.display()))?,
        ),
        None => (
            "templates/mycnf/default.cnf.tera".to_string(),
            DEFAULT.to_string(),
        ),
    };
    let mut tera = tera::Tera::default();
    tera.add_raw_template(&name, &text)
        .with_context(|| format!("my.cnf template {name} does not parse"))?;
    let mut ctx = tera::Context::from_serialize(cx)?;
    // A map is easier to use in templates than pairs: {{ vars.innodb_flush_log_at_trx_commit }}.
    let map: std::collections::BTreeMap<&str, &String> =
        cx.vars.iter().map(|(k, v)| (*k, v)).collect();
    ctx.insert("vars", &map);
    tera.render(&name, &ctx)
        .map_err(|e| anyhow::anyhow!("rendering my.cnf template {name}: {e:?}"))
}

/// A config var's SQL literal as a my.cnf value ('text' → text).
pub fn cnf_value(sql_literal: &str) -> String {
    sql_literal
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .unwrap_or(sql_literal)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_template_carries_the_config_vars_last() {
        let v = "2".to_string();
        let cx = MycnfContext {
            max_connections: 300,
            vars: vec![
                ("innodb_flush_log_at_trx_commit", v),
                ("innodb_buffer_pool_size", "1G".into()),
            ],
            target: "t",
            config: "c",
            redo_log_mb: redo_log_mb(4, 20_000),
            buffer_pool_mb: DEFAULT_BUFFER_POOL_MB,
        };
        let out = render(None, &cx).unwrap();
        assert!(out.contains("max_connections = 300\n"));
        assert!(out.contains("innodb_log_file_size = 64M\n"), "{out}");
        assert!(out.contains("innodb_flush_log_at_trx_commit = 2\n"));
        // The config's value comes after the template's own, so it wins.
        assert!(
            out.rfind("innodb_buffer_pool_size = 1G").unwrap()
                > out.find("innodb_buffer_pool_size = 512M").unwrap()
        );
        assert_eq!(cnf_value("'O_DIRECT'"), "O_DIRECT");
        assert_eq!(cnf_value("2"), "2");
    }

    #[test]
    fn the_redo_log_follows_the_data() {
        assert_eq!(redo_log_mb(1, 2_000), 64);
        assert_eq!(redo_log_mb(8, 250_000), 960);
        assert_eq!(redo_log_mb(100, 10_000_000), 1024);
    }
}
