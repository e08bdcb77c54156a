//! A synthetic target: no server, a model (server/synthetic.rs) that computes each
//! measurement on the run's virtual clock; its preflight holds the sweep to the model's
//! connection limit as a server's would.

use crate::pipeline::preflight::{self, Finding, Needs, Severity};
use crate::pipeline::server::mycnf;
use crate::pipeline::server::synthetic::Model;
use crate::pipeline::spec::Config;
use crate::pipeline::sweep::block::{Block, RunState, Server};
use futures::future::BoxFuture;

pub struct Synthetic {
    pub model: crate::pipeline::server::synthetic::Model,
    pub config: String,
    pub clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub run_seq: u64,
}

impl Synthetic {
    /// Measures `o` for the point (target, config, repeat) at the clock's time, and moves the
    /// clock on by what a real run would have taken (warmup and time). With `real_time` it
    /// also takes that time, and an interrupt ends it with the seconds measured so far.
    pub async fn measure(
        &self,
        target: &str,
        repeat: u32,
        o: &crate::engine::config::EngineConfig,
    ) -> crate::engine::exec::RunReport {
        use std::sync::atomic::Ordering::Relaxed;
        let took_ms = (o.warmup_s + o.time_s.max(1)) * 1000;
        let at_ms = self.clock.fetch_add(took_ms, Relaxed);
        let measure = |o: &crate::engine::config::EngineConfig| {
            self.model
                .measure(&crate::pipeline::server::synthetic::Measure {
                    run: self.run_seq,
                    target,
                    config: &self.config,
                    repeat,
                    at_s: at_ms as f64 / 1000.0,
                    o,
                })
        };
        if !self.model.real_time {
            return measure(o);
        }
        let started = std::time::Instant::now();
        let whole = std::time::Duration::from_millis(took_ms);
        while started.elapsed() < whole && !crate::interrupt::requested() {
            let left = whole.saturating_sub(started.elapsed());
            tokio::time::sleep(left.min(std::time::Duration::from_millis(50))).await;
        }
        if !crate::interrupt::requested() {
            return measure(o);
        }
        // Cut short: the whole seconds measured after the warmup, or nothing.
        let measured = started.elapsed().as_secs().saturating_sub(o.warmup_s);
        let mut cut = o.clone();
        cut.time_s = measured.max(1);
        let mut r = measure(&cut);
        if measured == 0 {
            r.totals = Default::default();
            r.per_thread
                .iter_mut()
                .for_each(|c| *c = Default::default());
            r.hist.reset();
            r.intervals.clear();
            r.interval_hists.clear();
            r.min_max_ns = None;
            r.window_s = 0.0;
        }
        r.elapsed_s = started.elapsed().as_secs_f64().min(r.elapsed_s);
        r.interrupted = true;
        r
    }

    /// The share of the host's CPU the model's neighbour took during the measurement of `o`
    /// for (target, repeat), percent: the record's `others_cpu_pct`; None without one.
    pub fn others_pct(
        &self,
        target: &str,
        repeat: u32,
        o: &crate::engine::config::EngineConfig,
    ) -> Option<f64> {
        self.model
            .neighbour_pct(&crate::pipeline::server::synthetic::Measure {
                run: self.run_seq,
                target,
                config: &self.config,
                repeat,
                at_s: 0.0,
                o,
            })
            .map(crate::pipeline::results::r4)
    }
}

impl Server for Synthetic {
    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
        // A model has nothing to start: a cold start is the same model.
        Box::pin(async move { (self as Box<dyn Server>, Ok(())) })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The model's own finding, and the sweep held to its connection limit.
pub(super) fn preflight(target: &str, m: &Model, n: &Needs) -> Vec<Finding> {
    let mut all = vec![Finding {
        target: target.to_string(),
        severity: Severity::Info,
        check: "server",
        message: format!("synthetic (seed {}): no server; its points are computed from the model, in virtual time", m.seed),
        max_threads: None,
    }];
    let facts = preflight::ServerFacts {
        max_connections: m.max_connections.map_or(u64::MAX, u64::from),
        max_prepared_stmt_count: u64::MAX,
        ..Default::default()
    };
    all.extend(preflight::capacity_findings(target, &facts, n));
    all
}

/// A synthetic target's block: nothing to start; servers/<key>/ records the model (its
/// parameters as the variables, so the report's variables diff shows what differs between
/// two models) and the config's variables, which the model does not read.
pub(super) fn open(
    key: String,
    model: Model,
    config: &Config,
    st: &RunState,
) -> anyhow::Result<Block> {
    let version = format!("synthetic (seed {})", model.seed);
    let params = serde_json::to_value(&model)?;
    let mut vars: Vec<(String, String)> = params
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (format!("synthetic.{k}"), v.to_string()))
        .collect();
    for (k, v) in &config.vars {
        vars.push((k.clone(), mycnf::cnf_value(v)));
    }
    crate::pipeline::results::write_server(&st.servers_dir, &key, &version, &vars, None)?;
    Ok(Block {
        key,
        conn: None,
        version,
        error: None,
        restart_per_point: false,
        proxy: None,
        costs: Default::default(),
        live: Some(Box::new(Synthetic {
            model,
            config: config.name.clone(),
            clock: st.clock.clone(),
            run_seq: st.run_seq,
        })),
    })
}
