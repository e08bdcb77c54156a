//! What happened to a run's points, and the summary it ends with (printed, and kept in
//! summary.txt).

use crate::pipeline::plan::{Plan, Point};
use crate::pipeline::spec::SweepSpec;
use std::path::Path;

/// What happened to the points of a run.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) ok: u32,
    pub(super) failed: u32,
    pub(super) skipped: u32,
    /// Planned points that never ran (after an interrupt, or when results stopped being
    /// writable).
    pub(super) not_run: u32,
    pub(super) interrupted: bool,
    /// Points (or slices) recorded `interrupted`: begun, ended by the signal.
    pub(super) stopped: u32,
    /// SLA search steps whose arrivals overflowed the queue: recorded failed (they miss the
    /// SLA) but not counted as failed points.
    pub(super) overloaded: u32,
    /// Points measured whose record could not be written (a full disk): their figures, kept
    /// for the summary so they are not lost.
    pub(super) unwritten: Vec<String>,
    /// A paired run's verdicts per compared series, for its last lines.
    pub(super) paired: Option<Vec<String>>,
    /// Host test points measured (counted in ok/failed too).
    pub(super) host: u32,
    /// What a killed run had left in TMPDIR and this one removed.
    pub(super) reaped: Vec<String>,
}

impl Tally {
    /// Points measured or skipped so far.
    pub(super) fn total(&self) -> u64 {
        (self.ok + self.failed + self.skipped + self.overloaded + self.stopped) as u64
    }

    /// The run's closing lines: counts, where the results are, the paired answers and each
    /// decided change's reasons.
    pub(super) fn summary(
        &self,
        spec: &SweepSpec,
        plan: &Plan,
        run: &Path,
        (report, why): (&str, &[crate::pipeline::report::cost::Why]),
    ) -> String {
        let not_run = if self.not_run > 0 {
            format!(", {} not run", self.not_run)
        } else {
            String::new()
        };
        let not_run = if self.stopped > 0 {
            format!(", {} interrupted{not_run}", self.stopped)
        } else {
            not_run
        };
        let overloaded = if self.overloaded > 0 {
            format!(
                " ({} SLA step(s) overloaded the server: misses, not failures)",
                self.overloaded
            )
        } else {
            String::new()
        };
        let host = match self.host {
            0 => String::new(),
            n => format!(" and {n} host test point(s)"),
        };
        let planned = if spec.run.design.paired() {
            // A slice per series per round; rounds stop when a point is decided.
            format!(
                "{} slices (paired: one per series per round){host}",
                (self.ok + self.failed + self.skipped + self.stopped).saturating_sub(self.host)
            )
        } else if plan.points.iter().any(Point::is_slot) {
            // Adaptive searches end when they have found what they look for: count what ran.
            format!(
                "{} run (adaptive, at most {})",
                self.ok + self.failed + self.overloaded + self.skipped + self.stopped,
                plan.max_points(spec)
            )
        } else {
            format!("{} planned", plan.len())
        };
        let mut summary = format!(
            "sweep '{}': {} ok, {} failed{overloaded}, {} skipped{not_run} of {planned}; results in {}{report}\n",
            spec.name,
            self.ok,
            self.failed,
            self.skipped,
            run.display()
        );
        for line in self.paired.iter().flatten() {
            summary.push_str(&format!("  {line}\n"));
        }
        // Each decided change with the server counters that moved with it (report.md's "Why").
        for y in why {
            summary.push_str(&format!(
                "  why {} {} t{} ({}): {}\n",
                y.series, y.workload, y.threads, y.verdict, y.line
            ));
        }
        for line in &self.reaped {
            summary.push_str(&format!("note: {line}\n"));
        }
        if !self.unwritten.is_empty() {
            summary.push_str(
                "measured but not written to points.csv (these lines are the only copy):\n",
            );
            for u in &self.unwritten {
                summary.push_str(&format!("  {u}\n"));
            }
        }
        summary
    }
}
