//! Facts about the machine that make runs comparable: kernel, CPU model, topology, governor.

use std::path::Path;

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
    pub cpus: Vec<CpuFact>,
}

/// One CPU as detected at collection time (the parse stage applies declared classes on top).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuFact {
    pub cpu: u32,
    pub core_id: Option<i32>,
    pub package_id: Option<i32>,
    pub class: String,
    pub class_source: String,
    pub capacity: Option<i64>,
    pub max_khz: Option<i64>,
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|t| t.trim().to_owned())
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
    let cpus = match schedlab_topology::detect(Path::new("/sys")) {
        Ok(cpus) => cpus
            .into_iter()
            .map(|c| CpuFact {
                cpu: c.cpu,
                core_id: c.core_id,
                package_id: c.package_id,
                class: c.class,
                class_source: c.class_source,
                capacity: c.capacity,
                max_khz: c.max_khz,
            })
            .collect(),
        Err(err) => {
            tracing::warn!("CPU topology not detected: {err}");
            Vec::new()
        }
    };
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        kernel_cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
        cpu_model,
        nproc: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        cpus,
    }
}
