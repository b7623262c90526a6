//! `expect:` as written: one kind key per entry, a selector and one bound.
//!
//! Each kind is its own struct with `deny_unknown_fields`, so a key that does not apply to that
//! kind (a `p99` on a residency) is an error at its line that lists the keys it takes.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::Scalar;

/// One expectation: `- residency: { workload: sha, class: P, share: ">= 0.95" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawExpectation {
    Residency(RawResidency),
    Migrations(RawMigrations),
    SchedDelay(RawSchedDelay),
    CpuTime(RawCpuTime),
    CpuShare(RawCpuShare),
    CpuActivity(RawCpuActivity),
    Compare(RawCompare),
}

/// A bound as written: `">= 0.95"`, `"<= 5ms"` (a bare number is refused at compile).
pub type RawBound = Option<Spanned<Scalar>>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawResidency {
    pub workload: Spanned<String>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub scope: Option<Spanned<String>>,
    #[serde(default)]
    pub class: Option<Spanned<String>>,
    #[serde(default)]
    pub cpu: Option<u32>,
    #[serde(default)]
    pub share: RawBound,
    #[serde(default)]
    pub seconds: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMigrations {
    pub workload: Spanned<String>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub count: RawBound,
    #[serde(default)]
    pub startup: RawBound,
    #[serde(default)]
    pub steady: RawBound,
    #[serde(default)]
    pub per_s: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSchedDelay {
    pub workload: Spanned<String>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub mean: RawBound,
    #[serde(default)]
    pub p50: RawBound,
    #[serde(default)]
    pub p90: RawBound,
    #[serde(default)]
    pub p99: RawBound,
    #[serde(default)]
    pub max: RawBound,
    #[serde(default)]
    pub preempt_wait_mean: RawBound,
    #[serde(default)]
    pub preempt_wait_p50: RawBound,
    #[serde(default)]
    pub preempt_wait_p90: RawBound,
    #[serde(default)]
    pub preempt_wait_p99: RawBound,
    #[serde(default)]
    pub preempt_wait_max: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpuTime {
    pub workload: Spanned<String>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub seconds: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpuShare {
    pub workload: Spanned<String>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub phase: Option<Spanned<String>>,
    #[serde(default)]
    pub reference: Option<Spanned<String>>,
    #[serde(default)]
    pub class: Option<Spanned<String>>,
    #[serde(default)]
    pub cpus: RawBound,
    #[serde(default)]
    pub change_cpus: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpuActivity {
    #[serde(default)]
    pub window: Option<Spanned<String>>,
    #[serde(default)]
    pub variant: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub class: Option<Spanned<String>>,
    #[serde(default)]
    pub cpu: Option<u32>,
    #[serde(default)]
    pub busy_pct: RawBound,
    #[serde(default)]
    pub avg_mhz: RawBound,
    #[serde(default)]
    pub bzy_mhz: RawBound,
    #[serde(default)]
    pub c1_pct: RawBound,
    #[serde(default)]
    pub c6_pct: RawBound,
    #[serde(default)]
    pub core_tmp_c_max: RawBound,
    #[serde(default)]
    pub pkg_watt: RawBound,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCompare {
    #[serde(default)]
    pub by: Option<Spanned<String>>,
    #[serde(default)]
    pub baseline: Option<Spanned<Scalar>>,
    #[serde(default)]
    pub group: Option<Spanned<Scalar>>,
    #[serde(default)]
    pub workload: Option<Spanned<String>>,
    pub figure: Spanned<String>,
    pub not: Spanned<String>,
}

/// What compile needs of a figure expectation, whatever its kind.
pub struct FigureParts<'a> {
    pub workload: Option<&'a Spanned<String>>,
    pub variant: &'a BTreeMap<String, Scalar>,
    pub scope: Option<&'a Spanned<String>>,
    pub class: Option<&'a Spanned<String>>,
    pub cpu: Option<u32>,
    pub phase: Option<&'a Spanned<String>>,
    pub reference: Option<&'a Spanned<String>>,
    pub window: Option<&'a Spanned<String>>,
    /// The bound keys given, with their text.
    pub bounds: Vec<(&'static str, &'a Spanned<Scalar>)>,
}

impl RawExpectation {
    /// The kind key as written (`residency`, `compare`).
    pub fn name(&self) -> &'static str {
        match self {
            RawExpectation::Residency(_) => "residency",
            RawExpectation::Migrations(_) => "migrations",
            RawExpectation::SchedDelay(_) => "sched_delay",
            RawExpectation::CpuTime(_) => "cpu_time",
            RawExpectation::CpuShare(_) => "cpu_share",
            RawExpectation::CpuActivity(_) => "cpu_activity",
            RawExpectation::Compare(_) => "compare",
        }
    }

    /// A figure expectation's selector and bounds; `None` for `compare`.
    pub fn figure_parts(&self) -> Option<FigureParts<'_>> {
        fn given<'a>(
            pairs: &[(&'static str, &'a RawBound)],
        ) -> Vec<(&'static str, &'a Spanned<Scalar>)> {
            (pairs.iter())
                .filter_map(|(key, bound)| Some((*key, bound.as_ref()?)))
                .collect()
        }
        let none = FigureParts {
            workload: None,
            variant: &EMPTY,
            scope: None,
            class: None,
            cpu: None,
            phase: None,
            reference: None,
            window: None,
            bounds: Vec::new(),
        };
        Some(match self {
            RawExpectation::Residency(r) => FigureParts {
                workload: Some(&r.workload),
                variant: &r.variant,
                scope: r.scope.as_ref(),
                class: r.class.as_ref(),
                cpu: r.cpu,
                bounds: given(&[("share", &r.share), ("seconds", &r.seconds)]),
                ..none
            },
            RawExpectation::Migrations(m) => FigureParts {
                workload: Some(&m.workload),
                variant: &m.variant,
                bounds: given(&[
                    ("count", &m.count),
                    ("startup", &m.startup),
                    ("steady", &m.steady),
                    ("per_s", &m.per_s),
                ]),
                ..none
            },
            RawExpectation::SchedDelay(d) => FigureParts {
                workload: Some(&d.workload),
                variant: &d.variant,
                bounds: given(&[
                    ("mean", &d.mean),
                    ("p50", &d.p50),
                    ("p90", &d.p90),
                    ("p99", &d.p99),
                    ("max", &d.max),
                    ("preempt_wait_mean", &d.preempt_wait_mean),
                    ("preempt_wait_p50", &d.preempt_wait_p50),
                    ("preempt_wait_p90", &d.preempt_wait_p90),
                    ("preempt_wait_p99", &d.preempt_wait_p99),
                    ("preempt_wait_max", &d.preempt_wait_max),
                ]),
                ..none
            },
            RawExpectation::CpuTime(c) => FigureParts {
                workload: Some(&c.workload),
                variant: &c.variant,
                bounds: given(&[("seconds", &c.seconds)]),
                ..none
            },
            RawExpectation::CpuShare(c) => FigureParts {
                workload: Some(&c.workload),
                variant: &c.variant,
                phase: c.phase.as_ref(),
                reference: c.reference.as_ref(),
                class: c.class.as_ref(),
                bounds: given(&[("cpus", &c.cpus), ("change_cpus", &c.change_cpus)]),
                ..none
            },
            RawExpectation::CpuActivity(a) => FigureParts {
                window: a.window.as_ref(),
                variant: &a.variant,
                class: a.class.as_ref(),
                cpu: a.cpu,
                bounds: given(&[
                    ("busy_pct", &a.busy_pct),
                    ("avg_mhz", &a.avg_mhz),
                    ("bzy_mhz", &a.bzy_mhz),
                    ("c1_pct", &a.c1_pct),
                    ("c6_pct", &a.c6_pct),
                    ("core_tmp_c_max", &a.core_tmp_c_max),
                    ("pkg_watt", &a.pkg_watt),
                ]),
                ..none
            },
            RawExpectation::Compare(_) => return None,
        })
    }
}

static EMPTY: BTreeMap<String, Scalar> = BTreeMap::new();
