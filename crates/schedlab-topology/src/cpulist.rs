//! The kernel's cpulist format (`0,2-3`), as in `online`, `shared_cpu_list` or PMU `cpus` files.

use crate::TopologyError;

/// The largest CPU number schedlab accepts anywhere (a pipeline's `cpus:`, a sysfs list, a
/// trace's CPU fields). No kernel is built for more CPUs (`NR_CPUS` is at most 8192, x86-64's
/// `MAXSMP`), and the cap keeps a typo like `0-4000000000`, or a damaged trace's CPU number,
/// from allocating gigabytes.
pub const LAST_CPU: u32 = 8191;

/// Parses a kernel CPU list such as `"0,2-3"` into sorted, distinct CPU numbers.
///
/// Surrounding whitespace and an empty list (the kernel writes an empty line for an empty mask)
/// are accepted. The kernel's rarely used stride form (`0-7:2/4`) is not: no sysfs file that
/// schedlab reads prints it.
///
/// ```
/// use schedlab_topology::parse_cpu_list;
/// assert_eq!(parse_cpu_list("0,2-3\n").unwrap(), vec![0, 2, 3]);
/// ```
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, TopologyError> {
    let err = |problem: String| TopologyError::CpuList {
        input: s.to_owned(),
        problem,
    };
    let mut cpus = Vec::new();
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return Ok(cpus);
    }
    for item in trimmed.split(',') {
        let item = item.trim();
        let number = |t: &str| match t.trim().parse::<u32>() {
            Ok(n) if n <= LAST_CPU => Ok(n),
            Ok(n) => Err(err(format!(
                "CPU {n} is above the largest possible, {LAST_CPU}"
            ))),
            Err(_) => Err(err(format!("{t:?} is not a CPU number"))),
        };
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if lo > hi {
                    return Err(err(format!("range {item:?} runs backwards")));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(number(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPU numbers the way the kernel does: sorted, runs of two or more as `a-b`.
///
/// The input may be unsorted or hold duplicates; `parse_cpu_list(&format_cpu_list(x))` gives
/// back `x` sorted and deduplicated.
///
/// ```
/// use schedlab_topology::format_cpu_list;
/// assert_eq!(format_cpu_list(&[3, 0, 2, 5, 6, 7]), "0,2-3,5-7");
/// ```
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for cpu in sorted {
        run = match run {
            Some((start, end)) if end.checked_add(1) == Some(cpu) => Some((start, cpu)),
            Some(done) => {
                parts.push(format_run(done));
                Some((cpu, cpu))
            }
            None => Some((cpu, cpu)),
        };
    }
    parts.extend(run.map(format_run));
    parts.join(",")
}

fn format_run((start, end): (u32, u32)) -> String {
    if start == end {
        start.to_string()
    } else {
        format!("{start}-{end}")
    }
}
