//! A sweep's host tests (`workloads = ["cpu", "memory", "fileio"]`): the machine's own
//! scaling curve at the sweep's thread counts, measured before any server's point, so the
//! report can draw it beside the servers' and `compare` can tell a slower host. The engine's
//! host runner measures them — a machine's test, with no connection and no `EngineConfig`,
//! the one design outside `Measure::run` — inside the same window bracket as every other
//! point (`bracket::Bracket`, with no server), which makes their records. fileio's files are
//! prepared once in the run's work directory (where managed servers keep their data) and
//! removed after the last host point.

use super::bracket::Bracket;
use super::measure::Measured;
use super::runner::Runner;
use super::window::Seat;
use crate::engine::host::fileio::{self, FileIo, FileIoOptions};
use crate::engine::host::HostKind;
use crate::pipeline::results::PointRecord;
use std::path::{Path, PathBuf};

/// Measures the plan's host points in order and keeps their records. False when the run
/// must stop (an interrupt, or records that can no longer be written).
pub(super) async fn run(r: &mut Runner<'_>) -> bool {
    let time_s = r.spec.run.duration_s;
    let dir = r.st_mut().work.path().join("fileio");
    // fileio's files: prepared before its first point; why not, when they could not be.
    let mut files: Option<Result<(), String>> = None;
    let went_on = measure_all(r, time_s, &dir, &mut files).await;
    // The directory is the run's and holds only the test's files.
    if files.is_some() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    went_on
}

async fn measure_all(
    r: &mut Runner<'_>,
    time_s: u64,
    dir: &Path,
    files: &mut Option<Result<(), String>>,
) -> bool {
    for p in &r.plan.host {
        if crate::interrupt::requested() {
            r.interrupt();
            return false;
        }
        r.ev.emit(crate::pipeline::events::Event::PointStarted { point: &p.id });
        let mut rec = PointRecord::of_host(r.run_id, p);
        // fileio's options and files, or why its files could not be prepared.
        let fileio = match (p.test, &r.spec.run.fileio) {
            (HostKind::FileIo, Some(o)) => {
                if files.is_none() {
                    r.note(format!(
                        "fileio: preparing {} file(s), {} in {}",
                        o.num,
                        fileio::print_size(o.total as f64) + "B",
                        dir.display()
                    ));
                    *files = Some(prepare(o, dir).await);
                }
                match files {
                    Some(Err(why)) => Err(why.clone()),
                    _ => Ok(Some((o.clone(), dir.to_path_buf()))),
                }
            }
            _ => Ok(None),
        };
        let (test, threads) = (p.test, p.threads);
        let window = Bracket::open_counting_later(None);
        let cpu0 = crate::usage::self_cpu_seconds();
        let measured = match fileio {
            Err(why) => Err(anyhow::anyhow!(why)),
            Ok(fileio) => tokio::task::spawn_blocking(move || {
                test.measure(
                    threads,
                    time_s,
                    fileio.as_ref().map(|(o, d)| (o, d.as_path())),
                )
            })
            .await
            .map_err(|e| anyhow::anyhow!("the host test's threads failed: {e}"))
            .and_then(|m| m.map_err(|why| anyhow::anyhow!(why))),
        };
        let measured = measured.map(|report| Measured::Report {
            report: Box::new(report),
            cpu_s: crate::usage::self_cpu_seconds() - cpu0,
            skew_ms: None,
        });
        // What else ran on the machine meanwhile: this client is the test, and no server
        // was measured.
        let seat = Seat {
            has_client: false,
            alone_here: true,
        };
        let mut to = r.keep_to();
        window.close(None, &mut to, &mut rec, &measured, seat).await;
        if !r.keep(rec, &p.id, 0) {
            return false;
        }
    }
    true
}

/// fileio's files in `dir`, after checking the disk has room for them.
async fn prepare(o: &FileIoOptions, dir: &Path) -> Result<(), String> {
    let (o, dir): (FileIoOptions, PathBuf) = (o.clone(), dir.to_path_buf());
    let prepared = tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("fileio: cannot create {}: {e}", dir.display()))?;
        let free = free_bytes(&dir)
            .map_err(|e| format!("fileio: cannot read the free space of {}: {e}", dir.display()))?;
        // Room for the files and a tenth more for the servers beside them.
        if free < o.total + o.total / 10 {
            return Err(format!(
                "fileio: {} has {}B free, and the test's files take {}B (file_total_size): lower [fileio] file_total_size, or set TMPDIR to a larger disk",
                dir.display(),
                fileio::print_size(free as f64),
                fileio::print_size(o.total as f64)
            ));
        }
        let t = FileIo::open(&o, &dir, false)?;
        fileio::prepare(&t, &mut |_| {})
    })
    .await;
    prepared.unwrap_or_else(|e| Err(format!("fileio: preparing the files failed: {e}")))
}

/// Bytes an unprivileged user may still write on `dir`'s file system.
fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statvfs fills the struct we pass for a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}
