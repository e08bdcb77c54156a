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
