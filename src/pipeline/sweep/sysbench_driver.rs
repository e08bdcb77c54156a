//! The `sysbench` driver: runs the sysbench binary for a point (same server, same options) and
//! reads its output with the import parser, so the two load generators can be compared point
//! by point, and users can run their own Lua scripts through sweeps.

use crate::engine::config::SslMode;
use crate::engine::workload::WorkloadKind;
use crate::pipeline::results::import;
use crate::pipeline::results::PointRecord;
use crate::pipeline::spec::target::ConnInfo;
use crate::pipeline::spec::SweepSpec;
use anyhow::{bail, Context};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// sysbench's arguments for `threads` on `c` (the rows per table are the target's: its
/// `table_size_of`) for `time_s`.
fn args(
    spec: &SweepSpec,
    (w, rows): (WorkloadKind, u32),
    threads: u32,
    c: &ConnInfo,
    time_s: u64,
) -> Vec<String> {
    let mut a = vec![w.name().to_string()];
    match &c.socket {
        Some(s) => a.push(format!("--mysql-socket={s}")),
        None => {
            a.push(format!("--mysql-host={}", c.host));
            a.push(format!("--mysql-port={}", c.port));
        }
    }
    // TLS as sysbench 1.0.20 knows it (the spec refused what it cannot do: verification,
    // certificate paths).
    if c.tls.mode != crate::engine::config::SslMode::Disabled {
        a.push("--mysql-ssl=on".to_string());
    }
    if let Some(cipher) = &c.tls.cipher {
        a.push(format!("--mysql-ssl-cipher={cipher}"));
    }
    a.push(format!("--mysql-user={}", c.user));
    a.push(format!("--mysql-db={}", c.db));
    a.extend([
        format!("--tables={}", spec.data.tables),
        format!("--table-size={rows}"),
        format!("--threads={threads}"),
        format!("--time={time_s}"),
        // Per-second samples, as the native driver takes.
        "--report-interval=1".to_string(),
    ]);
    if spec.run.rate > 0 {
        a.push(format!("--rate={}", spec.run.rate));
    }
    a.extend(spec.workload_options.sysbench_args());
    a.push("run".into());
    a
}

/// The `--config-file` line that gives sysbench `password`. sysbench reads a value up to a
/// space, ',' or '#', or between quotes of one kind (no escapes), so the password is quoted
/// with a kind it does not contain.
fn config_line(password: &str) -> anyhow::Result<String> {
    if password.contains(['\n', '\r']) {
        bail!("the password holds a line break, which sysbench's --config-file cannot carry; use the native driver");
    }
    let quote = match (password.contains('"'), password.contains('\'')) {
        (false, _) => '"',
        (true, false) => '\'',
        (true, true) => bail!(
            "the password holds both ' and \", which sysbench's --config-file cannot carry; use the native driver"
        ),
    };
    Ok(format!("mysql-password={quote}{password}{quote}\n"))
}

/// A pipe holding sysbench's `--config-file` contents (the password), read end returned. Only
/// the child inherits it (as /dev/fd/N): the password never reaches a command line, the
/// environment or the disk.
fn password_pipe(password: &str) -> anyhow::Result<OwnedFd> {
    let line = config_line(password)?;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors, each owned once below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("creating a pipe for sysbench");
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Far below the pipe's 64 KiB capacity, so this never blocks without a reader.
    std::fs::File::from(write)
        .write_all(line.as_bytes())
        .context("writing sysbench's options")?;
    Ok(read)
}

/// A working directory for sysbench where `--mysql-ssl=on` finds the target's files under
/// the names sysbench 1.0.20 reads (links, inside the run directory; removed with the
/// point). None when the target does not use TLS.
fn tls_dir(c: &ConnInfo, run_dir: &Path) -> anyhow::Result<Option<tempfile::TempDir>> {
    let t = &c.tls;
    if t.mode == SslMode::Disabled {
        return Ok(None);
    }
    let d = tempfile::Builder::new()
        .prefix(".sysbench-tls")
        .tempdir_in(run_dir)
        .context("creating sysbench's TLS directory")?;
    for (file, name) in [
        (&t.ca, "cacert.pem"),
        (&t.cert, "client-cert.pem"),
        (&t.key, "client-key.pem"),
    ] {
        // The spec requires all three for a TLS target of this driver.
        let file = file
            .as_ref()
            .context("a TLS target of the sysbench driver needs ssl-ca, ssl-cert and ssl-key")?;
        let file = std::path::absolute(file).with_context(|| format!("{}", file.display()))?;
        if !file.is_file() {
            bail!(
                "{} ({name} for sysbench) is not a readable file",
                file.display()
            );
        }
        std::os::unix::fs::symlink(&file, d.path().join(name))
            .with_context(|| format!("linking {name} for sysbench"))?;
    }
    Ok(Some(d))
}

async fn sysbench(
    args: &[String],
    password: Option<&str>,
    cwd: Option<&Path>,
) -> anyhow::Result<String> {
    let mut cmd = tokio::process::Command::new("sysbench");
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let pipe = password.map(password_pipe).transpose()?;
    if let Some(fd) = &pipe {
        let raw = fd.as_raw_fd();
        cmd.arg(format!("--config-file=/dev/fd/{raw}"));
        // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on the read end,
        // in the child, so sysbench alone inherits it.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(raw, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let out = cmd
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .context("running sysbench (apt-get install sysbench)")?;
    drop(pipe);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // Every FATAL line: the first says what failed, a later one often why.
        let fatal: Vec<&str> = stdout
            .lines()
            .chain(err.lines())
            .filter(|l| l.contains("FATAL") || l.contains("invalid option"))
            .collect();
        bail!("sysbench exited with {}: {}", out.status, fatal.join(" | "));
    }
    Ok(stdout)
}

/// Runs one point with sysbench and fills `rec`. sysbench 1.0.20 has no --warmup-time, so a
/// warmup is a separate, discarded sysbench run of that length.
pub async fn run_point(
    spec: &SweepSpec,
    w: WorkloadKind,
    threads: u32,
    c: &ConnInfo,
    rec: &mut PointRecord,
    run_dir: &Path,
) -> anyhow::Result<Vec<crate::engine::exec::IntervalStats>> {
    let tls = tls_dir(c, run_dir)?;
    let cwd = tls.as_ref().map(|d| d.path());
    let w = (w, spec.table_size_of(&rec.target));
    if spec.run.warmup_s > 0 {
        sysbench(
            &args(spec, w, threads, c, spec.run.warmup_s),
            c.password.as_deref(),
            cwd,
        )
        .await?;
    }
    let cpu0 = crate::usage::children_cpu_seconds();
    let out = sysbench(
        &args(spec, w, threads, c, spec.run.duration_s),
        c.password.as_deref(),
        cwd,
    )
    .await?;
    let cpu = crate::usage::children_cpu_seconds() - cpu0;
    let parsed = import::parse(&out);
    let mut r = import::record(&parsed, &rec.target, rec.repeat, Some(threads))?;
    r.point_id = rec.point_id.clone();
    r.config = rec.config.clone();
    r.driver = crate::pipeline::results::Driver::Sysbench;
    r.workload = w.0.name().into();
    r.started_at = rec.started_at;
    r.server_version = rec.server_version.clone();
    r.run_id = rec.run_id.clone();
    r.rate = rec.rate;
    r.client_cpu_s = (cpu * 1e4).round() / 1e4;
    *rec = r;
    Ok(parsed.intervals)
}

#[cfg(test)]
mod tests {
    /// A target with ssl-mode=REQUIRED (and a cipher) is run by sysbench over TLS too, or the
    /// two drivers would not measure the same thing.
    #[test]
    fn tls_targets_ask_sysbench_for_tls() {
        use crate::pipeline::spec::{target::TargetKind, SweepSpec};
        let text = "name = \"t\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\ndrivers = [\"sysbench\"]\n[[targets]]\nname = \"a\"\nurl = \"mysql://u@h:1/d?ssl-mode=REQUIRED&ssl-cipher=ECDHE-RSA-AES128-GCM-SHA256&ssl-ca=ca&ssl-cert=c&ssl-key=k\"\n[[targets]]\nname = \"b\"\nurl = \"mysql://u@h:1/d\"\n";
        let spec = SweepSpec::parse(std::path::Path::new("t.toml"), text).unwrap();
        let argv = |i: usize| {
            let TargetKind::External(c) = &spec.targets[i].kind else {
                panic!("external")
            };
            super::args(
                &spec,
                (crate::engine::config::WorkloadKind::PointSelect, 10_000),
                1,
                c,
                5,
            )
        };
        let a = argv(0);
        assert!(a.contains(&"--mysql-ssl=on".to_string()), "{a:?}");
        assert!(
            a.contains(&"--mysql-ssl-cipher=ECDHE-RSA-AES128-GCM-SHA256".to_string()),
            "{a:?}"
        );
        assert!(!argv(1).iter().any(|x| x.starts_with("--mysql-ssl")));
    }

    #[test]
    fn passwords_are_quoted_as_sysbench_reads_them() {
        use super::config_line;
        assert_eq!(
            config_line("a b,c#d").unwrap(),
            "mysql-password=\"a b,c#d\"\n"
        );
        assert_eq!(config_line("a\"b").unwrap(), "mysql-password='a\"b'\n");
        assert!(config_line("a\"b'c")
            .unwrap_err()
            .to_string()
            .contains("both ' and \""));
        assert!(config_line("a\nb").is_err());
    }
}
