//! Fixture plumbing: unpack the real captures into a temporary directory.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// The shared fixtures' `sysfs` captures (beside the repository), or `None` once the running test
/// is reported skipped because they are not there.
pub fn captures_dir() -> Option<PathBuf> {
    let dir = schedlab_testkit::shared_fixtures(&schedlab_testkit::test_name(), "sysfs")?;
    assert!(
        dir.join("SOURCES.md").is_file(),
        "{} has no SOURCES.md",
        dir.display()
    );
    Some(dir)
}

/// An unpacked capture; the directory is removed when this is dropped.
pub struct Capture {
    dir: TempDir,
}

impl Capture {
    /// Unpacks `name` (a .tar.bz2, .tar.gz or .tar.xz under the captures folder). A pepc set's
    /// `sys/inlinefiles.txt` is also expanded into a tree under its `sys/`.
    /// `None` once the running test is reported skipped because the captures are not there.
    pub fn unpack(name: &str) -> Option<Capture> {
        let path = captures_dir()?.join(name);
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut tar_bytes = Vec::new();
        if name.ends_with(".tar.bz2") {
            bzip2::read::BzDecoder::new(bytes.as_slice()).read_to_end(&mut tar_bytes)
        } else if name.ends_with(".tar.gz") {
            flate2::read::GzDecoder::new(bytes.as_slice()).read_to_end(&mut tar_bytes)
        } else if name.ends_with(".tar.xz") {
            lzma_rs::xz_decompress(&mut bytes.as_slice(), &mut tar_bytes)
                .map(|()| tar_bytes.len())
                .map_err(|e| std::io::Error::other(format!("{e:?}")))
        } else {
            panic!("{name}: unknown archive type")
        }
        .unwrap_or_else(|e| panic!("{name}: cannot decompress: {e}"));
        let dir = TempDir::new().expect("temporary directory");
        tar::Archive::new(tar_bytes.as_slice())
            .unpack(dir.path())
            .unwrap_or_else(|e| panic!("{name}: cannot unpack: {e}"));
        let capture = Capture { dir };
        if let Some(top) = capture.top_with("sys/inlinefiles.txt") {
            expand_inline_files(&top);
        }
        Some(capture)
    }

    /// A path inside the unpacked capture.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn top_with(&self, file: &str) -> Option<PathBuf> {
        fs::read_dir(self.dir.path())
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join(file).is_file())
    }
}

/// Writes each `ro|<path>|<value>` / `rw|<path>|<value>` line of a pepc set as a file
/// `<top><path>` holding `<value>` and a newline, as SOURCES.md describes.
fn expand_inline_files(top: &Path) {
    let list = top.join("sys/inlinefiles.txt");
    let text = fs::read_to_string(&list).expect("inlinefiles.txt");
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut fields = line.splitn(3, '|');
        let (Some(_mode), Some(path), Some(value)) = (fields.next(), fields.next(), fields.next())
        else {
            panic!("{}: malformed line {line:?}", list.display());
        };
        let target = top.join(path.trim_start_matches('/'));
        fs::create_dir_all(target.parent().expect("absolute sysfs path")).expect("mkdir");
        fs::write(&target, format!("{value}\n")).expect("write sysfs file");
    }
}

/// Writes `value` and a newline to `root/relative`, creating directories: for synthetic trees.
pub fn put(root: &Path, relative: &str, value: &str) {
    let target = root.join(relative);
    fs::create_dir_all(target.parent().expect("relative path has a parent")).expect("mkdir");
    fs::write(&target, format!("{value}\n")).expect("write");
}
