//! The `perf sched timehist` state machine (perf 6.1, `tools/perf/builtin-sched.c`).
//!
//! Every sched_switch on CPU `c` at time `t` ends a slice of the task switched out: it ran
//! from the previous switch on `c` (`tprev`) to `t`. Its wait is `tprev` minus its own
//! previous switch-out; its scheduling delay is `tprev` minus its first wakeup since that
//! switch-out. The first switch on a CPU has no `tprev` and counts as a slice of length 0, as
//! in perf. Idle (`prev_pid == 0`) is a separate task per CPU.
//!
//! One deliberate difference: perf files a switch-out under the *sample's* tid, which is -1
//! for the last switches of an exiting task, so perf 6.1 lumps those into a fake `:-1` task.
//! Here the payload's `prev_pid` decides, which is the task that actually ran.

use crate::decode::{Body, Event};
use crate::le::Comm;
use crate::metadata::WakeKind;
use crate::slice_columns::SliceColumns;
use crate::threads::{Runtime, Threads};

/// CPUs at or beyond this are taken for damaged data rather than a real machine.
pub(crate) const MAX_CPUS: i32 = schedlab_topology::LAST_CPU as i32 + 1;

/// A slice as the state machine ends it; kept column by column in [`SliceColumns`].
///
/// What follows from other fields is not stored: the run time is `end - start`, the wait after
/// a preemption is `wait` or 0.
#[derive(Debug, Clone)]
pub(crate) struct Slice {
    pub cpu: i32,
    pub pid: i32,
    pub tid: i32,
    pub comm: Comm,
    pub start: u64,
    pub end: u64,
    pub wait: u64,
    pub delay: u64,
    /// The task was switched out runnable (preempted) last time, so its wait was a runnable
    /// wait: the slice's `preempt_wait_ns`.
    pub preempted: bool,
    pub state: i64,
    pub workload: Option<u16>,
    /// The task's kernel priority: `next_prio` of the switch-in that began the slice, or, where
    /// the trace did not see that switch-in, `prev_prio` of the switch-out that ended it.
    pub prio: i32,
}

impl Slice {
    /// Time on the CPU: 0 for a CPU's first switch, which has no start (as in perf).
    pub(crate) fn run(&self) -> u64 {
        self.end.wrapping_sub(self.start)
    }

    pub(crate) fn preempt_wait(&self) -> u64 {
        if self.preempted { self.wait } else { 0 }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Migration {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub comm: Comm,
    pub from: i32,
    pub to: i32,
    pub workload: Option<u16>,
}

#[derive(Debug, Clone)]
pub(crate) struct Wakeup {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub comm: Comm,
    pub target_cpu: i32,
    pub waker: i32,
    pub kind: WakeKind,
    pub workload: Option<u16>,
}

/// A PERF_RECORD_LOST (`id == None`, time and CPU known) or LOST_SAMPLES (matched by event id).
#[derive(Debug, Clone)]
pub(crate) struct Lost {
    pub time: u64,
    /// The CPU's last sched_switch before the loss (0: none yet): the lost events happened
    /// between this and `time`.
    pub since: u64,
    pub cpu: i32,
    pub count: u64,
    pub id: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// Time of the last sched_switch on this CPU (perf's `evsel__get_time`).
    tprev: u64,
    /// The task that switch switched in, and its priority then: the next slice's priority
    /// when that task is the one switched out next.
    next_pid: i32,
    next_prio: i32,
    idle: Runtime,
    /// First and last sched_switch time: slices cover exactly this span of the CPU, so the
    /// window where every CPU has data is the intersection of these spans.
    first: u64,
    last: u64,
    /// Switches to the idle task: a CPU that goes idle but is never seen leaving it (its
    /// `idle.last_time` still 0) lost the events recorded in idle context (see
    /// [`Timehist::idle_blind_cpus`]).
    to_idle: u64,
}

/// True when a task switched out in this state was still runnable (preempted): `R`, or `R+`
/// where the kernel sets TASK_REPORT_MAX (0x100) on preemption.
fn runnable(state: i64) -> bool {
    state & 0xff == 0
}

/// Per-event output accumulated since the last [`Timehist::take_output`].
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub slices: SliceColumns,
    pub migrations: Vec<Migration>,
    pub wakeups: Vec<Wakeup>,
}

pub(crate) struct Timehist {
    pub threads: Threads,
    cpus: Vec<Cpu>,
    /// Wakeups of kind `wakeup` do not start a delay when the trace holds sched_waking.
    pub has_waking: bool,
    out: Output,
    /// The most slices, migrations and wakeups one block has had (see `take_output`).
    most_output: (usize, usize, usize),
    pub lost: Vec<Lost>,
    /// Events whose CPU was out of range.
    pub bad_cpu: u64,
}

impl Timehist {
    pub(crate) fn new(threads: Threads, has_waking: bool) -> Self {
        Timehist {
            threads,
            cpus: Vec::new(),
            has_waking,
            out: Output::default(),
            most_output: (0, 0, 0),
            lost: Vec::new(),
            bad_cpu: 0,
        }
    }

    fn cpu(&mut self, cpu: i32) -> Option<&mut Cpu> {
        if !(0..MAX_CPUS).contains(&cpu) {
            self.bad_cpu += 1;
            return None;
        }
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize(i + 1, Cpu::default());
        }
        Some(&mut self.cpus[i])
    }

    /// The output since the last call. The next block's vectors start with room for the most
    /// any block has needed so far, and a quarter more: blocks are alike, and growing a vector
    /// of a million slices by doubling copies it about twice over. Sized after the last block
    /// alone, every block that outgrew the one before would still copy its slices once.
    pub(crate) fn take_output(&mut self) -> Output {
        let most = &mut self.most_output;
        most.0 = most.0.max(self.out.slices.len());
        most.1 = most.1.max(self.out.migrations.len());
        most.2 = most.2.max(self.out.wakeups.len());
        let room = |n: usize| n + n / 4;
        let next = Output {
            slices: SliceColumns::with_capacity(room(most.0)),
            migrations: Vec::with_capacity(room(most.1)),
            wakeups: Vec::with_capacity(room(most.2)),
        };
        std::mem::replace(&mut self.out, next)
    }

    /// Per CPU with data: (cpu, first sample time, last sample time).
    /// The time of the last sched_switch seen on `cpu` (0 when none).
    fn cpu_last(&self, cpu: i32) -> u64 {
        usize::try_from(cpu)
            .ok()
            .and_then(|c| self.cpus.get(c))
            .map_or(0, |c| c.last)
    }

    /// CPUs that were switched to idle at least `MIN_IDLE_SWITCHES` times but never switched
    /// away from it, with the first count. Every event in idle context (the idle task's
    /// switch-out, wakeups from interrupts) is missing on such a CPU — some virtual machines'
    /// kernels record none — so each slice there spans the idle time before it: run times are
    /// inflated and the delays that follow idle are unknown.
    pub(crate) fn idle_blind_cpus(&self) -> Vec<(i32, u64)> {
        const MIN_IDLE_SWITCHES: u64 = 10;
        (self.cpus.iter().enumerate())
            .filter(|(_, c)| c.to_idle >= MIN_IDLE_SWITCHES && c.idle.last_time == 0)
            .map(|(i, c)| (i as i32, c.to_idle))
            .collect()
    }

    pub(crate) fn cpu_spans(&self) -> Vec<(i32, u64, u64)> {
        (self.cpus.iter().enumerate())
            .filter(|(_, c)| c.first != 0)
            .map(|(i, c)| (i as i32, c.first, c.last))
            .collect()
    }

    pub(crate) fn event(&mut self, e: &Event) {
        match e.body {
            Body::Switch {
                prev_pid,
                prev_state,
                prev_comm,
                prev_prio,
                next_pid,
                next_prio,
            } => self.switch(
                e,
                (prev_pid, prev_state, prev_comm, prev_prio),
                (next_pid, next_prio),
            ),
            Body::Wake {
                kind,
                pid,
                target_cpu,
                comm,
            } => {
                let t = self.threads.get_or_create(pid, None, Some(&comm));
                let counts = kind != WakeKind::Wakeup || !self.has_waking;
                if counts && pid != 0 && t.runtime.ready_to_run == 0 {
                    t.runtime.ready_to_run = e.time;
                }
                let (pid_of, workload) = (t.pid, t.workload);
                self.out.wakeups.push(Wakeup {
                    time: e.time,
                    pid: pid_of,
                    tid: pid,
                    comm,
                    target_cpu,
                    waker: e.tid,
                    kind,
                    workload,
                });
            }
            Body::Migrate {
                pid,
                orig_cpu,
                dest_cpu,
                comm,
            } => {
                let t = self.threads.get_or_create(pid, None, Some(&comm));
                let (pid_of, workload) = (t.pid, t.workload);
                self.out.migrations.push(Migration {
                    time: e.time,
                    pid: pid_of,
                    tid: pid,
                    comm,
                    from: orig_cpu,
                    to: dest_cpu,
                    workload,
                });
            }
            Body::ProcessFork {
                parent_pid,
                child_pid,
                child_comm,
            } => {
                self.threads
                    .fork_tracepoint(e.time, parent_pid, child_pid, &child_comm);
            }
            Body::ProcessExec { pid, comm } => {
                self.threads.get_or_create(pid, None, Some(&comm)).comm = comm;
            }
            Body::ProcessExit { pid } => self.threads.exit(e.time, pid),
            Body::Comm { pid, tid, comm, .. } => self.threads.set_comm(Some(pid), tid, &comm),
            Body::Fork { pid, tid, ptid, .. } => self.threads.fork(e.time, pid, tid, ptid),
            Body::Exit { tid, .. } => self.threads.exit(e.time, tid),
            Body::Lost { count } => self.lost.push(Lost {
                time: e.time,
                since: self.cpu_last(e.cpu),
                cpu: e.cpu,
                count,
                id: None,
            }),
            Body::LostSamples { id, count } => self.lost.push(Lost {
                time: e.time,
                since: 0,
                cpu: e.cpu,
                count,
                id,
            }),
        }
    }

    /// One sched_switch: `prev` is the task switched out (pid, state, comm, prio), `next` the
    /// one switched in (pid, prio).
    fn switch(&mut self, e: &Event, prev: (i32, i64, Comm, i32), next: (i32, i32)) {
        let ((prev_pid, state, comm, prev_prio), (next_pid, next_prio)) = (prev, next);
        let t = e.time;
        let Some(cpu) = self.cpu(e.cpu) else {
            return;
        };
        cpu.to_idle += u64::from(next_pid == 0);
        if cpu.first == 0 {
            cpu.first = t;
        }
        cpu.last = t;
        let tprev = cpu.tprev;
        cpu.tprev = t;
        let prio = if tprev != 0 && cpu.next_pid == prev_pid {
            cpu.next_prio
        } else {
            prev_prio
        };
        (cpu.next_pid, cpu.next_prio) = (next_pid, next_prio);
        let (runtime, pid, workload) = if prev_pid == 0 {
            (&mut cpu.idle, 0, None)
        } else {
            let th = self
                .threads
                .get_or_create(prev_pid, Some(e.pid), Some(&comm));
            if tprev != 0 {
                if th.first_run == 0 {
                    th.first_run = tprev;
                }
                th.last_run = t;
            }
            (&mut th.runtime, th.pid, th.workload)
        };
        let (mut wait, mut delay, mut preempted) = (0, 0, false);
        if tprev != 0 {
            if runtime.ready_to_run != 0 && runtime.ready_to_run <= tprev {
                delay = tprev - runtime.ready_to_run;
            }
            if runtime.last_time != 0 && runtime.last_time <= tprev {
                wait = tprev - runtime.last_time;
                preempted = runnable(runtime.last_state);
            }
        }
        *runtime = Runtime {
            last_time: t,
            last_state: state,
            ready_to_run: 0,
        };
        self.out.slices.push(Slice {
            cpu: e.cpu,
            pid,
            tid: prev_pid,
            comm,
            start: if tprev != 0 { tprev } else { t },
            end: t,
            wait,
            delay,
            preempted,
            state,
            workload,
            prio,
        });
    }
}
