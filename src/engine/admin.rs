//! The administrative client: every statement sweepbench sends besides the workload's
//! (preflight, data checks, server variables and status, the watch's ping) goes through
//! `Admin`. It runs on the workload's own client (`wire`, rows read as text), so it logs in
//! exactly as the workload does — every auth plugin, TLS with X.509 version 1 certificates,
//! PREFERRED's fallback — and its errors carry libmysqlclient's codes (`Error::code`).
//! `wire` blocks; each statement runs on tokio's blocking pool, and a statement whose caller
//! gave up (a deadline) has its socket shut so the thread ends.

use crate::engine::config::ConnOptions;
use crate::engine::db::{cannot_connect, wire_connect, WIRE_CONNECT_TIMEOUT};
use crate::engine::wire;
use std::time::Instant;

/// One row of a result, each column as its text (None for NULL).
pub type Row = Vec<Option<String>>;

/// An administrative connection; None once a statement was cut off (its caller gave up),
/// after which every call says the connection is gone.
pub struct Admin(Option<Box<wire::Conn>>);

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(c) => write!(f, "Admin(connection {})", c.connection_id),
            None => f.write_str("Admin(gone)"),
        }
    }
}

/// A failed administrative connect or statement.
#[derive(Debug)]
pub struct Error {
    e: wire::Error,
    /// A login that took the connection and never answered within its deadline.
    silent: bool,
}

impl Error {
    /// The server's (or libmysqlclient's client-side) error code.
    pub fn code(&self) -> Option<u16> {
        Some(self.e.code)
    }

    /// A login that took the connection and never answered (`WIRE_CONNECT_TIMEOUT`): the
    /// server is silent, not refusing.
    pub fn timed_out(&self) -> bool {
        self.silent
    }
}

impl std::fmt::Display for Error {
    /// "error code (message)" in sysbench's FATAL wording.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.e.fmt(f)
    }
}

impl std::error::Error for Error {}

impl From<wire::Error> for Error {
    fn from(e: wire::Error) -> Self {
        Error { e, silent: false }
    }
}

/// `s` as an SQL string literal ('…', quotes and backslashes escaped), for the few
/// administrative statements that name a value.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// A row's columns as text.
fn row_text(r: wire::TextRow) -> Row {
    r.into_iter()
        .map(|v| {
            v.map(|b| {
                String::from_utf8(b)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            })
        })
        .collect()
}

/// Shuts a statement's socket when its caller stops waiting (the future is dropped before
/// the statement ended), so the blocking thread returns instead of waiting on a silent
/// server for ever.
struct ShutIfAbandoned(Option<std::sync::Arc<wire::Stream>>);

impl Drop for ShutIfAbandoned {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.shutdown();
        }
    }
}

impl Admin {
    /// Opens administrative connection `n` to `c`, naming the endpoint, the user and the
    /// remedy on failure.
    pub async fn connect(c: &ConnOptions, n: usize) -> anyhow::Result<Admin> {
        Admin::open(c, n)
            .await
            .map_err(|e| cannot_connect(c, n, e.code(), &e))
    }

    /// Opens administrative connection `n` (the first endpoint's when `n` is 0), the error as
    /// the login gave it.
    pub async fn open(c: &ConnOptions, n: usize) -> Result<Admin, Error> {
        let c = c.clone();
        let started = Instant::now();
        let joined = tokio::task::spawn_blocking(move || wire_connect(&c, n, false)).await;
        match joined {
            Ok(Ok(conn)) => Ok(Admin(Some(Box::new(conn)))),
            Ok(Err(e)) => Err(Error {
                silent: e.code == 2013 && started.elapsed() >= WIRE_CONNECT_TIMEOUT,
                e,
            }),
            Err(j) => {
                Err(wire::Error::client(2000, format!("the login's thread failed ({j})")).into())
            }
        }
    }

    /// Opens a connection that selects no database (to create it, or to ask the server).
    pub async fn open_no_db(c: &ConnOptions) -> Result<Admin, Error> {
        let mut c = c.clone();
        c.db.clear();
        Admin::open(&c, 0).await
    }

    /// Runs `work` on the connection on the blocking pool, the connection given back after.
    async fn run<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut wire::Conn) -> Result<T, wire::Error> + Send + 'static,
    ) -> Result<T, Error> {
        let Some(mut conn) = self.0.take() else {
            return Err(wire::Error::client(
                2006,
                "MySQL server has gone away (an earlier statement on this connection was cut off)"
                    .into(),
            )
            .into());
        };
        let mut guard = ShutIfAbandoned(Some(conn.stream().clone()));
        let joined = tokio::task::spawn_blocking(move || {
            let r = work(&mut conn);
            (conn, r)
        })
        .await;
        guard.0 = None;
        match joined {
            Ok((conn, r)) => {
                self.0 = Some(conn);
                Ok(r?)
            }
            Err(j) => Err(wire::Error::client(
                2000,
                format!("the statement's thread failed ({j})"),
            )
            .into()),
        }
    }

    /// Runs a statement, its result (if any) dropped.
    pub async fn exec(&mut self, sql: impl AsRef<str>) -> Result<(), Error> {
        let sql = sql.as_ref().to_string();
        self.run(move |c| c.query(&sql).map(drop)).await
    }

    /// Every row of a query's result.
    pub async fn rows(&mut self, sql: impl AsRef<str>) -> Result<Vec<Row>, Error> {
        let sql = sql.as_ref().to_string();
        let rows = self.run(move |c| c.query_rows(&sql)).await?;
        Ok(rows.into_iter().map(row_text).collect())
    }

    /// The first row of a query's result, if it has one.
    pub async fn first(&mut self, sql: impl AsRef<str>) -> Result<Option<Row>, Error> {
        Ok(self.rows(sql).await?.into_iter().next())
    }

    /// The first column of every row, NULLs left out (SHOW GRANTS, a list of names).
    pub async fn column(&mut self, sql: impl AsRef<str>) -> Result<Vec<String>, Error> {
        Ok(self
            .rows(sql)
            .await?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    /// The first column of the first row (None for no row or NULL).
    pub async fn value(&mut self, sql: impl AsRef<str>) -> Result<Option<String>, Error> {
        Ok(self
            .first(sql)
            .await?
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Name–value rows (SHOW GLOBAL VARIABLES, SHOW GLOBAL STATUS), with control characters
    /// escaped: the names and values go into reports, status.csv and the terminal, and no
    /// server's value holds one for a reason.
    pub async fn pairs(
        &mut self,
        sql: impl AsRef<str>,
    ) -> Result<Vec<(String, Option<String>)>, Error> {
        Ok(self
            .rows(sql)
            .await?
            .into_iter()
            .filter_map(|mut r| {
                let shown = |s: String| match crate::visible::visible(&s) {
                    std::borrow::Cow::Borrowed(_) => s,
                    std::borrow::Cow::Owned(o) => o,
                };
                let value = r.get_mut(1).and_then(Option::take).map(shown);
                Some((shown(r.into_iter().next().flatten()?), value))
            })
            .collect())
    }

    /// Closes the connection (COM_QUIT); a failure to say goodbye changes nothing.
    pub async fn close(mut self) {
        if let Some(c) = self.0.take() {
            let _ = tokio::task::spawn_blocking(move || (*c).close()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_cannot_end_its_literal() {
        assert_eq!(quote("sbtest"), "'sbtest'");
        assert_eq!(quote("o'brien"), "'o''brien'");
        assert_eq!(quote("a\\' OR 1=1 -- "), "'a\\\\'' OR 1=1 -- '");
    }

    /// A server that takes the connection and never greets (a stopped one): the login gives
    /// up with libmysqlclient's 2013 and the remedy for it, instead of waiting for ever.
    #[tokio::test]
    async fn a_silent_server_fails_the_login_at_its_deadline() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = ConnOptions {
            hosts: vec!["127.0.0.1".into()],
            ports: vec![silent.local_addr().unwrap().port()],
            user: "root".into(),
            ..Default::default()
        };
        let e = Admin::connect(&c, 0)
            .await
            .expect_err("no greeting, no login")
            .to_string();
        assert!(
            e.contains("error 2013 (Lost connection to MySQL server at 'reading initial communication packet' (no answer within 10 s))"),
            "{e}"
        );
        assert!(e.contains("is it stopped (SIGSTOP), overloaded"), "{e}");
    }
}
