//! `sweepbench bench`: the sysbench drop-in. Parses sysbench's command line and dispatches to
//! prepare / run / cleanup / prewarm, printing what sysbench prints.

pub mod options;

use crate::exec::{self, IntervalStats, Observer};
use crate::exit::Exit;
use crate::output;
use crate::workload::prepare;
use options::{BenchOptions, Help, OutputFormat};
use std::io::Write;

/// Exit status of a `bench` invocation (crate::exit has the one definition).
pub const EXIT_OK: i32 = Exit::Ok.code();
pub const EXIT_FATAL: i32 = Exit::Failed.code();
pub const EXIT_USAGE: i32 = Exit::BadInput.code();
pub const EXIT_INTERRUPTED: i32 = Exit::Interrupted.code();

struct TextObserver<'a> {
    opts: &'a BenchOptions,
}

impl Observer for TextObserver<'_> {
    fn threads_started(&mut self) {
        println!("\nThreads started!\n");
    }

    fn interval(&mut self, s: &IntervalStats) {
        println!(
            "{}",
            output::sysbench::interval_line(s, self.opts.percentile.max(1))
        );
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
    opts: &'a BenchOptions,
    checkpoints: Vec<serde_json::Value>,
}

impl Observer for JsonObserver<'_> {
    fn checkpoint(&mut self, t_s: f64, r: &exec::RunReport) {
        let mut v = output::json::value(r, self.opts);
        v["checkpoint_s"] = serde_json::json!(t_s);
        self.checkpoints.push(v);
    }
}

/// Runs `bench` with sysbench-style arguments; returns the process exit code.
pub async fn main(args: &[String]) -> i32 {
    let (positionals, raw, help) = match options::parse_args(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("sweepbench bench: {e}");
            return EXIT_USAGE;
        }
    };
    if help || positionals.is_empty() {
        print!("{Help}");
        return if help { EXIT_OK } else { EXIT_USAGE };
    }
    if positionals.len() > 2 {
        eprintln!(
            "sweepbench bench: unexpected argument '{}'; usage: sweepbench bench <workload> prepare|run|cleanup|prewarm [--option=value ...]",
            positionals[2]
        );
        return EXIT_USAGE;
    }
    let opts = match BenchOptions::build(&positionals[0], &raw) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sweepbench bench: {e}");
            return EXIT_USAGE;
        }
    };
    let command = positionals.get(1).map(String::as_str).unwrap_or("run");
    let result = match command {
        "prepare" => run_prepare(&opts).await,
        "run" => return run_run(&opts).await,
        "cleanup" => {
            println!("{}", banner());
            prepare::cleanup(&opts).await
        }
        "prewarm" | "warmup" => {
            println!("{}", banner());
            prepare::prewarm(&opts).await
        }
        other => {
            eprintln!(
                "sweepbench bench: unknown command '{other}': expected prepare, run, cleanup or prewarm"
            );
            return EXIT_USAGE;
        }
    };
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("{e:#}");
            EXIT_FATAL
        }
    }
}

fn banner() -> String {
    format!(
        "sweepbench {} (sysbench 1.0.20 compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

async fn run_prepare(o: &BenchOptions) -> anyhow::Result<()> {
    println!("{}", banner());
    let s = prepare::prepare(o).await?;
    if s.rows > 0 {
        println!(
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

async fn run_run(o: &BenchOptions) -> i32 {
    let text = o.format == OutputFormat::Text;
    if text {
        print!("{}", output::sysbench::header(o, o.rand_seed != 0));
        let _ = std::io::stdout().flush();
    }
    let mut text_obs = TextObserver { opts: o };
    let mut json_obs = JsonObserver {
        opts: o,
        checkpoints: Vec::new(),
    };
    let observer: &mut dyn Observer = if text { &mut text_obs } else { &mut json_obs };
    let report = match exec::run(o, observer).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e:#}");
            return EXIT_FATAL;
        }
    };
    if let Some(f) = &report.fatal {
        eprintln!("{f}");
        if text {
            println!("(the run ended early; the report covers what was measured until then)");
        }
    }
    if text {
        print!("{}", output::sysbench::final_report(&report, o));
    } else {
        let mut v = output::json::value(&report, o);
        if !json_obs.checkpoints.is_empty() {
            v["checkpoints"] = serde_json::Value::Array(json_obs.checkpoints);
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("report serialises")
        );
    }
    if report.fatal.is_some() {
        EXIT_FATAL
    } else if report.unfinished.is_some() {
        EXIT_USAGE
    } else if report.interrupted {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    }
}
