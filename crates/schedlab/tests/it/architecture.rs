//! The dependency edges between the workspace's crates are exactly the ones ARCHITECTURE.md
//! lists in its `crate-edges` block, so the document cannot go stale silently: a new edge must be
//! written there (and argued for in review), and a removed one taken out.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

type Edges = BTreeSet<(String, String)>;

#[test]
fn workspace_crates_depend_on_each_other_only_along_the_documented_edges() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc_path = root.join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&doc_path).expect("ARCHITECTURE.md at the workspace root");
    let documented = documented_edges(&doc).unwrap_or_else(|err| panic!("ARCHITECTURE.md:{err}"));
    let actual = dependency_edges(&root);
    let missing: Vec<_> = actual.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&actual).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "the [dependencies] between workspace crates differ from ARCHITECTURE.md's crate-edges \
         block\n  in Cargo.toml, not documented: {missing:?}\n  documented, not in Cargo.toml: \
         {stale:?}"
    );
}

/// The `a -> b` lines of the fenced block tagged `crate-edges`; an error is `line: message`.
fn documented_edges(doc: &str) -> Result<Edges, String> {
    let mut lines = doc.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, line)| line.trim() == "```crate-edges")
        .ok_or("no ```crate-edges block")?;
    let mut edges = Edges::new();
    for (index, line) in lines {
        let line = line.trim();
        if line == "```" {
            return Ok(edges);
        }
        if line.is_empty() {
            continue;
        }
        let (from, to) = line
            .split_once("->")
            .ok_or_else(|| format!("{}: `{line}` is not `crate -> crate`", index + 1))?;
        edges.insert((from.trim().to_owned(), to.trim().to_owned()));
    }
    Err("the crate-edges block is not closed".into())
}

/// The normal (not dev, not build) dependencies of each workspace crate on another, as cargo
/// reads the Cargo.toml files.
fn dependency_edges(root: &Path) -> Edges {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<&str> = packages
        .iter()
        .filter_map(|package| package["name"].as_str())
        .collect();
    assert!(
        members.contains("schedlab-tables"),
        "not the workspace: {members:?}"
    );
    let mut edges = Edges::new();
    for package in packages {
        let from = package["name"].as_str().expect("package name");
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let to = dependency["name"].as_str().expect("dependency name");
            if dependency["kind"].is_null() && members.contains(to) {
                edges.insert((from.to_owned(), to.to_owned()));
            }
        }
    }
    edges
}
