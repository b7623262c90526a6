//! Progress bars (indicatif) for collection and parsing, hidden when stderr is not a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// When each run of a collection starts, by the pipeline's durations: each run's expected
/// length, and its cooldown before it (the first run has none). The collection's bar follows
/// it, so that its time left is that of every run still to collect, not of the current one.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Each run's start and end.
    spans: Vec<(Duration, Duration)>,
    total: Duration,
}

impl Schedule {
    /// `runs`: each run's expected length and cooldown, in the order they are collected;
    /// `None` when a length is not known in advance.
    pub fn new(runs: &[(Option<Duration>, Option<Duration>)]) -> Option<Schedule> {
        let mut spans = Vec::with_capacity(runs.len());
        let mut at = Duration::ZERO;
        for (i, (length, cooldown)) in runs.iter().enumerate() {
            if i > 0 {
                at += cooldown.unwrap_or_default();
            }
            let start = at;
            at += (*length)?;
            spans.push((start, at));
        }
        Some(Schedule { spans, total: at })
    }

    pub fn total(&self) -> Duration {
        self.total
    }

    /// Where the collection is `elapsed` into run `run` (from 0): never past the run's own end,
    /// so a run that overruns its length holds the bar rather than eat into the next.
    pub fn position(&self, run: usize, elapsed: Duration) -> Duration {
        let (start, end) = self.spans[run];
        (start + elapsed).min(end)
    }
}

/// The bar of a whole collection: `run i of N`, the elapsed time, and the time left by the
/// [`Schedule`] (a spinner without one).
pub fn collect_bar(schedule: Option<&Schedule>) -> ProgressBar {
    let Some(schedule) = schedule else {
        return spinner("collect");
    };
    let template = "{prefix:>24} [{bar:30}] {elapsed_precise} elapsed, {eta} left  {msg}";
    let bar = bar("collect", schedule.total().as_millis() as u64, template);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_counts_every_run_and_cooldown_still_to_come() {
        let s = |secs: u64| Some(Duration::from_secs(secs));
        let schedule = Schedule::new(&[(s(10), s(5)), (s(20), s(5)), (s(10), None)]).unwrap();
        assert_eq!(schedule.total(), Duration::from_secs(10 + 5 + 20 + 10));
        assert_eq!(
            schedule.position(0, Duration::from_secs(4)),
            Duration::from_secs(4)
        );
        // A run that overruns holds at its end; the next starts after its cooldown.
        assert_eq!(
            schedule.position(0, Duration::from_secs(12)),
            Duration::from_secs(10)
        );
        assert_eq!(
            schedule.position(1, Duration::ZERO),
            Duration::from_secs(15)
        );
        assert_eq!(
            schedule.position(2, Duration::from_secs(30)),
            Duration::from_secs(45)
        );
        assert_eq!(Schedule::new(&[(s(10), None), (None, None)]), None);
        assert_eq!(Schedule::new(&[]).unwrap().total(), Duration::ZERO);
    }
}
