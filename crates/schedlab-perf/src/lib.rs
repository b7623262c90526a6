//! A native reader for perf.data files written by `perf sched record` (work in progress: issue 4).
