//! Every workload runs against a real MariaDB, in both ps modes, and performs the per-event
//! statement counts of the spec (§3), with defaults and with non-default options.

mod common;
use common::*;

/// Prepares `db` for `workload` with `opts` and runs `events` events on 2 threads; returns
/// the JSON report.
fn run_events(db: &str, workload: &str, opts: &str, events: u64) -> serde_json::Value {
    let conn = fresh_db(db);
    bench_ok(&format!("{workload} prepare {opts}"), &conn);
    bench_json(
        &format!("{workload} run {opts} --threads=2 --events={events} --time=0"),
        &conn,
    )
}

fn counts(j: &serde_json::Value) -> (u64, u64, u64, u64, u64) {
    (
        json_u64(j, "/totals/events"),
        json_u64(j, "/totals/reads"),
        json_u64(j, "/totals/writes"),
        json_u64(j, "/totals/other"),
        json_u64(j, "/totals/errors"),
    )
}

/// Asserts reads/writes/other per event, allowing what restarted attempts add.
fn assert_per_event(j: &serde_json::Value, events: u64, r: u64, w: u64, o: u64) {
    let (ev, reads, writes, other, errors) = counts(j);
    assert_eq!(ev, events, "{j}");
    let ok = |got: u64, per: u64| got >= per * ev && got <= per * (ev + errors);
    assert!(ok(reads, r), "reads {reads} vs {r}/event: {j}");
    assert!(
        ok(writes, w) || (writes + 4 * errors >= w * ev && writes <= w * (ev + errors)),
        "writes {writes} vs {w}/event: {j}"
    );
    assert!(ok(other, o), "other {other} vs {o}/event: {j}");
}

const SMALL: &str = "--tables=2 --table-size=1000";

#[test]
fn read_only_defaults_and_options_in_both_ps_modes() {
    for ps in ["auto", "disable"] {
        let j = run_events(
            &format!("ro_{ps}"),
            "oltp_read_only",
            &format!("{SMALL} --db-ps-mode={ps}"),
            100,
        );
        assert_per_event(&j, 100, 14, 0, 2);
        let j = run_events(
            &format!("ro2_{ps}"),
            "oltp_read_only",
            &format!(
                "{SMALL} --db-ps-mode={ps} --skip-trx=on --range-selects=off --point-selects=3"
            ),
            100,
        );
        assert_per_event(&j, 100, 3, 0, 0);
    }
}

#[test]
fn read_write_with_options_in_both_ps_modes() {
    for ps in ["auto", "disable"] {
        let j = run_events(
            &format!("rw_{ps}"),
            "oltp_read_write",
            &format!("{SMALL} --db-ps-mode={ps}"),
            100,
        );
        assert_per_event(&j, 100, 14, 4, 2);
        let j = run_events(
            &format!("rw2_{ps}"),
            "oltp_read_write",
            &format!(
                "{SMALL} --db-ps-mode={ps} --point-selects=3 --simple-ranges=2 --sum-ranges=0 \
                 --index-updates=2 --delete-inserts=2 --rand-type=uniform"
            ),
            100,
        );
        // reads 3 + 2 + 0 + 1 + 1, writes 2 + 1 + 2·2, other BEGIN + COMMIT.
        assert_per_event(&j, 100, 7, 7, 2);
    }
}

#[test]
fn write_only_and_single_statement_workloads() {
    for ps in ["auto", "disable"] {
        let o = format!("{SMALL} --db-ps-mode={ps}");
        assert_per_event(
            &run_events(&format!("wo_{ps}"), "oltp_write_only", &o, 100),
            100,
            0,
            4,
            2,
        );
        assert_per_event(
            &run_events(&format!("ps_{ps}"), "oltp_point_select", &o, 200),
            200,
            1,
            0,
            0,
        );
        assert_per_event(
            &run_events(&format!("ui_{ps}"), "oltp_update_index", &o, 200),
            200,
            0,
            1,
            0,
        );
        assert_per_event(
            &run_events(&format!("un_{ps}"), "oltp_update_non_index", &o, 200),
            200,
            0,
            1,
            0,
        );
    }
}

#[test]
fn delete_counts_missing_rows_as_other() {
    for ps in ["auto", "disable"] {
        let db = format!("del_{ps}");
        let j = run_events(
            &db,
            "oltp_delete",
            &format!("{SMALL} --db-ps-mode={ps}"),
            300,
        );
        let (ev, reads, writes, other, _) = counts(&j);
        assert_eq!((ev, reads), (300, 0));
        assert_eq!(writes + other, 300, "{j}");
        // With the special distribution many deletes hit rows already gone.
        assert!(other > 0 && writes > 0, "{j}");
        let left = query_u64(&format!("SELECT COUNT(*) FROM {db}.sbtest1"))
            + query_u64(&format!("SELECT COUNT(*) FROM {db}.sbtest2"));
        assert_eq!(left, 2000 - writes, "every write deleted exactly one row");
    }
}

#[test]
fn insert_adds_one_row_per_event() {
    let j = run_events("ins", "oltp_insert", SMALL, 300);
    assert_per_event(&j, 300, 0, 1, 0);
    let rows = query_u64("SELECT COUNT(*) FROM ins.sbtest1")
        + query_u64("SELECT COUNT(*) FROM ins.sbtest2");
    assert_eq!(rows, 2000 + 300);
    // auto_inc=off starts from empty tables and draws unique ids.
    let j = run_events(
        "ins2",
        "oltp_insert",
        &format!("{SMALL} --auto-inc=off"),
        300,
    );
    assert_per_event(&j, 300, 0, 1, 0);
    let rows = query_u64("SELECT COUNT(*) FROM ins2.sbtest1")
        + query_u64("SELECT COUNT(*) FROM ins2.sbtest2");
    assert_eq!(rows, 300);
}

#[test]
fn bulk_insert_counts_rows_as_events() {
    let conn = fresh_db("bulk");
    bench_ok("bulk_insert prepare --threads=2", &conn);
    let j = bench_json(
        "bulk_insert run --threads=2 --events=100000 --time=0",
        &conn,
    );
    let (ev, reads, writes, other, _) = counts(&j);
    assert_eq!((ev, reads, other), (100_000, 0, 0));
    // Each thread sends full 512 KiB statements and then its remainder.
    assert!((2..=10).contains(&writes), "{j}");
    let rows = query_u64("SELECT COUNT(*) FROM bulk.sbtest1")
        + query_u64("SELECT COUNT(*) FROM bulk.sbtest2");
    assert_eq!(rows, 100_000);
    bench_ok("bulk_insert cleanup --threads=2", &conn);
    assert_eq!(
        query_u64("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='bulk'"),
        0
    );
}

#[test]
fn random_points_and_ranges_read_once_per_event() {
    for ps in ["auto", "disable"] {
        let o = format!("--table-size=1000 --db-ps-mode={ps}");
        assert_per_event(
            &run_events(&format!("rp_{ps}"), "select_random_points", &o, 200),
            200,
            1,
            0,
            0,
        );
        assert_per_event(
            &run_events(
                &format!("rr_{ps}"),
                "select_random_ranges",
                &format!("{o} --number-of-ranges=3 --delta=20"),
                200,
            ),
            200,
            1,
            0,
            0,
        );
    }
    let out = bench(&args(
        "select_random_points cleanup --tables=2",
        &fresh_db("rp_clean"),
    ));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tables must be 1"));
}

#[test]
fn prewarm_reads_every_table() {
    let conn = fresh_db("warm");
    bench_ok(&format!("oltp_read_only prepare {SMALL}"), &conn);
    let out = bench_ok(
        &format!("oltp_read_only prewarm {SMALL} --threads=2"),
        &conn,
    );
    assert!(
        out.contains("Prewarming table sbtest1") && out.contains("Prewarming table sbtest2"),
        "{out}"
    );
}

#[test]
fn prepared_statements_are_used_only_in_auto_mode() {
    // A server of its own, so global statement counters see only this test.
    let s = sweepbench::pipeline::server::ManagedServer::start(
        &sweepbench::pipeline::server::ServerSpec::default(),
    )
    .expect("throwaway server");
    sweepbench::pipeline::server::managed::exec_root(&s, &["CREATE DATABASE psm"]).unwrap();
    let conn = conn_args(&s, "psm");
    bench_ok(&format!("oltp_point_select prepare {SMALL}"), &conn);
    let executes = || -> u64 {
        query_col_on(&s, "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0]
            .parse()
            .unwrap()
    };
    let before = executes();
    bench_ok(
        &format!("oltp_point_select run {SMALL} --threads=2 --events=500 --time=0"),
        &conn,
    );
    let auto = executes() - before;
    assert_eq!(auto, 500, "one server-side execute per point select");
    bench_ok(
        &format!(
            "oltp_point_select run {SMALL} --threads=2 --events=500 --time=0 --db-ps-mode=disable"
        ),
        &conn,
    );
    assert_eq!(
        executes() - before,
        500,
        "disable mode sends text queries only"
    );
}

#[test]
fn fatal_error_names_the_statement_and_still_reports() {
    let conn = fresh_db("fatal");
    // No tables: the first statement fails with 1146, which is not ignorable.
    let out = bench(&args(
        "oltp_point_select run --threads=2 --time=2 --db-ps-mode=disable",
        &conn,
    ));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error 1146") && err.contains("SELECT c FROM sbtest1 WHERE id="),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("SQL statistics:"), "{stdout}");
}

#[test]
fn bad_options_exit_1_as_sysbench_with_a_clear_message() {
    // sysbench's line as it prints it; the nearest name from verbosity 4.
    let out = bench(&args("oltp_read_write run --table-sise=5", &[]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "invalid option: --table-sise=5\n"
    );
    let out = bench(&args(
        "oltp_read_write run --table-sise=5 --verbosity=4",
        &[],
    ));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean --table-size?"));
    // An unknown test as sysbench answers it (on stdout); our guess from verbosity 4.
    let out = bench(&args("oltp_read_wirte run", &[]));
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.ends_with(
            "\nFATAL: Cannot find benchmark 'oltp_read_wirte': no such built-in test, file or module\n"
        ),
        "{said}"
    );
    assert!(
        out.stderr.is_empty() && !said.contains("did you mean"),
        "{said}"
    );
    let out = bench(&args("oltp_read_wirte run --verbosity=4", &[]));
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("did you mean oltp_read_write?"), "{said}");
    // sysbench's FATAL lines on stdout after the run's header, as sysbench 1.0.20 prints
    // them (tests/bench_habits.rs diffs them with sysbench's).
    let out = bench(&args("oltp_read_write run --db-driver=x", &[]));
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "Initializing worker threads...\n\nFATAL: invalid database driver name: 'x'\n"
        ) && said.ends_with("FATAL: Thread initialization failed!\n"),
        "{said}"
    );
}

/// Every entry of the workloads table (engine/config/workloads.rs) is reachable the three
/// ways a workload is named: `bench` (prepare, run, and its help's options), a sweep's
/// `workloads` (`run`, on a synthetic target), and `import` (a sysbench log naming the
/// script). A new entry that one of them misses fails here.
#[test]
fn every_table_entry_is_reachable_from_bench_run_and_import() {
    use sweepbench::engine::config::Tables;
    use sweepbench::engine::config::WORKLOADS;
    let mut names = Vec::new();
    for (i, w) in WORKLOADS.iter().enumerate() {
        // A sweep does not run a table per thread yet: refused by name (below).
        if w.tables != Tables::PerThread {
            names.push(format!("\"{}\"", w.name));
        }
        // bench: prepared and run for 10 events.
        let conn = fresh_db(&format!("table_entry_{i}"));
        bench_ok(&format!("{} prepare --table-size=50", w.name), &conn);
        let j = bench_json(
            &format!(
                "{} run --table-size=50 --threads=1 --events=10 --time=0",
                w.name
            ),
            &conn,
        );
        assert_eq!(json_u64(&j, "/totals/events"), 10, "{}: {j}", w.name);
        // bench's help: the script's own options beside the common ones, or sysbench's refusal.
        let help = bench(&args(&format!("{} help", w.name), &[]));
        let said = text(&help);
        match w.help {
            Some(own) => {
                assert_eq!(help.status.code(), Some(0), "{}: {said}", w.name);
                for o in own.iter().chain(["tables", "table_size"].iter()) {
                    assert!(
                        said.contains(&format!("--{o}")),
                        "{}: --{o}: {said}",
                        w.name
                    );
                }
            }
            None => assert!(
                said.contains(&format!(
                    "'{}' test does not implement the 'help' command",
                    w.name
                )),
                "{}: {said}",
                w.name
            ),
        }
        // import: a sysbench log whose command names the script.
        let log = std::fs::read_to_string("tests/fixtures/sysbench-1.0-full.log").unwrap();
        let p = sweepbench::pipeline::results::import::parse(&format!(
            "sysbench {} --threads=4 run\n{log}",
            w.name
        ));
        assert_eq!(p.workload.as_deref(), Some(w.name), "import");
    }
    // run: every workload in one sweep, computed by a model.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("all.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"all\"\n[run]\nworkloads = [{}]\nthreads = [1]\nwarmup = \"0s\"\nduration = \"1s\"\n[[targets]]\nname = \"m\"\nsynthetic = {{ seed = 1 }}\n",
            names.join(", ")
        ),
    )
    .unwrap();
    let out = run_in(dir.path(), &f, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let points = std::fs::read_to_string(dir.path().join("results/all/latest/points.csv")).unwrap();
    for w in WORKLOADS.iter().filter(|w| w.tables != Tables::PerThread) {
        let row = points
            .lines()
            .find(|l| l.contains(&format!(",{},1,1,ok,", w.name)))
            .unwrap_or_else(|| panic!("{}: no ok point in points.csv:\n{points}", w.name));
        assert!(
            row.contains(&format!("m/default/{}/t1/r1", w.name)),
            "{row}"
        );
    }
}

/// docs/bench.md's list of workloads is the table's, in its order.
#[test]
fn the_docs_list_every_workload_of_the_table() {
    let doc = std::fs::read_to_string("docs/bench.md").unwrap();
    let start = doc
        .find("- Workloads: ")
        .expect("docs/bench.md lists the workloads")
        + 13;
    let end = start + doc[start..].find(" (a path").unwrap();
    let listed: Vec<&str> = doc[start..end].split(',').map(|w| w.trim()).collect();
    let table: Vec<&str> = sweepbench::engine::config::WORKLOADS
        .iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(listed, table);
}
