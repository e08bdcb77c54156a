//! sysbench 1.0.20's option table for `bench`: every option's canonical name, value kind,
//! default (as `--help` prints it; the engine's own defaults are tested to match) and help
//! line, and the 0.5 names that alias them.

/// What the option's value must look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Int,
    Float,
    Bool,
    Str,
}

pub(super) struct Def {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
}

const fn def(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> Def {
    Def {
        name,
        kind,
        default,
        help,
    }
}

/// Every option `bench` accepts, under sysbench 1.0.20's canonical name.
pub(super) const DEFS: &[Def] = &[
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
        "file operations mode {sync} (the fileio test; async and mmap are not done here)",
    ),
    def(
        "file_async_backlog",
        Kind::Int,
        "128",
        "accepted for compatibility (the fileio test's async mode is not done here)",
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
    def(
        "threads",
        Kind::Int,
        "1",
        "number of threads (connections) to use",
    ),
    def(
        "events",
        Kind::Int,
        "0",
        "limit for total number of events (0 = none)",
    ),
    def(
        "time",
        Kind::Int,
        "10",
        "limit for total execution time in seconds (0 = none)",
    ),
    def(
        "warmup_time",
        Kind::Int,
        "0",
        "run events this many seconds before measuring; they are not counted (sysbench 1.1)",
    ),
    def(
        "forced_shutdown",
        Kind::Str,
        "off",
        "seconds (or N%) after --time to end a run that does not stop by itself; 'off' to disable",
    ),
    def(
        "rate",
        Kind::Int,
        "0",
        "average transactions rate, open loop (0 = unlimited)",
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
        "percentile",
        Kind::Int,
        "95",
        "percentile to report in latency statistics (1-100, 0 = disabled)",
    ),
    def(
        "histogram",
        Kind::Bool,
        "off",
        "print the latency histogram in the report",
    ),
    def(
        "rand_type",
        Kind::Str,
        "special",
        "random distribution: uniform, gaussian, special, pareto, zipfian",
    ),
    def(
        "rand_seed",
        Kind::Int,
        "0",
        "seed for the random number generators (0 = current time)",
    ),
    def(
        "rand_spec_iter",
        Kind::Int,
        "12",
        "iterations for the gaussian and special distributions",
    ),
    def(
        "rand_spec_pct",
        Kind::Float,
        "1",
        "percentage of values treated as 'special'",
    ),
    def(
        "rand_spec_res",
        Kind::Float,
        "75",
        "percentage of 'special' values to use",
    ),
    def(
        "rand_pareto_h",
        Kind::Float,
        "0.2",
        "parameter h of the pareto distribution",
    ),
    def(
        "rand_zipfian_exp",
        Kind::Float,
        "0.8",
        "exponent of the zipfian distribution",
    ),
    def(
        "db_driver",
        Kind::Str,
        "mysql",
        "database driver (only mysql)",
    ),
    def(
        "db_ps_mode",
        Kind::Str,
        "auto",
        "prepared statements: auto or disable",
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
    def(
        "mysql_ignore_errors",
        Kind::Str,
        "1213,1020,1205",
        "error codes that restart the event instead of ending the run, or 'all'",
    ),
    def(
        "mysql_storage_engine",
        Kind::Str,
        "innodb",
        "Storage engine, if MySQL is used",
    ),
    def(
        "create_table_options",
        Kind::Str,
        "",
        "extra CREATE TABLE options, e.g. ROW_FORMAT=COMPRESSED (sysbench 1.1)",
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
    def("tables", Kind::Int, "1", "Number of tables"),
    def("table_size", Kind::Int, "10000", "Number of rows per table"),
    def(
        "range_size",
        Kind::Int,
        "100",
        "Range size for range SELECT queries",
    ),
    def(
        "point_selects",
        Kind::Int,
        "10",
        "Number of point SELECT queries per transaction",
    ),
    def(
        "simple_ranges",
        Kind::Int,
        "1",
        "Number of simple range SELECT queries per transaction",
    ),
    def(
        "sum_ranges",
        Kind::Int,
        "1",
        "Number of SELECT SUM() queries per transaction",
    ),
    def(
        "order_ranges",
        Kind::Int,
        "1",
        "Number of SELECT ORDER BY queries per transaction",
    ),
    def(
        "distinct_ranges",
        Kind::Int,
        "1",
        "Number of SELECT DISTINCT queries per transaction",
    ),
    def(
        "index_updates",
        Kind::Int,
        "1",
        "Number of UPDATE index queries per transaction",
    ),
    def(
        "non_index_updates",
        Kind::Int,
        "1",
        "Number of UPDATE non-index queries per transaction",
    ),
    def(
        "delete_inserts",
        Kind::Int,
        "1",
        "Number of DELETE/INSERT combinations per transaction",
    ),
    def(
        "range_selects",
        Kind::Bool,
        "on",
        "Enable/disable all range SELECT queries",
    ),
    def(
        "auto_inc",
        Kind::Bool,
        "on",
        "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs",
    ),
    def(
        "create_secondary",
        Kind::Bool,
        "on",
        "Create a secondary index in addition to the PRIMARY KEY",
    ),
    def(
        "skip_trx",
        Kind::Bool,
        "off",
        "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
    ),
    def(
        "secondary",
        Kind::Bool,
        "off",
        "Use a secondary index in place of the PRIMARY KEY",
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
        "random_points",
        Kind::Int,
        "10",
        "Number of random points in the IN() clause in generated SELECTs",
    ),
    def(
        "number_of_ranges",
        Kind::Int,
        "10",
        "Number of random BETWEEN ranges per SELECT",
    ),
    def(
        "delta",
        Kind::Int,
        "5",
        "Size of BETWEEN ranges",
    ),
    def(
        "prepare_threads",
        Kind::Int,
        "0",
        "connections used by prepare (0 = max(2, --threads))",
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

/// Legacy (0.5) names and deprecated 1.0 names, mapped to the canonical ones.
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("num_threads", "threads"),
    ("max_time", "time"),
    ("max_requests", "events"),
    ("tx_rate", "rate"),
    ("warmup", "warmup_time"),
    ("oltp_table_size", "table_size"),
    ("oltp_tables_count", "tables"),
    ("oltp_point_selects", "point_selects"),
    ("oltp_simple_ranges", "simple_ranges"),
    ("oltp_sum_ranges", "sum_ranges"),
    ("oltp_order_ranges", "order_ranges"),
    ("oltp_distinct_ranges", "distinct_ranges"),
    ("oltp_index_updates", "index_updates"),
    ("oltp_non_index_updates", "non_index_updates"),
    ("oltp_delete_inserts", "delete_inserts"),
    ("oltp_range_size", "range_size"),
    ("oltp_range_selects", "range_selects"),
    ("oltp_skip_trx", "skip_trx"),
    ("oltp_auto_inc", "auto_inc"),
    ("oltp_secondary", "secondary"),
    ("mysql_table_engine", "mysql_storage_engine"),
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
    use crate::engine::config::WorkloadKind as W;
    let mut v = COMMON_SCRIPT_OPTIONS.to_vec();
    match w {
        W::BulkInsert => return None,
        W::SelectRandomPoints => v.push("random_points"),
        W::SelectRandomRanges => v.extend(["delta", "number_of_ranges"]),
        _ => {}
    }
    v.sort_unstable();
    Some(v)
}

/// Whether an option belongs to the workload scripts rather than to sysbench itself.
pub(super) fn is_script_option(name: &str) -> bool {
    COMMON_SCRIPT_OPTIONS.contains(&name)
        || [
            "random_points",
            "number_of_ranges",
            "delta",
            "create_table_options",
            "oltp_read_only",
            "oltp_write_only",
        ]
        .contains(&name)
}
