//! The integration tests of servebench, in one test binary (one link, one process).

mod common;

mod bad_inputs;
mod compare_across;
mod compare_e2e;
mod compare_faults;
mod error_chains;
mod export_cli;
mod fault_host;
mod fault_kill;
mod fault_matrix;
mod fault_wire;
mod from_peer;
mod history_cli;
mod https_e2e;
mod import_e2e;
mod import_trials;
mod llamacpp_e2e;
mod plan_estimate;
mod probe_cli;
mod published_results;
mod report_cli;
mod rerun_e2e;
mod run_e2e;
mod run_overrides;
mod search_e2e;
mod secrets_e2e;
mod sequential_e2e;
mod sim_engines;
mod slurm_e2e;
mod slurm_submit_e2e;
mod spec_commands;
mod summary_e2e;
mod workloads_e2e;
