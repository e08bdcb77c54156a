//! The command line (clap derive only). `bench` takes sysbench's own option syntax, so its
//! arguments are passed through untouched to `bench::options`.

use clap::{Parser, Subcommand};

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
}
