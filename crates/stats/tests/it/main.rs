//! The integration tests of servebench-stats, in one test binary (one link, one process).

mod common;

mod bootstrap;
mod changepoint;
mod flags_implausible;
mod flags_rules;
mod flags_sweep;
mod flags_trials;
mod properties;
mod reference_outputs;
mod reference_vectors;
mod sequential;
mod sequential_verdicts;
