//! The Kubernetes path as far as this machine allows: the rendered objects, and the executor
//! against a recorded API (the calls it makes, in order, with their bodies), fed agent lines.

use super::*;
use crate::engine::exec::IntervalStats;
use crate::engine::metrics::{percentile_ms, total_hist, Counts};
use crate::pipeline::distributed::clients::{encode_hist, End, Msg};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use std::sync::{Arc, Mutex};

const SWEEP: &str = "name = \"Two_Clients\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [8]\nclients = 2\nduration = \"10s\"\nrepeats = 1\n[executor]\nkind = \"kubernetes\"\nimage = \"reg.example/sweepbench:1\"\nnamespace = \"bench\"\ncpu = \"2\"\npassword_secret = { name = \"db\", key = \"pw\" }\n[[targets]]\nname = \"db\"\nurl = \"mysql://sb:S3cret@db.bench.svc:3306/sbtest\"\n";

fn spec() -> (SweepSpec, Plan) {
    let s = SweepSpec::parse(std::path::Path::new("k.toml"), SWEEP).unwrap();
    let p = Plan::build(&s, &[]);
    (s, p)
}

#[test]
fn a_two_client_point_renders_a_config_map_and_an_indexed_job_of_two() {
    let (s, plan) = spec();
    let yaml = render(&s, &plan, None).unwrap();
    assert!(!yaml.contains("S3cret"), "{yaml}");
    let docs: Vec<&str> = yaml
        .split("---\n")
        .filter(|d| d.contains("kind:"))
        .collect();
    assert_eq!(docs.len(), 2, "{yaml}");
    let cm: ConfigMap = serde_yaml_ng::from_str(docs[0]).unwrap();
    let tasks: Vec<crate::pipeline::distributed::clients::Task> =
        serde_json::from_str(&cm.data.as_ref().unwrap()["tasks.json"]).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!((tasks[0].threads, tasks[1].threads), (4, 4));
    assert_eq!(tasks[1].conn.host, "db.bench.svc");
    let job: Job = serde_yaml_ng::from_str(docs[1]).unwrap();
    let name = job.metadata.name.clone().unwrap();
    assert!(
        name.starts_with("sb-two-clients-") && name.len() <= 63,
        "{name}"
    );
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(
        (spec.completions, spec.parallelism, spec.backoff_limit),
        (Some(2), Some(2), Some(0))
    );
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(
        pod.topology_spread_constraints.unwrap()[0].topology_key,
        "kubernetes.io/hostname"
    );
    let c = &pod.containers[0];
    assert_eq!(c.args.as_ref().unwrap()[0], "agent");
    let env = &c.env.as_ref().unwrap()[0];
    assert_eq!(env.name, "SWEEPBENCH_PASSWORD");
    assert_eq!(
        env.value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap()
            .key,
        "pw"
    );
    assert_eq!(
        c.resources.as_ref().unwrap().limits.as_ref().unwrap()["cpu"].0,
        "2"
    );
    // The shards' Job: N completions, each part its own --shard.
    let yaml = render(&s, &plan, Some(20)).unwrap();
    let job: Job = serde_yaml_ng::from_str(
        yaml.split("---\n")
            .filter(|d| d.contains("kind:"))
            .nth(1)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(job.spec.as_ref().unwrap().completions, Some(20));
    let args = job.spec.unwrap().template.spec.unwrap().containers[0]
        .args
        .clone()
        .unwrap();
    assert!(
        args[0].contains("--shard $((JOB_COMPLETION_INDEX + 1))/20"),
        "{args:?}"
    );
    assert!(
        yaml.contains("# note: no [executor] results_claim"),
        "{yaml}"
    );
}

#[test]
fn names_are_dns_labels() {
    assert_eq!(label("Nightly_Upgrade.10.11", 40), "nightly-upgrade-10-11");
    assert_eq!(label("--x--", 40), "x");
    assert_eq!(label(&"a".repeat(80), 40).len(), 40);
    assert_ne!(short_hash("a/t8/r1"), short_hash("a/t8/r2"));
}

/// What the fake API server was asked: method, path and query, body.
type Calls = Arc<Mutex<Vec<(String, String, String)>>>;

fn agent_log(i: u32, events: &[u64], alive: bool) -> String {
    let mut out = String::new();
    let line = |m: &Msg| serde_json::to_string(m).unwrap() + "\n";
    out += &line(&Msg::Ready {
        client: i,
        threads: 4,
    });
    out += &line(&Msg::Started {
        client: i,
        at_unix_ns: 1_000_000_000 + i as u64 * 1_000_000,
        late_ms: 0.5,
    });
    let mut whole = total_hist();
    for (k, &n) in events.iter().enumerate() {
        let mut h = total_hist();
        for j in 0..n {
            h.record(500_000 + j * 1000 * (i as u64 + 1)).unwrap();
        }
        whole.add(&h).unwrap();
        out += &line(&Msg::Interval {
            stats: IntervalStats {
                t_s: k as f64 + 1.0,
                threads: 4,
                tps: n as f64,
                ..Default::default()
            },
            hist: encode_hist(&h).unwrap(),
        });
    }
    if alive {
        let total: u64 = events.iter().sum();
        out += &line(&Msg::End(Box::new(End {
            elapsed_s: events.len() as f64,
            window_s: events.len() as f64,
            totals: Counts {
                events: total,
                reads: total * 14,
                ..Counts::default()
            },
            hist: encode_hist(&whole).unwrap(),
            min_max_ns: Some((whole.min(), whole.max())),
            per_thread: vec![Counts::default(); 4],
            fatal: None,
            unfinished: None,
            interrupted: false,
            ignored_by_code: Default::default(),
            cpu_s: 0.25,
        })));
    }
    out
}

type Body = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

fn full(s: String) -> Body {
    use http_body_util::BodyExt;
    http_body_util::Full::new(bytes::Bytes::from(s)).boxed()
}

/// A pod's log as the API streams it: the agent's Ready line at once, the rest only once the
/// start instant was written (as a real agent waits for it).
fn log_body(text: String, started: tokio::sync::watch::Receiver<bool>) -> Body {
    use futures::StreamExt;
    use http_body_util::BodyExt;
    let (first, rest) = text.split_at(text.find('\n').map_or(text.len(), |i| i + 1));
    let (first, rest) = (first.to_string(), rest.to_string());
    let frames = futures::stream::iter([Ok(http_body::Frame::data(bytes::Bytes::from(first)))])
        .chain(futures::stream::once(async move {
            let mut started = started;
            let _ = started.wait_for(|s| *s).await;
            Ok(http_body::Frame::data(bytes::Bytes::from(rest)))
        }));
    BodyExt::boxed(http_body_util::StreamBody::new(frames))
}

fn fake_cluster(calls: Calls, second_alive: bool) -> kube::Client {
    use http_body_util::BodyExt;
    let (start_tx, start_rx) = tokio::sync::watch::channel(false);
    let start_tx = Arc::new(start_tx);
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let calls = calls.clone();
        let (start_tx, start_rx) = (start_tx.clone(), start_rx.clone());
        async move {
            let method = req.method().to_string();
            let uri = req.uri().to_string();
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let body = String::from_utf8_lossy(&body).into_owned();
            calls
                .lock()
                .unwrap()
                .push((method.clone(), uri.clone(), body.clone()));
            let path = uri.split('?').next().unwrap().to_string();
            let reply = match (method.as_str(), path.as_str()) {
                ("POST", _) => full(body),
                ("GET", "/api/v1/namespaces/bench/pods") => full(serde_json::json!({
                    "apiVersion": "v1", "kind": "PodList", "metadata": {},
                    "items": (0..2).map(|i| serde_json::json!({
                        "metadata": {"name": format!("p{i}"), "annotations": {"batch.kubernetes.io/job-completion-index": i.to_string()}},
                        "status": {"phase": "Running"}
                    })).collect::<Vec<_>>()
                }).to_string()),
                ("GET", p) if p.ends_with("/p0/log") => log_body(agent_log(0, &[100, 110, 120], true), start_rx),
                ("GET", p) if p.ends_with("/p1/log") => log_body(agent_log(1, &[90, 95], second_alive), start_rx),
                ("PATCH", _) => {
                    let _ = start_tx.send(true);
                    full(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}).to_string())
                }
                ("DELETE", _) => full(serde_json::json!({"apiVersion": "v1", "kind": "Status", "status": "Success", "metadata": {}}).to_string()),
                _ => full(String::new()),
            };
            let status = if method == "POST" { 201 } else { 200 };
            Ok::<_, std::convert::Infallible>(
                http::Response::builder()
                    .status(status)
                    .body(reply)
                    .unwrap(),
            )
        }
    });
    kube::Client::new(svc, "bench")
}

fn settings(keep: bool) -> executor::Settings {
    executor::Settings {
        ready_limit: std::time::Duration::from_secs(10),
        lead: std::time::Duration::ZERO,
        run_limit: std::time::Duration::from_secs(10),
        keep,
        percentile: 95,
    }
}

struct Seconds(Vec<f64>);
impl crate::engine::exec::Observer for Seconds {
    fn interval(&mut self, s: &IntervalStats) {
        self.0.push(s.tps);
    }
}

#[tokio::test]
async fn the_executor_creates_follows_starts_merges_and_deletes_in_that_order() {
    let (s, plan) = spec();
    let Executor::Kubernetes(k) = &s.executor else {
        panic!()
    };
    let o = point_objects(&s, k, &plan.points[0], "20261130T000000Z").unwrap();
    let name = o.job.metadata.name.clone().unwrap();
    let calls: Calls = Default::default();
    let mut seen = Seconds(vec![]);
    let out = executor::run_point(
        fake_cluster(calls.clone(), true),
        &o,
        2,
        &settings(false),
        &mut seen,
    )
    .await
    .unwrap();
    let calls = calls.lock().unwrap().clone();
    let asked: Vec<String> = calls
        .iter()
        .map(|(m, u, _)| format!("{m} {}", u.split('?').next().unwrap()))
        .collect();
    assert_eq!(
        asked,
        [
            "POST /api/v1/namespaces/bench/configmaps".to_string(),
            "POST /apis/batch/v1/namespaces/bench/jobs".into(),
            "GET /api/v1/namespaces/bench/pods".into(),
            "GET /api/v1/namespaces/bench/pods/p0/log".into(),
            "GET /api/v1/namespaces/bench/pods/p1/log".into(),
            format!("PATCH /api/v1/namespaces/bench/configmaps/{name}"),
            format!("DELETE /apis/batch/v1/namespaces/bench/jobs/{name}"),
            format!("DELETE /api/v1/namespaces/bench/configmaps/{name}"),
        ]
    );
    let job: Job = serde_json::from_str(&calls[1].2).unwrap();
    assert_eq!(job.spec.unwrap().completions, Some(2));
    assert!(
        calls[2]
            .1
            .contains(&format!("labelSelector=sweepbench%2Fjob%3D{name}")),
        "{}",
        calls[2].1
    );
    assert!(
        calls[3].1.contains("follow=true") && calls[3].1.contains("container=client"),
        "{}",
        calls[3].1
    );
    let patch: serde_json::Value = serde_json::from_str(&calls[5].2).unwrap();
    assert!(
        patch["data"]["start"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok(),
        "{patch}"
    );
    assert!(
        calls[6].2.contains("\"propagationPolicy\":\"Foreground\""),
        "{}",
        calls[6].2
    );
    // Merged as the local executor merges: the seconds both clients have, every event.
    assert_eq!(seen.0, [190.0, 205.0]);
    assert_eq!(out.report.totals.events, 515);
    assert_eq!(out.report.hist.len(), 515);
    assert_eq!(out.cpu_s, 0.5);
    assert!((out.skew_ms - 1.0).abs() < 1e-9, "{}", out.skew_ms);
    let mut one = total_hist();
    for (i, n) in [
        (0u64, [100u64, 110, 120].as_slice()),
        (1, [90, 95].as_slice()),
    ] {
        for &m in n {
            for j in 0..m {
                one.record(500_000 + j * 1000 * (i + 1)).unwrap();
            }
        }
    }
    assert_eq!(
        percentile_ms(&out.report.hist, 99.0),
        percentile_ms(&one, 99.0)
    );
}

#[tokio::test]
async fn a_client_pod_that_dies_fails_the_point_and_keep_leaves_the_objects() {
    let (s, plan) = spec();
    let Executor::Kubernetes(k) = &s.executor else {
        panic!()
    };
    let o = point_objects(&s, k, &plan.points[0], "r").unwrap();
    let calls: Calls = Default::default();
    let e = executor::run_point(
        fake_cluster(calls.clone(), false),
        &o,
        2,
        &settings(true),
        &mut Seconds(vec![]),
    )
    .await
    .err()
    .expect("a client died");
    assert!(
        e.to_string()
            .contains("client 2 of 2 died during the point"),
        "{e}"
    );
    assert!(
        !calls.lock().unwrap().iter().any(|c| c.0 == "DELETE"),
        "--keep-k8s deletes nothing"
    );
}

/// Sweeps whose names differ only in case or punctuation, or after the label's 40
/// characters, get distinct object names (#22 N14): one would otherwise overwrite the other's
/// ConfigMap and Job in a shared namespace.
#[test]
fn sweeps_with_look_alike_names_render_distinct_objects() {
    let long = "a".repeat(44);
    let names = [
        "Bench_A".to_string(),
        "bench.a".to_string(),
        "BENCH-A".to_string(),
        format!("{long}1234"),
        format!("{long}5678"),
    ];
    let mut points = std::collections::BTreeSet::new();
    let mut shards = std::collections::BTreeSet::new();
    for n in &names {
        let text = SWEEP.replace("Two_Clients", n);
        let s = SweepSpec::parse(std::path::Path::new("k.toml"), &text).unwrap();
        let plan = Plan::build(&s, &[]);
        let Executor::Kubernetes(k) = &s.executor else {
            panic!("a kubernetes executor")
        };
        let o = point_objects(&s, k, &plan.points[0], "render").unwrap();
        let name = o.job.metadata.name.clone().unwrap();
        assert!(name.len() <= 63, "{name}");
        assert_eq!(o.config_map.metadata.name.as_deref(), Some(name.as_str()));
        points.insert(name);
        let o = shard_objects(&s, k, 3).unwrap();
        let name = o.job.metadata.name.clone().unwrap();
        assert!(name.len() <= 63 && name.ends_with("-shards-3"), "{name}");
        shards.insert(name);
    }
    assert_eq!(points.len(), names.len(), "{points:?}");
    assert_eq!(shards.len(), names.len(), "{shards:?}");
}
