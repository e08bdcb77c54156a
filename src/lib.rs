//! sweepbench: measures how a MySQL-compatible server scales with client concurrency.
//!
//! Pipeline: sysbench-style options → `workload` (what each event runs) → `exec` (workers,
//! pacing, stop rules, intervals) → `metrics` (per-worker recorders, merged) → `output`.
//! `server` starts throwaway MariaDB/MySQL instances for tests and managed targets.

pub mod bench;
pub mod cli;
pub mod db;
pub mod exec;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod sandbox;
pub mod server;
pub mod spec;
pub mod workload;

use cli::{Cli, Command};

/// Runs the parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Bench { args } => bench::main(&args).await,
        Command::Sandbox {
            basedir,
            max_connections,
            server_options,
            db,
            command,
        } => {
            let args = sandbox::SandboxArgs {
                basedir,
                max_connections,
                server_options,
                db,
                command,
            };
            match sandbox::run(args).await {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("sweepbench sandbox: {e:#}");
                    2
                }
            }
        }
    }
}
