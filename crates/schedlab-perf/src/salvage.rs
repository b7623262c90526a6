//! Salvaging a perf.data file that perf refuses: one cut short (an interrupted copy, a full
//! disk) or one whose recording perf did not finish (killed, so the header's data size is
//! still 0).
//!
//! perf writes the header and the event attributes first, then the records as they come, and
//! only when it exits the data size and, after the records, the feature sections: the event
//! names, the machine, the CPU count and the tracepoint formats (TRACING_DATA). In a damaged
//! file the attributes are therefore intact, the records are intact up to the damage, and the
//! feature sections are partly or wholly gone. A salvaged read takes the records up to the last
//! complete one and the feature sections that lie wholly in the file. When the tracepoint
//! formats are gone, those of the running kernel's tracefs stand in, matched by the tracepoint
//! id each attribute names: right when the file was recorded on this kernel since its last boot,
//! which is where a killed recording is usually salvaged; the quality table says so.

use std::path::{Path, PathBuf};

use linux_perf_data::Feature;

use crate::error::PerfError;
use crate::framing::Damage;
use crate::le::u64_at;
use crate::metadata::{Attr, Tracepoint};
use crate::tracefmt::{Format, parse_format};

/// Where tracefs is mounted, in the order tried.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// What survives of a damaged file.
#[derive(Debug)]
pub(crate) struct Cut {
    /// The file's length.
    len: u64,
    /// End of the records to read: the file's end when the data section is cut or unfinished.
    pub data_end: u64,
    /// perf did not finish the file (the header's data size is 0).
    unfinished: bool,
    /// The records are all there and the cut is among the feature sections after them.
    records_whole: bool,
    /// Feature sections the header announces that are missing or cut.
    missing: Vec<Feature>,
    /// Where the first missing feature section (or its table entry) begins, when the records
    /// are whole: the unreadable bytes start there.
    features_lost_from: Option<u64>,
    /// Feature sections wholly in the file, as (bit, offset, size).
    kept: Vec<(u32, u64, u64)>,
}

/// How a file was salvaged, for the quality table.
#[derive(Debug)]
pub(crate) struct Salvaged {
    pub cut: Cut,
    /// The tracefs directory whose formats stood in for the lost TRACING_DATA.
    pub formats_from: Option<PathBuf>,
}

impl Cut {
    /// Finds what survives, from the header's data section and feature bits.
    pub(crate) fn find(file: &[u8], data_start: u64, data_size: u64) -> Cut {
        let len = file.len() as u64;
        let bits: Vec<u32> = (0..256u32)
            .filter(|bit| {
                let word = u64_at(file, 72 + (bit / 64) as usize * 8).unwrap_or(0);
                word & (1 << (bit % 64)) != 0
            })
            .collect();
        let data_end = data_start.saturating_add(data_size);
        if data_size == 0 || data_end > len {
            // The records run to the end of the file; no feature section was written after
            // them, or it was cut off with them.
            return Cut {
                len,
                data_end: len,
                unfinished: data_size == 0,
                records_whole: false,
                missing: bits.into_iter().map(Feature).collect(),
                features_lost_from: None,
                kept: Vec::new(),
            };
        }
        let (mut kept, mut missing, mut lost_from) = (Vec::new(), Vec::new(), None::<u64>);
        for (k, bit) in bits.into_iter().enumerate() {
            let entry = data_end + 16 * k as u64;
            let section = (u64_at(file, entry as usize).zip(u64_at(file, entry as usize + 8)))
                .filter(|_| entry + 16 <= len);
            match section {
                Some((off, size)) if off.checked_add(size).is_some_and(|end| end <= len) => {
                    kept.push((bit, off, size));
                }
                _ => {
                    missing.push(Feature(bit));
                    let from = section.map_or(entry, |(off, _)| off.min(len));
                    lost_from = Some(lost_from.map_or(from, |f| f.min(from)));
                }
            }
        }
        Cut {
            len,
            data_end,
            unfinished: false,
            records_whole: true,
            missing,
            features_lost_from: lost_from,
            kept,
        }
    }

    /// A copy of the file's metadata that linux-perf-data and the checks read as a complete
    /// file: the bytes before the data section (header, attributes and their ids), an empty data
    /// section, and after it a feature table of the sections that survived, each copied behind.
    pub(crate) fn view(&self, file: &[u8], data_start: u64) -> Vec<u8> {
        let mut view = file[..data_start as usize].to_vec();
        view[48..56].fill(0);
        view[72..104].fill(0);
        for &(bit, _, _) in &self.kept {
            view[72 + (bit / 64) as usize * 8 + (bit % 64 / 8) as usize] |= 1 << (bit % 8);
        }
        let mut at = data_start + 16 * self.kept.len() as u64;
        for &(_, _, size) in &self.kept {
            view.extend(at.to_le_bytes());
            view.extend(size.to_le_bytes());
            at += size;
        }
        for &(_, off, size) in &self.kept {
            view.extend(&file[off as usize..(off + size) as usize]);
        }
        view
    }

    /// Refuses a salvage whose records cannot be decoded: without the file's tracepoint formats,
    /// sched_switch must have been matched in the running kernel's tracefs.
    pub(crate) fn check_events(
        &self,
        path: &Path,
        attrs: &[Attr],
        ids: &[u64],
        formats_from: Option<&Path>,
    ) -> Result<(), PerfError> {
        if attrs
            .iter()
            .any(|a| matches!(a.tracepoint, Some(Tracepoint::Switch { .. })))
        {
            return Ok(());
        }
        let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
        let tracefs = match formats_from {
            Some(dir) => format!(
                "{} has no sched_switch with any of the ids the file's events use ({})",
                dir.display(),
                ids.join(", ")
            ),
            None => format!("no tracefs is mounted (tried {})", TRACEFS.join(", ")),
        };
        Err(PerfError::Malformed {
            path: path.to_path_buf(),
            offset: self.data_end,
            what: format!(
                "cannot salvage: the tracepoint formats (TRACING_DATA, which perf writes after the records) are lost, and {tracefs}, so the records cannot be decoded"
            ),
            hint: "salvage on the machine that recorded the file, before it reboots, with tracefs mounted (`mount -t tracefs nodev /sys/kernel/tracing`)",
        })
    }
}

impl Salvaged {
    /// The quality notes: what could not be read and what was lost, and where the tracepoint
    /// formats came from. `damage` is where the framer stopped, if before the end of the file.
    pub(crate) fn notes(&self, file: &str, damage: Option<&Damage>) -> Vec<String> {
        let cut = &self.cut;
        let len = cut.len;
        let why = if cut.unfinished {
            "perf did not finish the file (the header's data size is 0: perf was killed, or the disk filled up)"
        } else if cut.records_whole {
            "the file is cut short after its records, among the feature sections"
        } else {
            "the file is cut short inside its records"
        };
        let from = (damage.map(|d| d.offset))
            .or(cut.features_lost_from)
            .unwrap_or(len);
        let unread = match damage {
            Some(d) => format!(
                "{} bytes from byte {from} to the end could not be read ({}), so the tables stop at the last complete record",
                len - from,
                d.what
            ),
            None if cut.records_whole => format!(
                "every record was read; {} bytes of feature sections from byte {from} to the end could not be read",
                len - from
            ),
            None => "0 bytes could not be read (the file ends with a complete record)".to_string(),
        };
        let lost: Vec<String> = cut.missing.iter().map(Feature::to_string).collect();
        let lost = if lost.is_empty() {
            String::new()
        } else {
            format!(
                "; lost: {} (so the machine, perf version, command line and CPU count are unknown where they are listed)",
                lost.join(", ")
            )
        };
        let mut notes = vec![format!("{file}: salvaged: {why}; {unread}{lost}")];
        if let Some(dir) = &self.formats_from {
            notes.push(format!(
                "{file}: the tracepoint formats (TRACING_DATA) were lost with the file's end; the running kernel's formats from {}/events/sched were used, matched by tracepoint id: right only if the file was recorded on this kernel since its last boot",
                dir.display()
            ));
        }
        notes
    }
}

/// The formats of the running kernel's sched tracepoints whose ids are among `ids`, and the
/// tracefs directory they came from (`None` when no tracefs is mounted).
pub(crate) fn tracefs_formats(ids: &[u64]) -> (Option<PathBuf>, Vec<Format>) {
    let Some(dir) = (TRACEFS.iter().map(PathBuf::from)).find(|d| d.join("events/sched").is_dir())
    else {
        return (None, Vec::new());
    };
    let formats = std::fs::read_dir(dir.join("events/sched"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("format")).ok())
        .filter_map(|text| parse_format("sched", &text).ok())
        .filter(|f| ids.contains(&f.id))
        .collect();
    (Some(dir), formats)
}
