//! `sweepbench run`: preflight, the run directory, then every point in plan order — one
//! target × config block at a time — with progress, per-point records and the final report.

use super::measure::{Measure, Measured};
use super::record::{fail_if_empty, fill, record, write_samples};
use super::tally::Tally;
use super::{block, load, point_grace_s, preflight_all, print_findings, SweepArgs};
use crate::engine::exec::{self, IntervalStats, Observer, RunReport};
use crate::exit::Exit;
use crate::pipeline::plan::{Plan, Point, Slot};
use crate::pipeline::preflight::{Finding, OnCapacity, Severity};
use crate::pipeline::results::{r4, Manifest, PointRecord, PointStatus, RunDir, Shard, Summary};
use crate::pipeline::spec::target::TargetKind;
use crate::pipeline::spec::SweepSpec;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;

/// Prints above the progress bar on a terminal, plainly otherwise (cron, pipes, CI), where
/// the bar itself is hidden.
pub(super) fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        println!("{line}");
    } else {
        bar.println(line);
    }
}

struct PointObserver<'a> {
    bar: &'a ProgressBar,
    quiet: bool,
    percentile: u32,
    id: String,
    /// Print every this many seconds' sample (`report_interval`; 0: none).
    print_every: u64,
    /// Told when the workers start (the warmup's start): the counters' window follows it.
    started: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Observer for PointObserver<'_> {
    fn threads_started(&mut self) {
        if let Some(tx) = self.started.take() {
            let _ = tx.send(());
        }
    }

    fn interval(&mut self, s: &IntervalStats) {
        let second = s.t_s.round() as u64;
        if !self.quiet && self.print_every > 0 && second > 0 && second % self.print_every == 0 {
            say(
                self.bar,
                // The figures are of the second just ended, not of the whole interval since
                // the last line: say so, or a reader averages them.
                format!(
                    "{} {} (figures of that second)",
                    self.id,
                    s.sysbench_line(self.percentile)
                ),
            );
        }
    }
}

/// `sweepbench run`.
pub async fn run(a: &SweepArgs) -> anyhow::Result<Exit> {
    let (spec, plan) = load(a)?;
    if spec.run.design.paired() && a.resume.is_some() {
        // A point's rounds, their orders and its looks are one experiment: half of one and
        // half of another would pair slices measured hours apart.
        anyhow::bail!("--resume: a paired run cannot be continued (its points' rounds are judged together); run the sweep again");
    }
    // One run of a sweep at a time: nightly jobs overlap when one runs long.
    let _lock = crate::pipeline::results::nightly::Lock::take(&a.results_dir.join(&spec.name))?;
    // Settings a killed run left changed on external targets go back first, or nothing runs.
    let journal = super::vars::Journal::at(&a.results_dir.join(&spec.name));
    let recovered = journal
        .recover(|t| match super::target_kind(&spec, t) {
            Ok(TargetKind::External(c)) => Some(c),
            _ => None,
        })
        .await?;
    for line in recovered {
        eprintln!("sweepbench run: {line}");
    }
    let (findings, limits) = preflight_all(&spec, &plan, a.on_capacity).await?;
    let blocking: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Blocking)
        .collect();
    let capacity_only = blocking.iter().all(|f| f.max_threads.is_some());
    let skippable = a.on_capacity == OnCapacity::Skip && capacity_only;
    if !blocking.is_empty() && !skippable {
        print_findings(&findings);
        anyhow::bail!(
            "{} blocking finding(s); nothing was run (see `sweepbench check`)",
            blocking.len()
        );
    }
    if !a.quiet {
        print_findings(&findings);
    }
    let opened = match &a.resume {
        Some(run) => RunDir::resume(run, &spec),
        None => RunDir::create(&a.results_dir, &spec),
    };
    let mut dir = opened?;
    let done: std::collections::BTreeSet<String> =
        dir.points().iter().map(|p| p.point_id.clone()).collect();
    let mut plan = plan;
    plan.points.retain(|p| !done.contains(&p.id));
    plan.host.retain(|p| !done.contains(&p.id));
    if a.resume.is_some() && !a.quiet {
        let left = if spec.run.auto.is_some() {
            "the adaptive searches go on from there".to_string()
        } else {
            format!("{} to run", plan.points.len())
        };
        println!(
            "resuming {}: {} point(s) done, {left}",
            dir.path.display(),
            done.len(),
        );
    }
    let started_at = chrono::Utc::now();
    // Who measured: the host and its speed now, so compare can tell a slower VM from a slower
    // server.
    let host = crate::pipeline::results::host::fingerprint(Some(&dir.path));
    dir.write_manifest(&manifest(
        &spec,
        &plan,
        &dir.run_id,
        (started_at, None),
        &host,
        None,
        a.shard,
    ))?;
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(plan.max_points(&spec))
    };
    // What is left to measure by the plan, not indicatif's rate estimate, which swung with
    // every server start and prepare: a point is its warmup and duration, a paired slice its
    // slice (plus the moment it takes to start and stop).
    let per_point_s = if spec.run.design.paired() {
        spec.run.design.slice_s as f64 + super::paired::SLICE_SETUP_S
    } else {
        (spec.run.warmup_s + spec.run.duration_s) as f64
    };
    bar.set_style(
        ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30} {pos}/{len} points, about {left} of measuring left {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "left",
            move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let left = s.len().unwrap_or(0).saturating_sub(s.pos()) as f64 * per_point_s;
                let _ = write!(
                    w,
                    "{}",
                    crate::pipeline::plan::format_duration(left.ceil() as u64)
                );
            },
        ),
    );
    let threshold = a.threshold_pct;
    let t = run_points(
        &spec,
        &plan,
        &limits,
        &mut dir,
        &bar,
        (a.quiet, a.keep_k8s),
        threshold,
    )
    .await;
    bar.finish_and_clear();
    let end = manifest(
        &spec,
        &plan,
        &dir.run_id,
        (started_at, Some(chrono::Utc::now())),
        &host,
        Some(&t),
        a.shard,
    );
    if let Err(e) = dir.write_manifest(&end) {
        eprintln!("sweepbench run: {e:#}");
    }
    // Several series measured apart: judged once here, kept for the report and the gate.
    let within = if t.interrupted {
        None
    } else {
        super::gate::judge_unpaired(&spec, &dir, threshold).unwrap_or_else(|e| {
            eprintln!("sweepbench run: judging the series against the baseline failed: {e:#}");
            None
        })
    };
    let (report, why) = match crate::pipeline::report::write(&dir.path, None) {
        Ok(m) => (
            format!("; report: {}", dir.path.join("report.html").display()),
            m.why,
        ),
        Err(e) => {
            eprintln!("sweepbench run: writing the report failed: {e:#}");
            (String::new(), Vec::new())
        }
    };
    let mut summary = t.summary(&spec, &plan, &dir.path, (&report, &why));
    print!("{summary}");
    let mut regressed = false;
    if let (Some((th, against)), false) = (&a.fail_on_regression, t.interrupted) {
        let (text, failing) = super::gate::apply(&spec, &dir, (*th, against), a.fail_on, within)?;
        summary.push_str(&format!("\n{text}"));
        regressed = failing;
    }
    super::gate::keep_summary(&dir.path, &summary);
    Ok(if t.interrupted {
        Exit::Interrupted
    } else if t.failed > 0 || !t.unwritten.is_empty() {
        Exit::Failed
    } else if regressed {
        Exit::Regression
    } else {
        Exit::Ok
    })
}

/// Runs the plan's points in order, expanding `threads = "auto"` slots as they come (see
/// `auto`). Points above a target's capacity limit (from `--on-capacity=skip`) are recorded
/// as skipped in their place.
async fn run_points(
    spec: &SweepSpec,
    plan: &Plan,
    limits: &BTreeMap<String, u32>,
    dir: &mut RunDir,
    bar: &ProgressBar,
    (quiet, keep_k8s): (bool, bool),
    threshold_pct: f64,
) -> Tally {
    let st = match block::RunState::new(&dir.path, quiet) {
        Ok(s) => s,
        Err(e) => {
            say(bar, format!("error: {e:#}"));
            return Tally {
                failed: plan.points.len() as u32,
                ..Tally::default()
            };
        }
    };
    let mut r = Runner {
        spec,
        plan,
        limits,
        dir,
        bar,
        quiet,
        t: Tally::default(),
        st,
        current: None,
        keep_k8s,
        threshold_pct,
    };
    crate::interrupt::install();
    if let Some(line) = spec.run.design.said() {
        r.note(line);
    }
    // The machine's own curve first, while no server of the sweep loads it.
    if !super::host::run(&mut r).await {
        r.t.not_run = plan.max_points(spec).saturating_sub(r.t.total()) as u32;
        return r.t;
    }
    if spec.run.design.paired() {
        super::paired::run(&mut r).await;
        return r.t;
    }
    let mut left = plan.max_points(spec) - plan.host.len() as u64;
    for p in &plan.points {
        let go_on = if p.is_slot() {
            let per_slot = p.max_points(spec);
            let (go_on, used) = match p.slot {
                Slot::Sla => super::auto::sla(&mut r, p).await,
                _ => super::auto::expand(&mut r, p).await,
            };
            // A search that ended early frees the rest of its share of the bar.
            let unused = per_slot.saturating_sub(used);
            r.bar
                .set_length(r.bar.length().unwrap_or(0).saturating_sub(unused));
            left -= per_slot;
            go_on
        } else {
            left -= 1;
            r.point(p).await
        };
        if !go_on {
            break;
        }
    }
    if let Some(prev) = r.current.take() {
        let k = prev.key.clone();
        if let Err(e) = prev.close().await {
            say(bar, format!("warning: closing {k}: {e:#}"));
        }
    }
    r.t.not_run = left as u32;
    r.t
}

/// What runs the points: the open block, the tally, where records go.
pub(super) struct Runner<'a> {
    pub spec: &'a SweepSpec,
    pub plan: &'a Plan,
    pub limits: &'a BTreeMap<String, u32>,
    pub dir: &'a mut RunDir,
    pub bar: &'a ProgressBar,
    quiet: bool,
    pub t: Tally,
    st: block::RunState,
    current: Option<block::Block>,
    /// --keep-k8s.
    keep_k8s: bool,
    /// The smallest change that matters (--fail-on-regression's, or 5 %), percent.
    pub threshold_pct: f64,
}

impl Runner<'_> {
    /// Prints a line (above the bar on a terminal) unless quiet.
    pub fn note(&self, line: String) {
        if !self.quiet {
            say(self.bar, line);
        }
    }

    /// Measures one point (opening its block first when it is another target × config) and
    /// appends its record. False when the run must stop (an interrupt, or records that can
    /// no longer be written).
    pub async fn point(&mut self, p: &Point) -> bool {
        if crate::interrupt::requested() {
            self.t.interrupted = true;
            return false;
        }
        let (spec, bar, quiet) = (self.spec, self.bar, self.quiet);
        bar.set_message(p.id.clone());
        let mut rec = record(&self.dir.run_id, p, "");
        if self
            .limits
            .get(&p.target)
            .is_some_and(|&max| p.threads > max)
        {
            rec.status = PointStatus::Skipped;
            rec.error = format!(
                "{} cannot take {} threads (--on-capacity=skip)",
                p.target, p.threads
            );
            self.t.skipped += 1;
        } else {
            let key = format!("{}/{}", p.target, p.config);
            if self.current.as_ref().map(|b| b.key.as_str()) != Some(key.as_str()) {
                if let Some(prev) = self.current.take() {
                    let k = prev.key.clone();
                    if let Err(e) = prev.close().await {
                        say(bar, format!("warning: closing {k}: {e:#}"));
                    }
                }
                let config = spec
                    .configs
                    .iter()
                    .find(|x| x.name == p.config)
                    .expect("planned config exists");
                if !quiet {
                    say(bar, format!("starting {key}"));
                }
                self.current = Some(
                    block::Block::open(spec, self.plan, &p.target, config, &mut self.st).await,
                );
            }
            let b = self.current.as_mut().expect("block opened above");
            rec.server_version = b.version.clone();
            run_one(spec, p, b, &mut rec, self.dir, bar, (quiet, self.keep_k8s)).await;
        }
        self.keep(rec, &p.id, p.rate)
    }

    pub fn st_mut(&mut self) -> &mut block::RunState {
        &mut self.st
    }

    pub fn keep_samples(&mut self, p: &Point, r: &RunReport) {
        write_samples(self.dir, self.bar, &p.id, r);
    }

    /// Tallies a measured point, says how it went and appends its record. False when the run
    /// must stop (an interrupt, or records that can no longer be written).
    pub fn keep(&mut self, mut rec: PointRecord, id: &str, rate: u64) -> bool {
        let (bar, quiet) = (self.bar, self.quiet);
        if rec.status == PointStatus::Failed && crate::interrupt::requested() {
            // The point failed because of the interrupt (a load cut short, say).
            rec.status = PointStatus::Interrupted;
        }
        match rec.status {
            PointStatus::Ok => {
                self.t.ok += 1;
                // A paired run says each round in one line instead.
                let line = if rec.is_host() {
                    Some(format!(
                        "{id}: {:.2} events/s, p95 {:.2} ms",
                        rec.tps, rec.lat_p95_ms
                    ))
                } else {
                    (!self.spec.run.design.paired()).then(|| {
                        format!(
                            "{id}: {:.2} tps, {:.2} qps, p95 {:.2} ms",
                            rec.tps, rec.qps, rec.lat_p95_ms
                        )
                    })
                };
                if let Some(line) = line.filter(|_| !quiet) {
                    say(bar, line);
                }
            }
            PointStatus::Failed if rate > 0 && rec.error == exec::QUEUE_FULL => {
                // An SLA step the server could not keep up with: the search's answer "too
                // fast", not a broken point.
                self.t.overloaded += 1;
                self.note(format!(
                    "{id}: {rate} arrivals/s overflowed the arrival queue: misses the SLA"
                ));
            }
            PointStatus::Failed => {
                self.t.failed += 1;
                say(bar, format!("{id}: failed: {}", rec.error));
            }
            PointStatus::Interrupted => {
                self.t.interrupted = true;
                self.t.stopped += 1;
            }
            PointStatus::Skipped => {}
        }
        if let Err(e) = self.dir.append_point(&rec) {
            // The figures were measured: say them here, since the disk cannot take them,
            // and stop (every later point would be lost the same way).
            say(bar, format!("error: {id}: measured, not written: {e:#}"));
            self.t.unwritten.push(format!(
                "{id} {}: {:.2} tps, {:.2} qps, p95 {:.2} ms, {} transactions in {:.1} s{}",
                rec.status,
                rec.tps,
                rec.qps,
                rec.lat_p95_ms,
                rec.transactions,
                rec.duration_s,
                if rec.error.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", rec.error)
                }
            ));
            return false;
        }
        bar.inc(1);
        !self.t.interrupted
    }
}

/// Measures one point on the open block and fills its record.
async fn run_one(
    spec: &SweepSpec,
    p: &Point,
    b: &mut block::Block,
    rec: &mut PointRecord,
    dir: &mut RunDir,
    bar: &ProgressBar,
    (quiet, keep_k8s): (bool, bool),
) {
    rec.rate = if p.rate > 0 { p.rate } else { spec.run.rate };
    rec.status = PointStatus::Failed;
    if let Some(e) = &b.error {
        rec.error = e.clone();
        return;
    }
    if let Err(e) = b.before_point().await {
        rec.error = format!("restarting the server: {e:#}");
        return;
    }
    let srv0 = b.server_cpu_seconds();
    // The counters' reader leaves the block while `how` holds it, and comes back after.
    let (mut costs, pid) = (std::mem::take(&mut b.costs), b.server_pid());
    let Some(how) = Measure::of(spec, p, b) else {
        rec.error = "no connection to measure on".into();
        b.costs = costs;
        return;
    };
    let (started, workers_started) = tokio::sync::oneshot::channel();
    let warmup = spec
        .engine_config(p.workload, p.threads, Default::default())
        .warmup_s;
    let mut obs = PointObserver {
        bar,
        quiet,
        percentile: spec
            .engine_config(p.workload, p.threads, Default::default())
            .percentile
            .max(1),
        id: p.id.clone(),
        print_every: spec.run.report_interval_s,
        started: Some(started),
    };
    let run_dir = dir.path.clone();
    let (host0, began) = (crate::usage::host_cpu(), std::time::Instant::now());
    // The counters before the measured window: once the workers started and warmed up. A
    // measurement that never says its workers started (the sysbench binary, a model) keeps
    // none: the reading is given up when the measurement ends.
    costs.ready().await;
    costs.start_profile(pid, &p.id);
    let (measured, cost0) = {
        let window_start = async {
            workers_started.await.ok()?;
            tokio::time::sleep(std::time::Duration::from_secs(warmup)).await;
            costs.sample(pid).await
        };
        let measuring = how.run(spec, p, rec, (&dir.run_id, &run_dir, keep_k8s), &mut obs);
        tokio::pin!(window_start, measuring);
        let mut cost0 = None;
        let mut read = false;
        let measured = loop {
            tokio::select! {
                m = &mut measuring => break m,
                c = &mut window_start, if !read => (cost0, read) = (c, true),
            }
        };
        (measured, cost0)
    };
    let (host1, wall_s) = (crate::usage::host_cpu(), began.elapsed().as_secs_f64());
    let (has_client, client_here) = (how.has_client(), how.client_here());
    b.costs = costs;
    let produced = measured.is_ok();
    match measured {
        Err(e) => rec.set_error(&e),
        Ok(Measured::Sysbench { intervals }) => {
            if let Err(e) = dir.append_intervals(&p.id, &intervals) {
                rec.error = format!("per-second samples not written: {e:#}");
            }
        }
        Ok(Measured::Report {
            report,
            cpu_s,
            skew_ms,
        }) => {
            fill(rec, &report, cpu_s);
            rec.start_skew_ms = skew_ms.map(r4);
            write_samples(dir, bar, &p.id, &report);
            rec.status = status_of(spec, &report, rec);
        }
    }
    if produced {
        fail_if_empty(rec);
        rec.server_cpu_s = match (srv0, b.server_cpu_seconds()) {
            (Some(a), Some(z)) => Some(r4(z - a)),
            _ => None,
        };
        if let (true, Some(server_s)) = (client_here, rec.server_cpu_s) {
            let shares =
                super::record::host_shares(host0, host1, wall_s, rec.client_cpu_s + server_s);
            super::record::set_shares(rec, shares);
        }
        if has_client {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            rec.client_cpu_pct = crate::pipeline::results::client_cpu_pct(
                rec.client_cpu_s,
                rec.duration_s,
                rec.threads,
                cores,
            );
        }
    }
    super::cost::keep(&run_dir, b, cost0, rec, bar).await;
    if rec.status == PointStatus::Failed {
        if let Some(note) = b.revive(&rec.error).await {
            rec.error = format!("{} | {note}", rec.error);
        }
    }
}

/// A measured point's status from its report: failed (with why), interrupted or ok.
fn status_of(spec: &SweepSpec, r: &RunReport, rec: &mut PointRecord) -> PointStatus {
    match (&r.fatal, r.interrupted, r.unfinished) {
        (Some(f), _, _) => {
            rec.set_fatal(f);
            PointStatus::Failed
        }
        (None, _, Some(n)) => {
            rec.error = format!(
                "point timeout: {n} event(s) still running {:.0}s after the point's end; ended by forced shutdown",
                point_grace_s(spec)
            );
            PointStatus::Failed
        }
        (None, true, None) => PointStatus::Interrupted,
        (None, false, None) => PointStatus::Ok,
    }
}

/// manifest.json: what ran, where, when. Addresses are redacted.
fn manifest(
    spec: &SweepSpec,
    plan: &Plan,
    run_id: &str,
    (started, ended): (
        chrono::DateTime<chrono::Utc>,
        Option<chrono::DateTime<chrono::Utc>>,
    ),
    host: &crate::pipeline::results::host::Fingerprint,
    t: Option<&Tally>,
    shard: Option<(u32, u32)>,
) -> Manifest {
    let targets: Vec<serde_json::Value> = spec
        .targets
        .iter()
        .map(|x| match &x.kind {
            TargetKind::External(c) => {
                serde_json::json!({"name": x.name, "kind": "external", "url": c.redacted()})
            }
            TargetKind::Managed(m) => {
                serde_json::json!({"name": x.name, "kind": "managed", "server": m})
            }
            TargetKind::Synthetic(m) => {
                serde_json::json!({"name": x.name, "kind": "synthetic", "model": m})
            }
        })
        .collect();
    let value = |v: serde_json::Result<serde_json::Value>| v.ok();
    Manifest {
        sweep: Some(spec.name.clone()),
        description: Some(spec.description.clone()),
        run_id: Some(run_id.to_string()),
        started_at: Some(started),
        ended_at: ended,
        host: Some(host.clone()),
        data: value(serde_json::to_value(&spec.data)),
        run: value(serde_json::to_value(&spec.run)),
        workload_options: value(serde_json::to_value(spec.workload_options.given())),
        targets: Some(targets.into()),
        configs: value(serde_json::to_value(&spec.configs)),
        baseline: spec.baseline.clone(),
        plan: plan
            .host
            .iter()
            .map(|p| p.id.clone())
            .chain(plan.points.iter().map(|p| p.id.clone()))
            .collect(),
        shard: shard.map(|(index, of)| Shard { index, of }),
        summary: t.map(|t| Summary {
            ok: t.ok,
            failed: t.failed,
            sla_overloaded: t.overloaded,
            skipped: t.skipped,
            not_run: t.not_run,
            interrupted: t.interrupted,
            not_written: t.unwritten.clone(),
        }),
        ..Manifest::new()
    }
}
