//! Server lifecycle. `managed` starts throwaway MariaDB/MySQL instances from their binaries
//! (fresh datadir in a temp dir, 127.0.0.1 only, free port) and guarantees they stop.

pub mod managed;
pub mod mycnf;

pub use managed::{ManagedServer, ServerSpec};
