//! The integration tests of servebench-spec, in one test binary (one link, one process).

mod context_clip;
mod docs_drift;
mod engines_doc;
mod hash;
mod invalid_corpus;
mod metrics_doc;
mod overrides;
mod peer;
mod plan;
mod profiler_launch;
mod schema_drift;
mod specs_dir;
mod waves;
