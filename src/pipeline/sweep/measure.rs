//! The measuring seam: how one point of the sequential design is measured — by the native
//! engine in this process, by the sysbench binary, by client processes (here or as pods of a
//! cluster), or by a synthetic target's model — chosen once per point (`Measure::of`); each
//! gives back one `Measured`, and the sweep loop knows nothing else of them.

use super::block::Block;
use super::servers::synthetic::Synthetic;
use super::sysbench_driver;
use super::window::{self, Window};
use crate::engine::exec::{self, IntervalStats, Observer, RunReport};
use crate::pipeline::plan::Point;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::distributed::{Executor, Kube};
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::LoadDriver;
use crate::pipeline::spec::SweepSpec;
use std::path::Path;

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

    /// Whether a record of this measurement has a client CPU share worth showing (none for
    /// a model).
    pub fn has_client(&self) -> bool {
        !matches!(self, Measure::Synthetic(_))
    }

    /// Whether the point's client ran on this host, its CPU known: then what the rest of the
    /// host's processes took meanwhile can be told from /proc/stat.
    pub fn client_here(&self) -> bool {
        matches!(
            self,
            Measure::Native(_) | Measure::Sysbench(_) | Measure::LocalClients(_)
        )
    }

    /// Measures the point. `rec` receives what only sysbench's output holds.
    pub async fn run(
        &self,
        spec: &SweepSpec,
        p: &Point,
        rec: &mut PointRecord,
        (run_id, run_dir, keep_k8s): (&str, &Path, bool),
        observer: &mut dyn Observer,
    ) -> anyhow::Result<Measured> {
        let options = |c: &ConnInfo| window::config(spec, p, Window::Point, Some(c));
        let cpu0 = crate::usage::self_cpu_seconds();
        let spent = move || crate::usage::self_cpu_seconds() - cpu0;
        let percentile = |c: &ConnInfo| options(c).percentile.max(1);
        Ok(match self {
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
                let o = window::config(spec, p, Window::Point, None);
                let report = s.measure(&p.target, p.repeat, &o).await;
                for i in &report.intervals {
                    observer.interval(i);
                }
                Measured::Report {
                    report: Box::new(report),
                    cpu_s: 0.0,
                    skew_ms: None,
                }
            }
        })
    }
}
