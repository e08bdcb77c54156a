//! Config `vars` on external targets: SET GLOBAL for the config's points, the old values put
//! back afterwards. A read-only (static) variable is an error that names it: changing it needs
//! a server restart, which only a managed server can do. Each original value is written to
//! the sweep's journal (results/<sweep>/.vars-journal.json) before the variable changes, so a
//! run killed in between leaves the next run what to put back (`recover`).

use crate::pipeline::spec::target::ConnInfo;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Original values of variables changed on external targets and not yet put back, by
/// target: results/<sweep>/.vars-journal.json (the sweep's lock guards it).
pub struct Journal {
    path: PathBuf,
}

type Entries = BTreeMap<String, Vec<(String, String)>>;

impl Journal {
    pub fn at(sweep_dir: &Path) -> Journal {
        Journal {
            path: sweep_dir.join(".vars-journal.json"),
        }
    }

    /// The journal, checked as untrusted input: not through a link, and every name a server
    /// variable's (each is put back with SET GLOBAL, so a name is SQL).
    fn read(&self) -> anyhow::Result<Entries> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&self.path);
        let mut b = Vec::new();
        match opened {
            Ok(mut f) => {
                f.read_to_end(&mut b)
                    .with_context(|| format!("reading {}", self.path.display()))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entries::new()),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => anyhow::bail!(
                "{} is a symbolic link, which a settings journal never is: check the targets' settings by hand and remove it",
                self.path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.path.display())),
        }
        let e: Entries = serde_json::from_slice(&b)
            .with_context(|| format!("{} is not a settings journal", self.path.display()))?;
        for (target, vars) in &e {
            if let Some((name, _)) = vars
                .iter()
                .find(|(n, _)| !crate::pipeline::spec::var_name_ok(n))
            {
                anyhow::bail!(
                    "{}: '{name}' (target '{target}') is not a server variable name, so the file was not written by sweepbench: nothing was run; check the target's settings by hand and remove the file",
                    self.path.display()
                );
            }
        }
        Ok(e)
    }

    fn write(&self, e: &Entries) -> anyhow::Result<()> {
        if e.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(x) if x.kind() != std::io::ErrorKind::NotFound => Err(x.into()),
                _ => Ok(()),
            };
        }
        crate::pipeline::results::write_atomic(&self.path, &serde_json::to_vec_pretty(e)?)
    }

    /// Records `name`'s original on `target` (the first original wins: a value already
    /// journaled is the one from before any run touched it).
    fn record(&self, target: &str, name: &str, old: &str) -> anyhow::Result<()> {
        let mut e = self.read()?;
        let list = e.entry(target.to_string()).or_default();
        if !list.iter().any(|(n, _)| n == name) {
            list.push((name.to_string(), old.to_string()));
        }
        self.write(&e)
    }

    /// Forgets what `target` had changed: it has been put back.
    fn clear(&self, target: &str) -> anyhow::Result<()> {
        let mut e = self.read()?;
        if e.remove(target).is_some() {
            self.write(&e)?;
        }
        Ok(())
    }

    /// Puts back what a killed run left changed, on every target it names; refuses (with
    /// what to do) when a target is gone from the sweep or cannot be reached.
    pub async fn recover(
        &self,
        conn_of: impl Fn(&str) -> Option<ConnInfo>,
    ) -> anyhow::Result<Vec<String>> {
        let entries = self.read()?;
        let mut done = Vec::new();
        for (target, vars) in &entries {
            let listed = vars
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            let remedy = format!(
                "put them back by hand (SET GLOBAL …), then remove {}",
                self.path.display()
            );
            let Some(c) = conn_of(target) else {
                anyhow::bail!(
                    "target '{target}' still has settings an earlier run changed and could not put back ({listed}), and this sweep no longer defines it: {remedy}"
                );
            };
            let o = c.conn_options();
            let mut conn = within("connecting", crate::engine::admin::Admin::open_no_db(&o))
                .await
                .map_err(|e| {
                    anyhow::anyhow!(
                        "target '{target}' still has settings an earlier run changed ({listed}) and {} cannot be reached to put them back ({e:#}): {remedy}",
                        c.redacted(),
                    )
                })?;
            for (name, old) in vars.iter().rev() {
                let lit = literal(old);
                let sql = format!("SET GLOBAL {name} = {lit}");
                within(&sql, conn.exec(&sql))
                    .await
                    .map_err(|e| anyhow::anyhow!("putting back {e:#} on '{target}': {remedy}"))?;
            }
            conn.close().await;
            self.clear(target)?;
            done.push(format!(
                "{target}: put back {listed} (left changed by a run that was killed)"
            ));
        }
        Ok(done)
    }
}

/// How long a server may take to answer one administrative step (connecting, reading or
/// setting a variable) before the run gives up on it: a stopped (SIGSTOP) or wedged server
/// must not hold the run for ever. The journal keeps what was not put back.
const ADMIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(15);

/// The error for a step the server did not answer in time.
fn no_answer(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}: no answer within {} s (is the server stopped, e.g. SIGSTOP, or overloaded?)",
        ADMIN_DEADLINE.as_secs()
    )
}

/// `fut` within ADMIN_DEADLINE: Err(()) when the server did not answer in time.
async fn timed<T>(
    fut: impl std::future::Future<Output = Result<T, crate::engine::admin::Error>>,
) -> Result<Result<T, crate::engine::admin::Error>, ()> {
    tokio::time::timeout(ADMIN_DEADLINE, fut)
        .await
        .map_err(|_| ())
}

/// `fut`, or an error naming `what` when it failed or the server has not answered in time.
async fn within<T>(
    what: &str,
    fut: impl std::future::Future<Output = Result<T, crate::engine::admin::Error>>,
) -> anyhow::Result<T> {
    match timed(fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(anyhow::anyhow!("{what}: {e}")),
        Err(()) => Err(no_answer(what)),
    }
}

/// An old value as SQL: numbers bare, anything else quoted.
fn literal(old: &str) -> String {
    if old.parse::<f64>().is_ok() {
        old.to_string()
    } else {
        format!("'{}'", old.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

pub struct Applied {
    conn: Option<crate::engine::admin::Admin>,
    old: Vec<(String, String)>,
    target: String,
    journal: Option<Journal>,
    /// Why this config cannot run here, if it cannot.
    pub error: Option<String>,
    pub version: String,
}

impl Applied {
    pub async fn apply(
        c: &ConnInfo,
        vars: &[(String, String)],
        target: &str,
        journal: Journal,
    ) -> Applied {
        let mut a = Applied {
            conn: None,
            old: Vec::new(),
            target: target.to_string(),
            journal: Some(journal),
            error: None,
            version: String::new(),
        };
        if !c.more.is_empty() && !vars.is_empty() {
            // Set on one node they would measure a mixed cluster; each node is a server of
            // its own to SET GLOBAL on.
            a.error = Some(format!(
                "a config's vars are set with SET GLOBAL on one server, and {} names {} endpoints: set them on every node yourself, or give each node a target of its own",
                c.redacted(),
                c.endpoints().len()
            ));
            return a;
        }
        let o = c.conn_options();
        let mut conn = match within("connecting", crate::engine::admin::Admin::open_no_db(&o)).await
        {
            Ok(x) => x,
            Err(e) => {
                a.error = Some(format!("cannot connect to {}: {e:#}", c.redacted()));
                return a;
            }
        };
        a.version = within("SELECT VERSION()", conn.value("SELECT VERSION()"))
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        for (name, value) in vars {
            let sql = format!("SELECT @@GLOBAL.{name}");
            let old: anyhow::Result<Option<String>> = within(&sql, conn.value(&sql)).await;
            let old = match old {
                Ok(v) => v.unwrap_or_default(),
                Err(e) => {
                    a.error = Some(format!("server variable {name}: {e:#}"));
                    break;
                }
            };
            // Written down before it changes: a run killed from here on leaves the original.
            let journaled = a.journal.as_ref().map(|j| j.record(target, name, &old));
            if let Some(Err(e)) = journaled {
                a.error = Some(format!("recording the original {name}: {e:#}"));
                break;
            }
            let set = format!("SET GLOBAL {name} = {value}");
            let Ok(done) = timed(conn.exec(&set)).await else {
                // It may yet take effect: the journal holds the original for the next run.
                a.old.push((name.clone(), old));
                a.error = Some(format!("{:#}", no_answer(&set)));
                break;
            };
            match done {
                Ok(()) => a.old.push((name.clone(), old)),
                Err(e) if e.code() == Some(1238) => {
                    a.error = Some(format!(
                        "server variable {name} is read-only at run time (static): it needs a server restart, so this config needs a managed server (server = {{…}}), not an external target"
                    ));
                    break;
                }
                Err(e) => {
                    a.error = Some(format!("SET GLOBAL {name} = {value}: {e}"));
                    break;
                }
            }
        }
        a.conn = Some(conn);
        a
    }

    /// Puts back every variable this config changed.
    pub async fn restore(mut self) -> anyhow::Result<()> {
        let Some(mut conn) = self.conn.take() else {
            return Ok(());
        };
        let mut first_err = None;
        for (name, old) in self.old.iter().rev() {
            let sql = format!("SET GLOBAL {name} = {}", literal(old));
            match timed(conn.exec(&sql)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    first_err.get_or_insert(anyhow::anyhow!("{sql}: {e}"));
                }
                // A server that does not answer will not answer the next one either.
                Err(()) => {
                    first_err.get_or_insert(no_answer(&sql));
                    break;
                }
            }
        }
        if first_err.is_none() {
            let _ = tokio::time::timeout(ADMIN_DEADLINE, conn.close()).await;
            if let Some(j) = &self.journal {
                j.clear(&self.target)?;
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod journal_tests {
    use super::*;

    #[test]
    fn a_journal_with_sql_for_a_name_is_refused_before_anything_runs() {
        let d = tempfile::tempdir().unwrap();
        let j = Journal::at(d.path());
        std::fs::write(
            &j.path,
            r#"{"ext": [["long_query_time = 10; CREATE DATABASE pwned_by_journal; SET @x", "1"]]}"#,
        )
        .unwrap();
        let e = j.read().unwrap_err().to_string();
        assert!(e.contains("is not a server variable name"), "{e}");
        assert!(e.contains("target 'ext'"), "{e}");
        // A journal sweepbench wrote is read back as it was.
        std::fs::write(&j.path, r#"{"ext": [["long_query_time", "10.000000"]]}"#).unwrap();
        let ok = j.read().unwrap();
        assert_eq!(
            ok["ext"],
            vec![("long_query_time".to_string(), "10.000000".to_string())]
        );
        // Nor is a journal followed through a link.
        std::fs::remove_file(&j.path).unwrap();
        let elsewhere = d.path().join("elsewhere.json");
        std::fs::write(&elsewhere, r#"{"ext": [["long_query_time", "10"]]}"#).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &j.path).unwrap();
        let e = j.read().unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
    }
}
