//! `[run] profile`: whether each managed server is profiled on-CPU during one measured
//! window per point (sweep/profile.rs records, report/profile.rs draws).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// No profiles (the default): nothing but the workload and the counters touch the server.
    #[default]
    Off,
    /// `perf record` on the server's process during the first repeat or round of each point.
    Perf,
}
