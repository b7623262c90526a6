//! The kernel's own accounting (sched_stat_runtime), per thread and CPU, against perf's own
//! decoding of the same events, and the trace facts that say when it is needed.

use std::collections::BTreeMap;
use std::process::Command;

use schedlab_perf::SchedTables;

use crate::util::{fixture, on_path, read};

/// Runtime and events per (tid, cpu) as `perf script` prints sched_stat_runtime: `TID [CPU]
/// sched:sched_stat_runtime: comm=NAME pid=PID runtime=NS [ns]` (NAME may hold spaces, and
/// older kernels add ` vruntime=…`). `None` without perf.
fn perf_script_runtime(stem: &str) -> Option<BTreeMap<(i32, i32), (i64, i64)>> {
    if !on_path("perf") {
        schedlab_testkit::unavailable(&schedlab_testkit::test_name(), "perf is not installed");
        return None;
    }
    let out = Command::new("perf")
        .args(["script", "-F", "tid,cpu,event,trace", "-i"])
        .arg(fixture(&format!("{stem}.data")))
        .output()
        .expect("perf runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sums: BTreeMap<(i32, i32), (i64, i64)> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((head, fields)) = line.split_once(" sched:sched_stat_runtime: ") else {
            continue;
        };
        let cpu: i32 = (head.split_whitespace().nth(1))
            .and_then(|c| c.trim_matches(['[', ']']).parse().ok())
            .unwrap_or_else(|| panic!("no cpu in {line:?}"));
        let at = fields.rfind(" pid=").expect("pid=");
        let mut rest = fields[at + 1..].split_whitespace();
        let tid: i32 = rest.next().unwrap()["pid=".len()..].parse().unwrap();
        let runtime: i64 = rest.next().unwrap()["runtime=".len()..].parse().unwrap();
        let sum = sums.entry((tid, cpu)).or_default();
        sum.0 += runtime;
        sum.1 += 1;
    }
    Some(sums)
}

fn ours(t: &SchedTables) -> BTreeMap<(i32, i32), (i64, i64)> {
    (t.sched_runtime.iter())
        .map(|r| ((r.tid, r.cpu), (r.runtime_ns, r.events)))
        .collect()
}

#[test]
fn the_kernels_runtime_per_thread_and_cpu_is_what_perf_decodes() {
    for stem in ["bursty", "contended", "lossy"] {
        let Some(perf) = perf_script_runtime(stem) else {
            return;
        };
        let t = read(&format!("{stem}.data"));
        assert!(
            !perf.is_empty(),
            "{stem}: perf sched record records sched_stat_runtime"
        );
        assert_eq!(ours(&t), perf, "{stem}");
        assert!(t.trace.as_ref().unwrap().kernel_runtime, "{stem}");
    }
}

#[test]
fn the_kernels_runtime_says_what_slices_on_an_idle_blind_cpu_overstate() {
    // bursty.data: stress-ng --cpu 1 --cpu-load 20 for 3 s, its idle time on cpu 1 untraced.
    // perf script sums the worker's (tid 10201) sched_stat_runtime to 611,282,836 ns on cpu 1
    // and 1,935,959 ns on cpu 0: about 20 % of 3 s, as asked; its slices on cpu 1 span
    // 1,197,257,721 ns, since each runs on from the previous switch the trace saw there.
    let t = read("bursty.data");
    let trace = t.trace.as_ref().unwrap();
    assert_eq!(trace.idle_blind_cpus, "1");
    let worker = (t.sched_runtime.iter())
        .find(|r| r.comm == "stress-ng-cpu" && r.cpu == 1)
        .expect("the worker's runtime on cpu 1");
    assert_eq!(worker.runtime_ns, 611_282_836);
    assert_eq!((worker.pid, worker.events), (10201, 1227));
    assert!(worker.first_ns < worker.last_ns);
    let sliced: i64 = (t.sched_slices.iter())
        .filter(|s| s.tid == worker.tid && s.cpu == 1)
        .map(|s| s.run_ns)
        .sum();
    assert_eq!(sliced, 1_197_257_721);
    // Where both CPUs stay busy, nothing is idle-blind.
    assert_eq!(read("contended.data").trace.unwrap().idle_blind_cpus, "");
}

#[test]
fn a_trace_without_sched_stat_runtime_says_so() {
    // allsched.data: `perf record -e sched:sched_switch,…` without sched_stat_runtime, on the
    // VM whose cpu 1 records nothing in idle context.
    let t = read("allsched.data");
    let trace = t.trace.as_ref().unwrap();
    assert!(!trace.kernel_runtime);
    assert!(t.sched_runtime.is_empty());
    assert_eq!(trace.idle_blind_cpus, "1");
}
