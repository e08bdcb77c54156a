//! `history` said: the text (a line per series with its newest run's verdict, the shifts,
//! the closing counts and warnings) and the HTML page (a chart per workload, then the text).

use super::{date_of, HistoryModel};
use crate::engine::metrics::median;
use crate::pipeline::judge::trend;
use crate::pipeline::judge::verdict::changepoint;
use crate::pipeline::judge::verdict::{fmt_change, ALPHA};

/// The text history prints.
pub fn text(m: &HistoryModel) -> String {
    let mut s = m.skipped.concat();
    s += &nights(m);
    // The point names set the first column's width: a "candidate ÷ control" name is long.
    let width = m
        .rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    s += &format!(
        "\n{:<width$} {:>5} {:>12} {:>9} {:>22}  newest run\n",
        "point", "runs", "newest", "Δ", "interval"
    );
    for r in &m.rows {
        let (delta, interval) = match &r.verdict {
            None => (String::new(), String::new()),
            Some(n) => (
                format!("{}%", fmt_change(n.change_pct)),
                format!("[{}%, {}%]", fmt_change(n.lo_pct), fmt_change(n.hi_pct)),
            ),
        };
        s.push_str(&format!(
            "{:<width$} {:>5} {:>12.2} {:>9} {:>22}  {}\n",
            r.name,
            r.runs,
            r.newest,
            delta,
            interval,
            word(m, r)
        ));
    }
    s += &closing(m);
    for w in &m.host_changes {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

/// A row's verdict in words: the gate's, or the trend's (marked as such beside a gate).
fn word(m: &HistoryModel, r: &super::Row) -> String {
    if m.newest_unfinished.is_some() {
        return "not judged: the run did not end".to_string();
    }
    if !r.withheld.is_empty() {
        return format!("not judged: {}", r.withheld);
    }
    let w = trend::word(r.verdict.as_ref(), r.host);
    if m.gate.is_some() && !r.gated && r.verdict.is_some() {
        format!("{w} (trend)")
    } else {
        w
    }
}

/// How many runs the list of runs shows, the newest.
const NIGHTS_SHOWN: usize = 10;

/// The first lines: the sweep, its runs from the first to the newest, and the newest runs
/// each with its outcome at its gate.
fn nights(m: &HistoryModel) -> String {
    let ids = &m.ids;
    let newest = ids.len() - 1;
    let mut s = format!(
        "{}: {} run(s), {} ({}) … {} ({})\n\nruns as their gates judged them{}:\n",
        m.sweep_dir.display(),
        ids.len(),
        ids[0],
        date_of(&ids[0]),
        ids[newest],
        date_of(&ids[newest]),
        if ids.len() > NIGHTS_SHOWN {
            format!(" (the newest {NIGHTS_SHOWN})")
        } else {
            String::new()
        }
    );
    let from = ids.len().saturating_sub(NIGHTS_SHOWN);
    for (id, n) in ids.iter().zip(&m.nights).skip(from) {
        s.push_str(&format!("  {id}  {}  {}\n", date_of(id), n.said()));
    }
    s
}

/// The newest run's failing streak: the first run of it and its length, when the newest run
/// failed its gate.
fn streak(m: &HistoryModel) -> Option<(&str, usize)> {
    let n = m
        .nights
        .iter()
        .rev()
        .take_while(|n| **n == super::gated::Night::Failed)
        .count();
    (n > 0).then(|| (m.ids[m.ids.len() - n].as_str(), n))
}

/// The newest run as its gate judged it: the outcome, what it was compared with, its
/// failing pooled answers and counts.
fn gate_said(m: &HistoryModel, g: &super::gated::Gated) -> String {
    let newest_id = &m.ids[m.ids.len() - 1];
    let outcome = if g.passed { "passed" } else { "FAILED" };
    let mut s = format!(
        "\nnewest run {newest_id}, as its gate judged it ({}{}): {outcome}",
        g.flag,
        g.threshold_pct
            .map(|t| format!(
                ", threshold {}",
                crate::pipeline::judge::verdict::fmt_threshold(t)
            ))
            .unwrap_or_default()
    );
    match streak(m) {
        Some((since, n)) if n > 1 => s.push_str(&format!(
            ", failing since run {since} ({}), {n} runs in a row",
            date_of(since)
        )),
        _ => {}
    }
    if g.accepted {
        s.push_str("; accepted since: later runs are judged against it");
    }
    s.push('\n');
    match &g.compared {
        Some(c) => s.push_str(&format!("  compared {c}\n")),
        None => s.push_str("  the first finished run: nothing to compare with yet\n"),
    }
    if !g.points.is_empty() {
        let withheld = g.points.iter().filter(|p| !p.2.is_empty()).count();
        let not_judged = if withheld > 0 {
            format!(", not judged at {withheld} (the host's load differed between the runs)")
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  regressed at {} of {} points it judged, improved at {}{not_judged} (the rows marked without \"(trend)\")\n",
            m.regressed.len(),
            g.points.len() - withheld,
            m.improved
        ));
    }
    for p in &g.pooled {
        s.push_str(&format!("  pooled over the thread counts: {p}\n"));
    }
    s
}

/// The lines after the series: the shifts, the newest run's verdict (its gate's, else its
/// trend's), how a young ratio was judged, and a regression of the host's own tests.
fn closing(m: &HistoryModel) -> String {
    let (judged, level, threshold_pct) = (m.judged, m.level, m.threshold_pct);
    let newest_id = &m.ids[m.ids.len() - 1];
    let shifts: String = m
        .shifts
        .iter()
        .map(|sh| {
            format!(
                "  {}: from run {} ({}), {:+.1} % (p {:.2e})\n",
                sh.name,
                sh.run,
                date_of(&sh.run),
                sh.change_pct,
                sh.p
            )
        })
        .collect();
    let mut s = String::new();
    s.push_str(&format!(
        "\nshifts (E-divisive means, Welch t-test on the logs, p < {}):\n{}",
        changepoint::MAX_P,
        if shifts.is_empty() {
            "  none\n".to_string()
        } else {
            shifts
        }
    ));
    let trend_method = format!(
        "beyond {} and outside the {:.2} % prediction interval of the runs since the last shift; {:.0} % family-wise",
        crate::pipeline::judge::verdict::fmt_threshold(threshold_pct),
        (1.0 - level) * 100.0,
        ALPHA * 100.0
    );
    if let Some(why) = m.newest_unfinished {
        s.push_str(&format!(
            "\nnewest run {newest_id}: not judged: {why} (its gate never ran; a run that did not end is never judged)\n"
        ));
        return s;
    }
    if let Some(g) = &m.gate {
        s += &gate_said(m, g);
        let trend_worse = m
            .rows
            .iter()
            .filter(|r| !r.gated && !r.host && r.verdict.as_ref().is_some_and(|n| n.worse()))
            .count();
        let trended = m
            .rows
            .iter()
            .filter(|r| !r.gated && r.verdict.is_some())
            .count();
        if trended > 0 {
            s.push_str(&format!(
                "the other series by their trend (not what the gate judges, not counted): regressed at {trend_worse} of {trended} ({trend_method}).\n"
            ));
        }
    } else {
        s.push_str(&format!(
            "\nnewest run {}: regressed at {} of {judged} series, improved at {} ({trend_method}); it was not gated (run --fail-on-regression judges a run as the nightly does).\n",
            newest_id,
            m.regressed.len(),
            m.improved,
        ));
        if m.young_ratios {
            s.push_str(&format!(
                "a tps/control ratio with fewer than {} earlier runs is judged against the earlier runs' own paired intervals, as the nightly's gate judges it ({})\n",
                changepoint::MIN_HISTORY,
                "docs/statistics.md, \"A nightly with a control\""
            ));
        }
    }
    if !m.host_regressed.is_empty() {
        s.push_str(&format!(
            "warning: the host's own tests regressed in the newest run ({}): the machine itself is slower, so the servers' figures may have moved with it; host series are not counted as regressed above\n",
            m.host_regressed.join(", ")
        ));
    }
    s
}

const HTML: &str = include_str!("../../../templates/history.html.tera");

/// The HTML page (templates/history.html.tera): one throughput chart per workload (a line per
/// series × thread count, x = run dates), the headline, then the text.
pub fn page(m: &HistoryModel, text: &str) -> anyhow::Result<String> {
    let (sweep_dir, ids, trends) = (&m.sweep_dir, &m.ids, &m.trends);
    let newest = &ids[ids.len() - 1];
    let (headline, regressed) = match (&m.gate, m.newest_unfinished) {
        (_, Some(why)) => (format!("newest run {newest}: not judged: {why}"), false),
        (Some(g), None) => (
            format!(
                "newest run {newest}: its gate {}",
                if g.failing() {
                    "FAILED"
                } else if g.passed {
                    "passed"
                } else {
                    "failed; accepted since"
                }
            ),
            g.failing(),
        ),
        (None, None) => (
            format!(
                "newest run {newest}: regressed at {} of {} series",
                m.regressed.len(),
                m.judged
            ),
            !m.regressed.is_empty(),
        ),
    };
    let name = sweep_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // Axis labels: month-day (the text below has the full dates and times).
    let dates: Vec<String> = ids
        .iter()
        .map(|i| date_of(i).get(5..10).unwrap_or_default().to_string())
        .collect();
    let mut workloads: Vec<&str> = trends.iter().map(|t| t.key.workload.as_str()).collect();
    workloads.sort_unstable();
    workloads.dedup();
    let charts: Vec<String> = workloads
        .iter()
        .map(|w| {
            // Each series as a share of its own median, so that a 1-thread series moves as
            // visibly as a 64-thread one.
            let lines: Vec<crate::pipeline::report::chart::Line> = trends
                .iter()
                .filter(|t| t.key.workload == *w && t.key.metric.starts_with("tps"))
                .map(|t| {
                    let present: Vec<f64> = t.values.iter().flatten().copied().collect();
                    let med = median(&present).max(f64::MIN_POSITIVE);
                    crate::pipeline::report::chart::Line::plain(
                        &format!("{} t{}", t.key.series, t.key.threads),
                        t.values
                            .iter()
                            .enumerate()
                            .filter_map(|(i, v)| v.map(|v| (i as u32, v / med * 100.0)))
                            .collect(),
                    )
                })
                .collect();
            crate::pipeline::report::chart::trend_svg(
                &format!("{w}: throughput per run"),
                "tps, % of the series' median",
                &dates,
                &lines,
            )
        })
        .collect();
    let mut t = tera::Tera::default();
    t.add_raw_template("history.html", HTML)
        .map_err(|e| anyhow::anyhow!("the history template does not parse: {e:?}"))?;
    t.autoescape_on(vec!["history.html"]);
    let mut cx = tera::Context::new();
    cx.insert("sweep", &name);
    cx.insert("runs", &ids.len());
    cx.insert("first", &date_of(&ids[0]));
    cx.insert("last", &date_of(&ids[ids.len() - 1]));
    cx.insert("headline", &headline);
    cx.insert("regressed", &regressed);
    cx.insert("charts", &charts);
    cx.insert("text", text);
    cx.insert("max_p", &changepoint::MAX_P);
    t.render("history.html", &cx)
        .map_err(|e| anyhow::anyhow!("rendering the history page: {e:?}"))
}
