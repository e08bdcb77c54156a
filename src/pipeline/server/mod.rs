//! Server lifecycle. `managed` starts throwaway MariaDB/MySQL instances from their binaries
//! (fresh datadir in a temp dir, 127.0.0.1 only, free port) and guarantees they stop;
//! `workdir` marks work directories in use and reaps those a killed process left; `proxy`
//! starts a proxy (HAProxy, or MySQL Router: `router`) in front of a server; `cluster` starts a Galera cluster of
//! managed nodes.

pub mod cluster;
pub mod managed;
pub mod mycnf;
pub mod proxy;
pub mod router;
pub mod synthetic;
pub mod workdir;

pub use managed::{ManagedServer, ServerSpec};
