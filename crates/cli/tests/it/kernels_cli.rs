//! `servebench kernels TRACE…` on the committed traces (issue 51): each trace's kernels by
//! name, category, calls and share, and for two traces a `kernel` rule that tells them apart.

use crate::common::{repo, sb};

#[test]
fn kernels_lists_the_committed_traces_and_suggests_a_rule() {
    let dir = tempfile::tempdir().expect("tmp");
    let fixtures = repo().join("crates/result/tests/fixtures/kernels");
    let out = sb(dir.path())
        .arg("kernels")
        .arg(fixtures.join("h200-moe-grouped_mm.pt.trace.json.gz"))
        .arg(fixtures.join("h200-moe-eager.pt.trace.json.gz"))
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "h200-moe-grouped_mm.pt.trace.json.gz:",
        "h200-moe-eager.pt.trace.json.gz:",
        "by category:",
        "grouped/MoE GEMM",
        "a rule that tells them apart",
        "kernel: {matches: \"",
        "kernel: {absent: \"",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    // The published run's traces read too.
    let traces = repo().join("results/gpu-transformers-moe-kernels/traces");
    let files: Vec<_> = std::fs::read_dir(&traces)
        .expect("traces")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!files.is_empty());
    sb(dir.path())
        .arg("kernels")
        .args(&files)
        .args(["--top", "3"])
        .assert()
        .code(0);
    // Not a trace: a clear error naming the file.
    let bad = dir.path().join("not-a-trace.json");
    std::fs::write(&bad, "{\"traceEvents\": 3}").expect("write");
    let out = sb(dir.path()).arg("kernels").arg(&bad).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("not-a-trace.json"), "{err}");
}
