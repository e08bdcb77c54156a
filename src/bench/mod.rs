//! `sweepbench bench`: the sysbench drop-in. Parses sysbench's command line and dispatches to
//! prepare / run / cleanup / prewarm, printing what sysbench prints.

pub mod host;
pub mod options;

pub mod output;

use crate::engine::config::EngineConfig;
use crate::engine::exec::{self, IntervalStats, Observer};
use crate::engine::workload::prepare;
use crate::exit::{failed, Exit};
use anyhow::bail;
use options::{Help, OutputFormat};
use std::io::Write;

struct TextObserver<'a> {
    opts: &'a EngineConfig,
}

impl Observer for TextObserver<'_> {
    fn threads_started(&mut self) {
        println!("\nThreads started!\n");
    }

    fn interval(&mut self, s: &IntervalStats) {
        println!("{}", s.sysbench_line(self.opts.percentile.max(1)));
        let _ = std::io::stdout().flush();
    }

    fn checkpoint(&mut self, t_s: f64, r: &exec::RunReport) {
        println!("[ {:.0}s ] Checkpoint report:", t_s.round());
        print!("{}", output::sysbench::final_report(r, self.opts));
        let _ = std::io::stdout().flush();
    }
}

/// JSON mode prints once at the end; checkpoints are kept for that document.
struct JsonObserver<'a> {
    opts: &'a EngineConfig,
    checkpoints: Vec<serde_json::Value>,
}

impl Observer for JsonObserver<'_> {
    fn checkpoint(&mut self, t_s: f64, r: &exec::RunReport) {
        let mut v = output::json::value(r, self.opts);
        v["checkpoint_s"] = serde_json::json!(t_s);
        self.checkpoints.push(v);
    }
}

/// Runs `bench` with sysbench-style arguments. Every error exits 1, as sysbench's do.
pub async fn main(args: &[String]) -> anyhow::Result<Exit> {
    bench(args).await.map_err(failed)
}

async fn bench(args: &[String]) -> anyhow::Result<Exit> {
    let (positionals, raw, help) = match options::parse_args(args) {
        Err(options::OptionError::Refused {
            arg,
            name,
            value,
            flag,
            test,
        }) => {
            // sysbench's answers: a flag's bad value is an invalid option, after its banner;
            // a number's is said before the banner, or after it for a host test's option.
            let verbose = given_verbosity(args) >= 3;
            if flag {
                let err = format!("invalid option: {arg}\n");
                return Ok(as_sysbench(verbose, "", &err, Exit::Failed));
            }
            let err = format!("Invalid value for the '{name}' option: '{value}'\n");
            return Ok(as_sysbench(verbose && test, "", &err, Exit::Failed));
        }
        Err(options::OptionError::Unknown { arg, hint }) => {
            // sysbench's answer; the nearest name is ours, from its "info" level.
            let v = given_verbosity(args);
            let hint = if v >= 4 { hint } else { String::new() };
            let err = format!("invalid option: {arg}{hint}\n");
            return Ok(as_sysbench(v >= 3, "", &err, Exit::Failed));
        }
        r => r?,
    };
    if raw.flag("version") {
        println!("{}", output::sysbench::banner());
        return Ok(Exit::Ok);
    }
    if help || positionals.is_empty() || positionals[0] == "help" {
        print!("{Help}");
        return Ok(if help || !positionals.is_empty() {
            Exit::Ok
        } else {
            Exit::Failed
        });
    }
    if let Some(extra) = positionals.get(2) {
        bail!("unexpected argument '{extra}'; usage: sweepbench bench <workload> prepare|run|cleanup|prewarm|help [--option=value ...]");
    }
    if raw.int("threads") == 0 {
        // sysbench checks it before anything else, on stdout, without its banner.
        print!("FATAL: Invalid value for --threads: 0.\n\n");
        return Ok(Exit::Failed);
    }
    // Without a command a workload's script stops before it looks for its driver.
    if raw.get("db_driver") != "mysql" && positionals.len() > 1 {
        return Ok(unknown_driver(&positionals, &raw));
    }
    // sysbench's levels: below 3 neither the banner nor anything of `run` is printed; from 4
    // on (its "info"), our own words beside its.
    let verbose = raw.int("verbosity") >= 3;
    let info = raw.int("verbosity") >= 4;
    let given = positionals[0].as_str();
    // oltp_common.lua (by path or name) is the OLTP scripts' shared part: sysbench 1.0.20 runs
    // its prepare, prewarm, cleanup and help with the scripts' options, and refuses `run`.
    let common = given
        .rsplit('/')
        .next()
        .is_some_and(|b| b.strip_suffix(".lua").unwrap_or(b) == "oltp_common");
    if common && positionals.get(1).map(String::as_str) == Some("run") {
        let out = "FATAL: `init' function failed: /usr/share/sysbench/oltp_common.lua:22: this script is meant to be included by other OLTP scripts and should not be called directly.\n";
        return Ok(as_sysbench(verbose, out, "", Exit::Failed));
    }
    let name = if common { "oltp_read_write" } else { given };
    if host::is_host_test(name) {
        let Some(command) = positionals.get(1) else {
            let err = format!(
                "The '{name}' test requires a command argument. See 'sysbench {name} help'\n"
            );
            return Ok(as_sysbench(verbose, "", &err, Exit::Failed));
        };
        if !matches!(
            command.as_str(),
            "run" | "help" | "prepare" | "cleanup" | "prewarm" | "warmup"
        ) {
            return Ok(unknown_command(verbose, command));
        }
        return host::main(name, command, &raw, verbose);
    }
    let built = match positionals.get(1) {
        // Without a command a workload's script stops before it looks for its driver.
        None => options::resolve_workload(name, &raw).and_then(|w| {
            let mut mysql = raw.clone();
            mysql.set("db_driver", "mysql")?;
            options::build(w.name(), &mysql)
        }),
        Some(_) => options::build(name, &raw),
    };
    let opts = match built {
        Err(options::OptionError::UnknownTest { name, hint, have }) => {
            let mut out = format!(
                "FATAL: Cannot find benchmark '{name}': no such built-in test, file or module\n"
            );
            if info {
                out.push_str(&format!("sweepbench has: {have}{hint}\n"));
            }
            return Ok(as_sysbench(verbose, &out, "", Exit::Failed));
        }
        r => r?,
    };
    let format = options::output_format(&raw)?;
    let banner = || {
        if verbose {
            println!("{}\n", output::sysbench::banner());
        }
    };
    if raw.flag("mysql_debug") {
        eprintln!(
            "WARNING: --mysql-debug: sweepbench has no client-library trace; running without it"
        );
    }
    let Some(command) = positionals.get(1) else {
        // bulk_insert.lua checks for no command at all: sysbench prints its banner and ends.
        if opts.workload == crate::engine::workload::WorkloadKind::BulkInsert {
            return Ok(as_sysbench(verbose, "", "", Exit::Ok));
        }
        return Ok(as_sysbench(
            verbose,
            "FATAL: /usr/share/sysbench/oltp_common.lua:28: Command is required. Supported commands: prepare, prewarm, run, cleanup, help\n",
            "",
            Exit::Failed,
        ));
    };
    match command.as_str() {
        "prepare" => {
            banner();
            // Our summary line is sysbench's "info" level (4): at the default 3, `prepare 2>&1`
            // prints what sysbench prints and nothing more.
            run_prepare(&opts, raw.int("verbosity") >= 4).await?
        }
        "run" => return run_run(&opts, format, verbose).await,
        "cleanup" => {
            banner();
            prepare::cleanup(&opts).await?
        }
        "prewarm" | "warmup" => {
            banner();
            prepare::prewarm(&opts).await?
        }
        "help" => {
            banner();
            match options::workload_help(opts.workload) {
                Some(text) if common => {
                    println!("{}", text.replacen("oltp_read_write", "oltp_common.lua", 1))
                }
                Some(text) => println!("{text}"),
                None => bail!(
                    "'{}' test does not implement the 'help' command.",
                    opts.workload.name()
                ),
            }
        }
        other => return Ok(unknown_command(verbose, other)),
    }
    Ok(Exit::Ok)
}

/// `--verbosity` as the command line gives it (sysbench's 3 when not, or not a number), for
/// answering a command line that could not be read.
fn given_verbosity(args: &[String]) -> u64 {
    let mut v = 3;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--verbosity") {
            Some(rest) if rest.starts_with('=') => Some(rest[1..].to_string()),
            Some("") => it.next().cloned(),
            _ => None,
        };
        if let Some(n) = value.and_then(|x| x.parse().ok()) {
            v = n;
        }
    }
    v
}

/// A usage error as sysbench 1.0.20 answers it: its banner and a blank line on stdout (from
/// verbosity 3), then `out` on stdout and `err` on stderr, and `exit` (so that `2>&1` and
/// the status are sysbench's, the Lua locations it prints included).
fn as_sysbench(verbose: bool, out: &str, err: &str, exit: Exit) -> Exit {
    if verbose {
        println!("{}\n", output::sysbench::banner());
    }
    print!("{out}");
    let _ = std::io::stdout().flush();
    eprint!("{err}");
    exit
}

/// A command no test of sysbench 1.0.20 has, answered as it answers it.
fn unknown_command(verbose: bool, command: &str) -> Exit {
    let err = format!("Unknown command: {command}\n");
    as_sysbench(verbose, "", &err, Exit::Failed)
}

/// An unknown `--db-driver` (`help` included) as sysbench 1.0.20 answers it, on stdout where
/// it prints its FATAL lines: the run's header first for `run`, the banner for the others,
/// then its lines (the Lua locations are sysbench's own, kept so `2>&1` diffs are empty).
fn unknown_driver(positionals: &[String], raw: &options::RawOptions) -> Exit {
    let verbose = raw.int("verbosity") >= 3;
    let driver = raw.get("db_driver");
    let command = positionals.get(1).map(String::as_str).unwrap_or("");
    let mut out = String::new();
    if verbose {
        if command == "run" {
            let threads = raw.int("threads").max(1);
            out.push_str(&format!(
                "{}\n\nRunning the test with following options:\nNumber of threads: {threads}\nInitializing random number generator from current time\n\n\nInitializing worker threads...\n\n",
                output::sysbench::banner()
            ));
        } else {
            out.push_str(&format!("{}\n\n", output::sysbench::banner()));
        }
    }
    out.push_str(&format!(
        "FATAL: invalid database driver name: '{driver}'\n"
    ));
    // Where oltp_common.lua fails to initialise the driver, by command, as sysbench 1.0.20
    // names it.
    match command {
        "run" => out.push_str("FATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:348: failed to initialize the DB driver\nFATAL: Thread initialization failed!\n"),
        "cleanup" => out.push_str("FATAL: `cleanup' function failed: /usr/share/sysbench/oltp_common.lua:387: failed to initialize the DB driver\n"),
        "prewarm" => out.push_str("FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:97: failed to initialize the DB driver\n"),
        _ => out.push_str("FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:82: failed to initialize the DB driver\n"),
    }
    print!("{out}");
    Exit::Failed
}

async fn run_prepare(o: &EngineConfig, verbose: bool) -> anyhow::Result<()> {
    let s = prepare::prepare(o).await?;
    // Ours, not sysbench's: on stderr, so stdout is what sysbench prints.
    if s.rows > 0 && verbose {
        eprintln!(
            "Prepared {} table(s), {} rows in {:.2}s ({:.0} rows/s, {} connections)",
            s.tables,
            s.rows,
            s.seconds,
            s.rows_per_sec(),
            s.connections
        );
    }
    Ok(())
}

/// What `run` prints below verbosity 3: nothing, as sysbench.
struct Silent;

impl Observer for Silent {}

async fn run_run(o: &EngineConfig, format: OutputFormat, verbose: bool) -> anyhow::Result<Exit> {
    let json = format == OutputFormat::Json;
    let text = !json && verbose;
    if text {
        print!("{}", output::sysbench::header(o, o.rand_seed != 0));
        let _ = std::io::stdout().flush();
    }
    let mut text_obs = TextObserver { opts: o };
    let mut json_obs = JsonObserver {
        opts: o,
        checkpoints: Vec::new(),
    };
    let mut silent = Silent;
    let observer: &mut dyn Observer = match (json, text) {
        (true, _) => &mut json_obs,
        (false, true) => &mut text_obs,
        (false, false) => &mut silent,
    };
    let report = exec::run(o, observer).await?;
    if let Some(f) = &report.fatal {
        eprintln!("{f}");
        if text {
            // Threads that lost their connection for good leave the others to run to the
            // end: the run did not end early, it ran short of threads.
            let whole = o.time_s > 0 && report.elapsed_s >= o.time_s as f64 * 0.95;
            if whole {
                println!("(the run went on to its end with the threads it had left; the report covers all of it)");
            } else {
                println!("(the run ended early; the report covers what was measured until then)");
            }
        }
    }
    if text {
        print!("{}", output::sysbench::final_report(&report, o));
    } else if json {
        let mut v = output::json::value(&report, o);
        if !json_obs.checkpoints.is_empty() {
            v["checkpoints"] = serde_json::Value::Array(json_obs.checkpoints);
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("report serialises")
        );
    }
    Ok(if report.fatal.is_some() {
        Exit::Failed
    } else if report.unfinished.is_some() {
        Exit::BadInput
    } else if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Ok
    })
}
