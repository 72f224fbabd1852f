//! The integration tests of servebench-sim, in one test binary (one link, one process).

mod common;

mod api;
mod artefacts;
mod engines_endpoints;
mod engines_equivalence;
mod engines_logprobs;
mod engines_metrics;
mod engines_profilers;
mod engines_reasoning;
mod engines_requests;
mod engines_router;
mod engines_startup;
mod engines_streams;
mod faults;
mod latency;
mod lifecycle;
mod prefix_cache;
mod tls;
