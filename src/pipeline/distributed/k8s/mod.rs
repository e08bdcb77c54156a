//! Kubernetes: what a multi-client point and a sharded sweep become on a cluster — typed
//! objects (k8s-openapi: a ConfigMap and an Indexed Job), their YAML for kubectl and GitOps
//! (`sweepbench k8s render`), and the executor that submits them with kube's client
//! (executor.rs). docs/distributed.md says what of this has met a real cluster.

pub mod executor;
mod objects;

pub use objects::{point_objects, shard_objects, Objects};

use crate::pipeline::plan::Plan;
use crate::pipeline::spec::distributed::{Executor, Kube};
use crate::pipeline::spec::SweepSpec;

/// A DNS-1123 label from `s`: lower case, '-' for anything else, at most `max` characters.
pub fn label(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(max);
    out.trim_matches('-').to_string()
}

/// A short stable hash (FNV-1a, 32 bits) for names that must be unique and short.
pub fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// The executor settings a render uses: the sweep's own, or placeholders that say so.
fn kube_of(spec: &SweepSpec) -> (Kube, Option<&'static str>) {
    match &spec.executor {
        Executor::Kubernetes(k) => ((**k).clone(), None),
        Executor::Local => (
            Kube {
                image: "sweepbench:latest".into(),
                namespace: "default".into(),
                service_account: None,
                node_selector: Default::default(),
                cpu: None,
                memory: None,
                password_secret: None,
                image_pull_policy: None,
                results_claim: None,
                start_lead_s: 90,
            },
            Some("the sweep file has no [executor] kind = \"kubernetes\": image and namespace are placeholders"),
        ),
    }
}

/// `sweepbench k8s render`: the manifests of every multi-client point of the plan (a
/// ConfigMap and an Indexed Job each), or with `shards` the Indexed Job that runs the sweep
/// as that many parts; multi-document YAML.
pub fn render(spec: &SweepSpec, plan: &Plan, shards: Option<u32>) -> anyhow::Result<String> {
    let (kube, placeholder) = kube_of(spec);
    let mut notes: Vec<String> = placeholder.iter().map(|s| s.to_string()).collect();
    let mut docs = Vec::new();
    match shards {
        Some(n) => {
            let o = shard_objects(spec, &kube, n)?;
            notes.extend(o.notes.iter().cloned());
            docs.push(o);
        }
        None => {
            for p in plan.points.iter().filter(|p| p.clients > 1 && !p.is_slot()) {
                let o = point_objects(spec, &kube, p, "render")?;
                for n in &o.notes {
                    if !notes.contains(n) {
                        notes.push(n.clone());
                    }
                }
                docs.push(o);
            }
            if docs.is_empty() {
                anyhow::bail!("the plan has no point with clients above 1: nothing runs on a cluster (set [run] clients = N, or render --shards N)");
            }
        }
    }
    let mut out = String::new();
    for n in &notes {
        out.push_str(&format!("# note: {n}\n"));
    }
    for o in &docs {
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&o.config_map)?);
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&o.job)?);
    }
    Ok(out)
}

/// Runs multi-client point `p` as an Indexed Job on the cluster of the current kubeconfig
/// (or the pod's service account).
pub async fn run_point(
    spec: &SweepSpec,
    k: &Kube,
    p: &crate::pipeline::plan::Point,
    run_id: &str,
    (percentile, keep): (u32, bool),
    observer: &mut dyn crate::engine::exec::Observer,
) -> anyhow::Result<crate::pipeline::distributed::clients::local::Outcome> {
    let objects = point_objects(spec, k, p, run_id)?;
    let client = kube::Client::try_default()
        .await
        .map_err(|e| anyhow::anyhow!("no Kubernetes cluster to run clients on: {e} (a kubeconfig, $KUBECONFIG, or a pod's service account)"))?;
    let settings = executor::Settings {
        ready_limit: std::time::Duration::from_secs(600),
        lead: std::time::Duration::from_secs(k.start_lead_s),
        run_limit: std::time::Duration::from_secs(
            spec.run.warmup_s + spec.run.duration_s + spec.run.point_timeout_s + 60,
        ),
        keep,
        percentile,
    };
    executor::run_point(client, &objects, p.clients, &settings, observer).await
}

#[cfg(test)]
mod tests;
