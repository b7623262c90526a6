//! What each stage's fingerprint is computed from: its part of the YAML, the program build, and
//! the digests of its input files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::digest::{self, Digests};
use crate::error::RunnerError;
use crate::import;
use crate::layout::Layout;
use crate::parse_stage::CollectedRun;
use crate::runner::Runner;
use crate::state::{Inputs, Record, Stage};

/// A run's plot files, by run id, as the summary's page links them.
pub(crate) type RunPlots = (String, Vec<PathBuf>);

impl<'a> Runner<'a> {
    /// What `stage` computes one run from: for parse, its manifest and raw files; for aggregate,
    /// its partitions of the tables.
    pub(crate) fn run_inputs(
        &self,
        stage: Stage,
        run: &CollectedRun,
        cache: &mut Digests,
    ) -> Result<Inputs, RunnerError> {
        let id = &run.manifest.run_id;
        let (config, files) = match stage {
            Stage::Parse => {
                let mut files = vec![self.layout.relative(&Layout::manifest(&run.dir))];
                for raw in &run.manifest.raw_files {
                    let key = self.layout.relative(&self.layout.run_file(id, &raw.path));
                    // The manifest's stamp, taken when the run ended, saves hashing it again.
                    cache.0.entry(key.clone()).or_insert_with(|| digest::Stamp {
                        size: raw.size,
                        mtime_ns: raw.mtime_ns,
                        inode: raw.inode,
                        blake3: raw.blake3.clone(),
                    });
                    files.push(key);
                }
                let mut config = self.plan.parse_section();
                if let Some(imported) = &run.manifest.imported {
                    // An imported run's threads are found by the pipeline's current selectors
                    // (see `import::selectors_now`): mending one re-parses the runs it applies
                    // to.
                    let now = import::selectors_now(imported, &self.plan.import);
                    config["import"] = serde_json::json!(now);
                }
                (config, files)
            }
            Stage::Aggregate => (
                self.plan.aggregate_section(),
                self.outputs_of(Stage::Parse, id),
            ),
            _ => {
                let mut files = self.outputs_of(Stage::Parse, id);
                files.extend(self.outputs_of(Stage::Aggregate, id));
                files.retain(|file| {
                    table_of(file).is_some_and(|t| schedlab_report::PLOTS_READ.contains(&t))
                });
                (self.plan.summarize_section(), files)
            }
        };
        self.inputs_of(config, files, cache)
    }

    /// The files `stage` wrote for run `run_id`, relative to the pipeline root, as recorded.
    pub(crate) fn outputs_of(&self, stage: Stage, run_id: &str) -> Vec<String> {
        let record = Record::load(&self.layout.record(stage, Some(run_id)));
        record
            .map(|r| r.outputs.into_keys().collect())
            .unwrap_or_default()
    }

    /// Inputs from a stage's part of the YAML and its input files (relative to the pipeline root).
    pub(crate) fn inputs_of(
        &self,
        config: serde_json::Value,
        files: Vec<String>,
        cache: &mut Digests,
    ) -> Result<Inputs, RunnerError> {
        let mut digests = BTreeMap::new();
        for file in files {
            let path = self.layout.root.join(&file);
            let digest = cache
                .digest(&file, &path)
                .map_err(|source| RunnerError::Io { path, source })?;
            digests.insert(file, digest.unwrap_or_else(|| "missing".into()));
        }
        Ok(Inputs {
            config: digest::of_json(&config),
            version: self.program(cache),
            files: digests,
        })
    }

    /// What the report is computed from: every run's aggregates and the tables it reads, and
    /// each run's plots (the page links them), as their records name them.
    pub(crate) fn summarize_inputs(
        &self,
        runs: &[CollectedRun],
        cache: &mut Digests,
    ) -> Result<(Inputs, Vec<RunPlots>), RunnerError> {
        let mut files = Vec::new();
        let mut plots = Vec::new();
        for run in runs {
            let id = &run.manifest.run_id;
            files.extend(self.outputs_of(Stage::Aggregate, id));
            let expects = !self.plan.summarize.expect.is_empty();
            let read = |file: &String| {
                table_of(file).is_some_and(|t| {
                    schedlab_report::TABLES_READ.contains(&t)
                        || (expects && schedlab_analyze::expectations::TABLES_READ.contains(&t))
                })
            };
            files.extend(self.outputs_of(Stage::Parse, id).into_iter().filter(read));
            let drawn = self.outputs_of(Stage::Summarize, id);
            plots.push((
                id.clone(),
                drawn.iter().map(|f| self.layout.root.join(f)).collect(),
            ));
            files.extend(drawn);
        }
        let inputs = self.inputs_of(self.plan.summarize_section(), files, cache)?;
        Ok((inputs, plots))
    }

    /// The program in stage fingerprints: its version and the identity of the executable. The
    /// version alone stays the same between builds, which left the tables and aggregates of older
    /// code "fresh" after an upgrade; with the identity, a rebuilt schedlab recomputes what its
    /// code computes (collection, never fingerprinted, is not repeated).
    ///
    /// The identity is the executable's GNU build id, which the linker computes over its whole
    /// output, so another build has another one (and `strip`, which keeps the code, keeps it):
    /// read from its headers, where a digest would read the hundred megabytes of a binary with
    /// line tables on every first run after a build. An executable linked without one is
    /// identified by a digest of its bytes, cached in `state/digests.json` like any input's.
    pub(crate) fn program(&self, cache: &mut Digests) -> String {
        let version = env!("CARGO_PKG_VERSION");
        // The executable may be started through a symlink; its identity is the file's itself.
        let exe = std::fs::canonicalize(&self.options.self_exe);
        let exe = exe.as_deref().unwrap_or(&self.options.self_exe);
        if let Some(id) = build_id(exe) {
            return format!("{version}+build-{}", &id[..id.len().min(12)]);
        }
        match cache.digest("program", exe) {
            Ok(Some(hash)) => format!("{version}+{}", &hash[..12]),
            _ => version.to_owned(),
        }
    }
}

/// The GNU build id of the ELF executable `path`, in hex; `None` for a file without one or not
/// ELF.
fn build_id(path: &Path) -> Option<String> {
    use object::Object as _;
    let (file, _) = crate::digest::open_regular(path).ok()?;
    let cache = object::read::ReadCache::new(file);
    let elf = object::read::File::parse(&cache).ok()?;
    let id = elf.build_id().ok()??;
    (!id.is_empty()).then(|| id.iter().map(|b| format!("{b:02x}")).collect())
}

/// The table or aggregate a partition file (`tables/<t>/run_id=…/…`, relative to the pipeline
/// root) belongs to.
pub(crate) fn table_of(file: &str) -> Option<&str> {
    file.split('/').nth(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elf_executable_has_its_build_id_and_other_files_none() {
        let exe = std::env::current_exe().unwrap();
        let id = build_id(&exe).expect("this test binary was linked with a build id");
        assert!(
            id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("not-elf");
        std::fs::write(&text, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(build_id(&text), None);
        // Cut inside its headers: not an executable to be identified by.
        let cut = dir.path().join("cut");
        std::fs::write(&cut, &std::fs::read(&exe).unwrap()[..40]).unwrap();
        assert_eq!(build_id(&cut), None);
    }
}
