//! pipelines/README.md maps every figure of the seed documents to the pipeline, table and
//! columns that give it. This test holds that map to the code, so that it cannot go stale
//! silently: each named pipeline compiles and computes the aggregates named for it, each table
//! and column is in the schema schedlab writes (derived from the row types, not listed here), each
//! `--by` is a grouping the pipeline has, each workload and variant a row names is one the
//! pipeline runs, and each "shown in" is a summary part docs/src/tables.md lists.
//! Renaming a column, dropping an aggregate step or renaming a workload breaks it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use schedlab_parse::ParserKind;
use schedlab_spec::{CompileOptions, Plan, variant_text};
use schedlab_tables::*;

/// The header row of every figure table in pipelines/README.md.
const HEADER: &str = "| figure as stated | pipeline | table: columns | which rows | shown in |";

/// What a "shown in" cell may say besides a summary part: nothing, or the compare command.
const NOT_IN_SUMMARY: [&str; 2] = ["–", "`schedlab compare`"];

/// Words in a "which rows" cell that are followed by workload names of the row's pipeline.
const NAMES_A_WORKLOAD: [&str; 4] = ["workload", "workloads", "window", "reference"];

/// The tables reference: every table and column, and the summary's parts.
const TABLES_DOC: &str = "docs/src/tables.md";

/// Groupings `schedlab compare --by` takes besides a matrix variable.
const BUILT_IN_GROUPINGS: [&str; 3] = ["label", "variant", "repetition"];

#[test]
fn every_seed_figure_names_a_pipeline_table_and_columns_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let map_path = root.join("pipelines/README.md");
    let map = std::fs::read_to_string(&map_path).expect("pipelines/README.md");
    let readme = std::fs::read_to_string(root.join(TABLES_DOC)).expect(TABLES_DOC);
    let checker = Checker {
        schemas: schemas(),
        summary_parts: summary_parts(&readme),
        plans: compile_pipelines(&root.join("pipelines")),
    };
    assert!(
        checker.summary_parts.contains("Per thread"),
        "{TABLES_DOC}'s list of summary parts (after **The summary**) was not found: {:?}",
        checker.summary_parts
    );

    let rows = figure_rows(&map);
    let mut problems = Vec::new();
    let mut gaps = 0;
    for row in &rows {
        match checker.check(row) {
            Ok(Mapped::Gap) => gaps += 1,
            Ok(Mapped::Source) => {}
            Err(errors) => problems.extend(
                (errors.into_iter()).map(|e| format!("pipelines/README.md:{}: {e}", row.line)),
            ),
        }
    }
    assert!(
        problems.is_empty(),
        "the seed figure map disagrees with the code:\n{}",
        problems.join("\n")
    );
    // Five seed documents, each with setup rows and figures: a parser that found none (a
    // changed header) must not pass as "nothing wrong".
    assert!(
        rows.len() > gaps && rows.len() >= 5,
        "only {} figure rows ({gaps} gaps) found under the header `{HEADER}`",
        rows.len()
    );
}

/// One row of a figure table, its cells trimmed.
struct FigureRow {
    line: usize,
    pipeline: String,
    source: String,
    which_rows: String,
    shown_in: String,
}

/// The rows of every table under [`HEADER`], with their 1-based line numbers.
fn figure_rows(map: &str) -> Vec<FigureRow> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for (index, line) in map.lines().enumerate() {
        let line = line.trim();
        if line == HEADER {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("| ---") {
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(
            cells.len(),
            5,
            "pipelines/README.md:{}: a figure row has five cells (a `|` inside a cell splits it)",
            index + 1
        );
        rows.push(FigureRow {
            line: index + 1,
            pipeline: cells[1].to_owned(),
            source: cells[2].to_owned(),
            which_rows: cells[3].to_owned(),
            shown_in: cells[4].to_owned(),
        });
    }
    rows
}

/// The texts between backticks.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The columns of every table, aggregate, compare output and judgement schedlab writes, keyed
/// `tables/<name>`, `aggregates/<name>`, `compare/<name>` or `report/<name>`, as the row types
/// declare them.
/// (The turbostat table is left out: its columns are turbostat's fields, known only per run.)
fn schemas() -> BTreeMap<String, BTreeSet<String>> {
    fn add<T: Table>(dir: &str, out: &mut BTreeMap<String, BTreeSet<String>>) {
        let columns = (schema_of::<T>().fields().iter())
            .map(|f| f.name().clone())
            .collect();
        out.insert(format!("{dir}/{}", T::NAME), columns);
    }
    let mut out = BTreeMap::new();
    add::<RunRow>("tables", &mut out);
    add::<CpuRow>("tables", &mut out);
    add::<ProcessRow>("tables", &mut out);
    add::<SchedSliceRow>("tables", &mut out);
    add::<MigrationRow>("tables", &mut out);
    add::<WakeupRow>("tables", &mut out);
    add::<ThreadRow>("tables", &mut out);
    add::<TraceRow>("tables", &mut out);
    add::<LossRow>("tables", &mut out);
    add::<CpuFreqIdleRow>("tables", &mut out);
    add::<PlacementRow>("tables", &mut out);
    add::<CpuSampleRow>("tables", &mut out);
    add::<WorkloadMetricRow>("tables", &mut out);
    add::<QualityRow>("tables", &mut out);
    add::<PerfStatRow>("tables", &mut out);
    add::<TimehistSummaryRow>("tables", &mut out);
    add::<ResidencyRow>("aggregates", &mut out);
    add::<MigrationSummaryRow>("aggregates", &mut out);
    add::<SchedDelayRow>("aggregates", &mut out);
    add::<SchedDelayWorkloadRow>("aggregates", &mut out);
    add::<MigrationClassRow>("aggregates", &mut out);
    add::<CpuTimeRow>("aggregates", &mut out);
    add::<BusiestThreadRow>("aggregates", &mut out);
    add::<ThroughputRow>("aggregates", &mut out);
    add::<ResidencyRollupRow>("aggregates", &mut out);
    add::<TotalsRow>("aggregates", &mut out);
    add::<CpuActivityRow>("aggregates", &mut out);
    add::<CpuShareRow>("aggregates", &mut out);
    add::<PowerStepRow>("aggregates", &mut out);
    add::<CpuTimelineRow>("aggregates", &mut out);
    add::<PlacementCostRow>("aggregates", &mut out);
    add::<WakeupPlacementRow>("aggregates", &mut out);
    add::<ComparisonRow>("compare", &mut out);
    add::<ObservationRow>("compare", &mut out);
    add::<ExpectationRow>("report", &mut out);
    add::<SchedRuntimeRow>("tables", &mut out);
    add::<SchedDelayCdfRow>("aggregates", &mut out);
    add::<PlacementCostWorkloadRow>("aggregates", &mut out);
    add::<CpuActivityIntervalRow>("aggregates", &mut out);
    out
}

/// Every table and aggregate has a row in the tables reference, and each of its columns is
/// named there (`run_id`, which every table has, is said once above the tables): adding a
/// column without its doc line fails here.
#[test]
fn the_tables_reference_names_every_column_of_every_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join(TABLES_DOC)).expect(TABLES_DOC);
    // `| name | one row per | columns |`, a table or aggregate per row (`migrations` has two).
    let mut rows: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        if let (Some(name), Some(columns)) = (cells.first(), cells.get(2))
            && let Some(name) = name.strip_prefix("| ")
        {
            rows.entry(name.trim()).or_default().push(columns);
        }
    }
    let named = |cell: &str, column: &str| {
        cell.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| word == column)
    };
    let mut missing = Vec::new();
    for (table, columns) in schemas() {
        let name = table.rsplit('/').next().unwrap();
        let Some(cells) = rows.get(name) else {
            missing.push(format!("{table}: no row"));
            continue;
        };
        let absent: Vec<&String> = (columns.iter())
            .filter(|c| *c != "run_id" && !cells.iter().any(|cell| named(cell, c)))
            .collect();
        if !absent.is_empty() {
            missing.push(format!("{table}: {absent:?}"));
        }
    }
    assert!(
        missing.is_empty(),
        "{TABLES_DOC} does not document: {missing:#?}"
    );
}

/// The aggregate steps any of which makes the aggregate `name`: its own step, or for the
/// roll-ups, the steps schedlab-analyze computes them with.
fn steps_writing(name: &str) -> Vec<&str> {
    match name {
        "residency_rollup" => vec!["residency"],
        "totals" => vec!["cpu_time", "migrations"],
        "sched_delay_workloads" => vec!["sched_delay"],
        "migration_classes" => vec!["migrations"],
        own => vec![own],
    }
}

/// The bold names of the tables reference's list of summary parts (after `**The summary**`).
fn summary_parts(readme: &str) -> BTreeSet<String> {
    let mut lines = readme
        .lines()
        .skip_while(|l| !l.starts_with("**The summary**"));
    lines.next();
    (lines.skip_while(|l| l.trim().is_empty()))
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("- **")?.split_once("**"))
        .map(|(name, _)| name.to_owned())
        .collect()
}

enum Mapped {
    Source,
    Gap,
}

struct Checker {
    schemas: BTreeMap<String, BTreeSet<String>>,
    summary_parts: BTreeSet<String>,
    /// Every `pipelines/*.yaml` by name: compiled, or its diagnostics.
    plans: BTreeMap<String, Result<Plan, String>>,
}

impl Checker {
    /// Every problem of one row, or whether it maps the figure or names a gap.
    fn check(&self, row: &FigureRow) -> Result<Mapped, Vec<String>> {
        let mut errors = Vec::new();
        let pipelines = code_spans(&row.pipeline);
        let plan = match pipelines.as_slice() {
            [name] => self.plan(name).map_err(|e| errors.push(e)).ok(),
            _ => {
                errors.push(format!("`{}` is not one `pipeline`", row.pipeline));
                None
            }
        };
        if !(NOT_IN_SUMMARY.contains(&row.shown_in.as_str())
            || self.summary_parts.contains(&row.shown_in))
        {
            errors.push(format!(
                "shown in `{}`: neither {NOT_IN_SUMMARY:?} nor a summary part {TABLES_DOC} lists \
                 ({:?})",
                row.shown_in, self.summary_parts
            ));
        }
        let mapped = if let Some(reason) = row.source.strip_prefix("gap:") {
            if reason.trim().is_empty() {
                errors.push("a gap says why".into());
            }
            Mapped::Gap
        } else {
            for part in row.source.split(';') {
                errors.extend(self.check_source(part.trim(), plan));
            }
            Mapped::Source
        };
        if let Some(plan) = plan {
            errors.extend(self.check_rows(&row.which_rows, &row.source, plan, pipelines[0]));
        }
        if errors.is_empty() {
            Ok(mapped)
        } else {
            Err(errors)
        }
    }

    /// One `` `dir/table`: `column`, … `` part of a "table: columns" cell.
    fn check_source(&self, part: &str, plan: Option<&Plan>) -> Vec<String> {
        let spans = code_spans(part);
        let (Some(table), true) = (spans.first(), part.starts_with('`') && spans.len() > 1) else {
            return vec![format!("`{part}` is not `dir/table`: `column`, …")];
        };
        let Some(columns) = self.schemas.get(*table) else {
            return vec![format!(
                "{table} is no table schedlab writes (known: {:?})",
                self.schemas.keys()
            )];
        };
        let mut errors: Vec<String> = (spans[1..].iter())
            .filter(|c| !columns.contains(**c))
            .map(|c| format!("{table} has no column `{c}` (it has {columns:?})"))
            .collect();
        if let (Some(name), Some(plan)) = (table.strip_prefix("aggregates/"), plan) {
            let steps = steps_writing(name);
            if !(plan.aggregate.iter()).any(|s| steps.contains(&s.kind.name())) {
                errors.push(format!(
                    "{table}: the pipeline has no aggregate step {steps:?} that writes it"
                ));
            }
        }
        errors
    }

    /// The workloads, the `--by` and the pipelines a "which rows" cell names.
    fn check_rows(&self, which: &str, source: &str, plan: &Plan, name: &str) -> Vec<String> {
        let mut errors = Vec::new();
        let workloads = workloads_of(plan);
        for named in spans_after(which, &NAMES_A_WORKLOAD) {
            if !workloads.contains(named) {
                errors.push(format!("{name} has no workload `{named}` ({workloads:?})"));
            }
        }
        for variant in spans_after(which, &["variant"]) {
            let pairs: Vec<(&str, &str)> = (variant.split(','))
                .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
                .collect();
            let runs_it = (plan.variants.iter())
                .any(|v| (pairs.iter()).all(|(k, value)| v.get(*k).is_some_and(|x| x == value)));
            if !runs_it {
                let variants: Vec<String> = plan.variants.iter().map(variant_text).collect();
                errors.push(format!("{name} has no variant `{variant}` ({variants:?})"));
            }
        }
        if !source.contains("`compare/") {
            return errors;
        }
        let words: Vec<&str> = which
            .split(|c: char| c.is_whitespace() || c == '`' || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        let after = |flag: &str| -> Vec<&str> {
            (words.windows(2))
                .filter(|w| w[0] == flag)
                .map(|w| w[1])
                .collect()
        };
        for command in after("compare") {
            if command != format!("pipelines/{name}.yaml") {
                errors.push(format!(
                    "`schedlab compare {command}` in a row of {name}: a row's compare command \
                     runs on its own pipeline"
                ));
            }
        }
        let matrix: BTreeSet<&str> = (plan.variants.iter())
            .flat_map(|v| v.keys().map(String::as_str))
            .collect();
        for by in after("--by") {
            if !(BUILT_IN_GROUPINGS.contains(&by) || matrix.contains(by)) {
                errors.push(format!(
                    "--by {by}: neither {BUILT_IN_GROUPINGS:?} nor a matrix variable of {name} \
                     ({matrix:?})"
                ));
            }
        }
        let others: Vec<&str> = after("--against");
        for other in &others {
            let Some(other_name) =
                (other.strip_prefix("pipelines/")).and_then(|o| o.strip_suffix(".yaml"))
            else {
                errors.push(format!("--against {other}: not pipelines/<name>.yaml"));
                continue;
            };
            match self.plan(other_name) {
                Err(e) => errors.push(e),
                Ok(other_plan) => {
                    for pair in after("--map") {
                        let (mine, theirs) = pair.split_once('=').unwrap_or((pair, ""));
                        if !workloads.contains(mine) || !workloads_of(other_plan).contains(theirs) {
                            errors.push(format!(
                                "--map {pair}: `{mine}` must be a workload of {name} and \
                                 `{theirs}` one of {other_name}"
                            ));
                        }
                    }
                }
            }
        }
        errors
    }

    /// The compiled pipeline `pipelines/<name>.yaml`.
    fn plan(&self, name: &str) -> Result<&Plan, String> {
        match self.plans.get(name) {
            Some(Ok(plan)) => Ok(plan),
            Some(Err(diagnostics)) => Err(format!(
                "pipelines/{name}.yaml does not compile:\n{diagnostics}"
            )),
            None => Err(format!("there is no pipelines/{name}.yaml")),
        }
    }
}

/// Every pipeline in `dir`, by name, compiled as `schedlab validate` compiles it.
fn compile_pipelines(dir: &Path) -> BTreeMap<String, Result<Plan, String>> {
    let parsers: Vec<&str> = ParserKind::ALL.iter().map(|k| k.name()).collect();
    // Panther Lake's 4 P, 8 E and 4 LP E cores (seed page 8): the full forms name every class.
    let classes = [
        ("P".to_owned(), (0..4).collect()),
        ("E".to_owned(), (4..12).collect()),
        ("LPE".to_owned(), (12..16).collect()),
    ];
    let options = CompileOptions {
        parsers: &parsers,
        nproc: 16,
        classes: &classes,
        short: false,
        name_part: schedlab_runner::layout::check_name_part,
        repeat: None,
    };
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    (entries.map(|e| e.expect("a pipelines/ entry").path()))
        .filter(|path| path.extension().is_some_and(|x| x == "yaml"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let plan = schedlab_spec::compile(&path.display().to_string(), &source, &options)
                .map_err(|errors| {
                    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    text.join("\n")
                });
            (name, plan)
        })
        .collect()
}

/// Every workload name any run of the pipeline has.
fn workloads_of(plan: &Plan) -> BTreeSet<String> {
    (plan.runs.iter())
        .flat_map(|r| r.collect.workloads.iter().map(|w| w.name.clone()))
        .collect()
}

/// The code spans that follow one of `words` in a "which rows" cell: `workload `a``, or a
/// list, `workloads `a`, `b``.
fn spans_after<'a>(which: &'a str, words: &[&str]) -> Vec<&'a str> {
    let mut spans = Vec::new();
    let pieces: Vec<&str> = which.split('`').collect();
    // Even pieces are text, odd ones code; a code span follows the text before it.
    for i in (1..pieces.len()).step_by(2) {
        let before = pieces[i - 1];
        let after_word = before.ends_with(' ')
            && (words.iter()).any(|w| before.trim_end().rsplit(' ').next() == Some(w));
        // `a`, `b`: a span after ", " continues the list a naming word began.
        let continues = before == ", " && i >= 3 && spans.last() == Some(&pieces[i - 2]);
        if after_word || continues {
            spans.push(pieces[i]);
        }
    }
    spans
}
