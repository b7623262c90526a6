//! Shared strings for the rows: the run id, each workload name, command name, task state and
//! wakeup kind is allocated once per file, and every row clones a reference count.
//!
//! A trace of a few hundred megabytes makes tens of millions of rows but only hundreds of
//! distinct names, so allocating a `String` per row and column was most of the reader's time.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use schedlab_tables::selector::WorkloadSelector;

use crate::le::{Comm, comm_str};
use crate::metadata::WakeKind;
use crate::task_state::TaskStates;

/// Distinct names kept before the cache starts over: real traces have a few hundred, a damaged
/// file could make every row a new one, and memory must stay bounded either way.
const MAX_CACHED: usize = 1 << 16;

/// A hash for the fixed-size keys here (a comm as `u128`, a state as `i64`): one multiply and a
/// fold, so that the high bits (the later characters of a name) reach the bucket index too.
#[derive(Default, Clone, Copy)]
struct MixHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(K);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(29) ^ v).wrapping_mul(K);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
}

type Cache<K> = HashMap<K, Arc<str>, BuildHasherDefault<MixHasher>>;

/// What a file's rows name besides their own fields: the run, the workloads (by index) and how
/// the recording kernel prints task states.
#[derive(Debug)]
pub(crate) struct Names {
    pub run_id: Arc<str>,
    pub workloads: Vec<Arc<str>>,
    pub task_states: TaskStates,
}

impl Names {
    pub(crate) fn new(
        run_id: &str,
        workloads: &[WorkloadSelector],
        task_states: TaskStates,
    ) -> Self {
        Names {
            run_id: run_id.into(),
            workloads: workloads
                .iter()
                .map(|w| w.workload.as_str().into())
                .collect(),
            task_states,
        }
    }

    /// The name of workload index `w` (an index into the run's workload selectors).
    pub(crate) fn workload(&self, w: Option<u16>) -> Option<&Arc<str>> {
        w.and_then(|i| self.workloads.get(i as usize))
    }
}

/// The strings of one file's rows.
pub(crate) struct Strings {
    pub names: Arc<Names>,
    comms: Cache<u128>,
    states: Cache<i64>,
    kinds: [Arc<str>; 3],
}

impl Strings {
    pub(crate) fn new(names: Arc<Names>) -> Self {
        let kind = |k: WakeKind| Arc::<str>::from(k.as_str());
        Strings {
            names,
            comms: Cache::default(),
            states: Cache::default(),
            kinds: [
                kind(WakeKind::Waking),
                kind(WakeKind::Wakeup),
                kind(WakeKind::WakeupNew),
            ],
        }
    }

    /// The name of workload index `w` (an index into the run's workload selectors).
    pub(crate) fn workload(&self, w: Option<u16>) -> Option<Arc<str>> {
        self.names.workload(w).cloned()
    }

    /// The command name up to its first NUL, invalid UTF-8 replaced.
    pub(crate) fn comm(&mut self, c: &Comm) -> Arc<str> {
        intern(&mut self.comms, u128::from_le_bytes(*c), || comm_str(c))
    }

    /// `prev_state` as the recording kernel's format prints it (see [`TaskStates`]).
    pub(crate) fn state(&mut self, state: i64) -> Arc<str> {
        intern(&mut self.states, state, || {
            self.names.task_states.render(state)
        })
    }

    pub(crate) fn kind(&self, k: WakeKind) -> Arc<str> {
        let i = match k {
            WakeKind::Waking => 0,
            WakeKind::Wakeup => 1,
            WakeKind::WakeupNew => 2,
        };
        self.kinds[i].clone()
    }
}

fn intern<K: std::hash::Hash + Eq>(
    cache: &mut Cache<K>,
    key: K,
    make: impl FnOnce() -> String,
) -> Arc<str> {
    if let Some(s) = cache.get(&key) {
        return s.clone();
    }
    if cache.len() >= MAX_CACHED {
        cache.clear();
    }
    cache.entry(key).or_insert_with(|| make().into()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_share_one_allocation() {
        let names = Names::new(
            "r1",
            &[WorkloadSelector::tree(7, "burst")],
            TaskStates::since_4_14(),
        );
        let mut s = Strings::new(Arc::new(names));
        let a = s.comm(b"stress-ng\0\0\0\0\0\0\0");
        let b = s.comm(b"stress-ng\0\0\0\0\0\0\0");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*s.comm(b"stress-ng-switch"), "stress-ng-switch");
        assert!(Arc::ptr_eq(&s.state(0x100), &s.state(0x100)));
        assert_eq!(&*s.state(0x100), "R+");
        assert_eq!(&*s.kind(WakeKind::WakeupNew), "wakeup_new");
        assert_eq!(s.workload(Some(0)).as_deref(), Some("burst"));
        assert_eq!(s.workload(Some(1)), None);
    }
}
