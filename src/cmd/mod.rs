//! The command layer: one function per subcommand, each returning how it ended (`Exit`) or an
//! error, which `finish` prints once (`sweepbench CMD: error`).

pub mod cli;
mod compare;
pub mod progress;
pub mod sandbox;

use crate::exit::Exit;
use crate::pipeline::results::{import, nightly};
use crate::pipeline::{history, preflight, sweep};
use cli::{Cli, Command};
use std::path::PathBuf;

fn sweep_args(
    sweep: cli::SweepFileArgs,
    on_capacity: cli::OnCapacity,
    results_dir: PathBuf,
) -> sweep::SweepArgs {
    let inline = sweep.url.as_ref().map(|url| {
        // A URL that does not parse is reported by the sweep's own parse, located.
        let target = crate::pipeline::spec::target::ConnInfo::from_url(url);
        if target.is_ok_and(|c| c.password.is_some()) {
            eprintln!("warning: a password in --url is visible to every local user (ps); give it in SWEEPBENCH_PASSWORD instead");
        }
        crate::pipeline::spec::quick::QuickSweep {
            url: url.clone(),
            name: sweep.name.clone(),
            workloads: sweep.workloads.clone(),
            threads: sweep.threads.clone(),
            duration: sweep.duration.clone(),
            repeats: sweep.repeats,
            tables: sweep.tables,
            table_size: sweep.table_size,
        }
        .sweep_text()
    });
    sweep::SweepArgs {
        resume: None,
        budget_s: None,
        threshold_pct: crate::pipeline::judge::verdict::DEFAULT_THRESHOLD_PCT,
        fail_on_regression: None,
        fail_on: Default::default(),
        keep_k8s: false,
        confirm: false,
        file: sweep.file.unwrap_or_else(|| PathBuf::from("--url")),
        inline,
        only: sweep.only,
        shard: sweep.shard,
        on_capacity: match on_capacity {
            cli::OnCapacity::Fail => preflight::OnCapacity::Fail,
            cli::OnCapacity::Skip => preflight::OnCapacity::Skip,
            cli::OnCapacity::Raise => preflight::OnCapacity::Raise,
        },
        results_dir,
    }
}

/// What a command that shows no progress says: its answer on stdout, problems on stderr.
fn plain() -> Box<dyn crate::pipeline::events::Events> {
    progress::sink(progress::Style::Plain)
}

/// `sweepbench agent`: one client process of a multi-client point, its task from files (a
/// Kubernetes pod: `--tasks`, its index, the start file) or from stdin.
async fn agent(tasks: Option<PathBuf>, index: Option<u32>, start_file: Option<PathBuf>) -> i32 {
    use crate::pipeline::distributed::clients::agent::{serve, Source};
    let from = match (tasks, start_file) {
        (Some(tasks), Some(start)) => {
            let index = index.or_else(|| {
                std::env::var("JOB_COMPLETION_INDEX")
                    .ok()
                    .and_then(|v| v.parse().ok())
            });
            match index {
                Some(index) => Source::Files {
                    tasks,
                    index,
                    start,
                },
                None => {
                    return finish(
                        "agent",
                        Err(anyhow::anyhow!(
                            "--tasks needs --index or $JOB_COMPLETION_INDEX"
                        )),
                    )
                }
            }
        }
        _ => Source::Stdin,
    };
    finish("agent", serve(from).await)
}

/// Runs the parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Bench { args } => finish("bench", crate::bench::main(&args).await),
        Command::Plan { sweep, results_dir } => finish(
            "plan",
            sweep::plan(
                &sweep_args(sweep, cli::OnCapacity::Fail, results_dir),
                &*plain(),
            ),
        ),
        Command::Calibrate {
            sweep,
            capacity,
            results_dir,
            threshold,
        } => finish(
            "calibrate",
            sweep::calibrate::calibrate(
                &sweep_args(sweep, capacity.on_capacity, results_dir),
                threshold,
                &*progress::sink(progress::Style::Quiet),
            )
            .await,
        ),
        Command::K8s {
            what: cli::K8sCommand::Render { sweep, shards },
        } => finish(
            "k8s render",
            sweep::k8s_render(
                &sweep_args(sweep, cli::OnCapacity::Fail, PathBuf::from("results")),
                shards,
                &*plain(),
            ),
        ),
        Command::Agent {
            tasks,
            index,
            start_file,
        } => agent(tasks, index, start_file).await,
        Command::Merge { run_dirs, out } => finish(
            "merge",
            crate::pipeline::distributed::merge::merge(&run_dirs, &out)
                .and_then(|()| rendered(&out, "merged run"))
                .map(|()| {
                    println!(
                        "merged {} parts into {}; report: {}",
                        run_dirs.len(),
                        out.display(),
                        out.join("report.html").display()
                    );
                    Exit::Ok
                }),
        ),
        Command::Import {
            logs,
            out,
            target,
            threads,
        } => finish(
            "import",
            import::import(&logs, &out, target.as_deref(), threads)
                .and_then(|dir| rendered(&dir, "imported run").map(|()| dir))
                .map(|dir| {
                    // How a log without a final report or without transactions was read.
                    for p in crate::pipeline::results::load_points(&dir).unwrap_or_default() {
                        if !p.error.is_empty() {
                            println!("{}: {}", p.point_id, p.error);
                        }
                    }
                    println!("imported {} log(s) into {}", logs.len(), dir.display());
                    Exit::Ok
                }),
        ),
        Command::Report {
            run_dir,
            baseline,
            format,
        } => finish(
            "report",
            sweep::report(
                &run_dir,
                baseline.as_deref(),
                format == cli::ReportFormat::Json,
                &*plain(),
            ),
        ),
        Command::Check { sweep, capacity } => finish(
            "check",
            sweep::check(
                &sweep_args(sweep, capacity.on_capacity, PathBuf::new()),
                &*plain(),
            )
            .await,
        ),
        Command::Run {
            sweep,
            capacity,
            results_dir,
            quiet,
            progress,
            resume,
            fail_on_regression,
            fail_on,
            threshold,
            against,
            keep_k8s,
            budget,
            confirm,
        } => {
            let mut a = sweep_args(sweep, capacity.on_capacity, results_dir);
            a.resume = resume;
            a.budget_s = budget;
            a.threshold_pct = threshold;
            a.keep_k8s = keep_k8s;
            a.confirm = confirm;
            a.fail_on_regression =
                (fail_on_regression || fail_on.is_some()).then_some((threshold, against));
            a.fail_on = fail_on.unwrap_or_default();
            let style = if quiet {
                progress::Style::Quiet
            } else {
                progress
            };
            finish("run", sweep::run(&a, &*progress::sink(style)).await)
        }
        Command::Compare {
            base,
            candidate,
            threshold,
            format,
            map,
            confirm,
        } => finish(
            "compare",
            compare::run(&base, &candidate, threshold, format, &map, confirm),
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
        Command::Accept { run } => finish(
            "accept",
            nightly::accept(&run).map(|said| {
                println!("{said}");
                Exit::Ok
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
        Command::Completions { shell } => finish("completions", generated(Some(shell))),
        Command::Man { command } => finish("man", manual(command.as_deref())),
        Command::Sandbox {
            basedir,
            mariadb,
            max_connections,
            server_options,
            db,
            command,
        } => {
            let args = sandbox::SandboxArgs {
                basedir,
                mariadb,
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

/// A completion script for `shell`, on stdout.
fn generated(what: Option<clap_complete::Shell>) -> anyhow::Result<Exit> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    if let Some(shell) = what {
        clap_complete::generate(shell, &mut cmd, "sweepbench", &mut std::io::stdout());
    }
    Ok(Exit::Ok)
}

/// The roff manual page of the tool, or of one of its commands, on stdout.
fn manual(command: Option<&str>) -> anyhow::Result<Exit> {
    let mut out = std::io::stdout();
    crate::cmd::cli::man_page(command, &mut out)?;
    Ok(Exit::Ok)
}

/// The one place a command's error is printed: `sweepbench CMD: error`; exit 2 (bad input)
/// unless the error says otherwise (`exit::failed`).
fn finish(command: &str, r: anyhow::Result<Exit>) -> i32 {
    match r {
        Ok(e) => e.code(),
        // `bench` speaks as sysbench does: its errors carry sysbench's words, no prefix.
        Err(e) if command == "bench" => {
            eprintln!("{e:#}");
            crate::exit::exit_of(&e).code()
        }
        Err(e) => {
            eprintln!("sweepbench {command}: {e:#}");
            crate::exit::exit_of(&e).code()
        }
    }
}

/// Renders the report of a run directory a command has just made (the report names the run
/// by its directory, so it is rendered in place); when that fails the directory goes too, so
/// a failed command leaves nothing behind.
fn rendered(dir: &std::path::Path, what: &str) -> anyhow::Result<()> {
    crate::pipeline::report::write(dir, None)
        .map(drop)
        .map_err(|e| {
            let _ = std::fs::remove_dir_all(dir);
            e.context(format!("rendering the {what}'s report"))
        })
}
