//! A proxied target (`proxy = { kind = "haproxy" | "mysqlrouter", … }`): the proxy started in
//! front of the block's server once its data is prepared and its variables set; the block's
//! connection goes through it, its counters' reader does not. Checked before a run: the
//! proxy's binary, and its own connection limit against the sweep's threads.

use crate::pipeline::preflight::{Finding, Needs, Severity};
use crate::pipeline::server::proxy::{Proxy, ProxyKind};
use crate::pipeline::spec::target::ProxySpec;
use crate::pipeline::sweep::block::{Block, RunState};
use crate::pipeline::sweep::MARGIN;
use anyhow::Context;

/// The connections a proxy takes: its own limit where one is given, else the sweep's.
pub(super) fn limit(p: &ProxySpec, connections: u32) -> u32 {
    p.max_connections.unwrap_or(connections.max(16) + 16)
}

/// Starts the proxy in front of `b`'s server and points the block's connection at it.
pub(super) async fn start(
    b: &mut Block,
    p: &ProxySpec,
    st: &RunState,
    connections: u32,
) -> anyhow::Result<()> {
    let c = b.conn.clone().context("no connection")?;
    // Where the block's own connections would go (a socket, or host and port).
    let backend = crate::engine::db::endpoint(&c.conn_options(), 0);
    let dir = st
        .work
        .path()
        .join(format!("proxy-{}", b.key.replace('/', "__")));
    let kind = p.kind();
    let n = limit(p, connections);
    let proxy =
        tokio::task::spawn_blocking(move || Proxy::start(&dir, &kind, &backend, n)).await??;
    let mut through = c;
    through.host = "127.0.0.1".into();
    through.port = proxy.port;
    through.port_given = true;
    through.socket = None;
    through.more.clear();
    b.conn = Some(through);
    b.proxy = Some(proxy);
    Ok(())
}

/// The proxy's findings: its binary (MySQL Router's is unpacked, not installed), and a limit
/// of its own below what the sweep opens through it, refused with the proxy named.
pub(super) fn preflight(target: &str, p: &ProxySpec, n: &Needs) -> Vec<Finding> {
    let finding = |severity, message: String, max_threads| Finding {
        target: target.to_string(),
        severity,
        check: "proxy",
        message,
        max_threads,
    };
    let mut all = Vec::new();
    let kind = p.kind();
    if let ProxyKind::Router(o) = &kind {
        match crate::pipeline::server::router::binary(o.binary.as_deref()) {
            Ok(b) => all.push(finding(
                Severity::Info,
                format!(
                    "mysqlrouter {} in front of target '{}'",
                    b.display(),
                    p.target
                ),
                None,
            )),
            Err(e) => all.push(finding(Severity::Blocking, format!("{e:#}"), None)),
        }
    }
    if let Some(max) = p.max_connections {
        // The workers, and the connection sweepbench itself opens through it.
        let need = n.max_threads + MARGIN;
        if max < need {
            all.push(finding(
                Severity::Blocking,
                format!(
                    "{} '{target}' takes at most {max} connections (proxy.max_connections) and the sweep opens up to {need} through it ({} threads and {MARGIN} of its own): raise proxy.max_connections or lower the threads",
                    kind.name(),
                    n.max_threads
                ),
                Some(max.saturating_sub(MARGIN)),
            ));
        }
    }
    all
}
