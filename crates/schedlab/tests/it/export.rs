//! `schedlab export perfetto` on real runs. The protobuf trace is decoded by Perfetto's own
//! Python protos (`tests/perfetto/decode.py`) and every event, time, name and CPU class is
//! checked against the run's tables. The Chrome JSON trace (`--format json`) is checked against
//! its format (what each phase requires, tracks named, slices on a track in order and not
//! overlapping, as Perfetto's importer needs them) and its events against the tables, row for
//! row.

use std::collections::BTreeMap;
use std::io::Read;

use crate::util::{Need, Sandbox, can_run};
use schedlab_tables::{
    CpuRow, CpuSampleRow, MigrationRow, Partition, ProcessRow, SchedSliceRow, ThreadRow, TraceRow,
    WakeupRow, read_table,
};
use serde_json::Value;

/// A JSON array's items as i64, str, …: the decoder's rows are arrays.
fn int(value: &Value) -> i64 {
    value
        .as_i64()
        .unwrap_or_else(|| panic!("{value} is not an integer"))
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is not text"))
        .to_owned()
}

/// Exports the run as a .pftrace and decodes it with Perfetto's own Python protos
/// (`tests/perfetto/decode.py`); `None` where that Python is missing (the test is skipped).
fn export_pftrace(sandbox: &Sandbox, name: &str, run_id: &str, test: &str) -> Option<Value> {
    let python = schedlab_testkit::perfetto_python(test)?;
    let run_dir = sandbox.data(name, &format!("runs/{run_id}"));
    let out = sandbox.path("run.pftrace");
    let args = [
        "export",
        "perfetto",
        run_dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let done = sandbox.schedlab(&args);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(done.stdout.contains(run_id), "{}", done.stdout);
    let decoder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/perfetto/decode.py");
    let decoded = std::process::Command::new(python)
        .args([decoder, out.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&decoded.stderr);
    assert!(decoded.status.success(), "{decoder}: {stderr}");
    Some(serde_json::from_slice(&decoded.stdout).expect("the decoder prints JSON"))
}

/// Two periodic threads under `perf sched record` and the `cpu` monitor.
const TRACED: &str = "\
name: traced
collect:
  monitors:
    sched: { perf-sched: {} }
    load: { cpu: { interval: 200ms } }
  workloads:
    periodic:
      start_after: 200ms
      periodic: { threads: 2, period: 50ms, busy: 10ms, duration: 1500ms }
";

/// The same without a trace: counters only.
const UNTRACED: &str = "\
name: untraced
collect:
  monitors:
    load: { cpu: { interval: 100ms } }
  workloads:
    periodic:
      periodic: { threads: 1, period: 50ms, busy: 10ms, duration: 800ms }
";

/// Collects the pipeline's one run and returns its id.
fn collect(sandbox: &Sandbox, name: &str, text: &str) -> String {
    let pipeline = sandbox.write(&format!("{name}.yaml"), text);
    let run = sandbox.schedlab(&["run", pipeline.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let runs = sandbox.runs(name);
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// Exports the run by its directory and by its pipeline (gzip-compressed), checks both give the
/// same JSON, and returns the trace.
fn export(sandbox: &Sandbox, name: &str, run_id: &str) -> Value {
    let run_dir = sandbox.data(name, &format!("runs/{run_id}"));
    let by_dir = sandbox.path("by-dir.json");
    let done = sandbox.schedlab(&[
        "export",
        "perfetto",
        run_dir.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        by_dir.to_str().unwrap(),
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(done.stdout.contains(run_id), "{}", done.stdout);
    let by_pipeline = sandbox.path("by-pipeline.json.gz");
    let pipeline = format!("{name}.yaml");
    let args = [
        "export", "perfetto", &pipeline, "--run", run_id, "--format", "json", "--out",
    ];
    let done = sandbox.schedlab(&[&args[..], &[by_pipeline.to_str().unwrap()]].concat());
    assert_eq!(done.code, 0, "{}", done.stderr);
    let bytes = std::fs::read(&by_dir).unwrap();
    let mut unzipped = Vec::new();
    let gzip = std::fs::File::open(&by_pipeline).unwrap();
    flate2::read::GzDecoder::new(gzip)
        .read_to_end(&mut unzipped)
        .expect("a gzip file");
    assert!(unzipped == bytes, "the .gz holds another trace");
    let leftovers: Vec<_> = std::fs::read_dir(sandbox.dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".export-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    serde_json::from_slice(&bytes).expect("the trace is JSON")
}

/// A time or duration of the trace (fractional microseconds) in nanoseconds, as Perfetto's
/// importer reads it: times 1000, truncated.
fn ns(value: &Value) -> i64 {
    let us = value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number"));
    assert!(us.is_finite() && us >= 0.0, "time {us}");
    (us * 1000.0) as i64
}

/// The trace's events by phase, checked against the format.
#[derive(Default)]
struct Trace {
    /// What the times are relative to, in the tables' nanoseconds.
    origin_ns: i64,
    /// (pid, tid) → the `X` events of that track.
    slices: BTreeMap<(u64, u64), Vec<Value>>,
    instants: Vec<Value>,
    counters: Vec<Value>,
    process_names: BTreeMap<u64, String>,
    thread_names: BTreeMap<(u64, u64), String>,
}

impl Trace {
    /// Checks each event against what its phase requires, and sorts them.
    fn of(trace: &Value) -> Trace {
        let top = trace.as_object().expect("the trace is an object");
        let origin_ns = top["otherData"]["origin_ns"]
            .as_i64()
            .expect("otherData.origin_ns");
        let events = top["traceEvents"]
            .as_array()
            .expect("traceEvents is an array");
        let mut sorted = Trace {
            origin_ns,
            ..Trace::default()
        };
        for event in events {
            let field = |key: &str| &event[key];
            let name = field("name").as_str().expect("name");
            assert!(!name.is_empty(), "{event}");
            let pid = field("pid")
                .as_u64()
                .unwrap_or_else(|| panic!("pid: {event}"));
            let tid = field("tid")
                .as_u64()
                .unwrap_or_else(|| panic!("tid: {event}"));
            assert!(
                pid <= u64::from(u32::MAX) && tid <= u64::from(u32::MAX),
                "{event}"
            );
            assert!(field("args").is_object(), "args: {event}");
            match field("ph").as_str().expect("ph") {
                "X" => {
                    ns(field("ts"));
                    ns(field("dur"));
                    sorted
                        .slices
                        .entry((pid, tid))
                        .or_default()
                        .push(event.clone());
                }
                "i" => {
                    ns(field("ts"));
                    assert_eq!(field("s"), "t", "instants are on their thread: {event}");
                    sorted.instants.push(event.clone());
                }
                "C" => {
                    ns(field("ts"));
                    let args = field("args").as_object().unwrap();
                    assert_eq!(args.len(), 1, "one series per counter: {event}");
                    let value = args.values().next().unwrap().as_f64();
                    assert!(value.is_some_and(f64::is_finite), "{event}");
                    sorted.counters.push(event.clone());
                }
                "M" => {
                    assert!(field("ts").is_null(), "metadata holds for the whole trace");
                    let args = &field("args");
                    match name {
                        "process_name" => {
                            let text = args["name"].as_str().expect("a process name");
                            assert!(sorted.process_names.insert(pid, text.into()).is_none());
                        }
                        "thread_name" => {
                            let text = args["name"].as_str().expect("a thread name");
                            let named = sorted.thread_names.insert((pid, tid), text.into());
                            assert!(named.is_none(), "{event}");
                        }
                        "process_sort_index" | "thread_sort_index" => {
                            assert!(args["sort_index"].is_i64(), "{event}");
                        }
                        other => panic!("unknown metadata {other}"),
                    }
                }
                other => panic!("unexpected phase {other}: {event}"),
            }
        }
        sorted
    }

    /// An event's time in the tables' nanoseconds.
    fn time_ns(&self, event: &Value) -> i64 {
        self.origin_ns + ns(&event["ts"])
    }

    /// The pid of the process named `CPUs`.
    fn cpus_pid(&self) -> u64 {
        let pids: Vec<u64> = (self.process_names.iter())
            .filter(|(_, name)| *name == "CPUs")
            .map(|(pid, _)| *pid)
            .collect();
        assert_eq!(pids.len(), 1, "{:?}", self.process_names);
        pids[0]
    }

    /// Every track with events is a named thread of a named process; slices on a track are in
    /// time order and do not overlap, as Perfetto's importer needs them to nest.
    fn check_tracks(&self) {
        let instants = self
            .instants
            .iter()
            .map(|e| (e["pid"].as_u64(), e["tid"].as_u64()));
        let tracks = (self.slices.keys().map(|&(p, t)| (Some(p), Some(t)))).chain(instants);
        for (pid, tid) in tracks {
            let (pid, tid) = (pid.unwrap(), tid.unwrap());
            assert!(
                self.process_names.contains_key(&pid),
                "process {pid} unnamed"
            );
            assert!(
                self.thread_names.contains_key(&(pid, tid)),
                "thread {tid} unnamed"
            );
        }
        for (track, slices) in &self.slices {
            for pair in slices.windows(2) {
                let end = ns(&pair[0]["ts"]) + ns(&pair[0]["dur"]);
                assert!(
                    end <= ns(&pair[1]["ts"]),
                    "track {track:?}: {} overlaps or precedes {}",
                    pair[0],
                    pair[1]
                );
            }
        }
    }
}

/// The trace's counters, by name, as (time, value) in time order.
fn counter_series(trace: &Trace) -> BTreeMap<String, Vec<(i64, f64)>> {
    let mut series: BTreeMap<String, Vec<(i64, f64)>> = BTreeMap::new();
    for event in &trace.counters {
        let value = event["args"].as_object().unwrap().values().next().unwrap();
        let name = event["name"].as_str().unwrap().to_owned();
        let point = (trace.time_ns(event), value.as_f64().unwrap());
        series.entry(name).or_default().push(point);
    }
    for points in series.values() {
        assert!(points.is_sorted_by_key(|p| p.0), "counter out of order");
    }
    series
}

/// The busy % and frequency counters hold the `cpu_samples` values of each CPU, in order,
/// each from the start of its interval (the previous sample's time) on.
fn check_cpu_counters(trace: &Trace, samples: &[CpuSampleRow]) {
    check_cpu_series(&counter_series(trace), samples);
}

/// [`check_cpu_counters`] over counters by name, as (time in the tables' ns, value).
fn check_cpu_series(series: &BTreeMap<String, Vec<(i64, f64)>>, samples: &[CpuSampleRow]) {
    let mut by_cpu: BTreeMap<i32, Vec<&CpuSampleRow>> = BTreeMap::new();
    for row in samples {
        by_cpu.entry(row.cpu).or_default().push(row);
    }
    assert!(!by_cpu.is_empty(), "the cpu monitor sampled nothing");
    for (cpu, rows) in &mut by_cpu {
        rows.sort_by_key(|r| r.time_ns);
        let busy: Vec<f64> = rows.iter().filter_map(|r| r.busy_pct).collect();
        let exported = &series[&format!("CPU {cpu} busy")];
        let values: Vec<f64> = exported.iter().map(|p| p.1).collect();
        assert_close(&values, &busy, &format!("CPU {cpu} busy"));
        let ends: Vec<i64> = rows.iter().map(|r| r.time_ns).collect();
        let starts: Vec<i64> = exported.iter().map(|p| p.0).collect();
        assert_eq!(
            starts[1..],
            ends[..ends.len() - 1],
            "CPU {cpu}: intervals' starts"
        );
        let mhz: Vec<f64> = (rows.iter())
            .filter_map(|r| r.freq_khz.map(|khz| khz as f64 / 1000.0))
            .collect();
        let exported = series.get(&format!("CPU {cpu} frequency"));
        let values: Vec<f64> = exported.into_iter().flatten().map(|p| p.1).collect();
        assert_close(&values, &mhz, &format!("CPU {cpu} frequency"));
    }
}

/// The values read back equal the table's to the last bit or so: the file holds each value's
/// shortest exact decimal, but serde_json's default float parser may miss by an ulp.
fn assert_close(read: &[f64], table: &[f64], what: &str) {
    let close = |(a, b): (&f64, &f64)| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    assert!(
        read.len() == table.len() && read.iter().zip(table).all(close),
        "{what}: {read:?} in the trace, {table:?} in the table"
    );
}

/// Sorted, so that two lists of events compare as multisets.
fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items
}

#[test]
fn a_traced_run_exports_as_a_valid_trace_with_every_slice_wakeup_migration_and_sample() {
    let test = "a_traced_run_exports_as_a_valid_trace_with_every_slice_wakeup_migration_and_sample";
    if !can_run(test, &[Need::TraceAllCpus]) {
        return;
    }
    let sandbox = Sandbox::new();
    let run_id = collect(&sandbox, "traced", TRACED);
    let trace = Trace::of(&export(&sandbox, "traced", &run_id));
    trace.check_tracks();

    let root = sandbox.data("traced", "tables");
    let partition = Partition {
        root: &root,
        run_id: &run_id,
    };
    let slices: Vec<SchedSliceRow> = read_table(&partition).unwrap();
    let wakeups: Vec<WakeupRow> = read_table(&partition).unwrap();
    let migrations: Vec<MigrationRow> = read_table(&partition).unwrap();
    assert!(
        !slices.is_empty() && !wakeups.is_empty(),
        "the trace recorded nothing"
    );

    // Every slice on its CPU's track, named by comm; every slice but the idle task's on its
    // thread's track, named by CPU.
    let cpus_pid = trace.cpus_pid();
    let cpu_of_track: BTreeMap<u64, i32> = (trace.thread_names.iter())
        .filter(|((pid, _), _)| *pid == cpus_pid)
        .map(|((_, tid), name)| {
            let number = name.strip_prefix("CPU ").and_then(|n| n.split(' ').next());
            (*tid, number.and_then(|n| n.parse().ok()).expect(name))
        })
        .collect();
    let mut on_cpus = Vec::new();
    let mut on_threads = Vec::new();
    for ((pid, tid), events) in &trace.slices {
        for event in events {
            let start = trace.time_ns(event);
            let span = (start, start + ns(&event["dur"]));
            let name = event["name"].as_str().unwrap().to_owned();
            let clipped = event["args"]["clipped_ns"].as_i64();
            if *pid == cpus_pid {
                let thread = event["args"]["tid"].as_i64().unwrap() as i32;
                assert_eq!(clipped, None, "a CPU's slices do not overlap: {event}");
                on_cpus.push((cpu_of_track[tid], span, thread, name));
            } else {
                let cpu = name.strip_prefix("CPU ").unwrap().parse::<i32>().unwrap();
                on_threads.push((*tid as i32, span, cpu, clipped));
            }
        }
    }
    let expected: Vec<_> = (slices.iter())
        .map(|s| (s.cpu, (s.start_ns, s.end_ns), s.tid, s.comm.to_string()))
        .collect();
    assert_eq!(on_cpus.len(), slices.len());
    assert_eq!(sorted(on_cpus), sorted(expected));
    // On a thread's track, a slice that began before the thread's previous one ended (a
    // thread on two CPUs at once: a CPU whose idle-context events were not traced) is drawn
    // from that end on, and says so.
    let mut thread_ends = BTreeMap::new();
    let expected: Vec<_> = (slices.iter().filter(|s| s.tid != 0))
        .map(|s| {
            let previous_end = thread_ends.insert(s.tid, s.end_ns).unwrap_or(i64::MIN);
            let start = s.start_ns.max(previous_end).min(s.end_ns);
            let clipped = (start > s.start_ns).then(|| start - s.start_ns);
            (s.tid, (start, s.end_ns), s.cpu, clipped)
        })
        .collect();
    assert_eq!(on_threads.len(), expected.len());
    assert_eq!(sorted(on_threads), sorted(expected));

    // Every wakeup and migration as an instant on its thread.
    let instants = |cat: &str| -> Vec<(i64, i64, String, String)> {
        (trace.instants.iter())
            .filter(|e| e["cat"] == cat)
            .map(|e| {
                let (tid, name) = (e["tid"].as_i64().unwrap(), e["name"].as_str().unwrap());
                (
                    tid,
                    trace.time_ns(e),
                    name.to_owned(),
                    e["args"].to_string(),
                )
            })
            .collect()
    };
    let expected: Vec<_> = (wakeups.iter())
        .map(|w| {
            let args = serde_json::json!({"target_cpu": w.target_cpu, "waker_tid": w.waker_tid});
            (
                i64::from(w.tid),
                w.time_ns,
                w.kind.to_string(),
                args.to_string(),
            )
        })
        .collect();
    assert_eq!(sorted(instants("wakeup")), sorted(expected));
    let expected: Vec<_> = (migrations.iter())
        .map(|m| {
            let args = serde_json::json!({"from_cpu": m.from_cpu, "to_cpu": m.to_cpu});
            (
                i64::from(m.tid),
                m.time_ns,
                "migrate".to_owned(),
                args.to_string(),
            )
        })
        .collect();
    assert_eq!(sorted(instants("migration")), sorted(expected));
    assert_eq!(
        trace.instants.len(),
        wakeups.len() + migrations.len(),
        "no other instants"
    );

    // The workload's process is named after it.
    assert!(
        trace
            .process_names
            .values()
            .any(|n| n.ends_with("[periodic]")),
        "{:?}",
        trace.process_names
    );
    check_cpu_counters(&trace, &read_table(&partition).unwrap());
}

#[test]
fn a_run_without_a_trace_exports_its_counters_and_errors_name_what_is_missing() {
    let sandbox = Sandbox::new();
    let run_id = collect(&sandbox, "untraced", UNTRACED);
    let trace = Trace::of(&export(&sandbox, "untraced", &run_id));
    trace.check_tracks();
    assert!(trace.slices.is_empty() && trace.instants.is_empty());
    let root = sandbox.data("untraced", "tables");
    let partition = Partition {
        root: &root,
        run_id: &run_id,
    };
    check_cpu_counters(&trace, &read_table(&partition).unwrap());

    // A run that is not there: the error names it and the runs there are.
    let out = sandbox.path("missing.json");
    let args = [
        "export",
        "perfetto",
        "untraced.yaml",
        "--run",
        "nope",
        "--format",
        "json",
        "--out",
    ];
    let failed = sandbox.schedlab(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(failed.code, 2);
    assert!(
        failed.stderr.contains("no tables of run `nope`") && failed.stderr.contains(&run_id),
        "{}",
        failed.stderr
    );
    assert!(!out.exists());

    // A table the trace needs, gone: named with its directory.
    let wakeups = Partition {
        root: &root,
        run_id: &run_id,
    }
    .dir("wakeups");
    std::fs::remove_dir_all(&wakeups).unwrap();
    let run_dir = sandbox.data("untraced", &format!("runs/{run_id}"));
    let args = [
        "export",
        "perfetto",
        run_dir.to_str().unwrap(),
        "--format",
        "json",
        "--out",
    ];
    let failed = sandbox.schedlab(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(failed.code, 2);
    assert!(
        failed.stderr.contains("no `wakeups` table")
            && failed.stderr.contains(&wakeups.display().to_string()),
        "{}",
        failed.stderr
    );
    assert!(!out.exists());

    // A directory that is not a run's.
    let args = ["export", "perfetto", "data", "--out", "x.pftrace"];
    let failed = sandbox.schedlab(&args);
    assert!(
        failed.stderr.contains("is not a run directory"),
        "{}",
        failed.stderr
    );
}

#[test]
fn a_traced_run_exports_as_a_perfetto_trace_that_perfettos_protos_decode_to_its_tables() {
    let test =
        "a_traced_run_exports_as_a_perfetto_trace_that_perfettos_protos_decode_to_its_tables";
    if !can_run(test, &[Need::TraceAllCpus]) {
        return;
    }
    let sandbox = Sandbox::new();
    let run_id = collect(&sandbox, "traced", TRACED);
    let Some(trace) = export_pftrace(&sandbox, "traced", &run_id, test) else {
        return;
    };
    let root = sandbox.data("traced", "tables");
    let partition = Partition {
        root: &root,
        run_id: &run_id,
    };
    let slices: Vec<SchedSliceRow> = read_table(&partition).unwrap();
    assert!(!slices.is_empty(), "the trace recorded nothing");

    // Each CPU's switches, in time order, give its slices back: from the switch whose next is
    // a thread to the following one, whose prev is that thread and holds its state at the end.
    let mut by_cpu: BTreeMap<i64, Vec<&Value>> = BTreeMap::new();
    for switch in trace["switches"].as_array().unwrap() {
        by_cpu.entry(int(&switch[0])).or_default().push(switch);
    }
    let mut rebuilt = Vec::new();
    for (cpu, switches) in &mut by_cpu {
        switches.sort_by_key(|s| int(&s[1]));
        // A CPU's first switch from a task, alone, is the empty slice of perf's first switch.
        let first = switches[0];
        if int(&first[2]) != 0 {
            let at = int(&first[1]);
            let state = text(&first[5]);
            let prio = first[4].as_i64();
            rebuilt.push((
                *cpu as i32,
                (at, at),
                int(&first[2]) as i32,
                text(&first[3]),
                state,
                prio,
            ));
        }
        for pair in switches.windows(2) {
            let (into, out) = (pair[0], pair[1]);
            assert_eq!(int(&into[6]), int(&out[2]), "CPU {cpu}: {into} then {out}");
            assert_eq!(
                into[7], out[3],
                "CPU {cpu}: the comm switched in is the one out"
            );
            assert_eq!(into[8], out[4], "CPU {cpu}: its prio in and out");
            let prio = into[8].as_i64();
            let span = (int(&into[1]), int(&out[1]));
            rebuilt.push((
                *cpu as i32,
                span,
                int(&out[2]) as i32,
                text(&out[3]),
                text(&out[5]),
                prio,
            ));
        }
    }
    let table: Vec<_> = (slices.iter())
        .map(|s| {
            let prio = s.prio.map(i64::from);
            let state = s.prev_state.to_string();
            (
                s.cpu,
                (s.start_ns, s.end_ns),
                s.tid,
                s.comm.to_string(),
                state,
                prio,
            )
        })
        .collect();
    // What the switches give beyond the table is the idle task in the gaps between slices.
    let mut extra = sorted(rebuilt);
    for slice in sorted(table) {
        let at = extra
            .binary_search(&slice)
            .unwrap_or_else(|_| panic!("{slice:?} not in the trace"));
        extra.remove(at);
    }
    for (cpu, _, tid, comm, state, _) in &extra {
        assert!(
            *tid == 0 && *comm == format!("swapper/{cpu}") && state == "R",
            "{extra:?}"
        );
    }

    // Every wakeup, by kind, from its waker, in its target CPU's bundle.
    let wakeups: Vec<WakeupRow> = read_table(&partition).unwrap();
    assert!(!wakeups.is_empty());
    let decoded: Vec<_> = (trace["wakeups"].as_array().unwrap().iter())
        .map(|w| {
            assert_eq!(w[0], w[5], "a wakeup in its target CPU's bundle: {w}");
            (
                int(&w[1]),
                text(&w[2]),
                int(&w[3]),
                text(&w[4]),
                int(&w[5]),
                int(&w[6]),
            )
        })
        .collect();
    let expected: Vec<_> = (wakeups.iter())
        .map(|w| {
            let waker = i64::from(w.waker_tid.unwrap_or(0));
            let (tid, cpu) = (i64::from(w.tid), i64::from(w.target_cpu));
            (
                w.time_ns,
                w.kind.to_string(),
                tid,
                w.comm.to_string(),
                cpu,
                waker,
            )
        })
        .collect();
    assert_eq!(sorted(decoded), sorted(expected));

    let migrations: Vec<MigrationRow> = read_table(&partition).unwrap();
    let decoded: Vec<_> = (trace["migrations"].as_array().unwrap().iter())
        .map(|m| {
            (
                int(&m[0]),
                int(&m[1]) as i32,
                text(&m[2]),
                int(&m[3]) as i32,
                int(&m[4]) as i32,
            )
        })
        .collect();
    let expected: Vec<_> = (migrations.iter())
        .map(|m| (m.time_ns, m.tid, m.comm.to_string(), m.from_cpu, m.to_cpu))
        .collect();
    assert_eq!(sorted(decoded), sorted(expected));

    // Each thread with its last name, and an exit where the trace saw it end.
    let threads: Vec<ThreadRow> = read_table(&partition).unwrap();
    let last: BTreeMap<i32, &ThreadRow> = (threads.iter())
        .filter(|t| t.tid > 0)
        .map(|t| (t.tid, t))
        .collect();
    let decoded: BTreeMap<i32, String> = (trace["threads"].as_array().unwrap().iter())
        .map(|t| (int(&t[0]) as i32, text(&t[2])))
        .collect();
    let expected: BTreeMap<i32, String> = (last.iter())
        .map(|(tid, t)| (*tid, t.comm.to_string()))
        .collect();
    assert_eq!(decoded, expected);
    let decoded: Vec<_> = (trace["exits"].as_array().unwrap().iter())
        .map(|x| (int(&x[0]), int(&x[1]) as i32, text(&x[3])))
        .collect();
    let expected: Vec<_> = (threads.iter())
        .filter(|t| t.tid > 0)
        .filter_map(|t| t.end_ns.map(|end| (end, t.tid, t.comm.to_string())))
        .collect();
    assert!(!expected.is_empty(), "no thread ended in the trace");
    assert_eq!(sorted(decoded), sorted(expected));

    // The kernel's accounting: a sched_stat_runtime per thread and CPU, at its last update, by
    // the thread, its runtime the sum.
    let runtime: Vec<schedlab_tables::SchedRuntimeRow> = read_table(&partition).unwrap();
    let decoded: Vec<_> = (trace["runtime"].as_array().unwrap().iter())
        .map(|r| {
            assert_eq!(r[2], r[3], "the event's pid is the updated thread: {r}");
            let (cpu, time, tid) = (int(&r[0]) as i32, int(&r[1]), int(&r[3]) as i32);
            (cpu, time, tid, text(&r[4]), int(&r[5]))
        })
        .collect();
    let expected: Vec<_> = (runtime.iter())
        .map(|r| (r.cpu, r.last_ns, r.tid, r.comm.clone(), r.runtime_ns))
        .collect();
    assert!(
        expected.len() > 2,
        "perf sched record records sched_stat_runtime"
    );
    assert_eq!(sorted(decoded), sorted(expected));

    // The workload's processes with their command lines, and their lifetimes on `workloads`.
    let processes: Vec<ProcessRow> = read_table(&partition).unwrap();
    let cmdlines: BTreeMap<i64, Vec<String>> = (trace["processes"].as_array().unwrap().iter())
        .map(|p| (int(&p[0]), serde_json::from_value(p[1].clone()).unwrap()))
        .collect();
    for process in &processes {
        assert_eq!(
            cmdlines[&i64::from(process.pid)],
            process.argv,
            "{process:?}"
        );
    }
    let decoded: Vec<_> = (trace["slices"].as_array().unwrap().iter())
        .map(|s| (text(&s[1]), int(&s[2]), s[3].as_i64()))
        .collect();
    let expected: Vec<_> = (processes.iter())
        .map(|p| {
            let name = format!("{} #{} (pid {})", p.workload, p.instance, p.pid);
            (name, p.start_ns, p.end_ns)
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(sorted(decoded), sorted(expected));
    let tracks = trace["tracks"].as_array().unwrap();
    assert!(tracks.iter().any(|t| t[0] == "workloads"), "{tracks:?}");

    // Each CPU's core class, the kernel release, and the cpu monitor's counters.
    let cpus: Vec<CpuRow> = read_table(&partition).unwrap();
    let classes: Vec<String> = serde_json::from_value(trace["cpus"].clone()).unwrap();
    for cpu in &cpus {
        assert_eq!(classes[cpu.cpu as usize], cpu.class, "CPU {}", cpu.cpu);
    }
    let traces: Vec<TraceRow> = read_table(&partition).unwrap();
    assert_eq!(trace["release"].as_str(), traces[0].os_release.as_deref());
    let series: BTreeMap<String, Vec<(i64, f64)>> =
        serde_json::from_value(trace["counters"].clone()).unwrap();
    check_cpu_series(&series, &read_table(&partition).unwrap());
    let units: BTreeMap<String, Option<String>> = (tracks.iter())
        .map(|t| (text(&t[0]), t[1].as_str().map(str::to_owned)))
        .collect();
    assert_eq!(units["CPU 0 busy"].as_deref(), Some("%"));
    for (name, unit) in &units {
        if name.ends_with(" frequency") {
            assert_eq!(unit.as_deref(), Some("MHz"), "{name}");
        }
    }
}
