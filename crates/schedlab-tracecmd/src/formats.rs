//! The file's event formats bound to what the reader does with each event: the sched
//! tracepoints and task_rename go to perf's state machine, cpu_frequency and cpu_idle to the
//! per-CPU table.

use std::collections::HashMap;

use schedlab_perf::feed::{Field, Format, TaskStates, Tracepoint};

/// What an event is to the reader.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Sched(Tracepoint),
    /// sched:sched_stat_runtime: the kernel's accounting of `runtime` ns that thread `pid`
    /// (named `comm`) ran since its last update, summed rather than fed as an event.
    Runtime {
        pid: Field,
        runtime: Field,
        comm: Field,
    },
    /// power:cpu_frequency: `state` is the new frequency (kHz) of CPU `cpu_id`.
    Frequency {
        state: Field,
        cpu_id: Field,
    },
    /// power:cpu_idle: `state` is the idle state CPU `cpu_id` enters.
    Idle {
        state: Field,
        cpu_id: Field,
    },
}

/// The events of a file, by the id their payload's `common_type` holds.
pub(crate) struct Events {
    kinds: HashMap<u64, Kind>,
    /// `system:name` of every format, for messages.
    names: HashMap<u64, String>,
    common_type: Field,
    pub common_pid: Field,
    /// The `prev_state` letters of the recording kernel.
    pub task_states: TaskStates,
}

impl Events {
    /// Binds `formats`; `Err` names a format that lacks a field the reader needs.
    pub(crate) fn bind(formats: &[Format]) -> Result<Events, String> {
        let common = |name: &str| {
            (formats.iter())
                .find_map(|f| f.field(name))
                .ok_or_else(|| format!("no event format has the common field `{name}`"))
        };
        let mut events = Events {
            kinds: HashMap::new(),
            names: HashMap::new(),
            common_type: common("common_type")?,
            common_pid: common("common_pid")?,
            task_states: TaskStates::since_4_14(),
        };
        for f in formats {
            events
                .names
                .insert(f.id, format!("{}:{}", f.system, f.name));
            let missing = |field| {
                format!(
                    "the format of {}:{} has no usable field `{field}`",
                    f.system, f.name
                )
            };
            let kind = match (f.system.as_str(), f.name.as_str()) {
                ("sched", "sched_stat_runtime") => {
                    let need = |n| f.field(n).ok_or_else(|| missing(n));
                    let (pid, runtime, comm) = (need("pid")?, need("runtime")?, need("comm")?);
                    Some(Kind::Runtime { pid, runtime, comm })
                }
                ("sched", _) | ("task", "task_rename") => {
                    Tracepoint::bind(f).map_err(missing)?.map(Kind::Sched)
                }
                ("power", "cpu_frequency" | "cpu_idle") => {
                    let need = |n| f.field(n).ok_or_else(|| missing(n));
                    let (state, cpu_id) = (need("state")?, need("cpu_id")?);
                    Some(if f.name == "cpu_idle" {
                        Kind::Idle { state, cpu_id }
                    } else {
                        Kind::Frequency { state, cpu_id }
                    })
                }
                _ => None,
            };
            if let Some(kind) = kind {
                events.kinds.insert(f.id, kind);
            }
            if (f.system.as_str(), f.name.as_str()) == ("sched", "sched_switch")
                && let Some(states) = TaskStates::from_print_fmt(&f.print_fmt)
            {
                events.task_states = states;
            }
        }
        Ok(events)
    }

    /// The id of the event whose payload this is.
    pub(crate) fn id(&self, payload: &[u8]) -> Option<u64> {
        self.common_type.int(payload).map(|id| id as u64)
    }

    pub(crate) fn kind(&self, id: u64) -> Option<&Kind> {
        self.kinds.get(&id)
    }

    /// `system:name` of event `id`, or its number when the file has no format for it.
    pub(crate) fn name(&self, id: u64) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("event id {id}"))
    }
}
