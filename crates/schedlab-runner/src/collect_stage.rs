//! The collect stage: runs the missing runs, stamps their raw files when each ends, and lists
//! the runs on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use indicatif::ProgressBar;
use schedlab_collect::RunRequest;
use schedlab_tables::Severity;
use schedlab_tables::manifest::{RawFile, RunStatus};

use crate::digest::{self, Digests};
use crate::error::RunnerError;
use crate::files::{read_manifest, write_json};
use crate::layout::Layout;
use crate::options::Outcome;
use crate::parse_stage::CollectedRun;
use crate::progress;
use crate::runner::Runner;
use crate::state::Stage;

impl<'a> Runner<'a> {
    pub(crate) fn collect(
        &self,
        cache: &mut Digests,
        outcome: &mut Outcome,
    ) -> Result<(), RunnerError> {
        if self.plan.runs.is_empty() {
            (self.say)(
                "collect: nothing to collect (no collect section; `schedlab import` adds runs)",
            );
            return Ok(());
        }
        let force = self.options.selection.forced.contains(&Stage::Collect);
        let (mut done, mut collected) = (0, 0);
        let missing: Vec<&schedlab_spec::RunPlan> = (self.plan.runs.iter())
            .filter(|plan| {
                force || !Layout::manifest(&self.layout.run(&self.ids.id(plan))).exists()
            })
            .collect();
        let lengths: Vec<_> = (missing.iter())
            .map(|plan| (plan.collect.expected_length(), plan.collect.cooldown))
            .collect();
        let schedule = progress::Schedule::new(&lengths);
        let bar = (self.options.progress && !missing.is_empty())
            .then(|| progress::collect_bar(schedule.as_ref()));
        // Lines said while the bar is drawn go above it.
        let say = |line: &str| match &bar {
            Some(bar) => bar.suspend(|| (self.say)(line)),
            None => (self.say)(line),
        };
        // Each collection's warnings, said once per kind when the stage ends.
        let mut warnings: Vec<(String, Vec<String>)> = Vec::new();
        for plan in &self.plan.runs {
            let run_id = self.ids.id(plan);
            let final_dir = self.layout.run(&run_id);
            if Layout::manifest(&final_dir).exists() && !force {
                done += 1;
                continue;
            }
            if self.options.interrupt.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                return Ok(());
            }
            if collected > 0
                && let Some(cooldown) = plan.collect.cooldown
            {
                say(&format!("collect: cooling down for {cooldown:?}"));
                std::thread::sleep(cooldown);
            }
            let partial = self.layout.partial_run(&run_id);
            let io = |source, path: &Path| RunnerError::Io {
                path: path.to_owned(),
                source,
            };
            if partial.exists() {
                std::fs::remove_dir_all(&partial).map_err(|e| io(e, &partial))?;
            }
            std::fs::create_dir_all(&partial).map_err(|e| io(e, &partial))?;
            if let Some(bar) = &bar {
                bar.set_prefix(format!(
                    "collect run {} of {}",
                    collected + 1,
                    missing.len()
                ));
                bar.set_message(run_id.clone());
            }
            let on_tick = |elapsed: std::time::Duration| {
                if let (Some(bar), Some(schedule)) = (&bar, &schedule) {
                    let at = schedule.position(collected, elapsed);
                    bar.set_position(at.as_millis() as u64);
                }
            };
            let request = RunRequest {
                run_id: &run_id,
                pipeline: &self.plan.name,
                label: self.options.label.as_deref(),
                plan,
                run_dir: &partial,
                self_exe: &self.options.self_exe,
                interrupt: &self.options.interrupt,
                on_tick: &on_tick,
            };
            let result = schedlab_collect::collect(&request);
            let mut manifest = match result {
                Ok(manifest) => manifest,
                Err(source) => {
                    // Nothing half-written: a run that could not start leaves no directory.
                    let _ = std::fs::remove_dir_all(&partial);
                    return Err(RunnerError::Collect { run_id, source });
                }
            };
            manifest.raw_files = stamp_raw_files(&partial, None)?;
            for raw in &manifest.raw_files {
                cache.0.insert(
                    self.layout
                        .relative(&self.layout.run_file(&run_id, &raw.path)),
                    digest::Stamp {
                        size: raw.size,
                        mtime_ns: raw.mtime_ns,
                        inode: raw.inode,
                        blake3: raw.blake3.clone(),
                    },
                );
            }
            write_json(&Layout::manifest(&partial), &manifest)?;
            collected += 1;
            if manifest.status == RunStatus::Interrupted {
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let kept = self.layout.interrupted_run(&run_id, secs);
                std::fs::rename(&partial, &kept).map_err(|e| io(e, &kept))?;
                say(&format!(
                    "collect: interrupted; what was recorded is kept in {}",
                    kept.display()
                ));
                outcome.interrupted = true;
                return Ok(());
            }
            if final_dir.exists() {
                std::fs::remove_dir_all(&final_dir).map_err(|e| io(e, &final_dir))?;
            }
            std::fs::rename(&partial, &final_dir).map_err(|e| io(e, &final_dir))?;
            match manifest.status {
                RunStatus::Failed => outcome.failed_runs.push(run_id.clone()),
                RunStatus::WorkloadStopped => outcome.stopped_runs.push(run_id.clone()),
                _ => {}
            }
            say(&format!("collect: {run_id} {}", manifest.status.as_str()));
            let notes = manifest
                .notes
                .iter()
                .filter(|n| n.severity == Severity::Warning);
            for note in notes {
                let kind = format!("{}: {}", note.source, note.message);
                match warnings.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, runs)) => runs.push(run_id.clone()),
                    None => warnings.push((kind, vec![run_id.clone()])),
                }
            }
        }
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        for (kind, runs) in &warnings {
            let runs = match &runs[..] {
                [run] => format!("run {run}"),
                _ => format!("{} runs: {}", runs.len(), runs.join(", ")),
            };
            say(&format!("collect: warning: {kind} ({runs})"));
        }
        if collected == 0 {
            (self.say)(&format!(
                "collect: all {done} runs collected already, nothing to collect"
            ));
        } else if done > 0 {
            (self.say)(&format!(
                "collect: {done} runs collected already, {collected} collected now"
            ));
        }
        Ok(())
    }

    /// The completed or failed runs of the pipeline as it is now on disk (every label), by run
    /// id.
    pub fn collected_runs(&self) -> Result<Vec<CollectedRun>, RunnerError> {
        let mut runs = Vec::new();
        let mut older = false;
        for entry in std::fs::read_dir(self.layout.runs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !Layout::is_complete_run_name(&name) {
                continue;
            }
            if !self.ids.is_current(&name) {
                older = true;
                continue;
            }
            let path = Layout::manifest(&entry.path());
            if path.exists() {
                runs.push(CollectedRun {
                    dir: entry.path(),
                    manifest: read_manifest(&path)?,
                });
            }
        }
        if runs.is_empty() {
            return Err(RunnerError::NothingCollected {
                dir: self.layout.runs(),
                older,
            });
        }
        runs.sort_by(|a, b| a.manifest.run_id.cmp(&b.manifest.run_id));
        Ok(runs)
    }

    /// What `run` would collect, run by run in execution order, without starting anything.
    pub fn dry_run(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for plan in &self.plan.runs {
            let run_id = self.ids.id(plan);
            let dir = self.layout.run(&run_id);
            if Layout::manifest(&dir).exists()
                && !self.options.selection.forced.contains(&Stage::Collect)
            {
                lines.push(format!("run {run_id}: collected already, nothing to do"));
                continue;
            }
            lines.push(format!("run {run_id}:"));
            lines.extend(
                schedlab_collect::timeline(plan, &dir, &self.options.self_exe)
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
            // A short form's `cooldown: 0s` is no pause.
            if let Some(cooldown) = plan.collect.cooldown.filter(|c| !c.is_zero()) {
                lines.push(format!("  then cool down for {cooldown:?}"));
            }
        }
        lines
    }
}

/// Hashes every file under `run_dir/raw` once, now that the run has ended; the bytes read
/// advance `bar`, if any.
pub(crate) fn stamp_raw_files(
    run_dir: &Path,
    bar: Option<&ProgressBar>,
) -> Result<Vec<RawFile>, RunnerError> {
    let raw = Layout::raw(run_dir);
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&raw)
        .map_err(|source| RunnerError::Io {
            path: raw.clone(),
            source,
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for path in entries {
        let stamp = digest::stamp(&path, bar).map_err(|source| RunnerError::Io {
            path: path.clone(),
            source,
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push(RawFile {
            path: schedlab_tables::manifest::raw_file(&name),
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
            inode: stamp.inode,
            blake3: stamp.blake3,
        });
    }
    Ok(files)
}
