//! The Perfetto reader against an independent writer: a real `perf sched record` here, its
//! events printed by `perf script` and written into a .pftrace by Perfetto's own Python protos
//! (`perf_script_to_pftrace.py`); the trace's tables must be those schedlab-perf reads from the
//! perf.data itself. Then that trace cut and damaged: clear errors, or the packets before the
//! damage with `salvage`.

mod bad_input;
mod renames;
mod tree_names;
mod writer;
