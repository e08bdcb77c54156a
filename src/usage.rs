//! The client's own resource use (getrusage): CPU seconds of this process or of its finished
//! children (the sysbench driver), peak resident memory; and the CPU the host spent meanwhile
//! on the CPUs this process may use (/proc/stat), with the cgroup's CPU quota.

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut r) };
    r
}

fn cpu_seconds(r: &libc::rusage) -> f64 {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(r.ru_utime) + tv(r.ru_stime)
}

/// User + system CPU seconds of this process so far.
pub fn self_cpu_seconds() -> f64 {
    cpu_seconds(&rusage(libc::RUSAGE_SELF))
}

/// User + system CPU seconds of all waited-for children of this process.
pub fn children_cpu_seconds() -> f64 {
    cpu_seconds(&rusage(libc::RUSAGE_CHILDREN))
}

/// Peak resident memory of this process so far, KiB.
pub fn max_rss_kb() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_maxrss.max(0) as u64
}

/// CPU time so far on the CPUs this process may run on (its affinity: `taskset`, a cpuset),
/// from /proc/stat's per-CPU lines: busy (user, nice, system, irq, softirq) and stolen by the
/// hypervisor, seconds summed over those `cpus`. Without a restriction that is the whole
/// host. A CPU quota (a cgroup's cpu.max, a pod's CPU limit) is not a set of CPUs: the run
/// may run on any of them, so it is counted over all of them and said apart (`cpu_quota`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostCpu {
    pub busy_s: f64,
    pub steal_s: f64,
    /// How many CPUs the times are summed over.
    pub cpus: u32,
}

pub fn host_cpu() -> Option<HostCpu> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let allowed = crate::affinity::allowed(std::process::id() as i32).ok();
    host_cpu_of(&text, allowed.as_deref())
}

/// `host_cpu` from /proc/stat's `text` over the CPUs `allowed` (None: every CPU listed).
fn host_cpu_of(text: &str, allowed: Option<&[usize]>) -> Option<HostCpu> {
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut sum = HostCpu::default();
    for line in text.lines() {
        let Some((cpu, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some(Ok(n)) = cpu.strip_prefix("cpu").map(str::parse::<usize>) else {
            continue;
        };
        if allowed.is_some_and(|a| !a.contains(&n)) {
            continue;
        }
        let f: Vec<f64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        let at = |i: usize| f.get(i).copied().unwrap_or(0.0) / hz;
        sum.busy_s += at(0) + at(1) + at(2) + at(5) + at(6);
        sum.steal_s += at(7);
        sum.cpus += 1;
    }
    (sum.cpus > 0).then_some(sum)
}

/// The CPU quota of this process's cgroup, in CPUs (cgroup v2 `cpu.max`, v1
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us`); None without one.
pub fn cpu_quota() -> Option<f64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in groups.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let read = |p: String| std::fs::read_to_string(p).ok();
        let quota = if controllers.is_empty() {
            read(format!("/sys/fs/cgroup{path}/cpu.max")).and_then(|t| {
                let (q, period) = t.trim().split_once(' ')?;
                Some(q.parse::<f64>().ok()? / period.parse::<f64>().ok()?)
            })
        } else if controllers.split(',').any(|c| c == "cpu") {
            let dir = format!("/sys/fs/cgroup/{controllers}{path}");
            let q: f64 = read(format!("{dir}/cpu.cfs_quota_us"))?
                .trim()
                .parse()
                .ok()?;
            let period: f64 = read(format!("{dir}/cpu.cfs_period_us"))?
                .trim()
                .parse()
                .ok()?;
            (q > 0.0 && period > 0.0).then(|| q / period)
        } else {
            None
        };
        if quota.is_some() {
            return quota;
        }
    }
    None
}

/// A process's own cost counters so far, from /proc (None when the process is not ours to
/// read or has ended): CPU microseconds (user + system), context switches summed over its
/// threads (voluntary: it waited, for a lock or I/O; involuntary: the scheduler took the CPU
/// away), and the bytes it made the storage read and write (/proc/PID/io, all threads).
pub fn process_cost(pid: u32) -> Option<Vec<(&'static str, u64)>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let mut out = vec![("cpu_us", ticks * 1_000_000 / hz)];
    let (mut vol, mut invol) = (0u64, 0u64);
    // A thread that ends between the listing and its read is skipped: its switches are lost
    // from both samples' successors alike, a small undercount.
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(s) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        vol += field(&s, "voluntary_ctxt_switches:").unwrap_or(0);
        invol += field(&s, "nonvoluntary_ctxt_switches:").unwrap_or(0);
    }
    out.push(("ctx_switches_voluntary", vol));
    out.push(("ctx_switches_involuntary", invol));
    // /proc/PID/io is readable only by the process's owner (and root).
    if let Ok(io) = std::fs::read_to_string(format!("/proc/{pid}/io")) {
        out.push(("io_read_bytes", field(&io, "read_bytes:")?));
        out.push(("io_write_bytes", field(&io, "write_bytes:")?));
    }
    Some(out)
}

/// The number after `name` on its line of a /proc key-value file.
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  900 0 100 5000 0 0 0 20 0 0\ncpu0 800 0 50 2000 0 0 0 10 0 0\ncpu1 100 0 50 3000 0 0 0 10 0 0\nintr 1 2 3\n";

    /// Only the CPUs the process may run on are summed: a neighbour on another CPU is not
    /// in the figure, and the count divides by those CPUs, never by a quota's.
    #[test]
    fn the_host_is_read_over_the_cpus_this_process_may_use() {
        // SAFETY: sysconf reads a constant of the running system.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let all = host_cpu_of(STAT, None).unwrap();
        assert_eq!(all.cpus, 2);
        assert!((all.busy_s - 1000.0 / hz).abs() < 1e-9, "{all:?}");
        let one = host_cpu_of(STAT, Some(&[1])).unwrap();
        assert_eq!(one.cpus, 1);
        assert!((one.busy_s - 150.0 / hz).abs() < 1e-9, "{one:?}");
        assert!((one.steal_s - 10.0 / hz).abs() < 1e-9);
        assert_eq!(host_cpu_of(STAT, Some(&[7])), None);
    }
}
