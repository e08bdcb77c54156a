//! `sweepbench sandbox`: one throwaway server around one command, for trying the engine (and
//! sysbench) without touching any installed server.

use crate::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};
use anyhow::Context;
use std::path::PathBuf;

pub struct SandboxArgs {
    pub basedir: Option<PathBuf>,
    /// `--mariadb VERSION`: the basedir that version names.
    pub mariadb: Option<String>,
    pub max_connections: u32,
    pub server_options: Vec<String>,
    pub db: String,
    pub command: Vec<String>,
}

/// Runs the command against a fresh server; returns the command's exit code.
pub async fn run(a: SandboxArgs) -> anyhow::Result<i32> {
    if !a.db.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        anyhow::bail!(
            "--db must be a plain identifier (letters, digits, _), got '{}'",
            a.db
        );
    }
    let basedir = match &a.mariadb {
        Some(v) => Some(
            crate::pipeline::server::versions::resolve(v)
                .map_err(|e| anyhow::anyhow!("--mariadb {v}: {e}"))?
                .basedir,
        ),
        None => a.basedir.clone(),
    };
    let spec = ServerSpec {
        basedir,
        options: a
            .server_options
            .iter()
            .map(|o| format!("--{}", o.trim_start_matches("--")))
            .collect(),
        max_connections: a.max_connections,
        ..ServerSpec::default()
    };
    // What a killed sandbox or sweep left in TMPDIR goes first, said (the server's start
    // would reap it silently).
    for line in crate::pipeline::server::workdir::reap_temp() {
        eprintln!("[sandbox] {line}");
    }
    let db = a.db.clone();
    let server = tokio::task::spawn_blocking(move || -> anyhow::Result<ManagedServer> {
        let s = ManagedServer::start(&spec)?;
        exec_root(&s, &[&format!("CREATE DATABASE IF NOT EXISTS `{db}`")])?;
        Ok(s)
    })
    .await
    .context("server start-up task failed")??;
    let port = server.port().to_string();
    let socket = server.socket().to_string_lossy().to_string();
    eprintln!(
        "[sandbox] MariaDB/MySQL {} on 127.0.0.1:{port} (socket {socket}), database '{}'",
        server.version(),
        a.db
    );
    let args: Vec<String> = a
        .command
        .iter()
        .map(|s| s.replace("{port}", &port).replace("{socket}", &socket))
        .collect();
    let mut cmd = tokio::process::Command::new(&args[0]);
    // SAFETY: prctl only sets a flag on the child: killed with the sandbox (even by SIGKILL),
    // so the command never outlives the server it was given. This thread (the runtime's
    // block_on thread) lives as long as the process, which is what the flag follows.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let status = cmd
        .args(&args[1..])
        .env("SWEEPBENCH_PORT", &port)
        .env("SWEEPBENCH_SOCKET", &socket)
        .status()
        .await
        .with_context(|| format!("running {}", args[0]))?;
    let server_dir = server.dir().to_path_buf();
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .context("stopping the server")?;
    eprintln!("[sandbox] server stopped, {} removed", server_dir.display());
    Ok(status.code().unwrap_or(130))
}
