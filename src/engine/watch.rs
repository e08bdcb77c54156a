//! A watch over long server work — prepare, prewarm, cleanup, the row counts before a sweep:
//! while the work runs a second connection pings the server, and the work is abandoned when
//! a ping gets no answer within `NO_ANSWER` (a stopped or hung server) or on SIGINT/SIGTERM.
//! A statement that rightly runs for minutes (an index on a large table) leaves its server
//! answering pings, so no fixed limit is put on the work itself.

use crate::engine::config::ConnOptions;
use std::time::Duration;

/// How often the second connection pings.
const PING_EVERY: Duration = Duration::from_secs(5);
/// How long a ping (or opening the connection for it) may go unanswered.
pub const NO_ANSWER: Duration = Duration::from_secs(15);

/// Runs `work` under the watch. On a server that stopped answering, or an interrupt, `abort`
/// is called (to shut what `work` left blocked outside this task: loader sockets) and an
/// error naming `what` is returned; `work` is dropped.
pub async fn watched<T>(
    c: &ConnOptions,
    what: &str,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
    abort: impl FnOnce(),
) -> anyhow::Result<T> {
    watched_at(c, what, work, abort, PING_EVERY, NO_ANSWER).await
}

async fn watched_at<T>(
    c: &ConnOptions,
    what: &str,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
    abort: impl FnOnce(),
    every: Duration,
    no_answer: Duration,
) -> anyhow::Result<T> {
    crate::interrupt::install();
    let (dead_tx, mut dead) = tokio::sync::oneshot::channel::<()>();
    let pinger = tokio::spawn(ping_until_silent(c.clone(), dead_tx, every, no_answer));
    let _stop_pinger = Abort(pinger);
    let mut signals = tokio::time::interval(Duration::from_millis(100));
    let mut abort = Some(abort);
    tokio::pin!(work);
    loop {
        tokio::select! {
            r = &mut work => return r,
            _ = &mut dead => {
                if let Some(f) = abort.take() {
                    f();
                }
                anyhow::bail!(
                    "the server stopped answering while {what}: no reply to a ping on a second connection within {} s (is it stopped, or hung?)",
                    no_answer.as_secs()
                );
            }
            _ = signals.tick() => if crate::interrupt::requested() {
                if let Some(f) = abort.take() {
                    f();
                }
                anyhow::bail!("interrupted while {what}");
            }
        }
    }
}

/// Stops the pinger when the watch ends, however it ends.
struct Abort(tokio::task::JoinHandle<()>);

impl Drop for Abort {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Pings every `PING_EVERY`; sends on `dead` (and ends) when one goes unanswered for
/// `NO_ANSWER`. A connection that fails outright is opened again at the next ping: the work
/// itself reports a server that refuses or drops connections.
async fn ping_until_silent(
    c: ConnOptions,
    dead: tokio::sync::oneshot::Sender<()>,
    every: Duration,
    no_answer: Duration,
) {
    let mut conn: Option<crate::engine::admin::Admin> = None;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tick.tick().await;
        let answered = tokio::time::timeout(no_answer, async {
            if conn.is_none() {
                conn = Some(crate::engine::admin::Admin::open(&c, 1).await?);
            }
            match conn.as_mut() {
                Some(k) => k.exec("DO 1").await,
                None => Ok(()),
            }
        })
        .await;
        // A login that timed out (took the connection, never greeted: the admin login's deadline)
        // is silence too; a refused or reset one is the work's to report.
        match answered {
            Err(_) => {
                let _ = dead.send(());
                return;
            }
            Ok(Err(e)) if e.timed_out() => {
                let _ = dead.send(());
                return;
            }
            Ok(Err(_)) => conn = None,
            Ok(Ok(())) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn at(port: u16) -> ConnOptions {
        ConnOptions {
            hosts: vec!["127.0.0.1".into()],
            ports: vec![port],
            user: "root".into(),
            ..Default::default()
        }
    }

    /// A server that takes connections and never answers (a stopped one): the work is given
    /// up and what it left blocked is shut.
    #[tokio::test]
    async fn work_on_a_server_that_stopped_answering_is_given_up() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let aborted = AtomicBool::new(false);
        let r: anyhow::Result<()> = watched_at(
            &at(port),
            "preparing the tables",
            std::future::pending(),
            || aborted.store(true, Ordering::SeqCst),
            Duration::from_millis(50),
            Duration::from_millis(300),
        )
        .await;
        let e = r.unwrap_err().to_string();
        assert!(
            e.starts_with("the server stopped answering while preparing the tables: no reply to a ping on a second connection within 0 s"),
            "{e}"
        );
        assert!(aborted.load(Ordering::SeqCst));
    }

    /// Work that ends is returned as it ended, whatever the pings did meanwhile (here: a
    /// port where nothing listens, which is the work's to report, not the watch's).
    #[tokio::test]
    async fn work_that_ends_returns_its_own_answer() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let aborted = AtomicBool::new(false);
        let r = watched_at(
            &at(port),
            "counting",
            async {
                tokio::time::sleep(Duration::from_millis(400)).await;
                anyhow::Ok(7)
            },
            || aborted.store(true, Ordering::SeqCst),
            Duration::from_millis(50),
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(r.unwrap(), 7);
        assert!(!aborted.load(Ordering::SeqCst));
    }
}
