//! sysbench habits that scripts depend on, checked against sysbench 1.0.20 itself on the same
//! server: verbosity, the per-table prepare lines, `<workload> help`, `--version`, a command
//! being required, `--test=`, `--config-file`, `--mysql-dry-run`, and exit status 1 on errors.

mod common;
use common::*;

fn sysbench(args: &[String]) -> std::process::Output {
    std::process::Command::new("sysbench")
        .args(args)
        .output()
        .expect("sysbench 1.0.20 must be installed (apt-get install sysbench; .ci/run does it)")
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// stdout without the first line (the banner differs by design: "sysbench 1.0.20 (using …)"
/// and "sysbench 1.0.20-compatible (sweepbench …)").
fn body(o: &std::process::Output) -> String {
    let s = stdout(o);
    assert!(
        s.is_empty() || s.starts_with("sysbench 1.0.20"),
        "a log parser's ^sysbench [0-9] must match: {s}"
    );
    s.split_once('\n')
        .map_or(String::new(), |(_, b)| b.to_string())
}

#[test]
fn prepare_cleanup_and_verbosity_print_what_sysbench_prints() {
    let conn = fresh_db("habits_ours");
    let theirs = fresh_db("habits_theirs");
    let data = "--tables=3 --table-size=300";
    for verbosity in ["", " --verbosity=1"] {
        let ours = bench(&args(
            &format!("oltp_read_write prepare {data}{verbosity}"),
            &conn,
        ));
        let sb = sysbench(&args(
            &format!("oltp_read_write prepare {data}{verbosity}"),
            &theirs,
        ));
        assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
        assert_eq!(sb.status.code(), Some(0));
        // Nothing on stderr either, so `prepare 2>&1` is sysbench's (our summary line is for
        // --verbosity=4 and above).
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&sb.stderr)
        );
        if verbosity.is_empty() {
            assert_eq!(
                body(&ours),
                body(&sb),
                "prepare --threads=1: table after table"
            );
        } else {
            assert_eq!(stdout(&ours), stdout(&sb), "no banner below verbosity 3");
        }
        // At verbosity 1 `run` prints nothing at all.
        let run = format!("oltp_read_write run {data} --time=1 --verbosity=1");
        let ours_run = bench(&args(&run, &conn));
        let sb_run = sysbench(&args(&run, &theirs));
        assert_eq!(ours_run.status.code(), Some(0), "{}", text(&ours_run));
        assert_eq!(
            (stdout(&ours_run), stdout(&sb_run)),
            (String::new(), String::new())
        );
        let ours = bench(&args(
            &format!("oltp_read_write cleanup {data}{verbosity}"),
            &conn,
        ));
        let sb = sysbench(&args(
            &format!("oltp_read_write cleanup {data}{verbosity}"),
            &theirs,
        ));
        if verbosity.is_empty() {
            assert_eq!(body(&ours), body(&sb));
        } else {
            assert_eq!(stdout(&ours), stdout(&sb));
        }
    }
}

/// Everything after the first line (the version line names the tool) byte for byte (#24).
#[test]
fn workload_help_lists_the_scripts_options_as_sysbench() {
    for w in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_insert",
        "oltp_delete",
        "oltp_update_index",
        "oltp_update_non_index",
        "select_random_points",
        "select_random_ranges",
    ] {
        let ours = bench(&args(&format!("{w} help"), &[]));
        let sb = sysbench(&args(&format!("{w} help"), &[]));
        assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
        let (o, s) = (body(&ours), body(&sb));
        assert!(o.contains(&format!("\n{w} options:\n")), "{o}");
        assert_eq!(o, s, "{w}");
    }
    let out = bench(&args("bulk_insert help", &[]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("'bulk_insert' test does not implement the 'help' command."));
    let out = bench(&args("--help", &[]));
    assert_eq!(out.status.code(), Some(0));
    let h = stdout(&out);
    for want in [
        "\nmysql options:\n",
        "--mysql-debug[=on|off]",
        "--mysql-ssl-cipher=STRING",
        "--version[=on|off]",
        "--mysql-dry-run[=on|off]",
    ] {
        assert!(h.contains(want), "--help lacks {want}:\n{h}");
    }
}

#[test]
fn version_command_test_and_errors_behave_as_sysbench() {
    let v = bench(&args("--version", &[]));
    assert_eq!(v.status.code(), Some(0));
    assert!(
        stdout(&v).starts_with("sysbench 1.0.20-compatible (sweepbench "),
        "{}",
        stdout(&v)
    );
    // A command is required.
    for out in [
        bench(&args("oltp_read_write", &[])),
        sysbench(&args("oltp_read_write", &[])),
    ] {
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out).contains(
                "Command is required. Supported commands: prepare, prewarm, run, cleanup, help"
            ),
            "{}",
            text(&out)
        );
    }
    // Every error exits 1, as sysbench's.
    for bad in [
        "oltp_read_write run --no-such=1",
        "oltp_read_write run --threads=x",
        "nosuch run",
        "oltp_read_write run --db-driver=pgsql",
    ] {
        let ours = bench(&args(bad, &[]));
        let sb = sysbench(&args(bad, &[]));
        assert_eq!(ours.status.code(), Some(1), "{bad}: {}", text(&ours));
        assert_eq!(sb.status.code(), Some(1), "{bad}");
    }
}

#[test]
fn test_config_file_dry_run_and_client_options_are_taken() {
    let conn = fresh_db("habits_cf");
    let dir = tempfile::tempdir().unwrap();
    let cf = dir.path().join("opts.cfg");
    std::fs::write(&cf, "table-size=200\n# a comment\nthreads=2\n").unwrap();
    let cfg = format!("--config-file={}", cf.display());
    let out = bench(&args(
        &format!("--test=oltp_point_select {cfg} prepare"),
        &conn,
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(query_u64("SELECT COUNT(*) FROM habits_cf.sbtest1"), 200);
    let out = bench(&args(
        &format!(
            "oltp_point_select run {cfg} --time=1 --mysql-debug=on --mysql-ssl-cipher=AES128-SHA"
        ),
        &conn,
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("Number of threads: 2"),
        "{}",
        stdout(&out)
    );
    assert!(
        text(&out).contains("--mysql-debug"),
        "the ignored trace is said"
    );
    // No server at all: every call pretends to succeed, as sysbench's smoke tests expect.
    let dry = "oltp_read_write run --mysql-dry-run --mysql-host=127.0.0.1 --mysql-port=1 --time=1";
    for out in [bench(&args(dry, &[])), sysbench(&args(dry, &[]))] {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let s = stdout(&out);
        let tx: u64 = s
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("transactions:"))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{s}"));
        assert!(tx > 100, "{s}");
    }
}

/// `bench cpu` as sysbench 1.0.20's CPU test: the same report layout line for line (figures
/// masked), exactly `--events` events over the threads, the same `help`, and `prepare`
/// refused with sysbench's words and status (#24).
#[test]
fn the_cpu_test_prints_what_sysbench_prints() {
    let run = "cpu --events=300 --time=0 --threads=2 --cpu-max-prime=2000 run";
    let ours = bench(&words(run));
    let sb = sysbench(&words(run));
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
    assert_eq!(masked(body(&ours)), masked(body(&sb)), "{}", stdout(&ours));
    assert!(stdout(&ours).contains("Prime numbers limit: 2000\n"));
    assert!(
        stdout(&ours).contains("    total number of events:              300\n"),
        "{}",
        stdout(&ours)
    );
    assert!(stdout(&ours).contains("    events (avg/stddev):           150.0000/"));
    let help = |o: &std::process::Output| body(o);
    assert_eq!(
        help(&bench(&words("cpu help"))),
        help(&sysbench(&words("cpu help")))
    );
    let ours = bench(&words("cpu prepare"));
    let sb = sysbench(&words("cpu prepare"));
    assert_eq!(ours.status.code(), sb.status.code());
    assert!(
        String::from_utf8_lossy(&ours.stderr)
            .contains("'cpu' test does not implement the 'prepare' command."),
        "{}",
        text(&ours)
    );
    let ours = bench(&words("cpu --cpu-max-prime=0 run"));
    assert_eq!(ours.status.code(), Some(1));
    assert!(text(&ours).contains("FATAL: Invalid value of cpu-max-prime: 0."));
}

/// `--report-checkpoints` on a host test as sysbench 1.0.20 prints it: the header line, a
/// "[ Ns ] Checkpoint report:" block per checkpoint with the test's figures since the
/// previous one, then the final report of what followed the last — line for line, figures
/// masked (#34).
#[test]
fn host_test_checkpoints_print_what_sysbench_prints() {
    let run = "cpu --time=4 --report-checkpoints=2,1 --cpu-max-prime=2000 run";
    let ours = bench(&words(run));
    let sb = sysbench(&words(run));
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours));
    assert_eq!(masked(body(&ours)), masked(body(&sb)), "{}", stdout(&ours));
    let out = stdout(&ours);
    assert!(
        out.contains("Report checkpoint(s) at 1, 2 seconds\n"),
        "{out}"
    );
    assert_eq!(out.matches("Checkpoint report:").count(), 2, "{out}");
    // Each report counts only its own second or so: the three together are the run.
    let events: Vec<u64> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("total number of events:"))
        .map(|n| n.trim().parse().unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{out}");
    let times: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("total time:"))
        .map(|n| n.trim().trim_end_matches('s').parse().unwrap())
        .collect();
    // sysbench's total time runs from the start; the events per second are the report's own.
    assert!(times[0] < times[1] && times[1] < times[2], "{times:?}");
    let eps: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("events per second:"))
        .map(|n| n.trim().parse().unwrap())
        .collect();
    let last_window = times[2] - times[1];
    assert!(
        (eps[2] - events[2] as f64 / last_window).abs() <= 0.02 * eps[2] + 1.0,
        "the last report's rate is over what followed the last checkpoint: {eps:?} {events:?} {times:?}"
    );
}

/// `bench memory` as sysbench 1.0.20's memory test: the same report layout line for line
/// (figures masked) for each operation and scope, exactly `--memory-total-size` moved in
/// blocks shared out over the threads, and the same `help` (#24).
#[test]
fn the_memory_test_prints_what_sysbench_prints() {
    for extra in [
        "",
        "--memory-oper=read --memory-scope=local",
        "--memory-oper=none --memory-access-mode=rnd",
        "--memory-access-mode=rnd --memory-block-size=4K",
    ] {
        let run = format!("memory --memory-total-size=32M --threads=2 {extra} run");
        let ours = bench(&words(&run));
        let sb = sysbench(&words(&run));
        assert_eq!(ours.status.code(), Some(0), "{extra}: {}", text(&ours));
        assert_eq!(
            masked(body(&ours)),
            masked(body(&sb)),
            "{extra}: {}",
            stdout(&ours)
        );
        // 32 MiB in blocks, half per thread.
        let block = if extra.contains("4K") { 4096 } else { 1024 };
        let events = 32 * 1024 * 1024 / block;
        assert!(
            stdout(&ours).contains(&format!("Total operations: {events} (")),
            "{extra}: {}",
            stdout(&ours)
        );
    }
    assert_eq!(
        body(&bench(&words("memory help"))),
        body(&sysbench(&words("memory help")))
    );
    let ours = bench(&words("memory --memory-block-size=3 run"));
    assert_eq!(ours.status.code(), Some(1));
    assert!(
        text(&ours).contains("FATAL: Invalid value for memory-block-size: 3"),
        "{}",
        text(&ours)
    );
}

/// `s` with every figure (a run of digits and dots) one N and spaces collapsed: the layout,
/// not the numbers, of a report.
fn masked(s: String) -> String {
    s.lines()
        .map(|l| {
            let mut out = String::new();
            for c in l.chars() {
                if !(c.is_ascii_digit() || c == '.') {
                    out.push(c);
                } else if !out.ends_with('N') {
                    out.push('N');
                }
            }
            out.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An unknown `--db-driver` (`help` too): sysbench's header and FATAL lines on stdout,
/// status 1, for `run`, `prepare`, `prewarm` and `cleanup` alike (#24, #34: scripts diff
/// `2>&1`; cleanup names its own function).
#[test]
fn an_unknown_driver_says_what_sysbench_says() {
    for cmd in [
        "oltp_read_only --db-driver=pgsqlx run",
        "oltp_read_only --db-driver=help prepare",
        "oltp_read_only --db-driver=nope cleanup",
        "oltp_point_select --db-driver=nope cleanup",
        "oltp_read_write --db-driver=nope prewarm",
    ] {
        let (ours, sb) = (bench(&words(cmd)), sysbench(&words(cmd)));
        assert_eq!(ours.status.code(), sb.status.code(), "{cmd}");
        assert_eq!(body(&ours), body(&sb), "{cmd}");
        assert_eq!(ours.stderr, sb.stderr, "{cmd}");
    }
}

/// A missing or unknown command and an unknown test, as sysbench 1.0.20 answers them: the
/// same lines on stdout (the banner aside) and on stderr, the same status, at the default
/// verbosity and at 0; our list of the tests we have only from verbosity 4 (#24).
#[test]
fn usage_errors_say_what_sysbench_says() {
    for cmd in [
        "nope run",
        "oltp_read_only",
        "bulk_insert",
        "cpu",
        "fileio bogus",
        "oltp_point_select bogus",
        "cpu prepare",
        "--verbosity=0 oltp_read_only",
        "--verbosity=0 cpu",
        "--verbosity=0 nope run",
        "--db-driver=help oltp_read_only",
        "oltp_read_only --threads=0 run",
        "cpu --threads=0 run",
        "nope --threads=0 run",
        "oltp_read_only --nope=1 run",
        "cpu --nope run",
        "cpu --cpu-max-prime=0 run",
        "memory --memory-block-size=3 run",
        "fileio --file-test-mode=bad run",
        "oltp_read_only --time=x run",
        "oltp_read_only --rand-seed=x run",
        "fileio --file-num=x --file-test-mode=seqrd run",
        "oltp_read_only --histogram=maybe run",
    ] {
        let (ours, sb) = (bench(&words(cmd)), sysbench(&words(cmd)));
        assert_eq!(ours.status.code(), sb.status.code(), "{cmd}");
        // Below verbosity 3, and for a thread count sysbench refuses before anything, no
        // banner comes first.
        if cmd.starts_with("--verbosity=0")
            || cmd.contains("--threads=0")
            || cmd.contains("=x run") && !cmd.starts_with("fileio")
        {
            assert_eq!(stdout(&ours), stdout(&sb), "{cmd}");
        } else {
            assert_eq!(body(&ours), body(&sb), "{cmd}");
        }
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&sb.stderr),
            "{cmd}"
        );
    }
    // The nearest option's name is ours, from sysbench's "info" level.
    let ours = bench(&words("oltp_read_only --tabels=2 run --verbosity=4"));
    assert!(
        String::from_utf8_lossy(&ours.stderr)
            .contains("invalid option: --tabels=2 (did you mean --tables?)"),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours = bench(&words("nope run --verbosity=4"));
    assert!(
        stdout(&ours).contains("sweepbench has: oltp_read_only"),
        "{}",
        stdout(&ours)
    );
}

/// `bench fileio` as sysbench 1.0.20's file I/O test, each tool in a directory of its own:
/// prepare's lines, every run mode's report layout (figures masked), exactly `--events`
/// requests, the combined mode's reads and writes at `--file-rw-ratio`, the answer to a
/// missing `--file-test-mode`, and cleanup removing the files (#24). sysbench 1.0.20's own
/// `seqwr` fails here ("Cannot create file … Bad file descriptor"), so it is checked alone.
#[test]
fn the_fileio_test_prints_what_sysbench_prints() {
    let (ours_dir, theirs_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let in_dir = |ours: bool, words: &str| {
        let mut c = if ours {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
            c.arg("bench");
            c
        } else {
            std::process::Command::new("sysbench")
        };
        c.args(words.split_whitespace())
            .current_dir(if ours {
                ours_dir.path()
            } else {
                theirs_dir.path()
            })
            .output()
            .unwrap()
    };
    let files = "fileio --file-num=4 --file-total-size=8M";
    let (o, t) = (
        in_dir(true, &format!("{files} prepare")),
        in_dir(false, &format!("{files} prepare")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(masked(body(&o)), masked(body(&t)));
    assert_eq!(
        std::fs::metadata(ours_dir.path().join("test_file.3"))
            .unwrap()
            .len(),
        2 << 20
    );
    for mode in ["seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"] {
        let run = format!("{files} --file-test-mode={mode} --events=2000 --time=0 run");
        let (o, t) = (in_dir(true, &run), in_dir(false, &run));
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", text(&o));
        assert_eq!(masked(body(&o)), masked(body(&t)), "{mode}: {}", stdout(&o));
        assert!(
            stdout(&o).contains("    total number of events:              2000\n"),
            "{mode}: {}",
            stdout(&o)
        );
    }
    // The mmap and async I/O modes: the same lines, exactly --events requests.
    for io in ["mmap", "async"] {
        for mode in ["seqrd", "rndrw"] {
            let run = format!(
                "{files} --file-io-mode={io} --file-test-mode={mode} --events=2000 --time=0 run"
            );
            let (o, t) = (in_dir(true, &run), in_dir(false, &run));
            assert_eq!(o.status.code(), Some(0), "{io} {mode}: {}", text(&o));
            assert_eq!(masked(body(&o)), masked(body(&t)), "{io} {mode}");
            assert!(
                stdout(&o).contains("    total number of events:              2000\n"),
                "{io} {mode}: {}",
                stdout(&o)
            );
        }
    }
    // Every write fsynced and every fsync counted, an async write when it completes.
    let o = in_dir(
        true,
        &format!(
            "{files} --file-io-mode=async --file-test-mode=rndwr --file-fsync-all --events=300 --time=0 run"
        ),
    );
    let line = |o: &std::process::Output, key: &str| -> String {
        stdout(o)
            .lines()
            .find(|l| l.trim_start().starts_with(key))
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        line(&o, "writes/s:"),
        line(&o, "fsyncs/s:"),
        "{}",
        stdout(&o)
    );
    assert_ne!(line(&o, "writes/s:"), "0.00");
    // The combined mode: reads and writes at 1.5 to 1 (writes count in the throughput).
    let o = in_dir(
        true,
        &format!("{files} --file-test-mode=rndrw --events=5000 --time=0 run"),
    );
    let rate = |key: &str| -> f64 {
        stdout(&o)
            .lines()
            .find(|l| l.trim_start().starts_with(key))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    let ratio = rate("reads/s:") / rate("writes/s:");
    assert!((ratio - 1.5).abs() < 0.01, "{ratio}");
    assert!(rate("fsyncs/s:") > 0.0);
    let o = in_dir(
        true,
        &format!("{files} --file-test-mode=seqwr --events=100 --time=0 run"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("Doing sequential write (creation) test"));
    let (o, t) = (in_dir(true, "fileio run"), in_dir(false, "fileio run"));
    assert_eq!((o.status.code(), body(&o)), (t.status.code(), body(&t)));
    let (o, t) = (
        in_dir(true, &format!("{files} cleanup")),
        in_dir(false, &format!("{files} cleanup")),
    );
    assert_eq!(body(&o), body(&t));
    assert!(!ours_dir.path().join("test_file.0").exists());
}

/// A planted `test_file.N` symlink is refused by prepare and by run, naming it, and the file
/// it points to is left as it was (sysbench 1.0.20 writes through it).
#[test]
fn fileio_never_writes_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious");
    std::fs::write(&precious, "keep me").unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let bench = |words: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .arg("bench")
            .args(words.split_whitespace())
            .current_dir(&work)
            .output()
            .unwrap()
    };
    let files = "fileio --file-num=2 --file-total-size=2M";
    std::os::unix::fs::symlink(&precious, work.join("test_file.0")).unwrap();
    let o = bench(&format!("{files} prepare"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("test_file.0' is a symbolic link"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    // Prepared for real, then test_file.1 swapped for a link: run refuses it.
    std::fs::remove_file(work.join("test_file.0")).unwrap();
    let o = bench(&format!("{files} prepare"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::remove_file(work.join("test_file.1")).unwrap();
    std::fs::write(&precious, vec![b'k'; 1 << 20]).unwrap();
    std::os::unix::fs::symlink(&precious, work.join("test_file.1")).unwrap();
    let o = bench(&format!("{files} --file-test-mode=rndwr --time=1 run"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("test_file.1' is a symbolic link"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&precious).unwrap(), vec![b'k'; 1 << 20]);
}

/// A command line's words.
fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// oltp_common.lua, by path as the published studies call it: prepare, prewarm and cleanup
/// as sysbench 1.0.20 does them (the same lines, the same exit codes, the tables made and
/// dropped), a run of oltp_read_write.lua on what it prepared, and `run` of oltp_common
/// itself refused as sysbench refuses it.
#[test]
fn oltp_common_by_path_prepares_and_cleans_up_as_sysbench() {
    let ours = fresh_db("common_ours");
    let theirs = fresh_db("common_theirs");
    let script = "/usr/share/sysbench/oltp_common.lua";
    let data = "--tables=2 --table_size=1000";
    for command in ["prepare", "prewarm"] {
        let a = bench(&args(&format!("{script} {data} {command}"), &ours));
        let b = sysbench(&args(&format!("{script} {data} {command}"), &theirs));
        assert_eq!(a.status.code(), Some(0), "{}", text(&a));
        assert_eq!(b.status.code(), Some(0), "{}", text(&b));
        assert_eq!(body(&a), body(&b), "{command}");
    }
    let rows = |db: &str| {
        query_col(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{db}' AND table_name LIKE 'sbtest%' AND table_rows > 0"
        ))
    };
    assert_eq!(query_u64("SELECT COUNT(*) FROM common_ours.sbtest2"), 1000);
    assert_eq!(rows("common_ours"), rows("common_theirs"));
    let run = bench(&args(
        "/usr/share/sysbench/oltp_read_write.lua --tables=2 --table_size=1000 --threads=2 --time=1 run",
        &ours,
    ));
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let a = bench(&args(&format!("{script} {data} --time=1 run"), &ours));
    let b = sysbench(&args(&format!("{script} {data} --time=1 run"), &theirs));
    assert_eq!((a.status.code(), b.status.code()), (Some(1), Some(1)));
    assert_eq!(body(&a), body(&b));
    for db in [("common_ours", &ours), ("common_theirs", &theirs)] {
        let out = if db.0 == "common_ours" {
            bench(&args(&format!("{script} --tables=2 cleanup"), db.1))
        } else {
            sysbench(&args(&format!("{script} --tables=2 cleanup"), db.1))
        };
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(
            stdout(&out).contains("Dropping table 'sbtest2'..."),
            "{}",
            text(&out)
        );
    }
    assert_eq!(
        query_u64(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'common_ours'"
        ),
        0
    );
}
