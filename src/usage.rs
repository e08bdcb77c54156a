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
