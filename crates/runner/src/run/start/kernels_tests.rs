//! Which files of a trace directory kernel evidence reads (issue 48, item 6).

use std::path::Path;
use std::time::Duration;

use servebench_engines::{Engine, Profiler};

use super::{STABLE_FOR, hold_for, listing, wait_and_read};

fn facts(e: Engine) -> &'static servebench_engines::ProfilerFacts {
    let profile = servebench_engines::profile(e).expect("a profile");
    match &profile.profiler {
        Profiler::Endpoints(f) => f,
        Profiler::None { .. } => panic!("{e:?}'s profiler is driven through its endpoints"),
    }
}

fn vllm_suffixes() -> &'static [&'static str] {
    facts(Engine::Vllm).trace_suffixes
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
    let ranks = wait_and_read(
        dir.path(),
        vllm_suffixes(),
        &before,
        Duration::from_secs(5),
        STABLE_FOR,
    )
    .await
    .expect("the trace is read, the table left alone");
    assert_eq!(ranks.len(), 1);
    assert_eq!(
        ranks[0].1.file,
        "rank0.1765000000000000000.pt.trace.json.gz"
    );
    assert!(ranks[0].1.events > 0);
}

/// SGLang answers `/stop_profile` once its traces are written (issue 49, item 7): they are
/// read at once, on one host; on a Slurm server's shared storage, and for vLLM (not read to
/// the end), after their sizes held still. Before, every engine's were held for 1 s.
#[test]
fn traces_written_by_the_stop_are_read_without_waiting_for_them_to_hold_still() {
    assert_eq!(hold_for(facts(Engine::Sglang), false), Duration::ZERO);
    assert_eq!(hold_for(facts(Engine::Transformers), false), Duration::ZERO);
    assert_eq!(hold_for(facts(Engine::Sglang), true), STABLE_FOR);
    assert_eq!(hold_for(facts(Engine::Vllm), false), STABLE_FOR);
}

/// With no hold, a trace already there at the first look is read then.
#[tokio::test]
async fn a_trace_already_written_is_read_at_the_first_look_without_a_hold() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = listing(dir.path(), vllm_suffixes());
    vllm_stop(dir.path());
    let t = std::time::Instant::now();
    let ranks = wait_and_read(
        dir.path(),
        vllm_suffixes(),
        &before,
        Duration::from_secs(60),
        Duration::ZERO,
    )
    .await
    .expect("read");
    assert_eq!(ranks.len(), 1);
    // The first look reads it: no 250 ms poll, no 1 s hold (a generous bound for a loaded
    // machine, far below the hold's second).
    assert!(t.elapsed() < STABLE_FOR, "{:?}", t.elapsed());
}
