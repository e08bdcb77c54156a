//! Server lifecycle. `managed` starts throwaway MariaDB/MySQL instances from their binaries
//! (fresh datadir in a temp dir, 127.0.0.1 only, free port) and guarantees they stop;
//! `workdir` marks work directories in use and reaps those a killed process left; `proxy`
//! starts a proxy (HAProxy, or MySQL Router: `router`) in front of a server; `cluster` starts a Galera cluster of
//! managed nodes; `class` holds a server to an instance class by cgroups; `versions` finds the build a MariaDB version names.

pub mod class;
pub mod cluster;
pub mod managed;
pub mod mycnf;
pub mod proxy;
pub mod router;
pub mod synthetic;
pub mod versions;
pub mod workdir;

pub use managed::{ManagedServer, ServerSpec};
