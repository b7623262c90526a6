//! Which threads of a trace belong to a workload.
//!
//! A collected run knows its workloads' process ids (the runner started them), and a thread
//! belongs to a workload when it descends from one: [`Select::Tree`]. A recording made by hand
//! knows none of that, so its user names each workload as the seed articles' scripts would find
//! it: by command name (`comm:openssl`, what `perf sched timehist` prints), by one process
//! (`pid:4456`, its threads only), or by a process and everything it forked (`tree:4400`). The
//! selector is written in a pipeline's `import:` section and on `schedlab import`'s command line,
//! and recorded in an imported run's manifest (`schedlab_tables::selector` is this module).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kernel keeps 15 bytes of a command name (TASK_COMM_LEN 16 with its NUL): a longer name
/// is compared on those.
pub const COMM_BYTES: usize = 15;

/// How a workload's threads are found in a trace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Select {
    /// Threads whose command name is this one (the kernel's first 15 bytes), or starts with it
    /// when it ends in `*` (`comm:stress-ng*` also takes `stress-ng-cpu`). A thread forked by a
    /// selected one belongs to the workload too, whatever it renames itself to.
    Comm(String),
    /// The threads of this one process.
    Pid(i32),
    /// This process, its threads and every process forked from them while recording.
    Tree(i32),
}

impl Select {
    /// Whether a thread of command name `comm` (bytes, NUL-padded or not) is selected by name.
    pub fn matches_comm(&self, comm: &[u8]) -> bool {
        let Select::Comm(wanted) = self else {
            return false;
        };
        let end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
        let comm = &comm[..end.min(COMM_BYTES)];
        match wanted.strip_suffix('*') {
            Some(prefix) => {
                let prefix = &prefix.as_bytes()[..prefix.len().min(COMM_BYTES)];
                comm.starts_with(prefix)
            }
            None => comm == &wanted.as_bytes()[..wanted.len().min(COMM_BYTES)],
        }
    }

    /// Whether the selection reaches processes forked from a selected thread.
    pub fn follows_forks(&self) -> bool {
        !matches!(self, Select::Pid(_))
    }
}

impl fmt::Display for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Select::Comm(name) => write!(f, "comm:{name}"),
            Select::Pid(pid) => write!(f, "pid:{pid}"),
            Select::Tree(pid) => write!(f, "tree:{pid}"),
        }
    }
}

/// Why a selector's text is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a workload selector: {problem} (expected comm:NAME, pid:PID or tree:PID)")]
pub struct SelectError {
    pub text: String,
    pub problem: String,
}

impl FromStr for Select {
    type Err = SelectError;

    fn from_str(text: &str) -> Result<Select, SelectError> {
        let error = |problem: &str| SelectError {
            text: text.to_owned(),
            problem: problem.to_owned(),
        };
        let (kind, value) = text.split_once(':').ok_or_else(|| error("no `kind:`"))?;
        let pid = || match value.trim().parse::<i32>() {
            Ok(pid) if pid > 0 => Ok(pid),
            _ => Err(error("a process id is a whole number above 0")),
        };
        match kind.trim() {
            "comm" if value.is_empty() || value == "*" => Err(error("the name is empty")),
            "comm" => Ok(Select::Comm(value.to_owned())),
            "pid" => pid().map(Select::Pid),
            "tree" => pid().map(Select::Tree),
            _ => Err(error(&format!("unknown kind `{kind}`"))),
        }
    }
}

impl Serialize for Select {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Select {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Select, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A workload of a run and how its threads are found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSelector {
    pub workload: String,
    pub select: Select,
}

impl WorkloadSelector {
    /// The runner's processes of a collected run: each one's process tree.
    pub fn tree(pid: i32, workload: impl Into<String>) -> WorkloadSelector {
        WorkloadSelector {
            workload: workload.into(),
            select: Select::Tree(pid),
        }
    }
}

/// `NAME=comm:openssl`, as `--workload` takes it.
impl FromStr for WorkloadSelector {
    type Err = SelectError;

    fn from_str(text: &str) -> Result<WorkloadSelector, SelectError> {
        let (workload, select) = text.split_once('=').ok_or_else(|| SelectError {
            text: text.to_owned(),
            problem: "no `NAME=` before it (e.g. `openssl=comm:openssl`)".into(),
        })?;
        if workload.trim().is_empty() {
            return Err(SelectError {
                text: text.to_owned(),
                problem: "the workload name is empty".into(),
            });
        }
        Ok(WorkloadSelector {
            workload: workload.trim().to_owned(),
            select: select.parse()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selector_reads_back_as_it_prints() {
        for text in ["comm:openssl", "comm:stress-ng*", "pid:4456", "tree:4400"] {
            let select: Select = text.parse().unwrap();
            assert_eq!(select.to_string(), text);
        }
        let named: WorkloadSelector = "bg=comm:stress-ng*".parse().unwrap();
        assert_eq!(named.workload, "bg");
        assert_eq!(named.select, Select::Comm("stress-ng*".into()));
    }

    #[test]
    fn bad_selectors_say_what_is_wrong() {
        for (text, problem) in [
            ("openssl", "no `kind:`"),
            ("pid:0", "above 0"),
            ("pid:x", "whole number"),
            ("cmd:x", "unknown kind `cmd`"),
            ("comm:", "empty"),
        ] {
            let err = text.parse::<Select>().unwrap_err().to_string();
            assert!(err.contains(problem), "{text}: {err}");
        }
        let err = "comm:x"
            .parse::<WorkloadSelector>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("NAME="), "{err}");
    }

    #[test]
    fn comm_compares_the_kernels_fifteen_bytes_or_a_prefix() {
        let exact = Select::Comm("openssl".into());
        assert!(exact.matches_comm(b"openssl\0\0\0\0\0\0\0\0\0"));
        assert!(!exact.matches_comm(b"openssl-x"));
        let long = Select::Comm("a_very_long_program_name".into());
        assert!(long.matches_comm(b"a_very_long_pro"));
        let prefix = Select::Comm("stress-ng*".into());
        assert!(prefix.matches_comm(b"stress-ng-cpu\0\0\0"));
        assert!(prefix.matches_comm(b"stress-ng"));
        assert!(!prefix.matches_comm(b"stress"));
        assert!(!Select::Pid(1).matches_comm(b"openssl"));
    }
}
