//! `sweepbench sandbox`: a throwaway server around one command, gone afterwards.

mod common;
use common::text;
use std::time::Duration;

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

/// A sandbox killed with SIGKILL takes its command with it, and the next start removes the
/// server directory it left.
#[test]
fn a_killed_sandbox_leaves_neither_its_command_nor_its_server_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = "31717";
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", tmp.path())
        .args(["sandbox", "--", "sleep", marker])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleeping = || {
        let out = std::process::Command::new("pgrep")
            .args(["-f", &format!("^sleep {marker}$")])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    common::wait_for("the command to start", Duration::from_secs(120), sleeping);
    child.kill().unwrap();
    child.wait().unwrap();
    common::wait_for(
        "the command to die with its sandbox",
        Duration::from_secs(10),
        || !sleeping(),
    );
    let left = || std::fs::read_dir(tmp.path()).unwrap().flatten().count();
    assert_eq!(
        left(),
        1,
        "the killed sandbox's server directory is still there"
    );
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .env("TMPDIR", tmp.path())
        .args(["sandbox", "--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("left by a sweepbench that was killed"),
        "{}",
        text(&out)
    );
    assert_eq!(left(), 0);
}
