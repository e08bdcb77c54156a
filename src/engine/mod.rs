//! The engine: sysbench's workloads on our own MySQL client. `config` says what to run,
//! `workload` what each event sends, `wire` how it goes over the socket, `exec` who runs the
//! events and when, `metrics` what was measured, `db` where connections go and how they log
//! in, `admin` the administrative client (statements as text on `wire`, the workload's client).
//! Nothing here knows about sweeps, sweep files or sysbench's command line.

pub mod admin;
pub mod config;
pub mod db;
pub mod exec;
pub mod fatal;
pub mod host;
pub mod metrics;
pub mod watch;
pub mod wire;
pub mod workload;

pub use fatal::Fatal;
