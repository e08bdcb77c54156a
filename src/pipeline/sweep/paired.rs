//! `design = "paired"`: every series' server up at once and warm; each point (workload ×
//! thread count) measured as rounds of one short slice per series in a random order, judged
//! round by round against the baseline at the looks fixed before the point starts, until it
//! is decided or its share of the budget is spent. Each slice is one record of points.csv
//! (its repeat is the round), so every other command reads a paired run as it reads any run;
//! the paired verdicts, with the rounds each point took, go to verdicts.json.

use super::rounds::Round;
use super::runner::Runner;
use super::slices::{Series, Slice, SLICE_SETUP_S};
use crate::pipeline::judge::verdict::paired::{self, PairedPoint, Rounds, Schedule};
use crate::pipeline::judge::verdict::{Verdict, ALPHA};
use crate::pipeline::judge::verdicts_file::{Cell, Comparison, Stopped, Verdicts};
use crate::pipeline::plan::Point;
use crate::pipeline::results::{r4, PointRecord};
use crate::pipeline::spec::design::{Isolate, MIN_ROUNDS};
use std::time::Instant;

pub const METHOD: &str = "Paired design: each point is measured in rounds of one slice per \
series, in a random order per round, a slice measured in short turns that alternate between \
the series in a random order per turn (a duet: all of a round's slices in the same seconds). A \
candidate's change is the mean of its per-round log ratios to the baseline (drift both sides \
share cancels); from 8 rounds on it is taken at equal CPU used by other processes (/proc/stat; \
an ANCOVA intercept) when the sides' shares balance. The t interval's standard error is the \
larger of Newey–West's and an AR(1) inflation's. The rounds at which a point may stop are fixed \
before it starts (5, 10, 20, … and the last its budget allows); each metric's 2.5 % is spent \
over the looks (by look k of K, (k/K)² of it) at levels computed for looks that share their \
rounds (repeated confidence intervals), so a false regressed, improved, unchanged, slower or \
faster at any look is at most 5 % per point. tps and p95 are judged; p99 is shown. regressed / \
improved: the interval lies wholly beyond ±threshold; unchanged: wholly within it (p95 at twice \
the threshold); slower / faster: it excludes no change but not the threshold.";

/// A 64-bit mix of the run id and the point, so the random orders are reproducible from the
/// run directory alone.
fn seed_of(run_id: &str, cell: usize) -> u64 {
    run_id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64 ^ cell as u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Runs the sweep's points in the paired design. The caller has taken the lock, run the
/// preflight and opened the run directory.
pub(super) async fn run(r: &mut Runner<'_>) {
    let spec = r.spec;
    let design = &spec.run.design;
    // One cell per workload × thread count: the first series' repeat-1 point stands for it.
    let mut cells: Vec<Point> = Vec::new();
    for p in r.plan.points.iter().filter(|p| p.repeat == 1) {
        if !cells
            .iter()
            .any(|c| c.workload == p.workload && c.threads == p.threads)
        {
            cells.push(p.clone());
        }
    }
    let mut keys: Vec<(String, String)> = Vec::new();
    for p in &r.plan.points {
        let k = (p.target.clone(), p.config.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let baseline = spec
        .baseline
        .clone()
        .unwrap_or_else(|| format!("{}/{}", keys[0].0, keys[0].1));
    if let Err(e) = super::paired_setup::check_memory(spec, &keys) {
        r.ev.error(&format!("{e:#}"));
        r.fail_unmeasured(r.plan.points.len() as u32);
        return;
    }
    let mut series = open_series(r, &keys).await;
    let isolation = if design.duet() && design.isolate != Isolate::None {
        super::paired_setup::isolate(r, &mut series, design.isolate == Isolate::Cpus)
    } else {
        Vec::new()
    };
    // The baseline first: its slices are what every candidate is divided by.
    if let Some(i) = series.iter().position(|s| s.key == baseline) {
        series.swap(0, i);
    }
    let round_s = series.len() as f64 * (design.slice_s as f64 + SLICE_SETUP_S);
    let warm_s = series.len() as f64 * spec.run.warmup_s as f64;
    let mut spent = 0.0;
    let mut out: Vec<Cell> = Vec::new();
    let total_cells = cells.len();
    for (ci, cell) in cells.iter().enumerate() {
        if crate::interrupt::requested() {
            r.interrupt();
            break;
        }
        let schedule = match design.budget_s {
            None => Schedule::fixed(spec.run.repeats.max(2)),
            Some(b) => {
                let share = (b as f64 - spent).max(0.0) / (total_cells - ci) as f64;
                let fit = ((share - warm_s) / round_s).floor().max(0.0) as u32;
                Schedule::sequential(MIN_ROUNDS, fit.max(MIN_ROUNDS))
            }
        };
        let left = (total_cells - ci - 1) as u64 * series.len() as u64 * MIN_ROUNDS as u64;
        let (_, kept) = r.progress();
        r.replan(kept + series.len() as u64 * schedule.last() as u64 + left);
        let c = measure_cell(r, cell, &mut series, &schedule, ci).await;
        spent += c.seconds;
        out.push(c);
        if let Err(e) = write_verdicts(r, &baseline, &out, &isolation) {
            r.ev.warn(&format!("verdicts.json not written: {e:#}"));
        }
        if r.stopping() {
            break;
        }
    }
    for s in series {
        if let Err(e) = s.block.close().await {
            r.ev.warn(&format!("closing {}: {e:#}", s.key));
        }
    }
    // The answers as verdicts.json keeps them (judged once, where it was written).
    let kept = crate::pipeline::judge::verdicts_file::load(r.run_path)
        .ok()
        .flatten();
    let mut lines: Vec<String> = kept
        .iter()
        .flat_map(|v| {
            v.pooled.iter().map(|p| {
                crate::pipeline::judge::verdict::pooled::sentence(p, &v.baseline, v.threshold_pct)
            })
        })
        .collect();
    let load = busy_share(r.records());
    lines.extend(summary(&out, &baseline, load));
    r.set_answers(lines);
}

/// Every series' server (target/config `keys`), up and its tables read before the first
/// slice; a series that could not start keeps why in its block.
async fn open_series(r: &mut Runner<'_>, keys: &[(String, String)]) -> Vec<Series> {
    let spec = r.spec;
    let mut series: Vec<Series> = Vec::new();
    for (t, c) in keys {
        let key = format!("{t}/{c}");
        r.note(format!("starting {key}"));
        let config = spec
            .configs
            .iter()
            .find(|x| &x.name == c)
            .expect("planned config exists");
        let ev = r.ev;
        let block = super::servers::open(spec, r.plan, t, config, r.st_mut(), ev).await;
        if block.error.is_none() {
            if let Err(e) = super::paired_setup::prewarm(r, &block).await {
                r.ev.warn(&format!("prewarming {key}: {e:#}"));
            }
        }
        series.push(Series {
            key,
            block,
            cpus: Vec::new(),
        });
    }
    series
}

/// The mean share of the host's CPU other processes and the hypervisor took over the run's
/// ok slices, percent; None where no slice could tell.
fn busy_share(records: &[crate::pipeline::results::PointRecord]) -> Option<f64> {
    let each: Vec<f64> = records
        .iter()
        .filter(|r| r.status == crate::pipeline::results::PointStatus::Ok)
        .filter_map(|r| Some(r.others_cpu_pct? + r.steal_pct.unwrap_or(0.0)))
        .collect();
    (!each.is_empty()).then(|| each.iter().sum::<f64>() / each.len() as f64)
}

/// Past this much more measuring the estimate is no plan anyone follows: the noise, not the
/// budget, is what to change.
const NEED_WORTH_SAYING_S: u64 = 24 * 3600;

/// One line per compared series over the whole sweep, for the run's last lines; then what
/// would decide what stayed inconclusive — on a host that was busy (`load`, percent of its
/// CPU others took) that host, not hours of measuring at its noise.
fn summary(cells: &[Cell], baseline: &str, load: Option<f64>) -> Vec<String> {
    let mut by: std::collections::BTreeMap<&str, Vec<Verdict>> = Default::default();
    let mut need = 0u64;
    for c in cells {
        for k in &c.comparisons {
            by.entry(&k.series).or_default().push(k.verdict);
            need += k.budget_needed_s.unwrap_or(0);
        }
    }
    let mut lines: Vec<String> = by
        .iter()
        .map(|(s, v)| {
            format!(
                "{s} vs {baseline} point by point: {}",
                crate::pipeline::judge::verdict::headline(v)
            )
        })
        .collect();
    let busy = load.filter(|&l| l >= crate::pipeline::results::STARVED_OTHERS_PCT);
    match (need, busy) {
        (0, _) => {}
        (_, Some(l)) => lines.push(format!(
            "what stayed inconclusive did so on a busy host: other processes and the hypervisor took {l:.0} % of its CPU while the run measured, which widens every interval; measure again on a quieter host, with the run pinned to CPUs of its own (taskset), or with fewer series at once"
        )),
        (n, None) if n > NEED_WORTH_SAYING_S => lines.push(
            "what stayed inconclusive would need more than a day of measuring at this noise (per point in verdicts.json): too close to the threshold to decide here, or too noisy — a quieter host, pinning (taskset) or fewer series at once narrow it"
                .to_string(),
        ),
        (n, None) => lines.push(format!(
            "what stayed inconclusive would need about {} more of measuring (per point in verdicts.json)",
            crate::pipeline::plan::format_duration(n)
        )),
    }
    lines
}

fn write_verdicts(
    r: &Runner<'_>,
    baseline: &str,
    cells: &[Cell],
    isolation: &[String],
) -> anyhow::Result<()> {
    let spec = r.spec;
    let v = Verdicts {
        design: if spec.run.design.duet() {
            "duet"
        } else {
            "paired"
        }
        .into(),
        method: METHOD.into(),
        baseline: baseline.into(),
        threshold_pct: r.threshold_pct,
        alpha: ALPHA,
        slice_s: spec.run.design.slice_s,
        interleave_ms: if spec.run.design.duet() {
            0
        } else {
            spec.run.design.interleave_ms
        },
        interleave_auto: !spec.run.design.duet() && spec.run.design.interleave_auto,
        budget_s: spec.run.design.budget_s,
        isolation: isolation.to_vec(),
        points: cells.to_vec(),
        pooled: crate::pipeline::judge::verdicts_file::pool(cells, r.threshold_pct),
    };
    let text = serde_json::to_string_pretty(&v)?;
    crate::pipeline::results::write_atomic(&r.run_path.join("verdicts.json"), text.as_bytes())
}

/// The figures one slice gives the verdict.
fn push(rounds: &mut Rounds, rec: &PointRecord, others: Option<f64>) {
    rounds.tps.push(rec.tps);
    rounds.p95.push(rec.lat_p95_ms);
    rounds.p99.push(rec.lat_p99_ms.unwrap_or(0.0));
    rounds.events.push(rec.transactions);
    if let Some(o) = others {
        rounds.others.push(o);
    }
}

/// Measures one point in rounds until its schedule's look finds it decided, or the last look.
async fn measure_cell(
    r: &mut Runner<'_>,
    cell: &Point,
    series: &mut [Series],
    schedule: &Schedule,
    ci: usize,
) -> Cell {
    let spec = r.spec;
    let mut rng = crate::engine::workload::rand::Rng::seeded(seed_of(r.run_id, ci));
    let mut rounds: Vec<Rounds> = vec![Rounds::default(); series.len()];
    let mut out = empty_cell(r, cell, series, schedule);
    let started = Instant::now();
    let tag = format!("{} t{}", out.workload, cell.threads);
    let mut rigs = super::paired_setup::open_rigs(r, cell, series, &tag, &mut out.pinned).await;
    let round = Round::of(spec, cell, series);
    out.turn_ms = round.turn_ms();
    let mut verdicts: Vec<PairedPoint> = Vec::new();
    for n in 1..=schedule.last() {
        let mut order: Vec<usize> = (0..series.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        out.orders
            .push(order.iter().map(|&i| series[i].key.clone()).collect());
        if crate::interrupt::requested() {
            r.interrupt();
            out.stopped = Stopped::Interrupted;
            break;
        }
        let slices = round
            .run(r, cell, series, &mut rigs, &order, &mut rng, n)
            .await;
        let kept = keep_round(r, slices, &order, series, &mut rounds);
        let line = match kept {
            Ok(line) => line,
            Err(why) => {
                out.stopped = why;
                break;
            }
        };
        out.rounds = n;
        out.cpu_pct.push(line.cpu);
        let how = round.describe(spec.run.design.slice_s);
        r.note(format!("{tag} round {n}: {} ({how})", line.said.join(", ")));
        // A control sweep's question is tomorrow's: the ratio's change from night to night,
        // which tonight's verdict does not settle. Its points spend their whole share on the
        // ratio's precision instead of stopping once tonight's verdict is decided.
        if schedule.is_look(n) && (!spec.control || n == schedule.last()) {
            verdicts = judge(&rounds, schedule, n, r.threshold_pct);
            if let Some(why) = stop_at_look(&verdicts, n, schedule, r.threshold_pct) {
                out.stopped = why;
                break;
            }
        }
    }
    if verdicts.is_empty() || !schedule.is_look(out.rounds) {
        // Stopped between looks (a failure, an interrupt): the figures so far, shown at the
        // last look's level, decide nothing new.
        verdicts = judge(&rounds, schedule, out.rounds, r.threshold_pct);
        if out.stopped != Stopped::Decided {
            for v in &mut verdicts {
                v.verdict = Verdict::Inconclusive;
            }
        }
    }
    for rig in rigs.into_iter().flatten() {
        rig.close();
    }
    // A model's slices take virtual time: the budget is spent as a server's would be.
    let took_s = if round.computed() {
        rounds_taken_s(spec, series.len(), out.rounds)
    } else {
        started.elapsed().as_secs_f64()
    };
    out.seconds = (took_s * 10.0).round() / 10.0;
    conclude(&mut out, verdicts, series);
    let said: Vec<String> = out
        .comparisons
        .iter()
        .map(|k| format!("{} {} after {} rounds", k.series, k.verdict, out.rounds))
        .collect();
    r.note(format!("{tag}: {}", said.join("; ")));
    out
}

/// A point's verdicts.json entry before its first round.
fn empty_cell(r: &Runner<'_>, cell: &Point, series: &[Series], schedule: &Schedule) -> Cell {
    Cell {
        workload: cell.workload.name().to_string(),
        threads: cell.threads,
        rounds: 0,
        looks: schedule.looks.clone(),
        stopped: if r.spec.run.design.budget_s.is_some() {
            Stopped::Budget
        } else {
            Stopped::Rounds
        },
        seconds: 0.0,
        orders: Vec::new(),
        series: series.iter().map(|s| s.key.clone()).collect(),
        cpu_pct: Vec::new(),
        pinned: Vec::new(),
        turn_ms: 0,
        comparisons: Vec::new(),
    }
}

/// What a kept round says: each series' figures for its line, and the CPU others took and
/// the hypervisor stole during each series' slice (percent).
struct RoundLine {
    said: Vec<String>,
    cpu: Vec<Option<[f64; 2]>>,
}

/// Keeps a round's slices in the order they were measured, their figures added to
/// `rounds`. Err: why the point stops (a slice failed or is missing, an interrupt, records
/// that can no longer be written).
fn keep_round(
    r: &mut Runner<'_>,
    mut slices: Vec<Option<Slice>>,
    order: &[usize],
    series: &[Series],
    rounds: &mut [Rounds],
) -> Result<RoundLine, Stopped> {
    let mut line = RoundLine {
        said: Vec::new(),
        cpu: vec![None; series.len()],
    };
    let stop = |r: &mut Runner<'_>| {
        if crate::interrupt::requested() {
            r.interrupt();
        }
        if r.interrupted() {
            Stopped::Interrupted
        } else {
            Stopped::Failed
        }
    };
    for &i in order {
        let Some(s) = slices[i].take() else {
            return Err(stop(r));
        };
        let ok = s.ok();
        if ok {
            push(&mut rounds[i], &s.rec, s.shares.map(|c| c.0));
            line.cpu[i] = s.shares.map(|(o, st)| [r4(o * 100.0), r4(st * 100.0)]);
            line.said.push(format!(
                "{} {:.1} tps{}",
                series[i].key,
                s.rec.tps,
                s.shares
                    .map(|(o, _)| format!(" (others {:.0} % CPU)", o * 100.0))
                    .unwrap_or_default()
            ));
        }
        let kept = r.keep(s.rec, &s.point.id, s.point.rate);
        if !ok || !kept {
            return Err(stop(r));
        }
    }
    Ok(line)
}

/// Why a point stops at look `n`, if it does: every comparison decided, or every undecided
/// one beyond what the point's budget could decide (its time goes to the points after it).
fn stop_at_look(
    verdicts: &[PairedPoint],
    n: u32,
    schedule: &Schedule,
    threshold_pct: f64,
) -> Option<Stopped> {
    if verdicts.iter().all(paired::decided) {
        return Some(Stopped::Decided);
    }
    verdicts
        .iter()
        .all(|v| paired::decided(v) || paired::futile(v, n, schedule.last(), threshold_pct))
        .then_some(Stopped::Futile)
}

/// The point's comparisons from its verdicts, with the budget an undecided one would need.
fn conclude(out: &mut Cell, verdicts: Vec<PairedPoint>, series: &[Series]) {
    let per_round = out.seconds / out.rounds.max(1) as f64;
    for (k, v) in verdicts.into_iter().enumerate() {
        let needed = v
            .metrics
            .iter()
            .filter(|j| j.judged)
            .filter_map(|j| j.rounds_needed)
            .max();
        out.comparisons.push(Comparison {
            series: series[k + 1].key.clone(),
            verdict: v.verdict,
            budget_needed_s: (!v.verdict.is_decided())
                .then(|| needed.map(|n| (n as f64 * per_round).ceil() as u64))
                .flatten(),
            metrics: v.metrics,
        });
    }
}

/// What `rounds` rounds of `series` slices take, with each series' warmup and the moment
/// between slices: the time a budget is charged for a point of synthetic series.
fn rounds_taken_s(spec: &crate::pipeline::spec::SweepSpec, series: usize, rounds: u32) -> f64 {
    let d = &spec.run.design;
    series as f64 * (spec.run.warmup_s as f64 + rounds as f64 * (d.slice_s as f64 + SLICE_SETUP_S))
}

/// Every candidate against the baseline (series 0), over the rounds both completed.
/// `after` is the rounds measured: the look whose level the intervals are drawn at.
fn judge(
    rounds: &[Rounds],
    schedule: &Schedule,
    after: u32,
    threshold_pct: f64,
) -> Vec<PairedPoint> {
    let miss = schedule.miss_at(after);
    rounds[1..]
        .iter()
        .map(|c| {
            let n = rounds[0].tps.len().min(c.tps.len());
            let cut = |x: &Rounds| Rounds {
                tps: x.tps[..n].to_vec(),
                p95: x.p95[..n].to_vec(),
                p99: x.p99[..n].to_vec(),
                events: x.events[..n].to_vec(),
                others: x.others[..n.min(x.others.len())].to_vec(),
            };
            paired::judge_point(&cut(&rounds[0]), &cut(c), threshold_pct, miss)
        })
        .collect()
}
