//! servebench-runner: measuring. Everything that touches processes and the network —
//! server lifecycle, the streaming load generator, datasets, GPU detection, provenance and
//! trials in plan order — writing servebench-result's result file after every trial.
//!
//! It measures and does not judge: it must not depend on servebench-compare or
//! servebench-report (nor on plotters). A sequential run (`trials.until_decided`) asks a
//! [`run::Sequencer`], passed in [`run::RunOptions`], which cells stay open after each round;
//! the `servebench` binary passes servebench-compare's design.
//!
//! * [`run::run`] carries out a spec (the `servebench run` command): server starts, verify,
//!   trials in `servebench plan`'s order, rounds of a sequential run, `--resume`.
//! * [`loadgen::run_trial`] drives one trial and returns its raw request records
//!   (servebench-result's `record` types) and the summary derived from them; [`dataset`]
//!   builds prompts of exact lengths.
//! * [`engine`] tells the engine behind a target apart, uses its profile for everything
//!   engine-specific, and checks the guarantees a spec relies on (`servebench probe`).
//! * [`server`] launches, verifies and stops servers and finds orphans; [`gpu`] runs and
//!   parses `nvidia-smi`; [`provenance`] collects the host, repository, commands and file
//!   hashes recorded with a run; [`tls`] makes the rustls configuration of `https://` targets.

pub mod dataset;
pub mod engine;
pub mod gpu;
pub mod hostprobe;
pub mod loadgen;
mod net;
pub mod provenance;
pub mod reference;
pub mod run;
pub mod server;
pub mod telemetry;
pub mod tls;
