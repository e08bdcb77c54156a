//! `compare` rendered: a plain-text table for the terminal, Markdown for a pull request and a
//! self-contained HTML page, each leading with the pooled answers.

use super::{interval, Comparison, Row};
use crate::pipeline::judge::verdict::{self, pooled, Judgement, Metric, Verdict};

fn cell(j: Option<&Judgement>) -> String {
    match j.and_then(|j| j.delta_pct) {
        Some(d) => format!("{}%", verdict::fmt_change(d)),
        None => "—".into(),
    }
}

fn noise(j: Option<&Judgement>) -> String {
    match j.and_then(|j| j.noise_pct) {
        Some(n) => format!("{n:.1}%"),
        None => "?".into(),
    }
}

fn mde(j: Option<&Judgement>) -> String {
    match j.and_then(|j| j.mde_pct) {
        Some(n) => format!("{n:.1}%"),
        None => "?".into(),
    }
}

/// A row's figures as printed: Δ tps, its interval, Δ p95, Δ p99, noise, MDE.
fn columns(r: &Row) -> [String; 6] {
    let tps = r.metric(Metric::Tps);
    [
        cell(tps),
        tps.map(interval).unwrap_or_default(),
        cell(r.metric(Metric::P95)),
        cell(r.metric(Metric::P99)),
        noise(tps),
        mde(tps),
    ]
}

fn footer(c: &Comparison) -> String {
    let vars: String = if c.var_diffs.is_empty() {
        String::new()
    } else {
        format!(
            "server variables that differ between the two sides:\n{}",
            c.var_diffs
                .iter()
                .map(|d| format!("  {d}\n"))
                .collect::<String>()
        )
    };
    let warn: String = c
        .host_warnings
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .chain(c.notes.iter().map(|n| format!("note: {n}\n")))
        .collect();
    vars + &warn
        + &format!(
            "{}: {} (threshold {}; false alarms ≤ {a} % over the points, ≤ {a} % over the pooled answers).\nMethod: {}{}",
            if c.fails(verdict::FailOn::Regressed) {
                "REGRESSED"
            } else {
                "verdict"
            },
            c.headline,
            c.threshold,
            c.method,
            if c.pooled.is_empty() {
                String::new()
            } else {
                format!("\n{}", pooled::METHOD)
            },
            a = verdict::ALPHA * 100.0,
        )
}

/// Plain-text table.
pub fn text(c: &Comparison) -> String {
    let mut s: String = c.answers().iter().map(|a| format!("{a}\n")).collect();
    if !s.is_empty() {
        s.push('\n');
    }
    s += &format!(
        "{:<44} {:>10} {:>10} {:>8} {:>16} {:>8} {:>8} {:>6} {:>6}  verdict\n",
        "point", "base tps", "cand tps", "Δ tps", "interval", "Δ p95", "Δ p99", "noise", "MDE"
    );
    for r in &c.rows {
        let [d, ci, p95, p99, n, m] = columns(r);
        s.push_str(&format!(
            "{:<44} {:>10.2} {:>10.2} {d:>8} {ci:>16} {p95:>8} {p99:>8} {n:>6} {m:>6}  {}{}\n",
            r.point,
            r.base_tps,
            r.cand_tps,
            r.said(),
            if r.why.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.why)
            }
        ));
    }
    let why = reasons(c, "  ");
    if !why.is_empty() {
        s.push_str(&format!("why, from the server's counters:\n{why}"));
    }
    for k in &c.only_base {
        s.push_str(&format!("unmatched, only in base: {k}\n"));
    }
    for k in &c.only_candidate {
        s.push_str(&format!("unmatched, only in candidate: {k}\n"));
    }
    s.push_str(&format!(
        "\n{} matched points. base tps, cand tps: geometric means of the repeats; Δ: cand/base − 1 of them; interval: of Δ tps at the confidence its verdict needs; noise: run-to-run SD of tps; MDE: smallest tps drop this comparison would catch 80 % of the time.\n{}\n",
        c.rows.len(),
        footer(c)
    ));
    s
}

/// GitHub-flavoured Markdown table.
pub fn markdown(c: &Comparison) -> String {
    let mut s: String = c.answers().iter().map(|a| format!("- {a}\n")).collect();
    if !s.is_empty() {
        s.push('\n');
    }
    s.push_str("| point | base tps | cand tps | Δ tps [interval] | Δ p95 | Δ p99 | noise | MDE | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in &c.rows {
        let [d, ci, p95, p99, n, m] = columns(r);
        let v = match r.verdict {
            _ if r.withheld().is_some() => format!("{} ({})", r.said(), r.why),
            Verdict::Regressed | Verdict::Improved => format!("**{}** ({})", r.verdict, r.why),
            Verdict::Slower | Verdict::Faster | Verdict::Inconclusive if !r.why.is_empty() => {
                format!("{} ({})", r.verdict, r.why)
            }
            _ => r.verdict.to_string(),
        };
        s.push_str(&format!(
            "| {} | {:.2} | {:.2} | {d} {ci} | {p95} | {p99} | {n} | {m} | {v} |\n",
            r.point, r.base_tps, r.cand_tps,
        ));
    }
    for k in c
        .only_base
        .iter()
        .map(|k| format!("only in base: {k}"))
        .chain(
            c.only_candidate
                .iter()
                .map(|k| format!("only in candidate: {k}")),
        )
    {
        s.push_str(&format!("\n- unmatched, {k}"));
    }
    let why = reasons(c, "- ");
    if !why.is_empty() {
        s.push_str(&format!(
            "\n\nWhy, from the server's counters:\n\n{}",
            why.trim_end()
        ));
    }
    s.push_str(&format!("\n\n{}\n", footer(c)));
    s
}

/// One line per decided point with the server counters per transaction that moved with it.
fn reasons(c: &Comparison, bullet: &str) -> String {
    c.rows
        .iter()
        .filter(|r| !r.counters.is_empty())
        .map(|r| {
            let moved: Vec<&str> = r.counters.iter().map(|m| m.line.as_str()).collect();
            format!(
                "{bullet}{} ({}): {}\n",
                r.point,
                r.verdict,
                moved.join("; ")
            )
        })
        .collect()
}

const HTML: &str = include_str!("../../../templates/compare.html.tera");

/// A self-contained HTML page (templates/compare.html.tera).
pub fn html(c: &Comparison) -> anyhow::Result<String> {
    let mut t = tera::Tera::default();
    t.add_raw_template("compare.html", HTML)
        .map_err(|e| anyhow::anyhow!("the compare template does not parse: {e:?}"))?;
    t.autoescape_on(vec!["compare.html"]);
    crate::pipeline::report::filters::register(&mut t);
    let mut cx = tera::Context::from_serialize(c)?;
    cx.insert(
        "regressed",
        &c.fails(crate::pipeline::judge::verdict::FailOn::Regressed),
    );
    cx.insert("answers", &c.answers());
    t.render("compare.html", &cx)
        .map_err(|e| anyhow::anyhow!("rendering the comparison: {e:?}"))
}
