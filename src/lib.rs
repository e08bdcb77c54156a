//! sweepbench: measures how a MySQL-compatible server scales with client concurrency.
//!
//! Pipeline: sysbench-style options → `workload` (what each event runs) → `exec` (workers,
//! pacing, stop rules, intervals) → `metrics` (per-worker recorders, merged) → `output`.
//! `server` starts throwaway MariaDB/MySQL instances for tests and managed targets.

pub mod bench;
pub mod cli;
pub mod compare;
pub mod db;
pub mod exec;
pub mod exit;
pub mod history;
pub mod host;
pub mod import;
pub mod interrupt;
pub mod metrics;
pub mod nightly;
pub mod output;
pub mod plan;
pub mod preflight;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod server;
pub mod spec;
pub mod sweep;
pub mod usage;
pub mod verdict;
pub mod wire;
pub mod workload;

use cli::{Cli, Command};
use exit::Exit;
use std::path::PathBuf;

fn sweep_args(
    sweep: cli::SweepFileArgs,
    on_capacity: cli::OnCapacity,
    results_dir: PathBuf,
    quiet: bool,
) -> sweep::SweepArgs {
    sweep::SweepArgs {
        resume: None,
        fail_on_regression: None,
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
        Command::Plan { sweep, results_dir } => sweep::plan(&sweep_args(
            sweep,
            cli::OnCapacity::Fail,
            results_dir,
            false,
        )),
        Command::Calibrate {
            sweep,
            capacity,
            results_dir,
            threshold,
        } => {
            sweep::calibrate::calibrate(
                &sweep_args(sweep, capacity.on_capacity, results_dir, true),
                threshold,
            )
            .await
        }
        Command::Import {
            logs,
            out,
            target,
            threads,
        } => finish(
            "import",
            import::import(&logs, &out, target.as_deref(), threads).map(|dir| {
                println!("imported {} log(s) into {}", logs.len(), dir.display());
                Exit::Ok
            }),
        ),
        Command::Report { run_dir, baseline } => sweep::report(&run_dir, baseline.as_deref()),
        Command::Check { sweep, capacity } => {
            sweep::check(&sweep_args(
                sweep,
                capacity.on_capacity,
                PathBuf::new(),
                false,
            ))
            .await
        }
        Command::Run {
            sweep,
            capacity,
            results_dir,
            quiet,
            resume,
            fail_on_regression,
            threshold,
            against,
        } => {
            let mut a = sweep_args(sweep, capacity.on_capacity, results_dir, quiet);
            a.resume = resume;
            a.fail_on_regression = fail_on_regression.then_some((threshold, against));
            sweep::run(&a).await
        }
        Command::Compare {
            base,
            candidate,
            threshold,
            format,
            map,
        } => finish(
            "compare",
            run_compare(&base, &candidate, threshold, format, &map),
        ),
        Command::History {
            sweep_dir,
            threshold,
            html,
        } => finish(
            "history",
            history::history(&sweep_dir, threshold, html.as_deref()).map(|o| {
                print!("{}", o.text);
                if o.newest_regressed {
                    Exit::Regression
                } else {
                    Exit::Ok
                }
            }),
        ),
        Command::Prune { sweep_dir, keep } => finish(
            "prune",
            nightly::prune(&sweep_dir, keep).map(|removed| {
                for r in &removed {
                    println!("removed {}", r.display());
                }
                println!("kept the newest {keep} run(s)");
                Exit::Ok
            }),
        ),
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
            // The sandbox exits with its command's own status.
            match sandbox::run(args).await {
                Ok(code) => code,
                Err(e) => finish("sandbox", Err(e)),
            }
        }
    }
}

/// The one place a command's error is printed: `sweepbench CMD: error`, exit 2.
fn finish(command: &str, r: anyhow::Result<Exit>) -> i32 {
    match r {
        Ok(e) => e.code(),
        Err(e) => {
            eprintln!("sweepbench {command}: {e:#}");
            Exit::BadInput.code()
        }
    }
}

fn run_compare(
    base: &std::path::Path,
    candidate: &std::path::Path,
    threshold: f64,
    format: cli::CompareFormat,
    map: &[(String, String)],
) -> anyhow::Result<Exit> {
    let b = compare::Run::load(base)?;
    let c = compare::Run::load(candidate)?;
    let mut cmp = compare::compare(&b, &c, threshold, map)?;
    cmp.base = base.display().to_string();
    cmp.candidate = candidate.display().to_string();
    if cmp.rows.is_empty() {
        anyhow::bail!(
            "no point of the candidate matches the base (different targets? use --map old=new)"
        );
    }
    let out = match format {
        cli::CompareFormat::Text => compare::text(&cmp),
        cli::CompareFormat::Md => compare::markdown(&cmp),
        cli::CompareFormat::Html => compare::html(&cmp)?,
        cli::CompareFormat::Json => serde_json::to_string_pretty(&cmp)? + "\n",
    };
    print!("{out}");
    Ok(if cmp.regressed().is_empty() {
        Exit::Ok
    } else {
        Exit::Regression
    })
}
