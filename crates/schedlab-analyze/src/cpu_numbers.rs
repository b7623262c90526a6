//! Distinct CPU numbers in order, and each number's index among them, found at the number.
//!
//! The "why here" figures ask which CPU a slice, a wait or a wakeup is on millions of times;
//! a search of a set or a map per question costs more than the figure's own arithmetic. CPUs
//! are numbered from 0 up on every machine, so a table by number answers at once; numbers no
//! trace has (negative, or past any machine's CPUs) are still found, by a search.

use std::collections::BTreeSet;

/// In [`CpuNumbers::index_of_cpu`], a number not among them.
const ABSENT: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub(crate) struct CpuNumbers {
    cpus: Vec<i32>,
    /// By CPU number, its index in `cpus` ([`ABSENT`] for a number not there). Numbers past
    /// `u16` or negative are only in `cpus`.
    index_of_cpu: Vec<u32>,
}

impl CpuNumbers {
    /// The distinct numbers of `numbers` (repeats welcome).
    pub(crate) fn of(numbers: impl Iterator<Item = i32>) -> CpuNumbers {
        let (mut seen, mut odd) = (Vec::<bool>::new(), BTreeSet::new());
        for cpu in numbers {
            match u16::try_from(cpu).map(usize::from) {
                Ok(at) => {
                    if seen.len() <= at {
                        seen.resize(at + 1, false);
                    }
                    seen[at] = true;
                }
                Err(_) => {
                    odd.insert(cpu);
                }
            }
        }
        let numbered =
            (seen.iter().enumerate()).filter_map(|(cpu, &seen)| seen.then_some(cpu as i32));
        let mut cpus: Vec<i32> = odd.into_iter().chain(numbered).collect();
        cpus.sort_unstable();
        let mut index_of_cpu = vec![ABSENT; seen.len()];
        for (index, &cpu) in cpus.iter().enumerate() {
            if let Ok(cpu) = u16::try_from(cpu).map(usize::from) {
                index_of_cpu[cpu] = index as u32;
            }
        }
        CpuNumbers { cpus, index_of_cpu }
    }

    /// The numbers, in order.
    pub(crate) fn cpus(&self) -> &[i32] {
        &self.cpus
    }

    /// The index of `cpu` in [`cpus`](Self::cpus), if it is one of the numbers.
    pub(crate) fn find(&self, cpu: i32) -> Option<usize> {
        match usize::try_from(cpu)
            .ok()
            .and_then(|at| self.index_of_cpu.get(at))
        {
            Some(&ABSENT) => None,
            Some(&index) => Some(index as usize),
            None => self.cpus.binary_search(&cpu).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_gaps_or_oddly_numbered_are_found_and_others_not() {
        let numbers = CpuNumbers::of([5, 0, 70_000, -1, 2, 5, 0].into_iter());
        assert_eq!(numbers.cpus(), [-1, 0, 2, 5, 70_000]);
        let found = [-2, -1, 0, 1, 2, 5, 6, 69_999, 70_000, 1 << 20].map(|c| numbers.find(c));
        let expected = [
            None,
            Some(0),
            Some(1),
            None,
            Some(2),
            Some(3),
            None,
            None,
            Some(4),
            None,
        ];
        assert_eq!(found, expected);
        assert_eq!(CpuNumbers::default().find(0), None);
    }
}
