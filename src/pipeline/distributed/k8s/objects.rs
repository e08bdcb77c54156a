//! The typed objects: a ConfigMap of the clients' tasks (or of the sweep file) and an Indexed
//! Job whose pods each run one index, spread over nodes, never retried (a retried client
//! would measure another point).

use super::{label, short_hash};
use crate::pipeline::distributed::clients::Task;
use crate::pipeline::plan::Point;
use crate::pipeline::spec::distributed::Kube;
use crate::pipeline::spec::target::{ConnInfo, TargetKind};
use crate::pipeline::spec::SweepSpec;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource,
    PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, ResourceRequirements,
    SecretKeySelector, TopologySpreadConstraint, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use std::collections::BTreeMap;

/// Where the ConfigMap is mounted in every pod.
pub const MOUNT: &str = "/etc/sweepbench";
/// The ConfigMap key the controller writes the start instant into.
pub const START_KEY: &str = "start";

/// One Job and its ConfigMap, with what a reader of the manifests must know.
pub struct Objects {
    pub config_map: ConfigMap,
    pub job: Job,
    pub notes: Vec<String>,
}

fn meta(name: &str, k: &Kube, labels: &BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(k.namespace.clone()),
        labels: Some(labels.clone()),
        ..ObjectMeta::default()
    }
}

fn labels(job: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "sweepbench".to_string(),
        ),
        (
            "app.kubernetes.io/component".to_string(),
            component.to_string(),
        ),
        ("sweepbench/job".to_string(), job.to_string()),
    ])
}

/// The pod every index runs: `args` in the image's sweepbench, the ConfigMap at MOUNT, the
/// password from the Secret, spread one per node where the cluster allows.
fn job(
    name: &str,
    k: &Kube,
    n: u32,
    args: Vec<String>,
    extra: Option<(Volume, VolumeMount)>,
    component: &str,
) -> Job {
    let labels = labels(name, component);
    let quantity = |q: &Option<String>| q.as_ref().map(|v| Quantity(v.clone()));
    let mut amounts = BTreeMap::new();
    if let Some(c) = quantity(&k.cpu) {
        amounts.insert("cpu".to_string(), c);
    }
    if let Some(m) = quantity(&k.memory) {
        amounts.insert("memory".to_string(), m);
    }
    let env = k.password_secret.as_ref().map(|s| {
        vec![EnvVar {
            name: "SWEEPBENCH_PASSWORD".into(),
            value_from: Some(EnvVarSource {
                secret_key_ref: Some(SecretKeySelector {
                    name: s.name.clone(),
                    key: s.key.clone(),
                    optional: Some(false),
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        }]
    });
    let mut volumes = vec![Volume {
        name: "task".into(),
        config_map: Some(ConfigMapVolumeSource {
            name: name.to_string(),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }];
    let mut mounts = vec![VolumeMount {
        name: "task".into(),
        mount_path: MOUNT.into(),
        read_only: Some(true),
        ..VolumeMount::default()
    }];
    if let Some((v, m)) = extra {
        volumes.push(v);
        mounts.push(m);
    }
    Job {
        metadata: meta(name, k, &labels),
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(n as i32),
            parallelism: Some(n as i32),
            // A failed client fails the point: no retry inside a measured point.
            backoff_limit: Some(0),
            // Logs are read while the pods run; the controller deletes the Job itself.
            ttl_seconds_after_finished: Some(3600),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    service_account_name: k.service_account.clone(),
                    node_selector: (!k.node_selector.is_empty()).then(|| k.node_selector.clone()),
                    topology_spread_constraints: Some(vec![TopologySpreadConstraint {
                        max_skew: 1,
                        topology_key: "kubernetes.io/hostname".into(),
                        when_unsatisfiable: "ScheduleAnyway".into(),
                        label_selector: Some(LabelSelector {
                            match_labels: Some(BTreeMap::from([(
                                "sweepbench/job".to_string(),
                                name.to_string(),
                            )])),
                            ..LabelSelector::default()
                        }),
                        ..TopologySpreadConstraint::default()
                    }]),
                    containers: vec![Container {
                        name: component.into(),
                        image: Some(k.image.clone()),
                        image_pull_policy: k.image_pull_policy.clone(),
                        command: Some(vec!["sweepbench".into()]),
                        args: Some(args),
                        env,
                        resources: (!amounts.is_empty()).then(|| ResourceRequirements {
                            requests: Some(amounts.clone()),
                            limits: Some(amounts),
                            ..ResourceRequirements::default()
                        }),
                        volume_mounts: Some(mounts),
                        ..Container::default()
                    }],
                    volumes: Some(volumes),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// The ConfigMap and Indexed Job of one multi-client point: `tasks.json` holds every
/// client's task, `start` the instant the controller writes once all are ready.
pub fn point_objects(
    spec: &SweepSpec,
    k: &Kube,
    p: &Point,
    run_id: &str,
) -> anyhow::Result<Objects> {
    let target = spec
        .targets
        .iter()
        .find(|t| t.name == p.target)
        .ok_or_else(|| anyhow::anyhow!("point {}: no target '{}'", p.id, p.target))?;
    let mut notes = Vec::new();
    let conn = match &target.kind {
        TargetKind::External(c) => {
            if c.password.is_some() && k.password_secret.is_none() {
                notes.push(format!("target '{}' has a password, which is never rendered: name the Secret holding it in [executor] password_secret = {{ name = \"…\", key = \"…\" }}", p.target));
            }
            c.clone()
        }
        TargetKind::Synthetic(_) => {
            anyhow::bail!(
                "target '{}' is synthetic: its points are computed in this process, not by pods",
                p.target
            )
        }
        TargetKind::Managed(_) => {
            notes.push(format!("target '{}' is a managed server, which listens on this machine's loopback only: pods cannot reach it; give the cluster's sweep an external target (url = \"mysql://…\"). Its tasks say 127.0.0.1:3306", p.target));
            ConnInfo::from_url("mysql://root@127.0.0.1:3306/sbtest").map_err(anyhow::Error::msg)?
        }
    };
    let tasks = (0..p.clients)
        .map(|i| Task::new(spec, p, &conn, i))
        .collect::<anyhow::Result<Vec<Task>>>()?;
    // The label is for people; the hash, of the sweep's full name as written, the run and the
    // point, is what keeps two sweeps' objects apart ("Bench_A" and "bench.a" share a label).
    let name = format!(
        "sb-{}-{}",
        label(&spec.name, 40),
        short_hash(&format!("{}/{run_id}/{}", spec.name, p.id))
    );
    let labels = labels(&name, "client");
    let mut cm_meta = meta(&name, k, &labels);
    cm_meta
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert("sweepbench/point".into(), p.id.clone());
    let config_map = ConfigMap {
        metadata: cm_meta,
        data: Some(BTreeMap::from([
            (
                "tasks.json".to_string(),
                serde_json::to_string_pretty(&tasks)?,
            ),
            (START_KEY.to_string(), String::new()),
        ])),
        ..ConfigMap::default()
    };
    let args = vec![
        "agent".to_string(),
        "--tasks".into(),
        format!("{MOUNT}/tasks.json"),
        "--start-file".into(),
        format!("{MOUNT}/{START_KEY}"),
    ];
    let mut job = job(&name, k, p.clients, args, None, "client");
    job.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert("sweepbench/point".into(), p.id.clone());
    Ok(Objects {
        config_map,
        job,
        notes,
    })
}

/// The ConfigMap (the sweep file, passwords redacted) and Indexed Job that run a sweep as `n`
/// parts, pod I running `--shard I+1/n` with its own managed servers; run directories go to
/// /results (the `results_claim` volume), to be merged with `sweepbench merge`.
pub fn shard_objects(spec: &SweepSpec, k: &Kube, n: u32) -> anyhow::Result<Objects> {
    if n == 0 {
        anyhow::bail!("--shards must be at least 1");
    }
    let name = format!(
        "sb-{}-{}-shards-{n}",
        label(&spec.name, 32),
        short_hash(&spec.name)
    );
    let labels = labels(&name, "shard");
    let config_map = ConfigMap {
        metadata: meta(&name, k, &labels),
        data: Some(BTreeMap::from([(
            "sweep.toml".to_string(),
            spec.source.clone(),
        )])),
        ..ConfigMap::default()
    };
    let mut notes = Vec::new();
    let results = match &k.results_claim {
        Some(c) => Some((
            Volume {
                name: "results".into(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: c.clone(),
                    read_only: Some(false),
                }),
                ..Volume::default()
            },
            VolumeMount {
                name: "results".into(),
                mount_path: "/results".into(),
                ..VolumeMount::default()
            },
        )),
        None => {
            notes.push("no [executor] results_claim: each part's run directory stays in its pod and is lost with it; name a PersistentVolumeClaim to keep them for `sweepbench merge`".to_string());
            None
        }
    };
    let script = format!(
        "exec sweepbench run {MOUNT}/sweep.toml --shard $((JOB_COMPLETION_INDEX + 1))/{n} --results-dir /results/part-$((JOB_COMPLETION_INDEX + 1))"
    );
    let mut job = job(&name, k, n, vec![], results, "shard");
    if let Some(c) = job
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .and_then(|s| s.containers.first_mut())
    {
        c.command = Some(vec!["sh".into(), "-c".into()]);
        c.args = Some(vec![script]);
    }
    Ok(Objects {
        config_map,
        job,
        notes,
    })
}
