//! Decoding of one chunk's records into compact, owned [`Event`]s.
//!
//! Chunks decode independently, so the driver decodes several at once with rayon. Only the
//! record kinds the timehist state machine and the thread table need become events;
//! sched_stat_runtime is summed here (see `runtime`), everything else (MMAP, …) is skipped.

use crate::framing::Chunk;
use crate::le::{Comm, comm_from, i32_at, u32_at, u64_at};
use crate::metadata::SAMPLE_IDENTIFIER;
use crate::metadata::{Metadata, Tracepoint, WakeKind};
use crate::runtime::RuntimeSums;

const RECORD_LOST: u32 = 2;
const RECORD_COMM: u32 = 3;
const RECORD_EXIT: u32 = 4;
const RECORD_FORK: u32 = 7;
const RECORD_SAMPLE: u32 = 9;
const RECORD_LOST_SAMPLES: u32 = 13;

/// A decoded record: when and where it happened, the task the kernel sampled, and what it says.
#[derive(Debug, Clone)]
pub struct Event {
    /// Nanoseconds on the recording clock; 0 when the record carries no time (perf delivers
    /// those at once, outside the time ordering).
    pub time: u64,
    pub cpu: i32,
    /// The sampled task (`-1` when the kernel could no longer name it, as for exiting tasks).
    pub pid: i32,
    pub tid: i32,
    pub body: Body,
}

/// What a record says, by kind.
///
/// `repr(u8)` lays each variant out as a C struct in the order written, so the 16-byte
/// command names sit at 4- or 8-byte aligned offsets: in Rust's own layout they were packed
/// beside the tag at odd offsets, and copying a decoded event into its chunk's vector stalled on
/// unaligned loads of bytes just stored: `decode_chunk`'s share of the CPU time of
/// `schedlab parse perf-sched` on the bench trace went from 15 to 11 %. Wide fields come first
/// in each variant for the same reason.
#[derive(Debug, Clone)]
#[repr(u8)]
pub enum Body {
    Switch {
        prev_state: i64,
        prev_comm: Comm,
        prev_pid: i32,
        /// The kernel priorities (`prio`: 0-99 real-time, 100-139 nice -20..19) of the task
        /// switched out and of the one switched in.
        prev_prio: i32,
        next_pid: i32,
        next_prio: i32,
    },
    Wake {
        kind: WakeKind,
        pid: i32,
        target_cpu: i32,
        comm: Comm,
    },
    Migrate {
        pid: i32,
        orig_cpu: i32,
        dest_cpu: i32,
        comm: Comm,
    },
    ProcessFork {
        parent_pid: i32,
        child_pid: i32,
        child_comm: Comm,
    },
    ProcessExec {
        pid: i32,
        comm: Comm,
    },
    ProcessExit {
        pid: i32,
    },
    Comm {
        pid: i32,
        tid: i32,
        comm: Comm,
    },
    Fork {
        pid: i32,
        tid: i32,
        ptid: i32,
    },
    Exit {
        tid: i32,
    },
    Lost {
        count: u64,
    },
    LostSamples {
        id: Option<u64>,
        count: u64,
    },
}

const _: () = assert!(std::mem::size_of::<Event>() == 72, "see Body's doc");

/// The events of one chunk in file order, and the records that could not be decoded.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    pub events: Vec<Event>,
    /// The chunk's sched_stat_runtime updates, summed.
    pub runtime: RuntimeSums,
    /// The chunk is the last of its round (see [`Chunk`]).
    pub ends_round: bool,
    pub bad: u64,
    /// File offset and reason of the first undecodable record.
    pub first_bad: Option<(u64, &'static str)>,
}

pub(crate) fn decode_chunk(meta: &Metadata, data: &[u8], base: u64, chunk: Chunk) -> Decoded {
    let mut out = Decoded {
        events: Vec::with_capacity((chunk.end - chunk.start) / 96),
        ends_round: chunk.ends_round,
        ..Decoded::default()
    };
    let mut pos = chunk.start;
    while pos + 8 <= chunk.end {
        let size = u16_at_usize(data, pos + 6);
        if size < 8 || pos + size > chunk.end {
            break; // framing already validated this range
        }
        match decode_record(meta, &data[pos..pos + size], &mut out.runtime) {
            Ok(Some(e)) => out.events.push(e),
            Ok(None) => {}
            Err(why) => {
                out.bad += 1;
                out.first_bad.get_or_insert((base + pos as u64, why));
            }
        }
        pos += size;
    }
    // The estimate above counts the records skipped (sched_stat_runtime, MMAP, ...) too, and
    // the orderer holds a chunk until its last event is delivered: give the rest back (glibc
    // shrinks a block in place, without copying).
    out.events.shrink_to_fit();
    out
}

fn u16_at_usize(b: &[u8], off: usize) -> usize {
    crate::le::u16_at(b, off).map_or(0, |v| v as usize)
}

const SHORT: &str = "record shorter than its layout";

fn decode_record(
    meta: &Metadata,
    rec: &[u8],
    runtime: &mut RuntimeSums,
) -> Result<Option<Event>, &'static str> {
    let ty = u32_at(rec, 0).ok_or(SHORT)?;
    let body = &rec[8..];
    match ty {
        RECORD_SAMPLE => decode_sample(meta, body, runtime),
        RECORD_COMM | RECORD_FORK | RECORD_EXIT | RECORD_LOST | RECORD_LOST_SAMPLES => {
            decode_other(meta, ty, body).map(Some)
        }
        _ => Ok(None),
    }
}

fn decode_sample(
    meta: &Metadata,
    body: &[u8],
    runtime_sums: &mut RuntimeSums,
) -> Result<Option<Event>, &'static str> {
    let index = match meta.sample_id_pos {
        Some(p) if meta.attrs.len() > 1 => {
            let id = u64_at(body, p).ok_or(SHORT)?;
            meta.attr_of_id(id)
                .ok_or("sample of an event id the header does not list")?
        }
        _ => 0,
    };
    let attr = &meta.attrs[index];
    // By reference: bound by value, the tracepoint's field table (up to 150 bytes) was copied
    // onto the stack for every record and each field read from the copy (`decode_chunk` takes
    // a tenth fewer samples without it).
    let Some(tp) = &attr.tracepoint else {
        return Ok(None);
    };
    let l = &attr.layout;
    let time = l.time.and_then(|p| u64_at(body, p)).ok_or(SHORT)?;
    let cpu = l.cpu.and_then(|p| i32_at(body, p)).ok_or(SHORT)?;
    let (pid, tid) = l
        .tid
        .and_then(|p| Some((i32_at(body, p)?, i32_at(body, p + 4)?)))
        .ok_or(SHORT)?;
    let raw = l.raw(body).ok_or("sample RAW data runs past the record")?;
    if let Tracepoint::Runtime {
        pid: of,
        runtime,
        comm,
    } = tp
    {
        const FIELD: &str = "tracepoint field outside the RAW data";
        let of = of.i32(raw).ok_or(FIELD)?;
        let ran = runtime.int(raw).ok_or(FIELD)? as u64;
        // The sample names the task the CPU ran; its process is this thread's when the
        // update is of that task (not one another CPU updates from here).
        let process = (tid == of).then_some(pid);
        let comm = || comm.comm(raw).unwrap_or_default();
        runtime_sums.add((cpu, of, process), ran, time, comm);
        return Ok(None);
    }
    let body = payload_body(tp, raw)?;
    Ok(Some(Event {
        time,
        cpu,
        pid,
        tid,
        body,
    }))
}

/// A sched tracepoint's payload (`raw`: perf's RAW sample data, or an ftrace ring-buffer
/// event's data, which are laid out alike) as the [`Body`] its fields say.
pub(crate) fn payload_body(tp: &Tracepoint, raw: &[u8]) -> Result<Body, &'static str> {
    const FIELD: &str = "tracepoint field outside the RAW data";
    Ok(match tp {
        Tracepoint::Switch {
            prev_comm,
            prev_pid,
            prev_state,
            prev_prio,
            next_pid,
            next_prio,
        } => Body::Switch {
            prev_pid: prev_pid.i32(raw).ok_or(FIELD)?,
            prev_state: prev_state.int(raw).ok_or(FIELD)?,
            prev_comm: prev_comm.comm(raw).ok_or(FIELD)?,
            prev_prio: prev_prio.i32(raw).ok_or(FIELD)?,
            next_pid: next_pid.i32(raw).ok_or(FIELD)?,
            next_prio: next_prio.i32(raw).ok_or(FIELD)?,
        },
        Tracepoint::Wake {
            kind,
            comm,
            pid,
            target_cpu,
        } => Body::Wake {
            kind: *kind,
            pid: pid.i32(raw).ok_or(FIELD)?,
            target_cpu: target_cpu.and_then(|f| f.i32(raw)).unwrap_or(-1),
            comm: comm.comm(raw).ok_or(FIELD)?,
        },
        Tracepoint::Migrate {
            comm,
            pid,
            orig_cpu,
            dest_cpu,
        } => Body::Migrate {
            pid: pid.i32(raw).ok_or(FIELD)?,
            orig_cpu: orig_cpu.i32(raw).ok_or(FIELD)?,
            dest_cpu: dest_cpu.i32(raw).ok_or(FIELD)?,
            comm: comm.comm(raw).ok_or(FIELD)?,
        },
        Tracepoint::Fork {
            parent_pid,
            child_comm,
            child_pid,
        } => Body::ProcessFork {
            parent_pid: parent_pid.i32(raw).ok_or(FIELD)?,
            child_pid: child_pid.i32(raw).ok_or(FIELD)?,
            child_comm: child_comm.comm(raw).ok_or(FIELD)?,
        },
        Tracepoint::Exec { filename, pid } => {
            // The kernel names the task after the file's basename, cut to 15 bytes.
            let path = filename.bytes(raw).ok_or(FIELD)?;
            let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
            Body::ProcessExec {
                pid: pid.i32(raw).ok_or(FIELD)?,
                comm: comm_from(&base[..base.len().min(15)]),
            }
        }
        Tracepoint::Exit { pid } => Body::ProcessExit {
            pid: pid.i32(raw).ok_or(FIELD)?,
        },
        Tracepoint::Rename { pid, newcomm } => Body::Comm {
            pid: -1,
            tid: pid.i32(raw).ok_or(FIELD)?,
            comm: newcomm.comm(raw).ok_or(FIELD)?,
        },
        // Summed per thread and CPU where a sample is decoded (`decode_sample`): no event.
        Tracepoint::Runtime { .. } => return Err("sched_stat_runtime is summed, not an event"),
    })
}

/// COMM, FORK, EXIT, LOST and LOST_SAMPLES: fixed fields, then the `sample_id_all` trailer
/// with time, CPU and task.
fn decode_other(meta: &Metadata, ty: u32, body: &[u8]) -> Result<Event, &'static str> {
    let index = if meta.attrs.len() == 1 {
        Some(0)
    } else {
        body.len()
            .checked_sub(8)
            .and_then(|p| u64_at(body, p))
            .and_then(|id| meta.attr_of_id(id))
    };
    let layout = index
        .map(|i| &meta.attrs[i].layout)
        .filter(|l| l.sample_id_all);
    let (mut time, mut cpu, mut pid, mut tid) = (0, -1, -1, -1);
    let mut fixed_end = body.len();
    if let Some(l) = layout {
        let start = body.len().checked_sub(l.trailer_len).ok_or(SHORT)?;
        let t = &body[start..];
        time = l.t_time.and_then(|p| u64_at(t, p)).unwrap_or(0);
        cpu = l.t_cpu.and_then(|p| i32_at(t, p)).unwrap_or(-1);
        if let Some(p) = l.t_tid {
            pid = i32_at(t, p).unwrap_or(-1);
            tid = i32_at(t, p + 4).unwrap_or(-1);
        }
        fixed_end = start;
    }
    let fixed = &body[..fixed_end];
    let word = |off| i32_at(fixed, off).ok_or(SHORT);
    let body = match ty {
        RECORD_COMM => {
            let name = fixed.get(8..).ok_or(SHORT)?;
            Body::Comm {
                pid: word(0)?,
                tid: word(4)?,
                comm: comm_from(name),
            }
        }
        RECORD_FORK => Body::Fork {
            pid: word(0)?,
            tid: word(8)?,
            ptid: word(12)?,
        },
        RECORD_EXIT => Body::Exit { tid: word(8)? },
        RECORD_LOST => Body::Lost {
            count: u64_at(fixed, 8).ok_or(SHORT)?,
        },
        _ => Body::LostSamples {
            id: layout
                .filter(|l| l.sample_type & SAMPLE_IDENTIFIER != 0)
                .and_then(|_| u64_at(body, body.len().checked_sub(8)?)),
            count: u64_at(fixed, 0).ok_or(SHORT)?,
        },
    };
    Ok(Event {
        time,
        cpu,
        pid,
        tid,
        body,
    })
}
