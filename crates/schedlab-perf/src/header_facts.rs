//! What perf wrote about the recording in the file's header: the perf version, the machine,
//! perf's command line, the clock of the sample times and, on hybrid machines, which CPUs
//! belong to which core PMU.
//!
//! None of it is needed to decode the records, but a trace read far from where it was recorded
//! must say where it came from, and its clock decides whether its times line up with anything
//! else: schedlab's runner, samplers and process stamps use CLOCK_MONOTONIC, and perf only does
//! when recorded with `-k CLOCK_MONOTONIC`.

use linux_perf_data::linux_perf_event_reader::PerfClock;
use linux_perf_data::{Feature, PerfFile};

use crate::le::u32_at;

/// The recording's facts, each `None` when the file does not carry it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeaderFacts {
    pub perf_version: Option<String>,
    pub hostname: Option<String>,
    pub os_release: Option<String>,
    pub arch: Option<String>,
    pub cpu_desc: Option<String>,
    /// perf's arguments joined by spaces.
    pub cmdline: Option<String>,
    pub nr_cpus_online: Option<u32>,
    pub nr_cpus_available: Option<u32>,
    /// `cpu_core: 0-15; cpu_atom: 16-23` from HEADER_HYBRID_TOPOLOGY.
    pub hybrid_pmus: Option<String>,
    /// Per CPU number, its core id and socket (package) id from HEADER_CPU_TOPOLOGY (empty when
    /// the perf that recorded wrote only the sibling lists, before Linux 4.17's perf).
    pub cpu_ids: Vec<(i32, i32)>,
}

impl HeaderFacts {
    /// Reads the facts; a damaged optional section is left out rather than failing the file.
    pub(crate) fn read(file: &PerfFile) -> HeaderFacts {
        let text = |s: Result<Option<&str>, _>| s.ok().flatten().map(str::to_owned);
        let nr_cpus = file.nr_cpus().ok().flatten();
        HeaderFacts {
            perf_version: text(file.perf_version()),
            hostname: text(file.hostname()),
            os_release: text(file.os_release()),
            arch: text(file.arch()),
            cpu_desc: text(file.cpu_desc()),
            cmdline: (cmdline_count_fits(file))
                .then(|| file.cmdline().ok().flatten())
                .flatten()
                .map(|args| args.join(" ")),
            nr_cpus_online: nr_cpus.as_ref().map(|n| n.nr_cpus_online),
            nr_cpus_available: nr_cpus.as_ref().map(|n| n.nr_cpus_available),
            hybrid_pmus: (file.feature_section_data(Feature::HYBRID_TOPOLOGY))
                .and_then(hybrid_topology),
            cpu_ids: (file.feature_section_data(Feature::CPU_TOPOLOGY))
                .zip(nr_cpus.as_ref())
                .and_then(|(section, n)| cpu_ids(section, n.nr_cpus_available))
                .unwrap_or_default(),
        }
    }
}

/// Whether the CMDLINE section's argument count fits its bytes (at least 4 a string). The
/// linux-perf-data reader allocates for the count the section claims before reading it, so a
/// damaged count aborted the process (a mutated recording in the fuzz test claimed 62 GB).
/// Counts are read little-endian: a big-endian file's command line is left out, not misread.
fn cmdline_count_fits(file: &PerfFile) -> bool {
    (file.feature_section_data(Feature::CMDLINE))
        .is_some_and(|s| u32_at(s, 0).is_some_and(|count| count as usize <= (s.len() - 4) / 4))
}

/// The clock of a sample time as a name: `CLOCK_MONOTONIC` and its kin, or `perf` for perf's
/// default (the kernel's local clock, which no other tool reads).
pub(crate) fn clock_name(clock: PerfClock) -> String {
    match clock {
        PerfClock::Default => "perf".into(),
        PerfClock::ClockId(id) => {
            let name = format!("{id:?}");
            // `MonotonicRaw` → `CLOCK_MONOTONIC_RAW`, as clock_gettime(2) names them.
            let mut out = String::from("CLOCK");
            for c in name.chars() {
                if c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_uppercase());
            }
            out
        }
    }
}

/// A run of perf_header_strings (a u32 length, then that many bytes, NUL-padded) from `at`.
struct HeaderStrings<'a> {
    section: &'a [u8],
    at: usize,
}

impl HeaderStrings<'_> {
    fn u32(&mut self) -> Option<u32> {
        let value = u32_at(self.section, self.at)?;
        self.at += 4;
        Some(value)
    }

    fn string(&mut self) -> Option<String> {
        let len = self.u32()? as usize;
        let bytes = self.section.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }
}

/// HEADER_HYBRID_TOPOLOGY: a u32 count, then per core PMU two perf_header_strings: the PMU's
/// name and its CPU list.
fn hybrid_topology(section: &[u8]) -> Option<String> {
    let mut strings = HeaderStrings { section, at: 0 };
    let count = strings.u32()? as usize;
    let mut nodes = Vec::new();
    for _ in 0..count.min(64) {
        let pmu = strings.string()?;
        let cpus = strings.string()?;
        nodes.push(format!("{pmu}: {cpus}"));
    }
    (!nodes.is_empty()).then(|| nodes.join("; "))
}

/// HEADER_CPU_TOPOLOGY: the core sibling lists and the thread sibling lists (each a u32 count of
/// perf_header_strings), then, since Linux 4.17's perf, a (core id, socket id) u32 pair per
/// available CPU; `None` when the pairs are not there.
fn cpu_ids(section: &[u8], nr_cpus: u32) -> Option<Vec<(i32, i32)>> {
    let mut strings = HeaderStrings { section, at: 0 };
    for _ in 0..2 {
        let lists = strings.u32()?;
        for _ in 0..lists.min(1 << 16) {
            strings.string()?;
        }
    }
    (0..nr_cpus.min(1 << 16))
        .map(|_| Some((strings.u32()? as i32, strings.u32()? as i32)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linux_perf_data::linux_perf_event_reader::ClockId;

    /// A section laid out as perf's write_hybrid_topology writes it (strings padded to 8 here;
    /// perf pads to 64, which the reader does not depend on).
    fn section(nodes: &[(&str, &str)]) -> Vec<u8> {
        let mut out = (nodes.len() as u32).to_le_bytes().to_vec();
        for text in nodes.iter().flat_map(|(pmu, cpus)| [pmu, cpus]) {
            let padded = (text.len() + 1).next_multiple_of(8);
            out.extend((padded as u32).to_le_bytes());
            out.extend(text.as_bytes());
            out.resize(out.len() + padded - text.len(), 0);
        }
        out
    }

    #[test]
    fn hybrid_topology_lists_each_core_pmu_with_its_cpus() {
        let bytes = section(&[("cpu_core", "0-15"), ("cpu_atom", "16-23")]);
        assert_eq!(
            hybrid_topology(&bytes).as_deref(),
            Some("cpu_core: 0-15; cpu_atom: 16-23")
        );
    }

    #[test]
    fn a_cut_hybrid_topology_is_left_out() {
        let bytes = section(&[("cpu_core", "0-15"), ("cpu_atom", "16-23")]);
        for len in 0..bytes.len() - 8 {
            assert_eq!(hybrid_topology(&bytes[..len]), None, "cut at {len}");
        }
    }

    /// A section laid out as perf's write_cpu_topology writes it: core siblings, thread
    /// siblings, then core and socket id per CPU.
    fn topology_section(cores: &[&str], threads: &[&str], ids: &[(u32, u32)]) -> Vec<u8> {
        let strings = |list: &[&str]| {
            let mut out = (list.len() as u32).to_le_bytes().to_vec();
            for text in list {
                let padded = (text.len() + 1).next_multiple_of(8);
                out.extend((padded as u32).to_le_bytes());
                out.extend(text.as_bytes());
                out.resize(out.len() + padded - text.len(), 0);
            }
            out
        };
        let mut out = strings(cores);
        out.extend(strings(threads));
        for (core, socket) in ids {
            out.extend(core.to_le_bytes());
            out.extend(socket.to_le_bytes());
        }
        out
    }

    #[test]
    fn cpu_topology_gives_each_cpus_core_and_socket() {
        let bytes = topology_section(&["0-3"], &["0-1", "2-3"], &[(0, 0), (0, 0), (1, 0), (1, 0)]);
        assert_eq!(
            cpu_ids(&bytes, 4),
            Some(vec![(0, 0), (0, 0), (1, 0), (1, 0)])
        );
        // An old perf wrote the sibling lists only.
        let old = topology_section(&["0-3"], &["0-1", "2-3"], &[]);
        assert_eq!(cpu_ids(&old, 4), None);
    }

    #[test]
    fn clocks_are_named_as_clock_gettime_names_them() {
        assert_eq!(clock_name(PerfClock::Default), "perf");
        assert_eq!(
            clock_name(PerfClock::ClockId(ClockId::Monotonic)),
            "CLOCK_MONOTONIC"
        );
        assert_eq!(
            clock_name(PerfClock::ClockId(ClockId::MonotonicRaw)),
            "CLOCK_MONOTONIC_RAW"
        );
        assert_eq!(
            clock_name(PerfClock::ClockId(ClockId::Boottime)),
            "CLOCK_BOOTTIME"
        );
    }
}
