//! A target that names several endpoints (`url = "mysql://u@h:p1,h:p2,h:p3/db"`, #51): its
//! connections spread round-robin over them as sysbench spreads its host and port lists, and
//! its preflight checks each endpoint, naming the one that fails. Three throwaway servers
//! stand in for a cluster's nodes (each prepared apart: they do not replicate).

mod common;
use common::sweeps::*;
use common::*;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

fn com_select(s: &ManagedServer) -> u64 {
    query_col_on(s, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_SELECT'")[0]
        .parse()
        .unwrap()
}

#[test]
fn a_three_endpoint_target_spreads_its_connections_evenly() {
    let nodes: Vec<ManagedServer> = (0..3)
        .map(|_| ManagedServer::start(&ServerSpec::default()).expect("throwaway server"))
        .collect();
    for s in &nodes {
        exec_root(s, &["CREATE DATABASE spread"]).unwrap();
        let out = bench(&args(
            "oltp_point_select prepare --tables=1 --table-size=200",
            &conn_args(s, "spread"),
        ));
        assert!(out.status.success(), "{}", text(&out));
    }
    let list: Vec<String> = nodes
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port()))
        .collect();
    let body = format!(
        "name = \"spread\"\n[data]\ntables = 1\ntable_size = 200\nprepare = \"never\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [6]\nduration = \"2s\"\nwarmup = \"0s\"\nrepeats = 1\n[[targets]]\nname = \"cluster\"\nurl = \"mysql://root@{}/spread\"\n",
        list.join(",")
    );
    let dir = tempfile::tempdir().unwrap();
    let f = sweep_file(dir.path(), "spread", &body);
    let before: Vec<u64> = nodes.iter().map(com_select).collect();
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let done: Vec<u64> = nodes
        .iter()
        .zip(&before)
        .map(|(s, b)| com_select(s) - b)
        .collect();
    let total: u64 = done.iter().sum();
    assert!(total > 300, "{done:?}");
    // Two of the six workers per node: each node answered about a third of the reads.
    for (i, d) in done.iter().enumerate() {
        let share = *d as f64 / total as f64;
        assert!(
            (0.2..0.47).contains(&share),
            "node {i} answered {share:.2} of the reads: {done:?}"
        );
    }
    // The stored sweep and the manifest name every endpoint.
    let run = std::fs::read_dir(dir.path().join("results/spread"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .unwrap();
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains(&list.join(",")), "{manifest}");

    // One node down: refused before anything runs, the node named.
    let down = format!("{},127.0.0.1:{}", list[..2].join(","), free_port());
    let f = sweep_file(dir.path(), "spread", &body.replace(&list.join(","), &down));
    let out = run_sweep(&f, &dir.path().join("results"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("[FAIL] cluster connect: node 127.0.0.1:"),
        "{said}"
    );
}

/// A port nothing listens on.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
