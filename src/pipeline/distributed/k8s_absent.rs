//! A build without the `k8s` feature: the two ways into Kubernetes (running a point's clients
//! as pods, rendering their manifests) say how to get a build that has them.

use crate::pipeline::plan::Plan;
use crate::pipeline::spec::distributed::{Kube, K8S_ABSENT as ABSENT};
use crate::pipeline::spec::SweepSpec;

pub fn render(_: &SweepSpec, _: &Plan, _: Option<u32>) -> anyhow::Result<String> {
    anyhow::bail!("{ABSENT}")
}

pub async fn run_point(
    _: &SweepSpec,
    _: &Kube,
    _: &crate::pipeline::plan::Point,
    _: &str,
    _: (u32, bool),
    _: &mut dyn crate::engine::exec::Observer,
) -> anyhow::Result<crate::pipeline::distributed::clients::local::Outcome> {
    anyhow::bail!("{ABSENT}")
}
