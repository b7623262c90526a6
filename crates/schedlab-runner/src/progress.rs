//! Progress bars (indicatif) for collection and parsing, hidden when stderr is not a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar for one run's collection: elapsed and remaining time when the run's length is known.
pub fn collect_bar(run_id: &str, expected: Option<Duration>) -> ProgressBar {
    let Some(total) = expected else {
        return spinner(run_id);
    };
    let template = "{prefix:>24} [{bar:30}] {elapsed_precise} elapsed, {eta} left  {msg}";
    let bar = bar(run_id, total.as_millis() as u64, template);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A bar over bytes (perf.data read), with the time left.
pub fn bytes_bar(what: &str, total: u64) -> ProgressBar {
    let template =
        "{prefix:>24} [{bar:30}] {bytes}/{total_bytes} {elapsed_precise} elapsed, {eta} left";
    bar(what, total, template)
}

/// A spinner with the elapsed time, for work whose length is not known in advance.
pub fn spinner(what: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{prefix:>24} {spinner} {elapsed_precise} elapsed  {msg}")
            .expect("valid template"),
    );
    bar.set_prefix(what.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A bar over a count of items (runs parsed).
pub fn count_bar(what: &str, total: u64) -> ProgressBar {
    bar(
        what,
        total,
        "{prefix:>24} [{bar:30}] {pos}/{len} {elapsed_precise}",
    )
}

/// A bar of `len` steps drawn with `template`, labelled `what`.
fn bar(what: &str, len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len).with_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(what.to_owned());
    bar
}
