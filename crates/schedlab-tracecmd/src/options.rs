//! trace-cmd's options: what the recording knew besides the events (the machine, the trace
//! clock, the CPU count, the kernel's ring-buffer statistics) and, in a v7 file, where every
//! section and every buffer's CPU data is (see trace-cmd.dat.v6(5) and .v7(5)).

use crate::bytes::{Cursor, ReadError};

const DONE: u16 = 0;
const CPUSTAT: u16 = 2;
const BUFFER: u16 = 3;
const TRACECLOCK: u16 = 4;
const UNAME: u16 = 5;
const DATE: u16 = 1;
const OFFSET: u16 = 7;
const CPUCOUNT: u16 = 8;
const VERSION: u16 = 9;
const TSC2NSEC: u16 = 14;
/// The v7 sections an option points at: HEADER_INFO, FTRACE_EVENTS, EVENT_FORMATS, KALLSYMS,
/// PRINTK, CMDLINES.
const SECTIONS: std::ops::RangeInclusive<u16> = 16..=21;
const BUFFER_TEXT: u16 = 22;

/// Options of the two file versions, which differ in how the list ends and in what a BUFFER
/// option holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V6,
    V7,
}

/// One ring buffer's statistics from the kernel (`per_cpu/cpuN/stats`) when trace-cmd read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CpuStat {
    /// The instance (`""`: the top buffer).
    pub buffer: String,
    pub cpu: i32,
    /// Events overwritten before they were read (overwrite mode: the oldest events are lost).
    pub overrun: u64,
    /// Events lost because a commit overran the buffer (an interrupt storm inside a write).
    pub commit_overrun: u64,
    /// Events dropped because the buffer was full (non-overwrite mode).
    pub dropped: u64,
}

/// A BUFFER option: one instance's CPU data (v7 says where each CPU's is; v6 only where the
/// instance's own table of them starts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BufferOption {
    /// `""` for the top buffer.
    pub name: String,
    /// v7: where the buffer's section is; v6: where its `flyrecord` table is.
    pub offset: u64,
    pub clock: Option<String>,
    pub page_size: Option<u32>,
    /// v7: (cpu, offset, size) of each CPU's data.
    pub cpus: Vec<(u32, u64, u64)>,
    /// Where the option is, for errors.
    pub at: u64,
    /// A latency buffer (text, no events).
    pub text: bool,
}

/// What the options of a file say.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub uname: Option<String>,
    /// trace-cmd's version.
    pub version: Option<String>,
    pub cpu_count: Option<u32>,
    /// The clock the top buffer's times are on (the bracketed name of `trace_clock`).
    pub trace_clock: Option<String>,
    /// A TRACECLOCK option is present: in a v6 file the clock's text follows each CPU table.
    pub has_trace_clock: bool,
    pub cpu_stats: Vec<CpuStat>,
    /// TSC2NSEC: (mult, shift, offset) converting x86-tsc times to nanoseconds.
    pub tsc2nsec: Option<(u32, u32, u64)>,
    /// DATE or OFFSET: trace-cmd report shifts times by these; schedlab keeps the clock's own.
    pub time_shift: bool,
    pub buffers: Vec<BufferOption>,
    /// v7: (section id, offset) of every section an option points at.
    pub sections: Vec<(u16, u64)>,
    /// v7: where the next options section is (0: none).
    pub next: u64,
    /// CPUSTAT options name their buffer by a `Buffer: NAME` line before its CPUs.
    stat_buffer: String,
}

impl Options {
    /// Reads an option list from `c` into these options: v6's ends with option id 0, v7's with
    /// a DONE option holding the next options section's offset.
    pub(crate) fn read(&mut self, c: &mut Cursor, version: Version) -> Result<(), ReadError> {
        loop {
            let at = c.offset();
            let id = c.u16("an option's id")?;
            if version == Version::V6 && id == DONE {
                return Ok(());
            }
            let size = c.u32("an option's size")?;
            let mut d = c.take_cursor(size as usize, "an option's data")?;
            let data = d.rest();
            let text = || {
                let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                String::from_utf8_lossy(&data[..end]).trim().to_string()
            };
            match id {
                DONE => {
                    self.next = d.u64("the DONE option's next offset")?;
                    return Ok(());
                }
                CPUSTAT => self.cpu_stat(&text()),
                BUFFER | BUFFER_TEXT => {
                    let mut b = BufferOption {
                        offset: d.u64("a BUFFER option's offset")?,
                        name: d.cstr("a BUFFER option's name")?,
                        at,
                        text: id == BUFFER_TEXT,
                        ..BufferOption::default()
                    };
                    if version == Version::V7 {
                        b.clock = Some(d.cstr("a BUFFER option's clock")?);
                        if id == BUFFER {
                            b.page_size = Some(d.u32("a BUFFER option's page size")?);
                            let cpus = d.u32("a BUFFER option's CPU count")?;
                            for _ in 0..cpus {
                                let cpu = d.u32("a BUFFER option's CPU")?;
                                let offset = d.u64("a BUFFER option's CPU data offset")?;
                                let size = d.u64("a BUFFER option's CPU data size")?;
                                b.cpus.push((cpu, offset, size));
                            }
                        }
                    }
                    self.buffers.push(b);
                }
                TRACECLOCK => {
                    self.has_trace_clock = true;
                    self.trace_clock = self.trace_clock.take().or_else(|| bracketed(&text()));
                }
                UNAME => self.uname = Some(text()),
                VERSION => self.version = Some(text()),
                CPUCOUNT => self.cpu_count = Some(d.u32("the CPUCOUNT option")?),
                DATE | OFFSET => self.time_shift = true,
                TSC2NSEC => {
                    let mult = d.u32("TSC2NSEC's multiplier")?;
                    let shift = d.u32("TSC2NSEC's shift")?;
                    let offset = d.u64("TSC2NSEC's offset")?;
                    self.tsc2nsec = Some((mult, shift, offset));
                }
                id if SECTIONS.contains(&id) => {
                    self.sections
                        .push((id, d.u64("a section option's offset")?));
                }
                // Hooks, process maps, trace ids, guests, time shifts of guests: nothing the
                // sched tables use.
                _ => {}
            }
        }
    }

    /// One CPUSTAT option: `CPU: N` and the kernel's counters, or `Buffer: NAME` starting the
    /// statistics of an instance.
    fn cpu_stat(&mut self, text: &str) {
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(key))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        if let Some(name) = text.lines().find_map(|l| l.trim().strip_prefix("Buffer:")) {
            self.stat_buffer = name.trim().to_string();
        }
        let Some(cpu) = value("CPU:").and_then(|c| i32::try_from(c).ok()) else {
            return;
        };
        self.cpu_stats.push(CpuStat {
            buffer: self.stat_buffer.clone(),
            cpu,
            overrun: value("overrun:").unwrap_or(0),
            commit_overrun: value("commit overrun:").unwrap_or(0),
            dropped: value("dropped events:").unwrap_or(0),
        });
    }
}

/// The clock in force in a `trace_clock` file's text: the one in brackets
/// (`local global [mono] boot` gives `mono`).
pub(crate) fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = start + text[start..].find(']')?;
    let name = text[start + 1..end].trim();
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::Origin;

    fn option(id: u16, data: &[u8]) -> Vec<u8> {
        let mut out = id.to_le_bytes().to_vec();
        out.extend((data.len() as u32).to_le_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn the_clock_in_force_is_the_bracketed_one() {
        let text = "local global counter uptime perf [mono] mono_raw boot tai x86-tsc\n";
        assert_eq!(bracketed(text).as_deref(), Some("mono"));
        assert_eq!(bracketed("[local] global").as_deref(), Some("local"));
        assert_eq!(bracketed("local global"), None);
        assert_eq!(bracketed("[] ["), None);
    }

    #[test]
    fn cpu_statistics_are_filed_under_their_buffer() {
        let mut bytes = Vec::new();
        let stat = |cpu: u32, overrun: u32| {
            format!(
                "CPU: {cpu}\nentries: 0\noverrun: {overrun}\ncommit overrun: 0\nbytes: 0\ndropped events: 2\n\0"
            )
        };
        bytes.extend(option(CPUSTAT, stat(0, 5).as_bytes()));
        bytes.extend(option(CPUSTAT, b"\nBuffer: inst\n\n\0"));
        bytes.extend(option(CPUSTAT, stat(1, 7).as_bytes()));
        bytes.extend(option(CPUCOUNT, &4u32.to_le_bytes()));
        bytes.extend(option(UNAME, b"Linux vm 6.18 x86_64\0"));
        bytes.extend(0u16.to_le_bytes());
        let mut o = Options::default();
        o.read(&mut Cursor::new(&bytes, 0, Origin::File(0)), Version::V6)
            .unwrap();
        let got: Vec<(&str, i32, u64, u64)> = (o.cpu_stats.iter())
            .map(|s| (s.buffer.as_str(), s.cpu, s.overrun, s.dropped))
            .collect();
        assert_eq!(got, [("", 0, 5, 2), ("inst", 1, 7, 2)]);
        assert_eq!(o.cpu_count, Some(4));
        assert_eq!(o.uname.as_deref(), Some("Linux vm 6.18 x86_64"));
    }

    #[test]
    fn a_v7_buffer_option_lists_each_cpus_data() {
        let mut data = 4096u64.to_le_bytes().to_vec();
        data.extend(b"inst\0mono\0");
        data.extend(4096u32.to_le_bytes());
        data.extend(2u32.to_le_bytes());
        for (cpu, off, size) in [(0u32, 8192u64, 100u64), (3, 12288, 50)] {
            data.extend(cpu.to_le_bytes());
            data.extend(off.to_le_bytes());
            data.extend(size.to_le_bytes());
        }
        let mut bytes = option(BUFFER, &data);
        bytes.extend(option(DONE, &77u64.to_le_bytes()));
        let mut o = Options::default();
        o.read(&mut Cursor::new(&bytes, 0, Origin::File(0)), Version::V7)
            .unwrap();
        let b = &o.buffers[0];
        assert_eq!(
            (b.name.as_str(), b.clock.as_deref()),
            ("inst", Some("mono"))
        );
        assert_eq!(b.cpus, [(0, 8192, 100), (3, 12288, 50)]);
        assert_eq!(o.next, 77);
        // Cut inside the CPU list: an error, not a panic.
        let mut o = Options::default();
        let cut = &bytes[..20];
        assert!(
            o.read(&mut Cursor::new(cut, 0, Origin::File(0)), Version::V7)
                .is_err()
        );
    }
}
