//! A point's threads over several client processes (`clients`: the agent, the local executor,
//! exact merging of their seconds), those processes as pods of a Kubernetes Indexed Job
//! (`k8s`), and the parts of a sharded sweep merged back into one run (`merge`);
//! docs/distributed.md.

pub mod clients;
#[cfg(feature = "k8s")]
pub mod k8s;
#[cfg(not(feature = "k8s"))]
#[path = "k8s_absent.rs"]
pub mod k8s;
pub mod merge;
