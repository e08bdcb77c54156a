//! sweepbench: measures how a MySQL-compatible server scales with client concurrency.
//!
//! Three layers (docs/architecture.md): `engine` runs one workload against one server;
//! `pipeline` turns a sweep file into points, runs them on the engine and judges the results;
//! `cmd` (with `bench`, sysbench's own command line) is what the user types. `exit`,
//! `interrupt`, `owner`, `usage` and `visible` are process-wide and depend on nothing else here.

pub mod affinity;
pub mod bench;
pub mod cmd;
pub mod engine;
pub mod exit;
pub mod interrupt;
pub mod owner;
pub mod pipeline;
pub mod shield;
pub mod usage;
pub mod visible;

pub use cmd::run;
