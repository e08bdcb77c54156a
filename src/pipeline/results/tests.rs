//! The run directory's files: writing them whole, reading them back, refusing bad ones.
use super::*;

#[test]
fn a_full_disk_is_a_clear_error() {
    // /dev/full fails every write with ENOSPC; the temp file write goes through it.
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("points.csv");
    std::os::unix::fs::symlink("/dev/full", d.path().join("points.csv.tmp")).unwrap();
    let e = write_atomic(&target, b"x").unwrap_err().to_string();
    assert!(e.contains("no space left on the disk of"), "{e}");
    assert!(e.contains("--results-dir"), "{e}");
    assert!(!target.exists());
}

/// docs/sweeps.md's "points.csv columns:" names every column, in the file's order: a new
/// column is documented where users look it up, or this fails.
#[test]
fn the_results_format_in_the_docs_names_every_column() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sweeps.md"),
    )
    .unwrap();
    let at = docs
        .find("points.csv columns:")
        .expect("the columns' paragraph");
    let text = &docs[at..];
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut from = 0;
    for c in POINT_COLUMNS {
        match words[from..].iter().position(|w| w == c) {
            Some(i) => from += i + 1,
            None => panic!("docs/sweeps.md does not name points.csv's column {c} (in order)"),
        }
    }
}

/// The server's CPU per transaction is written with every measured point and computed for a
/// file written before the column; none without the server's CPU or a transaction.
#[test]
fn server_cpu_per_transaction_is_derived_when_written_and_when_read() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let rec = |id: &str, server_cpu_s, transactions| PointRecord {
        point_id: id.into(),
        status: PointStatus::Ok,
        server_cpu_s,
        transactions,
        ..PointRecord::default()
    };
    dir.append_point(&rec("a/t1/r1", Some(1.5), 3000)).unwrap();
    dir.append_point(&rec("a/t2/r1", None, 3000)).unwrap();
    dir.append_point(&rec("a/t4/r1", Some(1.5), 0)).unwrap();
    let text = std::fs::read_to_string(dir.path.join("points.csv")).unwrap();
    let col = POINT_COLUMNS
        .iter()
        .position(|c| *c == "server_cpu_us_per_txn")
        .unwrap();
    let written: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap())
        .collect();
    assert_eq!(written, ["500.0", "", ""]);
    // A file without the column: the figure at load.
    std::fs::write(
        dir.path.join("points.csv"),
        text.lines()
            .map(|l| {
                let mut cells: Vec<&str> = l.split(',').collect();
                cells.remove(col);
                cells.join(",") + "\n"
            })
            .collect::<String>(),
    )
    .unwrap();
    let back: Vec<Option<f64>> = load_points(&dir.path)
        .unwrap()
        .iter()
        .map(|p| p.server_cpu_us_per_txn)
        .collect();
    assert_eq!(back, [Some(500.0), None, None]);
}

#[test]
fn header_matches_the_record_fields() {
    let mut w = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(vec![]);
    w.serialize(PointRecord::default()).unwrap();
    let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
    assert_eq!(text.lines().next().unwrap(), POINT_COLUMNS.join(","));
    let mut w = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(vec![]);
    w.serialize(IntervalRow::default()).unwrap();
    let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
    assert_eq!(text.lines().next().unwrap(), INTERVAL_COLUMNS.join(","));
}

#[test]
fn interval_rows_survive_a_resume() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let s = IntervalStats {
        t_s: 1.00004,
        threads: 2,
        tps: 1234.56789,
        ..IntervalStats::default()
    };
    dir.append_intervals("a/default/w/t2/r1", &[s.clone(), s])
        .unwrap();
    let rows = load_intervals(&dir.path).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].t_s, rows[0].threads, rows[0].tps),
        (1.0, 2, 1234.5679)
    );
    assert_eq!(
        load_tps_samples(&dir.path).unwrap()["a/default/w/t2/r1"].len(),
        2
    );
}

#[test]
fn an_infinite_figure_in_points_csv_is_refused_at_load() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let rec = PointRecord {
        point_id: "a/default/w/t1/r1".into(),
        tps: 100.0,
        ..PointRecord::default()
    };
    dir.append_point(&rec).unwrap();
    dir.append_point(&PointRecord {
        point_id: "a/default/w/t1/r2".into(),
        ..rec.clone()
    })
    .unwrap();
    assert_eq!(load_points(&dir.path).unwrap().len(), 2);
    let path = dir.path.join("points.csv");
    for bad in ["inf", "NaN", "-inf", "-5"] {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let tps = POINT_COLUMNS.iter().position(|c| *c == "tps").unwrap();
        let mut cells: Vec<String> = lines[2].split(',').map(str::to_string).collect();
        cells[tps] = bad.to_string();
        lines[2] = cells.join(",");
        let edited = d.path().join("edited");
        std::fs::create_dir_all(&edited).unwrap();
        std::fs::write(edited.join("points.csv"), lines.join("\n") + "\n").unwrap();
        let e = load_points(&edited).unwrap_err().to_string();
        assert!(
            e.contains("row 3: tps =") && e.contains("is not a finite, non-negative figure"),
            "{bad}: {e}"
        );
    }
}

/// A count no rate and duration can give (#22 N10: a part's `transactions` set to
/// u64::MAX) is refused at load; counts that agree, or differ by a second's edges, are not.
#[test]
fn a_count_the_rate_and_duration_deny_is_refused_at_load() {
    let rec = |transactions: u64, tps: f64, duration_s: f64| PointRecord {
        point_id: "a/default/w/t1/r1".into(),
        status: PointStatus::Ok,
        transactions,
        tps,
        duration_s,
        ..PointRecord::default()
    };
    for (n, tps, d) in [
        (1000, 100.0, 10.0),
        (1, 0.5, 2.0),
        (1210, 100.0, 10.0),
        (0, 0.0, 0.0),
    ] {
        assert_eq!(rec(n, tps, d).disagrees(), None, "{n} {tps} {d}");
    }
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    dir.append_point(&rec(u64::MAX, 100.0, 10.0)).unwrap();
    let e = load_points(&dir.path).unwrap_err().to_string();
    assert!(
        e.contains("row 2: transactions = 18446744073709551615 but tps × duration_s = 1000"),
        "{e}"
    );
    let mut failed = rec(u64::MAX, 100.0, 10.0);
    failed.status = PointStatus::Failed;
    assert_eq!(
        failed.disagrees(),
        None,
        "a failed point's figures are not read"
    );
}

/// compare and history read the scaling curve only: an SLA search's open-loop step at
/// 4 threads is not a closed-loop point at 4 threads.
#[test]
fn curve_points_leave_out_sla_steps() {
    let d = tempfile::tempdir().unwrap();
    let rec = |id: &str| PointRecord {
        point_id: id.into(),
        threads: 4,
        ..PointRecord::default()
    };
    let recs = [rec("a/default/w/t4/r1"), rec("a/default/w/rate900/t4/r1")];
    let (p, _) = points_and_intervals_csv(&recs, &[]).unwrap();
    std::fs::write(d.path().join("points.csv"), p).unwrap();
    assert_eq!(load_points(d.path()).unwrap().len(), 2);
    let curve = load_curve_points(d.path()).unwrap();
    assert_eq!(curve.len(), 1);
    assert_eq!(curve[0].point_id, "a/default/w/t4/r1");
}

#[test]
fn a_points_csv_cut_inside_its_header_is_an_error_not_an_empty_run() {
    let d = tempfile::tempdir().unwrap();
    for cut in ["", "run_id,point_id,tar"] {
        std::fs::write(d.path().join("points.csv"), cut).unwrap();
        let e = load_points(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("the header lacks") && e.contains("cut short"),
            "{e}"
        );
    }
    let mut w = csv::Writer::from_writer(vec![]);
    w.serialize(PointRecord::default()).unwrap();
    std::fs::write(d.path().join("points.csv"), w.into_inner().unwrap()).unwrap();
    assert_eq!(load_points(d.path()).unwrap().len(), 1);
}

/// A failed point keeps its error code in its own column; a file from before the column has
/// the code read from sysbench's wording once, at load.
#[test]
fn a_failed_points_error_code_is_kept_and_old_files_give_theirs() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let mut rec = PointRecord {
        point_id: "a/default/w/t64/r1".into(),
        status: PointStatus::Failed,
        ..PointRecord::default()
    };
    let e = anyhow::Error::new(crate::engine::Fatal::new(
        "cannot connect: too many",
        Some(1040),
    ))
    .context("point t64");
    rec.set_error(&e);
    assert_eq!(rec.error, "point t64: cannot connect: too many");
    dir.append_point(&rec).unwrap();
    let back = load_points(&dir.path).unwrap();
    assert_eq!(back[0].error_code, Some(1040));

    let old = d.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    // The columns of a file written before `error_code` was one.
    let before = &POINT_COLUMNS[..POINT_COLUMNS
        .iter()
        .position(|c| *c == "error_code")
        .unwrap()];
    let header = before.join(",");
    let row = |status: &str, error: &str| {
        before
            .iter()
            .map(|c| match *c {
                "point_id" => "a/default/w/t1/r1".to_string(),
                "status" => status.to_string(),
                "error" => format!("\"{error}\""),
                "driver" | "server_version" | "target" | "config" | "workload" | "run_id"
                | "errors_by_code" | "started_at" => String::new(),
                c if c.starts_with("lat_p") && c != "lat_p95_ms" => String::new(),
                "server_cpu_s" | "start_skew_ms" | "others_cpu_pct" | "steal_pct" => String::new(),
                _ => "0".to_string(),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    std::fs::write(
        old.join("points.csv"),
        format!(
            "{header}\n{}\n{}\n{}\n",
            row(
                "failed",
                "FATAL: mysql_stmt_execute() returned error 1062 (Duplicate entry) for query"
            ),
            row("failed", "no event completed in the window"),
            row("ok", ""),
        ),
    )
    .unwrap();
    let codes: Vec<Option<u16>> = load_points(&old)
        .unwrap()
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, [Some(1062), None, None]);
}

#[test]
fn a_points_kind_comes_from_its_sla_step_column_or_an_older_files_id() {
    let rec = |id: &str, rate: u64| PointRecord {
        point_id: id.into(),
        rate,
        ..PointRecord::default()
    };
    assert_eq!(rec("a/default/w/t4/r1", 0).kind(), PointKind::ClosedLoop);
    assert_eq!(
        rec("a/default/w/t4/r1", 500).kind(),
        PointKind::Paced { rate: 500 }
    );
    let step = rec("a/default/w/rate1200/t4/r1", 1200);
    assert_eq!(step.kind(), PointKind::SlaStep { rate: 1200 });
    assert!(step.is_sla_step() && !rec("a/default/w/t4/r1", 500).is_sla_step());
    // Where the record says it (files with the sla_step column), the id is not read.
    let said = |id: &str, rate: u64, sla_step| PointRecord {
        sla_step: Some(sla_step),
        ..rec(id, rate)
    };
    assert_eq!(
        said("a/default/w/t4/r1", 900, true).kind(),
        PointKind::SlaStep { rate: 900 }
    );
    assert_eq!(
        said("a/default/w/rate1200/t4/r1", 1200, false).kind(),
        PointKind::Paced { rate: 1200 }
    );
}

/// Points are appended as they end: a crash while a row was written leaves it torn, and the
/// run reads as the points before it; rows appended after a reopened run follow whole ones.
#[test]
fn a_torn_last_row_is_the_point_in_progress_and_is_dropped() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let rec = |i: u32| PointRecord {
        point_id: format!("a/default/w/t{i}/r1"),
        status: PointStatus::Ok,
        ..PointRecord::default()
    };
    dir.append_point(&rec(1)).unwrap();
    dir.append_point(&rec(2)).unwrap();
    let path = dir.path.join("points.csv");
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(
        whole.iter().filter(|&&b| b == b'\n').count(),
        3,
        "header + 2 rows"
    );
    assert_eq!(load_points(&dir.path).unwrap().len(), 2);
    // The second row cut in the middle, as a crash leaves it.
    let cut = whole.len() - 10;
    std::fs::write(&path, &whole[..cut]).unwrap();
    let read = load_points(&dir.path).unwrap();
    assert_eq!(
        read.iter().map(|p| p.point_id.as_str()).collect::<Vec<_>>(),
        ["a/default/w/t1/r1"]
    );
}

#[test]
fn a_full_disk_while_appending_a_point_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create_at(&d.path().join("run"), "name = \"x\"\n").unwrap();
    let path = dir.path.join("points.csv");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let e = format!(
        "{:#}",
        dir.append_point(&PointRecord::default()).unwrap_err()
    );
    assert!(e.contains("no space left on the disk of"), "{e}");
    assert!(
        dir.points().is_empty(),
        "a point not written is not kept as written"
    );
}
