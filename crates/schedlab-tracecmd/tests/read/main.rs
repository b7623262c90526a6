//! The trace.dat reader against `trace-cmd report` on the same files: recordings made here by
//! trace-cmd (v7 with zstd, converted to v6 and to uncompressed v7 by `trace-cmd convert`), and
//! two v6 traces of a 6-CPU Arm big.LITTLE board from the shared fixtures.

mod agreement;
mod attribution;
mod bad_input;
mod lisa;
mod losses;
mod record;
mod report;
