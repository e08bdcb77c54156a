//! `sweepbench sandbox`: a throwaway server around one command, gone afterwards.

mod common;
use common::text;

#[test]
fn sandbox_runs_the_command_against_a_fresh_server_and_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", tmp.path())
        .args([
            "sandbox",
            "--db",
            "sandboxed",
            "--",
            "sh",
            "-c",
            "echo port={port} env=$SWEEPBENCH_PORT; test -S \"$SWEEPBENCH_SOCKET\" && exit 7",
        ])
        .output()
        .unwrap();
    let t = text(&out);
    // The command's own exit code comes back.
    assert_eq!(out.status.code(), Some(7), "{t}");
    let line = t
        .lines()
        .find(|l| l.starts_with("port="))
        .expect("the command ran");
    let (a, b) = line
        .trim_start_matches("port=")
        .split_once(" env=")
        .unwrap();
    assert_eq!(a, b, "{{port}} and SWEEPBENCH_PORT agree");
    assert!(a.parse::<u16>().is_ok(), "{line}");
    assert!(
        t.contains("database 'sandboxed'") && t.contains("server stopped"),
        "{t}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert!(
        left.is_empty(),
        "the server directory was removed: {left:?}"
    );
}

#[test]
fn sandbox_refuses_a_bad_database_name() {
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["sandbox", "--db", "x;drop", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--db must be a plain identifier"));
}
