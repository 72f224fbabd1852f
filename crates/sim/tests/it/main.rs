//! The integration tests of servebench-sim, in one test binary (one link, one process).

mod common;

mod api;
mod artefacts;
mod faults;
mod latency;
mod lifecycle;
mod prefix_cache;
mod tls;
