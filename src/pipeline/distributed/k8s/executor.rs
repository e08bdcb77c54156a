//! The Kubernetes executor: a multi-client point as an Indexed Job. It creates the point's
//! ConfigMap and Job, finds the Job's pods by label, follows each pod's log (the agent's JSON
//! lines), writes the start instant into the ConfigMap once every client is ready (the pods
//! see it through their mounted volume), merges as the local executor does, and deletes the
//! Job (foreground propagation) and the ConfigMap unless asked to keep them.

use super::objects::START_KEY;
use super::Objects;
use crate::engine::exec::Observer;
use crate::pipeline::distributed::clients::local::{await_ready, conclude, gather, Event, Outcome};
use crate::pipeline::distributed::clients::unix_ns;
use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the executor needs beyond the objects.
pub struct Settings {
    /// How long pods may take to be scheduled, pull the image, connect and prepare.
    pub ready_limit: Duration,
    /// How far ahead the start instant is set: the kubelet refreshes a mounted ConfigMap
    /// within its sync period (a minute by default) plus its cache's TTL.
    pub lead: Duration,
    /// The whole measured point with its grace, after the start.
    pub run_limit: Duration,
    /// --keep-k8s: leave the Job and ConfigMap for inspection.
    pub keep: bool,
    pub percentile: u32,
}

/// Runs one multi-client point on the cluster `client` talks to.
pub async fn run_point(
    client: kube::Client,
    o: &Objects,
    clients: u32,
    s: &Settings,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    let ns = o
        .job
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let name = o.job.metadata.name.clone().unwrap_or_default();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client, &ns);
    cms.create(&PostParams::default(), &o.config_map)
        .await
        .map_err(|e| anyhow::anyhow!("creating ConfigMap {ns}/{name}: {e}"))?;
    let result = async {
        jobs.create(&PostParams::default(), &o.job)
            .await
            .map_err(|e| anyhow::anyhow!("creating Job {ns}/{name}: {e}"))?;
        measure(&cms, &pods, &name, clients, s, observer).await
    }
    .await;
    if !s.keep {
        // Foreground: the Job is gone only once its pods are.
        let job = jobs.delete(&name, &DeleteParams::foreground()).await.err();
        let cm = cms.delete(&name, &DeleteParams::default()).await.err();
        for (kind, e) in [("Job", job), ("ConfigMap", cm)] {
            if let Some(e) = e {
                observer.warning(&format!(
                    "deleting {kind} {ns}/{name}: {e} (delete it with kubectl)"
                ));
            }
        }
    }
    result
}

/// The completion index of a Job's pod.
fn index_of(p: &Pod) -> Option<u32> {
    p.metadata
        .annotations
        .as_ref()?
        .get("batch.kubernetes.io/job-completion-index")?
        .parse()
        .ok()
}

async fn measure(
    cms: &Api<ConfigMap>,
    pods: &Api<Pod>,
    name: &str,
    k: u32,
    s: &Settings,
    observer: &mut dyn Observer,
) -> anyhow::Result<Outcome> {
    // Every index's pod, running (or already past it).
    let deadline = tokio::time::Instant::now() + s.ready_limit;
    let lp = ListParams::default().labels(&format!("sweepbench/job={name}"));
    let found: Vec<(u32, String)> = loop {
        let list = pods.list(&lp).await?;
        let mut seen: Vec<(u32, String)> = Vec::new();
        for p in &list.items {
            let phase = p
                .status
                .as_ref()
                .and_then(|x| x.phase.clone())
                .unwrap_or_default();
            let pod = p.metadata.name.clone().unwrap_or_default();
            if phase == "Failed" {
                anyhow::bail!("pod {pod} failed before the point started");
            }
            if let (Some(i), true) = (index_of(p), phase == "Running" || phase == "Succeeded") {
                if !seen.iter().any(|x| x.0 == i) {
                    seen.push((i, pod));
                }
            }
        }
        if seen.len() as u32 == k {
            break seen;
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "{} of {k} client pods were running after {} s",
                seen.len(),
                s.ready_limit.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    for (i, pod) in found {
        let lp = LogParams {
            follow: true,
            container: Some("client".into()),
            ..LogParams::default()
        };
        let stream = pods
            .log_stream(&pod, &lp)
            .await
            .map_err(|e| anyhow::anyhow!("following the log of pod {pod}: {e}"))?;
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = stream.lines();
            while let Some(Ok(line)) = lines.next().await {
                if tx.send(Event::of_line(i, line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(Event::Gone(i, format!("the log of pod {pod} ended")));
        });
    }
    drop(tx);
    await_ready(&mut rx, k, s.ready_limit).await?;
    let at = unix_ns() + s.lead.as_nanos() as u64;
    let patch = serde_json::json!({ "data": { START_KEY: at.to_string() } });
    cms.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| anyhow::anyhow!("writing the start instant into ConfigMap {name}: {e}"))?;
    let limit = s.lead + s.run_limit;
    let parts = match tokio::time::timeout(limit, gather(&mut rx, k, s.percentile, observer)).await
    {
        Ok(r) => r?,
        Err(_) => anyhow::bail!(
            "the client pods had not all ended {} s after the start",
            limit.as_secs()
        ),
    };
    conclude(parts, k, s.percentile)
}
