//! A config's data-shaping variables reach its tables (#66): a managed target prepares one
//! copy of its data per data shape among its configs, under that shape's first config — the
//! character set, the row format, the page size (on a datadir initialised with it) — and every
//! series records the tables it ran on, which the report shows and compares. A url target's
//! check says which vars cannot reach the tables already there.

mod common;
use common::sweeps::*;
use common::*;

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Column `name` of every row of a series' tables.tsv.
fn column(tsv: &str, name: &str) -> Vec<String> {
    let mut lines = tsv.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let i = head.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| l.split('\t').nth(i).unwrap().to_string())
        .collect()
}

#[test]
fn each_configs_tables_are_made_in_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"shapes\"\n[data]\ntables = 2\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"local\"\nserver = {}\n[[configs]]\nname = \"default\"\n[[configs]]\nname = \"fast\"\nvars = { innodb_flush_log_at_trx_commit = 2 }\n[[configs]]\nname = \"utf8mb4\"\nvars = { character_set_server = \"utf8mb4\", collation_server = \"utf8mb4_general_ci\" }\n[[configs]]\nname = \"compact\"\nvars = { innodb_default_row_format = \"compact\" }\n[[configs]]\nname = \"8k\"\nvars = { innodb_page_size = \"8k\" }\n";
    let f = sweep_file(dir.path(), "shapes", body);
    // plan counts a prepare per shape: default and fast share one.
    let out = sweepbench(&["plan", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out)
            .contains("data shapes: 4 — each managed target prepares its data once per shape")
            && text(&out).contains("default, fast (the server's defaults)"),
        "{}",
        text(&out)
    );
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let out = run_in(dir.path(), &f, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        text(&out).matches("preparing data on local/").count(),
        4,
        "one prepare per shape: {}",
        text(&out)
    );
    let run = dir.path().join("results/shapes/latest");
    let tables = |series: &str| read(&run.join(format!("servers/local__{series}/tables.tsv")));
    for s in ["default", "fast"] {
        assert_eq!(column(&tables(s), "collation"), ["latin1_swedish_ci"; 2]);
        assert_eq!(column(&tables(s), "row_format"), ["Dynamic"; 2]);
        assert_eq!(column(&tables(s), "page_size"), ["16384"; 2]);
    }
    assert_eq!(
        column(&tables("utf8mb4"), "collation"),
        ["utf8mb4_general_ci"; 2]
    );
    assert_eq!(column(&tables("compact"), "row_format"), ["Compact"; 2]);
    assert_eq!(column(&tables("8k"), "page_size"), ["8192"; 2]);
    assert_eq!(column(&tables("8k"), "engine"), ["InnoDB"; 2]);
    // Every point ran on its own shape's tables.
    let csv = read(&run.join("points.csv"));
    assert_eq!(csv.matches(",ok,").count(), 5, "{csv}");
    // The report lists each series' tables and says the shapes differ.
    let md = read(&run.join("report.md"));
    assert!(md.contains("## Tables each series ran on"), "{md}");
    let section = md.split("## Tables each series ran on").nth(1).unwrap();
    let row = section
        .lines()
        .find(|l| l.starts_with("| local/utf8mb4 |"))
        .unwrap_or_else(|| panic!("a tables row for local/utf8mb4: {md}"));
    assert!(row.contains("utf8mb4_general_ci"), "{row}");
    assert!(
        md.contains("The series ran on tables of different shapes — collation latin1_swedish_ci on local/default")
            && md.contains("row format Dynamic on local/default")
            && md.contains("8192 on local/8k"),
        "{md}"
    );
}

/// On a server sweepbench did not start, a config's data-shaping variables are SET GLOBAL
/// and the tables there keep the shape they were made with: `check` says so, naming them.
#[test]
fn a_url_targets_check_names_the_vars_that_cannot_reach_its_tables() {
    let s = server();
    fresh_db("shape_url");
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"u\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"there\"\nurl = \"mysql://root@127.0.0.1:{}/shape_url\"\n[[configs]]\nname = \"default\"\n[[configs]]\nname = \"utf8mb4\"\nvars = {{ character_set_server = \"utf8mb4\", collation_server = \"utf8mb4_general_ci\" }}\n",
        s.port()
    );
    let f = sweep_file(dir.path(), "u", &body);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "a warning, not a refusal: {}",
        text(&out)
    );
    assert!(
        text(&out).contains("[warn] there data shape: config utf8mb4: character_set_server, collation_server decide how tables are made, and SET GLOBAL does not change the sbtest tables already on this server"),
        "{}",
        text(&out)
    );
}
