//! Where a point's load comes from: `[run] clients` (client processes per point, an axis when
//! a list) and `[executor]` (those processes on this machine, or pods of a Kubernetes Job).

use super::raw::RawSweep;
use super::{unknown_field_hint, Ctx, RunSpec, SpecError, SweepSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where client processes run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Executor {
    /// Processes on this machine (`sweepbench agent` children).
    #[default]
    Local,
    /// Pods of an Indexed Job (docs/distributed.md).
    Kubernetes(Box<Kube>),
}

/// `[executor] kind = "kubernetes"`: what the Job's pods need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kube {
    /// The image holding the `sweepbench` binary.
    pub image: String,
    #[serde(default = "default_namespace")]
    pub namespace: String,
    #[serde(default)]
    pub service_account: Option<String>,
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// Requests and limits of each client pod (Kubernetes quantities: "2", "500m", "1Gi").
    #[serde(default)]
    pub cpu: Option<String>,
    #[serde(default)]
    pub memory: Option<String>,
    /// The Secret (`name` / `key`) holding the target's password, given to each pod as
    /// SWEEPBENCH_PASSWORD: passwords never go into the ConfigMap.
    #[serde(default)]
    pub password_secret: Option<SecretRef>,
    #[serde(default)]
    pub image_pull_policy: Option<String>,
    /// A PersistentVolumeClaim for the run directories of a sharded sweep's pods (mounted at
    /// /results); without it they are lost with the pods.
    #[serde(default)]
    pub results_claim: Option<String>,
    /// Seconds between "every client is ready" and the start: the kubelet refreshes a
    /// mounted ConfigMap within its sync period (60 s by default) plus its cache's TTL.
    #[serde(default = "default_lead")]
    pub start_lead_s: u64,
}

fn default_lead() -> u64 {
    90
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    pub name: String,
    pub key: String,
}

fn default_namespace() -> String {
    "default".into()
}

#[derive(Deserialize)]
struct RawExecutor {
    kind: String,
    #[serde(flatten)]
    rest: toml::Table,
}

/// A DNS-1123 label, as Kubernetes wants for namespaces and names.
fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

impl SweepSpec {
    /// `[run] clients`: a count, or a list of counts (an axis).
    pub(super) fn clients(cx: &Ctx<'_>, raw: &RawSweep) -> Result<Vec<u32>, SpecError> {
        let Some(v) = &raw.run.clients else {
            return Ok(vec![1]);
        };
        let bad = |m: &str| cx.err(v.span(), format!("run.clients: {m}"));
        let items: Vec<&toml::Value> = match v.get_ref() {
            toml::Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        let mut out = Vec::new();
        for x in items {
            match x.as_integer() {
                Some(n) if (1..=1024).contains(&n) => out.push(n as u32),
                _ => {
                    return Err(bad(&format!(
                        "{x} is not a number of client processes (1 to 1024)"
                    )))
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        if out.is_empty() {
            return Err(bad("the list is empty"));
        }
        Ok(out)
    }

    /// What `clients` cannot be combined with, said where it is written.
    pub(super) fn check_clients(
        cx: &Ctx<'_>,
        raw: &RawSweep,
        run: &RunSpec,
    ) -> Result<(), SpecError> {
        let most = run.clients.iter().copied().max().unwrap_or(1);
        if most == 1 {
            return Ok(());
        }
        let span = raw.run.clients.as_ref().map_or(0..0, |c| c.span());
        if run.drivers.iter().any(|d| d == "sysbench") {
            return Err(cx.err(span, "run.clients: several client processes per point run the native engine only; remove \"sysbench\" from run.drivers or use clients = 1"));
        }
        // A thread count below a client count is left out of the plan for it; a client count
        // no thread count can feed is a mistake.
        let top = run
            .auto
            .as_ref()
            .map_or(run.threads.iter().copied().max().unwrap_or(1), |a| a.to);
        if top < most {
            return Err(cx.err(span, format!("run.clients: {top} thread(s) at most cannot be split over {most} client processes: every client needs at least one thread")));
        }
        Ok(())
    }

    /// Multi-client points on a cluster need targets the pods can reach.
    pub(super) fn check_executor(
        cx: &Ctx<'_>,
        raw: &RawSweep,
        spec_targets: &[super::Target],
        run: &RunSpec,
        executor: &Executor,
    ) -> Result<(), SpecError> {
        if !matches!(executor, Executor::Kubernetes(_)) || run.clients.iter().all(|&k| k == 1) {
            return Ok(());
        }
        for (t, r) in spec_targets.iter().zip(&raw.targets) {
            if matches!(t.kind, super::target::TargetKind::Managed(_)) {
                return Err(cx.err(r.name.span(), format!("target '{}' is a managed server, which listens on this machine's loopback only: client pods on the cluster cannot reach it; give it a url, or run the multi-client points with [executor] kind = \"local\"", t.name)));
            }
        }
        Ok(())
    }

    /// `[executor]`: `kind = "local"` (the default) or `"kubernetes"` with its settings.
    pub(super) fn executor(cx: &Ctx<'_>, raw: &RawSweep) -> Result<Executor, SpecError> {
        let Some(v) = &raw.executor else {
            return Ok(Executor::Local);
        };
        let bad = |m: String| cx.err(v.span(), format!("[executor]: {m}"));
        let e: RawExecutor = v
            .get_ref()
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| bad(unknown_field_hint(e.message())))?;
        match e.kind.as_str() {
            "local" if e.rest.is_empty() => Ok(Executor::Local),
            "local" => Err(bad("kind = \"local\" takes no other keys".into())),
            "kubernetes" => {
                let k: Kube = toml::Value::Table(e.rest)
                    .try_into()
                    .map_err(|e: toml::de::Error| bad(format!("kubernetes: {}", e.message())))?;
                if !dns_label(&k.namespace) {
                    return Err(bad(format!(
                        "namespace '{}': a DNS label (lower-case letters, digits, '-')",
                        k.namespace
                    )));
                }
                if k.image.trim().is_empty() {
                    return Err(bad(
                        "image is empty: name an image holding sweepbench".into()
                    ));
                }
                if let Some(p) = &k.image_pull_policy {
                    if !["Always", "IfNotPresent", "Never"].contains(&p.as_str()) {
                        return Err(bad(format!(
                            "image_pull_policy '{p}': Always, IfNotPresent or Never"
                        )));
                    }
                }
                Ok(Executor::Kubernetes(Box::new(k)))
            }
            other => Err(bad(format!(
                "kind = \"{other}\": expected \"local\" or \"kubernetes\""
            ))),
        }
    }
}
