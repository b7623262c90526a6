//! CPUs received per workload, before, during and after a reference workload.
//!
//! Seed page 8 runs 16 nice-19 workers and starts one normal-priority openssl among them: the
//! background had 15.96 CPUs before openssl started and 15.07 while it ran; openssl had 0.93.
//! The phases come from the reference workload's lifetime (`processes`): `before` from the first
//! process start of the run to the reference's start, `during` its lifetime, `after` from its
//! end to the last process end. A workload's CPU time in a phase is the part of its trace slices
//! inside it (exact), or without a trace, the CPU time /proc reported between two placement
//! samples, booked at the later sample (an estimate at the sampling interval). Where a thread's
//! slices are not its headline figure (see [`crate::headline`]: a CPU whose idle was not
//! traced), its slices in a phase are scaled per CPU to the kernel's or /proc's CPU time, and
//! the rows say `kernel` or `proc`.

use std::collections::BTreeMap;

use schedlab_tables::CpuShareRow;

use crate::RunTables;
use crate::headline::{Headline, Scale};

/// The one phase of a run without a reference workload.
pub const RUN_PHASE: &str = "run";

/// The phases of `run`: name and span. Empty when no process ended, or when the reference
/// workload did not run.
fn phases(run: &RunTables<'_>, reference: Option<&str>) -> Vec<(&'static str, (i64, i64))> {
    let start = run.processes.iter().map(|p| p.start_ns).min();
    let end = run.processes.iter().filter_map(|p| p.end_ns).max();
    let (Some(start), Some(end)) = (start, end) else {
        return Vec::new();
    };
    let Some(reference) = reference else {
        return vec![(RUN_PHASE, (start, end))];
    };
    let own = run
        .processes
        .iter()
        .copied()
        .filter(|p| p.workload == reference);
    let Some((ref_start, ref_end)) = crate::lifetime(own) else {
        return Vec::new();
    };
    let ref_end = ref_end.unwrap_or(end);
    [
        ("before", (start, ref_start)),
        ("during", (ref_start, ref_end)),
        ("after", (ref_end, end)),
    ]
    .into_iter()
    .filter(|(_, (a, b))| b > a)
    .collect()
}

/// Where a workload's CPU time in the phases came from: `sched` (the trace's slices), `kernel`
/// or `proc` (its slices scaled to them, for threads whose slices are not their headline), or
/// `placement` (/proc samples, without a trace). The first of them that any of its threads needs.
type Sources = BTreeMap<String, (u8, &'static str)>;

/// What the rows call a traced thread's source, by rank: the kernel's before /proc's before the
/// slices.
const SOURCES: [&str; 3] = ["sched", "proc", "kernel"];

/// CPU time per (phase, workload text key, CPU).
type PerCpu = foldhash::HashMap<(usize, u32, i32), i64>;

/// The time of consecutive slices booked to the same key, summed before it goes into the map.
#[derive(Default)]
struct RunningSum(Option<((usize, u32, i32), i64)>);

impl RunningSum {
    fn add(&mut self, key: (usize, u32, i32), ns: i64, into: &mut PerCpu) {
        match &mut self.0 {
            Some((at, sum)) if *at == key => *sum += ns,
            _ => {
                self.flush(into);
                self.0 = Some((key, ns));
            }
        }
    }

    fn flush(&mut self, into: &mut PerCpu) {
        if let Some((at, sum)) = self.0.take() {
            *into.entry(at).or_default() += sum;
        }
    }
}

/// CPU time per (phase, workload, class) of one run, and where each workload's came from.
fn cpu_time(
    run: &RunTables<'_>,
    phases: &[(&'static str, (i64, i64))],
) -> (BTreeMap<(usize, String, String), i64>, Sources) {
    let mut time: BTreeMap<(usize, String, String), i64> = BTreeMap::new();
    let mut book = |phase: usize, workload: &str, cpu: i32, ns: i64| {
        for class in [run.class(cpu), "all".to_owned()] {
            *time.entry((phase, workload.to_owned(), class)).or_default() += ns;
        }
    };
    let mut sources = Sources::new();
    if !run.threads.is_empty() {
        // Summed per CPU first, by text key: a slice's texts are neither compared nor copied.
        let mut per_cpu = PerCpu::default();
        let mut ranks: foldhash::HashMap<u32, u8> = Default::default();
        let headlines = run.headlines();
        for (tid, slices) in run.threads.threads() {
            let time = headlines.get(tid);
            let rank: u8 = match time.map(|t| t.headline) {
                Some(Headline::Kernel) => 2,
                Some(Headline::Proc) => 1,
                _ => 0,
            };
            // A thread's slices run on the same CPU, in the same workload and phase, for
            // long stretches: what the last slice looked up serves the next, and its time is
            // summed before it is booked in the map.
            let (mut ranked, mut scale) = (None, None);
            let mut booked = RunningSum::default();
            for s in slices.iter() {
                let (workload, cpu) = (s.workload_key(), s.cpu());
                if ranked != Some(workload) {
                    let known = ranks.entry(workload).or_insert(rank);
                    *known = (*known).max(rank);
                    ranked = Some(workload);
                }
                let on_cpu = match scale {
                    Some((at, on_cpu)) if at == cpu => on_cpu,
                    _ => {
                        let on_cpu = time.map_or(Scale::WHOLE, |t| t.scale(cpu));
                        scale = Some((cpu, on_cpu));
                        on_cpu
                    }
                };
                for (i, (_, span)) in phases.iter().enumerate() {
                    let inside = s.overlap_ns(*span);
                    if inside > 0 {
                        booked.add((i, workload, cpu), on_cpu.of(inside), &mut per_cpu);
                    }
                }
            }
            booked.flush(&mut per_cpu);
        }
        let texts = run.threads.texts();
        for ((phase, workload, cpu), ns) in per_cpu {
            book(phase, &texts[workload as usize], cpu, ns);
        }
        for (workload, rank) in ranks {
            sources.insert(
                texts[workload as usize].to_string(),
                (rank, SOURCES[rank as usize]),
            );
        }
        return (time, sources);
    }
    for gain in schedlab_tables::placement::gains(run.placement.iter().copied()) {
        let s = gain.sample;
        let (Some(workload), Some(phase)) = (
            &s.workload,
            (phases.iter()).position(|(_, (a, b))| *a < s.time_ns && s.time_ns <= *b),
        ) else {
            continue;
        };
        book(phase, workload, s.cpu, gain.gained_ns);
        sources.insert(workload.clone(), (0, "placement"));
    }
    (time, sources)
}

/// The CPUs each workload of `run` received in each phase, in total (`all`) and per class.
pub fn cpu_share(run: &RunTables<'_>, reference: Option<&str>) -> Vec<CpuShareRow> {
    // Without a trace or placement samples there is nothing to measure: no rows, not zeros.
    if run.threads.is_empty() && run.placement.is_empty() {
        return Vec::new();
    }
    let phases = phases(run, reference);
    let (time, sources) = cpu_time(run, &phases);
    // A workload with no CPU time to book gets its run's kind of source.
    let run_source = if run.threads.is_empty() {
        "placement"
    } else {
        "sched"
    };
    let mut workloads: Vec<&str> = run.processes.iter().map(|p| p.workload.as_str()).collect();
    workloads.sort();
    workloads.dedup();
    let mut rows = Vec::new();
    // Each workload's and class's CPUs in the phase before, for the change.
    let mut previous: Option<BTreeMap<(&str, String), f64>> = None;
    for (i, (phase, (start, end))) in phases.iter().enumerate() {
        let length_ns = (end - start) as f64;
        let mut this_phase = BTreeMap::new();
        for workload in &workloads {
            let mut classes: Vec<(String, i64)> = (time.iter())
                .filter(|((p, w, _), _)| *p == i && w == workload)
                .map(|((_, _, class), ns)| (class.clone(), *ns))
                .collect();
            // A workload that had no CPU in a phase still gets its row, with 0.
            if classes.is_empty() {
                classes.push(("all".to_owned(), 0));
            }
            for (class, cpu_ns) in classes {
                let cpus = cpu_ns as f64 / length_ns;
                let change_cpus = (previous.as_ref())
                    .map(|before| cpus - before.get(&(*workload, class.clone())).unwrap_or(&0.0));
                this_phase.insert((*workload, class.clone()), cpus);
                rows.push(CpuShareRow {
                    run_id: run.run_id.to_owned(),
                    reference: reference.map(str::to_owned),
                    phase: (*phase).to_owned(),
                    phase_start_ns: *start,
                    phase_end_ns: *end,
                    workload: (*workload).to_owned(),
                    class,
                    cpu_ns,
                    cpus,
                    source: sources
                        .get(*workload)
                        .map_or(run_source, |&(_, source)| source)
                        .to_owned(),
                    change_cpus,
                    change_cpu_s: change_cpus.map(|change| change * length_ns / 1e9),
                });
            }
        }
        previous = Some(this_phase);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_tables::{ProcessRow, SchedSliceRow};

    const S: i64 = 1_000_000_000;

    fn process(workload: &str, pid: i32, start_s: i64, end_s: i64) -> ProcessRow {
        ProcessRow {
            run_id: "r".into(),
            workload: workload.into(),
            instance: 0,
            pid,
            start_ns: start_s * S,
            end_ns: Some(end_s * S),
            exit_code: Some(0),
            nice: 0,
            affinity: None,
            argv: Vec::new(),
        }
    }

    fn slice(workload: &str, pid: i32, start_s: i64, end_s: i64) -> SchedSliceRow {
        SchedSliceRow {
            run_id: "r".into(),
            cpu: 0,
            pid,
            tid: pid,
            comm: workload.into(),
            start_ns: start_s * S,
            end_ns: end_s * S,
            run_ns: (end_s - start_s) * S,
            wait_ns: 0,
            sched_delay_ns: 0,
            preempt_wait_ns: 0,
            prev_state: "R".into(),
            workload: Some(workload.into()),
            prio: Some(120),
        }
    }

    #[test]
    fn each_phase_has_its_change_from_the_phase_before_in_cpus_and_cpu_seconds() {
        // One CPU: the background has it, then shares it with the foreground for 10 s.
        let processes = [process("bg", 1, 0, 30), process("fg", 2, 10, 20)];
        let slices = [
            slice("bg", 1, 0, 15),
            slice("fg", 2, 15, 20),
            slice("bg", 1, 20, 30),
        ];
        let run = RunTables {
            processes: processes.iter().collect(),
            ..RunTables::for_tests(&slices)
        };
        let rows = cpu_share(&run, Some("fg"));
        let seen: Vec<String> = (rows.iter())
            .map(|r| {
                let change = r.change_cpus.zip(r.change_cpu_s);
                let change = change.map_or("–".to_owned(), |(c, s)| format!("{c:+} ({s:+} s)"));
                format!(
                    "{} {} {}: {} {change}",
                    r.phase, r.workload, r.class, r.cpus
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                "before bg P: 1 –",
                "before bg all: 1 –",
                "before fg all: 0 –",
                "during bg P: 0.5 -0.5 (-5 s)",
                "during bg all: 0.5 -0.5 (-5 s)",
                "during fg P: 0.5 +0.5 (+5 s)",
                "during fg all: 0.5 +0.5 (+5 s)",
                "after bg P: 1 +0.5 (+5 s)",
                "after bg all: 1 +0.5 (+5 s)",
                "after fg all: 0 -0.5 (-5 s)",
            ]
        );
    }

    #[test]
    fn slices_on_an_idle_blind_cpu_count_as_much_as_the_kernel_says() {
        // The background's slices on cpu 1 span 0..15 s and 20..30 s, but cpu 1's idle went
        // untraced and the kernel says it ran 12.5 s of those 25: half of each phase's slices.
        let processes = [process("bg", 1, 0, 30), process("fg", 2, 10, 20)];
        let on_1 = |s: SchedSliceRow| SchedSliceRow { cpu: 1, ..s };
        let slices = [
            on_1(slice("bg", 1, 0, 15)),
            slice("fg", 2, 15, 20),
            on_1(slice("bg", 1, 20, 30)),
        ];
        let runtime = [crate::events::Runtime {
            cpu: 1,
            tid: 1,
            runtime_ns: 25 * S / 2,
            events: 50,
        }];
        let run = RunTables {
            processes: processes.iter().collect(),
            sched_runtime: &runtime,
            idle_blind_cpus: [1].into(),
            ..RunTables::for_tests(&slices)
        };
        let rows = cpu_share(&run, Some("fg"));
        let seen: Vec<String> = (rows.iter())
            .filter(|r| r.class == "all")
            .map(|r| format!("{} {}: {} {}", r.phase, r.workload, r.cpus, r.source))
            .collect();
        assert_eq!(
            seen,
            [
                "before bg: 0.5 kernel",
                "before fg: 0 sched",
                "during bg: 0.25 kernel",
                "during fg: 0.5 sched",
                "after bg: 0.5 kernel",
                "after fg: 0 sched",
            ]
        );
    }
}
