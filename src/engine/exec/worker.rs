//! Worker threads: one OS thread per connection with a blocking socket, as sysbench runs
//! them, so a response wakes exactly the thread that waits for it with no scheduler between.
//! Each thread connects, reports ready, waits for the start, runs events and hands its
//! histogram to the reporter once per interval.

use super::{RunCtx, WorkerEnd};
use crate::engine::metrics::{self, Tally, WorkerHist};
use crate::engine::workload::rand::Rng;
use crate::engine::workload::session::{EventError, Session, SessionConfig};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// Stack of a worker thread: the event loop is shallow; only touched pages cost memory.
const STACK: usize = 256 * 1024;
/// Connections being opened at once: a burst of thousands of connects can trip SYN-flood
/// protection and the server's back_log.
const CONNECTING: usize = 64;

/// A counting semaphore for connection set-up.
pub struct Gate {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Gate {
    pub fn new() -> Gate {
        Gate {
            free: Mutex::new(CONNECTING),
            cv: Condvar::new(),
        }
    }

    fn pass<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut n = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *n == 0 {
            n = self.cv.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        *n -= 1;
        drop(n);
        let out = f();
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.cv.notify_one();
        out
    }
}

/// The start signal of each run on the open connections: a generation and its context, or
/// closed when the connections are no longer wanted (the run abandoned before it began, or a
/// rig dropped).
#[derive(Default)]
pub struct Go {
    state: Mutex<(u64, Option<Arc<RunCtx>>, bool)>,
    cv: Condvar,
}

impl Go {
    /// Starts the next run, or closes (`None`).
    pub fn set(&self, ctx: Option<Arc<RunCtx>>) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if g.2 {
            return;
        }
        match ctx {
            Some(c) => {
                g.0 += 1;
                g.1 = Some(c);
            }
            None => {
                g.2 = true;
                g.1 = None;
            }
        }
        self.cv.notify_all();
    }

    /// Waits for a run newer than `seen`; None once closed.
    fn wait(&self, seen: u64) -> Option<(u64, Arc<RunCtx>)> {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if g.2 {
                return None;
            }
            if g.0 > seen {
                return g.1.clone().map(|c| (g.0, c));
            }
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A worker's connection, once open: the server's id for it and the worker's thread id
/// (what a paired run pins side by side, `Rig::threads`).
#[derive(Debug, Clone, Copy)]
pub struct Opened {
    pub connection_id: u32,
    pub tid: i32,
}

/// What a worker thread needs besides its own index.
pub struct Links {
    pub cfg: Arc<SessionConfig>,
    pub gate: Arc<Gate>,
    pub go: Arc<Go>,
    pub ready: UnboundedSender<(usize, anyhow::Result<Opened>)>,
    pub hists: UnboundedSender<WorkerHist>,
    pub ends: UnboundedSender<Result<WorkerEnd, String>>,
}

/// Starts connection `i`'s thread.
pub fn spawn(i: usize, seed: u64, l: Arc<Links>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("worker-{i}"))
        .stack_size(STACK)
        .spawn(move || {
            if !l.cfg.opts.cpus.is_empty() {
                // Before connecting: the connection's buffers then live on these cores' node.
                let _ = crate::affinity::pin(0, &l.cfg.opts.cpus);
            }
            let session_seed = seed.wrapping_add(i as u64 * 0x9E37);
            let opened = l
                .gate
                .pass(|| Session::open(l.cfg.clone(), i, session_seed));
            let mut s = match opened {
                Ok(s) => {
                    let opened = Opened {
                        connection_id: s.connection_id(),
                        // SAFETY: gettid has no arguments and cannot fail.
                        tid: unsafe { libc::gettid() },
                    };
                    let _ = l.ready.send((i, Ok(opened)));
                    s
                }
                Err(e) => {
                    let _ = l.ready.send((i, Err(e)));
                    return;
                }
            };
            // One run, or many on the same connection (a rig's slices).
            let mut seen = 0;
            while let Some((generation, ctx)) = l.go.wait(seen) {
                seen = generation;
                if ctx.pacer.is_some() {
                    // Wake at the scheduled arrival, not up to 50 µs later (Linux's default
                    // slack): with --rate the latency counts from the schedule.
                    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects this thread
                    // only.
                    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                }
                let hists = l.hists.clone();
                let last = ctx.last;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run(ctx, i, &mut s, hists, seed ^ (0xA5A5 + i as u64))
                }));
                let end = r.map_err(|_| format!("FATAL: worker thread {i} panicked"));
                if last || end.is_err() {
                    // Disconnect before reporting the end, as sysbench's threads do.
                    s.close();
                    let _ = l.ends.send(end);
                    return;
                }
                let _ = l.ends.send(end);
            }
            s.close();
        })
        .map(|_| ())
}

/// Sleeps until `at`, waking now and then to notice that the run is stopping.
fn sleep_until(ctx: &RunCtx, at: Instant) {
    loop {
        let now = Instant::now();
        if at <= now || ctx.stop.load(Relaxed) {
            return;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// The event loop of one connection.
fn run(
    ctx: Arc<RunCtx>,
    idx: usize,
    s: &mut Session,
    tx: UnboundedSender<WorkerHist>,
    seed: u64,
) -> WorkerEnd {
    let live = &ctx.live[idx];
    let mut hist = metrics::worker_hist();
    let mut seen_epoch = 0;
    let mut rng = Rng::seeded(seed);
    let mut ignored: Vec<(u16, u64)> = Vec::new();
    s.set_deadline(ctx.deadline);
    while !ctx.stop.load(Relaxed) {
        let intended = match &ctx.pacer {
            Some(p) => {
                let at = ctx.start + Duration::from_nanos(p.claim(&mut rng));
                if ctx.deadline.is_some_and(|d| at >= d) {
                    break;
                }
                let now = Instant::now();
                if p.overflowed((now - ctx.start).as_nanos() as u64) {
                    ctx.set_fatal(super::QUEUE_FULL);
                    break;
                }
                sleep_until(&ctx, at);
                at
            }
            None => Instant::now(),
        };
        if ctx.deadline.is_some_and(|d| intended >= d) || ctx.stop.load(Relaxed) {
            break;
        }
        let counting = intended >= ctx.measure_start;
        if counting
            && ctx.events_limit > 0
            && ctx.started_events.fetch_add(1, Relaxed) >= ctx.events_limit
        {
            break;
        }
        s.tally = Tally::default();
        s.event_codes.clear();
        live.busy.store(true, Relaxed);
        let r = s.run_event();
        live.busy.store(false, Relaxed);
        if counting {
            for &code in &s.event_codes {
                match ignored.iter_mut().find(|(c, _)| *c == code) {
                    Some(e) => e.1 += 1,
                    None => ignored.push((code, 1)),
                }
            }
        }
        match r {
            Ok(()) if counting => {
                let ns = (Instant::now() - intended).as_nanos() as u64;
                live.record_event(&s.tally, ns);
                let _ = hist.record(ns.max(1));
            }
            Ok(()) => {}
            // A forced shutdown broke the connection under the event: not the event's fault.
            Err(_) if ctx.forced.load(Relaxed) => break,
            Err(EventError::Fatal(m)) => {
                if counting {
                    live.add_statements(&s.tally);
                }
                ctx.set_fatal(m);
                break;
            }
            // The statements of an event the run's end cut short still ran, and a reconnect
            // that never succeeded was still attempted: sysbench counts both as they happen.
            Err(EventError::Stopped) => {
                if counting {
                    live.add_statements(&s.tally);
                }
                break;
            }
            Err(EventError::Lost(lost)) => {
                if counting {
                    live.add_statements(&s.tally);
                }
                ctx.lose(idx, lost);
                break;
            }
        }
        let e = ctx.epoch.load(Relaxed);
        if e != seen_epoch {
            seen_epoch = e;
            let _ = tx.send(std::mem::replace(&mut hist, metrics::worker_hist()));
        }
    }
    s.tally = Tally::default();
    if !ctx.forced.load(Relaxed) {
        if let Err(EventError::Fatal(m)) = s.finish() {
            ctx.set_fatal(m);
        }
    }
    live.add_statements(&s.tally);
    let done = Instant::now();
    WorkerEnd {
        hist,
        done,
        ignored,
    }
}
