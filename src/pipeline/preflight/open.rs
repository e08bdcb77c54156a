//! The preflight opens what the sweep will open: as many connections as its largest point
//! needs, held together, then closes them — the one way to meet a limit the server's variables do
//! not show (a proxy's or a pooler's own: MySQL Router's route, ProxySQL, a cloud's pooler).

use super::{Finding, Needs, Severity};
use crate::engine::admin::Admin;
use crate::engine::config::ConnOptions;

/// Opens `want` connections to `conn` one after another, holding each (the preflight's own
/// connection is the sweep's first), then closes them all. Returns how many opened and the
/// first refusal. Not at once: MySQL Router counts a connection against its route's limit
/// only once its backend answers, so 17 logins at once got 15 through a route of 8 here,
/// while one at a time stops at the limit itself.
async fn open_in_turn(conn: &ConnOptions, want: usize) -> (usize, Option<String>) {
    // No database: it may not exist before the prepare, and a login is what a limit counts.
    let mut conn = conn.clone();
    conn.db.clear();
    let conn = &conn;
    let mut opened = Vec::with_capacity(want);
    let mut refused = None;
    for i in 0..want {
        match Admin::open(conn, i).await {
            Ok(c) => opened.push(c),
            Err(e) => {
                refused = Some(e.to_string());
                break;
            }
        }
    }
    let got = opened.len();
    futures::future::join_all(opened.into_iter().map(Admin::close)).await;
    (got, refused)
}

/// The finding when `target` cannot take the connections the sweep opens at its largest
/// point (its workers and sweepbench's own), though the server's max_connections allows
/// them: what opened, what refused the next, and the remedies. None when all opened.
pub async fn connections_finding(
    target: &str,
    conn: &ConnOptions,
    needs: &Needs,
) -> Option<Finding> {
    let total = (needs.max_threads + needs.margin) as usize;
    // The preflight's own connection is open already: it counts as one.
    let (got, refused) = open_in_turn(conn, total.saturating_sub(1)).await;
    let got = got + 1;
    let why = refused?;
    let workers = got.saturating_sub(needs.margin as usize) as u32;
    Some(Finding {
        target: target.to_string(),
        severity: Severity::Blocking,
        check: "connections",
        message: format!(
            "opened {got} of the {total} connections the sweep needs at {} threads (+ {} of sweepbench's own), though the server's max_connections allows them; the next was refused: {why}. \
             Something between sweepbench and the server has a limit of its own — a proxy or a pooler (MySQL Router's max_connections on its route, ProxySQL's mysql-max_connections or the user's max_connections in mysql_users, a cloud pooler's pool size): raise it there, or keep [run] threads at or below {workers}",
            needs.max_threads, needs.margin
        ),
        max_threads: Some(workers),
    })
}
