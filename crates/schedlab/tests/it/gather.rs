//! Many machines: runs collected into separate data directories, gathered into one, analysed
//! once; damaged and duplicate runs refused.

use std::path::{Path, PathBuf};

use crate::util::{Finished, Sandbox, read_json};
use schedlab_tables::{RunRow, read_table};

/// Two matrix values, a workload that prints its value: one small raw file per run.
const GRID: &str = "\
name: grid
matrix: { n: [1, 2] }
collect:
  workloads:
    w: { run: [echo, \"${n}\"] }
";

/// Collects `grid.yaml` into the data directory `data` (relative to the sandbox), as the
/// machine labelled `label` would; returns the data directory.
fn collect(sandbox: &Sandbox, data: &str, label: Option<&str>, repeat: u32) -> PathBuf {
    let pipeline = sandbox.write("grid.yaml", &format!("{GRID}repeat: {repeat}\n"));
    let dir = sandbox.path(data);
    let mut args = vec![
        "run",
        pipeline.to_str().unwrap(),
        "--only",
        "collect",
        "--data",
        dir.to_str().unwrap(),
    ];
    if let Some(label) = label {
        args.extend(["--label", label]);
    }
    let done = sandbox.schedlab(&args);
    assert_eq!(done.code, 0, "{}", done.stderr);
    dir
}

fn gather(sandbox: &Sandbox, sources: &[&Path]) -> Finished {
    let mut args = vec!["gather"];
    args.extend(sources.iter().map(|s| s.to_str().unwrap()));
    sandbox.schedlab(&args)
}

/// The names under `dir` (sorted), none if it does not exist.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            (entries.flatten())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The run directories of `grid` in the data directory `data`.
fn run_dirs(data: &Path) -> Vec<PathBuf> {
    let runs = data.join("grid/runs");
    names(&runs).iter().map(|name| runs.join(name)).collect()
}

/// The path of the first non-empty raw file of the run in `run_dir`, as its manifest lists it.
fn first_raw_file(run_dir: &Path) -> PathBuf {
    let manifest = read_json(&run_dir.join("manifest.json"));
    let raw = manifest["raw_files"].as_array().unwrap();
    let file = raw.iter().find(|f| f["size"].as_u64() > Some(0)).unwrap();
    run_dir.join(file["path"].as_str().unwrap())
}

#[test]
fn runs_of_two_machines_are_gathered_and_analysed_together() {
    let sandbox = Sandbox::new();
    let one = collect(&sandbox, "host-one", Some("one"), 1);
    let two = collect(&sandbox, "host-two", Some("two"), 1);
    let collected: Vec<String> = (run_dirs(&one).into_iter())
        .chain(run_dirs(&two))
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(collected.len(), 4, "{collected:?}");

    // The first machine's data directory, and the second's pipeline directory alone.
    let done = gather(&sandbox, &[&one, &two.join("grid")]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(done.stdout.contains("4 run(s) gathered"), "{}", done.stdout);
    let mut expected = collected.clone();
    expected.sort();
    assert_eq!(sandbox.runs("grid"), expected);
    for source in run_dirs(&one).into_iter().chain(run_dirs(&two)) {
        let id = source.file_name().unwrap().to_str().unwrap();
        let copy = sandbox.data("grid", &format!("runs/{id}"));
        assert_eq!(
            std::fs::read(copy.join("manifest.json")).unwrap(),
            std::fs::read(source.join("manifest.json")).unwrap(),
            "the manifest is copied byte for byte"
        );
        let raw = first_raw_file(&source);
        let copied = copy.join(raw.strip_prefix(&source).unwrap());
        assert_eq!(std::fs::read(copied).unwrap(), std::fs::read(&raw).unwrap());
    }

    let analysed = sandbox.schedlab(&["analyze", sandbox.path("grid.yaml").to_str().unwrap()]);
    assert_eq!(analysed.code, 0, "{}", analysed.stderr);
    let rows: Vec<RunRow> = read_table(&sandbox.data("grid", "tables")).unwrap();
    let mut analysed_ids: Vec<String> = rows.iter().map(|r| r.run_id.clone()).collect();
    analysed_ids.sort();
    assert_eq!(analysed_ids, expected, "every gathered run is analysed");
    let mut labels: Vec<String> = rows.iter().filter_map(|r| r.label.clone()).collect();
    labels.sort();
    assert_eq!(labels, ["one", "one", "two", "two"]);

    // Gathering again copies nothing: every run is there already, identical.
    let again = gather(&sandbox, &[&one, &two]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stdout.contains("0 run(s) gathered") && again.stdout.contains("4 skipped"),
        "{}",
        again.stdout
    );
    assert_eq!(
        again.stderr.matches(", identical").count(),
        4,
        "{}",
        again.stderr
    );
    assert_eq!(sandbox.runs("grid"), expected);
}

#[test]
fn damaged_runs_are_refused_whole_and_the_others_gathered() {
    let sandbox = Sandbox::new();
    let source = collect(&sandbox, "host-one", Some("one"), 3);
    let runs = run_dirs(&source);
    assert_eq!(runs.len(), 6, "{runs:?}");

    // A flipped byte (same size), a truncated file, a stray file, an unreadable manifest.
    let flipped = first_raw_file(&runs[0]);
    let mut bytes = std::fs::read(&flipped).unwrap();
    bytes[0] ^= 0x01;
    std::fs::write(&flipped, bytes).unwrap();
    let truncated = first_raw_file(&runs[1]);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&truncated)
        .unwrap();
    let size = file.metadata().unwrap().len();
    file.set_len(size - 1).unwrap();
    let stray = runs[2].join("raw/stray.txt");
    std::fs::write(&stray, "not recorded").unwrap();
    let manifest = runs[3].join("manifest.json");
    std::fs::write(&manifest, "{ \"run_id\": ").unwrap();

    let done = gather(&sandbox, &[&source]);
    assert_eq!(done.code, 2, "{}", done.stderr);
    for (file, what) in [
        (&flipped, "BLAKE3 digest"),
        (
            &truncated,
            &format!("{} bytes, but the manifest says {size}", size - 1),
        ),
        (&stray, "not in its manifest"),
        (&manifest, "not a readable manifest"),
    ] {
        let line = format!("refused {}: ", file.display());
        let refusal = done.stderr.lines().find(|l| l.starts_with(&line));
        assert!(
            refusal.is_some_and(|l| l.contains(what)),
            "`{line}…{what}…` in: {}",
            done.stderr
        );
    }
    assert!(
        done.stdout.contains("2 run(s) gathered") && done.stdout.contains("4 refused"),
        "{}",
        done.stdout
    );
    let intact: Vec<String> = runs[4..]
        .iter()
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names(&sandbox.data("grid", "runs")),
        intact,
        "refused runs leave no directory, partial or complete"
    );
}

#[test]
fn the_same_run_id_from_two_machines_is_refused_as_a_duplicate() {
    let sandbox = Sandbox::new();
    // Two machines without --label: their runs have the same ids.
    let first = collect(&sandbox, "host-one", None, 1);
    let second = collect(&sandbox, "host-two", None, 1);
    let ids = |data: &Path| names(&data.join("grid/runs"));
    assert_eq!(ids(&first), ids(&second));

    let done = gather(&sandbox, &[&first]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let clash = gather(&sandbox, &[&second]);
    assert_eq!(clash.code, 2, "{}", clash.stderr);
    for id in ids(&second) {
        let line = format!("refused {}: ", second.join("grid/runs").join(&id).display());
        assert!(
            clash
                .stderr
                .lines()
                .any(|l| l.starts_with(&line) && l.contains("--label <host>")),
            "{}",
            clash.stderr
        );
        assert_eq!(
            std::fs::read(sandbox.data("grid", &format!("runs/{id}/manifest.json"))).unwrap(),
            std::fs::read(first.join("grid/runs").join(&id).join("manifest.json")).unwrap(),
            "the run gathered first stays"
        );
    }
    assert_eq!(sandbox.runs("grid"), ids(&first), "no partial copy is left");
}

#[test]
fn a_directory_without_runs_is_an_error_before_anything_is_copied() {
    let sandbox = Sandbox::new();
    let source = collect(&sandbox, "host-one", Some("one"), 1);
    let empty = sandbox.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let done = gather(&sandbox, &[&source, &empty]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr.contains(&format!(
            "{}: neither a data directory nor a pipeline directory",
            empty.display()
        )),
        "{}",
        done.stderr
    );
    assert!(!sandbox.path("data").exists(), "nothing was gathered");
}

#[test]
fn pipeline_narrows_a_data_directory_to_one_pipeline() {
    let sandbox = Sandbox::new();
    let source = collect(&sandbox, "host-one", Some("one"), 1);
    let other = sandbox.write(
        "other.yaml",
        "name: other\ncollect:\n  workloads:\n    w: { run: [\"true\"] }\n",
    );
    let done = sandbox.schedlab(&[
        "run",
        other.to_str().unwrap(),
        "--only",
        "collect",
        "--data",
        source.to_str().unwrap(),
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!(names(&source), ["grid", "other"]);

    let only = sandbox.schedlab(&["gather", source.to_str().unwrap(), "--pipeline", "other"]);
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert_eq!(names(&sandbox.path("data")), ["other"]);
    assert_eq!(sandbox.runs("other"), names(&source.join("other/runs")));

    // A pipeline directory of another pipeline than the one asked for is refused.
    let grid = source.join("grid");
    let wrong = sandbox.schedlab(&["gather", grid.to_str().unwrap(), "--pipeline", "other"]);
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    assert!(
        wrong
            .stderr
            .contains("a run of pipeline `grid`, not of `other` (--pipeline)"),
        "{}",
        wrong.stderr
    );
    assert_eq!(names(&sandbox.path("data")), ["other"]);
}

/// A source run whose raw file is a symlink to a file outside it, with the manifest's size and
/// digest set to that file's (so every other check passes), is refused and nothing of it is
/// copied; the same planted link in a run on disk stops `analyze` before it reads the file.
#[test]
fn a_symlink_to_a_file_outside_the_run_is_refused_and_nothing_is_copied() {
    let sandbox = Sandbox::new();
    let outside = sandbox.write("secret.txt", "a file outside every run\n");
    let secret = std::fs::read(&outside).unwrap();
    let source = collect(&sandbox, "host-one", Some("one"), 1);
    let runs = run_dirs(&source);
    let planted = first_raw_file(&runs[0]);
    let relative = planted
        .strip_prefix(&runs[0])
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    std::fs::remove_file(&planted).unwrap();
    std::os::unix::fs::symlink(&outside, &planted).unwrap();
    let manifest_path = runs[0].join("manifest.json");
    let mut manifest = read_json(&manifest_path);
    for raw in manifest["raw_files"].as_array_mut().unwrap() {
        if raw["path"] == relative.as_str() {
            raw["size"] = secret.len().into();
            raw["blake3"] = blake3::hash(&secret).to_hex().to_string().into();
        }
    }
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();

    let done = gather(&sandbox, &[&source]);
    assert_eq!(done.code, 2, "{}", done.stderr);
    let line = format!("refused {}: ", planted.display());
    assert!(
        (done.stderr.lines())
            .any(|l| l.starts_with(&line) && l.contains("a symbolic link, not a regular file")),
        "`{line}… a symbolic link …` in: {}",
        done.stderr
    );
    let copied = sandbox.data("grid", "runs");
    let kept: Vec<String> = names(&copied);
    let refused = runs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        !kept.iter().any(|name| name.starts_with(&refused)),
        "{kept:?}"
    );
    for run in kept {
        for file in names(&copied.join(&run).join("raw")) {
            let bytes = std::fs::read(copied.join(&run).join("raw").join(&file)).unwrap();
            assert_ne!(
                bytes, secret,
                "{run}/raw/{file} holds the outside file's bytes"
            );
        }
    }

    // A run collected here, then given the same planted link: analyze refuses to read it.
    let pipeline = sandbox.path("grid.yaml");
    let data = sandbox.path("host-one");
    let analysed = sandbox.schedlab(&[
        "analyze",
        pipeline.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
    ]);
    assert_ne!(analysed.code, 0, "{}", analysed.stdout);
    assert!(
        analysed.stderr.contains(&planted.display().to_string())
            && analysed.stderr.matches("a symbolic link").count() == 1,
        "the file named, and why, said once: {}",
        analysed.stderr
    );
}
