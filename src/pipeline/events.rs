//! What the pipeline says while it works, as events. How they show — a progress bar, plain
//! lines, only the answer and the problems, or JSON lines for a program — is the command
//! layer's choice (cmd/progress.rs); nothing under pipeline/ prints.

use serde::Serialize;

/// One thing a command says. Lines carry no "warning:" or "error:" prefix: the sink adds
/// what its medium needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// A line of the command's answer (the plan, a check's findings, the run's summary and
    /// its gate): what a pipe or a cron mail is for, shown by every sink.
    Output { line: &'a str },
    /// What the work is doing (a server starting, data prepared, a point's figures).
    Note { line: &'a str },
    /// Something went wrong that the work goes on past.
    Warning { line: &'a str },
    /// Something failed: a point, or the run.
    Error { line: &'a str },
    /// The work ahead is `points` points in all (those done included), each about
    /// `seconds_each` of measuring. Said at the start and whenever the plan shrinks or grows
    /// (a search that ends early, a paired point that decides).
    Planned { points: u64, seconds_each: f64 },
    /// A point starts (a slice of a paired point is not a point).
    PointStarted { point: &'a str },
    /// A point's record was written: one step of the plan done.
    PointKept { point: &'a str, status: &'a str },
    /// One of a running point's interval lines, sysbench's `[ 1s ] thds: …`.
    Interval { point: &'a str, line: &'a str },
    /// The measuring is over (a bar goes away).
    Finished,
}

/// Where events go. Shared by the work's tasks, so `Sync`; a sink that cannot write (a
/// closed pipe) drops the event: the results directory is the record, not the terminal.
pub trait Events: Send + Sync {
    fn emit(&self, e: Event<'_>);
}

impl dyn Events + '_ {
    pub fn output(&self, line: &str) {
        self.emit(Event::Output { line })
    }

    pub fn note(&self, line: &str) {
        self.emit(Event::Note { line })
    }

    pub fn warn(&self, line: &str) {
        self.emit(Event::Warning { line })
    }

    pub fn error(&self, line: &str) {
        self.emit(Event::Error { line })
    }

    /// Every line of a text as output (a rendered table, a summary).
    pub fn output_text(&self, text: &str) {
        for line in text.lines() {
            self.output(line);
        }
    }
}

/// Events kept in memory, for tests and for callers that want the lines themselves.
#[derive(Default)]
pub struct Collect(pub std::sync::Mutex<Vec<String>>);

impl Events for Collect {
    fn emit(&self, e: Event<'_>) {
        let line = serde_json::to_string(&e).unwrap_or_default();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_as_one_tagged_object_each() {
        let c = Collect::default();
        let ev: &dyn Events = &c;
        ev.warn("closing a: gone");
        ev.emit(Event::Planned {
            points: 7,
            seconds_each: 2.5,
        });
        ev.emit(Event::Finished);
        let got = c.0.lock().unwrap().clone();
        assert_eq!(
            got,
            [
                r#"{"event":"warning","line":"closing a: gone"}"#,
                r#"{"event":"planned","points":7,"seconds_each":2.5}"#,
                r#"{"event":"finished"}"#,
            ]
        );
    }
}
