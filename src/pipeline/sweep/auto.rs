//! `threads = "auto"` in a run: a slot becomes the thread counts its series' search chooses
//! (repeat 1, one point at a time, from what that series measured so far, resumed runs
//! included), or the counts repeat 1 chose (every later repeat). Each search's probes and why
//! it stopped go to adaptive.json in the run directory.

use super::runner::Runner;
use crate::pipeline::adaptive::{Next, Probe, Step};
use crate::pipeline::plan::Point;
use crate::pipeline::results::{Driver, PointRecord, PointStatus};

/// Whether `r` is a record of `slot`'s series (its target, config, workload, driver and
/// client count), read from the record's fields, not its id.
fn of_series(slot: &Point, r: &PointRecord) -> bool {
    r.target == slot.target
        && r.config == slot.config
        && r.workload == slot.workload.name()
        && r.driver == Driver::from(slot.driver)
        && r.client_count() == slot.clients.max(1)
}

/// Repeat `repeat`'s closed-loop records of `slot`'s series, in the order they ran.
fn records<'a>(all: &'a [PointRecord], slot: &Point, repeat: u32) -> Vec<&'a PointRecord> {
    all.iter()
        .filter(|r| r.repeat == repeat && !r.is_sla_step() && of_series(slot, r))
        .collect()
}

fn probe(r: &PointRecord) -> Probe {
    Probe {
        threads: r.threads,
        tps: r.tps,
        p99_ms: r.lat_p99_ms,
        clean: r.status == PointStatus::Ok && !crate::pipeline::judge::scaling::too_many_errors(r),
    }
}

/// Runs the points of one auto slot. Returns whether the run goes on, and how many points
/// this call measured.
pub(super) async fn expand(r: &mut Runner<'_>, slot: &Point) -> (bool, u64) {
    let Some(mut auto) = r.spec.run.auto.clone() else {
        return (true, 0);
    };
    // Every client process of the slot needs a thread.
    auto.from = auto.from.max(slot.clients);
    let cap = r.limits.get(&slot.target).copied().unwrap_or(u32::MAX);
    let series = slot.series();
    let mut used = 0;
    if slot.repeat == 1 {
        loop {
            let probes: Vec<Probe> = records(r.records(), slot, 1)
                .into_iter()
                .map(probe)
                .collect();
            match auto.next(cap, &probes) {
                Next::Probe(n) => {
                    used += 1;
                    if !r.point(&slot.at(n)).await {
                        return (false, used);
                    }
                }
                Next::Done(why) => {
                    let taken: Vec<u32> = probes.iter().map(|p| p.threads).collect();
                    r.note(format!(
                        "{series}: adaptive search done after {} thread counts ({taken:?}): {why}",
                        taken.len()
                    ));
                    let steps: Vec<u64> = taken.iter().map(|&t| t as u64).collect();
                    r.log_search(&series, &steps, &why);
                    return (true, used);
                }
            }
        }
    }
    let mut counts: Vec<u32> = records(r.records(), slot, 1)
        .iter()
        .map(|x| x.threads)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    for n in counts {
        let p = slot.at(n);
        if r.records().iter().any(|x| x.point_id == p.id) {
            continue;
        }
        used += 1;
        if !r.point(&p).await {
            return (false, used);
        }
    }
    (true, used)
}

/// Runs one SLA search: rates by bisection under the series' closed-loop peak, each an
/// open-loop point. Returns whether the run goes on, and how many points it measured.
pub(super) async fn sla(r: &mut Runner<'_>, slot: &Point) -> (bool, u64) {
    let Some(sla) = r.spec.run.sla.clone() else {
        return (true, 0);
    };
    let series = slot.series();
    let closed: Vec<&PointRecord> = r
        .records()
        .iter()
        .filter(|x| of_series(slot, x) && !x.is_sla_step() && x.status == PointStatus::Ok)
        .collect();
    let Some(best) = closed.iter().max_by(|a, b| a.tps.total_cmp(&b.tps)) else {
        r.note(format!(
            "{series}: no closed-loop point ran ok: no SLA search"
        ));
        return (true, 0);
    };
    let (peak, peak_threads) = (best.tps, best.threads);
    let cap = r.limits.get(&slot.target).copied().unwrap_or(u32::MAX);
    let threads = sla.threads_for(peak_threads).min(cap).max(slot.clients);
    let mut used = 0;
    loop {
        let steps: Vec<Step> = r
            .records()
            .iter()
            .filter(|x| x.is_sla_step() && of_series(slot, x))
            .map(|x| Step {
                rate: x.rate,
                meets: crate::pipeline::judge::scaling::meets_sla(x, sla.p99_ms),
            })
            .collect();
        match sla.next(peak, &steps) {
            Next::Probe(rate) => {
                used += 1;
                if !r.point(&slot.at_rate(rate, threads)).await {
                    return (false, used);
                }
            }
            Next::Done(why) => {
                let rates: Vec<u64> = steps.iter().map(|s| s.rate).collect();
                r.note(format!(
                    "{series}: SLA search done after {} rates ({rates:?}): {why}",
                    rates.len()
                ));
                let key = format!("{series} sla");
                r.log_search(&key, &rates, &why);
                return (true, used);
            }
        }
    }
}
