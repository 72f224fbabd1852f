//! A sequential spec (`trials.until_decided`) needs a [`Sequencer`]: without one the run is
//! refused before anything starts (the runner measures; what decides the rounds is passed in).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use servebench_result::ToolInfo;
use servebench_runner::run::{ProgressMode, RunError, RunOptions, run};

const SPEC: &str = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: sequential-no-sequencer}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}"]
  target: {api: openai-completions, model: sim-model, tokenizer: server}
  variants:
    - {name: base, baseline: true}
    - {name: fast, server: {args: [--decode-base-ms, "2"]}}
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 4
  trials:
    count: 3
    until_decided: {max: 10, metrics: [output_throughput]}
  compare:
    metrics: [output_throughput]
"#;

#[tokio::test]
async fn a_sequential_spec_without_a_sequencer_is_refused_before_anything_starts() {
    let spec = servebench_spec::parse_str(SPEC, "sequential.yaml").expect("a valid spec");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let opts = RunOptions {
        results_root: dir.path().to_path_buf(),
        servebench_bin: "/nonexistent/servebench".into(),
        tool: ToolInfo {
            version: "0.0.0".into(),
            git_sha: None,
        },
        resume: None,
        progress: ProgressMode::Quiet,
        cancel: Arc::new(AtomicBool::new(false)),
        sequencer: None,
        search_judge: None,
    };
    match run(&spec, &opts).await {
        Err(RunError::Setup(msg)) => assert!(msg.contains("trials.until_decided"), "{msg}"),
        other => panic!("expected a setup error, got {other:?}"),
    }
    let written: Vec<_> = std::fs::read_dir(dir.path()).expect("readable").collect();
    assert!(written.is_empty(), "nothing is written: {written:?}");
}
