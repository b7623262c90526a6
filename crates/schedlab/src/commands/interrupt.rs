//! Ctrl-C and SIGTERM: the first stops what runs (each command says how), a second exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::EXIT_INTERRUPTED;

/// The first Ctrl-C or SIGTERM sets `flag` (the runner then stops workloads and monitors, or
/// stops after the running stage); a second exits at once.
pub fn stop_on_interrupt(flag: &Arc<AtomicBool>, what_happens: &'static str) -> anyhow::Result<()> {
    // One handler per process; `compare --against` runs two pipelines' analyses, each with its
    // own flag, so every flag registered is set, and the latest says what happens.
    static WATCHED: Mutex<Vec<(Arc<AtomicBool>, &'static str)>> = Mutex::new(Vec::new());
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let watched = || {
        WATCHED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    watched().push((flag.clone(), what_happens));
    let installed = INSTALLED.get_or_init(|| {
        ctrlc::set_handler(move || {
            let watched = watched();
            let again = (watched.iter()).fold(false, |again, (flag, _)| {
                flag.swap(true, Ordering::SeqCst) || again
            });
            if again {
                eprintln!("schedlab: second interrupt, exiting now");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            let what = watched.last().map_or("stopping", |(_, what)| what);
            eprintln!("schedlab: interrupted: {what}…");
        })
        .map_err(|err| err.to_string())
    });
    installed
        .clone()
        .map_err(|err| anyhow::anyhow!("cannot install the Ctrl-C handler: {err}"))
}
