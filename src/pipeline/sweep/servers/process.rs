//! What every kind of target sweepbench runs as processes shares: the connection to a
//! managed server, starting one off the runtime, and restarting or closing a live server on
//! a blocking thread (a lost one stood in for by `Gone`).

use crate::pipeline::server::{managed, ManagedServer, ServerSpec};
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::sweep::block::Server;
use futures::future::BoxFuture;

/// Restarts `s` with its own blocking `restart` on a blocking thread, handing it back; a
/// restart that panicked took the process with it (its drop stopped it): `Gone` stands in.
pub(super) fn restart_in_thread<T: Server + 'static>(
    mut s: Box<T>,
    restart: fn(&mut T) -> anyhow::Result<()>,
    what: &'static str,
) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
    Box::pin(async move {
        match tokio::task::spawn_blocking(move || {
            let r = restart(&mut s);
            (s, r)
        })
        .await
        {
            Ok((s, r)) => (s as Box<dyn Server>, r),
            Err(e) => (
                Box::new(Gone(what)) as Box<dyn Server>,
                Err(anyhow::anyhow!("restarting {what}: {e}")),
            ),
        }
    })
}

/// Drops `s` (stopping its processes) on a blocking thread.
pub(super) fn close_in_thread<T: Server + 'static>(
    s: Box<T>,
) -> BoxFuture<'static, anyhow::Result<()>> {
    Box::pin(async move {
        tokio::task::spawn_blocking(move || drop(s)).await?;
        Ok(())
    })
}

/// A managed server (or cluster: what it was) lost in a failed restart: not running,
/// nothing to close.
struct Gone(&'static str);

impl Server for Gone {
    fn running(&mut self) -> bool {
        false
    }

    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
        Box::pin(async move {
            let e = anyhow::anyhow!("{} was lost in an earlier restart", self.0);
            (self as Box<dyn Server>, Err(e))
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub(super) fn managed_conn(port: u16) -> ConnInfo {
    ConnInfo {
        user: "root".into(),
        password: None,
        host: "127.0.0.1".into(),
        port,
        port_given: true,
        socket: None,
        db: "sbtest".into(),
        tls: Default::default(),
        more: Vec::new(),
    }
}

pub(super) async fn start(spec: ServerSpec) -> anyhow::Result<ManagedServer> {
    tokio::task::spawn_blocking(move || {
        let s = ManagedServer::start(&spec)?;
        managed::exec_root(&s, &["CREATE DATABASE IF NOT EXISTS sbtest"])?;
        Ok(s)
    })
    .await?
}
