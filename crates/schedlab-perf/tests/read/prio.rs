//! `prio` against the priorities `perf script` prints in each sched_switch line
//! (`prev_prio=`, `next_prio=`): on the fixtures, and on a recording made here of two shell
//! loops sharing a CPU, one of them reniced from 0 to 19 while it runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use schedlab_perf::{SchedOptions, SchedSliceRow, read_sched};

use crate::util::{cannot_trace, fixture, on_path, skip, unavailable};

/// One sched_switch as `perf script` prints it.
#[derive(Debug)]
struct Switch {
    prev_pid: i32,
    prev_prio: i32,
    next_pid: i32,
    next_prio: i32,
}

/// `key=<int>` in a sched_switch line; the `next_*` keys are searched after `==>`, so a
/// command name holding such text cannot be taken for a field.
fn field(line: &str, key: &str) -> i32 {
    let part = if key.starts_with("next_") {
        &line[line.rfind("==>").expect("==> in a sched_switch line")..]
    } else {
        line
    };
    let at = part
        .find(&format!(" {key}="))
        .unwrap_or_else(|| panic!("no {key} in {line:?}"));
    let value = &part[at + key.len() + 2..];
    let end = value.find(' ').unwrap_or(value.len());
    value[..end].parse().unwrap()
}

/// Every sched_switch of `file` by (cpu, time in ns), from `perf script --ns`.
fn perf_switches(file: &Path) -> BTreeMap<(i32, i64), Vec<Switch>> {
    let out = Command::new("perf")
        .args(["script", "--ns", "-F", "cpu,time,event,trace", "-i"])
        .arg(file)
        .output()
        .expect("perf script runs");
    assert!(out.status.success(), "perf script on {}", file.display());
    let mut switches: BTreeMap<(i32, i64), Vec<Switch>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if !line.contains("sched:sched_switch:") {
            continue;
        }
        // `[001] 20015.220334957:       sched:sched_switch: prev_comm=…`
        let cpu = line[1..line.find(']').unwrap()].parse().unwrap();
        let time = line[line.find(']').unwrap() + 1..].trim_start();
        let (s, ns) = time[..time.find(':').unwrap()].split_once('.').unwrap();
        let time_ns = s.parse::<i64>().unwrap() * 1_000_000_000 + ns.parse::<i64>().unwrap();
        switches.entry((cpu, time_ns)).or_default().push(Switch {
            prev_pid: field(line, "prev_pid"),
            prev_prio: field(line, "prev_prio"),
            next_pid: field(line, "next_pid"),
            next_prio: field(line, "next_prio"),
        });
    }
    switches
}

/// What [`check`] found: the slices, and how many of them ran at another priority than they
/// ended with (their task was reniced while it ran: the switch-in's `next_prio` decides).
struct Checked {
    slices: Vec<SchedSliceRow>,
    changed_while_running: usize,
}

/// Checks every slice's `prio` against perf's switches: `next_prio` of the switch on its CPU
/// at its start that switched its task in, or where there is none (the CPU's first switch, or
/// a switch-in lost), `prev_prio` of the switch at its end that switched it out.
fn check(file: &Path) -> Checked {
    let opts = SchedOptions {
        run_id: "test".into(),
        ..Default::default()
    };
    let slices = read_sched(file, &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .sched_slices;
    let switches = perf_switches(file);
    let name = file.display();
    assert_eq!(
        slices.len(),
        switches.values().map(Vec::len).sum::<usize>(),
        "{name}: one slice per sched_switch"
    );
    let (mut from_switch_in, mut changed_while_running) = (0, 0);
    for s in &slices {
        let at = |t: i64| switches.get(&(s.cpu, t)).into_iter().flatten();
        let switched_out = at(s.end_ns)
            .find(|w| w.prev_pid == s.tid)
            .unwrap_or_else(|| panic!("{name}: perf has no switch-out for {s:?}"));
        let switched_in = (s.start_ns < s.end_ns)
            .then(|| at(s.start_ns).find(|w| w.next_pid == s.tid))
            .flatten();
        let expected = match switched_in {
            Some(w) => {
                from_switch_in += 1;
                changed_while_running += usize::from(w.next_prio != switched_out.prev_prio);
                w.next_prio
            }
            None => switched_out.prev_prio,
        };
        assert_eq!(s.prio, Some(expected), "{name}: {s:?}");
    }
    // Each CPU's first slice lacks a switch-in, and so do those after events the trace does
    // not have: lost ones, and on this VM's kernel every switch away from idle (see the
    // `quality` note on idle context), so about half the slices here. Both ways occur.
    assert!(
        from_switch_in > 0 && from_switch_in < slices.len(),
        "{name}: {from_switch_in} of {} slices began with a switch-in perf printed",
        slices.len()
    );
    Checked {
        slices,
        changed_while_running,
    }
}

#[test]
fn prio_is_what_perf_script_prints_for_the_fixtures() {
    const TEST: &str = "prio_is_what_perf_script_prints_for_the_fixtures";
    if !on_path("perf") {
        return unavailable(TEST, "perf is not installed");
    }
    for stem in ["bursty", "contended", "allsched", "lossy", "default-clock"] {
        check(&fixture(&format!("{stem}.data")));
    }
}

/// Two shell loops share CPU 0 for 0.6 s, one at nice 0 (priority 120), one at nice 19 (139);
/// from CPU 1 the first is reniced every 0.03 s, to nice 1, 2, … 5. Every slice agrees with
/// perf; the loops' slices (found by the pids the script prints: the trace is of the whole
/// machine, where other tests run shells too) show the first loop at priorities 120 to 125,
/// several of them, and the second at 139; and a slice that was running when its loop was
/// reniced has the priority it was switched in with, not the one it ended with. (The nice-19
/// loop is what switches the first one out, so its switch-ins are seen.)
#[test]
fn prio_follows_nice_in_a_recording() {
    const TEST: &str = "prio_follows_nice_in_a_recording";
    if let Some(reason) = cannot_trace() {
        return unavailable(TEST, &reason);
    }
    if let Some(missing) = ["taskset", "renice"].into_iter().find(|p| !on_path(p)) {
        return unavailable(TEST, &format!("{missing} is not installed"));
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return skip(TEST, "it needs two CPUs");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nice.data");
    // The shell first sets its own nice to 0: a test run under `nice` would otherwise start
    // both loops at the nice it inherited. It renices only once the nice-19 loop has had two
    // clock ticks of CPU time (or 30 s have passed): on a busy machine its 1.5 % share of
    // cpu 0 can otherwise come after the script's end.
    let script = "renice -n 0 -p $$ >/dev/null; \
                  taskset -c 0 sh -c 'while :; do :; done' & a=$!; \
                  taskset -c 0 nice -n 19 sh -c 'while :; do :; done' & b=$!; \
                  i=0; while [ $i -lt 3000 ]; do \
                  read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u s _ < /proc/$b/stat; \
                  [ $((u + s)) -ge 2 ] && break; sleep 0.01; i=$((i + 1)); done; \
                  for n in 1 2 3 4 5 1 2 3 4 5 1 2 3 4 5 1 2 3 4 5; do \
                  sleep 0.03; renice -n $n -p $a >/dev/null; done; \
                  sleep 0.1; kill $a $b; echo $a $b";
    let status = Command::new("perf")
        .args(["sched", "record", "-a", "-k", "CLOCK_MONOTONIC", "-o"])
        .arg(&file)
        .args(["--", "taskset", "-c", "1", "sh", "-c", script])
        .output()
        .expect("perf runs");
    assert!(
        status.status.success(),
        "perf sched record: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let pids: Vec<i32> = String::from_utf8_lossy(&status.stdout)
        .split_whitespace()
        .map(|pid| pid.parse().expect("the script prints two pids"))
        .collect();
    let [reniced, nice_19] = pids[..] else {
        panic!("the script prints two pids, not {pids:?}")
    };
    let checked = check(&file);
    let prios_of = |pid: i32| -> BTreeMap<i32, i64> {
        let mut run_by_prio: BTreeMap<i32, i64> = BTreeMap::new();
        for s in (checked.slices.iter()).filter(|s| s.pid == pid && s.cpu == 0) {
            *run_by_prio.entry(s.prio.unwrap()).or_default() += s.run_ns;
        }
        run_by_prio
    };
    let (reniced, nice_19) = (prios_of(reniced), prios_of(nice_19));
    // Whatever share of the CPU a busy machine left them: the nice-19 loop at 139; the other
    // between nice 0 and 5, and at several of them (20 renices, so that some land while
    // it runs however busy the machine is).
    let ms = |by_prio: &BTreeMap<i32, i64>| -> Vec<(i32, i64)> {
        (by_prio.iter())
            .map(|(p, ns)| (*p, ns / 1_000_000))
            .collect()
    };
    // (Its pid ran at 120 for a moment as `taskset`, before it became `nice -n 19 sh`.)
    assert!(
        nice_19.contains_key(&139) && nice_19.keys().all(|p| [120, 139].contains(p)),
        "the nice-19 loop: ms by prio {:?}",
        ms(&nice_19)
    );
    assert!(
        reniced.len() >= 2 && reniced.keys().all(|p| (120..=125).contains(p)),
        "the reniced loop ran at nice 0 to 5 (prio 120 to 125): ms by prio {:?}",
        ms(&reniced)
    );
    assert!(
        checked.changed_while_running >= 1,
        "the reniced loop's slice across the renice ran at its switch-in priority"
    );
}
