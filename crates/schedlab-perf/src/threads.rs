//! The thread table and workload attribution.
//!
//! Threads come from COMM/FORK/EXIT records (including the ones perf synthesizes for tasks that
//! existed before recording started), the fork/exec/exit tracepoints, and any task a sample
//! names. Which threads belong to a workload is its [`Select`]or: for a collected run, one of
//! the processes the runner started, a thread of such a process, or one forked — directly or
//! transitively — from one (`tree:`); for an imported recording also the threads of one process
//! (`pid:`) or those of a command name (`comm:`, matched when the name is first seen or set by
//! exec). The workload is decided when the thread is first seen (or named) and inherited at
//! fork (except by `pid:`), so attribution follows the process tree rather than later renames.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use schedlab_tables::selector::Select;

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
    /// A tid in the low half and something else in the high half (see `runtime`).
    fn write_u64(&mut self, i: u64) {
        self.0 = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
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
    /// The start of its first slice on a CPU and the end of its last (0: it has not run).
    pub first_run: u64,
    pub last_run: u64,
}

/// Slots of `Threads::recent`, and the tid that marks an empty one (never taken from the cache,
/// since a damaged record may name any tid).
const RECENT: usize = 64;
const NO_TID: i32 = i32::MIN;

pub(crate) struct Threads {
    by_tid: IdMap<usize>,
    /// The last lookups, by tid modulo its size (see `index`).
    recent: [(i32, usize); RECENT],
    pub all: Vec<Thread>,
    /// Each workload's selector, with the workload's index.
    selectors: Vec<(Select, u16)>,
}

impl Threads {
    pub(crate) fn new(selectors: Vec<(Select, u16)>) -> Self {
        Threads {
            by_tid: IdMap::default(),
            recent: [(NO_TID, 0); RECENT],
            all: Vec::new(),
            selectors,
        }
    }

    /// The workload that selects process (or thread) `id` by number: a `tree:` root, or, when
    /// `id` is the kernel's process id, a `pid:`.
    fn root(&self, id: i32, is_pid: bool) -> Option<u16> {
        self.selectors.iter().find_map(|(select, w)| match select {
            Select::Tree(root) if *root == id => Some(*w),
            Select::Pid(pid) if is_pid && *pid == id => Some(*w),
            _ => None,
        })
    }

    /// The workload that selects command name `comm`.
    fn named(&self, comm: &Comm) -> Option<u16> {
        (self.selectors.iter())
            .find(|(select, _)| select.matches_comm(comm))
            .map(|(_, w)| *w)
    }

    /// The workload a forked thread inherits from `parent`: not one that selects one process.
    fn inherited(&self, parent: i32) -> Option<u16> {
        let w = self.get(parent)?.workload?;
        (self.selectors.iter())
            .any(|(select, sw)| *sw == w && select.follows_forks())
            .then_some(w)
    }

    fn workload_of(
        &self,
        tid: i32,
        pid: i32,
        parent: Option<i32>,
        comm: Option<&Comm>,
    ) -> Option<u16> {
        self.root(tid, false)
            .or_else(|| self.root(pid, true))
            .or_else(|| parent.and_then(|p| self.inherited(p)))
            .or_else(|| {
                (pid != tid)
                    .then(|| self.get(pid))
                    .flatten()
                    .and_then(|t| t.workload)
            })
            .or_else(|| comm.and_then(|c| self.named(c)))
    }

    pub(crate) fn get(&self, tid: i32) -> Option<&Thread> {
        self.by_tid.get(&tid).map(|&i| &self.all[i])
    }

    /// The index of thread `tid` in `all`, if seen. Most events name one of a few threads that
    /// ran last on some CPU: a direct-mapped cache in front of the map answers them with a
    /// comparison (the map lookup was 4 % of the CPU time of `schedlab parse perf-sched`).
    fn index(&mut self, tid: i32) -> Option<usize> {
        let slot = &mut self.recent[tid as u32 as usize % RECENT];
        if slot.0 == tid && tid != NO_TID {
            return Some(slot.1);
        }
        let i = *self.by_tid.get(&tid)?;
        *slot = (tid, i);
        Some(i)
    }

    fn insert(&mut self, t: Thread) -> usize {
        let i = self.all.len();
        self.recent[t.tid as u32 as usize % RECENT] = (t.tid, i);
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
        let i = match self.index(tid) {
            Some(i) => {
                if let (false, Some(p)) = (self.all[i].pid_known, pid.filter(|&p| p > 0)) {
                    let root = self.root(p, true);
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
                let workload = self.workload_of(tid, pid_value, None, comm);
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
                    first_run: 0,
                    last_run: 0,
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
                let workload =
                    (self.workload_of(tid, pid, Some(ptid), Some(&t.comm))).or(t.workload);
                let t = &mut self.all[i];
                t.pid = pid;
                t.pid_known = true;
                t.parent = Some(ptid);
                t.workload = workload;
                return;
            }
        }
        let comm = self.get(ptid).map_or([0; 16], |p| p.comm);
        let workload = self.workload_of(tid, pid, Some(ptid), Some(&comm));
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
            first_run: 0,
            last_run: 0,
        });
    }

    /// sched_process_fork: only the tids are known; used when no FORK record made the thread.
    pub(crate) fn fork_tracepoint(&mut self, time: u64, parent: i32, child: i32, comm: &Comm) {
        if self.get(child).is_some() {
            return;
        }
        let workload = self.workload_of(child, child, Some(parent), Some(comm));
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
            first_run: 0,
            last_run: 0,
        });
    }

    /// A new command name (exec, prctl): a thread of no workload yet joins the one that
    /// selects the name.
    pub(crate) fn set_comm(&mut self, pid: Option<i32>, tid: i32, comm: &Comm) {
        let named = self.named(comm);
        let t = self.get_or_create(tid, pid, Some(comm));
        t.comm = *comm;
        t.workload = t.workload.or(named);
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
        let mut t = Threads::new(vec![(Select::Tree(100), 0)]);
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

    #[test]
    fn comm_selects_by_name_and_pid_selects_one_process() {
        let mut t = Threads::new(vec![
            (Select::Comm("openssl".into()), 0),
            (Select::Pid(300), 1),
        ]);
        t.set_comm(Some(100), 100, b"bash\0\0\0\0\0\0\0\0\0\0\0\0");
        t.fork(5, 101, 101, 100); // bash forks a child …
        t.set_comm(Some(101), 101, b"openssl\0\0\0\0\0\0\0\0\0"); // … which execs openssl
        t.fork(6, 101, 102, 101); // openssl's thread
        t.fork(7, 103, 103, 101); // a process openssl forks
        t.set_comm(Some(300), 300, b"other\0\0\0\0\0\0\0\0\0\0\0");
        t.fork(8, 300, 301, 300); // a thread of process 300
        t.fork(9, 302, 302, 300); // a process 300 forks: not selected by pid:300
        let w = |t: &Threads, tid| t.get(tid).and_then(|x| x.workload);
        assert_eq!(
            (w(&t, 100), w(&t, 101), w(&t, 102), w(&t, 103)),
            (None, Some(0), Some(0), Some(0))
        );
        assert_eq!(
            (w(&t, 300), w(&t, 301), w(&t, 302)),
            (Some(1), Some(1), None)
        );
    }
}
