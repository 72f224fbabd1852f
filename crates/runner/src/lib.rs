//! servebench-runner: everything that touches processes and the network — server lifecycle,
//! the streaming load generator, datasets, trials in plan order, provenance and result files.
//!
//! * [`run::run`] carries out a spec (the `servebench run` command).
//! * [`loadgen::run_trial`] drives one trial; [`metrics`] derives every metric from raw
//!   per-request records; [`dataset`] builds prompts.
//! * [`server`] launches, verifies and stops servers; [`gpu`] reads `nvidia-smi`.
//! * [`result`] is the result file and its sidecar; [`provenance`] what is recorded with it.

pub mod dataset;
pub mod gpu;
pub mod loadgen;
pub mod provenance;
pub mod run;
pub mod server;
