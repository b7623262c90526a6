//! `power:cpu_frequency` and `power:cpu_idle` events (of a trace.dat or a Perfetto trace) into the `cpu_freq_idle` table: per CPU,
//! spans in which its frequency and idle state stayed the same.

use schedlab_tables::CpuFreqIdleRow;

/// cpu_idle's `state` when the CPU leaves idle (`PWR_EVENT_EXIT`, (u32)-1).
const IDLE_EXIT: i64 = u32::MAX as i64;
/// CPUs at or beyond this are taken for damaged data rather than a real machine.
const MAX_CPUS: i64 = schedlab_topology::LAST_CPU as i64 + 1;

#[derive(Debug, Clone, Copy, Default)]
struct State {
    since: u64,
    freq_khz: Option<i64>,
    idle_state: Option<i32>,
}

/// The CPUs' current states and the spans ended so far.
pub struct CpuStates {
    run_id: String,
    cpus: Vec<Option<State>>,
    done: Vec<CpuFreqIdleRow>,
}

impl CpuStates {
    pub fn new(run_id: &str) -> Self {
        CpuStates {
            run_id: run_id.to_string(),
            cpus: Vec::new(),
            done: Vec::new(),
        }
    }

    /// cpu_frequency: `cpu` runs at `khz` from `time` on. False when the CPU is impossible.
    pub fn frequency(&mut self, time: u64, cpu: i64, khz: i64) -> bool {
        self.change(time, cpu, |s| s.freq_khz = Some(khz))
    }

    /// cpu_idle: `cpu` enters idle state `state` (or leaves idle) at `time`.
    pub fn idle(&mut self, time: u64, cpu: i64, state: i64) -> bool {
        let state = if state == IDLE_EXIT {
            -1
        } else {
            i32::try_from(state).unwrap_or(i32::MAX)
        };
        self.change(time, cpu, |s| s.idle_state = Some(state))
    }

    fn change(&mut self, time: u64, cpu: i64, set: impl FnOnce(&mut State)) -> bool {
        if !(0..MAX_CPUS).contains(&cpu) {
            return false;
        }
        let i = cpu as usize;
        if i >= self.cpus.len() {
            self.cpus.resize(i + 1, None);
        }
        let before = self.cpus[i].unwrap_or(State {
            since: time,
            ..State::default()
        });
        let mut after = before;
        set(&mut after);
        if self.cpus[i].is_some()
            && (after.freq_khz, after.idle_state) == (before.freq_khz, before.idle_state)
        {
            return true;
        }
        if self.cpus[i].is_some() && time > before.since {
            self.done.push(self.row(i, &before, time));
        }
        after.since = time;
        self.cpus[i] = Some(after);
        true
    }

    fn row(&self, cpu: usize, s: &State, end: u64) -> CpuFreqIdleRow {
        CpuFreqIdleRow {
            run_id: self.run_id.clone(),
            cpu: cpu as i32,
            start_ns: s.since as i64,
            end_ns: end as i64,
            freq_khz: s.freq_khz,
            idle_state: s.idle_state,
        }
    }

    /// The spans ended since the last take.
    pub fn take(&mut self) -> Vec<CpuFreqIdleRow> {
        std::mem::take(&mut self.done)
    }

    /// Ends every CPU's current span at `end` (the trace's last event) and returns the rest.
    pub fn finish(&mut self, end: u64) -> Vec<CpuFreqIdleRow> {
        for i in 0..self.cpus.len() {
            if let Some(s) = self.cpus[i].take()
                && end > s.since
            {
                let row = self.row(i, &s, end);
                self.done.push(row);
            }
        }
        self.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_split_where_a_cpus_frequency_or_idle_state_changes() {
        let mut s = CpuStates::new("r");
        assert!(s.frequency(100, 2, 1_800_000));
        assert!(s.idle(150, 2, 1));
        assert!(s.idle(150, 0, 0));
        assert!(s.frequency(180, 2, 1_800_000), "no change, no split");
        assert!(s.idle(200, 2, IDLE_EXIT));
        assert!(
            !s.idle(200, -1, 0) && !s.idle(200, MAX_CPUS, 0),
            "impossible cpus"
        );
        let mut rows = s.take();
        rows.extend(s.finish(300));
        let got: Vec<_> = (rows.iter())
            .map(|r| (r.cpu, r.start_ns, r.end_ns, r.freq_khz, r.idle_state))
            .collect();
        assert_eq!(
            got,
            [
                (2, 100, 150, Some(1_800_000), None),
                (2, 150, 200, Some(1_800_000), Some(1)),
                (0, 150, 300, None, Some(0)),
                (2, 200, 300, Some(1_800_000), Some(-1)),
            ]
        );
    }
}
