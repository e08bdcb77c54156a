//! Config `vars` on external targets: SET GLOBAL for the config's points, the old values put
//! back afterwards. A read-only (static) variable is an error that names it: changing it needs
//! a server restart, which only a managed server can do.

use crate::engine::db;
use crate::pipeline::spec::target::ConnInfo;
use mysql_async::prelude::Queryable;

pub struct Applied {
    conn: Option<mysql_async::Conn>,
    old: Vec<(String, String)>,
    /// Why this config cannot run here, if it cannot.
    pub error: Option<String>,
    pub version: String,
}

impl Applied {
    pub async fn apply(c: &ConnInfo, vars: &[(String, String)]) -> Applied {
        let mut a = Applied {
            conn: None,
            old: Vec::new(),
            error: None,
            version: String::new(),
        };
        let mut conn = match mysql_async::Conn::new(db::opts_no_db(&c.conn_options())).await {
            Ok(x) => x,
            Err(e) => {
                a.error = Some(format!(
                    "cannot connect to {}: {}",
                    c.redacted(),
                    db::describe(&e)
                ));
                return a;
            }
        };
        a.version = conn
            .query_first("SELECT VERSION()")
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        for (name, value) in vars {
            let old: Result<Option<String>, _> =
                conn.query_first(format!("SELECT @@GLOBAL.{name}")).await;
            let old = match old {
                Ok(v) => v.unwrap_or_default(),
                Err(e) => {
                    a.error = Some(format!("server variable {name}: {}", db::describe(&e)));
                    break;
                }
            };
            match conn
                .query_drop(format!("SET GLOBAL {name} = {value}"))
                .await
            {
                Ok(()) => a.old.push((name.clone(), old)),
                Err(e) if db::error_code(&e) == Some(1238) => {
                    a.error = Some(format!(
                        "server variable {name} is read-only at run time (static): it needs a server restart, so this config needs a managed server (server = {{…}}), not an external target"
                    ));
                    break;
                }
                Err(e) => {
                    a.error = Some(format!("SET GLOBAL {name} = {value}: {}", db::describe(&e)));
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
            let lit = if old.parse::<f64>().is_ok() {
                old.clone()
            } else {
                format!("'{old}'")
            };
            if let Err(e) = conn.query_drop(format!("SET GLOBAL {name} = {lit}")).await {
                first_err.get_or_insert(anyhow::anyhow!(
                    "SET GLOBAL {name} = {lit}: {}",
                    db::describe(&e)
                ));
            }
        }
        let _ = conn.disconnect().await;
        first_err.map_or(Ok(()), Err)
    }
}
