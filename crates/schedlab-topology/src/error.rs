//! The one error type of this crate.

use std::path::PathBuf;

/// Why topology detection, a declared override or a CPU list failed.
///
/// Every message names the file or input at fault, says what is wrong, and ends with a hint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// The root holds neither `devices/system/cpu` nor `sys/devices/system/cpu`.
    #[error(
        "{path}: no devices/system/cpu here (hint: pass the sysfs root, \"/sys\", or a capture \
         root that holds sys/)"
    )]
    NoCpuDir { path: PathBuf },

    /// `devices/system/cpu` holds no `cpuN` directory.
    #[error("{path}: no cpuN directory (hint: is this a complete sysfs capture?)")]
    NoCpus { path: PathBuf },

    /// A file or directory exists but could not be read.
    #[error("{path}: cannot read: {source} (hint: run as a user that may read sysfs)")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A sysfs file holds something that is not what the kernel writes there.
    #[error(
        "{path}: expected {expected}, found {found:?} (hint: is the capture truncated or edited?)"
    )]
    Parse {
        path: PathBuf,
        expected: &'static str,
        found: String,
    },

    /// A CPU list is not in the kernel's cpulist format.
    #[error("CPU list {input:?}: {problem} (hint: use the kernel's format, e.g. \"0,2-3\")")]
    CpuList { input: String, problem: String },

    /// A declared class names a CPU the machine does not have.
    #[error(
        "declared class {class:?} names CPU {cpu}, which this machine does not have (hint: its \
         CPUs are {present})"
    )]
    UnknownCpu {
        class: String,
        cpu: u32,
        present: String,
    },

    /// Two declared classes name the same CPU.
    #[error("CPU {cpu} is declared both {first:?} and {second:?} (hint: give each CPU one class)")]
    DuplicateCpu {
        cpu: u32,
        first: String,
        second: String,
    },
}
