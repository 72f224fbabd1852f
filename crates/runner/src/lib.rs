//! servebench-runner

pub mod dataset;
pub mod loadgen;
pub mod metrics;
