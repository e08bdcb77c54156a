//! Throwaway server instances: find the binaries, initialise a datadir, start on a free
//! loopback port, wait until ready, stop cleanly (SIGTERM, then SIGKILL after a timeout).
//! No instance outlives its process: servers are spawned from one long-lived thread with
//! PR_SET_PDEATHSIG, and an atexit hook stops those never dropped (shared test servers).

use anyhow::{bail, Context};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How to start one instance.
#[derive(Debug, Clone, Default)]
pub struct ServerSpec {
    /// Install root holding sbin/ or bin/; None searches PATH and the usual system places.
    pub basedir: Option<PathBuf>,
    /// Extra `--name=value` server options.
    pub options: Vec<String>,
    /// max_connections; 0 keeps the server's default (151).
    pub max_connections: u32,
    /// Where the instance's directory is created; None = the system temp dir.
    pub workdir: Option<PathBuf>,
    /// A rendered my.cnf (tuning only: paths, port and bind address are always set by us on
    /// the command line, which wins over the file).
    pub mycnf: Option<String>,
    /// Start from a copy of this datadir instead of initialising a new one.
    pub seed_datadir: Option<PathBuf>,
    /// `--name=value` options a new datadir is initialised with: its format (innodb_page_size
    /// and the like, `spec::shape`), which the server's my.cnf must then agree with.
    pub init_options: Vec<String>,
    /// Seconds to wait for the server to accept connections (0 = 60).
    pub startup_timeout_s: u64,
    /// The system user the server runs as (`--user`), its directory made theirs; None runs
    /// it as this process's user. A Galera node started by root needs one: its state
    /// transfer's rsync daemon drops to an unprivileged user that must write the datadir.
    pub user: Option<String>,
    /// Start on an empty datadir that a cluster's state transfer fills (a joining node).
    pub joiner: bool,
    /// An instance class: the server runs in a cgroup with its CPU quota and memory limit.
    pub class: Option<super::class::Class>,
}

/// A running throwaway server. Dropping it stops the server and removes its directory.
#[derive(Debug)]
pub struct ManagedServer {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    version: String,
    /// What it was started with, for restarts.
    spec: ServerSpec,
    binary: PathBuf,
    mariadb: bool,
    /// Marks `dir` as in use for as long as this server lives (see `workdir`).
    owner: Option<super::workdir::Owner>,
    /// The class's cgroup the server runs in; dropped (removed) after the server stops.
    cgroup: Option<super::class::Cgroup>,
}

const SERVER_NAMES: [&str; 2] = ["mariadbd", "mysqld"];
const SYSTEM_DIRS: [&str; 4] = [
    "/usr/sbin",
    "/usr/bin",
    "/usr/local/mysql/bin",
    "/usr/local/bin",
];

pub(crate) fn find_in(dirs: &[PathBuf], names: &[&str]) -> Option<PathBuf> {
    for d in dirs {
        for n in names {
            let p = d.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

pub(crate) fn search_dirs(basedir: Option<&Path>) -> Vec<PathBuf> {
    match basedir {
        Some(b) => ["sbin", "bin", "libexec", "scripts", "usr/sbin", "usr/bin"]
            .iter()
            .map(|s| b.join(s))
            .collect(),
        None => std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
            .collect(),
    }
}

/// The server binary under `basedir` (or on this machine).
pub fn find_server(basedir: Option<&Path>) -> anyhow::Result<PathBuf> {
    find_in(&search_dirs(basedir), &SERVER_NAMES).with_context(|| match basedir {
        Some(b) => format!(
            "no mariadbd or mysqld under {} (looked in sbin/, bin/, libexec/)",
            b.display()
        ),
        None => "no mariadbd or mysqld found on PATH or in /usr/sbin; install the MariaDB server \
                 (apt-get install mariadb-server) or give a basedir"
            .to_string(),
    })
}

pub(crate) fn free_port() -> anyhow::Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("finding a free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A system user's uid and gid (None: no such user).
pub(crate) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns null or a pointer to a static record read at once, before any
    // other call could reuse it.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        (!pw.is_null()).then(|| ((*pw).pw_uid, (*pw).pw_gid))
    }
}

/// Makes `dir` (recursively) `user`'s, and lets them reach it: every directory above it that
/// this process made for its runs (under the temp dir) gets the search bit for others.
fn give_to(user: &str, dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{user}:"))
        .arg(dir)
        .status()
        .context("running chown")?;
    if !status.success() {
        bail!(
            "could not give {} to the user {user} ({status}); the server runs as {user}",
            dir.display()
        );
    }
    let tmp = std::env::temp_dir();
    let mut up = dir.parent();
    while let Some(d) = up {
        if !d.starts_with(&tmp) || d == tmp {
            break;
        }
        if let Ok(m) = std::fs::metadata(d) {
            let mode = m.permissions().mode();
            if mode & 0o001 == 0 {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o001))?;
            }
        }
        up = d.parent();
    }
    Ok(())
}

/// What a log says about a failure: its error lines if it has any (they are often far from
/// the end, before pages of advice), else its tail.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    let errors: Vec<&str> = all
        .iter()
        .copied()
        .filter(|l| l.contains("ERROR") || l.contains("[ERROR]") || l.contains("FATAL"))
        .collect();
    if !errors.is_empty() {
        return errors[errors.len().saturating_sub(lines)..].join("\n");
    }
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Spawns children from one thread that lives as long as the process, so PR_SET_PDEATHSIG
/// (which fires when the spawning *thread* ends) means "when this process dies".
pub(crate) fn spawn_watched(cmd: Command) -> std::io::Result<Child> {
    type Req = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Req>>> = OnceLock::new();
    let tx = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Req>();
        std::thread::Builder::new()
            .name("server-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag on the child.
                    unsafe {
                        cmd.pre_exec(|| {
                            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                            Ok(())
                        });
                    }
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawner thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| std::io::Error::other("server spawner thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| std::io::Error::other("server spawner thread is gone"))?
}

/// Servers still running, stopped by the atexit hook if nobody dropped them.
static LIVE: Mutex<Vec<(u32, PathBuf)>> = Mutex::new(Vec::new());

extern "C" fn stop_leftovers() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|p| p.into_inner()));
    for (pid, dir) in live {
        terminate(pid, Duration::from_secs(20));
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn register(pid: u32, dir: &Path) {
    static HOOK: OnceLock<()> = OnceLock::new();
    HOOK.get_or_init(|| {
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(stop_leftovers);
        }
    });
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((pid, dir.to_path_buf()));
}

fn unregister(pid: u32) {
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|(p, _)| *p != pid);
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

/// SIGTERM (the server's clean shutdown), then SIGKILL after `grace`.
fn terminate(pid: u32, grace: Duration) {
    // SAFETY: signalling a child we started.
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let until = Instant::now() + grace;
    while Instant::now() < until {
        // Reap if it is our child; ignore errors for processes that are not.
        let mut status = 0;
        // SAFETY: non-blocking waitpid on a pid we own.
        let r = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
        if r == pid as i32 || !alive(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid as i32, &mut status, 0);
    }
}

impl ManagedServer {
    /// Initialises a datadir and starts the server; returns once it accepts connections.
    pub fn start(spec: &ServerSpec) -> anyhow::Result<ManagedServer> {
        let server = find_server(spec.basedir.as_deref())?;
        let root = match &spec.workdir {
            Some(w) => w.clone(),
            None => {
                // Quietly: a sweep reaps (and says so) when its run starts; this is a lone
                // server's (the sandbox's, a test's).
                let _ = super::workdir::reap_temp();
                std::env::temp_dir()
            }
        };
        std::fs::create_dir_all(&root)
            .with_context(|| format!("creating work directory {}", root.display()))?;
        let dir = tempfile::Builder::new()
            .prefix("sweepbench-srv-")
            .tempdir_in(&root)
            .with_context(|| format!("creating a server directory under {}", root.display()))?
            .keep();
        let owner = super::workdir::mark(&dir)
            .with_context(|| format!("marking {} as in use", dir.display()));
        let result = owner.and_then(|owner| {
            let mut s = Self::start_in(spec, &server, &dir)?;
            s.owner = Some(owner);
            Ok(s)
        });
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        result
    }

    fn start_in(spec: &ServerSpec, server: &Path, dir: &Path) -> anyhow::Result<ManagedServer> {
        let data = dir.join("data");
        std::fs::create_dir_all(&data)?;
        std::fs::create_dir_all(dir.join("tmp"))?;
        let mariadb = is_mariadb(server);
        match &spec.seed_datadir {
            _ if spec.joiner => {}
            Some(seed) => copy_dir(seed, &data)?,
            None => initialise(spec, server, &data, dir, mariadb)?,
        }
        if let Some(text) = &spec.mycnf {
            std::fs::write(dir.join("my.cnf"), text)?;
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = free_port()?;
            match Self::launch(spec, server, dir, &data, port, mariadb) {
                Ok(s) => return Ok(s),
                // A port found free can be taken before the server binds it: retry with
                // another; any other start-up failure is final.
                Err(e) if attempt < 3 && e.to_string().contains("Address already in use") => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn launch(
        spec: &ServerSpec,
        server: &Path,
        dir: &Path,
        data: &Path,
        port: u16,
        mariadb: bool,
    ) -> anyhow::Result<ManagedServer> {
        let log = dir.join("error.log");
        if let Some(u) = &spec.user {
            give_to(u, dir)?;
        }
        let mut cmd = Command::new(server);
        match spec.mycnf {
            Some(_) => cmd.arg(format!("--defaults-file={}", dir.join("my.cnf").display())),
            None => cmd.arg("--no-defaults"),
        };
        if let Some(b) = &spec.basedir {
            cmd.arg(format!("--basedir={}", b.display()));
        }
        cmd.arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", log.display()))
            .arg(format!("--tmpdir={}", dir.join("tmp").display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg("--skip-name-resolve")
            .args(spec.options.iter())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if spec.max_connections > 0 {
            cmd.arg(format!("--max-connections={}", spec.max_connections));
        }
        match &spec.user {
            // Started as that user, not switched to by the server: a process that changes
            // its own credentials loses PR_SET_PDEATHSIG and would outlive a killed sweep.
            Some(u) => {
                let (uid, gid) = user_ids(u).with_context(|| {
                    format!("there is no system user '{u}' to run the server as")
                })?;
                cmd.uid(uid).gid(gid);
            }
            None if is_root() => {
                cmd.arg("--user=root");
            }
            None => {}
        }
        if !mariadb {
            // MySQL 8+ would otherwise open the X protocol port on all interfaces.
            cmd.arg("--mysqlx=OFF");
        }
        let cgroup = match &spec.class {
            Some(c) => {
                let label = dir
                    .file_name()
                    .map_or("server".into(), |n| n.to_string_lossy());
                let g = super::class::Cgroup::create(c, &label)?;
                if let Some(u) = &spec.user {
                    // The server joins its group after it has become the user.
                    let (uid, gid) = user_ids(u).context("the server's user")?;
                    g.give_to(uid, gid)?;
                }
                g.join_on_exec(&mut cmd);
                Some(g)
            }
            None => None,
        };
        let child = spawn_watched(cmd).with_context(|| format!("starting {}", server.display()))?;
        let pid = child.id();
        register(pid, dir);
        let mut s = ManagedServer {
            child: Some(child),
            dir: dir.to_path_buf(),
            port,
            version: String::new(),
            spec: spec.clone(),
            binary: server.to_path_buf(),
            mariadb,
            owner: None,
            cgroup,
        };
        let timeout = if spec.startup_timeout_s == 0 {
            60
        } else {
            spec.startup_timeout_s
        };
        if let Err(e) = s.wait_ready(&log, Duration::from_secs(timeout)) {
            s.stop();
            return Err(e);
        }
        Ok(s)
    }

    fn wait_ready(&mut self, log: &Path, limit: Duration) -> anyhow::Result<()> {
        let until = Instant::now() + limit;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    unregister(child.id());
                    self.child = None;
                    bail!(
                        "the server exited during start-up ({status}); its error log ends with:\n{}",
                        log_tail(log, 15)
                    );
                }
            }
            if let Ok(v) = query_version(&self.socket()) {
                self.version = v;
                return Ok(());
            }
            if Instant::now() > until {
                bail!(
                    "the server did not accept connections within {}s; its error log ends with:\n{}",
                    limit.as_secs(),
                    log_tail(log, 15)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn error_log(&self) -> PathBuf {
        self.dir.join("error.log")
    }

    /// `SELECT VERSION()` as reported at start.
    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// False once the server process has exited (crashed, killed, shut down).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    pub fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// CPU seconds (user + system) the server process has used so far, from /proc.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = self.pid()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        Some(ticks / hz)
    }

    /// Stops and starts the server on the same datadir (cold caches); a cluster's joining
    /// node on an emptied one, which its state transfer fills again.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.stop();
        if self.spec.joiner {
            let data = self.datadir();
            std::fs::remove_dir_all(&data)
                .with_context(|| format!("emptying {}", data.display()))?;
            std::fs::create_dir_all(&data)?;
        }
        let fresh = Self::launch(
            &self.spec,
            &self.binary,
            &self.dir,
            &self.dir.join("data"),
            self.port,
            self.mariadb,
        )?;
        // Take over the new process; dropping the husk must not remove our directory.
        let mut fresh = fresh;
        self.child = fresh.child.take();
        self.version = std::mem::take(&mut fresh.version);
        self.cgroup = fresh.cgroup.take();
        fresh.dir = PathBuf::new();
        Ok(())
    }

    /// The class's cgroup the server runs in, if it has a class.
    pub fn cgroup(&self) -> Option<&super::class::Cgroup> {
        self.cgroup.as_ref()
    }

    /// Stops the server (SIGTERM, SIGKILL after 30 s) and keeps its directory.
    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            let pid = child.id();
            terminate(pid, Duration::from_secs(30));
            unregister(pid);
        }
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        self.stop();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// `cp -a` (with reflinks where the filesystem has them): datadirs are big and sparse.
/// Replaces `to` if it exists.
pub fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    let status = Command::new("cp")
        .arg("-a")
        .arg("--reflink=auto")
        .arg(from)
        .arg(to)
        .status()
        .context("running cp")?;
    if !status.success() {
        bail!("copying the datadir {} failed ({status})", from.display());
    }
    Ok(())
}

fn is_mariadb(server: &Path) -> bool {
    Command::new(server)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("MariaDB"))
        .unwrap_or(false)
}

/// Creates the system tables: mariadb-install-db for MariaDB, `--initialize-insecure` for
/// MySQL 5.7+.
fn initialise(
    spec: &ServerSpec,
    server: &Path,
    data: &Path,
    dir: &Path,
    mariadb: bool,
) -> anyhow::Result<()> {
    let dirs = search_dirs(spec.basedir.as_deref());
    let log = dir.join("install.log");
    let out = std::fs::File::create(&log)?;
    let mut cmd = if mariadb {
        let install = find_in(&dirs, &["mariadb-install-db", "mysql_install_db"])
            .context("mariadb-install-db not found next to the server binary")?;
        let mut c = Command::new(install);
        c.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db");
        if let Some(b) = &spec.basedir {
            c.arg(format!("--basedir={}", b.display()));
        }
        c
    } else {
        let mut c = Command::new(server);
        c.arg("--no-defaults")
            .arg("--initialize-insecure")
            .arg(format!("--datadir={}", data.display()));
        c
    };
    if is_root() {
        cmd.arg("--user=root");
    }
    cmd.args(&spec.init_options);
    // Concurrent bootstraps sharing /tmp collide on their temporary tables
    // ("Unknown table 'mysql.tmp_user_sys'"): give each instance its own.
    let tmp = dir.join("tmp");
    let status = cmd
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()
        .context("running the datadir initialisation")?;
    if !status.success() {
        bail!(
            "initialising the datadir failed ({status}); output ends with:\n{}",
            log_tail(&log, 15)
        );
    }
    Ok(())
}

/// A root connection over the server's socket with the synchronous client (these helpers run
/// on plain threads and in `spawn_blocking`: no runtime needed for a few statements).
pub(crate) fn root_conn(socket: &Path) -> anyhow::Result<crate::engine::wire::Conn> {
    let login = crate::engine::wire::Login {
        user: "root",
        password: "",
        db: "",
        server_charset: false,
        allow_cleartext: false,
        tls: None,
    };
    let ep = crate::engine::wire::Endpoint::Socket(socket.to_string_lossy().to_string());
    crate::engine::wire::Conn::connect(&ep, &login, Duration::from_secs(10))
        .map_err(|e| anyhow::anyhow!("connecting as root over {}: {e}", socket.display()))
}

/// Connects over the socket as root and returns the server version (as `SELECT VERSION()`
/// says it: MariaDB's greeting carries a "5.5.5-" prefix for old replication clients).
fn query_version(socket: &Path) -> anyhow::Result<String> {
    let c = root_conn(socket)?;
    let v = c.server_version.clone();
    c.close();
    Ok(v.strip_prefix("5.5.5-").unwrap_or(&v).to_string())
}

/// Runs SQL statements as root on a managed server (set-up helper for tests and targets).
pub fn exec_root(server: &ManagedServer, statements: &[&str]) -> anyhow::Result<()> {
    let mut c = root_conn(&server.socket())?;
    for s in statements {
        c.query(s)
            .map_err(|e| anyhow::anyhow!("running '{s}': {e}"))?;
    }
    c.close();
    Ok(())
}
