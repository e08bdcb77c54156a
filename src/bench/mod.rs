//! `sweepbench bench`: the sysbench drop-in. Parses sysbench's command line and dispatches to
//! prepare / run / cleanup / prewarm, printing what sysbench prints.

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

/// Runs `bench` with sysbench-style arguments.
pub async fn main(args: &[String]) -> anyhow::Result<Exit> {
    let (positionals, raw, help) = options::parse_args(args)?;
    if help || positionals.is_empty() {
        print!("{Help}");
        return Ok(if help { Exit::Ok } else { Exit::BadInput });
    }
    if let Some(extra) = positionals.get(2) {
        bail!("unexpected argument '{extra}'; usage: sweepbench bench <workload> prepare|run|cleanup|prewarm [--option=value ...]");
    }
    let opts = options::build(&positionals[0], &raw)?;
    let format = options::output_format(&raw)?;
    match positionals.get(1).map(String::as_str).unwrap_or("run") {
        "prepare" => run_prepare(&opts).await.map_err(failed)?,
        "run" => return run_run(&opts, format).await,
        "cleanup" => {
            println!("{}", banner());
            prepare::cleanup(&opts).await.map_err(failed)?
        }
        "prewarm" | "warmup" => {
            println!("{}", banner());
            prepare::prewarm(&opts).await.map_err(failed)?
        }
        other => {
            bail!("unknown command '{other}': expected prepare, run, cleanup or prewarm")
        }
    }
    Ok(Exit::Ok)
}

fn banner() -> String {
    format!(
        "sweepbench {} (sysbench 1.0.20 compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

async fn run_prepare(o: &EngineConfig) -> anyhow::Result<()> {
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

async fn run_run(o: &EngineConfig, format: OutputFormat) -> anyhow::Result<Exit> {
    let text = format == OutputFormat::Text;
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
    let report = exec::run(o, observer).await.map_err(failed)?;
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
