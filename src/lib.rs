//! sweepbench: measures how a MySQL-compatible server scales with client concurrency.
//!
//! Pipeline: sysbench-style options → `workload` (what each event runs) → `exec` (workers,
//! pacing, stop rules, intervals) → `metrics` (per-worker recorders, merged) → `output`.
//! `server` starts throwaway MariaDB/MySQL instances for tests and managed targets.

pub mod bench;
pub mod cli;
pub mod db;
pub mod exec;
pub mod import;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod preflight;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod server;
pub mod spec;
pub mod sweep;
pub mod workload;

use cli::{Cli, Command};
use std::path::PathBuf;

fn sweep_args(
    sweep: cli::SweepFileArgs,
    on_capacity: cli::OnCapacity,
    results_dir: PathBuf,
    quiet: bool,
) -> sweep::SweepArgs {
    sweep::SweepArgs {
        file: sweep.file,
        only: sweep.only,
        on_capacity: match on_capacity {
            cli::OnCapacity::Fail => preflight::OnCapacity::Fail,
            cli::OnCapacity::Skip => preflight::OnCapacity::Skip,
            cli::OnCapacity::Raise => preflight::OnCapacity::Raise,
        },
        results_dir,
        quiet,
    }
}

/// Runs the parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Bench { args } => bench::main(&args).await,
        Command::Plan { sweep } => sweep::plan(&sweep_args(
            sweep,
            cli::OnCapacity::Fail,
            PathBuf::new(),
            false,
        )),
        Command::Import {
            logs,
            out,
            target,
            threads,
        } => match import::import(&logs, &out, target.as_deref(), threads) {
            Ok(dir) => {
                println!("imported {} log(s) into {}", logs.len(), dir.display());
                0
            }
            Err(e) => {
                eprintln!("sweepbench import: {e:#}");
                2
            }
        },
        Command::Report { run_dir, baseline } => sweep::report(&run_dir, baseline.as_deref()),
        Command::Check { sweep, on_capacity } => {
            sweep::check(&sweep_args(sweep, on_capacity, PathBuf::new(), false)).await
        }
        Command::Run {
            sweep,
            on_capacity,
            results_dir,
            quiet,
        } => sweep::run(&sweep_args(sweep, on_capacity, results_dir, quiet)).await,
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
