//! How a sweep speaks while it runs: a line above the progress bar on a terminal, a plain
//! line otherwise. Every part of the sweep prints through here.

use indicatif::ProgressBar;

/// Prints above the progress bar on a terminal, plainly otherwise (cron, pipes, CI), where
/// the bar itself is hidden.
pub fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        println!("{line}");
    } else {
        bar.println(line);
    }
}
