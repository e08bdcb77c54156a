//! The local executor: a multi-client point's clients as `sweepbench agent` processes on
//! this machine. Each gets its task (and the password) on standard input; when all are
//! connected and prepared, each is told one start instant a moment ahead; their seconds are
//! merged as they arrive (so progress lines stay live) and their ends merged exactly.

use super::merge::{self, Part};
use super::{decode_hist, unix_ns, Go, Hello, Msg, Task, LATE_LIMIT_MS};
use crate::engine::exec::{Observer, RunReport};
use crate::pipeline::plan::Point;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// A multi-client point as one run, and what only several clients have.
pub struct Outcome {
    pub report: RunReport,
    /// The clients' CPU, summed.
    pub cpu_s: f64,
    /// The spread of the clients' actual start instants, ms.
    pub skew_ms: f64,
}

/// How far ahead of "everyone is ready" the common start instant is set: time for the start
/// line to reach every process.
const LEAD: Duration = Duration::from_millis(300);

/// What the controller hears from a client process.
pub enum Event {
    Line(u32, Msg),
    /// Standard output closed: the process ended (its standard error, cut to the end).
    Gone(u32, String),
    Garbled(u32, String),
}

impl Event {
    /// One line of client `i`'s output, as the agent prints them.
    pub fn of_line(i: u32, line: String) -> Event {
        match serde_json::from_str::<Msg>(&line) {
            Ok(m) => Event::Line(i, m),
            Err(_) => Event::Garbled(i, line),
        }
    }
}

/// How errors name client `i` of `k`.
fn client_name(i: u32, k: u32) -> String {
    format!("client {} of {k}", i + 1)
}

struct Client {
    child: Child,
    stdin: ChildStdin,
}

/// Runs point `p` as `p.clients` client processes against `c`. `percentile` is the one the
/// merged seconds report.
pub async fn run(
    spec: &SweepSpec,
    p: &Point,
    c: &ConnInfo,
    percentile: u32,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    let k = p.clients;
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the sweepbench binary to start clients: {e}"))?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut clients = Vec::new();
    for i in 0..k {
        let task = Task::new(spec, p, c, i)?;
        let mut cmd = Command::new(&exe);
        cmd.arg("agent")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A client dies with the controller, even a SIGKILLed one, so nothing goes on loading
        // the server. PR_SET_PDEATHSIG fires when the spawning thread ends: this runs on a
        // runtime worker thread, which lives as long as the process.
        // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag on the child.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", client_name(i, k)))?;
        let mut stdin = child.stdin.take().expect("piped");
        let hello = serde_json::to_string(&Hello {
            task,
            password: c.password.clone(),
        })?;
        stdin.write_all(format!("{hello}\n").as_bytes()).await?;
        let out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(Event::of_line(i, line)).is_err() {
                    return;
                }
            }
            let mut text = String::new();
            let _ = err.read_to_string(&mut text).await;
            let tail: String = text
                .trim()
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ");
            let _ = tx.send(Event::Gone(i, tail));
        });
        clients.push(Client { child, stdin });
    }
    drop(tx);
    // Connected and prepared, every one, or none starts.
    let ready_limit = Duration::from_secs(60u64.max(p.threads as u64 / 20));
    let waited = await_ready(&mut rx, k, ready_limit).await;
    let go = match waited {
        Ok(()) => Go::StartAt(unix_ns() + LEAD.as_nanos() as u64),
        Err(e) => {
            abort(&mut clients).await;
            return Err(e);
        }
    };
    let line = format!("{}\n", serde_json::to_string(&go)?);
    for c in &mut clients {
        c.stdin.write_all(line.as_bytes()).await?;
        c.stdin.flush().await?;
    }
    // The whole point, with its forced-shutdown grace and a margin for the clients' ends.
    let limit = Duration::from_secs(
        spec.run.warmup_s + spec.run.duration_s + spec.run.point_timeout_s + 30,
    );
    let gathered = {
        let gathering = gather(&mut rx, k, percentile, observer);
        tokio::pin!(gathering);
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        let mut forwarded = false;
        loop {
            tokio::select! {
                r = &mut gathering => break Ok(r),
                _ = &mut deadline => break Err(()),
                // SIGINT/SIGTERM to this process alone (not to its group, as a terminal's Ctrl-C
                // is) is passed on: each client ends its share as interrupted, and the point
                // is recorded so.
                _ = tokio::time::sleep(Duration::from_millis(200)), if !forwarded => {
                    if crate::interrupt::requested() {
                        for c in &clients {
                            if let Some(pid) = c.child.id() {
                                // SAFETY: kill only sends a signal to our own child.
                                unsafe { libc::kill(pid as i32, libc::SIGINT) };
                            }
                        }
                        forwarded = true;
                    }
                }
            }
        }
    };
    let parts = match gathered {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(e.context(ended(&mut clients, k).await)),
        Err(_) => anyhow::bail!(
            "the clients had not all ended {} s after the start: ended them",
            limit.as_secs()
        ),
    };
    for c in &mut clients {
        let _ = c.child.wait().await;
    }
    conclude(parts, k, percentile)
}

/// The point from its clients' parts: refused when one started late, merged otherwise.
pub fn conclude(
    parts: Vec<((u32, u64, f64), Part)>,
    k: u32,
    percentile: u32,
) -> anyhow::Result<Outcome> {
    let (starts, parts): (Vec<(u32, u64, f64)>, Vec<Part>) = parts.into_iter().unzip();
    if let Some((i, _, late)) = starts.iter().find(|s| s.2 > LATE_LIMIT_MS) {
        anyhow::bail!(
            "{} started {late:.0} ms after the common instant (limit {LATE_LIMIT_MS:.0} ms): its seconds do not line up with the others'",
            client_name(*i, k)
        );
    }
    let at = starts.iter().map(|s| s.1);
    let skew_ms = (at.clone().max().unwrap_or(0) - at.min().unwrap_or(0)) as f64 / 1e6;
    let (report, cpu_s) = merge::report(&parts, percentile);
    Ok(Outcome {
        report,
        cpu_s,
        skew_ms,
    })
}

/// Waits until all `k` clients are connected and prepared, at most `limit`.
pub async fn await_ready(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    k: u32,
    limit: Duration,
) -> anyhow::Result<()> {
    let name = |i: u32| client_name(i, k);
    let mut ready = 0;
    let waited = tokio::time::timeout(limit, async {
        while ready < k {
            match rx.recv().await {
                Some(Event::Line(_, Msg::Ready { .. })) => ready += 1,
                Some(Event::Line(i, Msg::Error { message })) => {
                    anyhow::bail!("{}: {message}", name(i))
                }
                Some(Event::Gone(i, why)) => {
                    anyhow::bail!("{} ended before it was ready: {why}", name(i))
                }
                Some(Event::Garbled(i, line)) => {
                    anyhow::bail!("{} said something unexpected: {line}", name(i))
                }
                Some(Event::Line(i, m)) => anyhow::bail!("{} spoke out of turn: {m:?}", name(i)),
                None => anyhow::bail!("every client ended before the start"),
            }
        }
        Ok(())
    })
    .await;
    match waited {
        Ok(r) => r,
        Err(_) => anyhow::bail!(
            "{ready} of {k} clients were ready after {} s: the point did not start",
            limit.as_secs()
        ),
    }
}

/// How the clients that have ended ended ("client 1 of 2 was killed by signal 9"), for a
/// point that failed: a client killed outright leaves nothing on its standard error.
async fn ended(clients: &mut [Client], k: u32) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut said = Vec::new();
    for (i, c) in clients.iter_mut().enumerate() {
        // A client that is going has a moment to be gone; one still running is left alone.
        let status = tokio::time::timeout(Duration::from_millis(500), c.child.wait()).await;
        if let Ok(Ok(st)) = status {
            let how = match (st.code(), st.signal()) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(sig)) => format!("was killed by signal {sig}{}", signal_name(sig)),
                (None, None) => format!("ended ({st})"),
            };
            said.push(format!("{} {how}", client_name(i as u32, k)));
        }
    }
    if said.is_empty() {
        "the point's clients".into()
    } else {
        said.join("; ")
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        _ => "",
    }
}

/// Tells every client the point is off; each then ends on its own.
async fn abort(clients: &mut [Client]) {
    let line = serde_json::to_string(&Go::Abort).unwrap_or_default() + "\n";
    for c in clients.iter_mut() {
        let _ = c.stdin.write_all(line.as_bytes()).await;
    }
}

/// Reads every client's seconds and end. Each client's start (index, Unix ns, lateness) is
/// returned with its part, in client order.
pub async fn gather(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    k: u32,
    percentile: u32,
    observer: &mut dyn Observer,
) -> anyhow::Result<Vec<((u32, u64, f64), Part)>> {
    let n = k as usize;
    let mut seconds: Vec<
        Vec<(
            crate::engine::exec::IntervalStats,
            crate::engine::metrics::TotalHist,
        )>,
    > = vec![Vec::new(); n];
    let mut starts: Vec<Option<(u32, u64, f64)>> = vec![None; n];
    let mut ends: Vec<Option<super::End>> = (0..n).map(|_| None).collect();
    let mut shown = 0;
    let name = |i: u32| client_name(i, k);
    while ends.iter().any(Option::is_none) {
        match rx.recv().await {
            Some(Event::Line(i, m)) => match m {
                Msg::Started {
                    at_unix_ns,
                    late_ms,
                    ..
                } => starts[i as usize] = Some((i, at_unix_ns, late_ms)),
                Msg::Interval { stats, hist } => {
                    seconds[i as usize].push((stats, decode_hist(&hist)?));
                    // A second every client has closed is shown merged.
                    while seconds.iter().all(|s| s.len() > shown) {
                        let at: Vec<_> = seconds.iter().map(|s| s[shown].clone()).collect();
                        let (s, h) = merge::interval(&at, percentile);
                        observer.interval_hist(&s, &h);
                        shown += 1;
                    }
                }
                Msg::End(e) => ends[i as usize] = Some(*e),
                Msg::Error { message } => anyhow::bail!("{}: {message}", name(i)),
                Msg::Ready { .. } => {}
            },
            Some(Event::Gone(i, why)) if ends[i as usize].is_none() => {
                if why.is_empty() {
                    anyhow::bail!("{} died during the point", name(i))
                }
                anyhow::bail!("{} died during the point: {why}", name(i))
            }
            Some(Event::Gone(..)) => {}
            Some(Event::Garbled(i, line)) => {
                anyhow::bail!("{} said something unexpected: {line}", name(i))
            }
            None => anyhow::bail!("the clients ended without their figures"),
        }
    }
    let mut out = Vec::new();
    for (i, ((e, s), st)) in ends.into_iter().zip(seconds).zip(starts).enumerate() {
        let e = e.expect("loop ends when every client ended");
        let st =
            st.ok_or_else(|| anyhow::anyhow!("{} never said when it started", name(i as u32)))?;
        let hist = decode_hist(&e.hist)?;
        out.push((
            st,
            Part {
                client: i as u32,
                end: e,
                hist,
                seconds: s,
            },
        ));
    }
    Ok(out)
}
