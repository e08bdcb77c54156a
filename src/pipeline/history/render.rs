//! `history` said: the text (a line per series with its newest run's verdict, the shifts,
//! the closing counts and warnings) and the HTML page (a chart per workload, then the text).

use super::{date_of, HistoryModel};
use crate::engine::metrics::median;
use crate::pipeline::judge::trend;
use crate::pipeline::judge::verdict::changepoint;
use crate::pipeline::judge::verdict::{fmt_change, ALPHA};
use std::path::Path;

/// The text history prints.
pub fn text(m: &HistoryModel) -> String {
    let mut s = m.skipped.concat();
    s += &header(&m.sweep_dir, &m.ids);
    for r in &m.rows {
        let (delta, interval) = match &r.verdict {
            None => (String::new(), String::new()),
            Some(n) => (
                format!("{}%", fmt_change(n.change_pct)),
                format!("[{}%, {}%]", fmt_change(n.lo_pct), fmt_change(n.hi_pct)),
            ),
        };
        s.push_str(&format!(
            "{:<48} {:>5} {:>12.2} {:>9} {:>22}  {}\n",
            r.name,
            r.runs,
            r.newest,
            delta,
            interval,
            trend::word(r.verdict.as_ref(), r.host)
        ));
    }
    s += &closing(m);
    for w in &m.host_changes {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

/// The text's first lines: the sweep, its runs from the first to the newest, the columns.
fn header(sweep_dir: &Path, ids: &[String]) -> String {
    let newest = ids.len() - 1;
    format!(
        "{}: {} run(s), {} ({}) … {} ({})\n\n{:<48} {:>5} {:>12} {:>9} {:>22}  newest run\n",
        sweep_dir.display(),
        ids.len(),
        ids[0],
        date_of(&ids[0]),
        ids[newest],
        date_of(&ids[newest]),
        "point",
        "runs",
        "newest",
        "Δ",
        "prediction interval"
    )
}

/// The lines after the series: the shifts, the newest run's count of regressions, how a young
/// ratio was judged, and a regression of the host's own tests.
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
    s.push_str(&format!(
        "\nnewest run {}: regressed at {} of {judged} series, improved at {} (beyond {} and outside the {:.2} % prediction interval of the runs since the last shift; {:.0} % family-wise).\n",
        newest_id,
        m.regressed.len(),
        m.improved,
        crate::pipeline::judge::verdict::fmt_threshold(threshold_pct),
        (1.0 - level) * 100.0,
        ALPHA * 100.0
    ));
    if m.young_ratios {
        s.push_str(&format!(
            "a tps/control ratio with fewer than {} earlier runs is judged against the earlier runs' own paired intervals, as the nightly's gate judges it ({})\n",
            changepoint::MIN_HISTORY,
            "docs/statistics.md, \"A nightly with a control\""
        ));
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
    let headline = format!(
        "newest run {}: regressed at {} of {} series",
        ids[ids.len() - 1],
        m.regressed.len(),
        m.judged
    );
    let regressed = !m.regressed.is_empty();
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
