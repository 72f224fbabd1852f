//! Which files of a trace directory kernel evidence reads (issue 48, item 6).

use std::path::Path;
use std::time::Duration;

use servebench_spec::engine::{Engine, Profiler};

use super::{listing, wait_and_read};

fn vllm_suffixes() -> &'static [&'static str] {
    let profile = servebench_spec::engine::profile(Engine::Vllm).expect("vLLM has a profile");
    match &profile.profiler {
        Profiler::Endpoints(f) => f.trace_suffixes,
        Profiler::None { .. } => panic!("vLLM's profiler is driven through its endpoints"),
    }
}

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../result/tests/fixtures/kernels/transformers-cpu-sdpa.pt.trace.json.gz")
}

/// What vLLM 0.26 leaves in `torch_profiler_dir` at a stop (profiler/wrapper.py:188-196,
/// :251-275): a gzipped trace per worker and the API process, and a text table per worker.
fn vllm_stop(dir: &Path) {
    std::fs::copy(
        fixture(),
        dir.join("rank0.1765000000000000000.pt.trace.json.gz"),
    )
    .expect("copy");
    std::fs::write(
        dir.join("profiler_out_0.txt"),
        "-------  ----------\nName     Self CUDA\n-------  ----------\n",
    )
    .expect("table");
}

#[test]
fn only_the_engines_trace_files_are_listed() {
    let dir = tempfile::tempdir().expect("tmp");
    vllm_stop(dir.path());
    std::fs::write(dir.path().join(".hidden.pt.trace.json"), "{}").expect("hidden");
    std::fs::write(dir.path().join("notes.md"), "a user's notes").expect("notes");
    std::fs::write(dir.path().join("half.pt.trace.json.tmp"), "{").expect("tmp file");
    let names: Vec<String> = listing(dir.path(), vllm_suffixes())
        .keys()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(names, ["rank0.1765000000000000000.pt.trace.json.gz"]);
}

/// Before: the text table was read as a trace, never parsed, and the evidence failed with
/// "not a complete Chrome trace" once the timeout ran out.
#[tokio::test]
async fn vllms_text_tables_beside_its_traces_do_not_spoil_the_evidence() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = listing(dir.path(), vllm_suffixes());
    vllm_stop(dir.path());
    let ranks = wait_and_read(dir.path(), vllm_suffixes(), &before, Duration::from_secs(5))
        .await
        .expect("the trace is read, the table left alone");
    assert_eq!(ranks.len(), 1);
    assert_eq!(
        ranks[0].1.file,
        "rank0.1765000000000000000.pt.trace.json.gz"
    );
    assert!(ranks[0].1.events > 0);
}
