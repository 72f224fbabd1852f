//! servebench-runner

pub mod dataset;
pub mod gpu;
pub mod loadgen;
pub mod metrics;
pub mod server;
