//! Every parser against every real fixture: each test is a file and the values read from it.

mod detect;
mod openssl;
mod perf_stat;
mod stress_ng;
mod time;
mod timehist;
mod turbostat;
mod util;
