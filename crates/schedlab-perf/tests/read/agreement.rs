//! Every thread's figures against `perf sched timehist` (6.1) run on the same file: the
//! fixtures README gives the commands that recorded the traces and printed the references.

use std::collections::BTreeMap;

use schedlab_perf::SchedTables;

use crate::util::{Line, Summary, listing, read, summary, us};

/// Checks one fixture: the listing slice by slice, then each thread of the summary.
fn check(stem: &str) {
    let tables = read(&format!("{stem}.data"));
    let (lines, _) = listing(&format!("{stem}.timehist.txt"));
    let summary = summary(&format!("{stem}.summary.txt"));
    agrees_with_perf(stem, &tables, &lines, &summary);
}

/// Checks `tables`, read from the file `stem` names, against perf's `perf sched timehist`
/// listing of it and its `perf sched timehist -M -s` summary.
pub fn agrees_with_perf(
    stem: &str,
    tables: &SchedTables,
    lines: &[Line],
    summary: &(BTreeMap<i32, Summary>, BTreeMap<i32, Option<i64>>),
) {
    let slices = &tables.sched_slices;
    assert_eq!(
        slices.len(),
        lines.len(),
        "{stem}: one slice per timehist line"
    );

    // Slice by slice, in perf's delivery order. Where perf shows tid -1 (an exiting thread's
    // last switch-outs, filed under the sample's tid) we follow prev_pid; perf's wait and delay
    // on those lines come from its fake -1 thread, so only time, CPU and run time compare.
    let mut minus_one: BTreeMap<i32, usize> = BTreeMap::new();
    for (i, (s, l)) in slices.iter().zip(lines).enumerate() {
        let ours = Line {
            time_us: us(s.end_ns),
            cpu: s.cpu,
            tid: s.tid,
            wait_us: us(s.wait_ns),
            delay_us: us(s.sched_delay_ns),
            run_us: us(s.run_ns),
        };
        if l.tid == -1 {
            assert!(
                s.tid > 0,
                "{stem} line {i}: perf's -1 must be a real thread here: {s:?}"
            );
            *minus_one.entry(s.tid).or_default() += 1;
            assert_eq!(
                (ours.time_us, ours.cpu, ours.run_us),
                (l.time_us, l.cpu, l.run_us),
                "{stem} line {i}"
            );
        } else {
            assert_eq!(&ours, l, "{stem} line {i}");
        }
    }

    // Per thread: the summary's count, run time, max run time and migrations, with the slices
    // perf put under -1 taken out of ours.
    let (perf_threads, perf_idle) = summary;
    for (&tid, p) in perf_threads.iter().filter(|(t, _)| **t > 0) {
        let mine: Vec<(&schedlab_perf::SchedSliceRow, &Line)> = slices
            .iter()
            .zip(lines)
            .filter(|(s, l)| s.tid == tid && l.tid != -1)
            .collect();
        let run_ns: i64 = mine.iter().map(|(s, _)| s.run_ns).sum();
        let max_run = mine.iter().map(|(s, _)| s.run_ns).max().unwrap_or(0);
        let migrations = tables.migrations.iter().filter(|m| m.tid == tid).count() as i64;
        assert_eq!(
            (mine.len() as i64, us(run_ns), us(max_run), migrations),
            (p.count, p.run_us, p.max_run_us, p.migrations),
            "{stem}: tid {tid} (count, run µs, max run µs, migrations)"
        );
        let extra = minus_one.get(&tid).copied().unwrap_or(0);
        assert_eq!(
            slices.iter().filter(|s| s.tid == tid).count(),
            mine.len() + extra
        );
    }
    // perf's -1 row is exactly the slices we gave back to their threads.
    let perf_minus_one = perf_threads.get(&-1).map_or(0, |s| s.count);
    assert_eq!(
        minus_one.values().sum::<usize>() as i64,
        perf_minus_one,
        "{stem}: -1 row"
    );
    // Every thread we have slices for is a thread perf printed (or one of its -1 slices).
    for s in slices.iter().filter(|s| s.tid > 0) {
        assert!(
            perf_threads.contains_key(&s.tid) || minus_one.contains_key(&s.tid),
            "{stem}: tid {} unknown to perf",
            s.tid
        );
    }

    // Idle per CPU.
    for (&cpu, &idle_us) in perf_idle {
        let idle: Vec<i64> = slices
            .iter()
            .filter(|s| s.tid == 0 && s.cpu == cpu)
            .map(|s| s.run_ns)
            .collect();
        match idle_us {
            Some(v) => assert_eq!(us(idle.iter().sum()), v, "{stem}: idle on cpu {cpu}"),
            None => assert!(
                idle.is_empty(),
                "{stem}: perf saw no idle slice on cpu {cpu}"
            ),
        }
    }

    // Per thread and CPU run time, mean and max delay, from the listing's columns.
    let mut perf_by: BTreeMap<(i32, i32), (i64, i64, i64, i64)> = BTreeMap::new();
    let mut ours_by = perf_by.clone();
    for (s, l) in slices.iter().zip(lines).filter(|(_, l)| l.tid != -1) {
        for (map, run, delay) in [
            (&mut perf_by, l.run_us, l.delay_us),
            (&mut ours_by, us(s.run_ns), us(s.sched_delay_ns)),
        ] {
            let e = map.entry((s.tid, s.cpu)).or_default();
            *e = (e.0 + run, e.1 + delay, e.2.max(delay), e.3 + 1);
        }
    }
    assert_eq!(
        ours_by, perf_by,
        "{stem}: per thread and cpu (run, delay sum, max delay, n)"
    );
}

#[test]
fn bursty_single_worker_agrees_with_perf() {
    check("bursty");
}

#[test]
fn contended_pair_agrees_with_perf() {
    check("contended");
}

#[test]
fn all_sched_tracepoints_agree_with_perf() {
    check("allsched");
}

#[test]
fn lossy_trace_agrees_with_perf() {
    check("lossy");
}

/// `preempt_wait_ns` is the wait of a slice whose thread was switched out runnable (`R`/`R+`),
/// and perf 6.1 reports no scheduling delay for it (no wakeup came in between).
#[test]
fn preempt_wait_follows_runnable_switch_outs() {
    let t = read("contended.data");
    let mut last_state: BTreeMap<i32, std::sync::Arc<str>> = BTreeMap::new();
    let mut preempted = 0;
    for s in t.sched_slices.iter().filter(|s| s.tid > 0) {
        match last_state.get(&s.tid).map(|p| p.starts_with('R')) {
            Some(true) if s.wait_ns > 0 => {
                assert_eq!(
                    (s.preempt_wait_ns, s.sched_delay_ns),
                    (s.wait_ns, 0),
                    "{s:?}"
                );
                preempted += 1;
            }
            _ => assert_eq!(s.preempt_wait_ns, 0, "{s:?}"),
        }
        last_state.insert(s.tid, s.prev_state.clone());
    }
    assert!(
        preempted > 100,
        "contended workers are preempted often: {preempted}"
    );
}
