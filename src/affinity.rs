//! CPU affinity: which cores a thread, or every thread of a process, may run on. A duet
//! gives each side its own cores (its server's threads and its client's workers), so the
//! side that waits on fsync cannot hand its CPU to the other (docs/statistics.md).

/// Restricts thread or process `tid` (0: the calling thread) to `cpus`. Errors name the
/// thread and the system's reason.
pub fn pin(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET only writes inside it for indexes
    // below CPU_SETSIZE, which the filter guarantees; sched_setaffinity reads the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Restricts every thread process `pid` has now to `cpus`; the threads it starts later
/// inherit the mask of the thread that starts them. Returns how many threads were pinned.
pub fn pin_process(pid: u32, cpus: &[usize]) -> std::io::Result<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let tid: i32 = match entry?.file_name().to_string_lossy().parse() {
            Ok(t) => t,
            Err(_) => continue,
        };
        match pin(tid, cpus) {
            Ok(()) => n += 1,
            // A thread that ended between the listing and the call.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The CPUs thread or process `tid` may run on.
pub fn allowed(tid: i32) -> std::io::Result<Vec<usize>> {
    // SAFETY: sched_getaffinity fills the zeroed set; CPU_ISSET reads inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// `cpus` shared out into `parts` groups of equal size (contiguous, so siblings of one core
/// tend to stay together); None when there are fewer CPUs than parts.
pub fn split(cpus: &[usize], parts: usize) -> Option<Vec<Vec<usize>>> {
    if parts == 0 || cpus.len() < parts {
        return None;
    }
    let each = cpus.len() / parts;
    Some(
        (0..parts)
            .map(|i| cpus[i * each..(i + 1) * each].to_vec())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_split_evenly_and_a_thread_can_be_pinned_and_read_back() {
        assert_eq!(split(&[0, 1, 2, 3], 2), Some(vec![vec![0, 1], vec![2, 3]]));
        assert_eq!(split(&[0, 1, 2], 2), Some(vec![vec![0], vec![1]]));
        assert_eq!(split(&[0], 2), None);
        let mine = allowed(0).unwrap();
        assert!(!mine.is_empty());
        // On a thread of its own, so the test's other threads keep every CPU.
        let first = mine[0];
        std::thread::spawn(move || {
            pin(0, &[first]).unwrap();
            assert_eq!(allowed(0).unwrap(), vec![first]);
        })
        .join()
        .unwrap();
    }
}
