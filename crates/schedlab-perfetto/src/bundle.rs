//! One `FtraceEventBundle` (a CPU's events of one ring-buffer read) into its events in time
//! order: the plain `FtraceEvent`s and the `compact_sched` arrays, which Perfetto's recorder
//! writes instead of sched_switch and sched_waking events by default.
//!
//! A compact switch names only the task switched in (its `prev` is the CPU's task before it)
//! and a compact waking not its waker (the CPU's task at the time), so those stay open here
//! and the reader fills them in from each CPU's state, in time order ([`Item`]).

use schedlab_perf::feed::{Body, Comm, WakeKind, comm};
use schedlab_perfetto_protos::ftrace_event::Event;
use schedlab_perfetto_protos::ftrace_event_bundle::CompactSched;
use schedlab_perfetto_protos::generic_ftrace_event::field::Value;
use schedlab_perfetto_protos::{FtraceEvent, FtraceEventBundle, GenericFtraceEvent};

use crate::generic::{self, Described};

/// `clone_flags` bit of a new thread of the same process (include/uapi/linux/sched.h).
pub(crate) const CLONE_THREAD: u64 = 0x0001_0000;

/// What an event says, with what only the CPU's state can tell left open.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// sched_switch; `prev` is `None` for a compact one: the CPU's task before it.
    Switch {
        prev: Option<(i32, Comm, i32)>,
        prev_state: i64,
        next: (i32, Comm, i32),
    },
    /// sched_waking, sched_wakeup, sched_wakeup_new, by the event's task (the waker).
    Wake {
        kind: WakeKind,
        pid: i32,
        target_cpu: i32,
        comm: Comm,
    },
    /// task_newtask: `parent` (the event's task) made `child`.
    NewTask {
        child: i32,
        comm: Comm,
        clone_flags: u64,
    },
    Frequency {
        cpu: i64,
        khz: i64,
    },
    Idle {
        cpu: i64,
        state: i64,
    },
    /// sched_stat_runtime: the kernel's accounting of the CPU time task `pid` ran since its
    /// last update, summed rather than fed to the state machine.
    Runtime {
        pid: i32,
        runtime: u64,
        comm: Comm,
    },
    /// Anything the state machine takes as it is.
    Body(Body),
}

/// One event: when, which task the kernel ran it in (`None` for a compact one), what.
#[derive(Debug, Clone)]
pub(crate) struct Timed {
    pub time: u64,
    pub tid: Option<i32>,
    pub item: Item,
}

/// A bundle's events, and what could not be read of it.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    pub events: Vec<Timed>,
    /// Events of kinds schedlab's copy of the protos leaves out (not used by the tables).
    pub other: u64,
    pub bad: u64,
    pub first_bad: Option<&'static str>,
}

impl Decoded {
    fn bad(&mut self, n: u64, why: &'static str) {
        self.bad += n;
        self.first_bad.get_or_insert(why);
    }
}

/// The bundle's events in time order (events of equal time in the order the bundle gives them,
/// plain events before compact ones), each time shifted by `shift` nanoseconds. `packet` is
/// the bytes of the packet that holds it, where an event in the self-describing generic
/// encoding is read from, by the trace's `described` layouts.
pub(crate) fn decode(
    bundle: &FtraceEventBundle,
    packet: &[u8],
    described: &Described,
    shift: i64,
) -> Decoded {
    let mut out = Decoded::default();
    // Only a bundle with an event prost found nothing of can hold one.
    let raw = if !described.is_empty() && bundle.event.iter().any(|e| e.event.is_none()) {
        generic::bundle_events(packet)
    } else {
        Vec::new()
    };
    for (i, event) in bundle.event.iter().enumerate() {
        let self_described = || raw.get(i).and_then(|bytes| described.event(bytes));
        plain(event, self_described, &mut out);
    }
    if let Some(compact) = &bundle.compact_sched {
        compact_sched(compact, &mut out);
    }
    for e in &mut out.events {
        e.time = e.time.saturating_add_signed(shift);
    }
    out.events.sort_by_key(|e| e.time);
    out
}

fn text(s: &Option<String>) -> Comm {
    comm(s.as_deref().unwrap_or(""))
}

/// `self_described`: the event's generic event in the self-describing encoding, if any.
fn plain(
    event: &FtraceEvent,
    self_described: impl FnOnce() -> Option<GenericFtraceEvent>,
    out: &mut Decoded,
) {
    let Some(time) = event.timestamp else {
        return out.bad(1, "an event without a timestamp");
    };
    // A plain event without its task's pid says so (-1), as perf does of an exiting task.
    let tid = Some(event.pid.map_or(-1, |p| p as i32));
    let wake = |kind, pid: Option<i32>, target_cpu: Option<i32>, c: &Option<String>| {
        Some(Item::Wake {
            kind,
            pid: pid?,
            target_cpu: target_cpu?,
            comm: text(c),
        })
    };
    let item = match &event.event {
        Some(Event::SchedSwitch(s)) => (|| {
            Some(Item::Switch {
                prev: Some((s.prev_pid?, text(&s.prev_comm), s.prev_prio.unwrap_or(0))),
                prev_state: s.prev_state.unwrap_or(0),
                next: (s.next_pid?, text(&s.next_comm), s.next_prio.unwrap_or(0)),
            })
        })(),
        Some(Event::SchedWaking(w)) => wake(WakeKind::Waking, w.pid, w.target_cpu, &w.comm),
        Some(Event::SchedWakeup(w)) => wake(WakeKind::Wakeup, w.pid, w.target_cpu, &w.comm),
        Some(Event::SchedWakeupNew(w)) => wake(WakeKind::WakeupNew, w.pid, w.target_cpu, &w.comm),
        Some(Event::SchedMigrateTask(m)) => (|| {
            Some(Item::Body(Body::Migrate {
                pid: m.pid?,
                orig_cpu: m.orig_cpu?,
                dest_cpu: m.dest_cpu?,
                comm: text(&m.comm),
            }))
        })(),
        Some(Event::TaskNewtask(t)) => (|| {
            Some(Item::NewTask {
                child: t.pid?,
                comm: text(&t.comm),
                clone_flags: t.clone_flags.unwrap_or(0),
            })
        })(),
        Some(Event::TaskRename(r)) => (|| {
            Some(Item::Body(Body::Comm {
                pid: -1,
                tid: r.pid?,
                comm: text(&r.newcomm),
            }))
        })(),
        Some(Event::SchedProcessFork(f)) => (|| {
            Some(Item::Body(Body::ProcessFork {
                parent_pid: f.parent_pid?,
                child_pid: f.child_pid?,
                child_comm: text(&f.child_comm),
            }))
        })(),
        // The kernel names the task after the file it executes (`kbasename(filename)`).
        Some(Event::SchedProcessExec(x)) => (|| {
            let file = x.filename.as_deref().unwrap_or("");
            Some(Item::Body(Body::ProcessExec {
                pid: x.pid?,
                comm: comm(file.rsplit('/').next().unwrap_or(file)),
            }))
        })(),
        Some(Event::SchedProcessExit(x)) => x.pid.map(|pid| Item::Body(Body::ProcessExit { pid })),
        Some(Event::SchedProcessFree(x)) => x.pid.map(|pid| Item::Body(Body::ProcessExit { pid })),
        Some(Event::CpuFrequency(f)) => (|| {
            Some(Item::Frequency {
                cpu: i64::from(f.cpu_id?),
                khz: i64::from(f.state?),
            })
        })(),
        Some(Event::CpuIdle(i)) => (|| {
            Some(Item::Idle {
                cpu: i64::from(i.cpu_id?),
                state: i64::from(i.state?),
            })
        })(),
        Some(Event::Generic(g)) => return generic(g, time, tid, out),
        None => match self_described() {
            Some(g) => return generic(&g, time, tid, out),
            None => {
                out.other += 1;
                return;
            }
        },
    };
    match item {
        Some(item) => out.events.push(Timed { time, tid, item }),
        None => out.bad(1, "an event lacks a field its kind needs (a pid or a CPU)"),
    }
}

/// An event Perfetto's protos have no message for: sched_stat_runtime is read, any other is
/// counted as left out.
fn generic(g: &GenericFtraceEvent, time: u64, tid: Option<i32>, out: &mut Decoded) {
    if g.event_name.as_deref() != Some("sched_stat_runtime") {
        out.other += 1;
        return;
    }
    match stat_runtime(g) {
        Some(item) => out.events.push(Timed { time, tid, item }),
        None => out.bad(1, "a sched_stat_runtime lacks its pid or runtime"),
    }
}

/// sched_stat_runtime, as Perfetto's recorder writes it in either generic encoding: its
/// fields by their ftrace names, each as the integer or text the kernel's format says
/// (`pid_t pid` signed, `u64 runtime` unsigned, `char comm[16]`).
fn stat_runtime(g: &GenericFtraceEvent) -> Option<Item> {
    let value = |name: &str| {
        (g.field.iter())
            .find(|f| f.name.as_deref() == Some(name))
            .and_then(|f| f.value.as_ref())
    };
    let int = |name: &str| match value(name)? {
        Value::IntValue(v) => Some(*v),
        Value::UintValue(v) => i64::try_from(*v).ok(),
        Value::StrValue(_) => None,
    };
    let comm = match value("comm") {
        Some(Value::StrValue(s)) => comm(s),
        _ => [0; 16],
    };
    Some(Item::Runtime {
        pid: i32::try_from(int("pid")?).ok()?,
        runtime: u64::try_from(int("runtime")?).ok()?,
        comm,
    })
}

/// The compact arrays: timestamps are deltas, each from the one before (the first from 0),
/// and command names indexes into the bundle's `intern_table`.
fn compact_sched(c: &CompactSched, out: &mut Decoded) {
    let name = |i: u32| c.intern_table.get(i as usize).map(|s| comm(s));
    let n = c.switch_timestamp.len();
    let lens = [
        c.switch_prev_state.len(),
        c.switch_next_pid.len(),
        c.switch_next_prio.len(),
        c.switch_next_comm_index.len(),
    ];
    if lens.iter().any(|&l| l != n) {
        out.bad(n as u64, "compact_sched's switch arrays differ in length");
    } else {
        let mut time = 0u64;
        for i in 0..n {
            time = time.wrapping_add(c.switch_timestamp[i]);
            let Some(next_comm) = name(c.switch_next_comm_index[i]) else {
                out.bad(1, "a compact switch's name index is past the intern table");
                continue;
            };
            out.events.push(Timed {
                time,
                tid: None,
                item: Item::Switch {
                    prev: None,
                    prev_state: c.switch_prev_state[i],
                    next: (c.switch_next_pid[i], next_comm, c.switch_next_prio[i]),
                },
            });
        }
    }
    let n = c.waking_timestamp.len();
    let lens = [
        c.waking_pid.len(),
        c.waking_target_cpu.len(),
        c.waking_comm_index.len(),
    ];
    if lens.iter().any(|&l| l != n) {
        return out.bad(n as u64, "compact_sched's waking arrays differ in length");
    }
    let mut time = 0u64;
    for i in 0..n {
        time = time.wrapping_add(c.waking_timestamp[i]);
        let Some(comm) = name(c.waking_comm_index[i]) else {
            out.bad(1, "a compact waking's name index is past the intern table");
            continue;
        };
        out.events.push(Timed {
            time,
            tid: None,
            item: Item::Wake {
                kind: WakeKind::Waking,
                pid: c.waking_pid[i],
                target_cpu: c.waking_target_cpu[i],
                comm,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    /// Protobuf's varint.
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn int_field(number: u64, v: u64, out: &mut Vec<u8>) {
        varint(number << 3, out);
        varint(v, out);
    }

    fn bytes_field(number: u64, bytes: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | 2, out);
        varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    }

    /// A `GenericFtraceEvent.Field` of a name and a value (`value` encodes it, as field 3, 4
    /// or 5: str_value, int_value, uint_value).
    fn generic_field(name: &str, value: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        bytes_field(1, name.as_bytes(), &mut out);
        value(&mut out);
        out
    }

    /// A bundle of cpu 3 holding one generic event named `name`, encoded by hand with the
    /// field numbers of Perfetto's protos (ftrace_event_bundle.proto, ftrace_event.proto's
    /// `generic = 327`, generic.proto), as its recorder writes an event it has no message for.
    fn bundle_of(name: &str) -> FtraceEventBundle {
        let mut generic = Vec::new();
        bytes_field(1, name.as_bytes(), &mut generic);
        let fields = [
            generic_field("comm", |o| bytes_field(3, b"stress-ng-cpu", o)),
            generic_field("pid", |o| int_field(4, 4242, o)),
            generic_field("runtime", |o| int_field(5, 3_999_870, o)),
            generic_field("vruntime", |o| int_field(5, 91_000_000_000, o)),
        ];
        for f in &fields {
            bytes_field(2, f, &mut generic);
        }
        let mut event = Vec::new();
        int_field(1, 1_000_000_123, &mut event);
        int_field(2, 4242, &mut event);
        bytes_field(327, &generic, &mut event);
        let mut bundle = Vec::new();
        int_field(1, 3, &mut bundle);
        bytes_field(2, &event, &mut bundle);
        FtraceEventBundle::decode(&bundle[..]).unwrap()
    }

    #[test]
    fn a_generic_sched_stat_runtime_is_the_kernels_accounting_of_its_task() {
        let decoded = decode(
            &bundle_of("sched_stat_runtime"),
            &[],
            &Described::default(),
            0,
        );
        assert_eq!((decoded.bad, decoded.other), (0, 0));
        let [event] = &decoded.events[..] else {
            panic!("one event: {:?}", decoded.events);
        };
        assert_eq!((event.time, event.tid), (1_000_000_123, Some(4242)));
        let Item::Runtime { pid, runtime, comm } = event.item else {
            panic!("a runtime update: {:?}", event.item);
        };
        assert_eq!((pid, runtime), (4242, 3_999_870));
        assert_eq!(comm, super::comm("stress-ng-cpu"));
    }

    /// The packet of a bundle of cpu 3 holding one sched_stat_runtime in the self-describing
    /// encoding of Perfetto's recorder since v53: the event's own message at `field` of
    /// `FtraceEvent`, described by the bundle's `generic_event_descriptors` (field 11) as
    /// the `DescriptorProto` of the kernel's format, as `described_field` says.
    fn dense_packet(field: u64, described_field: i32) -> Vec<u8> {
        use schedlab_perfetto_protos::field_descriptor_proto::Type;
        use schedlab_perfetto_protos::{DescriptorProto, FieldDescriptorProto};
        let layout = [
            ("comm", Type::String),
            ("pid", Type::Int32),
            ("runtime", Type::Uint64),
            ("vruntime", Type::Uint64),
        ];
        let descriptor = DescriptorProto {
            name: Some("sched_stat_runtime".into()),
            field: (layout.iter().zip(1..))
                .map(|(&(name, kind), number)| FieldDescriptorProto {
                    name: Some(name.into()),
                    number: Some(number),
                    r#type: Some(kind as i32),
                })
                .collect(),
        };
        let mut message = Vec::new();
        bytes_field(1, b"stress-ng-cpu\0\0\0", &mut message);
        int_field(2, 4242, &mut message);
        int_field(3, 3_999_870, &mut message);
        int_field(4, 91_000_000_000, &mut message);
        let mut event = Vec::new();
        int_field(1, 1_000_000_123, &mut event);
        int_field(2, 4242, &mut event);
        bytes_field(field, &message, &mut event);
        let mut descriptors = Vec::new();
        int_field(1, described_field as u64, &mut descriptors);
        bytes_field(3, b"sched", &mut descriptors);
        bytes_field(2, &descriptor.encode_to_vec(), &mut descriptors);
        let mut bundle = Vec::new();
        int_field(1, 3, &mut bundle);
        bytes_field(2, &event, &mut bundle);
        bytes_field(11, &descriptors, &mut bundle);
        let mut packet = Vec::new();
        bytes_field(1, &bundle, &mut packet);
        packet
    }

    fn decode_packet(packet: &[u8]) -> Decoded {
        use schedlab_perfetto_protos::TracePacket;
        use schedlab_perfetto_protos::trace_packet::Data;
        let Some(Data::FtraceEvents(bundle)) = TracePacket::decode(packet).unwrap().data else {
            panic!("a packet of a bundle");
        };
        let mut described = Described::default();
        described.add(&bundle.generic_event_descriptors);
        decode(&bundle, packet, &described, 0)
    }

    #[test]
    fn a_self_described_sched_stat_runtime_reads_as_the_generic_one_does() {
        let dense = decode_packet(&dense_packet(65536, 65536));
        let legacy = decode(
            &bundle_of("sched_stat_runtime"),
            &[],
            &Described::default(),
            0,
        );
        assert_eq!((dense.bad, dense.other), (0, 0));
        assert_eq!(
            format!("{:?}", dense.events),
            format!("{:?}", legacy.events)
        );
    }

    #[test]
    fn a_self_described_event_of_an_undescribed_field_is_left_out_as_unknown() {
        let decoded = decode_packet(&dense_packet(65537, 65536));
        assert_eq!(
            (decoded.events.len(), decoded.bad, decoded.other),
            (0, 0, 1)
        );
    }

    #[test]
    fn another_generic_event_is_left_out_as_unknown() {
        let decoded = decode(
            &bundle_of("sched_stat_sleep"),
            &[],
            &Described::default(),
            0,
        );
        assert_eq!(
            (decoded.events.len(), decoded.bad, decoded.other),
            (0, 0, 1)
        );
    }
}
