//! `[run] profile`: whether each managed server is profiled on-CPU during one measured
//! window per point (sweep/profile.rs records, report/profile.rs draws).

use super::{Ctx, SpecError};
use toml::Spanned;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// No profiles (the default): nothing but the workload and the counters touch the server.
    #[default]
    Off,
    /// `perf record` on the server's process during the first repeat or round of each point.
    Perf,
}

pub(super) fn parse(cx: &Ctx<'_>, v: &Option<Spanned<String>>) -> Result<Profile, SpecError> {
    match v.as_ref().map(|v| (v.get_ref().as_str(), v.span())) {
        None | Some(("off", _)) => Ok(Profile::Off),
        Some(("perf", _)) => Ok(Profile::Perf),
        Some((other, span)) => Err(cx.err(
            span,
            format!("run.profile = '{other}': expected \"perf\" (on-CPU profiles of managed servers) or \"off\""),
        )),
    }
}
