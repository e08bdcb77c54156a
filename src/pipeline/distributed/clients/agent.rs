//! `sweepbench agent`: one client process of a multi-client point. It reads its task (from
//! the controller on standard input, or from a file and its index in a Kubernetes Job),
//! connects and prepares, says it is ready, waits for the common start instant, runs its
//! share and prints its seconds and its end as JSON lines on standard output (or the pod's
//! log). Anything else it has to say goes to standard error.

use super::{encode_hist, unix_ns, End, Go, Hello, Msg, Task};
use crate::engine::exec::{self, IntervalStats, Observer};
use crate::engine::metrics::TotalHist;
use crate::exit::Exit;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

/// Where the task and the start instant come from.
pub enum Source {
    /// Both from the controller, on standard input (the local executor).
    Stdin,
    /// A file of every client's tasks (a JSON list), this client's index (the Job's
    /// completion index), and a file the controller writes the start instant into.
    Files {
        tasks: PathBuf,
        index: u32,
        start: PathBuf,
    },
}

/// How long a client waits for the start instant before giving up: a Job's other pods may
/// wait for a node.
const START_WAIT: Duration = Duration::from_secs(15 * 60);

fn emit(m: &Msg) {
    if let Ok(line) = serde_json::to_string(m) {
        let mut out = std::io::stdout().lock();
        // The controller may be gone; there is nobody to tell.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

struct Stream {
    hist_errors: u32,
}

impl Observer for Stream {
    fn interval_hist(&mut self, s: &IntervalStats, h: &TotalHist) {
        match encode_hist(h) {
            Ok(hist) => emit(&Msg::Interval {
                stats: s.clone(),
                hist,
            }),
            Err(_) => self.hist_errors += 1,
        }
    }
}

/// `sweepbench agent`. Every failure is also a JSON line, so the controller can say which
/// client failed and why.
pub async fn serve(from: Source) -> anyhow::Result<Exit> {
    // SIGTERM (a Job deleted, the controller ending) and SIGINT end every wait.
    crate::interrupt::install();
    match run(from).await {
        Ok(exit) => Ok(exit),
        Err(_) if crate::interrupt::requested() => {
            emit(&Msg::Error {
                message: "interrupted (SIGINT or SIGTERM) before the start".into(),
            });
            Ok(Exit::Interrupted)
        }
        Err(e) => {
            emit(&Msg::Error {
                message: format!("{e:#}"),
            });
            Ok(Exit::Failed)
        }
    }
}

async fn run(from: Source) -> anyhow::Result<Exit> {
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let (task, password) = match &from {
        Source::Stdin => {
            let line = stdin
                .next_line()
                .await?
                .ok_or_else(|| anyhow::anyhow!("no task on standard input"))?;
            let h: Hello = serde_json::from_str(&line)
                .map_err(|e| anyhow::anyhow!("the task on standard input: {e}"))?;
            (h.task, h.password)
        }
        Source::Files { tasks, index, .. } => {
            let text = std::fs::read_to_string(tasks)
                .map_err(|e| anyhow::anyhow!("{}: {e}", tasks.display()))?;
            let all: Vec<Task> = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", tasks.display()))?;
            let t = all.into_iter().nth(*index as usize).ok_or_else(|| {
                anyhow::anyhow!("{}: no task for client index {index}", tasks.display())
            })?;
            let pw = crate::engine::config::password_from_env();
            (t, pw)
        }
    };
    let mut o = task.engine_config(password)?;
    o.quiet = true;
    let (client, threads) = (task.client, task.threads);
    let start = async move {
        emit(&Msg::Ready { client, threads });
        let at = match &from {
            Source::Stdin => wait_stdin(&mut stdin).await?,
            Source::Files { start, .. } => wait_file(start).await?,
        };
        let now = unix_ns();
        if at.saturating_sub(now) > START_WAIT.as_nanos() as u64 {
            anyhow::bail!(
                "the start instant {at} is {} s away, more than the {} s a client waits",
                (at - now) / 1_000_000_000,
                START_WAIT.as_secs()
            );
        }
        while unix_ns() < at {
            interrupted()?;
            let left = at.saturating_sub(unix_ns());
            tokio::time::sleep(Duration::from_nanos(left.min(POLL.as_nanos() as u64))).await;
        }
        let t = unix_ns();
        emit(&Msg::Started {
            client,
            at_unix_ns: t,
            late_ms: t.saturating_sub(at) as f64 / 1e6,
        });
        Ok(())
    };
    let cpu0 = crate::usage::self_cpu_seconds();
    let mut obs = Stream { hist_errors: 0 };
    let r = exec::run_at(&o, &mut obs, start).await?;
    if obs.hist_errors > 0 {
        anyhow::bail!(
            "{} per-second histogram(s) could not be encoded",
            obs.hist_errors
        );
    }
    emit(&Msg::End(Box::new(End {
        elapsed_s: r.elapsed_s,
        window_s: r.window_s,
        totals: r.totals,
        hist: encode_hist(&r.hist)?,
        min_max_ns: r.min_max_ns,
        per_thread: r.per_thread,
        fatal: r.fatal,
        unfinished: r.unfinished,
        interrupted: r.interrupted,
        ignored_by_code: r.ignored_by_code,
        cpu_s: crate::usage::self_cpu_seconds() - cpu0,
    })));
    Ok(Exit::Ok)
}

/// How often a wait looks for SIGINT / SIGTERM.
const POLL: Duration = Duration::from_millis(200);

/// An error once SIGINT or SIGTERM has arrived.
fn interrupted() -> anyhow::Result<()> {
    if crate::interrupt::requested() {
        anyhow::bail!("interrupted");
    }
    Ok(())
}

async fn wait_stdin(stdin: &mut Lines<BufReader<Stdin>>) -> anyhow::Result<u64> {
    let line = loop {
        tokio::select! {
            l = stdin.next_line() => break l?,
            _ = tokio::time::sleep(POLL) => interrupted()?,
        }
    };
    let line = line.ok_or_else(|| anyhow::anyhow!("the controller went away before the start"))?;
    match serde_json::from_str(&line)
        .map_err(|e| anyhow::anyhow!("the start line on standard input: {e}"))?
    {
        Go::StartAt(t) => Ok(t),
        Go::Abort => anyhow::bail!("the controller called the point off before the start"),
    }
}

/// Polls `path` until it holds the start instant (Unix ns): a ConfigMap key mounted as a
/// file, which the kubelet refreshes within its sync period. Empty (as rendered) means not
/// yet; anything else that is not a number is an error at once.
async fn wait_file(path: &Path) -> anyhow::Result<u64> {
    let deadline = tokio::time::Instant::now() + START_WAIT;
    loop {
        interrupted()?;
        if let Ok(t) = std::fs::read_to_string(path) {
            let t = t.trim();
            if !t.is_empty() {
                return t.parse::<u64>().map_err(|_| {
                    anyhow::anyhow!(
                        "{}: '{}' is not a start instant (Unix time in nanoseconds)",
                        path.display(),
                        t.chars().take(40).collect::<String>()
                    )
                });
            }
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "no start instant in {} after {} s",
                path.display(),
                START_WAIT.as_secs()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}
