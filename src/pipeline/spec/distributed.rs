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

/// What a build without the `k8s` feature says where Kubernetes was asked for.
pub const K8S_ABSENT: &str = "this sweepbench was built without Kubernetes support (cargo's `k8s` feature, on by default): build it with `cargo build --release --features k8s`";

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

/// A DNS-1123 subdomain (Secret, ServiceAccount and claim names, a label key's prefix).
fn dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(dns_label)
}

/// A label's name part, or a label value when `empty_ok`: alphanumerics, '-', '_', '.',
/// starting and ending alphanumeric, at most 63.
fn label_part(s: &str, empty_ok: bool) -> bool {
    if s.is_empty() {
        return empty_ok;
    }
    let b = s.as_bytes();
    s.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c))
}

/// A positive Kubernetes quantity: "2", "500m", "1.5", "1Gi", "128M", "1e3".
fn quantity(s: &str) -> bool {
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    let value: Option<f64> = num.parse().ok();
    let exponent = |x: &str| {
        x.strip_prefix(['e', 'E'])
            .map(|r| r.strip_prefix(['+', '-']).unwrap_or(r))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
    };
    let suffix_ok = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ]
    .contains(&suffix)
        || exponent(suffix);
    value.is_some_and(|v| v > 0.0) && suffix_ok
}

/// What an API server would refuse at apply time, refused here with the key (#22 N16).
fn check_kube(k: &Kube) -> Result<(), String> {
    for (key, v) in [("cpu", &k.cpu), ("memory", &k.memory)] {
        if let Some(v) = v {
            if !quantity(v) {
                return Err(format!("{key} = \"{v}\": a positive Kubernetes quantity, e.g. \"2\", \"500m\", \"1Gi\""));
            }
        }
    }
    for (key, v) in [
        ("service_account", &k.service_account),
        ("results_claim", &k.results_claim),
        (
            "password_secret.name",
            &k.password_secret.as_ref().map(|s| s.name.clone()),
        ),
    ] {
        if let Some(v) = v {
            if !dns_subdomain(v) {
                return Err(format!("{key} = \"{v}\": a Kubernetes object name (lower-case letters, digits, '-' and '.')"));
            }
        }
    }
    if let Some(s) = &k.password_secret {
        let ok = !s.key.is_empty()
            && s.key.len() <= 253
            && s.key
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c));
        if !ok {
            return Err(format!(
                "password_secret.key = \"{}\": a Secret key (letters, digits, '-', '_' and '.')",
                s.key
            ));
        }
    }
    for (key, value) in &k.node_selector {
        let (prefix, name) = match key.rsplit_once('/') {
            Some((p, n)) => (Some(p), n),
            None => (None, key.as_str()),
        };
        if !label_part(name, false) || !prefix.is_none_or(dns_subdomain) {
            return Err(format!("node_selector key \"{key}\": a label key ([prefix/]name, letters, digits, '-', '_', '.')"));
        }
        if !label_part(value, true) {
            return Err(format!("node_selector value \"{value}\" (for {key}): a label value (at most 63 letters, digits, '-', '_', '.')"));
        }
    }
    if !k
        .image
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"._-/:@".contains(&c))
    {
        return Err(format!(
            "image \"{}\": an image reference (registry/name:tag or @digest, no spaces)",
            k.image
        ));
    }
    Ok(())
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
        if run.uses_sysbench() {
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
            if t.kind.is_managed() {
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
            "kubernetes" if cfg!(not(feature = "k8s")) => {
                Err(bad(format!("kind = \"kubernetes\": {K8S_ABSENT}")))
            }
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
                check_kube(&k).map_err(bad)?;
                Ok(Executor::Kubernetes(Box::new(k)))
            }
            other => Err(bad(format!(
                "kind = \"{other}\": expected \"local\" or \"kubernetes\""
            ))),
        }
    }
}
