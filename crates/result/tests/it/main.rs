//! The integration tests of servebench-result, in one test binary (one link, one process).

mod catalogue;
mod kernels;
mod reasoning_compat;
mod request_flags;
mod result_schema_drift;
mod sidecar;
