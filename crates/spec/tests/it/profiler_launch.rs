//! What `validate` says of a vLLM launch for kernel evidence (issue 48, item 6): vLLM's
//! profiler records every operator's Python stack unless `--profiler-config` turns
//! `torch_profiler_with_stack` off (0.26.0 config/profiler.py:48-51), which only makes the
//! traces larger and the probe heavier; the warning names the argument by file:line:column
//! and what to write.

fn spec(profiler_config: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: vllm-kernels}}
spec:
  server:
    command: [vllm, serve, m]
    args: [--port, "${{port}}", --profiler-config, '{profiler_config}']
  target: {{engine: vllm, api: openai-chat, model: m, tokenizer: server}}
  variants:
    - name: a
      baseline: true
      server:
        verify:
          - kernel: {{matches: fused_moe_kernel}}
    - name: b
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: 4
    max_concurrency: 1
  trials: {{count: 1}}
  evidence:
    kernels: {{dir: /tmp/servebench-traces}}
"#
    )
}

fn warnings(text: &str) -> Vec<String> {
    let spec = servebench_spec::parse_str(text, "v.yaml").unwrap_or_else(|e| panic!("{e}"));
    spec.warnings.iter().map(|w| w.render("v.yaml")).collect()
}

#[test]
fn a_vllm_profiler_recording_stacks_is_warned_of_where_it_is_launched() {
    let w = warnings(&spec(
        r#"{"profiler": "torch", "torch_profiler_dir": "/tmp/servebench-traces"}"#,
    ));
    let stack: Vec<&String> = w
        .iter()
        .filter(|w| w.contains("torch_profiler_with_stack"))
        .collect();
    // Once for the argument both variants share, at its place in the file.
    assert_eq!(stack.len(), 1, "{w:#?}");
    assert!(stack[0].contains("v.yaml:7:"), "{}", stack[0]);
    assert!(
        stack[0].contains(
            r#"add "torch_profiler_with_stack": false to the JSON of `--profiler-config`"#
        ),
        "{}",
        stack[0]
    );
}

#[test]
fn a_vllm_profiler_without_stacks_is_not_warned_of() {
    let off = r#"{"profiler": "torch", "torch_profiler_dir": "/tmp/servebench-traces", "torch_profiler_with_stack": false}"#;
    // `--profiler-config JSON` and `--profiler-config=JSON`.
    let joined = spec(off).replace("--profiler-config, '", "'--profiler-config=");
    for text in [spec(off), joined] {
        let w = warnings(&text);
        assert!(
            !w.iter().any(|w| w.contains("torch_profiler_with_stack")),
            "{text}: {w:#?}"
        );
    }
    // The dotted form vLLM's command line takes too.
    let dotted = spec(r#"{"profiler": "torch", "torch_profiler_dir": "/tmp/servebench-traces"}"#)
        .replace(
            "'{\"profiler\"",
            "--profiler-config.torch_profiler_with_stack=false, '{\"profiler\"",
        );
    let w = warnings(&dotted);
    assert!(
        !w.iter().any(|w| w.contains("torch_profiler_with_stack")),
        "{w:#?}"
    );
}
