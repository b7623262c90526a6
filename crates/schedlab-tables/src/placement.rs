//! A thread's /proc placement samples, walked in time order with the CPU time gained between
//! them: what every estimate from placement samples (CPUs per phase, the CPU timeline) reads.

use std::collections::BTreeMap;

use crate::PlacementRow;

/// One sample of a thread and what the thread gained since its previous sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gain<'a> {
    /// The thread's sample before this one (`None` at its first).
    pub previous: Option<&'a PlacementRow>,
    pub sample: &'a PlacementRow,
    /// CPU time since `previous`; at the first sample, or when the counter went down (a new
    /// thread reused the id), the whole counter.
    pub gained_ns: i64,
}

/// Every sample of `samples`, per thread (pid, tid) and in time order, with its gain.
pub fn gains<'a>(samples: impl IntoIterator<Item = &'a PlacementRow>) -> Vec<Gain<'a>> {
    let mut threads: BTreeMap<(i32, i32), Vec<&PlacementRow>> = BTreeMap::new();
    for sample in samples {
        threads
            .entry((sample.pid, sample.tid))
            .or_default()
            .push(sample);
    }
    let mut out = Vec::new();
    for samples in threads.values_mut() {
        samples.sort_by_key(|s| s.time_ns);
        let mut previous: Option<&PlacementRow> = None;
        for &sample in samples.iter() {
            let counted = previous.map_or(0, |p| p.cpu_time_ns);
            let gained_ns = match sample.cpu_time_ns - counted {
                gained if gained >= 0 => gained,
                _ => sample.cpu_time_ns,
            };
            out.push(Gain {
                previous,
                sample,
                gained_ns,
            });
            previous = Some(sample);
        }
    }
    out
}
