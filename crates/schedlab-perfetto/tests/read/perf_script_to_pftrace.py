"""Writes a Perfetto trace from `perf script -F pid,tid,cpu,time,event,trace --ns --show-task-events` text, with
Perfetto's own Python protos (PyPI `perfetto`): an FtraceEventBundle per CPU of up to 1000 events
(sched_switch, sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
sched_process_fork, each from its print format's text; a task_rename for each rename perf
recorded during the trace, exec or not, as the kernel's __set_task_comm traces both and the
recorder writes them with `task/task_rename` in its config, as its scheduling configs have it;
no oldcomm, which perf's record lacks), and a ProcessTree naming each thread's process.

With --compact, switches and wakings go into each bundle's compact_sched arrays instead, as
Perfetto's recorder writes them by default: timestamps delta-encoded (the first absolute), names
as indexes into the bundle's intern table, no prev task and no waker (the CPU's task).

With --deflate, every 16 packets go into one packet's compressed_packets instead, as the
recorder writes them with the config's `compression_type: COMPRESSION_TYPE_DEFLATE`: the
packets framed as in a trace file, compressed by zlib.

With --runtime generic, sched_stat_runtime events are written too, as the recorder writes an
event its protos have no message for with `denser_generic_event_encoding: false` (and before
v53): a GenericFtraceEvent naming each field. With --runtime dense, as it writes one by default
since v53: a message of the event's own at field 65536 of FtraceEvent, described once per CPU
by the first bundle's generic_event_descriptors as the DescriptorProto of the kernel's format.

With --tree-name TID=NAME (any number of times), the ProcessTree names thread TID NAME, as
Perfetto's process scan names a thread by procfs, which may differ from the name its events
carry (procfs adds a kworker's workqueue: `kworker/1:1H+kb`).

usage: perf_script_to_pftrace.py SCRIPT_TEXT OUT.pftrace [--compact] [--deflate]
                                 [--runtime generic|dense] [--tree-name TID=NAME]...
"""

import re
import sys
import zlib

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

# Every event's `pid/tid [cpu] seconds.nanoseconds:`, then what it is.
PREFIX = r"^\s*(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+"
LINE = re.compile(PREFIX + r"sched:(\w+):\s?(.*)$")
SWITCH = re.compile(
    r"prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> "
    r"next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)$"
)
WAKE = re.compile(r"comm=(.*) pid=(-?\d+) prio=(-?\d+)(?: success=\d+)? target_cpu=(\d+)$")
MIGRATE = re.compile(r"comm=(.*) pid=(-?\d+) prio=(-?\d+) orig_cpu=(\d+) dest_cpu=(\d+)$")
# perf's own records of the tasks (`--show-task-events`), those it found at the start among
# them: each thread's process, as Perfetto's process scan gives it. An exiting thread's last
# events carry no pid (perf names the task -1), so its events alone may never name it.
TASK = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\)")
# perf's record of a rename (by prctl, a kthread's naming or an exec); those at time 0 are its
# records of the tasks found at the start, not renames.
COMM = re.compile(PREFIX + r"PERF_RECORD_COMM(?: exec)?: (.*):(-?\d+)/(-?\d+)$")
FORK = re.compile(r"comm=(.*) pid=(-?\d+) child_comm=(.*) child_pid=(-?\d+)$")
# Linux 6.8 dropped vruntime from sched_stat_runtime.
RUNTIME = re.compile(r"comm=(.*) pid=(-?\d+) runtime=(\d+) \[ns\](?: vruntime=(\d+) \[ns\])?$")
# The kernel's format of sched_stat_runtime, as the recorder describes it in the dense encoding.
RUNTIME_FIELDS = [
    ("comm", descriptor_pb2.FieldDescriptorProto.TYPE_STRING),
    ("pid", descriptor_pb2.FieldDescriptorProto.TYPE_INT32),
    ("runtime", descriptor_pb2.FieldDescriptorProto.TYPE_UINT64),
    ("vruntime", descriptor_pb2.FieldDescriptorProto.TYPE_UINT64),
]
DENSE_FIELD = 65536
# The kernel's TASK_* report bits (Linux 4.14 and later), as sched_switch prints them.
STATE_BITS = {"S": 1, "D": 2, "T": 4, "t": 8, "X": 16, "Z": 32, "P": 64, "I": 128}
PREEMPTED = 256


def ns(prefixed):
    """The time of a line matched by a pattern that starts with PREFIX, in nanoseconds."""
    return int(prefixed.group(4)) * 1_000_000_000 + int(prefixed.group(5))


def prev_state(text):
    bits = PREEMPTED if text.endswith("+") else 0
    for letter in text.rstrip("+").split("|"):
        if letter != "R":
            bits |= STATE_BITS[letter]
    return bits


def dense_runtime_types():
    """sched_stat_runtime's own message, and a message holding it at DENSE_FIELD: merged into
    an FtraceEvent, that holder's bytes are the event's field the recorder writes."""
    event = descriptor_pb2.DescriptorProto(name="sched_stat_runtime")
    for number, (name, kind) in enumerate(RUNTIME_FIELDS, 1):
        event.field.add(name=name, number=number, type=kind,
                        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    holder = descriptor_pb2.DescriptorProto(name="Holder")
    holder.field.add(name="event", number=DENSE_FIELD, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                     type_name=".generic.sched_stat_runtime",
                     label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    file = descriptor_pb2.FileDescriptorProto(name="generic.proto", package="generic", syntax="proto2")
    file.message_type.extend([event, holder])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    holder_type = message_factory.GetMessageClass(pool.FindMessageTypeByName("generic.Holder"))
    return event, holder_type


def runtime(payload, out, encoding, dense):
    m = RUNTIME.match(payload)
    values = {"comm": m.group(1), "pid": int(m.group(2)), "runtime": int(m.group(3))}
    if m.group(4) is not None:
        values["vruntime"] = int(m.group(4))
    if encoding == "generic":
        g = out.generic
        g.event_name = "sched_stat_runtime"
        for name, value in values.items():
            f = g.field.add(name=name)
            if isinstance(value, str):
                f.str_value = value
            elif name == "pid":
                f.int_value = value
            else:
                f.uint_value = value
    else:
        holder = dense[1]()
        for name, value in values.items():
            setattr(holder.event, name, value)
        out.MergeFromString(holder.SerializeToString())


def event(kind, payload, out, encoding=None, dense=None):
    if kind == "sched_stat_runtime" and encoding:
        runtime(payload, out, encoding, dense)
    elif kind == "sched_switch":
        m = SWITCH.match(payload)
        s = out.sched_switch
        s.prev_comm, s.next_comm = m.group(1), m.group(5)
        s.prev_pid, s.prev_prio = int(m.group(2)), int(m.group(3))
        s.prev_state = prev_state(m.group(4))
        s.next_pid, s.next_prio = int(m.group(6)), int(m.group(7))
    elif kind in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
        m = WAKE.match(payload)
        w = getattr(out, kind)
        w.comm, w.pid, w.prio = m.group(1), int(m.group(2)), int(m.group(3))
        w.target_cpu, w.success = int(m.group(4)), 1
    elif kind == "sched_migrate_task":
        m = MIGRATE.match(payload)
        g = out.sched_migrate_task
        g.comm, g.pid, g.prio = m.group(1), int(m.group(2)), int(m.group(3))
        g.orig_cpu, g.dest_cpu = int(m.group(4)), int(m.group(5))
    elif kind == "sched_process_fork":
        m = FORK.match(payload)
        f = out.sched_process_fork
        f.parent_comm, f.parent_pid = m.group(1), int(m.group(2))
        f.child_comm, f.child_pid = m.group(3), int(m.group(4))
    else:
        return False
    return True


def compact(bundle, events):
    cs = bundle.compact_sched
    names = {}
    last_switch = last_waking = 0
    for e in events:
        kind = e.WhichOneof("event")
        if kind == "sched_switch":
            s = e.sched_switch
            cs.switch_timestamp.append(e.timestamp - last_switch)
            last_switch = e.timestamp
            cs.switch_prev_state.append(s.prev_state)
            cs.switch_next_pid.append(s.next_pid)
            cs.switch_next_prio.append(s.next_prio)
            cs.switch_next_comm_index.append(names.setdefault(s.next_comm, len(names)))
        elif kind == "sched_waking":
            w = e.sched_waking
            cs.waking_timestamp.append(e.timestamp - last_waking)
            last_waking = e.timestamp
            cs.waking_pid.append(w.pid)
            cs.waking_target_cpu.append(w.target_cpu)
            cs.waking_prio.append(w.prio)
            cs.waking_comm_index.append(names.setdefault(w.comm, len(names)))
            cs.waking_common_flags.append(0)
        else:
            bundle.event.append(e)
    cs.intern_table.extend(sorted(names, key=names.get))


def main(script, path, compact_sched, deflate, encoding, tree_names):
    dense = dense_runtime_types() if encoding == "dense" else None
    trace = pb.Trace()
    tgids = {}
    per_cpu = {}
    for line in open(script, encoding="utf-8", errors="replace"):
        task = TASK.search(line)
        if task:
            tgids[int(task.group(2))] = int(task.group(1))
            continue
        rename = COMM.match(line)
        if rename:
            time = ns(rename)
            if time > 0:
                e = pb.FtraceEvent(timestamp=time, pid=int(rename.group(2)))
                r = e.task_rename
                r.pid, r.newcomm = int(rename.group(8)), rename.group(6)
                per_cpu.setdefault(int(rename.group(3)), []).append(e)
            continue
        m = LINE.match(line)
        if not m:
            continue
        pid, tid, cpu = int(m.group(1)), int(m.group(2)), int(m.group(3))
        time = ns(m)
        # perf names an exiting task -1; the event then has no pid, as perf has none.
        e = pb.FtraceEvent(timestamp=time)
        if tid >= 0:
            e.pid = tid
        if not event(m.group(6), m.group(7), e, encoding, dense):
            continue
        if tid > 0 and pid > 0:
            tgids[tid] = pid
        per_cpu.setdefault(cpu, []).append(e)
    tree = trace.packet.add().process_tree
    for pid in sorted(set(tgids.values())):
        tree.processes.add(pid=pid)
    for tid, pid in sorted(tgids.items()):
        thread = tree.threads.add(tid=tid, tgid=pid)
        if tid in tree_names:
            thread.name = tree_names[tid]
    for cpu, events in sorted(per_cpu.items()):
        for start in range(0, len(events), 1000):
            bundle = trace.packet.add().ftrace_events
            bundle.cpu = cpu
            if dense and start == 0:
                bundle.generic_event_descriptors.add(
                    field_id=DENSE_FIELD, group_name="sched",
                    event_descriptor=dense[0].SerializeToString())
            if compact_sched:
                compact(bundle, events[start:start + 1000])
            else:
                bundle.event.extend(events[start:start + 1000])
    if deflate:
        packets = list(trace.packet)
        trace = pb.Trace()
        for start in range(0, len(packets), 16):
            group = pb.Trace(packet=packets[start:start + 16])
            trace.packet.add().compressed_packets = zlib.compress(group.SerializeToString())
    with open(path, "wb") as out:
        out.write(trace.SerializeToString())


if __name__ == "__main__":
    flags = sys.argv[3:]
    encoding = flags[flags.index("--runtime") + 1] if "--runtime" in flags else None
    assert encoding in (None, "generic", "dense"), f"--runtime {encoding}: generic or dense"
    tree_names = {}
    for i, flag in enumerate(flags):
        if flag == "--tree-name":
            tid, name = flags[i + 1].split("=", 1)
            tree_names[int(tid)] = name
    main(sys.argv[1], sys.argv[2], "--compact" in flags, "--deflate" in flags, encoding,
         tree_names)
