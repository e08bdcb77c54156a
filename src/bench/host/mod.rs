//! `bench cpu|memory|fileio`: sysbench's host tests on its command line — their options read
//! (cpu.rs, memory.rs, fileio.rs), measured by the engine's host runner (`engine::host`), and
//! printed with sysbench 1.0.20's header, interval lines and report, byte for byte where
//! sysbench's are fixed. DBAs characterise a host with them before they benchmark its server.

mod cpu;
mod fileio;
mod memory;

use super::options::RawOptions;
use super::output::sysbench::{banner, general};
use crate::engine::config::EngineConfig;
use crate::engine::host::{self, HostTest};
use crate::engine::metrics::percentile_ms;
use crate::exit::Exit;
use anyhow::bail;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

/// sysbench's built-in tests that need no server.
pub fn is_host_test(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "fileio")
}

use crate::engine::host::size;

/// The general options every host test takes, and its report interval and percentile.
struct Limits {
    lim: host::Limits,
    report_interval_s: u64,
    /// `--report-checkpoints`: seconds from the start, ascending.
    checkpoints_s: Vec<u64>,
    percentile: u32,
}

impl Limits {
    fn of(raw: &RawOptions) -> anyhow::Result<Limits> {
        let threads = raw.int("threads");
        if threads == 0 || threads > 100_000 {
            bail!(
                "FATAL: Invalid value for --threads: {}.",
                raw.get("threads")
            );
        }
        Ok(Limits {
            lim: host::Limits {
                threads: threads as u32,
                time_s: raw.int("time").min(crate::engine::config::MAX_SECONDS),
                events: raw.int("events"),
            },
            report_interval_s: raw.int("report_interval"),
            checkpoints_s: super::options::checkpoints(raw).map_err(|x| {
                anyhow::anyhow!("FATAL: Invalid value for --report-checkpoints: {x}")
            })?,
            percentile: raw.int("percentile").min(100) as u32,
        })
    }
}

/// How a host test is printed: its options' lines in the header, its interval line and its
/// report's head (the measuring is the engine's `HostTest`).
trait Printed: HostTest {
    /// The lines between "Initializing random number generator…" and "Initializing worker
    /// threads...", blank lines included.
    fn describe(&self) -> String;
    fn interval_line(&self, events: u64, secs: f64, threads: u32, pct: u32, lat_ms: f64) -> String;
    /// What comes before "General statistics:".
    fn cumulative(&self, events: u64, secs: f64) -> String;
}

/// `bench cpu|memory COMMAND`: `run` and `help`; prepare, cleanup and prewarm are refused as
/// sysbench refuses them.
pub fn main(name: &str, command: &str, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    let no_mode = name == "fileio" && command == "run" && !raw.given("file_test_mode");
    if verbose && (command != "run" || no_mode) {
        println!("{}\n", banner());
    }
    if no_mode {
        // sysbench's answer, on stdout with the test's options.
        println!(
            "FATAL: Missing required argument: --file-test-mode\n\n{}",
            fileio::HELP
        );
        return Ok(Exit::Failed);
    }
    // A test's option refused: sysbench's FATAL line on stdout, after its banner.
    let refused = |e: anyhow::Error| {
        if verbose && command == "run" {
            println!("{}\n", banner());
        }
        println!("{e:#}");
        Ok(Exit::Failed)
    };
    match (command, name) {
        ("help", "cpu") => println!("{}", cpu::HELP),
        ("help", "fileio") => println!("{}", fileio::HELP),
        ("help", _) => println!("{}", memory::HELP),
        ("run", "cpu") => return cpu::of(raw).map_or_else(refused, |t| run(&t, raw, verbose)),
        ("run", "fileio") => {
            return fileio::of(raw, true).map_or_else(refused, |t| run(&t, raw, verbose))
        }
        ("run", _) => return memory::of(raw).map_or_else(refused, |t| run(&t, raw, verbose)),
        ("prepare" | "cleanup", "fileio") => {
            let t = match fileio::of(raw, false) {
                Ok(t) => t,
                Err(e) => return refused(e),
            };
            if command == "prepare" {
                fileio::prepare(&t)?
            } else {
                fileio::cleanup(&t)
            }
        }
        ("prepare" | "cleanup" | "prewarm" | "warmup", _) => {
            bail!("'{name}' test does not implement the '{command}' command.")
        }
        (other, _) => bail!("FATAL: unknown command '{other}'. Supported commands: run, help"),
    }
    Ok(Exit::Ok)
}

fn run<T: Printed>(test: &T, raw: &RawOptions, verbose: bool) -> anyhow::Result<Exit> {
    let l = Limits::of(raw)?;
    let threads = l.lim.threads;
    if l.lim.time_s == 0 && l.lim.events == 0 {
        if test.per_thread(threads).is_none() {
            bail!("FATAL: Neither --time nor --events is set: the test would never end; give one of them");
        }
        // sysbench's words, though the test's own total size ends it.
        eprintln!("WARNING: Both event and time limits are disabled, running an endless test");
    }
    crate::interrupt::install();
    if verbose {
        let mut s = format!(
            "{}\n\nRunning the test with following options:\nNumber of threads: {threads}\n",
            banner(),
        );
        if l.report_interval_s > 0 {
            let _ = writeln!(
                s,
                "Report intermediate results every {} second(s)",
                l.report_interval_s
            );
        }
        if let Some(at) = super::output::sysbench::checkpoints_line(&l.checkpoints_s) {
            s.push_str(&at);
        }
        if raw.given("rand_seed") && raw.int("rand_seed") != 0 {
            let _ = writeln!(
                s,
                "Initializing random number generator from seed ({}).",
                raw.int("rand_seed")
            );
        } else {
            s.push_str("Initializing random number generator from current time\n");
        }
        let _ = write!(
            s,
            "\n\n{}Initializing worker threads...\n\nThreads started!\n\n",
            test.describe()
        );
        print!("{s}");
        let _ = std::io::stdout().flush();
    }
    let every = (l.report_interval_s > 0).then(|| Duration::from_secs(l.report_interval_s));
    let mut o = EngineConfig::new(crate::engine::config::WorkloadKind::PointSelect);
    o.percentile = l.percentile;
    // A checkpoint's report: sysbench's final report of what followed the previous one.
    let checkpoint = |at_s: f64, r: &crate::engine::exec::RunReport| {
        if verbose {
            print!(
                "[ {:.0}s ] Checkpoint report:\n{}{}",
                at_s,
                test.cumulative(r.totals.events, r.window_s.max(1e-9)),
                general(r, &o)
            );
            let _ = std::io::stdout().flush();
        }
    };
    let report = host::run_with(
        test,
        &l.lim,
        every,
        &l.checkpoints_s,
        |i| {
            println!(
                "[ {:.0}s ] {}",
                i.at_s,
                test.interval_line(
                    i.events,
                    i.secs,
                    threads,
                    l.percentile,
                    percentile_ms(i.hist, l.percentile as f64)
                )
            );
            let _ = std::io::stdout().flush();
        },
        checkpoint,
    );
    if verbose {
        print!(
            "{}{}",
            test.cumulative(report.totals.events, report.window_s.max(1e-9)),
            general(&report, &o)
        );
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Ok
    })
}
