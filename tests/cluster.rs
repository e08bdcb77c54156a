//! A managed Galera cluster (`server = { cluster = { nodes = 3 } }`, #51): three nodes of this
//! machine's MariaDB and galera-4 on loopback, bootstrapped from data prepared on a single
//! server and joined by rsync state transfer; the workload spread over the nodes, every
//! node's counters kept; a cluster the host cannot hold refused before anything starts.

mod common;
use common::sweeps::*;
use common::text;

/// A status.csv row's delta for `counter` at the point whose id starts with `point`.
fn delta(status: &str, point: &str, counter: &str) -> Option<u64> {
    status
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f.first().is_some_and(|p| p.starts_with(point)) && f.get(2) == Some(&counter))
        .and_then(|f| f.get(3)?.parse().ok())
}

#[test]
fn a_managed_cluster_of_three_runs_on_every_node_and_keeps_each_nodes_counters() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"galera\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_read_write\", \"oltp_point_select\"]\nthreads = [3]\nduration = \"2s\"\nwarmup = \"0s\"\nrepeats = 1\n[[configs]]\nname = \"default\"\nvars = { innodb_buffer_pool_size = \"64M\" }\n[[targets]]\nname = \"cluster\"\nserver = { cluster = { nodes = 3 } }\n";
    let f = sweep_file(dir.path(), "galera", body);
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("starting a Galera cluster of 3 nodes for cluster/default"),
        "{said}"
    );
    let run = std::fs::read_dir(dir.path().join("results/galera"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("status.csv").is_file())
        .expect("a run with status.csv");
    let status = std::fs::read_to_string(run.join("status.csv")).unwrap();
    // Every node took writes (three connections, one per node) and replicated them: each
    // node's own wsrep counter moved, and the unprefixed one is their sum.
    let rw = "cluster/default/oltp_read_write";
    let per_node: Vec<u64> = (1..=3)
        .map(|i| {
            delta(&status, rw, &format!("node{i}/wsrep_replicated_bytes"))
                .unwrap_or_else(|| panic!("no node{i}/wsrep_replicated_bytes:\n{status}"))
        })
        .collect();
    assert!(per_node.iter().all(|d| *d > 0), "{per_node:?}");
    assert_eq!(
        delta(&status, rw, "wsrep_replicated_bytes"),
        Some(per_node.iter().sum()),
        "{per_node:?}"
    );
    for i in 1..=3 {
        for c in ["wsrep_local_cert_failures", "wsrep_flow_control_paused_ns"] {
            assert!(
                delta(&status, rw, &format!("node{i}/{c}")).is_some(),
                "no node{i}/{c}:\n{status}"
            );
        }
    }
    // The data was prepared before the cluster formed: ids 1..500, so every point select
    // finds its row (Galera's own auto_increment_increment would have left 1, 4, 7, …).
    let ps = "cluster/default/oltp_point_select";
    let keys = delta(&status, ps, "Handler_read_key").expect("Handler_read_key");
    let rows = delta(&status, ps, "Rows_sent").unwrap_or_else(|| panic!("no Rows_sent:\n{status}"));
    assert!(keys > 100, "{keys}");
    assert!(
        rows as f64 >= 0.98 * keys as f64,
        "{rows} rows sent for {keys} key lookups: ids are missing"
    );
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"nodes\": 3"), "{manifest}");
}

#[test]
fn a_cluster_the_host_cannot_hold_or_of_one_node_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let big = "name = \"big\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[configs]]\nname = \"default\"\nvars = { innodb_buffer_pool_size = \"64G\" }\n[[targets]]\nname = \"c\"\nserver = { cluster = { nodes = 3 } }\n";
    let f = sweep_file(dir.path(), "big", big);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("[FAIL] c cluster: a cluster of 3 nodes needs about"),
        "{said}"
    );
    assert!(said.contains("give fewer nodes"), "{said}");
    let one = big.replace("nodes = 3", "nodes = 1").replace("64G", "64M");
    let f = sweep_file(dir.path(), "one", &one);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("server.cluster.nodes = 1: a cluster has 2 to 9 nodes"),
        "{said}"
    );
}
