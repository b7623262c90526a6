//! Facts about the machine that make runs comparable: kernel, CPU model, topology, governor.

use std::path::Path;

use schedlab_topology::CpuInfo;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub kernel_cmdline: String,
    pub cpu_model: String,
    pub nproc: usize,
    /// cpufreq governor of CPU 0, where cpufreq exists.
    pub governor: Option<String>,
    /// CPUs and their detected classes (the parse stage applies declared classes on top).
    pub cpus: Vec<CpuInfo>,
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_owned())
}

pub fn facts() -> HostFacts {
    let uname = rustix::system::uname();
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_default();
    let cpus = schedlab_topology::detect(Path::new("/sys")).unwrap_or_else(|err| {
        tracing::warn!("CPU topology not detected: {err}");
        Vec::new()
    });
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        kernel_cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
        cpu_model,
        nproc: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        cpus,
    }
}
