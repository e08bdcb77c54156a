//! The command line (clap derive only). `bench` takes sysbench's own option syntax, so its
//! arguments are passed through untouched to `bench::options`.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "sweepbench",
    version,
    about = "Concurrency sweeps for MySQL-compatible databases, with a native sysbench-compatible engine"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// sysbench drop-in: `bench <workload> prepare|run|cleanup|prewarm [--option=value ...]`
    /// (`bench --help` lists the options).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Start a throwaway MariaDB/MySQL on 127.0.0.1 (fresh datadir in a temp dir), run a
    /// command against it, then stop it. `{port}` and `{socket}` in the command are replaced,
    /// and SWEEPBENCH_PORT / SWEEPBENCH_SOCKET are set.
    Sandbox {
        /// Install root of the server (holding bin/ or sbin/); default: this machine's server.
        #[arg(long)]
        basedir: Option<PathBuf>,
        /// max_connections of the server.
        #[arg(long, default_value_t = 300)]
        max_connections: u32,
        /// Extra server option, e.g. --server-option=innodb_buffer_pool_size=1G (repeatable).
        #[arg(long = "server-option")]
        server_options: Vec<String>,
        /// Database to create for the command.
        #[arg(long, default_value = "sbtest")]
        db: String,
        /// The command to run, after `--`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<String>,
    },
}
