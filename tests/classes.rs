//! Instance classes (#46): a managed server held to a CPU quota and a memory limit by the
//! kernel's cgroups. Its CPU use, read from /proc while it is loaded, never exceeds the quota;
//! the class gives the buffer pool its default; a class the host cannot hold, or cgroups this
//! user may not make, are refused by `check` before anything starts.

mod common;
use common::sweeps::*;
use common::*;
use std::time::Instant;
use sweepbench::pipeline::server::class::Class;
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Two connections spinning the CPU for a few seconds use what the quota allows and no more:
/// 0.3 of a CPU, measured from the server's own /proc figures; the kernel says it throttled
/// the group, and its memory limit is the class's.
#[test]
fn a_classed_servers_cpu_never_exceeds_its_quota() {
    let class = Class {
        cpus: 0.3,
        memory: 1 << 30,
    };
    let server = ManagedServer::start(&ServerSpec {
        class: Some(class),
        options: vec!["--innodb-buffer-pool-size=128M".into()],
        ..ServerSpec::default()
    })
    .expect("a server in a class starts");
    let g = server.cgroup().expect("its cgroup");
    let limits: String = g
        .dirs()
        .iter()
        .filter_map(|d| std::fs::read_to_string(d.join("memory.limit_in_bytes")).ok())
        .collect();
    assert_eq!(limits.trim(), (1u64 << 30).to_string());
    let pid = server.pid().unwrap().to_string();
    let joined = g
        .dirs()
        .iter()
        .all(|d| read(&d.join("cgroup.procs")).lines().any(|l| l == pid));
    assert!(joined, "the server is in every controller's group");

    let before = server.cpu_seconds().unwrap();
    let began = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            // Under a second of one CPU each, unthrottled, on this machine: seconds in the
            // class. The window ends when both end, so it is all load.
            s.spawn(|| exec_root(&server, &["SELECT BENCHMARK(1000000, MD5('spin'))"]).unwrap());
        }
    });
    let used = server.cpu_seconds().unwrap() - before;
    let elapsed = began.elapsed().as_secs_f64();
    let share = used / elapsed;
    // The quota is enforced per 100 ms period: over seconds the share is at most 0.3 plus
    // the last period's slack and /proc's tick rounding.
    assert!(
        share <= 0.3 * 1.1 + 0.03,
        "{used:.2} s of CPU in {elapsed:.2} s = {share:.2} CPUs, above the class's 0.3"
    );
    assert!(share > 0.1, "the load ran: {share:.2} CPUs");
    let (count, secs) = g.throttled().expect("cpu.stat");
    assert!(count > 0 && secs > 0.0, "throttled {count} times, {secs} s");
    let dirs: Vec<_> = g.dirs().to_vec();
    drop(server);
    assert!(
        dirs.iter().all(|d| !d.exists()),
        "the groups are removed with the server: {dirs:?}"
    );
}

/// A sweep on a classed target beside one on the whole host: `check` names the class, the
/// buffer pool defaults to half its memory, the manifest and servers/*/class.txt record it,
/// the server's CPU per point stays under its quota, and the report says the classes differ.
#[test]
fn a_sweep_runs_a_target_in_its_class() {
    let dir = tempfile::tempdir().unwrap();
    let body = "name = \"classed\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [4]\nduration = \"3s\"\nwarmup = \"1s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"small\"\nserver = { class = { cpus = 0.5, memory = \"1G\" } }\n[[targets]]\nname = \"whole\"\nserver = {}\n";
    let f = sweep_file(dir.path(), "classed", body);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("class 0.5 CPUs, 1 GiB: the server runs in a cgroup")
            && text(&out).contains("buffer pool 512 MiB"),
        "{}",
        text(&out)
    );
    let results = dir.path().join("results");
    let out = run_in(dir.path(), &f, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let run = results.join("classed/latest");
    let vars = read(&run.join("servers/small__default/variables.tsv"));
    assert!(
        vars.lines()
            .any(|l| l == format!("innodb_buffer_pool_size\t{}", 512u64 << 20)),
        "{vars}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&run.join("manifest.json"))).unwrap();
    assert_eq!(manifest["targets"][0]["server"]["class"]["cpus"], 0.5);
    assert_eq!(manifest["targets"][0]["server"]["class"]["memory"], "1G");
    let rows: Vec<sweepbench::pipeline::results::PointRecord> =
        csv::Reader::from_path(run.join("points.csv"))
            .unwrap()
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
    assert_eq!(rows.len(), 2);
    let r = rows.iter().find(|r| r.target == "small").unwrap();
    // Over the measured window, not its warmup too (which would read 0.5 × 4/3 = 0.67).
    let cpus = r.server_cpu_s.unwrap() / r.duration_s;
    assert!(
        cpus <= 0.55,
        "the server used {cpus:.2} CPUs in a 0.5-CPU class: {r:?}"
    );
    assert!(r.tps > 0.0);
    // The class is recorded per series and said first: a change between the two is the
    // class's before it is the server's.
    assert_eq!(
        read(&run.join("servers/small__default/class.txt")).trim(),
        "0.5 CPUs, 1 GiB"
    );
    assert!(!run.join("servers/whole__default/class.txt").exists());
    let md = read(&run.join("report.md"));
    assert!(
        md.contains("The servers' instance classes differ — 0.5 CPUs, 1 GiB on small/default; the whole host on whole/default"),
        "{md}"
    );
}

/// What cannot be given is refused before anything starts, saying why and what to do: more
/// CPUs than the host has; cgroups this user may not make (as an unprivileged user, when the
/// tests run as root); a class's values that make no sense, at the file's line.
#[test]
fn a_class_the_host_cannot_give_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, class: &str| {
        sweep_file(
            dir.path(),
            name,
            &format!("name = \"{name}\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"c\"\nserver = {{ class = {class} }}\n"),
        )
    };
    let big = file("big", "{ cpus = 4096, memory = \"1G\" }");
    let out = sweepbench(&["check", big.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("server.class asks for 4096 CPUs, and this host has"),
        "{}",
        text(&out)
    );
    let bad = file("bad", "{ cpus = 1, memory = \"lots\" }");
    let out = sweepbench(&["plan", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("bad.toml:7:") && text(&out).contains("server.class.memory = \"lots\""),
        "{}",
        text(&out)
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        let ok = file("ok", "{ cpus = 1, memory = \"1G\" }");
        // An unprivileged user must be able to read the file and run the binary.
        let open = tempfile::Builder::new()
            .prefix("classes-")
            .tempdir_in("/tmp")
            .unwrap();
        let copy = open.path().join("ok.toml");
        std::fs::copy(&ok, &copy).unwrap();
        // The binary too: the checkout's parents may be private (a clone under a 0700 home
        // or a `mktemp -d`), which that user cannot pass through.
        let exe = open.path().join("sweepbench");
        std::fs::copy(assert_cmd::cargo::cargo_bin("sweepbench"), &exe).unwrap();
        std::process::Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(open.path())
            .status()
            .unwrap();
        let out = std::process::Command::new(&exe)
            .args(["check", copy.to_str().unwrap()])
            .env("HOME", open.path())
            .current_dir(open.path())
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains("cannot make a cgroup")
                && text(&out).contains("run sweepbench as root"),
            "{}",
            text(&out)
        );
    }
}
