//! A pipeline file compiled for this machine: the parsers this build has, its CPU count and
//! core classes, and the runner's rule for names that become directories. Every command that
//! takes a pipeline loads it here, so that `validate` refuses exactly what `run` would.

use std::path::{Path, PathBuf};

use schedlab_parse::ParserKind;
use schedlab_spec::{CompileOptions, Plan};

use crate::layout::check_name_part;

/// Which form of the pipeline, with what the command line changes in it.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Repetitions instead of the pipeline's `repeat`.
    pub repeat: Option<u32>,
    /// The pipeline's short form.
    pub short: bool,
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
    options: &LoadOptions,
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
    compile(path, &source, &classes, options)
}

/// `source` (the text of `path`) compiled for a machine with these core classes.
fn compile(
    path: &Path,
    source: &str,
    classes: &[(String, Vec<u32>)],
    options: &LoadOptions,
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
    schedlab_spec::compile(&path.display().to_string(), source, &compile_options).map_err(
        |errors| {
            let count = errors.len();
            let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
            let plural = if count == 1 { "" } else { "s" };
            LoadError::Invalid(format!(
                "{}\n{count} error{plural} in {}",
                text.join("\n"),
                path.display()
            ))
        },
    )
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
            short: false,
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
