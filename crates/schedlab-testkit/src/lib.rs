//! What schedlab's tests share about where they run.
//!
//! Two kinds of input feed the tests. Recordings made on the development machine are committed
//! next to the tests that read them, each with the command that made it. Outputs of other
//! machines (turbostat on an Alder Lake, a trace.dat from an Arm board…) were published by
//! others; they are not ours to commit, so they stay in `../shared/fixtures/real/` beside the
//! repository, where `SOURCES.md` says where each came from. A user's clone has no `../shared`:
//! there the tests that need it say they are skipped and why, and the rest pass.
//!
//! A skip must not pass for a test in CI, where every input and tool is installed on purpose: with
//! `SCHEDLAB_REQUIRE_ALL=1` (which `.ci/run` sets) a test that would skip for something CI
//! provides fails instead ([`unavailable`]). A skip for what no CI machine can change (one CPU, a
//! user without the right being tested) stays a skip ([`skip`]).
//!
//! The skip notes go to the process's stderr itself, past the test harness's capture, so that a
//! plain `cargo test` shows them.

use std::io::Write;
use std::path::PathBuf;

/// Set to `1` where every input and tool the tests can use is installed (CI): a test that would
/// skip for one of them fails instead.
pub const REQUIRE_ALL: &str = "SCHEDLAB_REQUIRE_ALL";

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    // This crate is `crates/schedlab-testkit`, two levels below the root.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// Names the shared folder when it is not `../shared` beside the workspace (or, set to a path
/// that does not exist, shows what a user's clone without it runs).
pub const SHARED: &str = "SCHEDLAB_SHARED";

/// `fixtures/real` in the shared folder (`../shared` beside the workspace, or `SCHEDLAB_SHARED`),
/// whether or not it is there.
pub fn shared_fixtures_root() -> PathBuf {
    let shared = std::env::var_os(SHARED)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared"));
    shared.join("fixtures/real")
}

/// `../shared/fixtures/real/<dir>`, the real outputs of other machines of one kind (`turbostat`,
/// `perf-data`, `trace-dat`…), or `None` once `test` has been reported skipped because the folder
/// is not beside the repository ([`unavailable`]: a failure under `SCHEDLAB_REQUIRE_ALL=1`).
pub fn shared_fixtures(test: &str, dir: &str) -> Option<PathBuf> {
    let root = shared_fixtures_root();
    if root.join("SOURCES.md").is_file() {
        let path = root.join(dir);
        assert!(
            path.is_dir(),
            "{test}: {} is missing from {} (SOURCES.md lists what should be there)",
            dir,
            root.display()
        );
        return Some(path);
    }
    unavailable(test, "no ../shared/fixtures/real beside the repository");
    None
}

/// [`shared_fixtures`] in a test that returns `()`: the folder (with no argument, the root of the
/// shared fixtures), or a return from the test once it has been reported skipped. The test's name
/// is the harness's name for the running test.
#[macro_export]
macro_rules! shared_fixtures_or_skip {
    () => {
        $crate::shared_fixtures_or_skip!("")
    };
    ($dir:expr) => {
        match $crate::shared_fixtures(&$crate::test_name(), $dir) {
            Some(path) => path,
            None => return,
        }
    };
}

/// The notebooks' Python (`.venv` at the workspace root, which `just python-env` builds) when it
/// has SciPy and statsmodels, the independent statistics some tests check schedlab's against; or
/// `None` once `test` has been reported skipped ([`unavailable`]: CI builds that environment
/// before the tests).
pub fn scipy_python(test: &str) -> Option<PathBuf> {
    venv_python(test, &["scipy", "statsmodels"])
}

/// The notebooks' Python when it has Perfetto's own protos (the PyPI package `perfetto`), which
/// decode and write Perfetto traces independently of schedlab; or `None` once `test` has been
/// reported skipped.
pub fn perfetto_python(test: &str) -> Option<PathBuf> {
    venv_python(test, &["perfetto.protos.perfetto.trace.perfetto_trace_pb2"])
}

/// The notebooks' Python when it has pyarrow, DuckDB and polars, the Parquet readers that check
/// schedlab's files independently of the `parquet` crate; or `None` once `test` has been
/// reported skipped.
pub fn parquet_python(test: &str) -> Option<PathBuf> {
    venv_python(test, &["pyarrow.parquet", "duckdb", "polars"])
}

/// The notebooks' Python when it imports every one of `modules`, else `None` once `test` has
/// been reported skipped ([`unavailable`]).
fn venv_python(test: &str, modules: &[&str]) -> Option<PathBuf> {
    let python = workspace_root().join(".venv/bin/python");
    let works = std::process::Command::new(&python)
        .args(["-c", &format!("import {}", modules.join(", "))])
        .output()
        .is_ok_and(|out| out.status.success());
    if works {
        return Some(python);
    }
    unavailable(
        test,
        &format!(
            "{} cannot import {} (just python-env installs them from notebooks/requirements.txt)",
            python.display(),
            modules.join(" and ")
        ),
    );
    None
}

/// The name the test harness gave the running test (its thread's name), or `a test` where the
/// harness runs tests on an unnamed thread.
pub fn test_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name != "main" => name.to_string(),
        _ => "a test".to_string(),
    }
}

/// Says that `test` is skipped for something CI provides (a tool, root, the shared fixtures):
/// under `SCHEDLAB_REQUIRE_ALL=1` it fails instead, since a skip there means an install step broke.
pub fn unavailable(test: &str, reason: &str) {
    if std::env::var(REQUIRE_ALL).is_ok_and(|v| v == "1") {
        panic!("{test} cannot run: {reason} ({REQUIRE_ALL}=1: in CI a skip is a failure)");
    }
    skip(test, reason);
}

/// Says that `test` is skipped and why, for a reason no install changes (one CPU, a user that
/// has the right the test is about). Written to the process's stderr itself, past the harness's
/// capture.
pub fn skip(test: &str, reason: &str) {
    // Best effort: a closed stderr loses the note, not the test.
    let _ = std::io::stderr().write_all(format!("SKIPPED {test}: {reason}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Output};

    /// Runs this test binary again on [`probe`] alone, with the shared folder pointed at nothing.
    fn probe_without_shared(require_all: bool) -> Output {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "tests::probe", "--ignored", "--nocapture"])
            .env(super::SHARED, "/nonexistent/schedlab-shared")
            .env_remove(super::REQUIRE_ALL);
        if require_all {
            command.env(super::REQUIRE_ALL, "1");
        }
        command.output().unwrap()
    }

    #[test]
    fn a_missing_shared_folder_is_a_skip_that_names_the_test() {
        let out = probe_without_shared(false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains(
                "SKIPPED tests::probe: no ../shared/fixtures/real beside the repository\n"
            ),
            "{stderr}"
        );
    }

    #[test]
    fn under_require_all_a_missing_shared_folder_fails_the_test() {
        let out = probe_without_shared(true);
        let output = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{output}");
        assert!(output.contains("in CI a skip is a failure"), "{output}");
        assert!(!output.contains("SKIPPED"), "{output}");
    }

    #[test]
    fn the_shared_fixtures_are_found_from_the_workspace_root() {
        let root = super::shared_fixtures_root();
        assert!(root.ends_with("fixtures/real"), "{}", root.display());
        if std::env::var_os(super::SHARED).is_none() {
            assert_eq!(
                root.parent().unwrap().parent().unwrap(),
                super::workspace_root().join("../shared")
            );
        }
    }

    /// Run only by the tests above, in a child process: skips, or fails when it does not.
    #[test]
    #[ignore = "run by the tests above with the shared folder pointed at nothing"]
    fn probe() {
        crate::shared_fixtures_or_skip!();
        panic!("the shared fixtures were found at /nonexistent");
    }
}
