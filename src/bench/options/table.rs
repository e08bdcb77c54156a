//! sysbench 1.0.20's option table for `bench`: the options of sysbench itself and its tests
//! (name, value kind, default as `--help` prints it, help line, 0.5 names); the workload
//! options come from the engine's one table (`WORKLOAD_OPTIONS`). The engine's own defaults
//! are tested to match.

use crate::engine::config::options::canonical_in;
pub(super) use crate::engine::config::options::{Def, Kind};
use crate::engine::config::overrides::WORKLOAD_OPTIONS;

const fn def(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> Def {
    Def {
        name,
        kind,
        default,
        help,
        legacy: &[],
    }
}

/// `d`, also called by the given sysbench 0.5 (or deprecated 1.0) names.
const fn was(mut d: Def, legacy: &'static [&'static str]) -> Def {
    d.legacy = legacy;
    d
}

/// Every option `bench` accepts: sysbench's and its tests', then the workload options.
pub(super) fn defs() -> impl Iterator<Item = &'static Def> {
    BENCH_DEFS.iter().chain(WORKLOAD_OPTIONS)
}

/// The option `name` stands for ('-' and '_' alike, 0.5 names mapped).
pub(super) fn canonical(name: &str) -> Option<&'static Def> {
    canonical_in(BENCH_DEFS, name).or_else(|| canonical_in(WORKLOAD_OPTIONS, name))
}

/// The option `name` stands for when it is sysbench's own (or a built-in test's), not a
/// workload script's.
pub(super) fn sysbench_own(name: &str) -> Option<&'static Def> {
    canonical_in(BENCH_DEFS, name).or_else(|| {
        // Of the workload options, sysbench itself reads the random numbers' and the
        // percentile (the scripts read the rest).
        canonical_in(WORKLOAD_OPTIONS, name)
            .filter(|d| d.name.starts_with("rand_") || d.name == "percentile")
    })
}

/// Every option's 0.5 names, with the canonical name each stands for.
pub(super) fn aliases() -> impl Iterator<Item = (&'static str, &'static str)> {
    defs().flat_map(|d| d.legacy.iter().map(move |a| (*a, d.name)))
}

/// The options of sysbench itself and of its cpu, memory and fileio tests, under sysbench
/// 1.0.20's canonical name.
const BENCH_DEFS: &[Def] = &[
    def(
        "cpu_max_prime",
        Kind::Int,
        "10000",
        "upper limit for primes generator (the cpu test)",
    ),
    def("file_num", Kind::Int, "128", "number of files to create (the fileio test)"),
    def(
        "file_block_size",
        Kind::Int,
        "16384",
        "block size to use in all IO operations (the fileio test)",
    ),
    def(
        "file_total_size",
        Kind::Str,
        "2G",
        "total size of files to create (the fileio test)",
    ),
    def(
        "file_test_mode",
        Kind::Str,
        "",
        "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw} (the fileio test)",
    ),
    def(
        "file_io_mode",
        Kind::Str,
        "sync",
        "file operations mode {sync,async,mmap} (the fileio test)",
    ),
    def(
        "file_async_backlog",
        Kind::Int,
        "128",
        "number of asynchronous operatons to queue per thread (the fileio test)",
    ),
    def(
        "file_extra_flags",
        Kind::Str,
        "",
        "list of additional flags to use to open files {sync,dsync,direct} (the fileio test)",
    ),
    def(
        "file_fsync_freq",
        Kind::Int,
        "100",
        "do fsync() after this number of requests, 0 = never (the fileio test)",
    ),
    def(
        "file_fsync_all",
        Kind::Bool,
        "off",
        "do fsync() after each write operation (the fileio test)",
    ),
    def(
        "file_fsync_end",
        Kind::Bool,
        "on",
        "do fsync() at the end of test (the fileio test)",
    ),
    def(
        "file_fsync_mode",
        Kind::Str,
        "fsync",
        "which method to use for synchronization {fsync, fdatasync} (the fileio test)",
    ),
    def(
        "file_merged_requests",
        Kind::Int,
        "0",
        "merge at most this number of IO requests for sequential IO, 0 = don't (the fileio test)",
    ),
    def(
        "file_rw_ratio",
        Kind::Float,
        "1.5",
        "reads/writes ratio for combined test (the fileio test)",
    ),
    def(
        "memory_block_size",
        Kind::Str,
        "1K",
        "size of memory block for test (the memory test)",
    ),
    def(
        "memory_total_size",
        Kind::Str,
        "100G",
        "total size of data to transfer (the memory test)",
    ),
    def(
        "memory_scope",
        Kind::Str,
        "global",
        "memory access scope {global,local} (the memory test)",
    ),
    def(
        "memory_hugetlb",
        Kind::Bool,
        "off",
        "allocate memory from HugeTLB pool (the memory test; not done here)",
    ),
    def(
        "memory_oper",
        Kind::Str,
        "write",
        "type of memory operations {read, write, none} (the memory test)",
    ),
    def(
        "memory_access_mode",
        Kind::Str,
        "seq",
        "memory access mode {seq,rnd} (the memory test)",
    ),
    was(
    def(
        "threads",
        Kind::Int,
        "1",
        "number of threads (connections) to use",
    ),
        &["num_threads"],
    ),
    was(
    def(
        "events",
        Kind::Int,
        "0",
        "limit for total number of events (0 = none)",
    ),
        &["max_requests"],
    ),
    was(
    def(
        "time",
        Kind::Int,
        "10",
        "limit for total execution time in seconds (0 = none)",
    ),
        &["max_time"],
    ),
    was(
    def(
        "warmup_time",
        Kind::Int,
        "0",
        "run events this many seconds before measuring; they are not counted (sysbench 1.1)",
    ),
        &["warmup"],
    ),
    def(
        "forced_shutdown",
        Kind::Str,
        "off",
        "seconds (or N%) after --time to end a run that does not stop by itself; 'off' to disable",
    ),
    was(
    def(
        "rate",
        Kind::Int,
        "0",
        "average transactions rate, open loop (0 = unlimited)",
    ),
        &["tx_rate"],
    ),
    def(
        "report_interval",
        Kind::Int,
        "0",
        "print intermediate statistics every N seconds (0 = off)",
    ),
    def(
        "report_checkpoints",
        Kind::Str,
        "",
        "comma-separated seconds at which to print a full report and reset the counters",
    ),
    def(
        "histogram",
        Kind::Bool,
        "off",
        "print the latency histogram in the report",
    ),
    def(
        "db_driver",
        Kind::Str,
        "mysql",
        "database driver (only mysql)",
    ),
    def(
        "mysql_debug",
        Kind::Bool,
        "off",
        "trace all client library calls (not available: sweepbench says so and runs)",
    ),
    def(
        "mysql_allow_cleartext",
        Kind::Bool,
        "off",
        "send the password in clear when the server asks for it over TCP without TLS (mysql_clear_password; libmysqlclient's --enable-cleartext-plugin)",
    ),
    def(
        "mysql_ssl_cipher",
        Kind::Str,
        "",
        "use specific cipher for SSL connections (':'-separated, OpenSSL's or IANA's names; a cipher rustls does not offer is an error)",
    ),
    def(
        "db_debug",
        Kind::Bool,
        "off",
        "accepted for compatibility; no effect",
    ),
    def(
        "mysql_host",
        Kind::Str,
        "localhost",
        "MySQL server host(s), comma-separated; localhost means the Unix socket",
    ),
    def(
        "mysql_port",
        Kind::Str,
        "3306",
        "MySQL server port(s), comma-separated",
    ),
    def(
        "mysql_socket",
        Kind::Str,
        "",
        "MySQL socket path(s), comma-separated",
    ),
    def("mysql_user", Kind::Str, "sbtest", "MySQL user"),
    def("mysql_password", Kind::Str, "", "MySQL password"),
    def("mysql_db", Kind::Str, "sbtest", "MySQL database name"),
    was(
    def(
        "mysql_storage_engine",
        Kind::Str,
        "innodb",
        "Storage engine, if MySQL is used",
    ),
        &["mysql_table_engine"],
    ),
    def(
        "mysql_ssl",
        Kind::Str,
        "off",
        "TLS: on/off (1.0.20), or DISABLED, PREFERRED, REQUIRED (= on: any certificate), VERIFY_CA, VERIFY_IDENTITY",
    ),
    def(
        "mysql_ssl_ca",
        Kind::Str,
        "",
        "CA certificate (PEM) that VERIFY_CA and VERIFY_IDENTITY trust",
    ),
    def(
        "mysql_ssl_cert",
        Kind::Str,
        "",
        "client certificate (PEM), with --mysql-ssl-key",
    ),
    def(
        "mysql_ssl_key",
        Kind::Str,
        "",
        "client private key (PEM), with --mysql-ssl-cert",
    ),
    def(
        "mysql_compression",
        Kind::Bool,
        "off",
        "use compression (not supported: must stay off)",
    ),
    def(
        "mysql_dry_run",
        Kind::Bool,
        "off",
        "accepted for compatibility; must stay off",
    ),
    was(
    def("tables", Kind::Int, "1", "Number of tables"),
        &["oltp_tables_count"],
    ),
    was(
    def("table_size", Kind::Int, "10000", "Number of rows per table"),
        &["oltp_table_size"],
    ),
    // Read and ignored, as sysbench ignores it with the MySQL driver; listed because its
    // scripts' help lists it.
    def(
        "pgsql_variant",
        Kind::Str,
        "",
        "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0",
    ),
    def(
        "format",
        Kind::Str,
        "text",
        "output: text (sysbench 1.0 layout) or json",
    ),
    def(
        "verbosity",
        Kind::Int,
        "3",
        "verbosity level {5 - debug, 0 - only critical messages}: below 3 no banner, and run prints nothing",
    ),
    def("version", Kind::Bool, "off", "print version and exit"),
    def(
        "config_file",
        Kind::Str,
        "",
        "file of options, one name=value per line, as sysbench reads it (the command line wins)",
    ),
    def(
        "test",
        Kind::Str,
        "",
        "the workload, sysbench 0.5's way (deprecated: give it as the first argument)",
    ),
    def(
        "oltp_read_only",
        Kind::Bool,
        "off",
        "legacy oltp: read-only transactions",
    ),
    def(
        "oltp_write_only",
        Kind::Bool,
        "off",
        "legacy oltp: write-only transactions",
    ),
];

/// The options sysbench's oltp scripts declare (oltp_common.lua), listed by `<workload> help`;
/// select_random_* add their own (`script_options`).
const COMMON_SCRIPT_OPTIONS: &[&str] = &[
    "auto_inc",
    "create_secondary",
    "delete_inserts",
    "distinct_ranges",
    "index_updates",
    "mysql_storage_engine",
    "non_index_updates",
    "order_ranges",
    "pgsql_variant",
    "point_selects",
    "range_selects",
    "range_size",
    "secondary",
    "simple_ranges",
    "skip_trx",
    "sum_ranges",
    "table_size",
    "tables",
];

/// The options `<workload> help` lists for `w`, sorted as sysbench sorts them; None for
/// bulk_insert, which has no help command.
pub(super) fn script_options(w: crate::engine::config::WorkloadKind) -> Option<Vec<&'static str>> {
    let mut v = COMMON_SCRIPT_OPTIONS.to_vec();
    v.extend(w.spec().help?);
    v.sort_unstable();
    Some(v)
}

/// Whether an option belongs to the workload scripts rather than to sysbench itself: a
/// common one, one a script's help adds, or one only sysbench 1.1 or the legacy `oltp`
/// script knows.
pub(super) fn is_script_option(name: &str) -> bool {
    COMMON_SCRIPT_OPTIONS.contains(&name)
        || crate::engine::config::WORKLOADS
            .iter()
            .any(|w| w.help.is_some_and(|h| h.contains(&name)))
        || ["create_table_options", "oltp_read_only", "oltp_write_only"].contains(&name)
}
