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
