//! A managed target: a throwaway mariadbd or mysqld started for each config on 127.0.0.1,
//! sized to the sweep, from the prepared "golden" datadir of the config's data shape (its
//! character set, row format, page size …: `spec::shape`) so every config of one shape starts
//! from the same data and each shape's tables are made under it; restarted per point where
//! asked, and after it dies.

use super::{ineffective_findings, record_server};
use crate::pipeline::events::Events;
use crate::pipeline::preflight::{Finding, Severity};
use crate::pipeline::server::mycnf::{self, MycnfContext};
use crate::pipeline::server::{managed, ManagedServer, ServerSpec};
use crate::pipeline::spec::target::ManagedTarget;
use crate::pipeline::spec::{parse_duration, Config, SweepSpec};
use crate::pipeline::sweep::block::{Block, RunState, Server};
use crate::pipeline::sweep::MARGIN;
use anyhow::Context;
use futures::future::BoxFuture;

use super::cluster::{self, GoldenOf};
use super::process::{close_in_thread, managed_conn, restart_in_thread, start};

impl Server for ManagedServer {
    fn pid(&self) -> Option<u32> {
        ManagedServer::pid(self)
    }

    fn cpu_seconds(&self) -> Option<f64> {
        ManagedServer::cpu_seconds(self)
    }

    fn running(&mut self) -> bool {
        self.is_running()
    }

    fn log_tail(&self) -> String {
        managed::log_tail(&self.error_log(), 8)
    }

    fn restart(self: Box<Self>) -> BoxFuture<'static, (Box<dyn Server>, anyhow::Result<()>)> {
        // The server's own restart, not this trait's.
        restart_in_thread(self, ManagedServer::restart, "the server")
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, anyhow::Result<()>> {
        close_in_thread(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What can be checked before a server is started: its binary, and the configs' variables
/// its my.cnf template leaves without effect.
pub(super) fn preflight(spec: &SweepSpec, target: &str, m: &ManagedTarget) -> Vec<Finding> {
    let mut all = vec![binary_finding(target, m)];
    all.extend(engine_finding(target, m, spec.engine_of(target)));
    all.extend(ineffective_findings(spec, target, None));
    if let Some(c) = &m.cluster {
        all.extend(cluster::preflight(spec, target, m, c.nodes));
    }
    all.extend(m.class().map(|c| class_finding(target, &c)));
    all.extend(disk_finding(spec, target));
    all
}

/// A managed target's data lives in the temporary directory (TMPDIR): the prepared copy, and
/// one copy for each of its servers up at once (every config in a paired sweep, one in a
/// sequential one). Refused before anything starts when the disk there cannot hold them.
fn disk_finding(spec: &SweepSpec, target: &str) -> Option<Finding> {
    use crate::pipeline::spec::size::{bytes, estimate, ASSUMED_ROW_BYTES};
    let data = estimate(spec, target).unwrap_or_else(|| {
        spec.data.tables as u64 * spec.data.table_size as u64 * ASSUMED_ROW_BYTES
    });
    let at_once = if spec.run.design.paired() {
        spec.configs.len().max(1) as u64
    } else {
        1
    };
    // One prepared copy per data shape among the configs (`spec::shape`).
    let shapes = crate::pipeline::spec::shape::distinct(&spec.configs).len() as u64;
    let need = data.saturating_mul(shapes + at_once);
    let tmp = std::env::temp_dir();
    let free = crate::pipeline::preflight::free_bytes(tmp.to_str()?)?;
    let asked = match spec.data.size {
        Some(size) => format!("data.size = {}", size.shown()),
        None => format!(
            "{} table(s) × {} rows",
            spec.data.tables, spec.data.table_size
        ),
    };
    (free < need).then(|| Finding {
        target: target.to_string(),
        severity: Severity::Blocking,
        check: "disk",
        message: format!(
            "{} has {} free and {asked} needs about {} there ({} of data, copied for each of {} server(s) up at once besides the {} prepared cop{}, one per data shape of the configs): give a smaller size, or point TMPDIR at a bigger disk",
            tmp.display(),
            bytes(free),
            bytes(need),
            bytes(data),
            at_once,
            shapes,
            if shapes == 1 { "y" } else { "ies" }
        ),
        max_threads: None,
    })
}

/// Rows per table a target's data will have, as far as the file tells (a sized target's from
/// its estimate), for sizing its redo log.
fn estimated_rows(spec: &SweepSpec, target: &str) -> u32 {
    use crate::pipeline::spec::size::{estimate, ASSUMED_ROW_BYTES};
    estimate(spec, target).map_or(spec.data.table_size, |b| {
        (b / ASSUMED_ROW_BYTES / spec.data.tables.max(1) as u64).min(u32::MAX as u64) as u32
    })
}

/// A class this host can give (not more CPUs or memory than it has) and enforce (cgroups it
/// may make), or why not with the remedy.
fn class_finding(target: &str, c: &crate::pipeline::server::class::Class) -> Finding {
    use crate::pipeline::server::class;
    let (severity, message) = match (c.larger_than_host(), class::check_available()) {
        (Some(why), _) => (
            Severity::Blocking,
            format!("server.class asks for {why}: give a class this host can hold"),
        ),
        (None, Err(e)) => (Severity::Blocking, format!("server.class: {e:#}")),
        (None, Ok(())) => (
            Severity::Info,
            format!(
                "class {}: the server runs in a cgroup with that CPU quota and memory limit; buffer pool {} MiB unless a config sets innodb_buffer_pool_size",
                c.shown(),
                c.buffer_pool_mb()
            ),
        ),
    };
    Finding {
        target: target.to_string(),
        severity,
        check: "class",
        message,
        max_threads: None,
    }
}

/// Where a managed server's plugins are: the basedir's lib/mysql/plugin (Debian's layout,
/// and that of scripts/unpack-mariadb.sh's wrappers).
fn plugin_dir(m: &ManagedTarget) -> std::path::PathBuf {
    m.basedir
        .as_deref()
        .unwrap_or(std::path::Path::new("/usr"))
        .join("lib/mysql/plugin")
}

/// The plugin a managed server loads for the engine of its tables, when the engine is not
/// built in (`--plugin-load-add=ha_rocksdb`).
fn engine_options(m: &ManagedTarget, engine: &str) -> Vec<String> {
    let mut o = m.options.clone();
    if let Some(p) = crate::engine::config::engine_plugin(engine) {
        let flag = format!("--plugin-load-add={p}");
        if !o.iter().any(|x| x.starts_with(&flag)) {
            o.push(flag);
        }
    }
    o
}

/// An engine that needs a plugin the basedir does not hold: refused before anything starts,
/// with the package that has it.
fn engine_finding(target: &str, m: &ManagedTarget, engine: &str) -> Option<Finding> {
    let plugin = crate::engine::config::engine_plugin(engine)?;
    let path = plugin_dir(m).join(format!("{plugin}.so"));
    let (severity, message) = if path.is_file() {
        (
            Severity::Info,
            format!("storage engine {engine}: loads {}", path.display()),
        )
    } else {
        (
            Severity::Blocking,
            format!(
                "storage engine {engine} needs the plugin {} and it is not there: apt-get install mariadb-plugin-{} (for this machine's MariaDB), or give a basedir that has it",
                path.display(),
                engine.to_ascii_lowercase()
            ),
        )
    };
    Some(Finding {
        target: target.to_string(),
        severity,
        check: "engine",
        message,
        max_threads: None,
    })
}

/// A managed target is sized by us; what can be checked before starting it is its binary.
fn binary_finding(target: &str, m: &ManagedTarget) -> Finding {
    let (severity, message) =
        match crate::pipeline::server::managed::find_server(m.basedir.as_deref()) {
            Ok(bin) => (
                Severity::Info,
                format!(
                "managed server {} (started for each config, max_connections sized to the sweep)",
                bin.display()
            ),
            ),
            Err(e) => (Severity::Blocking, format!("{e:#}")),
        };
    Finding {
        target: target.to_string(),
        severity,
        check: "server",
        message,
        max_threads: None,
    }
}

/// The block of `target` × `config`: a server started with the config's my.cnf, from the
/// golden datadir of its data shape (prepared, and kept, by that shape's first config),
/// recorded.
pub(super) async fn open(
    spec: &SweepSpec,
    target: &str,
    m: &ManagedTarget,
    config: &Config,
    max_threads: u32,
    st: &mut RunState,
    ev: &dyn Events,
) -> anyhow::Result<Block> {
    let key = format!("{target}/{}", config.name);
    let vars: Vec<(&str, String)> = config
        .vars
        .iter()
        .map(|(k, v)| (k.as_str(), mycnf::cnf_value(v)))
        .collect();
    let cnf = mycnf::render(
        config.mycnf.as_deref(),
        &MycnfContext {
            max_connections: max_threads + MARGIN + 16,
            vars,
            target,
            config: &config.name,
            redo_log_mb: mycnf::redo_log_mb(spec.data.tables, estimated_rows(spec, target)),
            buffer_pool_mb: m
                .class()
                .map_or(mycnf::DEFAULT_BUFFER_POOL_MB, |c| c.buffer_pool_mb()),
        },
    )?;
    // One golden datadir per data shape (`spec::shape`): a config starts from the copy its
    // shape's first config prepared, or prepares it — on a datadir initialised in its format.
    let shape = crate::pipeline::spec::shape::of(config);
    let golden_key = if shape.is_empty() {
        target.to_string()
    } else {
        format!("{target} {shape}")
    };
    let shape_no = crate::pipeline::spec::shape::distinct(&spec.configs)
        .iter()
        .position(|s| *s == shape)
        .unwrap_or(0);
    let golden_dir = match shape_no {
        0 => format!("golden-{target}"),
        n => format!("golden-{target}-shape{n}"),
    };
    let server_spec = ServerSpec {
        basedir: m.basedir.clone(),
        options: engine_options(m, spec.engine_of(target)),
        max_connections: 0,
        workdir: Some(st.work.path().to_path_buf()),
        mycnf: Some(cnf.clone()),
        seed_datadir: st.golden.get(&golden_key).cloned(),
        init_options: crate::pipeline::spec::shape::init_options(config),
        startup_timeout_s: m
            .startup_timeout
            .as_deref()
            .and_then(parse_duration)
            .unwrap_or(0),
        class: m.class(),
        ..Default::default()
    };
    if let Some(cl) = &m.cluster {
        let golden = st.golden.get(&golden_key).cloned().map_or(
            GoldenOf::Make {
                path: st.work.path().join(&golden_dir),
                keep_as: golden_key.clone(),
            },
            GoldenOf::Have,
        );
        return cluster::open(
            spec,
            (target, key),
            cl.nodes,
            server_spec,
            golden,
            &cnf,
            st,
            ev,
        )
        .await;
    }
    let seeded = server_spec.seed_datadir.is_some();
    let mut server = start(server_spec.clone())
        .await
        .with_context(|| format!("starting the managed server for {key}"))?;
    if !seeded {
        let c = managed_conn(server.port());
        ev.note(&format!(
            "preparing data on {key} (managed, {})",
            server.version()
        ));
        super::super::ensure_data(spec, &c, (target, &key), ev)
            .await
            .context("preparing data")?;
        // Keep this datadir as its shape's golden copy: stop cleanly, copy, restart from a
        // copy so this config starts exactly like the next ones of its shape.
        let golden = st.work.path().join(&golden_dir);
        let g2 = golden.clone();
        server = tokio::task::spawn_blocking(move || -> anyhow::Result<ManagedServer> {
            let mut s = server;
            s.stop();
            managed::copy_dir(&s.datadir(), &g2)?;
            drop(s);
            ManagedServer::start(&ServerSpec {
                seed_datadir: Some(g2.clone()),
                ..server_spec
            })
        })
        .await??;
        st.golden.insert(golden_key, golden);
    }
    let c = managed_conn(server.port());
    let version = server.version().to_string();
    record_server(st, &key, &c, Some(&cnf)).await?;
    if let Some(class) = m.class() {
        crate::pipeline::results::servers::write_class(&st.servers_dir, &key, &class.shown())?;
    }
    Ok(Block {
        key,
        conn: Some(c),
        version,
        error: None,
        restart_per_point: m.restart_per_point(),
        proxy: None,
        costs: Default::default(),
        live: Some(Box::new(server)),
    })
}
