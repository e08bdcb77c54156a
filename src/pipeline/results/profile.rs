//! The run directory's profiles/: one on-CPU profile per profiled window
//! (`<point stem>.perf.data`, as perf recorded it on every CPU, and `.pid`, the server's process
//! id), the server's folded stacks (`.folded`) and flame
//! graph (`.svg`), differential flame graphs (`diff__<candidate>__vs__<baseline>.svg`), and
//! the reason profiles could not be taken (`unavailable.txt`).

use std::path::PathBuf;

pub const DIR: &str = "profiles";
/// The first reason profiles could not be taken in the run, a line.
pub const UNAVAILABLE: &str = "unavailable.txt";
/// A window's samples as `perf record` wrote them (every CPU).
pub const DATA: &str = ".perf.data";
/// The server's process id in that window, whose samples are its profile.
pub const PID: &str = ".pid";
/// Samples per second and CPU: about a thousand stacks over a 2 s slice on two busy cores.
pub const FREQ_HZ: u32 = 499;

/// The file stem of a profiled point: its id without the repeat, '/' as "__"
/// (`local__default__oltp_read_write__t4`).
pub fn stem(point_id: &str) -> String {
    super::file_stem(point_id.strip_suffix("/r1").unwrap_or(point_id))
}

/// Whether a window of a point's repeat (or paired round) `repeat` is profiled: the first.
pub fn wants(repeat: u32) -> bool {
    repeat == 1
}

/// The perf binary: `SWEEPBENCH_PERF` where set (a perf installed under another name), else
/// perf on PATH or where Debian puts it; the reason when there is none.
pub fn perf_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SWEEPBENCH_PERF") {
        let p = PathBuf::from(p);
        return match p.is_file() {
            true => Ok(p),
            false => Err(format!("SWEEPBENCH_PERF = {}: no such file", p.display())),
        };
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(["/usr/bin".into(), "/usr/sbin".into()])
        .map(|d: PathBuf| d.join("perf"))
        .find(|p| p.is_file())
        .ok_or_else(|| "perf is not installed (Debian: apt-get install linux-perf)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_window_of_a_point_is_profiled_and_named_without_its_repeat() {
        assert!(wants(1));
        assert!(!wants(2));
        assert!(!wants(11));
        assert_eq!(
            stem("local/default/oltp_read_write/t4/r1"),
            "local__default__oltp_read_write__t4"
        );
    }
}
