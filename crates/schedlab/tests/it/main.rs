//! schedlab's integration tests: the real binary run on real recordings and pipelines, one
//! module per command or concern, linked once as one test binary.

mod util;

mod architecture;
mod browser;
mod check;
mod cli;
mod collect;
mod compare;
mod cpu_share;
mod endings;
mod export;
mod gather;
mod golden;
mod import;
mod incremental;
mod interrupt;
mod parse;
mod per_class;
mod pipelines;
mod report;
mod seed_figures;
mod short_forms;
mod tracecmd;
mod validate;
mod why_here;
