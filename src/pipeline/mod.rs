//! The sweep pipeline, from a sweep file to a verdict, one folder per step as the code flows:
//! `spec` (the file) → `plan` (its points) → `preflight` (can the servers take it) → `server`
//! (managed throwaway servers, proxies, synthetic models) → `sweep` (runs the points: the
//! designs, adaptive searches, the gate) → `results` (the run directory, and what else makes
//! or keeps run directories: imports of sysbench logs, the host fingerprint, the nightly's
//! lock and pruning) → `judge` (verdicts, the scaling model, a paired run's verdicts.json:
//! numbers in, answers out) → `report` (a run rendered); then `compare` and `history` judge
//! runs against each other. `adaptive` is the pure policy of `threads = "auto"` and the SLA
//! search (the spec configures it, the sweep asks it for the next step). `distributed` holds what spreads a point or a sweep over
//! processes and machines (client agents, Kubernetes, merging shards).

pub mod adaptive;
pub mod compare;
pub mod distributed;
pub mod events;
pub mod history;
pub mod judge;
pub mod plan;
pub mod preflight;
pub mod report;
pub mod results;
pub mod server;
pub mod spec;
pub mod sweep;
