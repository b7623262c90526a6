"""Decodes a Perfetto trace with Perfetto's own Python protos and prints what it holds as JSON,
for crates/schedlab/tests/it/export.rs to check against the run's tables.

Usage: python decode.py TRACE.pftrace

The prev_state letters are made here from the kernel's bits by Linux's own table (4.14 and later,
include/trace/events/sched.h), independently of schedlab's mapping.
"""

import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

# include/trace/events/sched.h, __print_flags of sched_switch's prev_state (Linux 4.14+).
LETTERS = [(0x01, "S"), (0x02, "D"), (0x04, "T"), (0x08, "t"), (0x10, "X"), (0x20, "Z"),
           (0x40, "P"), (0x80, "I")]
PREEMPTED = 0x100


def letters(state):
    text = "|".join(name for bit, name in LETTERS if state & bit) or "R"
    return text + ("+" if state & PREEMPTED else "")


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    out = {"switches": [], "wakeups": [], "migrations": [], "exits": [], "freq": [], "idle": [],
           "runtime": [],
           "processes": [], "threads": [], "cpus": [], "release": None, "tracks": {},
           "counters": {}, "slices": [], "bundles": 0}
    for packet in trace.packet:
        kind = packet.WhichOneof("data")
        if kind == "ftrace_events":
            out["bundles"] += 1
            cpu = packet.ftrace_events.cpu
            for e in packet.ftrace_events.event:
                body = e.WhichOneof("event")
                if body == "sched_switch":
                    s = e.sched_switch
                    assert e.pid == s.prev_pid, e
                    out["switches"].append([cpu, e.timestamp, s.prev_pid, s.prev_comm,
                                            s.prev_prio if s.HasField("prev_prio") else None,
                                            letters(s.prev_state), s.next_pid, s.next_comm,
                                            s.next_prio if s.HasField("next_prio") else None])
                elif body in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
                    w = getattr(e, body)
                    out["wakeups"].append([cpu, e.timestamp, body[len("sched_"):], w.pid, w.comm,
                                           w.target_cpu, e.pid])
                elif body == "sched_migrate_task":
                    m = e.sched_migrate_task
                    out["migrations"].append([e.timestamp, m.pid, m.comm, m.orig_cpu, m.dest_cpu])
                elif body == "sched_process_exit":
                    x = e.sched_process_exit
                    out["exits"].append([e.timestamp, x.pid, x.tgid, x.comm])
                elif body == "cpu_frequency":
                    out["freq"].append([e.timestamp, e.cpu_frequency.cpu_id,
                                        e.cpu_frequency.state])
                elif body == "cpu_idle":
                    out["idle"].append([e.timestamp, e.cpu_idle.cpu_id, e.cpu_idle.state])
                elif body == "generic":
                    # An event Perfetto has no message for, its fields by name.
                    g = e.generic
                    assert g.event_name == "sched_stat_runtime", g
                    fields = {f.name: getattr(f, f.WhichOneof("value")) for f in g.field}
                    out["runtime"].append([cpu, e.timestamp, e.pid, fields["pid"],
                                           fields["comm"], fields["runtime"]])
                else:
                    raise AssertionError(f"unexpected ftrace event {body}")
        elif kind == "process_tree":
            for p in packet.process_tree.processes:
                out["processes"].append([p.pid, list(p.cmdline)])
            for t in packet.process_tree.threads:
                out["threads"].append([t.tid, t.tgid, t.name])
        elif kind == "cpu_info":
            out["cpus"] = [c.processor for c in packet.cpu_info.cpus]
        elif kind == "system_info":
            out["release"] = packet.system_info.utsname.release
        elif kind == "track_descriptor":
            assert packet.trusted_packet_sequence_id != 0, packet
            d = packet.track_descriptor
            out["tracks"][d.uuid] = [d.name, d.counter.unit_name if d.HasField("counter") else None,
                                     d.parent_uuid if d.HasField("parent_uuid") else None]
        elif kind == "track_event":
            assert packet.trusted_packet_sequence_id != 0, packet
            e = packet.track_event
            name = out["tracks"][e.track_uuid][0]
            if e.type == pb.TrackEvent.TYPE_COUNTER:
                out["counters"].setdefault(name, []).append([packet.timestamp,
                                                             e.double_counter_value])
            elif e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                out["slices"].append([name, e.name, packet.timestamp, None])
            elif e.type == pb.TrackEvent.TYPE_SLICE_END:
                begun = [s for s in out["slices"] if s[0] == name and s[3] is None]
                assert len(begun) == 1, (name, begun)
                begun[0][3] = packet.timestamp
            else:
                raise AssertionError(f"unexpected track event {e}")
        else:
            raise AssertionError(f"unexpected packet {kind}")
    out["tracks"] = list(out["tracks"].values())
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
