//! The report's flame graphs (`[run] profile = "perf"`): each profiled window's perf data
//! folded into stacks and drawn, and for every decided change a differential flame graph of
//! the candidate's stacks against the baseline's at that point. Files already made are kept,
//! so a report rendered again (or on a machine without perf) reuses them.

use super::{series_of, ReportModel};
use crate::pipeline::results::profile::{self as files, DATA, DIR, FREQ_HZ, PID, UNAVAILABLE};
use crate::pipeline::results::PointRecord;
use std::path::Path;

/// One profiled window, drawn.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Graph {
    pub series: String,
    pub workload: String,
    pub threads: u32,
    /// The flame graph, relative to the run directory.
    pub svg: String,
    /// On-CPU samples of the server's threads in the window.
    pub samples: u64,
    /// The point's file stem in profiles/ and its folded stacks, for its differentials.
    #[serde(skip)]
    stem: String,
    #[serde(skip)]
    folded: String,
}

/// The flame graphs of one point, a series each.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub workload: String,
    pub threads: u32,
    pub graphs: Vec<Graph>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Profiles {
    /// Why there are none, or why some could not be drawn; said once.
    pub note: Option<String>,
    pub rows: Vec<Row>,
    pub method: String,
}

/// Folds and draws what the run recorded, lists it in the model, and links each decided
/// change's differential flame graph from its "why".
pub fn attach(run: &Path, m: &mut ReportModel, points: &[PointRecord]) {
    let dir = run.join(DIR);
    if !dir.is_dir() {
        return;
    }
    let mut notes: Vec<String> = Vec::new();
    if let Ok(why) = std::fs::read_to_string(dir.join(UNAVAILABLE)) {
        notes.push(format!("not taken: {}", why.trim()));
    }
    let mut graphs = Vec::new();
    for r in points.iter().filter(|r| files::wants(r.repeat)) {
        let stem = files::stem(&r.point_id);
        let folded = dir.join(format!("{stem}.folded"));
        let pid = std::fs::read_to_string(dir.join(format!("{stem}{PID}")))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok());
        if let Err(e) = fold(&dir.join(format!("{stem}{DATA}")), pid, &folded) {
            notes.push(format!("{stem}: {e}"));
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&folded) else {
            continue;
        };
        let svg = format!("{stem}.svg");
        let title = format!(
            "{}: {} at {} thread{}, the server on-CPU",
            series_of(r),
            r.workload,
            r.threads,
            if r.threads == 1 { "" } else { "s" }
        );
        if let Err(e) = draw(&dir.join(&svg), &title, &text) {
            notes.push(format!("{svg}: {e}"));
            continue;
        }
        graphs.push(Graph {
            series: series_of(r),
            workload: r.workload.clone(),
            threads: r.threads,
            svg: format!("{DIR}/{svg}"),
            samples: samples(&text),
            stem,
            folded: text,
        });
    }
    let base = m.baseline.clone();
    for y in m.why.iter_mut() {
        let at = |s: &str| {
            graphs
                .iter()
                .find(|g| g.series == s && g.workload == y.workload && g.threads == y.threads)
        };
        let (Some(b), Some(c)) = (at(&base), at(&y.series)) else {
            continue;
        };
        let name = format!("diff__{}__vs__{}.svg", c.stem, base.replace('/', "__"));
        let title = format!(
            "{} against {}: {} at {} threads (red: a larger share of the server's samples, blue: smaller)",
            y.series, base, y.workload, y.threads
        );
        match differential(&b.folded, &c.folded, &dir.join(&name), &title) {
            Ok(()) => y.flame = Some(format!("{DIR}/{name}")),
            Err(e) => notes.push(format!("{name}: {e}")),
        }
        y.frames = shifts(&b.folded, &c.folded)
            .iter()
            .map(|(f, pb, pc)| format!("{f} {:.0} → {:.0} %", pb * 100.0, pc * 100.0))
            .collect();
    }
    let mut rows: Vec<Row> = Vec::new();
    for g in graphs {
        match rows
            .iter_mut()
            .find(|r| r.workload == g.workload && r.threads == g.threads)
        {
            Some(r) => r.graphs.push(g),
            None => rows.push(Row {
                workload: g.workload.clone(),
                threads: g.threads,
                graphs: vec![g],
            }),
        }
    }
    rows.sort_by(|a, b| (&a.workload, a.threads).cmp(&(&b.workload, b.threads)));
    m.profiles = Some(Profiles {
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        rows,
        method: format!(
            "perf record -a -g at {FREQ_HZ} Hz (every CPU, the server's process picked out) during the first repeat or round of each point (every series in the same round; a sequential point's warmup too); stacks folded by inferno. A differential graph is the candidate's stacks coloured by how their share of its samples changed from the baseline's (both normalised to the same total): it shows where the server's time went, not how much there was — the CPU per transaction is in the cost table. \"Why\" names the functions whose share of the samples (with what they called) moved most, by at least 5 points: one window per side, a few hundred samples each, so it says where to look, not a verdict."
        ),
    });
}

/// The folded stacks of a window's perf data (`perf script`, folded by inferno), made once.
fn fold(data: &Path, pid: Option<u32>, folded: &Path) -> Result<(), String> {
    use inferno::collapse::Collapse;
    if folded.is_file() {
        return Ok(());
    }
    if !data.is_file() {
        return Err("no recorded samples".into());
    }
    let perf = files::perf_binary().map_err(|e| format!("{e}: its data is kept, not folded"))?;
    let Some(pid) = pid else {
        return Err("the server's process id was not kept beside its samples".into());
    };
    let out = std::process::Command::new(perf)
        // Without the period field each sample counts one, whatever the event's period.
        .args([
            "script",
            "--no-inline",
            "-F",
            "comm,pid,tid,time,event,ip,sym,dso",
        ])
        .arg(format!("--pid={pid}"))
        .arg("-i")
        .arg(data)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("perf script: {e}"))?;
    if !out.status.success() {
        return Err(format!("perf script exited with {}", out.status));
    }
    if out.stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(
            "perf recorded no samples in the window (still attaching when it ended?)".into(),
        );
    }
    let mut stacks = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(&out.stdout[..], &mut stacks)
        .map_err(|e| format!("folding: {e}"))?;
    crate::pipeline::results::write_atomic(folded, &stacks).map_err(|e| format!("{e:#}"))
}

fn draw(svg: &Path, title: &str, folded: &str) -> Result<(), String> {
    if svg.is_file() {
        return Ok(());
    }
    if folded.trim().is_empty() {
        return Err("no samples to draw".into());
    }
    let mut o = inferno::flamegraph::Options::default();
    o.title = title.to_string();
    o.count_name = "samples".into();
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut o, folded.lines(), &mut out)
        .map_err(|e| format!("drawing: {e}"))?;
    crate::pipeline::results::write_atomic(svg, &out).map_err(|e| format!("{e:#}"))
}

/// A differential flame graph of the candidate's folded stacks against the baseline's.
fn differential(base: &str, cand: &str, out: &Path, title: &str) -> Result<(), String> {
    if out.is_file() {
        return Ok(());
    }
    let mut lines = Vec::new();
    let opt = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(opt, base.as_bytes(), cand.as_bytes(), &mut lines)
        .map_err(|e| format!("comparing stacks: {e}"))?;
    draw(out, title, &String::from_utf8_lossy(&lines))
}

/// A shift in where the server's time went smaller than this share of its samples is not
/// named: one window per side gives a few hundred samples, whose shares move by a few
/// points between two windows of the same server.
const MIN_SHIFT: f64 = 0.05;
/// Frames named per change.
const SHIFTS_SHOWN: usize = 3;

/// The functions whose share of the on-CPU samples (inclusive: the function and what it
/// called) moved most from the baseline's window to the candidate's, by at least
/// `MIN_SHIFT`: (function, baseline share, candidate share). Frames without a name
/// (`[unknown]`, a stripped binary's `[mariadbd]`) and the process itself are left out.
pub fn shifts(base: &str, cand: &str) -> Vec<(String, f64, f64)> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut depth: BTreeMap<String, usize> = BTreeMap::new();
    let mut shares = |folded: &str| -> BTreeMap<String, f64> {
        let mut inclusive: BTreeMap<String, u64> = BTreeMap::new();
        let mut total = 0;
        for line in folded.lines() {
            let Some((stack, n)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(n) = n.trim().parse::<u64>() else {
                continue;
            };
            total += n;
            for (d, f) in stack.split(';').enumerate() {
                let e = depth.entry(f.to_string()).or_default();
                *e = (*e).max(d);
            }
            // A function counts once per stack, however deep it recursed.
            let frames: BTreeSet<&str> = stack.split(';').skip(1).collect();
            for f in frames {
                if !f.starts_with('[') && f != "[unknown]" {
                    *inclusive.entry(f.to_string()).or_default() += n;
                }
            }
        }
        inclusive
            .into_iter()
            .map(|(f, n)| (f, n as f64 / total.max(1) as f64))
            .collect()
    };
    let (b, c) = (shares(base), shares(cand));
    let names: BTreeSet<&String> = b.keys().chain(c.keys()).collect();
    let mut out: Vec<(String, f64, f64)> = names
        .into_iter()
        .map(|f| {
            let (pb, pc) = (
                b.get(f).copied().unwrap_or(0.0),
                c.get(f).copied().unwrap_or(0.0),
            );
            (f.clone(), pb, pc)
        })
        .filter(|(_, pb, pc)| (pc - pb).abs() >= MIN_SHIFT)
        .collect();
    // Most moved first (to a point of the share), then the deeper: a caller and the one
    // function under it that holds all of its change say one thing, and the deeper (more
    // specific) is the one named.
    let key = |t: &(String, f64, f64)| ((t.2 - t.1).abs() * 100.0).round() as i64;
    out.sort_by(|x, y| {
        key(y)
            .cmp(&key(x))
            .then(depth.get(&y.0).cmp(&depth.get(&x.0)))
            .then(x.0.cmp(&y.0))
    });
    let mut shown: Vec<(String, f64, f64)> = Vec::new();
    for s in out {
        let same = |t: &(String, f64, f64)| (t.1 - s.1).abs() < 0.01 && (t.2 - s.2).abs() < 0.01;
        if shown.iter().any(same) {
            continue;
        }
        shown.push(s);
        if shown.len() == SHIFTS_SHOWN {
            break;
        }
    }
    shown
}

/// The samples in folded stacks: each line ends in its count.
fn samples(folded: &str) -> u64 {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_stacks_are_drawn_and_compared() {
        let d = tempfile::tempdir().unwrap();
        let base = "mariadbd;do_command;dispatch_command;mysql_execute_command 80\n\
                    mariadbd;do_command;dispatch_command;ha_commit_trans;fsync 20\n";
        let cand = "mariadbd;do_command;dispatch_command;mysql_execute_command 50\n\
                    mariadbd;do_command;dispatch_command;ha_commit_trans;fsync 50\n";
        assert_eq!(samples(base), 100);
        draw(&d.path().join("b.svg"), "base", base).unwrap();
        let svg = std::fs::read_to_string(d.path().join("b.svg")).unwrap();
        assert!(
            svg.contains("mysql_execute_command") && svg.contains("<svg"),
            "{svg}"
        );
        let out = d.path().join("diff.svg");
        differential(base, cand, &out, "c against b").unwrap();
        let diff = std::fs::read_to_string(&out).unwrap();
        // The fsync frame grew from 20 % to 50 % of the samples: drawn, and said in its title.
        assert!(diff.contains("fsync"), "{diff}");
        assert!(
            diff.contains("fsync (50 samples, 50.00%; +30.00%)"),
            "{diff}"
        );
        // Nothing to draw is an error, not an empty picture.
        assert!(draw(&d.path().join("e.svg"), "e", " \n").is_err());
    }

    #[test]
    fn a_decided_change_links_its_differential_and_every_profiled_point_its_graph() {
        use crate::pipeline::report::tests::rec;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(DIR);
        std::fs::create_dir_all(&dir).unwrap();
        let mut points = Vec::new();
        for (config, fsync) in [("default", 10), ("durable", 60)] {
            for r in 1..=2 {
                points.push(rec("m", config, "oltp_write_only", 4, r, 1000.0, 5.0));
            }
            std::fs::write(
                dir.join(format!("m__{config}__oltp_write_only__t4.folded")),
                format!("mariadbd;dispatch_command 90\nmariadbd;ha_commit_trans;fsync {fsync}\n"),
            )
            .unwrap();
        }
        let mut m = ReportModel::build(
            "s",
            "r",
            "",
            &points,
            Some("m/default"),
            &Default::default(),
            &Default::default(),
        );
        m.why = vec![super::super::cost::Why {
            series: "m/durable".into(),
            workload: "oltp_write_only".into(),
            threads: 4,
            verdict: crate::pipeline::judge::verdict::Verdict::Regressed,
            compared: 3,
            moved: vec![],
            line: String::new(),
            flame: None,
            frames: vec![],
        }];
        attach(d.path(), &mut m, &points);
        let p = m.profiles.as_ref().unwrap();
        assert_eq!(p.note, None);
        assert_eq!(p.rows.len(), 1);
        let g = &p.rows[0].graphs;
        assert_eq!(
            g.iter()
                .map(|g| (g.series.as_str(), g.samples))
                .collect::<Vec<_>>(),
            [("m/default", 100), ("m/durable", 150)]
        );
        assert!(d.path().join(&g[1].svg).is_file());
        let flame = m.why[0].flame.as_deref().unwrap();
        assert_eq!(
            flame,
            "profiles/diff__m__durable__oltp_write_only__t4__vs__m__default.svg"
        );
        let svg = std::fs::read_to_string(d.path().join(flame)).unwrap();
        // fsync: 10 of 100 samples in the baseline, 60 of 150 here (40 %): +30 points.
        assert!(svg.contains("fsync (60 samples, 40.00%; +30.00%)"), "{svg}");
        // A point whose profile is missing is said, the rest still drawn.
        std::fs::remove_file(dir.join("m__default__oltp_write_only__t4.folded")).unwrap();
        std::fs::remove_file(dir.join("m__default__oltp_write_only__t4.svg")).unwrap();
        attach(d.path(), &mut m, &points);
        let p = m.profiles.as_ref().unwrap();
        assert!(p
            .note
            .as_deref()
            .unwrap()
            .contains("m__default__oltp_write_only__t4: no recorded samples"));
        assert_eq!(p.rows[0].graphs.len(), 1);
    }

    #[test]
    fn the_functions_whose_share_moved_are_named_the_deepest_first() {
        let base = "mariadbd;do_command;mysql_parse;JOIN::exec 80\n\
                    mariadbd;do_command;ha_commit_trans;[mariadbd] 20\n";
        let cand = "mariadbd;do_command;mysql_parse;JOIN::exec 50\n\
                    mariadbd;do_command;ha_commit_trans;MYSQL_BIN_LOG::trx_group_commit_leader;my_sync 48\n\
                    mariadbd;do_command;ha_commit_trans;[mariadbd] 2\n";
        let s = shifts(base, cand);
        let named: Vec<String> = s
            .iter()
            .map(|(f, b, c)| format!("{f} {:.0}→{:.0}", b * 100.0, c * 100.0))
            .collect();
        // my_sync and its caller moved alike (0 → 48 %): the deeper is named; mysql_parse
        // and JOIN::exec fell alike (80 → 50 %): JOIN::exec; then ha_commit_trans 20 → 50 %
        // (as far, less deep).
        assert_eq!(
            named,
            ["my_sync 0→48", "JOIN::exec 80→50", "ha_commit_trans 20→50"],
            "{s:?}"
        );
        // The same profile twice: nothing moved.
        assert!(shifts(cand, cand).is_empty());
    }
}
