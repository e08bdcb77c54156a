//! servers/<target>__<config>/ of a run: each series' server as the run found it — its
//! version, SHOW GLOBAL VARIABLES (a synthetic target's model parameters) and the my.cnf it
//! was started with — and which of those differ between two servers.

use std::path::Path;

/// Writes one series' files, each whole or not at all (a full disk must not leave a cut-off
/// list that looks complete). `servers` is the run's servers/ directory.
pub fn write_server(
    servers: &Path,
    key: &str,
    version: &str,
    variables: &[(String, String)],
    mycnf: Option<&str>,
) -> anyhow::Result<()> {
    let dir = series_dir(servers, key)?;
    let write = super::write_atomic;
    write(&dir.join("version.txt"), format!("{version}\n").as_bytes())?;
    let mut tsv = String::from("variable\tvalue\n");
    for (k, v) in variables {
        let v = v.replace(['\t', '\n'], " ");
        tsv.push_str(&format!("{k}\t{v}\n"));
    }
    write(&dir.join("variables.tsv"), tsv.as_bytes())?;
    if let Some(text) = mycnf {
        write(&dir.join("my.cnf"), text.as_bytes())?;
    }
    Ok(())
}

/// servers/<target>__<config>/engine.txt: the storage engine(s) of the series' sbtest tables,
/// as information_schema named them after the data was made.
pub fn write_engine(servers: &Path, key: &str, engine: &str) -> anyhow::Result<()> {
    let dir = series_dir(servers, key)?;
    super::write_atomic(&dir.join("engine.txt"), format!("{engine}\n").as_bytes())
}

/// The columns of servers/<target>__<config>/tables.tsv, as information_schema.TABLES names
/// them, and the server's innodb_page_size.
const TABLE_COLUMNS: [&str; 8] = [
    "table",
    "engine",
    "row_format",
    "collation",
    "avg_row_length",
    "data_length",
    "index_length",
    "page_size",
];

/// servers/<target>__<config>/tables.tsv: each sbtest table as the series' server made it
/// (`rows` in `TABLE_COLUMNS` order), read after the data was ready. Nothing is written for
/// a series without tables (a synthetic target).
pub fn write_tables(servers: &Path, key: &str, rows: &[Vec<String>]) -> anyhow::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let dir = series_dir(servers, key)?;
    let mut tsv = TABLE_COLUMNS.join("\t") + "\n";
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| c.replace(['\t', '\n'], " ")).collect();
        tsv.push_str(&cells.join("\t"));
        tsv.push('\n');
    }
    super::write_atomic(&dir.join("tables.tsv"), tsv.as_bytes())
}

/// A series' tables in brief: what is the same over its tables, or each distinct value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TablesShape {
    pub engine: String,
    pub row_format: String,
    pub collation: String,
    /// innodb_page_size, bytes ("" where the server has none).
    pub page_size: String,
    /// Mean of the tables' avg_row_length, bytes.
    pub row_bytes: u64,
    /// Data and indexes of all its tables, bytes.
    pub bytes: u64,
}

impl TablesShape {
    /// "InnoDB, Dynamic, latin1_swedish_ci, 16 KiB pages, 188 B a row, 9.5 MiB".
    pub fn shown(&self) -> String {
        let page = self
            .page_size
            .parse::<u64>()
            .map(|p| format!(", {} KiB pages", p / 1024))
            .unwrap_or_default();
        format!(
            "{}, {}, {}{page}, {} B a row, {}",
            self.engine,
            self.row_format,
            self.collation,
            self.row_bytes,
            crate::pipeline::spec::size::bytes(self.bytes)
        )
    }
}

/// Each series' tables (tables.tsv), keyed by `target/config`.
pub fn load_tables(run: &Path) -> std::collections::BTreeMap<String, TablesShape> {
    each_series(run, "tables.tsv")
        .into_iter()
        .filter_map(|(name, text)| Some((name, shape_of(&text)?)))
        .collect()
}

fn shape_of(tsv: &str) -> Option<TablesShape> {
    let rows: Vec<Vec<&str>> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let distinct = |i: usize| {
        let mut v: Vec<&str> = rows.iter().filter_map(|r| r.get(i).copied()).collect();
        v.sort_unstable();
        v.dedup();
        v.join("/")
    };
    let num = |r: &Vec<&str>, i: usize| r.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    Some(TablesShape {
        engine: distinct(1),
        row_format: distinct(2),
        collation: distinct(3),
        page_size: distinct(7),
        row_bytes: rows.iter().map(|r| num(r, 4)).sum::<u64>() / rows.len() as u64,
        bytes: rows.iter().map(|r| num(r, 5) + num(r, 6)).sum(),
    })
}

/// When the series ran on tables of different shapes (collation, row format, page size; the
/// engine is `engine_confounder`'s): one sentence saying so, what each was, and that the comparison is of the tables
/// too. When the servers' character-set defaults differ and the tables do not, that the
/// setting never reached the tables. `series` in order; None when nothing is to be said.
pub fn tables_confounder(
    tables: &std::collections::BTreeMap<String, TablesShape>,
    variables: &std::collections::BTreeMap<String, Variables>,
    series: &[String],
) -> Option<String> {
    let per: Vec<(&String, &TablesShape)> = series
        .iter()
        .filter_map(|s| tables.get(s).map(|t| (s, t)))
        .collect();
    if per.len() < 2 {
        return None;
    }
    // The engine is `engine_confounder`'s to say, with what it does to the counters.
    type Field = fn(&TablesShape) -> &str;
    let fields: [(&str, Field); 3] = [
        ("collation", |t| &t.collation),
        ("row format", |t| &t.row_format),
        ("page size", |t| &t.page_size),
    ];
    let differ: Vec<String> = fields
        .iter()
        .filter(|(_, f)| {
            per.iter()
                .any(|(_, t)| !f(t).eq_ignore_ascii_case(f(per[0].1)))
        })
        .map(|(name, f)| {
            let each: Vec<String> = per
                .iter()
                .map(|(s, t)| format!("{} on {s}", f(t)))
                .collect();
            format!("{name} {}", each.join(", "))
        })
        .collect();
    if !differ.is_empty() {
        return Some(format!(
            "The series ran on tables of different shapes — {} — so the comparison is of the tables as much as of the servers' settings (each series' tables are listed under \"Tables each series ran on\").",
            differ.join("; ")
        ));
    }
    let charset = |s: &String| {
        variables
            .get(s)
            .and_then(|v| v.get("collation_server"))
            .cloned()
    };
    let first = charset(per[0].0);
    let defaults_differ = per.iter().any(|(s, _)| charset(s) != first);
    defaults_differ.then(|| format!(
        "The servers' collation_server differs, but every series ran on the same tables ({}): the setting did not reach them (they were made before it, or under another), so it changed new sessions' strings only, not the data measured.",
        per[0].1.collation
    ))
}

/// servers/<target>__<config>/class.txt: the instance class its server was held to ("0.5
/// CPUs, 1 GiB"), for a managed server with one.
pub fn write_class(servers: &Path, key: &str, class: &str) -> anyhow::Result<()> {
    let dir = series_dir(servers, key)?;
    super::write_atomic(&dir.join("class.txt"), format!("{class}\n").as_bytes())
}

/// Each series' instance class (class.txt), keyed by `target/config`.
pub fn load_classes(run: &Path) -> std::collections::BTreeMap<String, String> {
    each_line(run, "class.txt")
}

/// When the series' servers ran in different instance classes (or some in one and some on
/// the whole host): one sentence saying the comparison is of the classes first. `series` in
/// order.
pub fn class_confounder(
    classes: &std::collections::BTreeMap<String, String>,
    series: &[String],
) -> Option<String> {
    let said: Vec<String> = series
        .iter()
        .map(|s| match classes.get(s) {
            Some(c) => format!("{c} on {s}"),
            None => format!("the whole host on {s}"),
        })
        .collect();
    let first = classes.get(series.first()?);
    if series.iter().all(|s| classes.get(s) == first) {
        return None;
    }
    Some(format!(
        "The servers' instance classes differ — {} — so a change between them is first the classes' CPU quota and memory, not the server's code or settings (its counters per transaction are context).",
        said.join("; ")
    ))
}

/// servers/<target>__<config>/ of series `key` ("target/config"), made if missing.
fn series_dir(servers: &Path, key: &str) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let dir = servers.join(key.replace('/', "__"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Each series' servers/<target>__<config>/`file` of a run, keyed by `target/config` (a
/// series without the file is left out).
fn each_series(run: &Path, file: &str) -> Vec<(String, String)> {
    let Ok(dirs) = std::fs::read_dir(run.join("servers")) else {
        return Vec::new();
    };
    dirs.flatten()
        .filter_map(|d| {
            let text = std::fs::read_to_string(d.path().join(file)).ok()?;
            Some((d.file_name().to_string_lossy().replacen("__", "/", 1), text))
        })
        .collect()
}

/// Each series' one-line servers/*/`file`, trimmed, keyed by `target/config`.
fn each_line(run: &Path, file: &str) -> std::collections::BTreeMap<String, String> {
    each_series(run, file)
        .into_iter()
        .map(|(name, e)| (name, e.trim().to_string()))
        .collect()
}

/// Each series' tables' engine (engine.txt), keyed by `target/config`.
pub fn load_engines(run: &Path) -> std::collections::BTreeMap<String, String> {
    each_line(run, "engine.txt")
}

/// When the series' tables were made with different storage engines: one sentence saying the
/// comparison is of the engines too. `series` in order.
pub fn engine_confounder(
    engines: &std::collections::BTreeMap<String, String>,
    series: &[String],
) -> Option<String> {
    let per: Vec<(&String, &String)> = series
        .iter()
        .filter_map(|s| engines.get(s).map(|e| (s, e)))
        .collect();
    let first = per.first()?.1;
    if per.iter().all(|(_, e)| e.eq_ignore_ascii_case(first)) {
        return None;
    }
    let said: Vec<String> = per.iter().map(|(s, e)| format!("{e} on {s}")).collect();
    Some(format!(
        "The tables' storage engines differ — {} — so the comparison is of the engines as much as of the servers (their counters differ too: an engine's own, such as Innodb_* or rocksdb_*, read 0 on the other).",
        said.join(", ")
    ))
}

/// servers/<target>__<config>/variables.tsv of a run, keyed by `target/config`.
pub fn load_variables(run: &Path) -> std::collections::BTreeMap<String, Variables> {
    each_series(run, "variables.tsv")
        .into_iter()
        .map(|(name, text)| {
            let vars = text
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once('\t'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            (name, vars)
        })
        .collect()
}

/// One server's SHOW GLOBAL VARIABLES, by name.
pub type Variables = std::collections::BTreeMap<String, String>;

/// How a variable one server lacks is shown beside the others' values.
pub const ABSENT: &str = "(absent)";

/// The variables whose values differ in meaning between `sides` (one a server lacks is
/// `ABSENT`), with each side's value, by name; those that differ by nature between instances
/// are left out.
pub fn variable_diffs(sides: &[&Variables]) -> Vec<(String, Vec<String>)> {
    let names: std::collections::BTreeSet<&String> = sides.iter().flat_map(|m| m.keys()).collect();
    let mut out = Vec::new();
    for n in names {
        let values: Vec<String> = sides
            .iter()
            .map(|m| m.get(n).cloned().unwrap_or_else(|| ABSENT.to_string()))
            .collect();
        if values.iter().any(|v| !same_meaning(v, &values[0])) && !incidental(n, &values) {
            out.push((n.clone(), values));
        }
    }
    out
}

/// Two values of one variable that say the same: equal, the same number however written
/// (0 and 0.000000: versions print a double differently), or the same character set or
/// collation under its old and new name (utf8 is utf8mb3 since 10.6).
fn same_meaning(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        return x == y;
    }
    let spelled = |v: &str| v.to_ascii_lowercase().replace("utf8mb3", "utf8");
    spelled(a) == spelled(b)
}

/// Variables that differ by nature between instances (paths, ports, ids) and say nothing
/// about the configuration compared.
fn incidental(name: &str, values: &[String]) -> bool {
    const NAMES: &[&str] = &[
        "port",
        "socket",
        "pid_file",
        "hostname",
        "server_uuid",
        "timestamp",
        "tmpdir",
        "log_error",
        "datadir",
        "general_log_file",
        "slow_query_log_file",
        "server_id",
        "gtid_domain_id",
        "rand_seed1",
        "rand_seed2",
        "report_port",
        "server_uid",
    ];
    // A path differs between any two instances, except the one that says which replication
    // library a server loads: Galera's provider against none is a different kind of server.
    NAMES.contains(&name) || (name != "wsrep_provider" && values.iter().any(|v| v.starts_with('/')))
}

/// How much a variable that differs between servers says about their performance: what the
/// variables diff leads with, and what it folds away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Weight {
    /// Durability and flushing, buffer pool and log sizes, character set and collation,
    /// the optimizer, thread handling: what moves a sysbench figure.
    MovesPerformance,
    Other,
    /// What differs between any two versions or builds (version strings, GTID positions,
    /// Galera's wsrep_*, a variable one version has and the other lacks).
    AlwaysDiffers,
}

/// Names (or prefixes, ending in '*') of the variables that move OLTP throughput.
const MOVES: &[&str] = &[
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_flush_neighbors",
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_log_buffer_size",
    "innodb_io_capacity*",
    "innodb_max_dirty_pages_pct*",
    "innodb_lru_scan_depth",
    "innodb_page_cleaners",
    "innodb_adaptive_hash_index*",
    "innodb_change_buffering",
    "innodb_thread_concurrency",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_purge_threads",
    "innodb_autoinc_lock_mode",
    "innodb_page_size",
    "innodb_file_per_table",
    "character_set_*",
    "collation_*",
    "optimizer_*",
    "thread_handling",
    "thread_pool_*",
    "thread_cache_size",
    "table_open_cache*",
    "table_definition_cache",
    "query_cache_*",
    "log_bin",
    "binlog_format",
    "binlog_row_image",
    "transaction_isolation",
    "tx_isolation",
    "join_buffer_size",
    "sort_buffer_size",
    "tmp_table_size",
    "max_heap_table_size",
    "performance_schema",
    "default_storage_engine",
    // MyRocks' own cache, flushing and compaction.
    "rocksdb_block_cache_size",
    "rocksdb_flush_log_at_trx_commit",
    "rocksdb_max_background_jobs",
    "rocksdb_max_total_wal_size",
    "rocksdb_write_disable_wal",
    "rocksdb_default_cf_options",
    // A cluster against a single server: whether replication runs, and how.
    "wsrep_on",
    "wsrep_provider",
    "wsrep_slave_threads",
    "wsrep_sync_wait",
];

fn named(list: &[&str], name: &str) -> bool {
    list.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *p,
    })
}

/// The weight of `name`, which differs between servers with these `values`.
pub fn weight(name: &str, values: &[String]) -> Weight {
    const ALWAYS: &[&str] = &[
        "version*",
        "innodb_version",
        "protocol_version",
        "gtid_*",
        "wsrep_*",
        "have_*",
        "license",
        "plugin_maturity",
        "system_versioning_*",
    ];
    // A variable that moves performance stays in front when one version lacks it (10.6
    // removed innodb_buffer_pool_instances: the older server is tuned by it, the newer not).
    if named(MOVES, name) {
        Weight::MovesPerformance
    } else if named(ALWAYS, name) || values.iter().any(|v| v == ABSENT) {
        Weight::AlwaysDiffers
    } else {
        Weight::Other
    }
}

/// Differences with their weights, in the order every view lists them: what moves
/// performance first, what always differs last, by name within each.
pub fn ranked(diffs: Vec<(String, Vec<String>)>) -> Vec<(String, Vec<String>, Weight)> {
    let mut out: Vec<(String, Vec<String>, Weight)> = diffs
        .into_iter()
        .map(|(n, v)| {
            let w = weight(&n, &v);
            (n, v, w)
        })
        .collect();
    out.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
    out
}

/// The character-set and collation defaults that differ between `series` (values in series
/// order), as one sentence that calls them a confounder and says how to pin them; None when
/// they agree.
pub fn charset_confounder(diffs: &[(String, Vec<String>)], series: &[String]) -> Option<String> {
    const DEFAULTS: [&str; 2] = ["character_set_server", "collation_server"];
    let moved: Vec<&(String, Vec<String>)> = diffs
        .iter()
        .filter(|(n, _)| DEFAULTS.contains(&n.as_str()))
        .collect();
    if moved.is_empty() {
        return None;
    }
    let what: Vec<String> = moved
        .iter()
        .map(|(n, v)| {
            let per: Vec<String> = series
                .iter()
                .zip(v)
                .map(|(s, x)| format!("{x} on {s}"))
                .collect();
            format!("{n} ({})", per.join(", "))
        })
        .collect();
    let pin: Vec<String> = moved
        .iter()
        .map(|(n, v)| format!("{n} = \"{}\"", v[0]))
        .collect();
    Some(format!(
        "The servers' default character set or collation differs — {} — so the tables and every string compared differ too, and the comparison measures both changes at once. To compare the servers alone, pin it in a [[configs]] table: vars = {{ {} }}",
        what.join("; "),
        pin.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Variables {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// 10.5 against 10.11 as they print themselves: renamed character sets and a double
    /// printed with its decimals are no differences; a performance variable 10.6 removed is
    /// one, in front, shown absent; Galera's wsrep_on and provider are shown, in front.
    #[test]
    fn variables_differ_by_meaning_not_spelling() {
        let old = vars(&[
            ("character_set_system", "utf8"),
            ("collation_connection", "utf8_general_ci"),
            ("expire_logs_days", "0"),
            ("innodb_buffer_pool_instances", "1"),
            ("character_set_server", "utf8mb4"),
            ("wsrep_on", "OFF"),
            ("wsrep_provider", "none"),
            ("init_connect", ""),
        ]);
        let new = vars(&[
            ("character_set_system", "utf8mb3"),
            ("collation_connection", "utf8mb3_general_ci"),
            ("expire_logs_days", "0.000000"),
            ("character_set_server", "latin1"),
            ("wsrep_on", "ON"),
            ("wsrep_provider", "/usr/lib/galera/libgalera_smm.so"),
            ("init_connect", ""),
        ]);
        let diffs = ranked(variable_diffs(&[&old, &new]));
        let said: Vec<(&str, &str, &str, Weight)> = diffs
            .iter()
            .map(|(n, v, w)| (n.as_str(), v[0].as_str(), v[1].as_str(), *w))
            .collect();
        use Weight::MovesPerformance as M;
        assert_eq!(
            said,
            [
                ("character_set_server", "utf8mb4", "latin1", M),
                ("innodb_buffer_pool_instances", "1", ABSENT, M),
                ("wsrep_on", "OFF", "ON", M),
                (
                    "wsrep_provider",
                    "none",
                    "/usr/lib/galera/libgalera_smm.so",
                    M
                ),
            ]
        );
        // A variable outside the list that one server lacks still folds away; utf8mb4 is not
        // utf8.
        let a = vars(&[("aria_block_size", "8192"), ("x", "utf8mb4")]);
        let b = vars(&[("x", "utf8")]);
        let w: Vec<Weight> = ranked(variable_diffs(&[&a, &b]))
            .into_iter()
            .map(|d| d.2)
            .collect();
        assert_eq!(w, [Weight::Other, Weight::AlwaysDiffers]);
    }
}
