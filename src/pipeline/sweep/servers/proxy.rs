//! A proxied target (`proxy = "haproxy"`): HAProxy started in front of the block's server
//! once its data is prepared and its variables set; the block's connection goes through it,
//! its counters' reader does not.

use crate::pipeline::server::proxy::Haproxy;
use crate::pipeline::sweep::block::{Block, RunState};
use anyhow::Context;

/// Starts HAProxy in front of `b`'s server and points the block's connection at it.
pub(super) async fn start(b: &mut Block, st: &RunState, connections: u32) -> anyhow::Result<()> {
    let c = b.conn.clone().context("no connection")?;
    // Where the block's own connections would go (a socket, or host and port).
    let backend = crate::engine::db::endpoint(&c.conn_options(), 0);
    let dir = st
        .work
        .path()
        .join(format!("proxy-{}", b.key.replace('/', "__")));
    let p =
        tokio::task::spawn_blocking(move || Haproxy::start(&dir, &backend, connections)).await??;
    let mut through = c;
    through.host = "127.0.0.1".into();
    through.port = p.port;
    through.port_given = true;
    through.socket = None;
    b.conn = Some(through);
    b.proxy = Some(p);
    Ok(())
}
