//! A pipeline file compiled for this machine: the parsers this build has, its CPU count and
//! core classes, and the runner's rule for names that become directories. Every command that
//! takes a pipeline loads it here, so that `validate` refuses exactly what `run` would.

use std::path::{Path, PathBuf};

use schedlab_parse::ParserKind;
use schedlab_spec::selector::WorkloadSelector;
use schedlab_spec::{CompileOptions, Plan};

use schedlab_tables::manifest::{Imported, Manifest};

use crate::layout::{Layout, check_name_part};

/// Which form of the pipeline, with what the command line changes in it.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions<'a> {
    /// Repetitions instead of the pipeline's `repeat`.
    pub repeat: Option<u32>,
    /// The pipeline's short form.
    pub short: bool,
    /// For `schedlab import`: the workloads its command line names, which count as the
    /// pipeline's (see [`schedlab_spec::compile_for_import`]).
    pub importing: Option<&'a [WorkloadSelector]>,
    /// The data directory. Where runs were imported into the pipeline's directory there, the
    /// pipeline is compiled as `schedlab import` compiled it: the workloads their command lines
    /// named (`--workload`) count as its own, so that `analyze` accepts what `import` did.
    pub data_dir: Option<&'a Path>,
}

/// Why a pipeline file gave no plan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Every diagnostic, rendered with its `file:line:column: error:` prefix, and their count.
    #[error("{0}")]
    Invalid(String),
}

/// Reads and compiles the pipeline at `path` for this machine; `say` hears a warning when the
/// machine's core classes cannot be read (a pipeline that names one then says so).
pub fn load_plan(
    path: &Path,
    options: &LoadOptions<'_>,
    say: &dyn Fn(&str),
) -> Result<Plan, LoadError> {
    let source = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    let classes = match schedlab_topology::detect(Path::new("/sys")) {
        Ok(cpus) => schedlab_topology::classes(&cpus),
        Err(err) => {
            say(&format!(
                "schedlab: warning: cannot read this machine's core classes: {err}"
            ));
            Vec::new()
        }
    };
    let imported = match (options.importing, options.data_dir) {
        (None, Some(data_dir)) => imported_workloads(data_dir, &source, options.short),
        _ => None,
    };
    let options = LoadOptions {
        importing: options.importing.or(imported.as_deref()),
        ..*options
    };
    compile(path, &source, &classes, &options)
}

/// The workloads named on the command lines of the runs imported into the pipeline of `source`
/// under `data_dir` (the latest import's selector where two named one workload); `None` when no
/// run was imported there. Then the pipeline is compiled as `schedlab import` compiled it: a
/// pipeline with neither `collect` nor `import` is an import, and analysing what was imported
/// into it must not refuse it. A manifest that cannot be read is left to the parse stage to
/// report.
fn imported_workloads(data_dir: &Path, source: &str, short: bool) -> Option<Vec<WorkloadSelector>> {
    let name = schedlab_spec::name_of(source)?;
    let name = if short { format!("{name}-short") } else { name };
    let layout = Layout::new(data_dir, &name);
    let entries = std::fs::read_dir(layout.runs()).ok()?;
    let runs: Vec<PathBuf> = (entries.flatten())
        .filter(|e| Layout::is_complete_run_name(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    let mut imports: Vec<(String, Imported)> = (runs.iter())
        .filter_map(|run| std::fs::read(Layout::manifest(run)).ok())
        .filter_map(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
        .filter_map(|m| Some((m.started_at, m.imported?)))
        .collect();
    if imports.is_empty() {
        return None;
    }
    imports.sort_by(|a, b| a.0.cmp(&b.0));
    let mut named: Vec<WorkloadSelector> = Vec::new();
    for (_, imported) in imports {
        let given = imported.given.unwrap_or_default();
        for selector in imported.workloads {
            if given.contains(&selector.workload) {
                named.retain(|w| w.workload != selector.workload);
                named.push(selector);
            }
        }
    }
    Some(named)
}

/// `source` (the text of `path`) compiled for a machine with these core classes.
fn compile(
    path: &Path,
    source: &str,
    classes: &[(String, Vec<u32>)],
    options: &LoadOptions<'_>,
) -> Result<Plan, LoadError> {
    let parsers: Vec<&str> = ParserKind::ALL.iter().map(|k| k.name()).collect();
    let nproc = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let compile_options = CompileOptions {
        parsers: &parsers,
        nproc,
        classes,
        short: options.short,
        name_part: check_name_part,
        repeat: options.repeat,
    };
    let file = path.display().to_string();
    let compiled = match options.importing {
        Some(workloads) => {
            schedlab_spec::compile_for_import(&file, source, &compile_options, workloads)
        }
        None => schedlab_spec::compile(&file, source, &compile_options),
    };
    compiled.map_err(|errors| {
        let count = errors.len();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let plural = if count == 1 { "" } else { "s" };
        LoadError::Invalid(format!(
            "{}\n{count} error{plural} in {}",
            text.join("\n"),
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIODIC: &str = "name: p\ncollect:\n  duration: 1s\n  workloads:\n    w: { periodic: \
                            { period: 100ms, busy: 10ms, duration: 1s } }\n";

    #[test]
    fn a_valid_pipeline_compiles_with_the_repeat_asked() {
        let options = LoadOptions {
            repeat: Some(3),
            ..LoadOptions::default()
        };
        let plan = compile(Path::new("p.yaml"), PERIODIC, &[], &options).unwrap();
        assert_eq!((plan.name.as_str(), plan.runs.len()), ("p", 3));
    }

    #[test]
    fn errors_are_rendered_with_their_count_and_the_file() {
        let source = "name: p\nbogus: 1\n";
        let err = compile(Path::new("p.yaml"), source, &[], &LoadOptions::default());
        let Err(LoadError::Invalid(text)) = err else {
            panic!("{err:?} is not invalid");
        };
        assert!(text.starts_with("p.yaml:2:1: error:"), "{text}");
        assert!(text.ends_with("\n1 error in p.yaml"), "{text}");
        let missing = load_plan(
            Path::new("/nonexistent/p.yaml"),
            &LoadOptions::default(),
            &|_| {},
        );
        assert!(matches!(missing, Err(LoadError::Read { .. })));
    }
}
