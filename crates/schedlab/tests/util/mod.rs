//! Running the real schedlab binary on small pipelines written into a temporary directory.

// Each test binary includes this module and uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).expect("make its directory");
        std::fs::write(&path, text).expect("write file");
        path
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_schedlab"));
        command
            .current_dir(self.dir.path())
            .args(args)
            .env("SCHEDLAB_DATA", self.path("data"))
            .env_remove("RUST_LOG");
        command
    }

    pub fn schedlab(&self, args: &[&str]) -> Finished {
        finished(self.command(args).output().expect("schedlab runs"))
    }

    /// The run directories (not partial or interrupted ones) of a pipeline.
    pub fn runs(&self, pipeline: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(&format!("data/{pipeline}/runs")))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    pub fn data(&self, pipeline: &str, relative: &str) -> PathBuf {
        self.path(&format!("data/{pipeline}/{relative}"))
    }
}

pub fn finished(output: Output) -> Finished {
    Finished {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("json file")).expect("valid json")
}
