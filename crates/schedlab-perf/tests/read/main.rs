//! Integration tests of the perf.data reader: agreement with perf's own output on real
//! recordings, lost events and the window, attribution, priorities, and bad input.

mod agreement;
mod attribution;
mod bad_input;
mod compact;
mod layouts;
mod prio;
mod quality;
mod runtime;
mod salvage;
mod trace;
mod util;
