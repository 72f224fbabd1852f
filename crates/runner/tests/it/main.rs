//! The integration tests of servebench-runner, in one test binary (one link, one process).

mod loadgen_support;
mod server_support;

mod dataset_llamacpp_tokenize;
mod engine_context_cut;
mod engine_facts;
mod engine_modes_sim;
mod engine_streams;
mod engine_wire;
mod loadgen_concurrency;
mod loadgen_edge_cases;
mod loadgen_headers;
mod loadgen_lean;
mod loadgen_receive_stamps;
mod loadgen_schedule;
mod loadgen_sim;
mod loadgen_tls;
mod loadgen_token_events;
mod local_tokenizer;
mod run_sequencer;
mod server_gpu;
mod server_lifecycle;
mod server_orphan;
mod server_redact;
mod server_verify;
