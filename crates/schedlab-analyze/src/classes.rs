//! Which core class is faster: the order every "faster class" figure follows.
//!
//! The parse stage ranks each run's classes (`cpus.class_rank`: a declared `topology:` in the
//! order written, detected classes by capacity, then max frequency); a pipeline's
//! `class_order:` overrides that at aggregation, so that a wrong order costs an aggregate rerun,
//! not a parse. Classes the override leaves out follow the listed ones in their ranked order.

use std::collections::BTreeMap;

use schedlab_tables::CpuRow;

use crate::cpu_numbers::CpuNumbers;

/// One run's classes, fastest first, and each CPU's place in that order.
#[derive(Debug, Clone, Default)]
pub struct ClassOrder {
    fastest_first: Vec<String>,
    /// Each CPU with a ranked class: asked for every slice and wait of the "why here" figures.
    ranked: CpuNumbers,
    /// The rank of each of `ranked`, by its index there.
    ranks: Vec<usize>,
}

impl ClassOrder {
    /// The order of `cpus` (one run's rows), with `preferred` (the pipeline's `class_order:`)
    /// first. CPUs of a class without rank (`offline`, `unknown`) have none.
    pub fn new(cpus: &[&CpuRow], preferred: &[String]) -> ClassOrder {
        let mut ranked: Vec<(i32, &str)> = (cpus.iter())
            .filter_map(|c| Some((c.class_rank?, c.class.as_str())))
            .collect();
        ranked.sort_unstable();
        ranked.dedup();
        let mut fastest_first: Vec<String> = (preferred.iter())
            .filter(|class| ranked.iter().any(|(_, c)| c == class))
            .cloned()
            .collect();
        for (_, class) in ranked {
            if !fastest_first.iter().any(|c| c == class) {
                fastest_first.push(class.to_owned());
            }
        }
        let rank_of_cpu: BTreeMap<i32, usize> = (cpus.iter())
            .filter_map(|c| Some((c.cpu, fastest_first.iter().position(|f| *f == c.class)?)))
            .collect();
        ClassOrder {
            fastest_first,
            ranked: CpuNumbers::of(rank_of_cpu.keys().copied()),
            ranks: rank_of_cpu.into_values().collect(),
        }
    }

    /// The classes, fastest first.
    pub fn classes(&self) -> &[String] {
        &self.fastest_first
    }

    /// Whether the run's machine has more than one ranked class: without, no CPU is faster
    /// than another and every "faster class" figure is 0 by construction.
    pub fn is_hybrid(&self) -> bool {
        self.fastest_first.len() > 1
    }

    /// `cpu`'s place in the order (0: fastest class); `None` for a CPU without a ranked class.
    pub fn rank(&self, cpu: i32) -> Option<usize> {
        self.ranked.find(cpu).map(|at| self.ranks[at])
    }

    /// Whether `cpu`'s class is as fast as `than`'s or faster (false when either has no rank).
    pub fn as_fast(&self, cpu: i32, than: i32) -> bool {
        matches!((self.rank(cpu), self.rank(than)), (Some(a), Some(b)) if a <= b)
    }

    /// Every CPU with a ranked class.
    pub fn cpus(&self) -> impl Iterator<Item = i32> + '_ {
        self.ranked.cpus().iter().copied()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// CPU `cpu` of run `r`, of a declared `class` ranked `class_rank`.
    pub(crate) fn cpu(cpu: i32, class: &str, class_rank: Option<i32>) -> CpuRow {
        CpuRow::declared("r", cpu, class, class_rank)
    }

    #[test]
    fn the_pipeline_order_comes_first_and_unranked_cpus_have_no_place() {
        let rows = [
            cpu(0, "P", Some(0)),
            cpu(1, "E", Some(1)),
            cpu(2, "LPE", Some(2)),
            cpu(3, "offline", None),
        ];
        let cpus: Vec<&CpuRow> = rows.iter().collect();
        let ranked = ClassOrder::new(&cpus, &[]);
        assert_eq!(ranked.classes(), ["P", "E", "LPE"]);
        assert_eq!((ranked.rank(2), ranked.rank(3)), (Some(2), None));
        assert!(ranked.as_fast(0, 1) && ranked.as_fast(1, 1) && !ranked.as_fast(2, 1));
        assert!(
            !ranked.as_fast(3, 2) && !ranked.as_fast(0, 3),
            "unranked: neither"
        );

        let preferred = ClassOrder::new(&cpus, &["LPE".into(), "absent".into()]);
        assert_eq!(preferred.classes(), ["LPE", "P", "E"]);
        assert_eq!((preferred.rank(0), preferred.rank(2)), (Some(1), Some(0)));
        assert!(preferred.is_hybrid());
        assert!(!ClassOrder::new(&cpus[..1], &[]).is_hybrid());
    }

    #[test]
    fn cpus_numbered_with_gaps_or_oddly_have_their_ranks() {
        let rows = [
            cpu(5, "E", Some(1)),
            cpu(0, "P", Some(0)),
            cpu(100_000, "E", Some(1)),
            cpu(-1, "P", Some(0)),
            cpu(2, "E", Some(1)),
        ];
        let cpus: Vec<&CpuRow> = rows.iter().collect();
        let ranked = ClassOrder::new(&cpus, &[]);
        let ranks: Vec<_> = [-1, 0, 1, 2, 3, 5, 100_000, 100_001]
            .map(|c| ranked.rank(c))
            .into();
        let (p, e) = (Some(0), Some(1));
        assert_eq!(ranks, [p, p, None, e, None, e, e, None]);
        assert_eq!(ranked.cpus().collect::<Vec<_>>(), [-1, 0, 2, 5, 100_000]);
    }
}
