//! Reports: one model built from a run's records (pure), rendered by tera templates into
//! report.md (GitHub-flavoured) and report.html (self-contained, inline CSS and SVG charts).

pub mod chart;
pub mod cost;
mod files;
pub mod filters;
pub mod host;
mod model;
pub mod nodes;
pub mod profile;
pub mod proxy;
pub mod render;
mod stability;
mod steps;
mod study;
mod tables;
pub mod winners;

pub use files::{model, write};
use tables::{ignored, problems, series_with_baseline, versions, VariablesView};

use crate::engine::metrics::{change_pct, geo_mean, spread_pct};
use crate::pipeline::judge::answers::{Answers, Question};
use crate::pipeline::judge::scaling::{self, Scaling};
use crate::pipeline::judge::verdict::{self, Sides};
use crate::pipeline::judge::verdicts_file::{Unpaired, Verdicts};
use crate::pipeline::results::{PointRecord, PointStatus};
use std::collections::{BTreeMap, HashMap};

/// The smallest change a report calls regressed or improved, percent, where the run kept no
/// verdicts of its own (verdicts.json carries the run's threshold).
pub const THRESHOLD_PCT: f64 = verdict::DEFAULT_THRESHOLD_PCT;

pub use crate::pipeline::results::{client_cpu_pct, CLIENT_BOUND_PCT};

/// What the client-bound mark means, stated in the report.
pub const CLIENT_BOUND_METHOD: &str = "‡ client-bound: the load generator used at least half of \
the CPU it could use (client CPU ÷ (duration × min(threads, cores))), so it may have limited \
the point, or taken CPU from a server on the same machine.";

pub use model::*;

/// The column a record belongs to: `target/config`, plus `/driver` for a load generator other
/// than the native engine (sysbench-driven or imported points), plus `/c<K>` for points that
/// K client processes measured together.
pub fn series_of(r: &PointRecord) -> String {
    use crate::pipeline::results::Driver;
    let base = if matches!(r.driver, Driver::Native | Driver::Log(_)) {
        format!("{}/{}", r.target, r.config)
    } else {
        format!("{}/{}/{}", r.target, r.config, r.driver)
    };
    match r.client_count() {
        1 => base,
        k => format!("{base}/c{k}"),
    }
}

/// The report's questions: every candidate cell against the baseline's cell of its row.
fn questions<'a>(sections: &'a [WorkloadSection], series: &'a [String]) -> Vec<Question<'a>> {
    let mut out = Vec::new();
    for sec in sections {
        for row in &sec.rows {
            let Some(base) = row.cells[0].as_ref() else {
                continue;
            };
            for (i, c) in row.cells.iter().enumerate().skip(1) {
                if let Some(c) = c {
                    out.push(Question {
                        series: &series[i],
                        workload: &sec.workload,
                        threads: row.threads,
                        base: &base.sides,
                        cand: &c.sides,
                    });
                }
            }
        }
    }
    out
}

/// Writes the run's answers into the cells they answer: the one place a cell's verdict is
/// written. A paired point's change replaces the ratio of the cells' figures; a cell the
/// answers leave out (a paired run's point without rounds) says why.
fn apply(sections: &mut [WorkloadSection], series: &[String], answers: &Answers) {
    for sec in sections.iter_mut() {
        for row in &mut sec.rows {
            if row.cells[0].is_none() {
                continue;
            }
            for (i, cell) in row.cells.iter_mut().enumerate().skip(1) {
                let Some(c) = cell.as_mut() else { continue };
                let Some(a) = answers.cell(&series[i], &sec.workload, row.threads) else {
                    c.verdict_note = answers.unjudged_note().to_string();
                    continue;
                };
                c.verdict = Some(a.verdict);
                if let Some(j) = a.tps {
                    c.tps_verdict = Some(j.verdict);
                    c.tps_delta_pct = j.delta_pct.or(c.tps_delta_pct);
                    (c.tps_lo_pct, c.tps_hi_pct) = (j.lo_pct, j.hi_pct);
                }
                if let Some(j) = a.p95 {
                    c.p95_verdict = Some(j.verdict);
                    c.p95_delta_pct = j.delta_pct.or(c.p95_delta_pct);
                    (c.p95_lo_pct, c.p95_hi_pct) = (j.lo_pct, j.hi_pct);
                }
                c.verdict_note = a.note.clone();
            }
        }
    }
}

/// CPU seconds spread over a point's queries, microseconds each.
fn per_query_us(cpu_s: f64, r: &PointRecord) -> Option<f64> {
    (r.queries > 0).then(|| cpu_s / r.queries as f64 * 1e6)
}

fn cell(recs: &[&PointRecord], tps_samples: &HashMap<String, Vec<f64>>) -> Option<Cell> {
    let ok: Vec<&&PointRecord> = recs
        .iter()
        .filter(|r| r.status == PointStatus::Ok)
        .collect();
    if ok.is_empty() {
        return None;
    }
    let col = |f: fn(&PointRecord) -> f64| -> Vec<f64> { ok.iter().map(|r| f(r)).collect() };
    let tps = col(|r| r.tps);
    // The geometric mean over the repeats that measured it (a figure of 0 or none was not
    // measured): the statistic the verdicts' change is the ratio of, so a cell's Δ and its
    // interval agree.
    let known = |f: fn(&PointRecord) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = ok
            .iter()
            .filter_map(|r| f(r))
            .filter(|&x| x > 0.0)
            .collect();
        (!v.is_empty()).then(|| geo_mean(&v))
    };
    let client_pct = known(|r| Some(r.client_cpu_pct));
    let mut sides = Sides::default();
    for r in &ok {
        verdict::push_run(
            &mut sides,
            r.judged_figures(),
            r.transactions,
            tps_samples.get(&r.point_id).map(Vec::as_slice),
        );
    }
    Some(Cell {
        tps: geo_mean(&tps),
        qps: geo_mean(&col(|r| r.qps)),
        lat_avg_ms: geo_mean(&col(|r| r.lat_avg_ms)),
        p95_ms: geo_mean(&col(|r| r.lat_p95_ms)),
        p99_ms: known(|r| r.lat_p99_ms),
        client_us_per_query: known(|r| per_query_us(r.client_cpu_s, r)),
        client_cpu_pct: client_pct,
        client_bound: client_pct.is_some_and(|p| p >= CLIENT_BOUND_PCT),
        server_us_per_query: known(|r| per_query_us(r.server_cpu_s?, r)),
        repeats: ok.len(),
        spread_pct: spread_pct(&tps),
        tps_delta_pct: None,
        qps_delta_pct: None,
        p95_delta_pct: None,
        verdict: None,
        tps_verdict: None,
        p95_verdict: None,
        tps_lo_pct: None,
        tps_hi_pct: None,
        p95_lo_pct: None,
        p95_hi_pct: None,
        verdict_note: String::new(),
        starved: ok.iter().filter(|r| r.starved().is_some()).count(),
        sides,
    })
}

/// What a report reads beside the records: each series' SHOW GLOBAL VARIABLES, each point's
/// per-second throughput (may be empty), and what the run kept of its own answer
/// (verdicts.json), which the report shows where it answers its questions
/// (`Answers::decide`).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub variables: &'a BTreeMap<String, BTreeMap<String, String>>,
    pub tps_samples: &'a HashMap<String, Vec<f64>>,
    pub paired: Option<&'a Verdicts>,
    pub unpaired: Option<&'a Unpaired>,
}

/// The run a report is of: its sweep's name, its id and its description.
#[derive(Clone, Copy)]
pub struct Head<'a> {
    pub sweep: &'a str,
    pub run_id: &'a str,
    pub description: &'a str,
}

impl ReportModel {
    /// Builds the model of records that kept no answer of their own: every compared cell is
    /// judged now. `variables` maps a series to its SHOW GLOBAL VARIABLES; `baseline` names
    /// the series the others are compared with (else the first one); `tps_samples` holds the
    /// per-second throughput of each point id (may be empty).
    pub fn build(
        sweep: &str,
        run_id: &str,
        description: &str,
        all_records: &[PointRecord],
        baseline: Option<&str>,
        variables: &BTreeMap<String, BTreeMap<String, String>>,
        tps_samples: &HashMap<String, Vec<f64>>,
    ) -> ReportModel {
        let head = Head {
            sweep,
            run_id,
            description,
        };
        let inputs = Inputs {
            variables,
            tps_samples,
            paired: None,
            unpaired: None,
        };
        Self::of(head, all_records, baseline, inputs)
    }

    /// Builds the model, its cells' verdicts from the run's answers (the kept ones in
    /// `inputs` where they answer this report's questions, else judged now): each written
    /// once, in `apply`.
    pub fn of(
        head: Head<'_>,
        all_records: &[PointRecord],
        baseline: Option<&str>,
        inputs: Inputs<'_>,
    ) -> ReportModel {
        let Head {
            sweep,
            run_id,
            description,
        } = head;
        let Inputs {
            variables,
            tps_samples,
            paired: kept_paired,
            unpaired: kept_unpaired,
        } = inputs;
        // An SLA search's open-loop points are not points of the scaling curve: they go to
        // `add_sla`, not to the tables. Host tests are the machine's, not a server series:
        // they get a section of their own.
        let (host_records, servers) = host::split(all_records);
        let closed: Vec<PointRecord> = servers.into_iter().filter(|r| !r.is_sla_step()).collect();
        let records = closed.as_slice();
        let (series, baseline) = series_with_baseline(records, baseline);
        let mut sections = Self::sections(records, &series, tps_samples);
        let answers = Answers::decide(
            kept_paired,
            kept_unpaired,
            &questions(&sections, &series),
            &series,
        );
        apply(&mut sections, &series, &answers);
        let shown_paired = kept_paired
            .filter(|_| answers.source == crate::pipeline::judge::answers::Source::Paired);
        let host = host::section(&host_records, &sections, &series);
        let versions = versions(records, &series);
        let vars = VariablesView::of(&series, variables);
        let (problems, starved, by_code) = problems(records, &host_records);
        let (ignored_by_code, ignored_errors) = ignored(records, &series);
        ReportModel {
            sweep: sweep.to_string(),
            run_id: run_id.to_string(),
            description: description.to_string(),
            baseline,
            versions,
            workloads: sections,
            var_diffs: vars.diffs,
            var_always: vars.always,
            confounders: vars.confounders,
            engines: BTreeMap::new(),
            tables: Vec::new(),
            classes: BTreeMap::new(),
            errors_by_code: by_code
                .into_iter()
                .map(|(code, points)| ErrorCount { code, points })
                .collect(),
            problems,
            starved,
            starved_rule: format!(
                "A point is starved when processes other than the client and the measured server took at least {} % of the host's CPU while it ran, or the hypervisor stole at least {} % (/proc/stat, read around the point); starved points count in every verdict like the rest.",
                crate::pipeline::results::STARVED_OTHERS_PCT,
                crate::pipeline::results::STARVED_STEAL_PCT
            ),
            ignored_errors,
            ignored_by_code,
            headlines: answers.headlines,
            warnings: vars.warnings,
            threshold_pct: answers.threshold_pct,
            threshold: verdict::fmt_threshold(answers.threshold_pct),
            verdict_method: verdict::METHOD,
            client_bound_method: CLIENT_BOUND_METHOD,
            scaling_method: scaling::METHOD,
            points_total: all_records.len(),
            points_ok: all_records
                .iter()
                .filter(|r| r.status == PointStatus::Ok)
                .count(),
            // A paired run's verdicts are shown whole (rounds, looks, why each stopped)
            // where its answers are the report's.
            paired: shown_paired.cloned(),
            paired_markdown: shown_paired.map(crate::pipeline::judge::verdicts_file::markdown),
            proxy_cost: Vec::new(),
            gate: None,
            host,
            winners: Vec::new(),
            winners_method: winners::METHOD,
            steadiest_method: winners::STEADIEST_METHOD,
            efficiency: Vec::new(),
            why: Vec::new(),
            steps: Vec::new(),
            nodes: Vec::new(),
            stability: Vec::new(),
            notes: Vec::new(),
            stability_verdicts: Vec::new(),
            stability_headlines: Vec::new(),
            stability_svg: Vec::new(),
            study: Vec::new(),
            study_shown: false,
            cost_method: cost::METHOD,
            profiles: None,
            starved_share: String::new(),
            series,
        }
        .finish(records)
    }

    /// A section per workload, in the order first met: its rows' figures, peaks, models and
    /// charts (no verdict yet).
    fn sections(
        records: &[PointRecord],
        series: &[String],
        tps_samples: &HashMap<String, Vec<f64>>,
    ) -> Vec<WorkloadSection> {
        let mut workloads: Vec<&str> = Vec::new();
        for r in records {
            if !workloads.contains(&r.workload.as_str()) {
                workloads.push(&r.workload);
            }
        }
        workloads
            .iter()
            .map(|w| Self::section(w, records, series, tps_samples))
            .collect()
    }

    /// What is read off the finished tables: the winner table, the starved share.
    fn finish(mut self, records: &[PointRecord]) -> ReportModel {
        self.winners = winners::table(&self.workloads, &self.series, self.threshold_pct);
        let ok = records
            .iter()
            .filter(|r| r.status == PointStatus::Ok)
            .count();
        let starved = records
            .iter()
            .filter(|r| r.status == PointStatus::Ok && r.starved().is_some())
            .count();
        if starved > 0 {
            self.starved_share = format!(
                "{starved} of {ok} measured points (or slices) ran on a starved host — other processes or the hypervisor took much of the CPU (see \"Starved points\"); cells marked ⚠ hold them, and their figures are less certain"
            );
        }
        self
    }

    fn section(
        workload: &str,
        records: &[PointRecord],
        series: &[String],
        tps_samples: &HashMap<String, Vec<f64>>,
    ) -> WorkloadSection {
        let mine: Vec<&PointRecord> = records.iter().filter(|r| r.workload == workload).collect();
        let mut threads: Vec<u32> = mine.iter().map(|r| r.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        let rows: Vec<Row> = threads
            .iter()
            .map(|&t| {
                let mut cells: Vec<Option<Cell>> = series
                    .iter()
                    .map(|s| {
                        let recs: Vec<&PointRecord> = mine
                            .iter()
                            .filter(|r| r.threads == t && series_of(r) == *s)
                            .copied()
                            .collect();
                        cell(&recs, tps_samples)
                    })
                    .collect();
                if let Some(base) = cells[0].clone() {
                    for c in cells.iter_mut().skip(1).flatten() {
                        c.tps_delta_pct = change_pct(c.tps, base.tps);
                        c.qps_delta_pct = change_pct(c.qps, base.qps);
                        c.p95_delta_pct = change_pct(c.p95_ms, base.p95_ms);
                    }
                }
                Row { threads: t, cells }
            })
            .collect();
        let mut peaks: Vec<Peak> = Vec::new();
        for (i, s) in series.iter().enumerate() {
            let best = rows
                .iter()
                .filter_map(|r| r.cells[i].as_ref().map(|c| (r.threads, c)))
                .max_by(|a, b| a.1.tps.total_cmp(&b.1.tps));
            if let Some((t, c)) = best {
                peaks.push(Peak {
                    series: s.clone(),
                    tps: c.tps,
                    threads: t,
                    qps: c.qps,
                    lat_avg_ms: c.lat_avg_ms,
                    p95_ms: c.p95_ms,
                    client_us_per_query: c.client_us_per_query,
                    client_cpu_pct: c.client_cpu_pct,
                    client_bound: c.client_bound,
                    server_us_per_query: c.server_us_per_query,
                    tps_delta_pct: None,
                    rising: {
                        let top = rows.iter().filter(|r| r.cells[i].is_some()).count();
                        let highest = rows
                            .iter()
                            .filter(|r| r.cells[i].is_some())
                            .map(|r| r.threads)
                            .max();
                        if top > 1 && highest == Some(t) {
                            format!(
                                "still rising at {t} threads: add {}, {}",
                                t.saturating_mul(2),
                                t.saturating_mul(4)
                            )
                        } else {
                            String::new()
                        }
                    },
                });
            }
        }
        if let Some(base) = peaks
            .first()
            .filter(|p| p.series == series[0])
            .map(|p| p.tps)
        {
            for p in peaks.iter_mut().skip(1) {
                p.tps_delta_pct = change_pct(p.tps, base);
            }
        }
        let models: Vec<Scaling> = series
            .iter()
            .filter_map(|s| {
                let recs: Vec<&PointRecord> = mine
                    .iter()
                    .filter(|r| series_of(r) == *s)
                    .copied()
                    .collect();
                (!recs.is_empty()).then(|| scaling::analyse(s, workload, &recs))
            })
            .collect();
        let scaling_notes = match models.first().filter(|m| m.series == series[0]) {
            Some(base) => models
                .iter()
                .skip(1)
                .filter_map(|m| scaling::compare(base, m))
                .collect(),
            None => Vec::new(),
        };
        // One line per series; throughput also gets its repeats' min–max band and its peak.
        let lines = |f: fn(&Cell) -> f64, spread: bool| -> Vec<chart::Line> {
            series
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let pts: Vec<(u32, f64)> = rows
                        .iter()
                        .filter_map(|r| r.cells[i].as_ref().map(|c| (r.threads, f(c))))
                        .collect();
                    let mut line = chart::Line::plain(s, pts);
                    if spread {
                        line.band = rows
                            .iter()
                            .filter_map(|r| {
                                let v = &r.cells[i].as_ref()?.sides[0].runs;
                                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                                let hi = v.iter().copied().fold(0.0, f64::max);
                                lo.is_finite().then_some((r.threads, lo, hi))
                            })
                            .collect();
                        line.mark = peaks
                            .iter()
                            .find(|p| p.series == *s)
                            .map(|p| (p.threads, p.tps, format!("peak {}", p.threads)));
                        if let Some(m) = models.iter().find(|m| m.series == *s) {
                            line.fit = m.curve.clone();
                            line.knee = m.knee_threads.and_then(|k| {
                                let n = k.round() as u32;
                                // The curve point nearest the knee (exact up to 128 threads).
                                let y = m.curve.iter().min_by_key(|c| c.0.abs_diff(n))?.1;
                                Some((n, y, format!("knee {n}")))
                            });
                        }
                    }
                    line
                })
                .collect()
        };
        WorkloadSection {
            workload: workload.to_string(),
            scaling_svg: chart::svg(
                &format!("{workload}: throughput (band: min–max of repeats)"),
                "transactions/s",
                &lines(|c| c.tps, true),
            ),
            latency_svg: chart::svg(
                &format!("{workload}: p95 latency"),
                "p95 latency (ms)",
                &lines(|c| c.p95_ms, false),
            ),
            hockey_svg: chart::hockey(workload, &rows, series, &models),
            rows,
            peaks,
            scaling: models,
            scaling_notes,
        }
    }
}

impl ReportModel {
    /// Adds each series' capacity at a p99 limit from the run's SLA search points (`rates =
    /// "auto"`), beside its scaling model.
    pub fn add_sla(&mut self, all_records: &[PointRecord], p99_ms: f64) {
        for w in &mut self.workloads {
            for m in &mut w.scaling {
                let recs: Vec<&PointRecord> = all_records
                    .iter()
                    .filter(|r| {
                        r.is_sla_step() && r.workload == m.workload && series_of(r) == m.series
                    })
                    .collect();
                m.sla = scaling::sla_capacity(&recs, p99_ms);
            }
        }
    }
}

#[cfg(test)]
mod tests;
