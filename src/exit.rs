//! The process's exit codes: one definition for every command (sysbench's where it has one).

/// How a command ended, as the shell sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    /// Some points failed (`run`), or a fatal error (`bench`, as sysbench).
    Failed,
    /// Bad input: options, a sweep file, a blocking preflight finding.
    BadInput,
    /// A regression was found (`--fail-on-regression`, `compare`, `history`).
    Regression,
    /// Ended by SIGINT / SIGTERM (128 + 2, as shells report it).
    Interrupted,
}

impl Exit {
    pub const fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::BadInput => 2,
            Exit::Regression => 3,
            Exit::Interrupted => 130,
        }
    }
}

/// An error that ends a command with `exit` rather than `BadInput`: the work itself failed
/// (a lost server in `bench`, as sysbench's FATAL), not what was asked of it.
#[derive(Debug)]
pub struct Ending {
    pub exit: Exit,
    pub error: anyhow::Error,
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for Ending {}

/// Marks `error` as a failure of the work (exit 1).
pub fn failed(error: anyhow::Error) -> anyhow::Error {
    Ending {
        exit: Exit::Failed,
        error,
    }
    .into()
}

/// The exit code an error ends its command with: `BadInput` unless marked otherwise.
pub fn exit_of(error: &anyhow::Error) -> Exit {
    error
        .downcast_ref::<Ending>()
        .map_or(Exit::BadInput, |e| e.exit)
}
