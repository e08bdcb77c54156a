//! The measuring seam: how every design measures a point over a window (`Window`) — by the
//! native engine in this process, on connections it opens or on a paired point's open ones,
//! by the sysbench binary, by client processes (here or as pods of a cluster), or by a
//! synthetic target's model — chosen once per point (`Measure::of`, or `Measure::on_rig`
//! for a paired point's slices, turns and warm-ups); each gives back one `Measured`, which the window's
//! bracket (bracket.rs) turns into the record's figures and status, one way for every design.

use super::block::Block;
use super::servers::synthetic::Synthetic;
use super::sysbench_driver;
use super::window::{self, Seat, Window};
use crate::engine::exec::{self, IntervalStats, Observer, RunReport};
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::distributed::{Executor, Kube};
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::LoadDriver;
use crate::pipeline::spec::SweepSpec;
use std::path::Path;

/// Where a measurement's files go: the run's id and directory, and whether a cluster's
/// finished Job is kept (`--keep-k8s`).
pub(super) type RunAt<'a> = (&'a str, &'a Path, bool);

/// One point's way of being measured.
pub(super) enum Measure<'a> {
    /// The native engine, in this process.
    Native(&'a ConnInfo),
    /// The sysbench binary (`drivers = ["sysbench"]`).
    Sysbench(&'a ConnInfo),
    /// `clients > 1` `sweepbench agent` processes on this machine.
    LocalClients(&'a ConnInfo),
    /// `clients > 1` pods of an Indexed Job.
    Kubernetes(&'a ConnInfo, &'a Kube),
    /// No server: the model computes the point.
    Synthetic(&'a Synthetic),
    /// The native engine on connections a paired point opened and warmed once for its
    /// slices (and a duet's, and an interleaved round's turns).
    Open(&'a mut exec::Rig, &'a ConnInfo),
}

/// What a measurement gives back.
pub(super) enum Measured {
    /// The engine's report (native, clients, synthetic), the client CPU it cost, and the
    /// spread of several clients' starts.
    Report {
        report: Box<RunReport>,
        cpu_s: f64,
        skew_ms: Option<f64>,
    },
    /// sysbench's own figures, already in the record, and its interval lines.
    Sysbench { intervals: Vec<IntervalStats> },
}

/// Whether block `b`'s server is a model, whose measurements are computed.
pub(super) fn is_model(b: &Block) -> bool {
    b.live_as::<Synthetic>().is_some()
}

impl<'a> Measure<'a> {
    /// How `p` is measured on its open block; None when the block has nothing to measure on.
    pub fn of(spec: &'a SweepSpec, p: &Point, b: &'a Block) -> Option<Measure<'a>> {
        if let Some(s) = b.live_as::<Synthetic>() {
            return Some(Measure::Synthetic(s));
        }
        let c = b.conn.as_ref()?;
        Some(match (p.driver, p.clients > 1, &spec.executor) {
            (LoadDriver::Sysbench, _, _) => Measure::Sysbench(c),
            (_, false, _) => Measure::Native(c),
            (_, true, Executor::Local) => Measure::LocalClients(c),
            (_, true, Executor::Kubernetes(k)) => Measure::Kubernetes(c, k),
        })
    }

    /// How a slice, a turn or a warming of block `b` is measured: on the connections its
    /// paired point opened (`rig`), or by its model, which needs none. Err: why it cannot be.
    pub fn on_rig(
        b: &'a Block,
        rig: &'a mut Result<exec::Rig, String>,
    ) -> Result<Measure<'a>, String> {
        if let Some(s) = b.live_as::<Synthetic>() {
            return Ok(Measure::Synthetic(s));
        }
        if let Some(e) = &b.error {
            return Err(e.clone());
        }
        match (rig, b.conn.as_ref()) {
            (Err(e), _) => Err(e.clone()),
            (Ok(_), None) => Err("no connection".into()),
            (Ok(rig), Some(c)) => Ok(Measure::Open(rig, c)),
        }
    }

    /// What a window of this measurement can say of the CPU: a model has no client, and only
    /// a client on this host lets the rest of the host's load be told apart.
    pub fn seat(&self) -> Seat {
        Seat {
            has_client: !matches!(self, Measure::Synthetic(_)),
            alone_here: matches!(
                self,
                Measure::Native(_)
                    | Measure::Sysbench(_)
                    | Measure::LocalClients(_)
                    | Measure::Open(..)
            ),
        }
    }

    /// Measures point `p` over `window`. `rec` receives what only sysbench's output holds.
    /// The sysbench binary and client processes measure whole points only (the sweep file's
    /// check keeps them out of the paired designs).
    #[allow(clippy::too_many_arguments)]
    pub async fn run(
        &mut self,
        spec: &SweepSpec,
        p: &Point,
        window: Window,
        rec: &mut PointRecord,
        (run_id, run_dir, keep_k8s): RunAt<'_>,
        observer: &mut dyn Observer,
    ) -> anyhow::Result<Measured> {
        let options = |c: &ConnInfo| window::config(spec, p, window, Some(c));
        let cpu0 = crate::usage::self_cpu_seconds();
        let spent = move || crate::usage::self_cpu_seconds() - cpu0;
        let percentile = |c: &ConnInfo| options(c).percentile.max(1);
        let whole = matches!(window, Window::Point);
        Ok(match self {
            Measure::Sysbench(_) | Measure::LocalClients(_) | Measure::Kubernetes(..) if !whole => {
                anyhow::bail!("{}: only the native engine measures slices", p.id)
            }
            Measure::Sysbench(c) => {
                let intervals =
                    sysbench_driver::run_point(spec, p.workload, p.threads, c, rec, run_dir)
                        .await?;
                Measured::Sysbench { intervals }
            }
            Measure::Native(c) => {
                let report = exec::run(&options(c), observer).await?;
                Measured::Report {
                    report: Box::new(report),
                    cpu_s: spent(),
                    skew_ms: None,
                }
            }
            Measure::LocalClients(c) => {
                let m = crate::pipeline::distributed::clients::local::run(
                    spec,
                    p,
                    c,
                    percentile(c),
                    observer,
                )
                .await?;
                Measured::Report {
                    report: Box::new(m.report),
                    cpu_s: m.cpu_s,
                    skew_ms: Some(m.skew_ms),
                }
            }
            Measure::Kubernetes(c, k) => {
                let m = crate::pipeline::distributed::k8s::run_point(
                    spec,
                    k,
                    p,
                    run_id,
                    (percentile(c), keep_k8s),
                    observer,
                )
                .await?;
                Measured::Report {
                    report: Box::new(m.report),
                    cpu_s: m.cpu_s,
                    skew_ms: Some(m.skew_ms),
                }
            }
            Measure::Synthetic(s) => {
                let o = window::config(spec, p, window, None);
                let report = s.measure(&p.target, p.repeat, &o).await;
                // A model's neighbour is recorded as a real one is measured.
                rec.others_cpu_pct = s.others_pct(&p.target, p.repeat, &o);
                rec.steal_pct = rec.others_cpu_pct.map(|_| 0.0);
                for i in &report.intervals {
                    observer.interval(i);
                }
                Measured::Report {
                    report: Box::new(report),
                    cpu_s: 0.0,
                    skew_ms: None,
                }
            }
            Measure::Open(rig, c) => {
                let o = window::config(spec, p, window, Some(c));
                let report = match window {
                    Window::Turn(d) => rig.run_for(&o, d, observer).await?,
                    _ => rig.run(&o, observer).await?,
                };
                Measured::Report {
                    report: Box::new(report),
                    cpu_s: spent(),
                    skew_ms: None,
                }
            }
        })
    }
}
