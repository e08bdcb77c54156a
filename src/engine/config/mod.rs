//! What the engine runs from, as types: the workload, its shape, the random distributions,
//! the connection, and how long and how hard to run. sysbench 1.0.20's defaults live here
//! (`EngineConfig::new`); the value checks live in the types (`FromStr`, `TryFrom`), so `bench`'s
//! command line and a sweep file's `[workload_options]` (`overrides`) refuse the same values
//! with the same words. Nothing here knows either of them.

mod bounded;
pub mod options;
pub mod overrides;
pub mod workloads;

pub use bounded::{ParetoH, PerEvent, Percentile, SpecIter, MAX_PER_EVENT, MAX_SPEC_ITER};
pub use overrides::Overrides;
pub use workloads::{Body, Tables, Workload, WorkloadKind, WORKLOADS};

use std::str::FromStr;

/// Which distribution `rand.default` follows (`--rand-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl FromStr for RandType {
    type Err = String;
    fn from_str(s: &str) -> Result<RandType, String> {
        Ok(match s {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return Err("expected uniform, gaussian, special, pareto or zipfian".into()),
        })
    }
}

/// The parameters of every distribution, as given by the `--rand-*` options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandParams {
    pub kind: RandType,
    pub spec_iter: u32,
    pub spec_pct: f64,
    pub spec_res: f64,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

impl Default for RandParams {
    fn default() -> Self {
        RandParams {
            kind: RandType::Special,
            spec_iter: 12,
            spec_pct: 1.0,
            spec_res: 75.0,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        }
    }
}

/// `--db-ps-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PsMode {
    Auto,
    Disable,
}

impl FromStr for PsMode {
    type Err = String;
    fn from_str(s: &str) -> Result<PsMode, String> {
        match s {
            "auto" => Ok(PsMode::Auto),
            "disable" => Ok(PsMode::Disable),
            _ => Err("expected auto or disable".into()),
        }
    }
}

/// `--mysql-ignore-errors`: `all`, `none`, or server error codes (a comma-separated string, one
/// number or a list of numbers in a sweep file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "IgnoreErrorsValue")]
pub enum IgnoreErrors {
    All,
    Codes(Vec<u16>),
}

impl IgnoreErrors {
    pub fn ignores(&self, code: u16) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(c) => c.contains(&code),
        }
    }
}

impl FromStr for IgnoreErrors {
    type Err = String;
    fn from_str(s: &str) -> Result<IgnoreErrors, String> {
        match s.trim() {
            "all" => Ok(IgnoreErrors::All),
            "" | "none" => Ok(IgnoreErrors::Codes(vec![])),
            list => list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| {
                    c.parse::<u16>()
                        .map_err(|_| format!("'{c}' is not a server error code"))
                })
                .collect::<Result<_, _>>()
                .map(IgnoreErrors::Codes),
        }
    }
}

impl std::fmt::Display for IgnoreErrors {
    /// sysbench's spelling, as `--mysql-ignore-errors` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IgnoreErrors::All => f.write_str("all"),
            IgnoreErrors::Codes(c) if c.is_empty() => f.write_str("none"),
            IgnoreErrors::Codes(c) => {
                let codes: Vec<String> = c.iter().map(u16::to_string).collect();
                f.write_str(&codes.join(","))
            }
        }
    }
}

impl serde::Serialize for IgnoreErrors {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum IgnoreErrorsValue {
    Text(String),
    One(u16),
    Codes(Vec<u16>),
}

impl TryFrom<IgnoreErrorsValue> for IgnoreErrors {
    type Error = String;
    fn try_from(v: IgnoreErrorsValue) -> Result<IgnoreErrors, String> {
        match v {
            IgnoreErrorsValue::Text(s) => s.parse(),
            IgnoreErrorsValue::One(c) => Ok(IgnoreErrors::Codes(vec![c])),
            IgnoreErrorsValue::Codes(c) => Ok(IgnoreErrors::Codes(c)),
        }
    }
}

/// `--forced-shutdown`: how long the run may overrun its time before it is ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ForcedShutdown {
    Off,
    Seconds(f64),
    PercentOfTime(f64),
}

impl FromStr for ForcedShutdown {
    type Err = String;
    fn from_str(s: &str) -> Result<ForcedShutdown, String> {
        let expected = || "expected off, N or N%".to_string();
        let v = match s {
            "off" | "0" => return Ok(ForcedShutdown::Off),
            v => match v.strip_suffix('%') {
                Some(p) => ForcedShutdown::PercentOfTime(p.parse().map_err(|_| expected())?),
                None => ForcedShutdown::Seconds(v.parse().map_err(|_| expected())?),
            },
        };
        let in_range = match v {
            ForcedShutdown::Off => true,
            ForcedShutdown::Seconds(x) => (0.0..=1e8).contains(&x),
            ForcedShutdown::PercentOfTime(x) => (0.0..=1e6).contains(&x),
        };
        if in_range {
            Ok(v)
        } else {
            Err("out of range".into())
        }
    }
}

/// A boolean as sysbench spells one (on/off, true/false, yes/no, 1/0, any case); None for
/// anything else.
pub fn flag_word(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// A storage engine's name (`--mysql-storage-engine`), spliced into CREATE TABLE, so only
/// letters, digits and '_'.
pub fn check_engine_name(name: &str) -> Result<(), String> {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(())
    } else {
        Err("expected an engine name".into())
    }
}

/// The plugin a MariaDB server loads for storage engine `name` (`ha_rocksdb` for rocksdb), or
/// None for an engine every server has built in.
pub fn engine_plugin(name: &str) -> Option<String> {
    const BUILT_IN: &[&str] = &[
        "innodb",
        "aria",
        "myisam",
        "memory",
        "heap",
        "csv",
        "mrg_myisam",
        "merge",
        "sequence",
        "performance_schema",
    ];
    let n = name.to_ascii_lowercase();
    if BUILT_IN.contains(&n.as_str()) {
        return None;
    }
    Some(match n.as_str() {
        // MariaDB's FEDERATED is FederatedX.
        "federated" => "ha_federatedx".to_string(),
        _ => format!("ha_{n}"),
    })
}

/// `--create-table-options` (sysbench 1.1): extra clauses after CREATE TABLE's engine, e.g.
/// `ROW_FORMAT=COMPRESSED` or `PARTITION BY HASH(id) PARTITIONS 4`. One statement's worth:
/// no ';'.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TableOptions(String);

impl TryFrom<String> for TableOptions {
    type Error = String;
    fn try_from(s: String) -> Result<TableOptions, String> {
        if s.contains(';') {
            Err("one CREATE TABLE's clauses: ';' is not allowed".into())
        } else {
            Ok(TableOptions(s))
        }
    }
}

impl FromStr for TableOptions {
    type Err = String;
    fn from_str(s: &str) -> Result<TableOptions, String> {
        TableOptions::try_from(s.to_string())
    }
}

impl From<TableOptions> for String {
    fn from(t: TableOptions) -> String {
        t.0
    }
}

impl TableOptions {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Ten years: beyond that the clock arithmetic overflows and nobody means it.
pub const MAX_SECONDS: u64 = 315_360_000;

/// The most threads (connections) a run may open: the ceiling of MariaDB's and MySQL's
/// max_connections, so no server could take more; each is an OS thread here.
pub const MAX_THREADS: u32 = 100_000;

/// The highest open-loop rate (transactions/s) a run may ask for: a tenth of a microsecond
/// between arrivals, far past any server, and still a schedule the pacer can step through.
pub const MAX_RATE: u64 = 10_000_000;

/// The most tables a workload may use. Every connection prepares each statement on every
/// table (as sysbench's thread_init does), and a server holds at most 1,048,576 prepared
/// statements (max_prepared_stmt_count's ceiling): beyond this no server could take even one
/// connection, and the statements' memory alone would exhaust the client's.
pub const MAX_TABLES: u32 = 100_000;

/// Workload shape options shared by the scripts (`oltp_common.lua` and friends).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadOptions {
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub create_secondary: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub storage_engine: String,
    pub create_table_options: TableOptions,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            create_secondary: true,
            skip_trx: false,
            secondary: false,
            storage_engine: "innodb".into(),
            create_table_options: TableOptions::default(),
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
        }
    }
}

/// `--mysql-ssl`: sysbench 1.0.20's on/off, or 1.1's (and the mysql client's) modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    #[default]
    Disabled,
    /// TLS when the server offers it.
    Preferred,
    /// TLS or fail; any certificate (sysbench 1.0.20's `on`).
    Required,
    /// TLS with a certificate signed by `--mysql-ssl-ca`.
    VerifyCa,
    /// As VERIFY_CA, and the certificate names the host.
    VerifyIdentity,
}

impl SslMode {
    /// The mysql client's name of the mode (what a URL's `ssl-mode` takes).
    pub fn word(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }
}

impl FromStr for SslMode {
    type Err = String;
    fn from_str(s: &str) -> Result<SslMode, String> {
        // sysbench 1.0.20's on/off: on is REQUIRED (encrypt, any certificate).
        if let Some(on) = flag_word(s) {
            return Ok(if on {
                SslMode::Required
            } else {
                SslMode::Disabled
            });
        }
        Ok(match s.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(
                    "expected on, off, DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
                        .into(),
                )
            }
        })
    }
}

/// Where to connect, as sysbench's `--mysql-*` options say.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnOptions {
    pub hosts: Vec<String>,
    pub ports: Vec<u16>,
    pub sockets: Vec<String>,
    pub user: String,
    pub password: Option<String>,
    pub db: String,
    /// `--mysql-allow-cleartext`: mysql_clear_password over TCP without TLS.
    pub allow_cleartext: bool,
    pub tls: TlsOptions,
    /// TCP even to "localhost", which otherwise means the default Unix socket: a sweep file's
    /// URL that gives a port explicitly, as the mariadb client (10.6 and later) reads one.
    pub tcp: bool,
}

/// TLS as `--mysql-ssl`, `--mysql-ssl-ca`, `--mysql-ssl-cert`, `--mysql-ssl-key` and
/// `--mysql-ssl-cipher` say (a URL's ssl-mode, ssl-ca, …; a target table's ssl_mode, …).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsOptions {
    pub mode: SslMode,
    /// PEM files.
    pub ca: Option<std::path::PathBuf>,
    pub cert: Option<std::path::PathBuf>,
    pub key: Option<std::path::PathBuf>,
    /// Colon-separated suites, OpenSSL's or IANA's names; None: rustls's defaults.
    pub cipher: Option<String>,
}

/// A password from the environment when none was given: SWEEPBENCH_PASSWORD, then MYSQL_PWD
/// (which libmysqlclient reads, under sysbench too), so it need not be on a command line every
/// local user can read. `bench`, a sweep's targets and a client agent read it alike.
pub fn password_from_env() -> Option<String> {
    ["SWEEPBENCH_PASSWORD", "MYSQL_PWD"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
}

impl Default for ConnOptions {
    fn default() -> Self {
        ConnOptions {
            hosts: vec!["localhost".into()],
            ports: vec![3306],
            sockets: vec![],
            user: "sbtest".into(),
            password: None,
            db: "sbtest".into(),
            allow_cleartext: false,
            tls: TlsOptions::default(),
            tcp: false,
        }
    }
}

/// Everything one run of the engine needs, typed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub workload: WorkloadKind,
    pub conn: ConnOptions,
    pub wl: WorkloadOptions,
    pub rand: RandParams,
    pub rand_seed: u64,
    pub threads: u32,
    pub events: u64,
    pub time_s: u64,
    pub warmup_s: u64,
    pub forced_shutdown: ForcedShutdown,
    pub rate: u64,
    pub report_interval_s: u64,
    /// Checkpoint reports, seconds after the measurement start, ascending.
    pub checkpoints_s: Vec<u64>,
    pub percentile: u32,
    pub histogram: bool,
    pub ps_mode: PsMode,
    pub ignore_errors: IgnoreErrors,
    pub prepare_threads: u32,
    /// Suppress progress lines (sweeps under `--quiet`).
    pub quiet: bool,
    /// `--mysql-dry-run`: pretend every MySQL call succeeds, without a server.
    pub dry_run: bool,
    /// The CPUs the worker threads run on (a duet's isolation); empty: any.
    pub cpus: Vec<usize>,
}

impl EngineConfig {
    /// sysbench 1.0.20's defaults for `workload`.
    pub fn new(workload: WorkloadKind) -> EngineConfig {
        let mut c = EngineConfig {
            workload,
            conn: ConnOptions::default(),
            wl: WorkloadOptions::default(),
            rand: RandParams::default(),
            rand_seed: 0,
            threads: 1,
            events: 0,
            time_s: 10,
            warmup_s: 0,
            forced_shutdown: ForcedShutdown::Off,
            rate: 0,
            report_interval_s: 0,
            checkpoints_s: vec![],
            percentile: 95,
            histogram: false,
            ps_mode: PsMode::Auto,
            ignore_errors: IgnoreErrors::Codes(vec![1213, 1020, 1205]),
            prepare_threads: 0,
            quiet: false,
            dry_run: false,
            cpus: Vec::new(),
        };
        c.fit_workload();
        c
    }

    /// What the script itself fixes whatever the options say: oltp_point_select runs one
    /// point select per event.
    pub fn fit_workload(&mut self) {
        if self.workload == WorkloadKind::PointSelect {
            self.wl.point_selects = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_by_their_types() {
        assert!(ParetoH::try_from(0.0).is_err());
        assert!(ParetoH::try_from(1.0).is_err());
        assert_eq!(f64::from(ParetoH::try_from(0.3).unwrap()), 0.3);
        assert!(Percentile::try_from(101).is_err());
        assert_eq!(u32::from(Percentile::try_from(0).unwrap()), 0);
        assert_eq!("all".parse(), Ok(IgnoreErrors::All));
        assert_eq!("none".parse(), Ok(IgnoreErrors::Codes(vec![])));
        assert_eq!(
            " 1062, 1213 ".parse(),
            Ok(IgnoreErrors::Codes(vec![1062, 1213]))
        );
        assert!("1062,x".parse::<IgnoreErrors>().is_err());
        assert_eq!(
            IgnoreErrors::Codes(vec![1062, 1213]).to_string(),
            "1062,1213"
        );
        assert_eq!("10%".parse(), Ok(ForcedShutdown::PercentOfTime(10.0)));
        assert_eq!("off".parse(), Ok(ForcedShutdown::Off));
        assert!("1e9".parse::<ForcedShutdown>().is_err());
        assert!("x".parse::<PsMode>().is_err());
        assert!("weird".parse::<RandType>().is_err());
        assert!(check_engine_name("innodb").is_ok());
        assert!(check_engine_name("innodb; drop").is_err());
        assert!(check_engine_name("").is_err());
        assert_eq!(flag_word("Yes"), Some(true));
        assert_eq!(flag_word("maybe"), None);
        assert_eq!("ON".parse(), Ok(SslMode::Required));
        assert_eq!("0".parse(), Ok(SslMode::Disabled));
        assert_eq!("verify-ca".parse(), Ok(SslMode::VerifyCa));
        assert!("sometimes".parse::<SslMode>().is_err());
        assert!("ROW_FORMAT=COMPACT".parse::<TableOptions>().is_ok());
        assert!("ROW_FORMAT=COMPACT; DROP TABLE x"
            .parse::<TableOptions>()
            .is_err());
    }

    #[test]
    fn point_select_runs_one_select_per_event() {
        assert_eq!(
            EngineConfig::new(WorkloadKind::PointSelect)
                .wl
                .point_selects,
            1
        );
        assert_eq!(
            EngineConfig::new(WorkloadKind::ReadOnly).wl.point_selects,
            10
        );
    }
}
