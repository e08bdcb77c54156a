//! How a command's events show (`--progress`): a bar with lines above it on a terminal, plain
//! lines in a pipe or a cron log, only the answer and the problems (`quiet`), or one JSON
//! object per line for a program watching the run.

use crate::pipeline::events::{Event, Events};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

/// `--progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// A bar on a terminal, plain lines otherwise.
    Auto,
    Bar,
    Plain,
    /// The answer (summary, gate) and the problems only: for cron.
    Quiet,
    /// One JSON object per event on standard output.
    Json,
}

/// The sink a style asks for.
pub fn sink(style: Style) -> Box<dyn Events> {
    match style {
        Style::Auto if std::io::stderr().is_terminal() => Box::new(Bar::default()),
        Style::Auto | Style::Plain => Box::new(Plain { quiet: false }),
        Style::Bar => Box::new(Bar::default()),
        Style::Quiet => Box::new(Plain { quiet: true }),
        Style::Json => Box::new(Json {
            start: std::time::Instant::now(),
        }),
    }
}

/// A line on standard output; a closed pipe drops it (the run's files are the record).
fn out(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn err(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Plain lines: the answer, notes and interval lines on stdout, problems on stderr.
struct Plain {
    quiet: bool,
}

impl Events for Plain {
    fn emit(&self, e: Event<'_>) {
        match e {
            Event::Output { line } => out(line),
            Event::Warning { line } => err(&format!("warning: {line}")),
            Event::Error { line } => err(&format!("error: {line}")),
            Event::Note { line } | Event::Interval { line, .. } if !self.quiet => out(line),
            _ => {}
        }
    }
}

/// A progress bar on stderr, every line printed above it; the bar appears with the plan's
/// first `Planned` and goes at `Finished`.
#[derive(Default)]
struct Bar(Mutex<Option<ProgressBar>>);

impl Bar {
    fn new_bar(points: u64, seconds_each: f64) -> ProgressBar {
        let bar = ProgressBar::new(points);
        // What is left to measure by the plan, not indicatif's rate estimate, which swung
        // with every server start and prepare.
        bar.set_style(
            ProgressStyle::with_template(
                "[{elapsed_precise}] {bar:30} {pos}/{len} points, about {left} of measuring left {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "left",
                move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let left = s.len().unwrap_or(0).saturating_sub(s.pos()) as f64 * seconds_each;
                    let _ = write!(
                        w,
                        "{}",
                        crate::pipeline::plan::format_duration(left.ceil() as u64)
                    );
                },
            ),
        );
        bar
    }
}

impl Events for Bar {
    fn emit(&self, e: Event<'_>) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let above = |held: &Option<ProgressBar>, line: &str, plain: fn(&str)| match held {
            Some(b) => b.println(line),
            None => plain(line),
        };
        match e {
            Event::Output { line } => match held.as_ref() {
                Some(b) => b.suspend(|| out(line)),
                None => out(line),
            },
            Event::Note { line } | Event::Interval { line, .. } => above(&held, line, out),
            Event::Warning { line } => above(&held, &format!("warning: {line}"), err),
            Event::Error { line } => above(&held, &format!("error: {line}"), err),
            Event::Planned {
                points,
                seconds_each,
            } => match held.as_ref() {
                Some(b) => b.set_length(points),
                None => *held = Some(Bar::new_bar(points, seconds_each)),
            },
            Event::PointStarted { point } => {
                if let Some(b) = held.as_ref() {
                    b.set_message(point.to_string());
                }
            }
            Event::PointKept { .. } => {
                if let Some(b) = held.as_ref() {
                    b.inc(1);
                }
            }
            Event::Finished => {
                if let Some(b) = held.take() {
                    b.finish_and_clear();
                }
            }
        }
    }
}

/// One JSON object per line on stdout, each with the seconds since the command started.
struct Json {
    start: std::time::Instant,
}

#[derive(serde::Serialize)]
struct Stamped<'a> {
    t_s: f64,
    #[serde(flatten)]
    event: Event<'a>,
}

impl Events for Json {
    fn emit(&self, event: Event<'_>) {
        let t_s = (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        if let Ok(line) = serde_json::to_string(&Stamped { t_s, event }) {
            out(&line);
        }
    }
}
