//! Instance classes: a managed server held to a CPU quota and a memory limit by the kernel's
//! cgroups (v1's cpu and memory controllers where mounted, else v2's cpu.max and memory.max),
//! so one host can stand in for a smaller cloud instance.

use anyhow::Context;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The CFS period a quota is a share of (the kernel's default).
const PERIOD_US: u64 = 100_000;

/// `class = { cpus = 1.5, memory = "2G" }`: what the server may use.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Class {
    /// CPUs' worth of time per period (1.5 = one and a half cores).
    pub cpus: f64,
    /// Bytes of memory (page cache of its files included, as the kernel counts it).
    pub memory: u64,
}

impl Class {
    /// The buffer pool a class gets when its config does not set one: half its memory (the
    /// rest for connections, the log buffer and the page cache of its files), in MiB, at
    /// least 128.
    pub fn buffer_pool_mb(&self) -> u64 {
        (self.memory / 2 / (1 << 20)).max(128)
    }

    /// The class as the report and plan show it: "1.5 CPUs, 2 GiB".
    pub fn shown(&self) -> String {
        format!("{} CPUs, {}", trim_number(self.cpus), gib(self.memory))
    }

    /// Why this host cannot give the class: more CPUs or memory than it has.
    pub fn larger_than_host(&self) -> Option<String> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if self.cpus > cpus as f64 {
            return Some(format!(
                "{} CPUs, and this host has {cpus}",
                trim_number(self.cpus)
            ));
        }
        let total = host_memory()?;
        (self.memory > total)
            .then(|| format!("{}, and this host has {}", gib(self.memory), gib(total)))
    }
}

/// A number without trailing zeros ("1.5", "2", "0.25").
pub fn trim_number(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn gib(bytes: u64) -> String {
    let g = bytes as f64 / (1u64 << 30) as f64;
    if g >= 1.0 {
        format!("{} GiB", trim_number(g))
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// This host's RAM (MemTotal), bytes.
pub fn host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// How this host's cgroups are laid out.
#[derive(Debug, Clone, PartialEq)]
enum Layout {
    /// v1: the cpu and memory controllers' directories for this process's own groups.
    V1 { cpu: PathBuf, memory: PathBuf },
    /// v2: the unified hierarchy's root, where a group with cpu and memory enabled is made.
    V2 { root: PathBuf },
}

/// Where a v1 controller is mounted ("cpu" also matches "cpu,cpuacct"), from mountinfo.
fn v1_mount(mountinfo: &str, controller: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split_whitespace();
        if r.next()? != "cgroup" {
            return None;
        }
        let options = r.nth(1)?;
        let mount = left.split_whitespace().nth(4)?;
        options
            .split(',')
            .any(|o| o == controller)
            .then(|| PathBuf::from(mount))
    })
}

/// This process's group in `controller`'s v1 hierarchy, from /proc/self/cgroup.
fn own_group(proc_cgroup: &str, controller: &str) -> Option<String> {
    proc_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == controller)
            .then(|| path.to_string())
    })
}

/// The layout read from mountinfo and /proc/self/cgroup: v1's controllers when both are
/// mounted (a hybrid host's v2 then has none of them), else a v2 root holding both.
fn layout_from(mountinfo: &str, proc_cgroup: &str) -> Option<Layout> {
    let join = |mount: PathBuf, group: String| mount.join(group.trim_start_matches('/'));
    if let (Some(c), Some(m)) = (v1_mount(mountinfo, "cpu"), v1_mount(mountinfo, "memory")) {
        return Some(Layout::V1 {
            cpu: join(c, own_group(proc_cgroup, "cpu")?),
            memory: join(m, own_group(proc_cgroup, "memory")?),
        });
    }
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2").then(|| {
            let root = PathBuf::from(left.split_whitespace().nth(4)?);
            let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).ok()?;
            let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
            (has("cpu") && has("memory")).then_some(Layout::V2 { root })
        })?
    })
}

fn layout() -> anyhow::Result<Layout> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    layout_from(&mountinfo, &own).context(
        "this host has no cgroup with the cpu and memory controllers (neither v1's mounted nor v2's enabled): a class cannot be enforced; remove class from the target, or run where cgroups are mounted",
    )
}

/// A cgroup holding one managed server: made with the class's limits, joined by the server
/// before it runs, removed when dropped (once the server is gone).
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    /// The `cgroup.procs` files the server writes itself into before exec.
    procs: Vec<CString>,
}

/// Every group this process makes is named for it, so a later run can tell (and remove) the
/// ones a killed run left.
fn group_name(label: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let label: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("sweepbench-{}-{n}-{label}", std::process::id())
}

fn write(dir: &Path, file: &str, value: &str) -> anyhow::Result<()> {
    std::fs::write(dir.join(file), value)
        .with_context(|| format!("writing {value} to {}", dir.join(file).display()))
}

/// Says why a group cannot be made here, with the remedy.
fn refused(dir: &Path, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot make a cgroup in {} ({e}): a class needs permission to create cgroups — run sweepbench as root, or in a cgroup delegated to your user (systemd-run --user --scope -p Delegate=yes …), or remove class from the target",
        dir.display()
    )
}

impl Cgroup {
    /// A new group with `class`'s limits, named for `label` (the server's target).
    pub fn create(class: &Class, label: &str) -> anyhow::Result<Cgroup> {
        let name = group_name(label);
        let quota = ((class.cpus * PERIOD_US as f64).round() as u64).max(1000);
        let mut g = Cgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        match layout()? {
            Layout::V1 { cpu, memory } => {
                let c = cpu.join(&name);
                std::fs::create_dir(&c).map_err(|e| refused(&cpu, e))?;
                g.dirs.push(c.clone());
                write(&c, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
                write(&c, "cpu.cfs_quota_us", &quota.to_string())?;
                let m = memory.join(&name);
                std::fs::create_dir(&m).map_err(|e| refused(&memory, e))?;
                g.dirs.push(m.clone());
                write(&m, "memory.limit_in_bytes", &class.memory.to_string())?;
            }
            Layout::V2 { root } => {
                // The root is exempt from "no processes in an inner group": enable the two
                // controllers for its children there.
                write(&root, "cgroup.subtree_control", "+cpu +memory").map_err(|e| {
                    anyhow::anyhow!("{e:#}: a class needs root on a cgroup v2 host")
                })?;
                let d = root.join(&name);
                std::fs::create_dir(&d).map_err(|e| refused(&root, e))?;
                g.dirs.push(d.clone());
                write(&d, "cpu.max", &format!("{quota} {PERIOD_US}"))?;
                write(&d, "memory.max", &class.memory.to_string())?;
            }
        }
        for d in &g.dirs {
            let p = d.join("cgroup.procs");
            g.procs
                .push(CString::new(p.as_os_str().as_encoded_bytes())?);
        }
        Ok(g)
    }

    /// Makes the command's process join this group between fork and exec, so everything the
    /// server allocates from its first instruction is charged to the class.
    pub fn join_on_exec(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let procs = self.procs.clone();
        // SAFETY: between fork and exec only open, write and close are called, on paths made
        // before the fork (no allocation).
        unsafe {
            cmd.pre_exec(move || {
                for p in &procs {
                    let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // "0": the writing process itself.
                    let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let err = std::io::Error::last_os_error();
                    libc::close(fd);
                    if n != 1 {
                        return Err(err);
                    }
                }
                Ok(())
            });
        }
    }

    /// Lets `uid` write itself into the group: a server started as another user joins after
    /// it has become that user.
    pub fn give_to(&self, uid: u32, gid: u32) -> anyhow::Result<()> {
        for d in &self.dirs {
            for f in ["cgroup.procs", "tasks"] {
                let p = d.join(f);
                if p.exists() {
                    std::os::unix::fs::chown(&p, Some(uid), Some(gid))
                        .with_context(|| format!("giving {} to uid {uid}", p.display()))?;
                }
            }
        }
        Ok(())
    }

    /// How often the quota stopped the group, and for how long (v1 cpu.stat's
    /// nr_throttled and throttled_time, v2's nr_throttled and throttled_usec): (count, s).
    pub fn throttled(&self) -> Option<(u64, f64)> {
        let text = self
            .dirs
            .iter()
            .find_map(|d| std::fs::read_to_string(d.join("cpu.stat")).ok())?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        let count = field("nr_throttled ")?;
        let secs = match field("throttled_time ") {
            Some(ns) => ns as f64 / 1e9,
            None => field("throttled_usec ")? as f64 / 1e6,
        };
        Some((count, secs))
    }

    /// The group's directories (one per v1 controller, one on v2).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
}

impl Drop for Cgroup {
    /// Removes the groups; the server has exited by now (its owner stops it first), though
    /// the kernel may take a moment to let go of it.
    fn drop(&mut self) {
        for d in self.dirs.iter().rev() {
            for _ in 0..50 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

/// Whether a class can be enforced here, before anything starts: a cgroup is made and
/// removed again. Err says why, with the remedy.
pub fn check_available() -> anyhow::Result<()> {
    let probe = Class {
        cpus: 1.0,
        memory: 1 << 30,
    };
    Cgroup::create(&probe, "probe").map(drop)
}

/// Groups a killed run of this program left (named for a pid that is no longer running),
/// removed where empty; what was removed.
pub fn reap() -> Vec<PathBuf> {
    let Ok(l) = layout() else {
        return Vec::new();
    };
    let parents = match l {
        Layout::V1 { cpu, memory } => vec![cpu, memory],
        Layout::V2 { root } => vec![root],
    };
    let mut gone = Vec::new();
    for p in parents {
        for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix("sweepbench-")
                .and_then(|r| r.split('-').next())
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let alive = Path::new(&format!("/proc/{pid}")).exists();
            if !alive && std::fs::remove_dir(e.path()).is_ok() {
                gone.push(e.path());
            }
        }
    }
    gone
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
32 30 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
33 30 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const PROC_CGROUP: &str = "\
4:memory:/process_api/ae5c
1:cpu,cpuacct:/
0::/
";

    /// v1 wins on a hybrid host: the cpu controller found though mounted with cpuacct, and
    /// each controller's own group of this process joined to its mount.
    #[test]
    fn a_hybrid_hosts_v1_controllers_are_found_with_our_own_groups() {
        assert_eq!(
            layout_from(MOUNTINFO, PROC_CGROUP),
            Some(Layout::V1 {
                cpu: PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"),
                memory: PathBuf::from("/sys/fs/cgroup/memory/process_api/ae5c"),
            })
        );
        let v2_only = "33 30 0:29 / /nonexistent-cgroup2 rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            layout_from(v2_only, "0::/\n"),
            None,
            "no controllers readable"
        );
    }

    #[test]
    fn a_class_says_its_buffer_pool_and_itself() {
        let c = Class {
            cpus: 1.5,
            memory: 2 << 30,
        };
        assert_eq!(c.buffer_pool_mb(), 1024);
        assert_eq!(c.shown(), "1.5 CPUs, 2 GiB");
        let tiny = Class {
            cpus: 0.25,
            memory: 200 << 20,
        };
        assert_eq!(tiny.buffer_pool_mb(), 128);
        assert_eq!(tiny.shown(), "0.25 CPUs, 200 MiB");
        let huge = Class {
            cpus: 4096.0,
            memory: 1 << 30,
        };
        assert!(huge.larger_than_host().unwrap().contains("4096 CPUs"));
    }
}
