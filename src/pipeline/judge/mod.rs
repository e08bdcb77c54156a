//! Judgement, pure where it can be: `verdict` (every regressed / improved / unchanged /
//! inconclusive answer, paired or not, and the change points of a history), `scaling` (each
//! series' Universal Scalability Law model), `verdicts_file` (a run's verdicts.json),
//! `control` (a series' ratio to a pinned control, run over run) and `trend` (`history`'s
//! verdict on a series' newest run).

pub mod answers;
pub mod control;
pub mod host_load;
pub mod scaling;
pub mod trend;
pub mod verdict;
pub mod verdicts_file;
