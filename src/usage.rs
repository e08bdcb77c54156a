//! The client's own resource use (getrusage): CPU seconds of this process or of its finished
//! children (the sysbench driver), and peak resident memory.

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

/// The whole host's CPU time so far, from /proc/stat: busy (user, nice, system, irq, softirq)
/// and stolen by the hypervisor, seconds summed over all CPUs.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostCpu {
    pub busy_s: f64,
    pub steal_s: f64,
}

pub fn host_cpu() -> Option<HostCpu> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let at = |i: usize| f.get(i).copied().unwrap_or(0.0) / hz;
    Some(HostCpu {
        busy_s: at(0) + at(1) + at(2) + at(5) + at(6),
        steal_s: at(7),
    })
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
