//! The thread table and workload attribution.
//!
//! Threads come from COMM/FORK/EXIT records (including the ones perf synthesizes for tasks that
//! existed before recording started), the fork/exec/exit tracepoints, and any task a sample
//! names. A thread belongs to a workload when it is one of the processes the runner started,
//! a thread of such a process, or was forked — directly or transitively — from one. The workload
//! is decided when the thread is first seen and inherited at fork, so attribution follows the
//! process tree rather than command names.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::le::Comm;

/// A multiplicative hash for small integer keys (tids): much cheaper than SipHash, and tids are
/// not attacker-chosen.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i32(&mut self, i: i32) {
        self.0 = (i as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(crate) type IdMap<V> = HashMap<i32, V, BuildHasherDefault<IdHasher>>;

/// perf's per-thread timehist state (`struct thread_runtime`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Runtime {
    /// Time of the thread's last switch-out (0: never).
    pub last_time: u64,
    /// `prev_state` at that switch-out.
    pub last_state: i64,
    /// First wakeup since the last switch-out (0: none).
    pub ready_to_run: u64,
}

/// One thread object: a tid from its fork (or first sighting) to the next fork of that tid.
#[derive(Debug, Clone)]
pub(crate) struct Thread {
    pub tid: i32,
    pub pid: i32,
    /// Whether `pid` came from the kernel rather than a guess (a wakeup names only the tid).
    pid_known: bool,
    pub parent: Option<i32>,
    pub comm: Comm,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub workload: Option<u16>,
    pub runtime: Runtime,
}

pub(crate) struct Threads {
    by_tid: IdMap<usize>,
    pub all: Vec<Thread>,
    /// Root process id → workload index.
    roots: Vec<(i32, u16)>,
}

impl Threads {
    pub(crate) fn new(roots: Vec<(i32, u16)>) -> Self {
        Threads {
            by_tid: IdMap::default(),
            all: Vec::new(),
            roots,
        }
    }

    fn root(&self, id: i32) -> Option<u16> {
        self.roots.iter().find(|r| r.0 == id).map(|r| r.1)
    }

    fn workload_of(&self, tid: i32, pid: i32, parent: Option<i32>) -> Option<u16> {
        self.root(tid)
            .or_else(|| self.root(pid))
            .or_else(|| parent.and_then(|p| self.get(p)).and_then(|t| t.workload))
            .or_else(|| {
                (pid != tid)
                    .then(|| self.get(pid))
                    .flatten()
                    .and_then(|t| t.workload)
            })
    }

    pub(crate) fn get(&self, tid: i32) -> Option<&Thread> {
        self.by_tid.get(&tid).map(|&i| &self.all[i])
    }

    fn insert(&mut self, t: Thread) -> usize {
        let i = self.all.len();
        self.by_tid.insert(t.tid, i);
        self.all.push(t);
        i
    }

    /// The thread with this tid, created when unseen. `pid` is what the kernel said the
    /// process is, if anything.
    pub(crate) fn get_or_create(
        &mut self,
        tid: i32,
        pid: Option<i32>,
        comm: Option<&Comm>,
    ) -> &mut Thread {
        let i = match self.by_tid.get(&tid) {
            Some(&i) => {
                if let (false, Some(p)) = (self.all[i].pid_known, pid.filter(|&p| p > 0)) {
                    let root = self.root(p);
                    let t = &mut self.all[i];
                    t.pid = p;
                    t.pid_known = true;
                    t.workload = t.workload.or(root);
                }
                i
            }
            None => {
                let p = pid.filter(|&p| p > 0);
                let pid_value = p.unwrap_or(tid);
                let workload = self.workload_of(tid, pid_value, None);
                self.insert(Thread {
                    tid,
                    pid: pid_value,
                    pid_known: p.is_some(),
                    parent: None,
                    comm: comm.copied().unwrap_or([0; 16]),
                    start: None,
                    end: None,
                    workload,
                    runtime: Runtime::default(),
                })
            }
        };
        &mut self.all[i]
    }

    /// PERF_RECORD_FORK. Like perf, a fork starts a fresh thread object (a reused tid is a new
    /// thread), except for the records perf synthesizes at time 0 for tasks already seen.
    pub(crate) fn fork(&mut self, time: u64, pid: i32, tid: i32, ptid: i32) {
        if let Some(&i) = self.by_tid.get(&tid) {
            let t = &self.all[i];
            if time == 0 && t.start.is_none() && t.runtime.last_time == 0 {
                let workload = self.workload_of(tid, pid, Some(ptid)).or(t.workload);
                let t = &mut self.all[i];
                t.pid = pid;
                t.pid_known = true;
                t.parent = Some(ptid);
                t.workload = workload;
                return;
            }
        }
        let comm = self.get(ptid).map_or([0; 16], |p| p.comm);
        let workload = self.workload_of(tid, pid, Some(ptid));
        self.insert(Thread {
            tid,
            pid,
            pid_known: true,
            parent: Some(ptid),
            comm,
            start: (time != 0).then_some(time),
            end: None,
            workload,
            runtime: Runtime::default(),
        });
    }

    /// sched_process_fork: only the tids are known; used when no FORK record made the thread.
    pub(crate) fn fork_tracepoint(&mut self, time: u64, parent: i32, child: i32, comm: &Comm) {
        if self.get(child).is_some() {
            return;
        }
        let workload = self.workload_of(child, child, Some(parent));
        self.insert(Thread {
            tid: child,
            pid: child,
            pid_known: false,
            parent: Some(parent),
            comm: *comm,
            start: Some(time),
            end: None,
            workload,
            runtime: Runtime::default(),
        });
    }

    pub(crate) fn set_comm(&mut self, pid: Option<i32>, tid: i32, comm: &Comm) {
        self.get_or_create(tid, pid, Some(comm)).comm = *comm;
    }

    pub(crate) fn exit(&mut self, time: u64, tid: i32) {
        if let Some(&i) = self.by_tid.get(&tid) {
            let t = &mut self.all[i];
            if t.end.is_none() && time != 0 {
                t.end = Some(time);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_follows_forks_not_names() {
        let mut t = Threads::new(vec![(100, 0)]);
        t.set_comm(Some(100), 100, b"stress-ng\0\0\0\0\0\0\0");
        t.fork(5, 101, 101, 100); // child process
        t.fork(6, 101, 102, 101); // its thread
        t.fork(7, 200, 200, 1); // unrelated, same name
        t.set_comm(Some(200), 200, b"stress-ng\0\0\0\0\0\0\0");
        let w = |t: &Threads, tid| t.get(tid).and_then(|x| x.workload);
        assert_eq!(
            (w(&t, 100), w(&t, 101), w(&t, 102), w(&t, 200)),
            (Some(0), Some(0), Some(0), None)
        );
        assert_eq!(
            t.get(102).map(|x| (x.pid, x.parent)),
            Some((101, Some(101)))
        );
    }
}
