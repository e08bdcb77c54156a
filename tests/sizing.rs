//! `[data] size` (#46): the data set given as bytes or relative to each server, its rows per
//! table derived from the row size measured on that server; checked against
//! information_schema after the run, reused when it already holds the size, recorded in the
//! manifest; sizes the file cannot mean are refused at their line.

mod common;
use common::sweeps::*;
use common::*;

fn manifest(run: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

/// A url target asked for 64 MiB: the tables hold it within ±10 % by the server's own
/// account, every table has the rows the manifest records, the workload ran; a second run
/// reuses them (no prepare) at the same rows.
#[test]
fn an_external_servers_data_is_sized_in_bytes_and_reused() {
    let s = server();
    fresh_db("sized_ext");
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"sized\"\n[data]\ntables = 2\nsize = \"64M\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\n[[targets]]\nname = \"ext\"\nurl = \"mysql://root@127.0.0.1:{}/sized_ext\"\n",
        s.port()
    );
    let f = sweep_file(dir.path(), "sized", &body);
    let plan = sweepbench(&["plan", f.to_str().unwrap()]);
    assert!(
        text(&plan).contains("ext: ≈ 64 MiB, ≈ 145888 rows a table at ~230 bytes a row"),
        "{}",
        text(&plan)
    );
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("bytes a row measured here"),
        "{}",
        text(&out)
    );
    let m = manifest(&results.join("sized/latest"));
    let sized = &m["data"]["sized"]["ext"];
    let rows = sized["rows"].as_u64().unwrap();
    assert_eq!(sized["asked_bytes"], 64u64 << 20);
    assert!(m["data"].get("table_size").is_none(), "{m}");
    for t in ["sbtest1", "sbtest2"] {
        let n = query_col_on(s, &format!("SELECT COUNT(*) FROM sized_ext.{t}"));
        assert_eq!(n[0], rows.to_string(), "{t}");
    }
    let bytes: f64 = query_col_on(
        s,
        "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = 'sized_ext'",
    )[0]
    .parse()
    .unwrap();
    let off = bytes / (64u64 << 20) as f64 - 1.0;
    assert!(
        off.abs() <= 0.10,
        "{bytes} bytes for 64 MiB: {:+.1} %",
        off * 100.0
    );
    let points = std::fs::read_to_string(results.join("sized/latest/points.csv")).unwrap();
    assert!(points.lines().nth(1).unwrap().contains(",ok,"), "{points}");

    let again = run_sweep(&f, &results, &[]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        !text(&again).contains("prepared 2 table(s)")
            && !text(&again).contains("bytes a row measured here"),
        "the tables were reused: {}",
        text(&again)
    );
    let m = manifest(&results.join("sized/latest"));
    assert_eq!(m["data"]["sized"]["ext"]["rows"].as_u64(), Some(rows));
}

/// A managed server's data at 1.2 × its buffer pool (the config's 32M): within ±10 % of
/// 38.4 MiB as the server counts it.
#[test]
fn a_managed_servers_data_is_sized_from_its_buffer_pool() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"pool\"\n[data]\ntables = 2\nsize = \"1.2 × buffer_pool\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"m\"\nserver = {}\n[[configs]]\nname = \"small\"\nvars = { innodb_buffer_pool_size = \"32M\" }\n";
    let f = sweep_file(dir.path(), "pool", body);
    let out = run_in(dir.path(), &f, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let m = manifest(&dir.path().join("results/pool/latest"));
    let s = &m["data"]["sized"]["m"];
    let asked = s["asked_bytes"].as_f64().unwrap();
    assert_eq!(asked as u64, (1.2 * (32u64 << 20) as f64) as u64, "{m}");
    let off = s["measured_bytes"].as_f64().unwrap() / asked - 1.0;
    assert!(off.abs() <= 0.10, "{s}: {:+.1} %", off * 100.0);
    assert!(s["bytes_per_row"].as_f64().unwrap() > 150.0, "{s}");
}

/// Sizes the file cannot mean, and sizes relative to what is not known, are refused at
/// their line with the remedy.
#[test]
fn a_size_that_cannot_be_meant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |name: &str, data: &str, target: &str| {
        let f = sweep_file(
            dir.path(),
            name,
            &format!("name = \"{name}\"\n[data]\n{data}\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"t\"\n{target}\n"),
        );
        let out = sweepbench(&["plan", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        text(&out)
    };
    let url = "url = \"mysql://u@127.0.0.1:3306/sbtest\"";
    let t = plan("both", "size = \"1G\"\ntable_size = 1000", url);
    assert!(
        t.contains("both.toml:3:") && t.contains("give size or table_size, not both"),
        "{t}"
    );
    let t = plan("word", "size = \"lots\"", url);
    assert!(t.contains("data.size = \"lots\": expected a size"), "{t}");
    let t = plan("mem", "size = \"1.2 × memory\"", url);
    assert!(
        t.contains("mem.toml:8:")
            && t.contains("target 't': data.size is relative to memory")
            && t.contains("give memory = \"8G\""),
        "{t}"
    );
    let ok = sweep_file(
        dir.path(),
        "given",
        &format!("name = \"given\"\n[data]\nsize = \"1.2 × memory\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"t\"\n{url}\nmemory = \"1G\"\n"),
    );
    let out = sweepbench(&["plan", ok.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("t: ≈ 1.2 GiB"), "{}", text(&out));
}

/// A managed target's data that its disk cannot hold (the prepared copy and one per server up
/// at once, under TMPDIR) is refused by `check` and `run` before any server starts, with the
/// size, the free space and the remedy; the same file at a size that fits passes.
#[test]
fn a_managed_size_the_disk_cannot_hold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let body = |size: &str| {
        format!("name = \"big\"\n[data]\ntables = 4\nsize = \"{size}\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"m\"\nserver = {{}}\n")
    };
    let f = sweep_file(dir.path(), "big", &body("100T"));
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("[FAIL] m disk:")
            && t.contains("data.size = 100 TiB needs about 200 TiB")
            && t.contains("point TMPDIR at a bigger disk"),
        "{t}"
    );
    let results = dir.path().join("results");
    let out = sweepbench(&[
        "run",
        f.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("[FAIL] m disk:"), "{}", text(&out));
    assert!(!text(&out).contains("starting m/"), "{}", text(&out));
    let small = sweep_file(dir.path(), "small", &body("1M"));
    let out = sweepbench(&["check", small.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("disk"), "{}", text(&out));
}
