//! `bench --help` (every option in sysbench's sections, with its default) and
//! `bench <workload> help` (the script's options in sysbench's own layout).

use super::table::{aliases, defs, is_script_option, script_options, Kind};
use crate::engine::config::WorkloadKind;
use std::fmt;

/// Which of sysbench's `--help` sections an option is listed under.
fn section(name: &str) -> &'static str {
    match name {
        n if n.starts_with("rand_") => "Pseudo-Random Numbers Generator options:",
        "verbosity" | "percentile" | "histogram" => "Log options:",
        n if n.starts_with("db_") => "General database options:",
        n if is_script_option(n) => {
            "Workload options (the scripts'; `sweepbench bench <workload> help` lists one's):"
        }
        n if n.starts_with("mysql_") => "mysql options:",
        _ => "General options:",
    }
}

const SECTIONS: [&str; 6] = [
    "General options:",
    "Pseudo-Random Numbers Generator options:",
    "Log options:",
    "General database options:",
    "mysql options:",
    "Workload options (the scripts'; `sweepbench bench <workload> help` lists one's):",
];

fn flag(name: &str, kind: Kind, sep: char) -> String {
    let name = if sep == '-' {
        name.replace('_', "-")
    } else {
        name.to_string()
    };
    match kind {
        Kind::Int => format!("--{name}=N"),
        Kind::Float => format!("--{name}=N"),
        Kind::Bool => format!("--{name}[=on|off]"),
        Kind::Str => format!("--{name}=STRING"),
    }
}

/// The `bench --help` text: every option with its default, in sysbench's sections.
pub struct Help;

impl fmt::Display for Help {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Usage:")?;
        writeln!(
            f,
            "  sweepbench bench [options]... <workload> prepare|run|cleanup|prewarm|help\n"
        )?;
        writeln!(f, "Workloads (sysbench 1.0.20's MySQL scripts):")?;
        for w in WorkloadKind::all() {
            writeln!(f, "  {}", w.name())?;
        }
        for sec in SECTIONS {
            let defs: Vec<_> = defs().filter(|d| section(d.name) == sec).collect();
            let width = defs
                .iter()
                .map(|d| flag(d.name, d.kind, '-').len())
                .max()
                .unwrap_or(0);
            writeln!(f, "\n{sec}")?;
            for d in defs {
                let default = if d.default.is_empty() && d.kind != Kind::Str {
                    String::new()
                } else {
                    format!(" [{}]", d.default)
                };
                writeln!(
                    f,
                    "  {:<width$} {}{default}",
                    flag(d.name, d.kind, '-'),
                    d.help
                )?;
            }
        }
        writeln!(
            f,
            "\n'-' and '_' are interchangeable. sysbench 0.5's names are accepted too:"
        )?;
        for (alias, canon) in aliases() {
            writeln!(
                f,
                "  --{:<24} = --{}",
                alias.replace('_', "-"),
                canon.replace('_', "-")
            )?;
        }
        Ok(())
    }
}

/// `bench <workload> help`: the script's options as sysbench lists them (`<name> options:`,
/// then `  --name=N  description [default]`, underscores, sorted); None for bulk_insert,
/// whose script has no help command.
pub fn workload_help(w: WorkloadKind) -> Option<String> {
    let names = script_options(w)?;
    let defs: Vec<_> = names
        .iter()
        .filter_map(|n| defs().find(|d| d.name == *n))
        .collect();
    let width = defs
        .iter()
        .map(|d| flag(d.name, d.kind, '_').len())
        .max()
        .unwrap_or(0);
    let mut out = format!("{} options:\n", w.name());
    for d in defs {
        // An option without a default (pgsql_variant) has no brackets, as in sysbench.
        let default = if d.default.is_empty() {
            String::new()
        } else {
            format!(" [{}]", d.default)
        };
        out.push_str(&format!(
            "  {:<width$} {}{default}\n",
            flag(d.name, d.kind, '_'),
            d.help,
        ));
    }
    Some(out)
}
