//! sysbench's command line: option names (`-`/`_` alike, 0.5 aliases), defaults as sysbench
//! prints them, value syntax, `--help`, and `build`, which types the options into the engine's
//! `EngineConfig` (the values are checked by the engine's types).

use crate::engine::config::overrides::WORKLOAD_OPTIONS;
use crate::engine::config::{
    check_engine_name, flag_word, ConnOptions, EngineConfig, Overrides, TlsOptions, WorkloadKind,
    WorkloadOptions, MAX_SECONDS,
};
use std::collections::BTreeMap;

mod config_file;
mod help;
mod table;

pub use help::{workload_help, Help};
use table::{aliases, canonical, defs, Kind};

/// A bad command line, worded for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// `arg` as it was typed (`--nope=1`), as sysbench prints it.
    #[error("invalid option: {arg}{hint}")]
    Unknown { arg: String, hint: String },
    #[error("invalid value '{value}' for --{name}: {why}")]
    BadValue {
        name: String,
        value: String,
        why: String,
    },
    #[error("{0}")]
    Usage(String),
    /// A value sysbench's own option parser refuses (not a workload script's option): `arg`
    /// as typed, the option's name, whether it is an on/off flag, and whether it belongs to
    /// a host test (sysbench reads those after printing its banner).
    #[error("invalid value '{value}' for --{}", name.replace('_', "-"))]
    Refused {
        arg: String,
        name: &'static str,
        value: String,
        flag: bool,
        test: bool,
    },
    /// A test neither sysbench nor we have: sysbench's line, and ours with what we have.
    #[error("FATAL: Cannot find benchmark '{name}': no such built-in test, file or module{hint}; sweepbench has: {have}")]
    UnknownTest {
        name: String,
        hint: String,
        have: String,
    },
}

/// The option values as given, before typing, keyed by canonical name.
#[derive(Debug, Default, Clone)]
pub struct RawOptions {
    values: BTreeMap<&'static str, String>,
}

fn nearest(name: &str) -> String {
    let norm = name.replace('-', "_");
    let best = defs()
        .map(|d| d.name)
        .chain(aliases().map(|(a, _)| a))
        .map(|cand| (strsim::levenshtein(&norm, cand), cand))
        .min();
    match best {
        Some((d, cand)) if d <= 3 => format!(" (did you mean --{}?)", cand.replace('_', "-")),
        _ => String::new(),
    }
}

fn parse_bool(name: &str, v: &str) -> Result<bool, OptionError> {
    flag_word(v).ok_or_else(|| OptionError::BadValue {
        name: name.replace('_', "-"),
        value: v.into(),
        why: "expected on/off, true/false or 1/0".into(),
    })
}

impl RawOptions {
    /// Sets one option from its command-line spelling; the value is checked against the kind.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        let def = canonical(name).ok_or_else(|| OptionError::Unknown {
            arg: format!("--{name}"),
            hint: nearest(name),
        })?;
        let bad = |why: &str| OptionError::BadValue {
            name: def.name.replace('_', "-"),
            value: value.to_string(),
            why: why.to_string(),
        };
        match def.kind {
            Kind::Int => {
                value
                    .parse::<u64>()
                    .map_err(|_| bad("expected a non-negative integer"))?;
            }
            Kind::Float => {
                value.parse::<f64>().map_err(|_| bad("expected a number"))?;
            }
            Kind::Bool => {
                parse_bool(def.name, value)?;
            }
            Kind::Str => {}
        }
        self.values.insert(def.name, value.to_string());
        Ok(())
    }

    /// True when the named option takes no value on its own (`--histogram` means on).
    pub fn is_flag(name: &str) -> bool {
        canonical(name).is_some_and(|d| d.kind == Kind::Bool || d.name == "mysql_ssl")
    }

    pub fn is_known(name: &str) -> bool {
        canonical(name).is_some()
    }

    pub fn get(&self, name: &str) -> &str {
        self.values
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| {
                defs()
                    .find(|d| d.name == name)
                    .map(|d| d.default)
                    .unwrap_or_else(|| panic!("option {name} is not defined"))
            })
    }

    /// A bad value for `name`, as given.
    fn bad(&self, name: &str, why: &str) -> OptionError {
        OptionError::BadValue {
            name: name.replace('_', "-"),
            value: self.get(name).to_string(),
            why: why.to_string(),
        }
    }

    /// Whether the option under any of its spellings was given.
    fn given_any(&self, name: &str) -> bool {
        canonical(name).is_some_and(|d| self.values.contains_key(d.name))
    }

    pub fn given(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    pub fn int(&self, name: &str) -> u64 {
        self.get(name).parse().unwrap_or(0)
    }

    pub fn float(&self, name: &str) -> f64 {
        self.get(name).parse().unwrap_or(0.0)
    }

    pub fn flag(&self, name: &str) -> bool {
        parse_bool(name, self.get(name)).unwrap_or(false)
    }
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

fn u32_opt(raw: &RawOptions, name: &str) -> Result<u32, OptionError> {
    let v = raw.int(name);
    u32::try_from(v).map_err(|_| raw.bad(name, "too large"))
}

fn list<T: std::str::FromStr>(raw: &RawOptions, name: &str) -> Result<Vec<T>, OptionError> {
    items(raw, name).map_err(|s| raw.bad(name, &format!("'{s}' is not valid here")))
}

/// A comma-separated option's items; Err names the first that does not parse.
fn items<T: std::str::FromStr>(raw: &RawOptions, name: &str) -> Result<Vec<T>, String> {
    raw.get(name)
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| s.to_string()))
        .collect()
}

/// `--report-checkpoints=1,3`: the seconds, ascending, each once; Err names the item that is
/// not a number of seconds.
pub(crate) fn checkpoints(raw: &RawOptions) -> Result<Vec<u64>, String> {
    let mut at: Vec<u64> = items(raw, "report_checkpoints")?;
    at.sort_unstable();
    at.dedup();
    Ok(at)
}

/// Types an option's value with the engine type's own check (`FromStr` / `TryFrom`), so the
/// command line and sweep files refuse the same values with the same words.
fn typed<T: std::str::FromStr<Err = String>>(
    raw: &RawOptions,
    name: &str,
) -> Result<T, OptionError> {
    raw.get(name)
        .parse()
        .map_err(|why: String| raw.bad(name, &why))
}

/// sysbench 1.0.20's `--mysql-ssl=on` presents client-cert.pem and client-key.pem from the
/// working directory when they are there; so does `bench`, for `on` (not for the 1.1 modes).
fn sysbench_file(raw: &RawOptions, name: &str) -> Option<std::path::PathBuf> {
    let on = flag_word(raw.get("mysql_ssl")) == Some(true);
    let both = ["client-cert.pem", "client-key.pem"]
        .iter()
        .all(|f| std::path::Path::new(f).is_file());
    (on && both).then(|| std::path::PathBuf::from(name))
}

fn path_opt(raw: &RawOptions, name: &str) -> Option<std::path::PathBuf> {
    let v = raw.get(name);
    (!v.is_empty()).then(|| std::path::PathBuf::from(v))
}

/// `--format`.
pub fn output_format(raw: &RawOptions) -> Result<OutputFormat, OptionError> {
    match raw.get("format") {
        "text" => Ok(OutputFormat::Text),
        "json" => Ok(OutputFormat::Json),
        _ => Err(raw.bad("format", "expected text or json")),
    }
}

/// Types and cross-checks the raw options for the named workload (`oltp` picks a legacy
/// mapping from `--oltp-read-only` / `--oltp-write-only`).
pub fn build(workload: &str, raw: &RawOptions) -> Result<EngineConfig, OptionError> {
    let workload = resolve_workload(workload, raw)?;
    if raw.get("db_driver") != "mysql" {
        return Err(OptionError::Usage(format!(
            "FATAL: invalid database driver name: '{}' (sweepbench has the mysql driver only)",
            raw.get("db_driver")
        )));
    }
    for unsupported in ["mysql_compression"] {
        if raw.flag(unsupported) {
            return Err(raw.bad(unsupported, "not supported by sweepbench yet"));
        }
    }
    let checkpoints_s = checkpoints(raw)
        .map_err(|s| raw.bad("report_checkpoints", &format!("'{s}' is not valid here")))?;
    for name in ["time", "warmup_time", "report_interval"] {
        if raw.int(name) > MAX_SECONDS {
            return Err(raw.bad(name, "more than ten years"));
        }
    }
    let threads = u32_opt(raw, "threads")?;
    if threads == 0 {
        return Err(raw.bad("threads", "must be at least 1"));
    }
    if threads > crate::engine::config::MAX_THREADS {
        return Err(raw.bad(
            "threads",
            &format!(
                "must be at most {} (the most connections a server takes)",
                crate::engine::config::MAX_THREADS
            ),
        ));
    }
    let wl = WorkloadOptions {
        tables: u32_opt(raw, "tables")?,
        table_size: u32_opt(raw, "table_size")?,
        storage_engine: raw.get("mysql_storage_engine").to_string(),
        ..WorkloadOptions::default()
    };
    if wl.tables == 0 && workload.uses_oltp_tables() {
        return Err(raw.bad("tables", "must be at least 1"));
    }
    if wl.tables > crate::engine::config::MAX_TABLES {
        return Err(raw.bad(
            "tables",
            &format!(
                "must be at most {} (each connection prepares every statement on every table)",
                crate::engine::config::MAX_TABLES
            ),
        ));
    }
    check_engine_name(&wl.storage_engine).map_err(|why| raw.bad("mysql_storage_engine", &why))?;
    let password = if raw.given("mysql_password") {
        Some(raw.get("mysql_password").to_string())
    } else {
        crate::engine::config::password_from_env()
    };
    let mut c = EngineConfig {
        workload,
        conn: ConnOptions {
            hosts: list(raw, "mysql_host")?,
            ports: list(raw, "mysql_port")?,
            sockets: list(raw, "mysql_socket")?,
            user: raw.get("mysql_user").to_string(),
            password,
            db: raw.get("mysql_db").to_string(),
            allow_cleartext: raw.flag("mysql_allow_cleartext"),
            // As sysbench (libmariadb): "localhost" is the default socket, a port or not.
            tcp: false,
            tls: TlsOptions {
                mode: typed(raw, "mysql_ssl")?,
                ca: path_opt(raw, "mysql_ssl_ca"),
                cert: path_opt(raw, "mysql_ssl_cert")
                    .or_else(|| sysbench_file(raw, "client-cert.pem")),
                key: path_opt(raw, "mysql_ssl_key")
                    .or_else(|| sysbench_file(raw, "client-key.pem")),
                cipher: Some(raw.get("mysql_ssl_cipher"))
                    .filter(|c| !c.is_empty())
                    .map(String::from),
            },
        },
        wl,
        threads,
        events: raw.int("events"),
        time_s: raw.int("time"),
        warmup_s: raw.int("warmup_time"),
        forced_shutdown: typed(raw, "forced_shutdown")?,
        rate: raw.int("rate"),
        report_interval_s: raw.int("report_interval"),
        checkpoints_s,
        histogram: raw.flag("histogram"),
        quiet: false,
        dry_run: raw.flag("mysql_dry_run"),
        cpus: Vec::new(),
        ..EngineConfig::new(workload)
    };
    workload_options(raw)?.apply(&mut c);
    Ok(c)
}

/// The workload options given on the command line, typed by the engine's one table.
fn workload_options(raw: &RawOptions) -> Result<Overrides, OptionError> {
    let mut given = Overrides::default();
    for d in WORKLOAD_OPTIONS.iter().filter(|d| raw.given(d.name)) {
        given
            .set_arg(d.name, raw.get(d.name))
            .map_err(|why| raw.bad(d.name, &why))?;
    }
    Ok(given)
}

pub fn resolve_workload(name: &str, raw: &RawOptions) -> Result<WorkloadKind, OptionError> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.strip_suffix(".lua").unwrap_or(base);
    if base == "oltp" {
        return Ok(
            match (raw.flag("oltp_read_only"), raw.flag("oltp_write_only")) {
                (true, _) => WorkloadKind::ReadOnly,
                (_, true) => WorkloadKind::WriteOnly,
                _ => WorkloadKind::ReadWrite,
            },
        );
    }
    WorkloadKind::from_name(base).ok_or_else(|| {
        let names: Vec<&str> = WorkloadKind::all().map(|w| w.name()).collect();
        let hint = names
            .iter()
            .map(|n| (strsim::levenshtein(base, n), *n))
            .min()
            .filter(|(d, _)| *d <= 4)
            .map(|(_, n)| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        OptionError::UnknownTest {
            name: name.to_string(),
            hint,
            have: names.join(", "),
        }
    })
}

/// Splits a sysbench-style argument list into positionals and options.
/// Options may come before, between or after the positionals, as sysbench allows.
pub fn parse_args(args: &[String]) -> Result<(Vec<String>, RawOptions, bool), OptionError> {
    let mut raw = RawOptions::default();
    let mut positionals = Vec::new();
    let mut help = false;
    let mut it = args.iter().peekable();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            help = true;
            continue;
        }
        let Some(body) = arg.strip_prefix("--") else {
            positionals.push(arg.clone());
            continue;
        };
        let as_typed = |e: OptionError| match e {
            OptionError::Unknown { hint, .. } => OptionError::Unknown {
                arg: arg.clone(),
                hint,
            },
            OptionError::BadValue { name, value, why } => match table::sysbench_own(&name) {
                Some(def) => OptionError::Refused {
                    arg: arg.clone(),
                    name: def.name,
                    value,
                    flag: def.kind == Kind::Bool,
                    test: ["cpu_", "memory_", "file_"]
                        .iter()
                        .any(|p| def.name.starts_with(p)),
                },
                None => OptionError::BadValue { name, value, why },
            },
            other => other,
        };
        match body.split_once('=') {
            Some((name, value)) => raw.set(name, value).map_err(as_typed)?,
            None if RawOptions::is_flag(body) => raw.set(body, "on")?,
            None if RawOptions::is_known(body) => {
                let value = it.next().ok_or_else(|| OptionError::BadValue {
                    name: body.to_string(),
                    value: String::new(),
                    why: "a value is required".into(),
                })?;
                raw.set(body, value)?
            }
            None => raw.set(body, "").map_err(as_typed)?,
        }
    }
    // sysbench 0.5's --test=<workload>: the workload comes first, as 1.0 takes it.
    if raw.given("test") {
        positionals.insert(0, raw.get("test").to_string());
    }
    if raw.given("config_file") {
        let path = std::path::PathBuf::from(raw.get("config_file"));
        config_file::merge(&mut raw, &path)?;
    }
    Ok((positionals, raw, help))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{ForcedShutdown, IgnoreErrors};

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn build(s: &str) -> Result<EngineConfig, OptionError> {
        let (pos, raw, _) = parse_args(&args(s))?;
        super::build(&pos[0], &raw)
    }

    /// The option table's defaults (what `--help` prints) and the engine's are one set.
    #[test]
    fn the_option_tables_defaults_are_the_engines() {
        for w in WorkloadKind::all() {
            assert_eq!(
                build(w.name()).unwrap(),
                EngineConfig::new(w),
                "{}",
                w.name()
            );
        }
        // fileio's, which a sweep's [fileio] table falls back on too.
        for (name, default) in crate::engine::host::fileio::DEFAULTS {
            assert_eq!(canonical(name).map(|d| d.default), Some(default), "{name}");
        }
    }

    #[test]
    fn dashes_and_underscores_are_the_same_option() {
        let a = build("oltp_read_write --table-size=500 --mysql_host=127.0.0.1").unwrap();
        let b = build("oltp_read_write --table_size=500 --mysql-host=127.0.0.1").unwrap();
        assert_eq!(a.wl.table_size, 500);
        assert_eq!(b.wl.table_size, 500);
        assert_eq!(a.conn.hosts, vec!["127.0.0.1"]);
    }

    #[test]
    fn defaults_are_sysbench_1_0_20s() {
        let o = EngineConfig::new(WorkloadKind::ReadWrite);
        assert_eq!(o.threads, 1);
        assert_eq!(o.time_s, 10);
        assert_eq!(o.events, 0);
        assert_eq!(o.percentile, 95);
        assert_eq!(o.rand.kind, crate::engine::config::RandType::Special);
        assert_eq!(o.ps_mode, crate::engine::config::PsMode::Auto);
        assert_eq!(o.ignore_errors, IgnoreErrors::Codes(vec![1213, 1020, 1205]));
        assert_eq!(o.conn.user, "sbtest");
        assert_eq!(o.conn.db, "sbtest");
        assert_eq!(o.conn.hosts, vec!["localhost"]);
        assert_eq!(o.conn.ports, vec![3306]);
        assert_eq!(
            (o.wl.tables, o.wl.table_size, o.wl.point_selects),
            (1, 10000, 10)
        );
        assert!(o.wl.range_selects && o.wl.auto_inc && o.wl.create_secondary);
        assert!(!o.wl.skip_trx && !o.wl.secondary);
    }

    #[test]
    fn legacy_names_are_aliases() {
        let o = build(
            "oltp --oltp-table-size=77 --oltp-tables-count=3 --num-threads=4 --max-time=9 \
             --max-requests=100 --oltp-skip-trx=on --mysql-table-engine=myisam --oltp-read-only=on",
        )
        .unwrap();
        assert_eq!(o.workload, WorkloadKind::ReadOnly);
        assert_eq!((o.wl.table_size, o.wl.tables), (77, 3));
        assert_eq!((o.threads, o.time_s, o.events), (4, 9, 100));
        assert!(o.wl.skip_trx);
        assert_eq!(o.wl.storage_engine, "myisam");
    }

    #[test]
    fn unknown_option_is_refused_with_a_hint() {
        let err = build("oltp_read_write --table-sise=5").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid option: --table-sise=5 (did you mean --table-size?)"
        );
    }

    #[test]
    fn bad_values_name_the_option() {
        let err = build("oltp_read_write --threads=x").unwrap_err();
        assert!(err.to_string().contains("--threads"), "{err}");
        let err = build("oltp_read_write --rand-type=weird").unwrap_err();
        assert!(err.to_string().contains("--rand-type"), "{err}");
        let err = build("oltp_read_write --skip-trx=maybe").unwrap_err();
        assert!(err.to_string().contains("on/off"), "{err}");
    }

    #[test]
    fn counts_per_event_and_tables_have_stated_ranges() {
        // Found by tests/fuzz.rs: an event of 2147483647 point selects never ends, and
        // 4294967295 tables made every connection prepare statements it could not hold.
        let err = build("oltp_read_only --point-selects=2147483647").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '2147483647' for --point-selects: 2147483647 is more than 1000000 per event"
        );
        let err = build("select_random_points --random-points=1000001").unwrap_err();
        assert!(err.to_string().contains("--random-points"), "{err}");
        let err = build("oltp_read_only --rand-spec-iter=4000000000").unwrap_err();
        assert!(err.to_string().contains("more than 1000 draws"), "{err}");
        let err = build("oltp_read_only --tables=100001").unwrap_err();
        assert!(err.to_string().contains("at most 100000"), "{err}");
        let err = build("oltp_read_only --threads=100001").unwrap_err();
        assert!(err.to_string().contains("at most 100000"), "{err}");
        let o = build("oltp_read_only --point-selects=1000000 --tables=100000").unwrap();
        assert_eq!((o.wl.point_selects, o.wl.tables), (1_000_000, 100_000));
    }

    #[test]
    fn bare_flags_mean_on_and_values_may_follow() {
        let o = build("--histogram --threads 8 oltp_read_only").unwrap();
        assert!(o.histogram);
        assert_eq!(o.threads, 8);
        assert_eq!(o.workload, WorkloadKind::ReadOnly);
    }

    #[test]
    fn create_table_options_are_checked_by_their_type() {
        let o = build("oltp_insert --create-table-options=ROW_FORMAT=COMPACT").unwrap();
        assert_eq!(o.wl.create_table_options.as_str(), "ROW_FORMAT=COMPACT");
        let err = build("oltp_insert --create-table-options=x;y").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value 'x;y' for --create-table-options: one CREATE TABLE's clauses: ';' is not allowed"
        );
    }

    #[test]
    fn point_select_forces_one_select() {
        let o = build("oltp_point_select --point-selects=7").unwrap();
        assert_eq!(o.wl.point_selects, 1);
    }

    #[test]
    fn lua_paths_name_the_workload() {
        let o = build("/usr/share/sysbench/oltp_insert.lua").unwrap();
        assert_eq!(o.workload, WorkloadKind::Insert);
    }

    #[test]
    fn forced_shutdown_and_ignore_lists_parse() {
        let o = build("oltp_read_write --forced-shutdown=10% --mysql-ignore-errors=all").unwrap();
        assert_eq!(o.forced_shutdown, ForcedShutdown::PercentOfTime(10.0));
        assert_eq!(o.ignore_errors, IgnoreErrors::All);
        let o =
            build("oltp_read_write --forced-shutdown=5 --mysql-ignore-errors=1062,1213").unwrap();
        assert_eq!(o.forced_shutdown, ForcedShutdown::Seconds(5.0));
        assert!(o.ignore_errors.ignores(1062) && !o.ignore_errors.ignores(1205));
    }
}
