//! The storage engine per target (#51): a managed server loads the engine's plugin, its
//! tables are made with it (information_schema says so, kept as servers/*/engine.txt), the
//! report says the engines differ; an engine a server lacks is refused by `check` before
//! anything is prepared, naming it and the remedy.

mod common;
use common::sweeps::*;
use common::*;

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn rocksdb_and_innodb_targets_make_their_own_tables_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"engines\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1, 2]\nwarmup = \"0s\"\ndesign = \"paired\"\nslice = \"1s\"\nbudget = \"20s\"\n[[targets]]\nname = \"innodb\"\nserver = {}\n[[targets]]\nname = \"rocksdb\"\nserver = {}\nstorage_engine = \"rocksdb\"\n";
    let f = sweep_file(dir.path(), "engines", body);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(
        text(&out).contains("[ok  ] rocksdb engine: storage engine rocksdb: loads /usr/lib/mysql/plugin/ha_rocksdb.so"),
        "{}",
        text(&out)
    );
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run = results.join("engines/latest");
    assert_eq!(
        read(&run.join("servers/rocksdb__default/engine.txt")).trim(),
        "ROCKSDB"
    );
    assert_eq!(
        read(&run.join("servers/innodb__default/engine.txt")).trim(),
        "InnoDB"
    );
    // Each engine's own counters are kept: RocksDB's rows read on its points.
    let status = read(&run.join("status.csv"));
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("rocksdb/") && l.contains("Rocksdb_rows_read")),
        "{}",
        &status[..status.len().min(2000)]
    );
    let md = read(&run.join("report.md"));
    assert!(
        md.contains("The tables' storage engines differ — InnoDB on innodb/default, ROCKSDB on rocksdb/default"),
        "{md}"
    );
    // The answer names both (in whichever words the data gives it).
    let summary = read(&run.join("summary.txt"));
    assert!(
        summary.contains("  rocksdb/default ")
            && summary.contains(" innodb/default for oltp_point_select"),
        "{summary}"
    );
    // A reason is never one engine's counter reading 0 on the other's tables.
    for why in summary
        .lines()
        .filter(|l| l.trim_start().starts_with("why "))
    {
        assert!(
            !why.contains("Innodb_") && !why.contains("Rocksdb_"),
            "{why}"
        );
    }
}

#[test]
fn an_engine_the_server_lacks_is_refused_before_anything_is_prepared() {
    let s = server();
    fresh_db("noengine");
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"noengine\"\n[data]\ntables = 1\ntable_size = 100\nstorage_engine = \"nosuchengine\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"ext\"\nurl = \"mysql://root@127.0.0.1:{}/noengine\"\n[[targets]]\nname = \"managed\"\nserver = {{}}\nstorage_engine = \"mroonga\"\n",
        s.port()
    );
    let f = sweep_file(dir.path(), "noengine", &body);
    for cmd in ["check", "run"] {
        let out = if cmd == "check" {
            sweepbench(&["check", f.to_str().unwrap()])
        } else {
            run_sweep(&f, &dir.path().join("results"), &[])
        };
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {said}");
        assert!(
            said.contains("[FAIL] ext engine: the server has no storage engine nosuchengine"),
            "{cmd}: {said}"
        );
        assert!(
            said.contains("[FAIL] managed engine: storage engine mroonga needs the plugin /usr/lib/mysql/plugin/ha_mroonga.so")
                && said.contains("apt-get install mariadb-plugin-mroonga"),
            "{cmd}: {said}"
        );
    }
    // Nothing was made.
    let tables = query_col_on(
        s,
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'noengine'",
    );
    assert_eq!(tables, ["0"]);
}
