//! `schedlab gather`: runs collected on several machines, brought into one data directory.
//!
//! Each test machine collects into a data directory of its own (`schedlab run P.yaml --only
//! collect --label <host>`), which reaches the analysis machine through a share or rsync;
//! [`gather`] copies their complete runs into one data directory, where a single `schedlab
//! analyze` sees them all.
//!
//! Why it verifies: a copy that went wrong (a truncated rsync, a flipped byte, a file still
//! being written) would otherwise be parsed as if it were the run. Every raw file is hashed while
//! it is copied and checked against the size and BLAKE3 digest its manifest recorded when the run
//! ended, and a file in the run directory that the manifest does not list refuses the run too.
//! A run is refused whole, never copied in part, and a refused run does not stop the others.
//!
//! Why it reads only regular files inside the run: a share that test machines write to is
//! gathered by root, into a dataset others read. A manifest, `raw/` or raw file that is a
//! symlink (even one whose target matches the manifest's size and digest), a device, a FIFO or a
//! socket refuses the run, so a planted `raw/x -> /etc/shadow` copies nothing
//! ([`digest::open_regular`] checks the file it opened, not a name looked at before).
//!
//! Why run ids can collide: a run id is `<set>-<label>-<variant>-r<n>`, so two machines that
//! collect the same pipeline without `--label` name their runs alike. A run id already in the
//! destination is skipped when its manifest is the same byte for byte (the same run, gathered
//! again: the manifest holds every raw file's digest, and the destination's copy was verified
//! when it came, so the source is not read again), and refused as a duplicate otherwise.
//!
//! Sources: a data directory (`SRC/<pipeline>/runs/<run>/`: every pipeline in it, or the one
//! asked for), or a pipeline directory (`SRC/runs/<run>/`: one machine's `data/<pipeline>`
//! copied under the machine's name). The runs of a data directory go to the pipeline of the same
//! name, and their manifests must agree; the runs of a pipeline directory go to the pipeline
//! their manifests name, whatever the directory is called.
//!
//! Nothing half-written: a run is copied into `<run>.partial` (which every command ignores),
//! each file fsynced, and renamed to `<run>` only when all of it verified, all under the
//! destination pipeline's lock. Ctrl-C removes the run being copied.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{HumanBytes, ProgressBar};
use schedlab_tables::manifest::{MANIFEST_FILE, Manifest, RAW_DIR, RawFile, raw_file};

use crate::layout::Layout;
use crate::{RunnerError, digest, lock, progress};

/// How [`gather`] runs.
pub struct GatherOptions<'a> {
    /// Gather only this pipeline's runs.
    pub pipeline: Option<&'a str>,
    /// Set by Ctrl-C: the run being copied is removed and no other starts.
    pub interrupt: &'a AtomicBool,
    /// Draw a bar over the bytes to read (on a terminal).
    pub progress: bool,
}

/// A run that was not gathered, and why.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The run's directory in its source.
    pub run_dir: PathBuf,
    /// What is wrong, naming the file.
    pub reason: String,
}

/// What [`gather`] did, run by run.
#[derive(Debug, Default)]
pub struct GatherReport {
    /// `<pipeline>/<run>` of every run copied.
    pub gathered: Vec<String>,
    /// The bytes of raw files copied.
    pub bytes: u64,
    /// `<pipeline>/<run>` of every run already in the destination, identical.
    pub skipped: Vec<String>,
    pub refused: Vec<Refusal>,
    /// Partial and interrupted run directories found in the sources, never gathered.
    pub incomplete: Vec<PathBuf>,
    pub interrupted: bool,
}

impl GatherReport {
    /// One line: how many runs were gathered, skipped and refused.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "gather: {} run(s) gathered ({}), {} skipped (already there, identical), {} refused",
            self.gathered.len(),
            HumanBytes(self.bytes),
            self.skipped.len(),
            self.refused.len()
        );
        if !self.incomplete.is_empty() {
            line.push_str(&format!(
                ", {} partial or interrupted run(s) left out",
                self.incomplete.len()
            ));
        }
        if self.interrupted {
            line.push_str("; interrupted: the run being copied was removed");
        }
        line
    }
}

/// Copies the complete runs of `sources` into the data directory `dest_data`, verified (see the
/// module documentation). `say` receives one line per run. An error is a problem of the
/// destination or a source that holds no runs, found before anything is copied or stopping the
/// copy; a bad run is a [`Refusal`] in the report.
pub fn gather(
    sources: &[PathBuf],
    dest_data: &Path,
    options: &GatherOptions<'_>,
    say: &dyn Fn(&str),
) -> Result<GatherReport, RunnerError> {
    let mut report = GatherReport::default();
    let mut runs = Vec::new();
    for source in sources {
        let found = find_runs(source, options.pipeline)?;
        if let Some(wanted) = options.pipeline
            && found.pipelines == 0
        {
            say(&format!("{}: no pipeline `{wanted}`", source.display()));
        }
        for dir in found.incomplete {
            say(&format!(
                "left out {}: a partial or interrupted run",
                dir.display()
            ));
            report.incomplete.push(dir);
        }
        for found in found.runs {
            match read_run(&found, options.pipeline) {
                Ok(run) => runs.push(run),
                Err(reason) => refuse(&mut report, say, found.dir, reason),
            }
        }
    }
    let total = runs.iter().map(SourceRun::bytes).sum();
    let bar = options
        .progress
        .then(|| progress::bytes_bar("gather", total));
    let note = |line: &str| match &bar {
        Some(bar) => bar.suspend(|| say(line)),
        None => say(line),
    };
    let mut destinations = Destinations {
        data: dest_data,
        locked: BTreeMap::new(),
    };
    for run in runs {
        if options.interrupt.load(Ordering::SeqCst) {
            report.interrupted = true;
            break;
        }
        let start = bar.as_ref().map_or(0, ProgressBar::position);
        let name = format!("{}/{}", run.pipeline, run.run_id);
        let copied = gather_run(&run, &mut destinations, bar.as_ref(), options.interrupt);
        match copied {
            Ok(None) => {
                note(&format!(
                    "skipped {name}: already in {}, identical",
                    dest_data.display()
                ));
                report.skipped.push(name);
            }
            Ok(Some(bytes)) => {
                note(&format!(
                    "gathered {name} from {} ({} file(s), {})",
                    run.dir.display(),
                    run.manifest.raw_files.len(),
                    HumanBytes(bytes)
                ));
                report.bytes += bytes;
                report.gathered.push(name);
            }
            Err(Stop::Refused(reason)) => refuse(&mut report, &note, run.dir.clone(), reason),
            Err(Stop::Interrupted) => {
                report.interrupted = true;
                break;
            }
            Err(Stop::Failed(err)) => return Err(err),
        }
        if let Some(bar) = &bar {
            bar.set_position(start + run.bytes());
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    Ok(report)
}

fn refuse(report: &mut GatherReport, say: &dyn Fn(&str), run_dir: PathBuf, reason: String) {
    say(&format!("refused {reason}"));
    report.refused.push(Refusal { run_dir, reason });
}

/// The destination's pipelines, each locked from the first run that goes to it until `gather`
/// ends.
struct Destinations<'a> {
    data: &'a Path,
    locked: BTreeMap<String, (Layout, lock::Lock)>,
}

impl Destinations<'_> {
    fn locked(&mut self, pipeline: &str) -> Result<&Layout, RunnerError> {
        if !self.locked.contains_key(pipeline) {
            let layout = Layout::new(self.data, pipeline);
            let lock = lock::acquire(&layout.lock(), "schedlab gather")?;
            self.locked.insert(pipeline.to_owned(), (layout, lock));
        }
        Ok(&self.locked[pipeline].0)
    }
}

/// Gathers one run; `Ok(None)` when the destination has it already, identical, else the bytes
/// copied.
fn gather_run(
    run: &SourceRun,
    destinations: &mut Destinations<'_>,
    bar: Option<&ProgressBar>,
    interrupt: &AtomicBool,
) -> Result<Option<u64>, Stop> {
    check_files(run).map_err(Stop::Refused)?;
    let dest = destinations.locked(&run.pipeline).map_err(Stop::Failed)?;
    match already_there(run, dest) {
        Some(Ok(())) => Ok(None),
        Some(Err(reason)) => Err(Stop::Refused(reason)),
        None => copy_run(run, dest, bar, interrupt).map(Some),
    }
}

/// Why a run's copy stopped.
enum Stop {
    /// The source is not what its manifest says: the run is refused.
    Refused(String),
    Interrupted,
    /// The destination could not be written: the command stops.
    Failed(RunnerError),
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Stop + '_ {
    move |source| {
        Stop::Failed(RunnerError::Io {
            path: path.to_owned(),
            source,
        })
    }
}

/// A complete run directory in a source.
struct FoundRun {
    dir: PathBuf,
    /// The pipeline directory's name, when the source is a data directory.
    pipeline: Option<String>,
}

/// The runs of one source.
struct Found {
    runs: Vec<FoundRun>,
    incomplete: Vec<PathBuf>,
    /// How many pipeline directories were read.
    pipelines: usize,
}

/// Lists the run directories of `source`, a pipeline directory (it has `runs/`) or a data
/// directory (pipeline directories with `runs/`; only `wanted`, if given).
fn find_runs(source: &Path, wanted: Option<&str>) -> Result<Found, RunnerError> {
    let mut found = Found {
        runs: Vec::new(),
        incomplete: Vec::new(),
        pipelines: 0,
    };
    if !source.is_dir() {
        return Err(RunnerError::NoRuns {
            path: source.to_owned(),
            missing: true,
        });
    }
    let itself = Layout::at(source);
    if itself.runs().is_dir() {
        list_runs(&itself, None, &mut found)?;
        return Ok(found);
    }
    let mut any_pipeline = false;
    for name in entry_names(source)? {
        let layout = Layout::new(source, &name);
        if !layout.runs().is_dir() {
            continue;
        }
        any_pipeline = true;
        if wanted.is_none_or(|wanted| wanted == name) {
            list_runs(&layout, Some(name), &mut found)?;
        }
    }
    if !any_pipeline {
        return Err(RunnerError::NoRuns {
            path: source.to_owned(),
            missing: false,
        });
    }
    Ok(found)
}

fn list_runs(
    pipeline: &Layout,
    name: Option<String>,
    found: &mut Found,
) -> Result<(), RunnerError> {
    found.pipelines += 1;
    for run in entry_names(&pipeline.runs())? {
        let dir = pipeline.run(&run);
        if Layout::is_complete_run_name(&run) {
            found.runs.push(FoundRun {
                dir,
                pipeline: name.clone(),
            });
        } else {
            found.incomplete.push(dir);
        }
    }
    Ok(())
}

/// The names in directory `dir`, sorted.
fn entry_names(dir: &Path) -> Result<Vec<String>, RunnerError> {
    let io = |source| RunnerError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        names.push(
            entry
                .map_err(io)?
                .file_name()
                .to_string_lossy()
                .into_owned(),
        );
    }
    names.sort();
    Ok(names)
}

/// A complete run of a source, its manifest read.
struct SourceRun {
    dir: PathBuf,
    pipeline: String,
    run_id: String,
    /// The manifest as it is on disk: what the copy writes, and what a run already in the
    /// destination must equal.
    manifest_bytes: Vec<u8>,
    manifest: Manifest,
}

impl SourceRun {
    /// The bytes of its raw files, as its manifest lists them.
    fn bytes(&self) -> u64 {
        self.manifest.raw_files.iter().map(|raw| raw.size).sum()
    }
}

/// Reads a run's manifest and checks that it belongs where it lies (its directory's name, its
/// pipeline); the error is the refusal.
fn read_run(found: &FoundRun, wanted: Option<&str>) -> Result<SourceRun, String> {
    real_directory(&found.dir)?;
    let path = Layout::manifest(&found.dir);
    let manifest_bytes = read_regular(&path).map_err(|err| {
        if err.kind() == ErrorKind::NotFound {
            format!("{}: missing, so this is not a complete run", path.display())
        } else {
            format!("{}: cannot read: {err}", path.display())
        }
    })?;
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|err| format!("{}: not a readable manifest: {err}", path.display()))?;
    let dir_name = found.dir.file_name().unwrap_or_default().to_string_lossy();
    if manifest.run_id != dir_name {
        return Err(format!(
            "{}: it names run `{}`, but its directory is `{dir_name}` (renamed?)",
            path.display(),
            manifest.run_id
        ));
    }
    let pipeline = match &found.pipeline {
        Some(name) if *name != manifest.pipeline => {
            return Err(format!(
                "{}: it names pipeline `{}`, but it lies in the directory of pipeline `{name}` \
                 (renamed?)",
                path.display(),
                manifest.pipeline
            ));
        }
        Some(name) => name.clone(),
        None => manifest.pipeline.clone(),
    };
    let mut parts = Path::new(&pipeline).components();
    if !matches!(
        (parts.next(), parts.next()),
        (Some(Component::Normal(_)), None)
    ) {
        return Err(format!(
            "{}: pipeline name `{pipeline}` is not a directory name",
            path.display()
        ));
    }
    if let Some(wanted) = wanted.filter(|wanted| *wanted != pipeline) {
        return Err(format!(
            "{}: a run of pipeline `{pipeline}`, not of `{wanted}` (--pipeline)",
            path.display()
        ));
    }
    Ok(SourceRun {
        dir: found.dir.clone(),
        pipeline,
        run_id: manifest.run_id.clone(),
        manifest_bytes,
        manifest,
    })
}

/// `None` when the destination lacks run `run`; `Some(Ok)` when it has it identical (the same
/// manifest bytes), `Some(Err)` with the refusal when it has another run of that id.
fn already_there(run: &SourceRun, dest: &Layout) -> Option<Result<(), String>> {
    let there = dest.run(&run.run_id);
    if !there.exists() {
        return None;
    }
    let theirs = std::fs::read(Layout::manifest(&there)).unwrap_or_default();
    if theirs == run.manifest_bytes {
        return Some(Ok(()));
    }
    let mine = &run.manifest;
    let which = match serde_json::from_slice::<Manifest>(&theirs) {
        Ok(other) => format!(
            "this one started {} on host `{}`, that one {} on host `{}`",
            mine.started_at, mine.host.hostname, other.started_at, other.host.hostname
        ),
        Err(_) => "that one's manifest is unreadable".into(),
    };
    Some(Err(format!(
        "{}: a different run of the same id is already in {} ({which}). Run ids are \
         `<set>-<label>-<variant>-r<n>`, so machines that collect the same pipeline without \
         labels name their runs alike (hint: collect with `--label <host>` on each machine; or \
         remove the one there if this one replaces it)",
        run.dir.display(),
        there.display()
    )))
}

/// Refuses a run whose directory holds a file its manifest does not list, lacks a listed file,
/// or has one of another size: the checks that need no reading, done before a byte is copied.
fn check_files(run: &SourceRun) -> Result<(), String> {
    let listed: BTreeMap<&str, &RawFile> = (run.manifest.raw_files.iter())
        .map(|raw| (raw.path.as_str(), raw))
        .collect();
    for raw in &run.manifest.raw_files {
        let mut parts = Path::new(&raw.path).components();
        let under_raw = matches!(
            (parts.next(), parts.next(), parts.next()),
            (Some(Component::Normal(dir)), Some(Component::Normal(_)), None) if dir == RAW_DIR
        );
        if !under_raw {
            return Err(format!(
                "{}: it lists `{}`, which is not a file of {RAW_DIR}/",
                Layout::manifest(&run.dir).display(),
                raw.path
            ));
        }
        let path = Layout::file_of_run(&run.dir, &raw.path);
        match std::fs::symlink_metadata(&path) {
            Err(err) if err.kind() == ErrorKind::NotFound => {
                return Err(format!(
                    "{}: listed in the manifest but missing",
                    path.display()
                ));
            }
            Err(err) => return Err(format!("{}: cannot read: {err}", path.display())),
            Ok(meta) if meta.is_symlink() => {
                return Err(format!(
                    "{}: a symbolic link, not a regular file: refused, so that nothing outside \
                     the run is read",
                    path.display()
                ));
            }
            Ok(meta) if !meta.is_file() => {
                return Err(format!("{}: not a regular file", path.display()));
            }
            Ok(meta) if meta.len() != raw.size => {
                return Err(format!(
                    "{}: {} bytes, but the manifest says {} (truncated, or still being copied?)",
                    path.display(),
                    meta.len(),
                    raw.size
                ));
            }
            Ok(_) => {}
        }
    }
    let unlisted = |path: &Path| {
        format!(
            "{}: in the run directory but not in its manifest",
            path.display()
        )
    };
    let entries = entry_names(&run.dir).map_err(|err| err.to_string())?;
    for name in entries {
        if name != MANIFEST_FILE && name != RAW_DIR {
            return Err(unlisted(&Layout::file_of_run(&run.dir, &name)));
        }
    }
    let raw_dir = Layout::raw(&run.dir);
    if raw_dir.exists() || raw_dir.is_symlink() {
        real_directory(&raw_dir)?;
        for name in entry_names(&raw_dir).map_err(|err| err.to_string())? {
            let file = raw_file(&name);
            if !listed.contains_key(file.as_str()) {
                return Err(unlisted(&Layout::file_of_run(&run.dir, &file)));
            }
        }
    }
    Ok(())
}

/// Copies `run` (its files checked by [`check_files`]) into the destination as `<run>.partial`,
/// verifying every raw file as it is read, and renames it to `<run>` when all of it is written and synced. Whatever stops it
/// removes the partial copy. Returns the bytes copied.
fn copy_run(
    run: &SourceRun,
    dest: &Layout,
    bar: Option<&ProgressBar>,
    interrupt: &AtomicBool,
) -> Result<u64, Stop> {
    let partial = dest.partial_run(&run.run_id);
    if partial.exists() {
        // Left by a gather or collect that was killed; the lock says none is running now.
        std::fs::remove_dir_all(&partial).map_err(io_error(&partial))?;
    }
    let copied = copy_into(run, &partial, bar, interrupt).and_then(|bytes| {
        let done = dest.run(&run.run_id);
        std::fs::rename(&partial, &done).map_err(io_error(&done))?;
        sync_dir(&dest.runs())?;
        Ok(bytes)
    });
    if copied.is_err() && partial.exists() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    copied
}

fn copy_into(
    run: &SourceRun,
    partial: &Path,
    bar: Option<&ProgressBar>,
    interrupt: &AtomicBool,
) -> Result<u64, Stop> {
    let raw_dir = Layout::raw(partial);
    std::fs::create_dir_all(&raw_dir).map_err(io_error(&raw_dir))?;
    let mut bytes = 0;
    for raw in &run.manifest.raw_files {
        let from = Layout::file_of_run(&run.dir, &raw.path);
        let to = Layout::file_of_run(partial, &raw.path);
        bytes += copy_verified(&from, &to, raw, bar, interrupt)?;
    }
    let manifest = Layout::manifest(partial);
    let mut file = File::create(&manifest).map_err(io_error(&manifest))?;
    file.write_all(&run.manifest_bytes)
        .and_then(|()| file.sync_all())
        .map_err(io_error(&manifest))?;
    sync_dir(&raw_dir)?;
    sync_dir(partial)?;
    Ok(bytes)
}

/// Copies `from` to `to`, hashing the bytes as they pass, so the source is read once; refuses
/// it when its size or BLAKE3 digest is not the manifest's.
fn copy_verified(
    from: &Path,
    to: &Path,
    raw: &RawFile,
    bar: Option<&ProgressBar>,
    interrupt: &AtomicBool,
) -> Result<u64, Stop> {
    let unreadable = |err: std::io::Error| Stop::Refused(format!("{}: {err}", from.display()));
    let (mut source, _) = digest::open_regular(from).map_err(unreadable)?;
    let mut target = File::create(to).map_err(io_error(to))?;
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0; 1 << 20];
    let mut copied = 0u64;
    loop {
        if interrupt.load(Ordering::SeqCst) {
            return Err(Stop::Interrupted);
        }
        let n = match source.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return Err(unreadable(err)),
        };
        hasher.update(&buffer[..n]);
        target.write_all(&buffer[..n]).map_err(io_error(to))?;
        copied += n as u64;
        if let Some(bar) = bar {
            bar.inc(n as u64);
        }
    }
    if copied != raw.size {
        return Err(Stop::Refused(format!(
            "{}: {copied} bytes read, but the manifest says {} (it changed while being copied?)",
            from.display(),
            raw.size
        )));
    }
    let digest = hasher.finalize().to_hex();
    if digest.as_str() != raw.blake3 {
        return Err(Stop::Refused(format!(
            "{}: its BLAKE3 digest is {}…, but the manifest says {}… (the same size, other bytes)",
            from.display(),
            &digest.as_str()[..16],
            raw.blake3.get(..16).unwrap_or(&raw.blake3)
        )));
    }
    target.sync_all().map_err(io_error(to))?;
    Ok(copied)
}

/// Refuses `dir` unless it is a directory itself, not a symlink to one: a run's files must lie
/// inside the run directory.
fn real_directory(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) if meta.is_symlink() => Err(format!(
            "{}: a symbolic link, not a directory: refused, so that nothing outside the run is read",
            dir.display()
        )),
        Ok(_) => Err(format!("{}: not a directory", dir.display())),
        Err(err) => Err(format!("{}: cannot read: {err}", dir.display())),
    }
}

/// The bytes of `path`, a regular file inside a run ([`digest::open_regular`]).
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let (mut file, meta) = digest::open_regular(path)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes the names in directory `dir` durable (a rename or new file survives a crash).
fn sync_dir(dir: &Path) -> Result<(), Stop> {
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(io_error(dir))
}
