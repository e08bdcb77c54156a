//! The sweep pipeline, from a sweep file to a verdict: `spec` (the file) → `plan` (its points)
//! → `preflight` (can the servers take it) → `server` (managed throwaway servers) → `sweep`
//! (runs the points on the engine or the sysbench binary) → `results` (the run directory) →
//! `report`; then `verdict`, `compare` and `history` judge runs against each other. `host` is
//! the machine a run measured from, `synthetic` a server that is only a model (for trying
//! and testing everything else without one), `import` turns saved sysbench logs into runs, `nightly`
//! holds what unattended runs need.

pub mod adaptive;
pub mod clients;
pub mod compare;
pub mod filters;
pub mod history;
pub mod host;
pub mod import;
pub mod k8s;
pub mod merge;
pub mod nightly;
pub mod plan;
pub mod preflight;
pub mod report;
pub mod results;
pub mod scaling;
pub mod server;
pub mod spec;
pub mod sweep;
pub mod synthetic;
pub mod verdict;
pub mod verdicts_file;
