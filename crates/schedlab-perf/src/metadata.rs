//! The file header, event attributes and feature sections: everything needed before the first
//! record can be decoded.
//!
//! linux-perf-data parses the attributes and feature sections. Before handing it the bytes, the
//! header and the section table are checked against the file length here, so a truncated or
//! damaged file gives an error with a byte offset instead of a huge allocation or a short read
//! deep inside the library. A file cut short or left unfinished by perf is refused with a hint,
//! or, when the caller asks, read from what survives (see `salvage`).

use std::borrow::Cow;
use std::io::Cursor;
use std::path::Path;

use linux_perf_data::linux_perf_event_reader::{AttrFlags, PerfEventType};
use linux_perf_data::{Feature, PerfFile, PerfFileReader};

use crate::error::PerfError;
use crate::header_facts::{HeaderFacts, clock_name};
use crate::le::{u32_at, u64_at};
use crate::salvage::{Cut, Salvaged, tracefs_formats};
use crate::task_state::TaskStates;
use crate::tracefmt::{Field, Format, parse_tracing_data};

const HEADER_LEN: u64 = 104;
const FEATURE_BITS: u32 = 256;
/// Event ids below this are looked up in a table rather than by binary search.
const DENSE_IDS: u64 = 1 << 16;
const HINT_DAMAGED: &str = "the header is damaged: copy the file again or re-record";

pub(crate) const SAMPLE_IP: u64 = 1 << 0;
pub(crate) const SAMPLE_TID: u64 = 1 << 1;
pub(crate) const SAMPLE_TIME: u64 = 1 << 2;
pub(crate) const SAMPLE_ADDR: u64 = 1 << 3;
pub(crate) const SAMPLE_READ: u64 = 1 << 4;
pub(crate) const SAMPLE_CALLCHAIN: u64 = 1 << 5;
pub(crate) const SAMPLE_ID: u64 = 1 << 6;
pub(crate) const SAMPLE_CPU: u64 = 1 << 7;
pub(crate) const SAMPLE_PERIOD: u64 = 1 << 8;
pub(crate) const SAMPLE_STREAM_ID: u64 = 1 << 9;
pub(crate) const SAMPLE_RAW: u64 = 1 << 10;
pub(crate) const SAMPLE_IDENTIFIER: u64 = 1 << 16;

const READ_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const READ_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const READ_ID: u64 = 1 << 2;
const READ_GROUP: u64 = 1 << 3;
const READ_LOST: u64 = 1 << 4;

/// Where the fields this reader needs sit in a sample record and in the `sample_id_all`
/// trailer of other records, derived from `sample_type`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub sample_type: u64,
    read_format: u64,
    /// Offsets within a sample body (after the 8-byte record header).
    pub id: Option<usize>,
    pub tid: Option<usize>,
    pub time: Option<usize>,
    pub cpu: Option<usize>,
    /// End of the fixed-size fields; READ, CALLCHAIN and RAW follow in that order.
    fixed_end: usize,
    /// Whether non-sample records carry the trailer at all.
    pub sample_id_all: bool,
    /// Trailer length and offsets within the trailer.
    pub trailer_len: usize,
    pub t_tid: Option<usize>,
    pub t_time: Option<usize>,
    pub t_cpu: Option<usize>,
}

impl Layout {
    fn new(sample_type: u64, read_format: u64, sample_id_all: bool) -> Layout {
        let has = |bit| sample_type & bit != 0;
        let mut pos = 0;
        let at = |bit, pos: &mut usize| {
            if has(bit) {
                let p = *pos;
                *pos += 8;
                Some(p)
            } else {
                None
            }
        };
        let identifier = at(SAMPLE_IDENTIFIER, &mut pos);
        at(SAMPLE_IP, &mut pos);
        let tid = at(SAMPLE_TID, &mut pos);
        let time = at(SAMPLE_TIME, &mut pos);
        at(SAMPLE_ADDR, &mut pos);
        let id = at(SAMPLE_ID, &mut pos);
        at(SAMPLE_STREAM_ID, &mut pos);
        let cpu = at(SAMPLE_CPU, &mut pos);
        at(SAMPLE_PERIOD, &mut pos);
        let fixed_end = pos;

        let mut t = 0;
        let t_tid = at(SAMPLE_TID, &mut t);
        let t_time = at(SAMPLE_TIME, &mut t);
        at(SAMPLE_ID, &mut t);
        at(SAMPLE_STREAM_ID, &mut t);
        let t_cpu = at(SAMPLE_CPU, &mut t);
        at(SAMPLE_IDENTIFIER, &mut t);
        Layout {
            sample_type,
            read_format,
            id: identifier.or(id),
            tid,
            time,
            cpu,
            fixed_end,
            sample_id_all,
            trailer_len: if sample_id_all { t } else { 0 },
            t_tid,
            t_time,
            t_cpu,
        }
    }

    /// The RAW payload of a sample body, walking the variable-size READ and CALLCHAIN parts.
    pub(crate) fn raw<'a>(&self, body: &'a [u8]) -> Option<&'a [u8]> {
        if self.sample_type & SAMPLE_RAW == 0 {
            return None;
        }
        let mut pos = self.fixed_end;
        if self.sample_type & SAMPLE_READ != 0 {
            let rf = self.read_format;
            let extra = |bit| if rf & bit != 0 { 8 } else { 0 };
            if rf & READ_GROUP != 0 {
                let nr = usize::try_from(u64_at(body, pos)?).ok()?;
                let per = 8 + extra(READ_ID) + extra(READ_LOST);
                let values = nr.checked_mul(per)?;
                pos = pos
                    .checked_add(
                        8 + extra(READ_TOTAL_TIME_ENABLED) + extra(READ_TOTAL_TIME_RUNNING),
                    )?
                    .checked_add(values)?;
            } else {
                pos += 8
                    + extra(READ_TOTAL_TIME_ENABLED)
                    + extra(READ_TOTAL_TIME_RUNNING)
                    + extra(READ_ID)
                    + extra(READ_LOST);
            }
        }
        if self.sample_type & SAMPLE_CALLCHAIN != 0 {
            let nr = usize::try_from(u64_at(body, pos)?).ok()?;
            pos = pos.checked_add(8)?.checked_add(nr.checked_mul(8)?)?;
        }
        let size = u32_at(body, pos)? as usize;
        body.get(pos + 4..(pos + 4).checked_add(size)?)
    }
}

/// Which wakeup tracepoint a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    Waking,
    Wakeup,
    WakeupNew,
}

impl WakeKind {
    /// Every kind, in the order of their discriminants (`kind as usize` indexes it).
    pub(crate) const ALL: [WakeKind; 3] = [WakeKind::Waking, WakeKind::Wakeup, WakeKind::WakeupNew];

    pub fn as_str(self) -> &'static str {
        match self {
            WakeKind::Waking => "waking",
            WakeKind::Wakeup => "wakeup",
            WakeKind::WakeupNew => "wakeup_new",
        }
    }
}

/// The sched tracepoints this reader decodes, with their field locations from the file.
#[derive(Debug, Clone, Copy)]
pub enum Tracepoint {
    Switch {
        prev_comm: Field,
        prev_pid: Field,
        prev_state: Field,
        prev_prio: Field,
        next_pid: Field,
        next_prio: Field,
    },
    Wake {
        kind: WakeKind,
        comm: Field,
        pid: Field,
        target_cpu: Option<Field>,
    },
    Migrate {
        comm: Field,
        pid: Field,
        orig_cpu: Field,
        dest_cpu: Field,
    },
    Fork {
        parent_pid: Field,
        child_comm: Field,
        child_pid: Field,
    },
    Exec {
        filename: Field,
        pid: Field,
    },
    Exit {
        pid: Field,
    },
    /// task:task_rename: thread `pid` renamed `newcomm` (by prctl, a kthread's naming or an
    /// exec), as perf's COMM record says where a trace has no such records.
    Rename {
        pid: Field,
        newcomm: Field,
    },
    /// sched_stat_runtime: the kernel's accounting of CPU time a task ran since its last update.
    Runtime {
        pid: Field,
        runtime: Field,
        comm: Field,
    },
}

/// One `perf_event_attr` of the file.
#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub name: String,
    pub layout: Layout,
    pub tracepoint: Option<Tracepoint>,
}

/// What the reader knows before the record stream.
#[derive(Debug)]
pub(crate) struct Metadata {
    pub data_start: u64,
    pub data_end: u64,
    pub attrs: Vec<Attr>,
    /// Event id → attribute index, sorted by id.
    ids: Vec<(u64, usize)>,
    /// The same as a table indexed by id (`u16::MAX`: none), when ids are small, as perf's
    /// are: the lookup runs for every record.
    dense: Vec<u16>,
    /// Where a sample's event id sits, when the file has several attributes.
    pub sample_id_pos: Option<usize>,
    pub nr_cpus_online: Option<u32>,
    /// perf prefers sched_waking over sched_wakeup for the delay when both were recorded.
    pub has_waking: bool,
    /// The file recorded sched_stat_runtime, the kernel's own accounting of CPU time.
    pub has_runtime: bool,
    /// The letters of sched_switch's `prev_state` on the recording kernel.
    pub task_states: TaskStates,
    /// What recorded the file, where.
    pub facts: HeaderFacts,
    /// The clock of the sched_switch sample times (see [`clock_name`]).
    pub clock: String,
    /// How the file was salvaged, when it was damaged and the caller asked to salvage it.
    pub salvaged: Option<Salvaged>,
}

impl Metadata {
    pub(crate) fn attr_of_id(&self, id: u64) -> Option<usize> {
        if self.attrs.len() == 1 {
            return Some(0);
        }
        if !self.dense.is_empty() {
            let i = *self.dense.get(usize::try_from(id).ok()?)?;
            return (i != u16::MAX).then_some(i as usize);
        }
        self.ids
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|k| self.ids[k].1)
    }

    /// Checks the header and its sections against the file's length, then reads the attributes
    /// and feature sections through linux-perf-data and binds the sched tracepoints.
    ///
    /// With `salvage`, a file cut short or left unfinished by perf is read from what survives
    /// (see [`crate::salvage`]); without it, such a file is an error that says so.
    pub(crate) fn read(path: &Path, file: &[u8], salvage: bool) -> Result<Metadata, PerfError> {
        let err = Errors {
            path,
            len: file.len() as u64,
        };
        check_kind(file, &err)?;
        let header = Header::read(file, &err)?;
        let (file, features, cut) = match header.complete(file, &err) {
            Ok(features) => (Cow::Borrowed(file), features, None),
            Err(e) if salvage && e.salvageable() => {
                let cut = Cut::find(file, header.data_start, header.data_size);
                let view = cut.view(file, header.data_start);
                let view_err = Errors {
                    path,
                    len: view.len() as u64,
                };
                let features = Features::read(&view, header.data_start, &view_err)?;
                (Cow::Owned(view), features, Some(cut))
            }
            Err(e) => return Err(e),
        };
        let file: &[u8] = &file;
        let err = Errors {
            path,
            len: file.len() as u64,
        };
        features.check(file, &header, &err)?;

        let reader = PerfFileReader::parse_file(Cursor::new(file)).map_err(|e| {
            err.malformed(
                header.attrs_off,
                format!("cannot read the event attributes: {e}"),
            )
        })?;
        let perf_file = reader.perf_file;
        let facts = HeaderFacts::read(&perf_file);
        let tracing = features.section(file, Feature::TRACING_DATA.0);
        let tracepoints = tracepoint_ids(&perf_file);
        let mut formats_from = None;
        let formats = match (tracing, &cut) {
            (Some((off, data)), _) => parse_tracing_data(data).map_err(|(at, what)| {
                err.malformed(off + at as u64, format!("tracing data: {what}"))
            })?,
            (None, Some(_)) => {
                let (dir, formats) = tracefs_formats(&tracepoints);
                formats_from = dir;
                formats
            }
            (None, None) => Vec::new(),
        };
        let tracing_off = tracing.map_or(0, |s| s.0);

        let attr_ids = |index| header.attr_section_ids(file, index);
        let events = Events::bind(&perf_file, &formats, tracing_off, attr_ids, &err)?;
        if let (Some(cut), None) = (&cut, tracing) {
            cut.check_events(path, &events.attrs, &tracepoints, formats_from.as_deref())?;
        }
        let sample_id_pos = events.check(header.attrs_off, &err)?;
        let Events {
            attrs,
            ids,
            dense,
            clock,
        } = events;
        let has_waking = attrs.iter().any(|a| {
            matches!(
                a.tracepoint,
                Some(Tracepoint::Wake {
                    kind: WakeKind::Waking,
                    ..
                })
            )
        });
        let has_runtime =
            (attrs.iter()).any(|a| matches!(a.tracepoint, Some(Tracepoint::Runtime { .. })));
        let task_states = (formats.iter())
            .find(|f| f.system == "sched" && f.name == "sched_switch")
            .and_then(|f| TaskStates::from_print_fmt(&f.print_fmt))
            .unwrap_or_else(TaskStates::since_4_14);
        Ok(Metadata {
            data_start: header.data_start,
            data_end: cut.as_ref().map_or(header.data_end, |c| c.data_end),
            attrs,
            ids,
            dense,
            sample_id_pos,
            nr_cpus_online: facts.nr_cpus_online,
            has_waking,
            has_runtime,
            task_states,
            facts,
            clock: clock.unwrap_or_else(|| "perf".into()),
            salvaged: cut.map(|cut| Salvaged { cut, formats_from }),
        })
    }
}

/// The errors of one file: each names the file and a byte offset in it.
struct Errors<'a> {
    path: &'a Path,
    /// The file's length, which a truncated section runs past.
    len: u64,
}

impl Errors<'_> {
    fn malformed(&self, offset: u64, what: String) -> PerfError {
        PerfError::Malformed {
            path: self.path.to_path_buf(),
            offset,
            what,
            hint: HINT_DAMAGED,
        }
    }

    /// The file ends before `offset`; `salvageable` when the cut is past the attributes, so
    /// that the records before it can be read.
    fn truncated(&self, offset: u64, what: String, salvageable: bool) -> PerfError {
        PerfError::Truncated {
            path: self.path.to_path_buf(),
            offset,
            len: self.len,
            what,
            salvageable,
        }
    }

    fn unsupported(&self, offset: u64, what: &str, hint: &'static str) -> PerfError {
        PerfError::Unsupported {
            path: self.path.to_path_buf(),
            offset,
            what: what.to_string(),
            hint,
        }
    }
}

/// The header field at byte `off` (0 past the end: callers check the length first).
fn header_u64(file: &[u8], off: usize) -> u64 {
    u64_at(file, off).unwrap_or(0)
}

/// Checks that the file is a little-endian, version 2, file-mode perf.data (not big-endian, not
/// version 1, not pipe mode), each refusal with the way to get one that is.
fn check_kind(file: &[u8], err: &Errors) -> Result<(), PerfError> {
    let magic = file.get(..8).unwrap_or(file);
    match magic {
        b"PERFILE2" => {}
        b"2ELIFREP" => {
            return Err(err.unsupported(
                0,
                "big-endian perf.data",
                "convert it on a big-endian machine with `perf script`, or record on little-endian",
            ));
        }
        b"PERFFILE" => {
            return Err(err.unsupported(
                0,
                "version 1 perf.data (perf before 2.6.3x)",
                "re-record with a current perf",
            ));
        }
        _ if magic.len() < 8 && b"PERFILE2".starts_with(magic) => {
            return Err(err.truncated(err.len, "the 8-byte magic is incomplete".into(), false));
        }
        _ => {
            return Err(PerfError::NotPerfData {
                path: err.path.to_path_buf(),
                magic: format!("{:?}", String::from_utf8_lossy(magic)),
            });
        }
    }
    if err.len >= 16 && header_u64(file, 8) == 16 {
        return Err(err.unsupported(
            8,
            "pipe-mode perf.data (`perf record -o -`)",
            "record to a file: `perf sched record -o FILE`, or `perf inject -i IN -o OUT` to convert",
        ));
    }
    Ok(())
}

/// The header fields the reader uses, checked against the file's length (the data section only
/// by [`Header::complete`]).
struct Header {
    attr_size: u64,
    attrs_off: u64,
    data_start: u64,
    data_size: u64,
    data_end: u64,
}

impl Header {
    fn read(file: &[u8], err: &Errors) -> Result<Header, PerfError> {
        if err.len < HEADER_LEN {
            return Err(err.truncated(
                err.len,
                format!("the header needs {HEADER_LEN} bytes"),
                false,
            ));
        }
        let hdr = |off: usize| header_u64(file, off);
        let attr_size = hdr(16);
        let (attrs_off, attrs_size) = (hdr(24), hdr(32));
        let (data_start, data_size) = (hdr(40), hdr(48));
        if !(64..=4096).contains(&attr_size) {
            return Err(err.malformed(16, format!("attribute size {attr_size} is not plausible")));
        }
        check_section(
            attrs_off,
            attrs_size,
            "the attribute section",
            24,
            false,
            err,
        )?;
        if data_start < HEADER_LEN {
            return Err(err.malformed(
                40,
                format!("data section starts at {data_start}, inside the header"),
            ));
        }
        if data_start > err.len {
            return Err(err.malformed(
                40,
                format!("the data section starts at byte {data_start}, past the end of the file"),
            ));
        }
        let data_end = data_start
            .checked_add(data_size)
            .ok_or_else(|| err.malformed(48, format!("data size {data_size} is impossible")))?;
        Ok(Header {
            attr_size,
            attrs_off,
            data_start,
            data_size,
            data_end,
        })
    }

    /// The event ids of attribute `index` from the attribute section, where each attribute is
    /// followed by the (offset, size) of its id list; empty where that points outside the file.
    fn attr_section_ids(&self, file: &[u8], index: usize) -> Vec<u64> {
        let entry_end = self.attrs_off as usize + (index + 1) * self.attr_size as usize;
        let (Some(off), Some(size)) = (
            u64_at(file, entry_end.wrapping_sub(16)),
            u64_at(file, entry_end.wrapping_sub(8)),
        ) else {
            return Vec::new();
        };
        let Some(list) = (usize::try_from(off).ok())
            .zip(usize::try_from(size).ok())
            .and_then(|(off, size)| file.get(off..off.checked_add(size)?))
        else {
            return Vec::new();
        };
        (list.chunks_exact(8))
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect()
    }

    /// Checks that the data section and the feature sections after it are all in the file and
    /// reads the feature section table. A file cut short or left unfinished by perf fails with
    /// an error that [`PerfError::salvageable`] accepts.
    fn complete(&self, file: &[u8], err: &Errors) -> Result<Features, PerfError> {
        if self.data_end > err.len {
            return Err(err.truncated(
                self.data_start,
                format!(
                    "the data section spans bytes {}..{}",
                    self.data_start, self.data_end
                ),
                true,
            ));
        }
        // perf writes the data size and the feature sections only when it exits normally: a
        // zero size with records after the header and no readable feature table after them is
        // a recording perf did not finish.
        Features::read(file, self.data_end, err).map_err(|e| {
            if self.data_size == 0 && err.len > self.data_start {
                PerfError::Unfinished {
                    path: err.path.to_path_buf(),
                    data_start: self.data_start,
                    records: err.len - self.data_start,
                }
            } else {
                e
            }
        })
    }
}

/// The feature sections the header's bit set announces, as (bit, offset, size), each checked to
/// lie within the file.
struct Features(Vec<(u32, u64, u64)>);

impl Features {
    /// Reads the feature section table, which follows the data: one 16-byte entry per bit set.
    fn read(file: &[u8], data_end: u64, err: &Errors) -> Result<Features, PerfError> {
        let mut table = data_end;
        let mut features = Vec::new();
        for bit in 0..FEATURE_BITS {
            let word = header_u64(file, 72 + (bit / 64) as usize * 8);
            if word & (1 << (bit % 64)) == 0 {
                continue;
            }
            let entry_end = table + 16;
            if entry_end > err.len {
                return Err(err.truncated(
                    table,
                    format!("the feature section table needs bytes up to {entry_end}"),
                    true,
                ));
            }
            let (off, size) = (
                header_u64(file, table as usize),
                header_u64(file, table as usize + 8),
            );
            let what = format!("feature section {bit}");
            check_section(off, size, &what, table, true, err)?;
            features.push((bit, off, size));
            table = entry_end;
        }
        Ok(Features(features))
    }

    /// Feature `bit`'s offset and bytes, if the file has it.
    fn section<'f>(&self, file: &'f [u8], bit: u32) -> Option<(u64, &'f [u8])> {
        (self.0.iter())
            .find(|f| f.0 == bit)
            .map(|&(_, off, size)| (off, &file[off as usize..(off + size) as usize]))
    }

    /// Checks what linux-perf-data would trust (the counts that size its allocations in
    /// EVENT_DESC or the legacy event_types section) and refuses the layouts this reader does
    /// not handle: simpleperf's features and compressed records.
    fn check(&self, file: &[u8], header: &Header, err: &Errors) -> Result<(), PerfError> {
        if let Some((off, desc)) = self.section(file, Feature::EVENT_DESC.0) {
            check_event_desc(desc).map_err(|at| {
                err.malformed(
                    off + at as u64,
                    "the EVENT_DESC section is inconsistent".into(),
                )
            })?;
        } else {
            // Without EVENT_DESC the attributes come from the (legacy) event_types section,
            // whose entries point at id lists: check those too before they size allocations.
            let (off, size) = (header_u64(file, 56), header_u64(file, 64));
            if size != 0 {
                check_section(off, size, "the event_types section", 56, false, err)?;
                check_event_types(file, off, size, header.attr_size).map_err(|at| {
                    err.malformed(at, "an event_types entry points outside the file".into())
                })?;
            }
        }
        if self.0.iter().any(|f| f.0 >= 128) {
            return Err(err.unsupported(
                72,
                "a simpleperf recording",
                "record on Linux with `perf sched record -a -k CLOCK_MONOTONIC -- CMD`",
            ));
        }
        if self.section(file, Feature::COMPRESSED.0).is_some() {
            return Err(err.unsupported(
                0,
                "compressed records (`perf record -z`)",
                "decompress with `perf inject -i IN -o OUT`, or record without -z",
            ));
        }
        Ok(())
    }
}

/// The file's events: each attribute named and, for sched tracepoints, bound to its fields.
struct Events {
    attrs: Vec<Attr>,
    /// Event id → attribute index, sorted by id.
    ids: Vec<(u64, usize)>,
    /// The same as a table indexed by id, when ids are small (see [`Metadata`]).
    dense: Vec<u16>,
    /// The clock of the first sched_switch attribute.
    clock: Option<String>,
}

impl Events {
    /// `attr_ids(index)` gives the ids the attribute section lists for attribute `index`, for
    /// files without EVENT_DESC (linux-perf-data reads ids only from there).
    fn bind(
        perf_file: &PerfFile,
        formats: &[Format],
        tracing_off: u64,
        attr_ids: impl Fn(usize) -> Vec<u64>,
        err: &Errors,
    ) -> Result<Events, PerfError> {
        let mut clock = None;
        let mut attrs = Vec::new();
        let mut ids = Vec::new();
        for (index, desc) in perf_file.event_attributes().iter().enumerate() {
            let a = desc.attributes();
            let layout = Layout::new(
                a.sample_format.bits(),
                a.read_format.bits(),
                a.flags.contains(AttrFlags::SAMPLE_ID_ALL),
            );
            let format = match a.type_ {
                PerfEventType::Tracepoint(config) => formats.iter().find(|f| f.id == config),
                _ => None,
            };
            let name = match (desc.name(), format) {
                (Some(n), _) => n.to_string(),
                (None, Some(f)) => format!("{}:{}", f.system, f.name),
                (None, None) => format!("event{index}"),
            };
            let tracepoint = match format {
                Some(f) if f.system == "sched" => bind(f).map_err(|field| {
                    err.malformed(
                        tracing_off,
                        format!(
                            "the format of sched:{} has no usable field `{field}`",
                            f.name
                        ),
                    )
                })?,
                _ => None,
            };
            if matches!(tracepoint, Some(Tracepoint::Switch { .. })) {
                clock.get_or_insert(clock_name(a.clock));
            }
            let event_ids = match desc.ids() {
                [] => attr_ids(index),
                listed => listed.to_vec(),
            };
            ids.extend(event_ids.into_iter().map(|id| (id, index)));
            attrs.push(Attr {
                name,
                layout,
                tracepoint,
            });
        }
        ids.sort_unstable();
        let dense = dense_ids(&ids, attrs.len());
        Ok(Events {
            attrs,
            ids,
            dense,
            clock,
        })
    }

    /// Checks that the events can be read as a sched trace: a sched_switch among them, sample
    /// ids at one place in every event's samples, and the sample fields the reader needs.
    /// Returns where a sample's id sits, when there are several events.
    fn check(&self, attrs_off: u64, err: &Errors) -> Result<Option<usize>, PerfError> {
        let attrs = &self.attrs;
        if !attrs
            .iter()
            .any(|a| matches!(a.tracepoint, Some(Tracepoint::Switch { .. })))
        {
            let names: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
            return Err(PerfError::NoSchedEvents {
                path: err.path.to_path_buf(),
                events: names.join(", "),
            });
        }
        let sample_id_pos = attrs[0].layout.id;
        if attrs.len() > 1
            && attrs
                .iter()
                .any(|a| a.layout.id != sample_id_pos || a.layout.id.is_none())
        {
            return Err(err.unsupported(
                attrs_off,
                "several events whose samples carry their id at different places",
                "record with `perf sched record` or add `--sample-identifier`",
            ));
        }
        let sample_types_need = SAMPLE_TID | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_RAW;
        if let Some(a) = attrs.iter().find(|a| {
            a.tracepoint.is_some() && a.layout.sample_type & sample_types_need != sample_types_need
        }) {
            return Err(err.unsupported(
                attrs_off,
                &format!("{} samples lack TID, TIME, CPU or RAW", a.name),
                "record with `perf sched record` (it asks for all of them)",
            ));
        }
        Ok(sample_id_pos)
    }
}

/// The tracepoint ids (`perf_event_attr.config`) of the file's tracepoint events.
fn tracepoint_ids(perf_file: &PerfFile) -> Vec<u64> {
    (perf_file.event_attributes().iter())
        .filter_map(|d| match d.attributes().type_ {
            PerfEventType::Tracepoint(config) => Some(config),
            _ => None,
        })
        .collect()
}

/// The id → attribute table indexed by id (`u16::MAX`: none), when the largest id is small
/// enough for one; empty otherwise.
fn dense_ids(ids: &[(u64, usize)], attrs: usize) -> Vec<u16> {
    let Some(&(last, _)) = ids.last() else {
        return Vec::new();
    };
    if last >= DENSE_IDS || attrs >= u16::MAX as usize {
        return Vec::new();
    }
    let mut dense = vec![u16::MAX; last as usize + 1];
    for &(id, index) in ids {
        dense[id as usize] = index as u16;
    }
    dense
}

/// Checks that `[off, off + size)` lies within the file and returns its end; `at` is where the
/// header or table entry that points at the section sits; `salvageable` says whether a file cut
/// inside the section can be salvaged.
fn check_section(
    off: u64,
    size: u64,
    what: &str,
    at: u64,
    salvageable: bool,
    err: &Errors,
) -> Result<u64, PerfError> {
    let end = off
        .checked_add(size)
        .ok_or_else(|| err.malformed(at, format!("{what} has an impossible size {size}")))?;
    if end > err.len {
        if off > err.len {
            return Err(err.malformed(
                at,
                format!("{what} starts at byte {off}, past the end of the file"),
            ));
        }
        return Err(err.truncated(off, format!("{what} spans bytes {off}..{end}"), salvageable));
    }
    Ok(end)
}

/// Walks EVENT_DESC with bounds checks (counts inside it size allocations in linux-perf-data).
/// Returns the offset of the first inconsistency.
fn check_event_desc(d: &[u8]) -> Result<(), usize> {
    let nr = u32_at(d, 0).ok_or(0usize)? as usize;
    let attr_size = u32_at(d, 4).ok_or(4usize)? as usize;
    if !(64..=4096).contains(&attr_size) || nr > d.len() / attr_size {
        return Err(0);
    }
    let mut pos = 8usize;
    for _ in 0..nr {
        pos = pos.checked_add(attr_size).ok_or(pos)?;
        let nr_ids = u32_at(d, pos).ok_or(pos)? as usize;
        let str_len = u32_at(d, pos + 4).ok_or(pos)? as usize;
        let end = (pos + 8)
            .checked_add(str_len)
            .and_then(|p| p.checked_add(nr_ids.checked_mul(8)?))
            .filter(|&e| e <= d.len())
            .ok_or(pos)?;
        pos = end;
    }
    Ok(())
}

/// Checks that each event_types entry (an attribute, then the file section of its ids) points
/// inside the file. Returns the offset of the first bad entry.
fn check_event_types(file: &[u8], off: u64, size: u64, attr_size: u64) -> Result<(), u64> {
    let entry = attr_size + 16;
    let len = file.len() as u64;
    for k in 0..size / entry {
        let at = off + k * entry + attr_size;
        let (ids_off, ids_size) = (
            u64_at(file, at as usize).ok_or(at)?,
            u64_at(file, at as usize + 8).ok_or(at)?,
        );
        if ids_off.checked_add(ids_size).is_none_or(|end| end > len) {
            return Err(at);
        }
    }
    Ok(())
}

/// Binds a sched tracepoint's format to the fields the reader uses. `Err` names a missing field.
pub(crate) fn bind(f: &Format) -> Result<Option<Tracepoint>, &'static str> {
    let need = |name: &'static str| f.field(name).ok_or(name);
    Ok(Some(match f.name.as_str() {
        "sched_switch" => Tracepoint::Switch {
            prev_comm: need("prev_comm")?,
            prev_pid: need("prev_pid")?,
            prev_state: need("prev_state")?,
            prev_prio: need("prev_prio")?,
            next_pid: need("next_pid")?,
            next_prio: need("next_prio")?,
        },
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => Tracepoint::Wake {
            kind: match f.name.as_str() {
                "sched_waking" => WakeKind::Waking,
                "sched_wakeup" => WakeKind::Wakeup,
                _ => WakeKind::WakeupNew,
            },
            comm: need("comm")?,
            pid: need("pid")?,
            target_cpu: f.field("target_cpu"),
        },
        "sched_migrate_task" => Tracepoint::Migrate {
            comm: need("comm")?,
            pid: need("pid")?,
            orig_cpu: need("orig_cpu")?,
            dest_cpu: need("dest_cpu")?,
        },
        "sched_process_fork" => Tracepoint::Fork {
            parent_pid: need("parent_pid")?,
            child_comm: need("child_comm")?,
            child_pid: need("child_pid")?,
        },
        "sched_process_exec" => Tracepoint::Exec {
            filename: need("filename")?,
            pid: need("pid")?,
        },
        "sched_process_exit" => Tracepoint::Exit { pid: need("pid")? },
        "task_rename" => Tracepoint::Rename {
            pid: need("pid")?,
            newcomm: need("newcomm")?,
        },
        "sched_stat_runtime" => Tracepoint::Runtime {
            pid: need("pid")?,
            runtime: need("runtime")?,
            comm: need("comm")?,
        },
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_state_letters_come_from_the_recording_kernels_format() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bursty.data");
        let file = std::fs::read(&path).unwrap();
        // The sched_switch print format as stored in the file (recorded here on Linux 6.1).
        let text = String::from_utf8_lossy(&file);
        let at = text.find("prev_state=%s%s").unwrap();
        let line = &text[text[..at].rfind("print fmt:").unwrap()..];
        let line = &line[..line.find('\n').unwrap()];
        let from_file = TaskStates::from_print_fmt(line).expect("the 6.1 format is understood");
        assert_eq!(from_file, TaskStates::since_4_14());
        let meta = Metadata::read(&path, &file, false).unwrap();
        assert_eq!(meta.task_states, from_file);
    }
}
