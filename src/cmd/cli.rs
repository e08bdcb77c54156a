//! The command line (clap derive only). `bench` takes sysbench's own option syntax, so its
//! arguments are passed through untouched to `bench::options`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    help_expected = true,
    name = "sweepbench",
    version,
    about = "Concurrency sweeps for MySQL-compatible databases, with a native sysbench-compatible engine"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Arguments every sweep command takes.
#[derive(Debug, Args)]
pub struct SweepFileArgs {
    /// The sweep file (TOML), e.g. sweeps/quickstart.toml; or describe a sweep of one existing
    /// server with --url and the options below.
    #[arg(required_unless_present = "url")]
    pub file: Option<PathBuf>,
    /// Sweep this server without a sweep file: mysql://user@host[:port]/db (the password from
    /// SWEEPBENCH_PASSWORD, MYSQL_PWD or ~/.my.cnf, not the command line). The equivalent
    /// sweep file is stored as the run's sweep.toml.
    #[arg(long, conflicts_with = "file")]
    pub url: Option<String>,
    /// With --url: thread counts, e.g. 1,4,16,64.
    #[arg(
        long,
        requires = "url",
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64"
    )]
    pub threads: Vec<u32>,
    /// With --url: workloads, e.g. oltp_read_only,oltp_point_select.
    #[arg(
        long,
        requires = "url",
        value_delimiter = ',',
        default_value = "oltp_read_write"
    )]
    pub workloads: Vec<String>,
    /// With --url: seconds per point, e.g. 30s (default 60s).
    #[arg(long, requires = "url")]
    pub duration: Option<String>,
    /// With --url: runs of each point (default 3).
    #[arg(long, requires = "url")]
    pub repeats: Option<u32>,
    /// With --url: sbtest tables (default 1).
    #[arg(long, requires = "url")]
    pub tables: Option<u32>,
    /// With --url: rows per table (default 10000).
    #[arg(long, requires = "url")]
    pub table_size: Option<u32>,
    /// With --url: the sweep's name, which names its results directory.
    #[arg(long, requires = "url", default_value = "quick")]
    pub name: String,
    /// Narrow the plan: key=value with key target, config, workload or threads (threads=1,4).
    /// Repeat to combine.
    #[arg(long, value_parser = crate::pipeline::spec::Filter::parse_only)]
    pub only: Vec<crate::pipeline::spec::Filter>,
    /// Run the I-th of N disjoint parts of the plan (e.g. 1/4): whole target × config blocks,
    /// an external target's blocks all in one part; `sweepbench merge` joins the parts' runs.
    #[arg(long, value_parser = crate::pipeline::plan::parse_shard)]
    pub shard: Option<(u32, u32)>,
}

pub use crate::pipeline::compare::Against;

fn parse_against(s: &str) -> Result<Against, String> {
    if s == "previous" {
        return Ok(Against::Previous);
    }
    if let Some(n) = s.strip_prefix("last-") {
        return match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Against::Last(n)),
            _ => Err(format!("'{s}': expected last-N with N ≥ 1, e.g. last-5")),
        };
    }
    let p = PathBuf::from(s);
    if p.join("points.csv").is_file() {
        Ok(Against::Run(p))
    } else {
        Err(format!(
            "'{s}' is neither previous, last-N nor a run directory (no points.csv there)"
        ))
    }
}

fn parse_keep(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{s}': keep at least 1 run (`latest` points to the newest; remove the directory to drop them all)"
        )),
    }
}

fn parse_map(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!(
            "'{s}': expected OLD=NEW, e.g. --map 10.11.18=10.11.19"
        )),
    }
}

/// `--on-capacity`, for the commands that check targets.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// When a target cannot take the largest thread counts: fail, skip those points, or
    /// raise max_connections.
    #[arg(long, value_enum, default_value_t = OnCapacity::Fail)]
    pub on_capacity: OnCapacity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Md,
    Html,
    Json,
}

/// What `report` produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Files,
    Json,
}

/// What to do when a target cannot take the largest thread counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnCapacity {
    /// Refuse to run (exit 2).
    Fail,
    /// Run the points the server can take; record the others as skipped.
    Skip,
    /// Raise max_connections with SET GLOBAL where privileged, and say so.
    Raise,
}

/// `sweepbench k8s …`.
#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// Print the ConfigMap and Indexed Job of every multi-client point of a sweep (or, with
    /// --shards, of the sweep run as N parts) as multi-document YAML, for kubectl or GitOps.
    Render {
        #[command(flatten)]
        sweep: SweepFileArgs,
        /// Render the Indexed Job that runs the sweep as this many parts (`run --shard`),
        /// one pod each with its own managed servers.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
        shards: Option<u32>,
    },
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every point of a sweep, the connections each target needs, and an ETA (and what
    /// a comparison can resolve, once `calibrate` has measured the noise).
    Plan {
        #[command(flatten)]
        sweep: SweepFileArgs,
        /// Root of the results directories (where a calibration is looked for).
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
    },
    /// Run a sweep twice (an A/A pair) and report per point the noise, the smallest drop its
    /// repeats can catch, and the repeats that would resolve the threshold.
    Calibrate {
        #[command(flatten)]
        sweep: SweepFileArgs,
        #[command(flatten)]
        capacity: CapacityArgs,
        /// Root of the results directories.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// The change a comparison should resolve, e.g. 5%.
        #[arg(long, default_value = crate::pipeline::judge::verdict::DEFAULT_THRESHOLD, value_parser = crate::pipeline::judge::verdict::parse_threshold)]
        threshold: f64,
    },
    /// Check that every target can take the sweep (connect, privileges, limits, tables, disk).
    Check {
        #[command(flatten)]
        sweep: SweepFileArgs,
        #[command(flatten)]
        capacity: CapacityArgs,
    },
    /// Run a sweep: check, then measure every point, writing results/<sweep>/<UTC time>/.
    Run {
        #[command(flatten)]
        sweep: SweepFileArgs,
        #[command(flatten)]
        capacity: CapacityArgs,
        /// Root of the results directories.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// Print only the summary and problems (for cron); the same as --progress quiet.
        #[arg(long, conflicts_with = "progress")]
        quiet: bool,
        /// How the run shows its progress: a bar on a terminal (auto), plain lines, quiet, or
        /// one JSON object per event on stdout (json) for a program watching the run.
        #[arg(long, value_enum, default_value = "auto", value_name = "STYLE")]
        progress: super::progress::Style,
        /// Continue this interrupted run directory instead of starting a new one: points that
        /// ended ok are kept, the rest run again.
        #[arg(long, value_name = "RUN_DIR")]
        resume: Option<PathBuf>,
        /// Exit 3 when a point regressed: each target/config against the sweep's baseline, or,
        /// for a sweep with one series, this run against --against.
        #[arg(long)]
        fail_on_regression: bool,
        /// What exit 3 takes: `regressed` (beyond the threshold; as --fail-on-regression) or
        /// `slower` (regressed, or slower with its size undecided). Implies the gate.
        #[arg(long, value_enum)]
        fail_on: Option<crate::pipeline::judge::verdict::FailOn>,
        /// Smallest change that matters for --fail-on-regression, e.g. 5%.
        #[arg(long, default_value = crate::pipeline::judge::verdict::DEFAULT_THRESHOLD, value_parser = crate::pipeline::judge::verdict::parse_threshold)]
        threshold: f64,
        /// What a one-series sweep is compared with: `previous` (the newest finished run of
        /// the sweep before this one), `last-N` (the repeats of the last N runs pooled), or a
        /// run directory.
        #[arg(long, default_value = "previous", value_parser = parse_against)]
        against: Against,
        /// With [executor] kind = "kubernetes": leave each point's Job and ConfigMap on the
        /// cluster (for kubectl describe/logs) instead of deleting them.
        #[arg(long)]
        keep_k8s: bool,
        /// With design = "paired": measuring time the sweep may spend, e.g. 10m (overrides
        /// [run] budget); each point runs rounds until decided or its share is spent.
        #[arg(long, value_parser = parse_budget)]
        budget: Option<u64>,
        /// With --fail-on-regression against an earlier run: before failing, measure the
        /// failing points again in one short paired run of both runs' servers (as `compare
        /// --confirm`), and fail only when it confirms the regression or cannot run.
        #[arg(long)]
        confirm: bool,
    },
    /// Compare two runs point by point (live or imported); exit 3 when something regressed.
    Compare {
        /// The run compared with: results/<sweep>/<run> (or an imported run directory).
        base: PathBuf,
        /// The run judged against it.
        candidate: PathBuf,
        /// Smallest change that matters, e.g. 5%: a point regressed when the interval of its
        /// change lies wholly beyond it.
        #[arg(long, default_value = crate::pipeline::judge::verdict::DEFAULT_THRESHOLD, value_parser = crate::pipeline::judge::verdict::parse_threshold)]
        threshold: f64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
        format: CompareFormat,
        /// Match base target OLD with candidate target NEW (repeatable): --map old=new.
        #[arg(long, value_parser = parse_map)]
        map: Vec<(String, String)>,
        /// Measure the regressed points (and those not judged for the host's load) again in
        /// one short paired run of the two sides' servers, started anew from what the runs
        /// recorded; exit 3 only when it confirms a regression (or cannot run).
        #[arg(long)]
        confirm: bool,
    },
    /// Every run of a sweep point by point: shifts in each series, and whether the newest run
    /// moved one for the worse (exit 3).
    History {
        /// results/<sweep>
        sweep_dir: PathBuf,
        /// Smallest change of the newest run that counts, e.g. 10%.
        #[arg(long, default_value = "10%", value_parser = crate::pipeline::judge::verdict::parse_threshold)]
        threshold: f64,
        /// Also write an HTML page with the trend chart to this file.
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Make a run the reference of its sweep's gate: its change was meant, and later runs are
    /// judged against it (`--fail-on-regression` judges against the last run that passed or
    /// was accepted, so a regression fails every night until it is fixed or accepted).
    Accept {
        /// results/<sweep>/<run>
        run: PathBuf,
    },
    /// Keep the newest N runs of a sweep and remove the rest.
    Prune {
        /// results/<sweep>
        sweep_dir: PathBuf,
        /// How many of the newest runs to keep (at least 1: `latest` points to the newest).
        #[arg(long, value_parser = parse_keep)]
        keep: usize,
    },
    /// sysbench drop-in: `bench <workload> prepare|run|cleanup|prewarm [--option=value ...]`
    /// (`bench --help` lists the options).
    #[command(disable_help_flag = true)]
    Bench {
        /// sysbench's arguments: workload, command and options.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Re-render report.md and report.html of a run directory from its files.
    Report {
        /// results/<sweep>/<run>
        run_dir: PathBuf,
        /// target/config to compare the others with (default: the sweep's baseline).
        #[arg(long)]
        baseline: Option<String>,
        /// files: re-render report.md and report.html; json: print the report's model
        /// (tables, verdicts, scaling models) on stdout and write nothing.
        #[arg(long, value_enum, default_value = "files")]
        format: ReportFormat,
    },
    /// Join the run directories of the parts of one sharded sweep (`run --shard I/N`) into
    /// one run that report, compare and history read as any other.
    Merge {
        /// The parts' run directories, every part once.
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
        /// The merged run directory to create.
        #[arg(long)]
        out: PathBuf,
    },
    /// Turn saved sysbench output (1.0.x, 0.5, 0.4) into a run directory that can be reported
    /// and compared like a live run.
    Import {
        /// sysbench logs, one point each.
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// The run directory to create.
        #[arg(long)]
        out: PathBuf,
        /// Target name for every log (default: each file's name).
        #[arg(long)]
        target: Option<String>,
        /// Thread count, for logs that do not show it.
        #[arg(long)]
        threads: Option<u32>,
    },
    /// Start a throwaway MariaDB/MySQL on 127.0.0.1 (fresh datadir in a temp dir), run a
    /// command against it, then stop it. `{port}` and `{socket}` in the command are replaced,
    /// and SWEEPBENCH_PORT / SWEEPBENCH_SOCKET are set.
    Sandbox {
        /// Install root of the server (holding bin/ or sbin/); default: this machine's server.
        #[arg(long, conflicts_with = "mariadb")]
        basedir: Option<PathBuf>,
        /// MariaDB version to run ("11.8.9", or "11.8": the newest there is): this machine's
        /// server when it is that version, else one scripts/unpack-mariadb.sh unpacked.
        #[arg(long, value_name = "VERSION")]
        mariadb: Option<String>,
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
    /// Kubernetes: print the manifests a sweep becomes on a cluster.
    K8s {
        #[command(subcommand)]
        what: K8sCommand,
    },
    /// One client process of a multi-client point (`[run] clients`): started by `run`
    /// (its task on standard input) or as a Kubernetes Job's pod (`--tasks`); speaks JSON lines.
    #[command(hide = true)]
    Agent {
        /// A JSON list of every client's task (a mounted ConfigMap); default: the task is read
        /// from standard input.
        #[arg(long, requires = "start_file")]
        tasks: Option<PathBuf>,
        /// This client's index in --tasks; default: $JOB_COMPLETION_INDEX.
        #[arg(long, requires = "tasks")]
        index: Option<u32>,
        /// A file that will hold the start instant (Unix ns), written by the controller.
        #[arg(long, requires = "tasks")]
        start_file: Option<PathBuf>,
    },
    /// Print a shell completion script, e.g. `sweepbench completions bash >
    /// /etc/bash_completion.d/sweepbench`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): the whole tool's, e.g. `sweepbench man >
    /// /usr/local/share/man/man1/sweepbench.1`, or one command's with every option, e.g.
    /// `sweepbench man run > …/sweepbench-run.1` (then `man sweepbench-run`).
    Man {
        /// A command (run, plan, compare, …); none for the tool's page.
        command: Option<String>,
    },
}

/// Writes the manual page of the tool (`None`) or of one visible command, named
/// `sweepbench-COMMAND` as git's and cargo's are; an unknown command is refused with the list.
pub fn man_page(command: Option<&str>, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let page = match command {
        None => cli,
        Some(name) => {
            let visible: Vec<&clap::Command> =
                cli.get_subcommands().filter(|s| !s.is_hide_set()).collect();
            let Some(sub) = visible.iter().find(|s| s.get_name() == name) else {
                let names: Vec<&str> = visible.iter().map(|s| s.get_name()).collect();
                anyhow::bail!("no command '{name}': one of {}", names.join(", "));
            };
            (*sub)
                .clone()
                .name(format!("sweepbench-{name}"))
                .bin_name(format!("sweepbench {name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    clap_mangen::Man::new(page).render(out)?;
    Ok(())
}

/// "10m", "90s", "1h" → seconds, for --budget.
fn parse_budget(s: &str) -> Result<u64, String> {
    match crate::pipeline::spec::parse_duration(s) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "'{s}' is not a budget: give a duration such as 10m, 90s or 1h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent_and_every_option_has_help() {
        // Fails on conflicting names, defaults that do not parse, or an option without help.
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn completions_and_the_manual_cover_every_command() {
        use clap::CommandFactory;
        let mut bash = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut Cli::command(),
            "sweepbench",
            &mut bash,
        );
        let bash = String::from_utf8(bash).unwrap();
        let mut man = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut man)
            .unwrap();
        let man = String::from_utf8(man).unwrap();
        assert!(man.contains(".TH sweepbench 1"), "{man}");
        // Internal commands (agent) are hidden from the manual, as from --help.
        for sub in Cli::command()
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
        {
            let name = sub.get_name();
            assert!(
                bash.contains(&format!("sweepbench__subcmd__{name}")),
                "bash lacks {name}"
            );
            assert!(man.contains(name), "the manual lacks {name}");
        }
        assert!(bash.contains("--fail-on-regression"));
        // A page per command, with its options (`man sweepbench-run`).
        let mut run = Vec::new();
        man_page(Some("run"), &mut run).unwrap();
        let run = String::from_utf8(run).unwrap();
        assert!(run.contains(".TH sweepbench-run 1"), "{run}");
        assert!(run.contains("fail\\-on\\-regression"), "{run}");
        assert!(run.contains("budget"), "{run}");
        let e = man_page(Some("agent"), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no command 'agent'") && e.contains("run"), "{e}");
    }

    #[test]
    fn values_are_checked_where_they_are_parsed() {
        let e = Cli::try_parse_from(["sweepbench", "compare", "a", "b", "--threshold", "x"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("such as 5%"), "{e}");
        let e = Cli::try_parse_from(["sweepbench", "compare", "a", "b", "--map", "old"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected OLD=NEW"), "{e}");
        let e = Cli::try_parse_from(["sweepbench", "plan", "s.toml", "--only", "colour=red"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--only"), "{e}");
        let e = Cli::try_parse_from(["sweepbench", "run", "s.toml", "--against", "last-0"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("last-N with N ≥ 1"), "{e}");
    }
}
