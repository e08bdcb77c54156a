//! status.csv: what each point (or slice) cost the server — its status counters' deltas over
//! the measured window (SHOW GLOBAL STATUS) and, for a managed server, its process's
//! (/proc) — one row per point and counter, kept by name so a counter can be added without
//! a format change, and appended as points end.

use anyhow::Context;
use std::path::Path;

/// The status counters that explain an OLTP transaction's cost: what the buffer pool, the
/// data files and the redo log did, the rows and handler calls, temporary tables, scans and
/// sorts, lock waits, threads and bytes on the wire. A counter a server lacks (an older
/// version, MySQL's names) is simply absent from its rows.
pub const STATUS_COUNTERS: &[&str] = &[
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_write_requests",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_waits",
    "Innodb_log_writes",
    "Innodb_log_write_requests",
    "Rows_read",
    "Rows_sent",
    "Rows_tmp_read",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_rnd_next",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Binlog_bytes_written",
    "Binlog_group_commits",
    "Created_tmp_tables",
    "Created_tmp_disk_tables",
    "Select_scan",
    "Select_full_join",
    "Sort_merge_passes",
    "Sort_rows",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Threads_created",
    "Bytes_sent",
    "Bytes_received",
    // MyRocks: its rows, block cache, write-ahead log and lock conflicts (what InnoDB's
    // counters say of InnoDB; they read 0 for RocksDB tables).
    "Rocksdb_rows_read",
    "Rocksdb_rows_inserted",
    "Rocksdb_rows_updated",
    "Rocksdb_rows_deleted",
    "Rocksdb_block_cache_hit",
    "Rocksdb_block_cache_miss",
    "Rocksdb_bytes_read",
    "Rocksdb_bytes_written",
    "Rocksdb_wal_bytes",
    "Rocksdb_wal_synced",
    "Rocksdb_row_lock_deadlocks",
    "Rocksdb_row_lock_wait_timeouts",
    // Galera: certification conflicts, brute-force aborts and flow control (cumulative
    // counters only: a queue's length is a gauge, not a cost).
    "wsrep_local_cert_failures",
    "wsrep_local_bf_aborts",
    "wsrep_flow_control_paused_ns",
    "wsrep_flow_control_sent",
    "wsrep_flow_control_recv",
    "wsrep_replicated_bytes",
];

/// One reading of a server's counters: (source, name, value); source is "status" or "proc".
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub values: Vec<(&'static str, String, u64)>,
    /// The rows this reading's SHOW GLOBAL STATUS returned, where its own cost is known
    /// (MariaDB: it counts itself in the next window; see `rows`).
    pub reading_rows: Option<u64>,
    /// A target of several endpoints: each node's name and the rows its reading returned;
    /// its own counters ("node2/Rows_sent") and the sums over the nodes carry every
    /// node's reading.
    pub node_rows: Vec<(String, u64)>,
}

/// What one MariaDB `SHOW GLOBAL STATUS` of `r` rows adds to the counters of the window
/// that follows it (measured on 10.11: it materialises the status in a temporary table,
/// scans it and sends its rows), taken off each window's deltas so that a window of fewer
/// transactions does not read as more scans per transaction.
fn own_cost(counter: &str, r: u64) -> u64 {
    match counter {
        "Created_tmp_tables" | "Select_scan" => 1,
        "Rows_sent" | "Rows_tmp_read" => r,
        "Handler_read_rnd_next" => r + 1,
        _ => 0,
    }
}

impl Sample {
    /// From SHOW GLOBAL STATUS rows (name, value): the chosen counters that parse.
    pub fn from_status<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str)>) -> Sample {
        let mut s = Sample::default();
        for (name, value) in rows {
            let known = STATUS_COUNTERS.iter().any(|c| c.eq_ignore_ascii_case(name));
            if let (true, Ok(v)) = (known, value.trim().parse::<u64>()) {
                s.values.push(("status", name.to_string(), v));
            }
        }
        s
    }

    pub fn add_proc(&mut self, proc: &[(&'static str, u64)]) {
        for (name, v) in proc {
            self.values.push(("proc", name.to_string(), *v));
        }
    }

    /// What this sample's own reading(s) added to status counter `name` in the window
    /// after it: one reading of `r` rows, or for a target of several endpoints the reading
    /// of the node a prefixed counter is of, or every node's for a sum over them.
    fn own_cost(&self, name: &str, r: u64) -> u64 {
        if self.node_rows.is_empty() {
            return own_cost(name, r);
        }
        match name.split_once('/') {
            Some((node, base)) => self
                .node_rows
                .iter()
                .find(|(n, _)| n == node)
                .map_or(0, |(_, r)| own_cost(base, *r)),
            None => self.node_rows.iter().map(|(_, r)| own_cost(name, *r)).sum(),
        }
    }

    fn get(&self, source: &str, name: &str) -> Option<u64> {
        self.values
            .iter()
            .find(|(s, n, _)| *s == source && n == name)
            .map(|(_, _, v)| *v)
    }
}

/// One row of status.csv.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CostRow {
    pub point_id: String,
    /// "status" (SHOW GLOBAL STATUS) or "proc" (the server process, /proc).
    pub source: String,
    pub counter: String,
    /// The counter's change over the measured window.
    pub delta: u64,
    /// Per transaction and per query of the point; empty when it had none.
    pub per_txn: Option<f64>,
    pub per_query: Option<f64>,
}

/// The rows of one point from its samples before and after the measured window: a counter
/// read in both (and not reset between them, which a restarted server does) gives its delta.
/// (Levels such as Threads_running are not kept: read after the window they say nothing of
/// it.)
pub fn rows(
    point_id: &str,
    before: &Sample,
    after: &Sample,
    transactions: u64,
    queries: u64,
) -> Vec<CostRow> {
    let per = |d: u64, n: u64| (n > 0).then(|| d as f64 / n as f64);
    let mut out = Vec::new();
    for (source, name, v1) in &after.values {
        let delta = match before.get(source, name) {
            Some(v0) if v0 <= *v1 => v1 - v0,
            _ => continue,
        };
        let delta = match (before.reading_rows, *source) {
            (Some(r), "status") => delta.saturating_sub(before.own_cost(name, r)),
            _ => delta,
        };
        out.push(CostRow {
            point_id: point_id.to_string(),
            source: source.to_string(),
            counter: name.clone(),
            delta,
            per_txn: per(delta, transactions),
            per_query: per(delta, queries),
        });
    }
    out
}

/// Appends rows to `run/status.csv` (its header written when the file is new).
pub fn append(run: &Path, rows: &[CostRow]) -> anyhow::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let path = run.join("status.csv");
    let new = !path.exists();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut w = csv::WriterBuilder::new()
        .has_headers(new)
        .from_writer(std::io::BufWriter::new(file));
    for r in rows {
        w.serialize(r)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// status.csv of a run directory (empty when it has none: an older run, a synthetic target).
pub fn load(run: &Path) -> anyhow::Result<Vec<CostRow>> {
    let path = run.join("status.csv");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let bytes = super::whole_lines(&path)?;
    let mut r = csv::Reader::from_reader(&bytes[..]);
    let mut out = Vec::new();
    for (i, row) in r.deserialize().enumerate() {
        out.push(row.with_context(|| format!("{} line {}", path.display(), i + 2))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mariadb_readings_own_scan_and_rows_are_taken_off() {
        let mut before = status(&[
            ("Select_scan", 10),
            ("Rows_sent", 1000),
            ("Handler_read_rnd_next", 5000),
            ("Innodb_rows_read", 7),
        ]);
        let after = status(&[
            ("Select_scan", 11),
            ("Rows_sent", 1600),
            ("Handler_read_rnd_next", 5601),
            ("Innodb_rows_read", 9),
        ]);
        before.reading_rows = Some(560);
        let r = rows("p", &before, &after, 10, 10);
        let d: Vec<(&str, u64)> = r.iter().map(|r| (r.counter.as_str(), r.delta)).collect();
        assert_eq!(
            d,
            [
                ("Select_scan", 0),
                ("Rows_sent", 40),
                ("Handler_read_rnd_next", 40),
                ("Innodb_rows_read", 2)
            ]
        );
        // Where the reading's cost is not known (MySQL), the deltas stay as read.
        before.reading_rows = None;
        assert_eq!(rows("p", &before, &after, 10, 10)[0].delta, 1);
    }

    #[test]
    fn each_nodes_reading_is_taken_off_its_own_counters_and_off_the_sums() {
        // Two nodes; their readings returned 500 rows (node1) and 300 rows (node2).
        let raw = |pairs: &[(&str, u64)]| Sample {
            values: pairs
                .iter()
                .map(|(n, v)| ("status", n.to_string(), *v))
                .collect(),
            ..Default::default()
        };
        let mut before = raw(&[
            ("Rows_sent", 2000),
            ("node1/Rows_sent", 1200),
            ("node2/Rows_sent", 800),
            ("Select_scan", 20),
        ]);
        let after = raw(&[
            ("Rows_sent", 2900),
            ("node1/Rows_sent", 1750),
            ("node2/Rows_sent", 1150),
            ("Select_scan", 22),
        ]);
        before.reading_rows = Some(500);
        before.node_rows = vec![("node1".into(), 500), ("node2".into(), 300)];
        let r = rows("p", &before, &after, 10, 10);
        let d: Vec<(&str, u64)> = r.iter().map(|r| (r.counter.as_str(), r.delta)).collect();
        assert_eq!(
            d,
            [
                ("Rows_sent", 100),
                ("node1/Rows_sent", 50),
                ("node2/Rows_sent", 50),
                ("Select_scan", 0)
            ]
        );
    }

    fn status(pairs: &[(&str, u64)]) -> Sample {
        let text: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        Sample::from_status(text.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    }

    #[test]
    fn deltas_are_per_transaction_and_query_and_a_missing_counter_is_absent() {
        let before = status(&[
            ("Innodb_rows_read", 1000),
            ("Innodb_data_fsyncs", 7),
            ("Uptime", 5),
        ]);
        // Innodb_data_fsyncs is missing after (a server without it): no row, no error.
        let mut after = status(&[
            ("Innodb_rows_read", 3000),
            ("Uptime", 9),
            ("Created_tmp_tables", 4),
        ]);
        after.add_proc(&[("cpu_us", 500)]);
        let r = rows("p", &before, &after, 100, 400);
        let names: Vec<&str> = r.iter().map(|r| r.counter.as_str()).collect();
        // Uptime is not chosen; Created_tmp_tables and cpu_us have no reading before.
        assert_eq!(names, ["Innodb_rows_read"]);
        assert_eq!(r[0].delta, 2000);
        assert_eq!(r[0].per_txn, Some(20.0));
        assert_eq!(r[0].per_query, Some(5.0));
    }

    #[test]
    fn a_counter_that_went_down_was_reset_and_is_left_out() {
        let r = rows(
            "p",
            &status(&[("Innodb_rows_read", 10)]),
            &status(&[("Innodb_rows_read", 4)]),
            1,
            1,
        );
        assert!(r.is_empty());
    }

    #[test]
    fn rows_round_trip_through_the_file_and_append() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = status(&[("Innodb_rows_read", 1)]);
        b.add_proc(&[("cpu_us", 10)]);
        let mut a = status(&[("Innodb_rows_read", 11)]);
        a.add_proc(&[("cpu_us", 30)]);
        append(dir.path(), &rows("x/1", &b, &a, 0, 5)).unwrap();
        append(dir.path(), &rows("x/2", &b, &a, 2, 5)).unwrap();
        let back = load(dir.path()).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(
            back[0].per_txn, None,
            "no transaction: no per-transaction figure"
        );
        assert_eq!(back[3].point_id, "x/2");
        assert_eq!(back[3].source, "proc");
        assert_eq!(back[3].per_txn, Some(10.0));
        let text = std::fs::read_to_string(dir.path().join("status.csv")).unwrap();
        assert_eq!(text.matches("point_id").count(), 1, "one header");
    }
}
