//! `sweepbench k8s render` against the Kubernetes schema: kubernetes-validate --strict (from
//! PyPI; .ci/run installs it) accepts the manifests of a two-client point and of a 20-part
//! sharded sweep, and refuses a manifest with a field Kubernetes does not know; and the pods'
//! side, agents taking their task by index and their start from a file, run as processes.
#![cfg(feature = "k8s")]

mod common;
use common::text;
use std::path::Path;
use std::process::Command;

fn validate(file: &Path) -> std::process::Output {
    Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(file)
        .output()
        .expect("kubernetes-validate is needed by this test: pip install kubernetes-validate (.ci/run does)")
}

fn render(sweep: &Path, extra: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["k8s", "render", sweep.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn rendered_manifests_pass_the_kubernetes_schema_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("two.toml");
    std::fs::write(
        &sweep,
        "name = \"two\"\n[data]\ntables = 2\ntable_size = 5000\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [8]\nclients = 2\nduration = \"10s\"\nrepeats = 1\n[[targets]]\nname = \"local\"\nserver = {}\n",
    )
    .unwrap();
    let yaml = render(&sweep, &[]);
    assert_eq!(yaml.matches("\nkind: Job\n").count(), 1, "{yaml}");
    assert!(
        yaml.contains("completionMode: Indexed\n  completions: 2\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("# note: target 'local' is a managed server"),
        "{yaml}"
    );
    let f = dir.path().join("two.yaml");
    std::fs::write(&f, &yaml).unwrap();
    let out = validate(&f);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("passed for resource job/")
            && said.contains("passed for resource configmap/"),
        "{said}"
    );

    let shards = render(&sweep, &["--shards", "20"]);
    assert!(shards.contains("completions: 20\n"), "{shards}");
    let f = dir.path().join("shards.yaml");
    std::fs::write(&f, &shards).unwrap();
    let out = validate(&f);
    assert!(out.status.success(), "{}", text(&out));

    // The validator is strict: a field Kubernetes does not know fails it.
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        yaml.replace("  backoffLimit: 0\n", "  backoffLimit: 0\n  retries: 3\n"),
    )
    .unwrap();
    assert!(!validate(&f).status.success());
}

/// The pod's side of a Job, run here as processes: each agent takes its task from the tasks
/// file by its index (`--index`, or `$JOB_COMPLETION_INDEX` as Kubernetes sets it), says it
/// is ready, waits for the start instant to appear in the start file (as the controller
/// writes it into the mounted ConfigMap), runs, and ends with its figures.
#[test]
fn agents_run_from_a_tasks_file_and_start_when_the_start_file_says() {
    use std::io::BufRead;
    use sweepbench::pipeline::distributed::clients::{Msg, Task};
    let conn = common::fresh_db("agentpod");
    common::bench_ok(
        "oltp_point_select prepare --tables=1 --table-size=1000",
        &conn,
    );
    let port = common::server().port();
    let text = format!("name = \"pod\"\n[data]\ntables = 1\ntable_size = 1000\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [4]\nclients = 2\nduration = \"2s\"\nwarmup = \"0s\"\nrepeats = 1\n[[targets]]\nname = \"db\"\nurl = \"mysql://root@127.0.0.1:{port}/agentpod\"\n");
    let spec = sweepbench::pipeline::spec::SweepSpec::parse(Path::new("pod.toml"), &text).unwrap();
    let plan = sweepbench::pipeline::plan::Plan::build(&spec, &[]);
    let sweepbench::pipeline::spec::target::TargetKind::External(c) = &spec.targets[0].kind else {
        panic!("external target")
    };
    let tasks: Vec<Task> = (0..2)
        .map(|i| Task::new(&spec, &plan.points[0], c, i).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (tasks_file, start) = (dir.path().join("tasks.json"), dir.path().join("start"));
    std::fs::write(&tasks_file, serde_json::to_string(&tasks).unwrap()).unwrap();
    std::fs::write(&start, "").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut children = Vec::new();
    for i in 0..2u32 {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
        cmd.args(["agent", "--tasks"])
            .arg(&tasks_file)
            .arg("--start-file")
            .arg(&start);
        if i == 0 {
            cmd.args(["--index", "0"]);
        } else {
            cmd.env("JOB_COMPLETION_INDEX", "1");
        }
        let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send((i, serde_json::from_str::<Msg>(&line).unwrap()));
            }
        });
        children.push(child);
    }
    let limit = std::time::Duration::from_secs(60);
    let mut ready = 0;
    while ready < 2 {
        match rx.recv_timeout(limit).unwrap() {
            (_, Msg::Ready { threads, .. }) => {
                assert_eq!(threads, 2);
                ready += 1
            }
            (i, m) => panic!("client {i} before the start: {m:?}"),
        }
    }
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        + 500_000_000;
    std::fs::write(&start, at.to_string()).unwrap();
    let (mut ends, mut seconds) = (Vec::new(), [0u32; 2]);
    while ends.len() < 2 {
        match rx.recv_timeout(limit).unwrap() {
            (
                _,
                Msg::Started {
                    late_ms,
                    at_unix_ns,
                    ..
                },
            ) => {
                assert!(at_unix_ns >= at, "started before the instant");
                assert!(
                    late_ms < sweepbench::pipeline::distributed::clients::LATE_LIMIT_MS,
                    "{late_ms}"
                );
            }
            (i, Msg::Interval { .. }) => seconds[i as usize] += 1,
            (i, Msg::End(e)) => ends.push((i, e)),
            (i, m) => panic!("client {i}: {m:?}"),
        }
    }
    for c in &mut children {
        assert!(c.wait().unwrap().success());
    }
    assert!(seconds.iter().all(|&n| n >= 1), "{seconds:?}");
    for (i, e) in ends {
        assert!(
            e.totals.events > 0 && e.fatal.is_none(),
            "client {i}: {e:?}"
        );
        assert_eq!(e.per_thread.len(), 2);
    }
}

/// Hostile tasks and start files (#22 N8): out-of-range values are refused before anything
/// connects, a start file holding no number is an error at once, a start instant beyond the
/// wait is refused, and SIGTERM ends an agent waiting for its start.
#[test]
fn an_agent_refuses_hostile_tasks_and_answers_sigterm_while_it_waits() {
    use sweepbench::pipeline::distributed::clients::Task;
    let conn = common::fresh_db("agenthostile");
    common::bench_ok(
        "oltp_point_select prepare --tables=1 --table-size=100",
        &conn,
    );
    let port = common::server().port();
    let text = format!("name = \"hostile\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nclients = 2\nduration = \"2s\"\nwarmup = \"0s\"\nrepeats = 1\n[[targets]]\nname = \"db\"\nurl = \"mysql://root@127.0.0.1:{port}/agenthostile\"\n");
    let spec = sweepbench::pipeline::spec::SweepSpec::parse(Path::new("h.toml"), &text).unwrap();
    let plan = sweepbench::pipeline::plan::Plan::build(&spec, &[]);
    let sweepbench::pipeline::spec::target::TargetKind::External(c) = &spec.targets[0].kind else {
        panic!("external target")
    };
    let good = Task::new(&spec, &plan.points[0], c, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agent = |task: &Task, start: &str| {
        let tasks = dir.path().join("tasks.json");
        let start_file = dir.path().join("start");
        std::fs::write(&tasks, serde_json::to_string(&[task]).unwrap()).unwrap();
        std::fs::write(&start_file, start).unwrap();
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("sweepbench"));
        cmd.args(["agent", "--index", "0", "--tasks"])
            .arg(&tasks)
            .arg("--start-file")
            .arg(&start_file);
        cmd
    };
    let text_of = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    for (what, t) in [
        (
            "tables = 0",
            Task {
                tables: 0,
                ..good.clone()
            },
        ),
        (
            "tables = 4294967295: expected 1 to 100000",
            Task {
                tables: u32::MAX,
                ..good.clone()
            },
        ),
        (
            "threads = 0",
            Task {
                threads: 0,
                ..good.clone()
            },
        ),
        (
            "duration_s = ",
            Task {
                duration_s: u64::MAX,
                ..good.clone()
            },
        ),
        (
            "client 5 of 2",
            Task {
                client: 5,
                ..good.clone()
            },
        ),
    ] {
        let o = agent(&t, "").output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{what}: {}", text_of(&o));
        assert!(text_of(&o).contains(what), "{what}: {}", text_of(&o));
        assert!(!text_of(&o).contains("panicked"), "{}", text_of(&o));
    }
    let o = agent(&good, "-5").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text_of(&o));
    assert!(
        text_of(&o).contains("'-5' is not a start instant"),
        "{}",
        text_of(&o)
    );
    let o = agent(&good, &u64::MAX.to_string()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text_of(&o));
    assert!(
        text_of(&o).contains("more than the 900 s a client waits"),
        "{}",
        text_of(&o)
    );
    // Waiting for a start that has not been written: SIGTERM ends it, status 130.
    let mut child = agent(&good, "")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert!(line.contains("ready"), "{line}");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut status = None;
    common::wait_for(
        "the agent to end on SIGTERM",
        std::time::Duration::from_secs(60),
        || {
            status = child.try_wait().unwrap();
            status.is_some()
        },
    );
    assert_eq!(status.unwrap().code(), Some(130));
}
