//! `schedlab import`: files recorded without schedlab (a `perf sched record -a` trace, a
//! trace-cmd trace.dat, a turbostat log, stress-ng's or openssl's output, `time -v`, `perf sched timehist` text) become
//! a run of a pipeline, analysed like a collected one by `schedlab analyze`.
//!
//! Each file's kind is found from its content (`schedlab_parse::detect`) or given with `--as`.
//! The files are hard-linked into `runs/<run>/raw/` (copied across file systems), so the run
//! directory holds everything it is made of, as a collected run does, and its manifest says
//! where they came from, what each is, and what a collected run records that an import cannot
//! know: the parse stage turns each of those into a quality row rather than inventing it.
//!
//! Why the run id is the files' digest: importing the same files twice would count the same
//! recording twice in every comparison. The id is `imported-[<label>-][<var>_<value>-]<digest>`,
//! `<digest>` the first 12 hex digits of BLAKE3 over the files' kinds and digests, so a second
//! import of the same files finds the first and is refused, whatever its label.
//!
//! Nothing half-written: the run is assembled in `runs/<…>.partial` under the pipeline's lock and
//! renamed into place when its manifest is written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressFinish};
use schedlab_parse::ParserKind;
use schedlab_parse::detect::detect_file;
use schedlab_spec::Plan;
use schedlab_spec::selector::{Select, WorkloadSelector};
use schedlab_tables::manifest::{HostFacts, Imported, ImportedFile, Manifest, RunStatus, raw_file};

use crate::collect_stage::stamp_raw_files;
use crate::files::write_json;
use crate::layout::Layout;
use crate::{RunnerError, lock, progress};

/// The prefix of every imported run's id; collected runs start with 8 hex digits.
pub const IMPORTED_PREFIX: &str = "imported-";

/// How many hex digits of the files' digest name the run.
const DIGEST_CHARS: usize = 12;

/// One file to import: its path, and the workload whose output it is when the command line
/// said (`openssl=speed.txt`).
#[derive(Debug, Clone)]
pub struct ImportFile {
    pub path: PathBuf,
    pub workload: Option<String>,
}

impl ImportFile {
    /// A file as the command line names it: `NAME=FILE` names the workload whose output FILE
    /// is; a path that exists as given is a file, even with a `=` in it.
    pub fn from_arg(text: &str) -> ImportFile {
        match text.split_once('=') {
            Some((name, path)) if !Path::new(text).exists() && !name.contains('/') => ImportFile {
                path: PathBuf::from(path),
                workload: Some(name.to_owned()),
            },
            _ => ImportFile {
                path: PathBuf::from(text),
                workload: None,
            },
        }
    }
}

/// What `schedlab import` was asked.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    pub files: Vec<ImportFile>,
    /// The kind of every file (`--as`), instead of detecting it.
    pub kind: Option<ParserKind>,
    /// `--workload NAME=SELECTOR`: added to the pipeline's `import.workloads`, replacing one of
    /// the same name.
    pub workloads: Vec<WorkloadSelector>,
    pub label: Option<String>,
    /// `--var k=v`: the run's variant, as a matrix variable would give it.
    pub vars: BTreeMap<String, String>,
    /// Read damaged perf.data files as far as they go (`--salvage`).
    pub salvage: bool,
    /// Show a bar of the bytes hashed (and copied) while the files are brought in (on a
    /// terminal).
    pub progress: bool,
}

/// What was imported.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub run_id: String,
    /// Per file: its path as given, its kind, and how the kind was known.
    pub files: Vec<(PathBuf, ParserKind, String)>,
    /// Whether a file was copied because it could not be hard-linked.
    pub copied: bool,
}

/// A file's kind as the import decided it.
struct Kinded {
    /// The file read (standard input's spooled copy for `-`).
    file: ImportFile,
    /// The file as the user named it (`-` for standard input).
    named: PathBuf,
    kind: ParserKind,
    kind_from: String,
}

/// Imports `request.files` as a new run of `plan` under `data_dir`; `say` receives one line per
/// file (its kind) and per decision.
pub fn import(
    plan: &Plan,
    data_dir: &Path,
    request: &ImportRequest,
    say: &dyn Fn(&str),
) -> Result<ImportReport, RunnerError> {
    if request.files.is_empty() {
        return Err(import_error("no file to import"));
    }
    let layout = Layout::new(data_dir, &plan.name);
    std::fs::create_dir_all(layout.runs()).map_err(io(&layout.runs()))?;
    let spooled = spool_stdin(request, &layout)?;
    let files: Vec<ImportFile> = (request.files.iter())
        .map(|f| match &spooled {
            Some((_, path)) if f.path == Path::new(STDIN) => ImportFile {
                path: path.clone(),
                workload: f.workload.clone(),
            },
            _ => f.clone(),
        })
        .collect();
    let mut kinded = kinds(&files, request.kind)?;
    for (k, given) in kinded.iter_mut().zip(&request.files) {
        k.named = given.path.clone();
        say(&format!(
            "{}: {} ({})",
            k.named.display(),
            k.kind,
            k.kind_from
        ));
    }
    let workloads = selectors(plan, request);
    let outputs = attribute(&kinded, &workloads)?;
    let _lock = lock::acquire(&layout.lock(), "schedlab import")?;

    let partial = layout.partial_run("imported-new");
    if partial.exists() {
        // Left by an import that was killed; the lock says none is running now.
        std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
    }
    // Ctrl-C leaves only the `.partial` directory, which every command ignores and the next
    // import removes.
    let result = assemble(
        plan, &layout, &partial, request, &kinded, &outputs, &workloads,
    );
    if result.is_err() && partial.exists() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    let (run_id, copied) = result?;
    Ok(ImportReport {
        run_id,
        files: (kinded.into_iter())
            .map(|k| (k.named, k.kind, k.kind_from))
            .collect(),
        copied,
    })
}

/// Whether `name`, an entry of `runs/`, is an imported run.
pub fn is_imported_run(name: &str) -> bool {
    name.starts_with(IMPORTED_PREFIX) && Layout::is_complete_run_name(name)
}

fn import_error(message: impl Into<String>) -> RunnerError {
    RunnerError::Import {
        message: message.into(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunnerError + '_ {
    move |source| RunnerError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The file name that stands for standard input (`perf sched record -o - … | schedlab import
/// P.yaml -`).
pub const STDIN: &str = "-";

/// The name standard input's bytes get in the run's `raw/`.
const STDIN_FILE: &str = "stdin.data";

/// Standard input, when a file is `-`: copied into a temporary directory beside the pipeline's
/// runs (so the run links it rather than copying it again), removed with the returned guard. A
/// terminal, or `-` given twice, is an error.
fn spool_stdin(
    request: &ImportRequest,
    layout: &Layout,
) -> Result<Option<(tempfile::TempDir, PathBuf)>, RunnerError> {
    use std::io::IsTerminal;
    let wanted = (request.files.iter())
        .filter(|f| f.path == Path::new(STDIN))
        .count();
    match wanted {
        0 => return Ok(None),
        1 => {}
        _ => return Err(import_error("`-` (standard input) is named more than once")),
    }
    if std::io::stdin().is_terminal() {
        return Err(import_error(
            "`-` reads the recording from standard input, which is a terminal here (hint: pipe \
             it in: `perf sched record -o - -- CMD | schedlab import P.yaml -`)",
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix(".stdin-")
        .tempdir_in(&layout.root)
        .map_err(io(&layout.root))?;
    let path = dir.path().join(STDIN_FILE);
    let mut file = std::fs::File::create(&path).map_err(io(&path))?;
    std::io::copy(&mut std::io::stdin().lock(), &mut file).map_err(io(&path))?;
    file.sync_all().map_err(io(&path))?;
    Ok(Some((dir, path)))
}

/// Each file's kind: `--as`, or what its content says; a file of no known kind is an error
/// naming it.
fn kinds(files: &[ImportFile], kind: Option<ParserKind>) -> Result<Vec<Kinded>, RunnerError> {
    let mut kinded = Vec::new();
    for file in files {
        let path = &file.path;
        if !path.is_file() {
            return Err(import_error(format!(
                "{}: no such file (or not a regular file)",
                path.display()
            )));
        }
        let (kind, kind_from) = match kind {
            Some(kind) => (kind, "--as".to_owned()),
            None => match detect_file(path).map_err(io(path))? {
                Some(found) => (found.kind, found.evidence.to_owned()),
                None => {
                    return Err(import_error(format!(
                        "{}: not a kind schedlab reads (perf.data, trace.dat, perf sched \
                         timehist, turbostat, stress-ng, openssl speed, time, perf stat) (hint: \
                         `--as KIND` says which it is)",
                        path.display()
                    )));
                }
            },
        };
        kinded.push(Kinded {
            file: file.clone(),
            named: file.path.clone(),
            kind,
            kind_from,
        });
    }
    Ok(kinded)
}

/// The pipeline's `import.workloads`, with the command line's added (a name given on both takes
/// the command line's selector).
fn selectors(plan: &Plan, request: &ImportRequest) -> Vec<WorkloadSelector> {
    let mut all: Vec<WorkloadSelector> = (plan.import.iter())
        .filter(|w| !request.workloads.iter().any(|c| c.workload == w.workload))
        .cloned()
        .collect();
    all.extend(request.workloads.iter().cloned());
    all
}

/// How an imported run's workloads are found now, at its parse: the selector given on the
/// import's command line (`imported.given`), else the pipeline's current one of that name
/// (`pipeline`, its `import.workloads`), else the one recorded at import; then the pipeline's
/// workloads the run does not know yet. So a selector mended in the pipeline applies to the
/// runs imported before it, without importing them again. A manifest from before `given` was
/// recorded keeps every selector.
pub(crate) fn selectors_now(
    imported: &Imported,
    pipeline: &[WorkloadSelector],
) -> Vec<WorkloadSelector> {
    let Some(given) = &imported.given else {
        return imported.workloads.clone();
    };
    let follows = |name: &str| !given.iter().any(|g| g == name);
    let current = |name: &str| pipeline.iter().find(|p| p.workload == name);
    let mut now: Vec<WorkloadSelector> = (imported.workloads.iter())
        .map(|w| match current(&w.workload) {
            Some(p) if follows(&w.workload) => p.clone(),
            _ => w.clone(),
        })
        .collect();
    for p in pipeline {
        if !now.iter().any(|w| w.workload == p.workload) {
            now.push(p.clone());
        }
    }
    now
}

/// Whether a file of `kind` is a workload's own output (what the workload printed) rather than
/// a recording of the whole machine.
fn is_workload_output(kind: ParserKind) -> bool {
    matches!(
        kind,
        ParserKind::StressNg | ParserKind::Openssl | ParserKind::Time
    )
}

/// The workload each file's output belongs to: the one the command line named (`NAME=FILE`),
/// else the one [`owner`] finds. A workload's output that fits none (or several) is an error
/// saying how to name it.
fn attribute(
    kinded: &[Kinded],
    workloads: &[WorkloadSelector],
) -> Result<Vec<Option<String>>, RunnerError> {
    let names: Vec<&str> = workloads.iter().map(|w| w.workload.as_str()).collect();
    let mut out = Vec::new();
    for k in kinded {
        let path = k.named.display();
        if let Some(named) = &k.file.workload {
            if !names.contains(&named.as_str()) {
                return Err(import_error(format!(
                    "{path}: `{named}=` names no workload (the workloads are: {}) (hint: \
                     `--workload {named}=comm:NAME` declares it)",
                    listed(&names)
                )));
            }
            out.push(Some(named.clone()));
            continue;
        }
        let owner = owner(k.kind, workloads).map_err(|unclear| {
            import_error(format!(
                "{path}: {unclear} (hint: write the file as `NAME={path}`)"
            ))
        })?;
        out.push(owner);
    }
    Ok(out)
}

/// Which workload printed an output of `kind` that nobody named: the only workload, else the one
/// named like the tool or selecting it by command name; `None` for a recording of the whole
/// machine. When none or several fit, says so and lists the workloads.
fn owner(kind: ParserKind, workloads: &[WorkloadSelector]) -> Result<Option<String>, String> {
    if !is_workload_output(kind) {
        return Ok(None);
    }
    let names: Vec<&str> = workloads.iter().map(|w| w.workload.as_str()).collect();
    let tool = kind.name();
    let by_tool: Vec<&str> = (workloads.iter())
        .filter(|w| {
            w.workload == tool
                || matches!(&w.select, Select::Comm(_)) && w.select.matches_comm(tool.as_bytes())
        })
        .map(|w| w.workload.as_str())
        .collect();
    match (&names[..], &by_tool[..]) {
        ([only], _) => Ok(Some((*only).to_owned())),
        (_, [one]) => Ok(Some((*one).to_owned())),
        _ => Err(format!(
            "{tool} output, but which workload printed it? (the workloads are: {})",
            listed(&names)
        )),
    }
}

/// The workload an imported file's output belongs to at this parse, `workloads` being the run's
/// selectors now ([`selectors_now`]): one named with the file at import (`NAME=FILE`) stays,
/// as does every output of a manifest that did not record it; another is found again by
/// [`owner`], so that a workload added to the pipeline for the tool, or a selector mended
/// there, takes the output along with the tool's threads. Where none or several fit now, the workload found at
/// import stays and the second value says why.
pub(crate) fn owner_now(
    kind: ParserKind,
    file: &ImportedFile,
    workloads: &[WorkloadSelector],
) -> (Option<String>, Option<String>) {
    if file.named {
        return (file.workload.clone(), None);
    }
    match owner(kind, workloads) {
        Ok(owner) => (owner, None),
        Err(unclear) => {
            let kept = file.workload.as_deref().unwrap_or("none");
            let why = format!("{}: {unclear}; it stays with workload `{kept}`", file.path);
            (file.workload.clone(), Some(why))
        }
    }
}

fn listed(names: &[&str]) -> String {
    if names.is_empty() {
        "none; `--workload NAME=comm:NAME` or the pipeline's `import.workloads` names them".into()
    } else {
        names.join(", ")
    }
}

/// Links the files into `partial`, names the run from their digests, writes the manifest and
/// renames the run into place; returns its id and whether a file had to be copied.
fn assemble(
    plan: &Plan,
    layout: &Layout,
    partial: &Path,
    request: &ImportRequest,
    kinded: &[Kinded],
    outputs: &[Option<String>],
    workloads: &[WorkloadSelector],
) -> Result<(String, bool), RunnerError> {
    // Copying across file systems and hashing take seconds per gigabyte: the bar counts the
    // bytes hashed, and those copied when a file cannot be linked; it clears itself when
    // dropped, on an error too.
    let bar = (request.progress).then(|| {
        let total = (kinded.iter())
            .filter_map(|k| std::fs::metadata(&k.file.path).ok())
            .map(|meta| meta.len())
            .sum();
        progress::bytes_bar("import", total).with_finish(ProgressFinish::AndClear)
    });
    let bar = bar.as_ref();
    let raw_dir = Layout::raw(partial);
    std::fs::create_dir_all(&raw_dir).map_err(io(&raw_dir))?;
    let mut copied = false;
    let mut files = Vec::new();
    for (k, workload) in kinded.iter().zip(outputs) {
        let name = unique_name(&raw_dir, &k.file.path);
        let to = raw_dir.join(&name);
        // The file the user named, through any symlink: a run's raw files are regular files
        // (a hard link to a symlink would be a symlink in raw/, which the parse stage refuses).
        let source = std::fs::canonicalize(&k.file.path).map_err(io(&k.file.path))?;
        if std::fs::hard_link(&source, &to).is_err() {
            copy_file(&source, &to, bar).map_err(io(&to))?;
            copied = true;
        }
        let from = match k.named == Path::new(STDIN) {
            true => k.named.clone(),
            false => std::path::absolute(&k.named).unwrap_or_else(|_| k.named.clone()),
        };
        files.push(ImportedFile {
            path: raw_file(&name),
            from: from.display().to_string(),
            kind: k.kind.name().to_owned(),
            kind_from: k.kind_from.clone(),
            workload: workload.clone(),
            named: k.file.workload.is_some(),
        });
    }
    let raw_files = stamp_raw_files(partial, bar)?;
    let digest = files_digest(&files, &raw_files);
    if let Some(earlier) = imported_before(layout, &digest)? {
        return Err(import_error(format!(
            "these files were imported already, as run {earlier} of pipeline `{}` (hint: \
             remove {} to import them again, e.g. with other workloads)",
            plan.name,
            layout.run(&earlier).display()
        )));
    }
    let run_id = run_id(request, &digest);
    let repetition = 1 + count_like(layout, request)?;
    let (host, facts_unknown) = host_facts(kinded, request.salvage)?;
    let manifest = Manifest {
        run_id: run_id.clone(),
        pipeline: plan.name.clone(),
        label: request.label.clone(),
        key: "imported".into(),
        variant: request.vars.clone(),
        repetition,
        status: RunStatus::Completed,
        started_at: started_at(kinded),
        start_ns: 0,
        zero_ns: 0,
        end_ns: 0,
        host,
        monitors: Vec::new(),
        processes: Vec::new(),
        notes: Vec::new(),
        raw_files,
        plan: serde_json::json!({ "import": { "workloads": workloads } }),
        schedlab_version: env!("CARGO_PKG_VERSION").into(),
        imported: Some(Imported {
            given: Some(
                request
                    .workloads
                    .iter()
                    .map(|w| w.workload.clone())
                    .collect(),
            ),
            unknown: unknown(kinded, workloads, facts_unknown),
            files,
            workloads: workloads.to_vec(),
            salvage: request.salvage,
        }),
    };
    write_json(&Layout::manifest(partial), &manifest)?;
    let done = layout.run(&run_id);
    std::fs::rename(partial, &done).map_err(io(&done))?;
    Ok((run_id, copied))
}

/// Copies `from` to `to` (a file that could not be hard-linked: another file system), its bytes
/// added to `bar`'s length and counted as they pass.
fn copy_file(from: &Path, to: &Path, bar: Option<&ProgressBar>) -> std::io::Result<()> {
    let Some(bar) = bar else {
        return std::fs::copy(from, to).map(drop);
    };
    let source = std::fs::File::open(from)?;
    bar.inc_length(source.metadata()?.len());
    std::io::copy(&mut bar.wrap_read(source), &mut std::fs::File::create(to)?)?;
    Ok(())
}

/// The file's own name, made unique in `dir` (`2-perf.data` beside `perf.data`).
fn unique_name(dir: &Path, path: &Path) -> String {
    let base = (path.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let mut name = base.clone();
    let mut n = 1;
    while dir.join(&name).exists() {
        n += 1;
        name = format!("{n}-{base}");
    }
    name
}

/// BLAKE3 over each file's kind and digest, in a fixed order: the same files (under any names)
/// give the same digest.
fn files_digest(files: &[ImportedFile], raw: &[schedlab_tables::manifest::RawFile]) -> String {
    let mut lines: Vec<String> = (files.iter())
        .map(|f| {
            let digest = raw
                .iter()
                .find(|r| r.path == f.path)
                .map_or("", |r| &r.blake3);
            format!("{} {digest}\n", f.kind)
        })
        .collect();
    lines.sort();
    let digest = blake3::hash(lines.concat().as_bytes()).to_hex();
    digest[..DIGEST_CHARS].to_owned()
}

/// The imported run whose files have `digest`, if any.
fn imported_before(layout: &Layout, digest: &str) -> Result<Option<String>, RunnerError> {
    let runs = layout.runs();
    for entry in std::fs::read_dir(&runs).map_err(io(&runs))?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_imported_run(&name) && name.ends_with(&format!("-{digest}")) {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// `imported-[<label>-][<var>_<value>-]<digest>`, values made safe as collected runs' are.
fn run_id(request: &ImportRequest, digest: &str) -> String {
    let mut id = IMPORTED_PREFIX.to_owned();
    if let Some(label) = &request.label {
        id.push_str(label);
        id.push('-');
    }
    for (variable, value) in &request.vars {
        id.push_str(&crate::identity::safe_text(variable));
        id.push('_');
        id.push_str(&crate::identity::safe_text(value));
        id.push('-');
    }
    id.push_str(digest);
    id
}

/// How many imported runs already have this import's label and variant: its repetition is the
/// next one, so `--by repetition` and order effects see imports in the order they came.
fn count_like(layout: &Layout, request: &ImportRequest) -> Result<u32, RunnerError> {
    let runs = layout.runs();
    let mut count = 0;
    for entry in std::fs::read_dir(&runs).map_err(io(&runs))?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_imported_run(&name) {
            continue;
        }
        let Ok(bytes) = std::fs::read(Layout::manifest(&entry.path())) else {
            continue;
        };
        if let Ok(m) = serde_json::from_slice::<Manifest>(&bytes)
            && m.label == request.label
            && m.variant == request.vars
        {
            count += 1;
        }
    }
    Ok(count)
}

/// The recording machine as the first trace's header tells it (a perf.data's, or a trace.dat's
/// UNAME and CPU count), and what it leaves unknown. A trace whose header cannot be read (cut
/// short, left unfinished by perf) refuses the import, with the reason and the hint that
/// `--salvage` exists, rather than adding a run whose trace the parse stage would then refuse.
fn host_facts(kinded: &[Kinded], salvage: bool) -> Result<(HostFacts, Vec<String>), RunnerError> {
    let mut unknown = Vec::new();
    let facts = match kinded.iter().find(|k| k.kind.is_trace_file()) {
        Some(k) if k.kind == ParserKind::TraceCmd => Some(
            schedlab_parse::trace_cmd_header_facts(&k.file.path, salvage)
                .map_err(|err| import_error(err.to_string()))?,
        ),
        Some(k) if k.kind == ParserKind::Perfetto => Some(
            schedlab_parse::perfetto_header_facts(&k.file.path, salvage)
                .map_err(|err| import_error(err.to_string()))?,
        ),
        Some(k) => Some(
            schedlab_parse::perf_header_facts(&k.file.path, salvage)
                .map_err(|err| import_error(err.to_string()))?,
        ),
        None => None,
    };
    let Some(facts) = facts else {
        unknown.push(
            "the recording machine and its CPUs: no perf.data or trace.dat header to read them \
             from, so `cpus` is empty unless the pipeline declares `topology:`"
                .into(),
        );
        return Ok((HostFacts::default(), unknown));
    };
    let nr_cpus = (facts.nr_cpus_available)
        .or(facts.nr_cpus_online)
        .unwrap_or(0);
    let cpus = match schedlab_topology::from_core_pmus(nr_cpus, facts.hybrid_pmus.as_deref()) {
        Ok(mut cpus) => {
            for (cpu, (core, socket)) in cpus.iter_mut().zip(&facts.cpu_ids) {
                (cpu.core_id, cpu.package_id) = (Some(*core), Some(*socket));
            }
            cpus
        }
        Err(err) => {
            unknown.push(format!("core classes: the header's core PMU lists: {err}"));
            Vec::new()
        }
    };
    if nr_cpus == 0 {
        unknown.push(
            "the CPU count: the perf.data header does not give it (lost with a salvaged \
             file's end), so `cpus` lists only what the pipeline's `topology:` declares"
                .into(),
        );
    } else if facts.hybrid_pmus.is_none() {
        unknown.push(
            "core classes: the trace's header names no hybrid core PMUs (perf writes them on \
             hybrid machines only, a trace.dat never), so every CPU is one class, P; declare \
             `topology:` in the pipeline if the machine had several (big.LITTLE too)"
                .into(),
        );
    } else {
        unknown.push(
            "core classes come from the perf.data header's core PMUs, not from sysfs: LP \
             E-cores listed with the E-cores (cpu_atom) are not told apart; declare \
             `topology:` to split them"
                .into(),
        );
    }
    let host = HostFacts {
        hostname: facts.hostname.unwrap_or_default(),
        kernel: facts.os_release.unwrap_or_default(),
        kernel_cmdline: String::new(),
        cpu_model: facts.cpu_desc.unwrap_or_default(),
        nproc: nr_cpus as usize,
        cpus,
        ..HostFacts::default()
    };
    Ok((host, unknown))
}

/// The oldest file's modification time, the closest thing to when the recording was made.
fn started_at(kinded: &[Kinded]) -> String {
    let oldest = (kinded.iter())
        .filter_map(|k| std::fs::metadata(&k.file.path).ok()?.modified().ok())
        .min()
        .unwrap_or(std::time::UNIX_EPOCH);
    humantime::format_rfc3339_millis(oldest).to_string()
}

/// What a collected run records and this import cannot know, one sentence each.
fn unknown(
    kinded: &[Kinded],
    workloads: &[WorkloadSelector],
    mut facts: Vec<String>,
) -> Vec<String> {
    let has = |kind| kinded.iter().any(|k| k.kind == kind);
    let mut unknown = vec![
        "when the recording started: `runs.started_at` is the oldest file's modification time"
            .to_owned(),
        "the scheduler configuration in force (kernel config, sysctls, governor, EPP, SMT)"
            .to_owned(),
    ];
    if !workloads.is_empty() {
        unknown.push(
            "the workloads' process start and end times, exit codes, nice values, CPU \
             affinity and command lines: lifetimes come from the trace; `processes` holds nice \
             0, no affinity and no argv"
                .into(),
        );
    }
    let traced = [
        ParserKind::PerfSched,
        ParserKind::TraceCmd,
        ParserKind::Perfetto,
    ];
    if !traced.into_iter().any(has) && !has(ParserKind::Timehist) {
        unknown.push(
            "a scheduler trace: no perf.data, trace.dat or timehist file was imported, so the \
             per-CPU and per-thread figures are empty"
                .into(),
        );
    }
    if (has(ParserKind::TraceCmd) || has(ParserKind::Perfetto)) && !has(ParserKind::Turbostat) {
        unknown.push(
            "frequency and idle states come from the trace's cpu_frequency and cpu_idle \
             events where it has them (`cpu_freq_idle`); package power and temperature are not \
             recorded there"
                .into(),
        );
    } else if !has(ParserKind::Turbostat) {
        unknown.push(
            "frequency, C-states and power: no turbostat output was imported, so \
             `cpu_activity` is empty"
                .into(),
        );
    }
    unknown.append(&mut facts);
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinded(name: &str, kind: ParserKind, workload: Option<&str>) -> Kinded {
        Kinded {
            file: ImportFile {
                path: PathBuf::from(name),
                workload: workload.map(str::to_owned),
            },
            named: PathBuf::from(name),
            kind,
            kind_from: String::new(),
        }
    }

    fn selector(text: &str) -> WorkloadSelector {
        text.parse().unwrap()
    }

    #[test]
    fn outputs_go_to_the_named_the_only_or_the_tools_workload() {
        let files = [
            kinded("perf.data", ParserKind::PerfSched, None),
            kinded("speed.txt", ParserKind::Openssl, None),
            kinded("bg.txt", ParserKind::StressNg, None),
            kinded("t.txt", ParserKind::Time, Some("fg")),
        ];
        let workloads = [selector("fg=comm:openssl"), selector("bg=comm:stress-ng*")];
        let out = attribute(&files, &workloads).unwrap();
        assert_eq!(
            out,
            [
                None,
                Some("fg".into()),
                Some("bg".into()),
                Some("fg".into())
            ]
        );
        let only = attribute(&files[3..], &[selector("x=pid:4")]);
        assert!(
            only.unwrap_err()
                .to_string()
                .contains("`fg=` names no workload")
        );
        let one = attribute(&files[1..2], &[selector("x=pid:4")]).unwrap();
        assert_eq!(one, [Some("x".into())]);
    }

    #[test]
    fn an_output_no_workload_claims_is_an_error_saying_how_to_name_it() {
        let files = [kinded("t.txt", ParserKind::Time, None)];
        let workloads = [selector("a=pid:1"), selector("b=pid:2")];
        let err = attribute(&files, &workloads).unwrap_err().to_string();
        assert!(err.contains("NAME=t.txt") && err.contains("a, b"), "{err}");
    }

    /// An imported file of `kind` put with `workload` at import, `named` on the command line.
    fn file(kind: ParserKind, workload: &str, named: bool) -> ImportedFile {
        ImportedFile {
            path: format!("raw/{}.txt", kind.name()),
            from: String::new(),
            kind: kind.name().to_owned(),
            kind_from: String::new(),
            workload: Some(workload.to_owned()),
            named,
        }
    }

    #[test]
    fn an_output_nobody_named_is_found_again_and_a_named_one_stays() {
        let now = [
            selector("app=comm:stress-ng*"),
            selector("sha=comm:openssl"),
        ];
        let owner = |f: &ImportedFile| {
            let kind = ParserKind::from_name(&f.kind).unwrap();
            owner_now(kind, f, &now)
        };
        let found = file(ParserKind::Openssl, "app", false);
        assert_eq!(owner(&found), (Some("sha".into()), None));
        let named = file(ParserKind::StressNg, "other", true);
        assert_eq!(owner(&named), (Some("other".into()), None));
        let before: ImportedFile = serde_json::from_str(
            r#"{"path": "raw/s.txt", "from": "/s.txt", "kind": "openssl", "kind_from": "",
                "workload": "app"}"#,
        )
        .unwrap();
        assert_eq!(
            owner(&before),
            (Some("app".into()), None),
            "a manifest from before `named` was recorded keeps every output where it was"
        );
        let unclear = file(ParserKind::Time, "app", false);
        let (kept, why) = owner(&unclear);
        assert_eq!(kept.as_deref(), Some("app"));
        assert!(why.unwrap().contains("stays with workload `app`"));
        let trace = ImportedFile {
            workload: None,
            ..file(ParserKind::PerfSched, "", false)
        };
        assert_eq!(owner(&trace), (None, None), "a recording of the machine");
    }

    fn imported(given: Option<Vec<String>>) -> Imported {
        Imported {
            files: vec![],
            workloads: vec![selector("a=comm:old-a"), selector("b=comm:given-b")],
            given,
            unknown: vec![],
            salvage: false,
        }
    }

    #[test]
    fn the_pipelines_selectors_replace_all_but_those_given_on_the_command_line() {
        let pipeline = [
            selector("b=comm:pipeline-b"),
            selector("a=comm:mended-a"),
            selector("c=comm:new-c"),
        ];
        assert_eq!(
            selectors_now(&imported(Some(vec!["b".into()])), &pipeline),
            [
                selector("a=comm:mended-a"),
                selector("b=comm:given-b"),
                selector("c=comm:new-c")
            ]
        );
        assert_eq!(
            selectors_now(&imported(Some(vec![])), &[]),
            imported(None).workloads,
            "a workload the pipeline no longer names keeps its selector"
        );
        assert_eq!(
            selectors_now(&imported(None), &pipeline),
            imported(None).workloads,
            "a manifest from before `given` was recorded keeps every selector"
        );
    }

    #[test]
    fn a_file_argument_names_its_workload_unless_it_is_a_path() {
        let named = ImportFile::from_arg("bg=stress.txt");
        assert_eq!(named.workload.as_deref(), Some("bg"));
        assert_eq!(named.path, Path::new("stress.txt"));
        let plain = ImportFile::from_arg("dir/a=b.txt");
        assert_eq!(
            (plain.workload, plain.path),
            (None, PathBuf::from("dir/a=b.txt"))
        );
    }
}
