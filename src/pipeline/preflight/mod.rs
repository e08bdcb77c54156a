//! Checks before any data is touched: can every target take the sweep? Connects, reads the
//! version, privileges and limits, and says for each problem the variable, its value, what
//! the sweep needs and how to fix it.

use crate::engine::admin::{quote, Admin};
use crate::engine::config::ConnOptions;
use crate::engine::db;
use crate::pipeline::spec::size::SizeOf;
use crate::pipeline::spec::{DataSpec, PreparePolicy};

mod open;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    /// The sweep (or the points above `max_threads`) cannot run as planned.
    Blocking,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub target: String,
    pub severity: Severity,
    pub check: &'static str,
    pub message: String,
    /// For capacity findings: the largest thread count the target can take now.
    pub max_threads: Option<u32>,
}

/// What the sweep asks of one target.
#[derive(Debug, Clone)]
pub struct Needs {
    pub max_threads: u32,
    /// Prepared statements one connection holds (largest over the workloads).
    pub stmts_per_conn: u32,
    pub data: DataSpec,
    /// Connections sweepbench itself keeps open besides the workers.
    pub margin: u32,
    /// Prepare lets the server number the rows (sysbench's `auto_inc`, on by default).
    pub auto_inc: bool,
}

/// `--on-capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCapacity {
    Fail,
    Skip,
    Raise,
}

/// Server facts a check reads once.
#[derive(Debug, Default, Clone)]
pub struct ServerFacts {
    pub version: String,
    pub max_connections: u64,
    pub max_user_connections: u64,
    pub max_prepared_stmt_count: u64,
    pub threads_connected: u64,
    pub prepared_stmt_count: u64,
    pub datadir: String,
    pub grants: Vec<String>,
    /// Whether the binary log is on (settings such as sync_binlog do nothing otherwise).
    pub log_bin: bool,
}

async fn var(c: &mut Admin, q: &str) -> anyhow::Result<u64> {
    Ok(c.value(q).await?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

async fn status(c: &mut Admin, name: &str) -> anyhow::Result<u64> {
    let row = c.first(format!("SHOW GLOBAL STATUS LIKE '{name}'")).await?;
    Ok(row
        .and_then(|r| r.get(1).cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

pub async fn read_facts(c: &mut Admin) -> anyhow::Result<ServerFacts> {
    Ok(ServerFacts {
        version: c.value("SELECT VERSION()").await?.unwrap_or_default(),
        max_connections: var(c, "SELECT @@max_connections").await?,
        max_user_connections: var(c, "SELECT @@max_user_connections").await?,
        max_prepared_stmt_count: var(c, "SELECT @@max_prepared_stmt_count").await?,
        threads_connected: status(c, "Threads_connected").await?,
        prepared_stmt_count: status(c, "Prepared_stmt_count").await?,
        datadir: c.value("SELECT @@datadir").await?.unwrap_or_default(),
        grants: c.column("SHOW GRANTS").await?,
        log_bin: var(c, "SELECT @@log_bin").await? != 0,
    })
}

/// Privileges the benchmark user needs on its database.
const NEEDED: [&str; 7] = [
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX",
];

/// Which of NEEDED the grants miss for database `db`.
pub fn missing_privileges(grants: &[String], db: &str) -> Vec<&'static str> {
    let scopes = [
        "ON *.*".to_string(),
        format!("ON `{db}`.*"),
        format!("ON {db}.*"),
    ];
    let mut have: Vec<String> = Vec::new();
    for g in grants {
        let upper = g.to_uppercase();
        let Some(rest) = upper.strip_prefix("GRANT ") else {
            continue;
        };
        if !scopes.iter().any(|s| upper.contains(&s.to_uppercase())) {
            continue;
        }
        let privs = rest.split(" ON ").next().unwrap_or("");
        have.extend(privs.split(',').map(|p| p.trim().to_string()));
    }
    if have.iter().any(|p| p == "ALL PRIVILEGES" || p == "ALL") {
        return Vec::new();
    }
    NEEDED
        .iter()
        .copied()
        .filter(|n| !have.iter().any(|p| p == n))
        .collect()
}

/// Approximate on-disk size of the prepared data (InnoDB, rows + secondary index).
pub fn data_bytes(d: &DataSpec) -> u64 {
    d.tables as u64 * d.table_size as u64 * 300
}

/// Connections the sweep needs on the server: its largest thread count, what is already
/// connected, and sweepbench's own.
fn connections_needed(f: &ServerFacts, n: &Needs) -> u64 {
    n.max_threads as u64 + f.threads_connected + n.margin as u64
}

/// What to set max_connections to: the need plus headroom.
fn recommended_max_connections(f: &ServerFacts, n: &Needs) -> u64 {
    connections_needed(f, n) + 16
}

/// Pure capacity rules over the facts, so they can be unit-tested.
pub fn capacity_findings(target: &str, f: &ServerFacts, n: &Needs) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |severity, check, message: String, max_threads| {
        out.push(Finding {
            target: target.to_string(),
            severity,
            check,
            message,
            max_threads,
        })
    };
    let in_use = f.threads_connected;
    let need = connections_needed(f, n);
    if f.max_connections < need {
        let usable = f.max_connections.saturating_sub(in_use + n.margin as u64) as u32;
        add(
            Severity::Blocking,
            "max_connections",
            format!(
                "max_connections = {} but the sweep needs {need} ({} threads + {in_use} connections in use + {} for sweepbench). \
                 Remedies: SET GLOBAL max_connections = {}; or set max_connections = {} under [mysqld] in my.cnf; \
                 or drop the points above {usable} threads (--only threads=…, [[exclude]], --on-capacity=skip); \
                 --on-capacity=raise does the SET GLOBAL for you",
                f.max_connections,
                n.max_threads,
                n.margin,
                recommended_max_connections(f, n),
                recommended_max_connections(f, n)
            ),
            Some(usable),
        );
    }
    if f.max_user_connections > 0 && f.max_user_connections < n.max_threads as u64 + n.margin as u64
    {
        let usable = f.max_user_connections.saturating_sub(n.margin as u64) as u32;
        add(
            Severity::Blocking,
            "max_user_connections",
            format!(
                "max_user_connections = {} but the sweep opens {} connections as one user. \
                 Remedies: SET GLOBAL max_user_connections = 0; or drop the points above {usable} threads",
                f.max_user_connections,
                n.max_threads + n.margin
            ),
            Some(usable),
        );
    }
    let stmts = n.max_threads as u64 * n.stmts_per_conn as u64;
    if n.stmts_per_conn > 0 && f.prepared_stmt_count + stmts > f.max_prepared_stmt_count {
        let usable = ((f
            .max_prepared_stmt_count
            .saturating_sub(f.prepared_stmt_count))
            / n.stmts_per_conn as u64) as u32;
        add(
            Severity::Blocking,
            "max_prepared_stmt_count",
            format!(
                "max_prepared_stmt_count = {} but {} threads × {} statements each = {stmts} (+ {} already prepared). \
                 Remedies: SET GLOBAL max_prepared_stmt_count = {}; or db_ps_mode = \"disable\" in [workload_options]; \
                 or drop the points above {usable} threads",
                f.max_prepared_stmt_count,
                n.max_threads,
                n.stmts_per_conn,
                f.prepared_stmt_count,
                stmts + f.prepared_stmt_count + 1024
            ),
            Some(usable),
        );
    }
    out
}

/// Server variables that do nothing while the binary log is off.
pub const NEED_BINLOG: &[&str] = &[
    "sync_binlog",
    "binlog_format",
    "binlog_row_image",
    "binlog_cache_size",
    "binlog_checksum",
    "max_binlog_size",
    "expire_logs_days",
    "binlog_expire_logs_seconds",
];

/// Whether a variable's value turns a feature on ("ON", "1", a log name).
pub fn is_on(value: &str) -> bool {
    let v = value.trim().trim_matches(['\'', '"']);
    !(v.is_empty() || v.eq_ignore_ascii_case("off") || v == "0")
}

/// One message per variable of a config that will have no effect on a server whose binary
/// log is on or off as `log_bin_on` says (a config that sets log_bin itself turns it on).
pub fn ineffective_vars(vars: &[(String, String)], log_bin_on: bool) -> Vec<String> {
    let sets_log_bin = vars
        .iter()
        .any(|(k, v)| (k == "log_bin" || k == "log-bin") && is_on(v));
    if log_bin_on || sets_log_bin {
        return Vec::new();
    }
    vars.iter()
        .filter(|(k, _)| NEED_BINLOG.contains(&k.as_str()))
        .map(|(k, v)| {
            format!(
                "{k} = {v} has no effect: the binary log is off (log_bin = OFF); add log_bin = \"mysql-bin\" to the config's vars, or drop {k}"
            )
        })
        .collect()
}

/// The client's open-file limit: raises the soft limit when the hard one allows.
pub fn fd_findings(total_connections: u64) -> Vec<Finding> {
    let need = total_connections + 64;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= need {
        return Vec::new();
    }
    let finding = |severity, message| Finding {
        target: "client".into(),
        severity,
        check: "open_files",
        message,
        max_threads: None,
    };
    if lim.rlim_max >= need {
        let new = libc::rlimit {
            rlim_cur: need.max(lim.rlim_cur),
            rlim_max: lim.rlim_max,
        };
        // SAFETY: raising our own soft limit within the hard limit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } == 0 {
            return vec![finding(
                Severity::Info,
                format!(
                    "raised the open-file soft limit from {} to {need}",
                    lim.rlim_cur
                ),
            )];
        }
    }
    vec![finding(
        Severity::Blocking,
        format!(
            "the open-file limit is {} (hard {}) but {total_connections} connections need about {need}: run `ulimit -n {need}` first",
            lim.rlim_cur, lim.rlim_max
        ),
    )]
}

/// Free bytes on the filesystem holding `path`.
pub fn free_bytes(path: &str) -> Option<u64> {
    let c = std::ffi::CString::new(path).ok()?;
    // SAFETY: statvfs fills the zeroed struct for a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0)
        .then(|| s.f_bavail as u64 * s.f_frsize as u64)
}

/// Row counts of sbtest1..N (None for a missing table).
pub async fn table_rows(c: &mut Admin, db: &str, tables: u32) -> anyhow::Result<Vec<Option<u64>>> {
    let present = c
        .column(format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = {} AND table_name LIKE 'sbtest%'",
            quote(db)
        ))
        .await?;
    // A table locked by someone else must not hang the check.
    c.exec("SET SESSION lock_wait_timeout = 10").await?;
    let mut out = Vec::new();
    for t in 1..=tables {
        let name = format!("sbtest{t}");
        if present.iter().any(|p| p.eq_ignore_ascii_case(&name)) {
            let n = c
                .value(format!("SELECT COUNT(*) FROM `{db}`.`{name}`"))
                .await?;
            out.push(n.and_then(|v| v.parse().ok()));
        } else {
            out.push(None);
        }
    }
    Ok(out)
}

/// The sbtest tables of `db` whose engine is not `engine` (each as "sbtest1 (InnoDB)").
pub async fn tables_not_of(c: &mut Admin, db: &str, engine: &str) -> anyhow::Result<Vec<String>> {
    let rows = c
        .rows(format!(
            "SELECT table_name, engine FROM information_schema.tables WHERE table_schema = {} AND table_name LIKE 'sbtest%' AND UPPER(engine) <> UPPER({})",
            quote(db),
            quote(engine)
        ))
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            format!("{} ({})", cell(0), cell(1))
        })
        .collect())
}

/// Whether the server can make tables of `engine` (SHOW ENGINES: YES or DEFAULT); the
/// finding that refuses it otherwise, with the remedy.
pub async fn engine_finding(c: &mut Admin, engine: &str) -> Option<(Severity, String)> {
    let rows = c.rows("SHOW ENGINES").await.ok()?;
    let support = rows.iter().find_map(|r| {
        let name = r.first().cloned().flatten()?;
        name.eq_ignore_ascii_case(engine)
            .then(|| r.get(1).cloned().flatten().unwrap_or_default())
    });
    match support.as_deref() {
        Some(s) if s.eq_ignore_ascii_case("YES") || s.eq_ignore_ascii_case("DEFAULT") => Some((
            Severity::Info,
            format!("storage engine {engine}: supported"),
        )),
        _ => {
            let plugin = crate::engine::config::engine_plugin(engine)
                .map(|p| format!("INSTALL SONAME '{p}' on it (its plugin package installed, e.g. mariadb-plugin-{})", engine.to_ascii_lowercase()))
                .unwrap_or_else(|| "enable it".to_string());
            Some((
                Severity::Blocking,
                format!(
                    "the server has no storage engine {engine} (SHOW ENGINES{}): {plugin}, or choose another storage_engine",
                    support.map(|s| format!(" says {s}")).unwrap_or_default()
                ),
            ))
        }
    }
}

/// A Galera node (wsrep_on): ready, Synced and in the Primary component, or refused with
/// why; and a warning when it numbers rows in steps (auto_increment_increment, which Galera
/// sets to the cluster size) while prepare lets the server number them. None off Galera.
pub async fn cluster_findings(
    c: &mut Admin,
    auto_inc: bool,
) -> Vec<(Severity, &'static str, String)> {
    let on = c.value("SELECT @@wsrep_on").await.ok().flatten();
    if !on.as_deref().is_some_and(is_on) {
        return Vec::new();
    }
    let st: std::collections::BTreeMap<String, String> = c
        .pairs("SHOW GLOBAL STATUS LIKE 'wsrep_%'")
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.unwrap_or_default()))
        .collect();
    let get = |k: &str| st.get(k).map(String::as_str).unwrap_or("?");
    let (ready, state, status, size) = (
        get("wsrep_ready"),
        get("wsrep_local_state_comment"),
        get("wsrep_cluster_status"),
        get("wsrep_cluster_size"),
    );
    let mut out = Vec::new();
    if is_on(ready) && state == "Synced" && status == "Primary" {
        out.push((
            Severity::Info,
            "cluster",
            format!("Galera node: Synced, in the Primary component of {size} node(s)"),
        ));
    } else {
        out.push((
            Severity::Blocking,
            "cluster",
            format!(
                "the Galera node is not ready to measure: wsrep_local_state_comment = {state}, wsrep_cluster_status = {status}, wsrep_ready = {ready}, cluster size {size}; a node is measured Synced in the Primary component: wait for it to sync (a desynced node: SET GLOBAL wsrep_desync = OFF), or leave it out of the url"
            ),
        ));
    }
    let step: u64 = c
        .value("SELECT @@auto_increment_increment")
        .await
        .ok()
        .flatten()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    if auto_inc && step > 1 {
        out.push((
            Severity::Warning,
            "cluster",
            format!(
                "auto_increment_increment = {step} (Galera sets it to the cluster size): tables prepared with auto_inc on get ids 1, {}, {}, … and most of the workload's reads miss; set [workload_options] auto_inc = \"off\" to number the rows 1..N",
                1 + step,
                1 + 2 * step
            ),
        ));
    }
    out
}

/// Everything `check` reports for one external target.
pub async fn check_target(
    target: &str,
    conn: &ConnOptions,
    local: bool,
    needs: &Needs,
    on_capacity: OnCapacity,
) -> (Vec<Finding>, Option<ServerFacts>) {
    let mut out = Vec::new();
    let finding = |severity, check, message: String| Finding {
        target: target.to_string(),
        severity,
        check,
        message,
        max_threads: None,
    };
    let mut c = match Admin::open_no_db(conn).await {
        Ok(c) => c,
        Err(e) => {
            out.push(finding(
                Severity::Blocking,
                "connect",
                format!(
                    "cannot connect to {} as '{}': {}. Remedy: {}",
                    db::endpoint(conn, 0),
                    conn.user,
                    e,
                    db::connect_remedy(e.code())
                ),
            ));
            return (out, None);
        }
    };
    let facts = match read_facts(&mut c).await {
        Ok(f) => f,
        Err(e) => {
            out.push(finding(
                Severity::Blocking,
                "variables",
                format!("cannot read server variables: {e}"),
            ));
            return (out, None);
        }
    };
    out.push(finding(
        Severity::Info,
        "version",
        format!("server version {}", facts.version),
    ));
    for (severity, check, message) in cluster_findings(&mut c, needs.auto_inc).await {
        out.push(finding(severity, check, message));
    }
    if let Some((severity, message)) = engine_finding(&mut c, &needs.data.storage_engine).await {
        let blocked = severity == Severity::Blocking;
        out.push(finding(severity, "engine", message));
        // Nothing more to learn: its tables could not be made.
        if blocked {
            c.close().await;
            return (out, Some(facts));
        }
    }
    let missing = missing_privileges(&facts.grants, &conn.db);
    if !missing.is_empty() {
        out.push(finding(
            Severity::Blocking,
            "privileges",
            format!(
                "user '{}' lacks {} on `{}`.*: GRANT ALL ON `{}`.* TO the benchmark user",
                conn.user,
                missing.join(", "),
                conn.db,
                conn.db
            ),
        ));
    }
    let mut cap = capacity_findings(target, &facts, needs);
    if on_capacity == OnCapacity::Raise {
        if let Some(i) = cap.iter().position(|f| f.check == "max_connections") {
            let want = recommended_max_connections(&facts, needs);
            match c.exec(format!("SET GLOBAL max_connections = {want}")).await {
                Ok(()) => {
                    cap[i] = finding(
                        Severity::Info,
                        "max_connections",
                        format!(
                            "raised max_connections from {} to {want} (SET GLOBAL)",
                            facts.max_connections
                        ),
                    );
                }
                Err(e) => cap[i]
                    .message
                    .push_str(&format!(" (raising it failed: {e})")),
            }
        }
    }
    // The server allows them; whatever sits in front of it may not.
    let server_allows = !cap.iter().any(|f| f.severity == Severity::Blocking);
    out.extend(cap);
    if server_allows {
        out.extend(open::connections_finding(target, conn, needs).await);
    }
    let db_exists: Option<String> = c
        .value(format!(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name = {}",
            quote(&conn.db)
        ))
        .await
        .unwrap_or(None);
    let rows = if db_exists.is_some() {
        table_rows(&mut c, &conn.db, needs.data.tables)
            .await
            .unwrap_or_default()
    } else {
        vec![None; needs.data.tables as usize]
    };
    // Tables of another engine are not the data asked for (prepare = auto makes them again).
    let other = if db_exists.is_some() {
        tables_not_of(&mut c, &conn.db, &needs.data.storage_engine)
            .await
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    if !other.is_empty() {
        out.push(finding(
            Severity::Info,
            "engine",
            format!(
                "{} not of storage engine {}",
                other.join(", "),
                needs.data.storage_engine
            ),
        ));
    }
    let ready = other.is_empty()
        && rows
            .iter()
            .all(|r| *r == Some(needs.data.table_size as u64));
    if let Some(size) = needs.data.size {
        out.push(finding(Severity::Info, "tables", format!("data.size {}: sized on this server when the run starts (its row size measured by a probe prepare; tables that already hold it are reused)", size.shown())));
        let asked = match size {
            SizeOf::Bytes(b) => Some(b),
            SizeOf::BufferPool(f) => c
                .value("SELECT @@innodb_buffer_pool_size")
                .await
                .ok()
                .flatten()
                .and_then(|v| v.parse::<f64>().ok())
                .map(|p| (p * f) as u64),
            SizeOf::Memory(_) => None,
        };
        if let (Some(need), true) = (asked, local && !facts.datadir.is_empty()) {
            if let Some(free) = free_bytes(&facts.datadir).filter(|&free| free < need) {
                out.push(finding(
                    Severity::Blocking,
                    "disk",
                    format!(
                        "{} has {} MiB free but data.size {} asks for {} MiB: free space or give a smaller size",
                        facts.datadir,
                        free >> 20,
                        size.shown(),
                        need >> 20
                    ),
                ));
            }
        }
        c.close().await;
        return (out, Some(facts));
    }
    match (ready, needs.data.prepare) {
        (true, PreparePolicy::Always) => out.push(finding(Severity::Info, "tables", "tables present; prepare = always will recreate them".into())),
        (true, _) => out.push(finding(Severity::Info, "tables", format!("{} tables of {} rows present", needs.data.tables, needs.data.table_size))),
        (false, PreparePolicy::Never) => out.push(finding(
            Severity::Blocking,
            "tables",
            format!(
                "prepare = never but sbtest1..{} in `{}` are missing or not {} rows each (found {:?}); prepare them or set prepare = \"auto\"",
                needs.data.tables, conn.db, needs.data.table_size, rows
            ),
        )),
        (false, _) => out.push(finding(Severity::Info, "tables", "tables missing or mismatched: run will prepare them".into())),
    }
    let preparing = !ready || needs.data.prepare == PreparePolicy::Always;
    if preparing && local && !facts.datadir.is_empty() {
        if let Some(free) = free_bytes(&facts.datadir) {
            let need = data_bytes(&needs.data);
            if free < need {
                out.push(finding(
                    Severity::Blocking,
                    "disk",
                    format!(
                        "{} has {} MiB free but the data set needs about {} MiB: free space or use fewer/smaller tables",
                        facts.datadir,
                        free >> 20,
                        need >> 20
                    ),
                ));
            }
        }
    }
    c.close().await;
    (out, Some(facts))
}

#[cfg(test)]
mod tests;
