//! What `validate` says of a workload longer than the context a vLLM server is started with
//! (docs/engines.md, finding 48): vLLM 0.33.0 cuts such requests' `max_tokens` to what the
//! context leaves, silently (serve/utils/api_utils.py:233-264), so the warning names the
//! `--max-model-len` argument by file:line:column, the request shape, and what to change.

fn spec(engine: &str, context: &str, input: &str, output: u32) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: vllm-context}}
spec:
  server:
    command: [vllm, serve, m]
    args: [--port, "${{port}}", {context}]
  target: {{engine: {engine}, api: openai-completions, model: m, tokenizer: server}}
  variants:
    - name: a
      baseline: true
    - name: b
  workload:
    dataset: {{kind: random, input_tokens: {input}, output_tokens: {output}}}
    requests: 4
    max_concurrency: 1
  trials: {{count: 1}}
"#
    )
}

fn warnings(text: &str) -> Vec<String> {
    let spec = servebench_spec::parse_str(text, "v.yaml").unwrap_or_else(|e| panic!("{e}"));
    spec.warnings
        .iter()
        .map(|w| w.render("v.yaml"))
        .filter(|w| w.contains("max-model-len"))
        .collect()
}

#[test]
fn a_vllm_workload_beyond_max_model_len_is_warned_of_at_the_argument() {
    let w = warnings(&spec(
        "vllm",
        "--max-model-len, \"4096\"",
        "{min: 1000, max: 3900}",
        512,
    ));
    // Once for the argument both variants share, at its place in the file.
    assert_eq!(w.len(), 1, "{w:#?}");
    let w = &w[0];
    assert!(w.starts_with("v.yaml:7:"), "{w}");
    for part in [
        "3900 prompt + 512 output = 4412 tokens exceed `--max-model-len 4096`",
        "vLLM 0.33.0 cuts their `max_tokens`",
        "0.26.0 refuses them",
        "`--max-model-len 4412` or more",
    ] {
        assert!(w.contains(part), "{part}: {w}");
    }
    // `--max-model-len=N` is read too.
    let w = warnings(&spec("vllm", "--max-model-len=4096", "3900", 512));
    assert_eq!(w.len(), 1, "{w:#?}");
}

#[test]
fn a_workload_that_fits_or_another_engine_is_not_warned_of() {
    assert_eq!(
        warnings(&spec("vllm", "--max-model-len, \"4096\"", "3584", 512)),
        Vec::<String>::new()
    );
    // SGLang refuses such a request itself (no `context_clip` read in its source), and the
    // run refuses it before measuring: nothing to warn of here.
    assert_eq!(
        warnings(&spec("sglang", "--max-model-len, \"4096\"", "3900", 512)),
        Vec::<String>::new()
    );
    // No context on the command line: the run reads it from /v1/models.
    assert_eq!(
        warnings(&spec("vllm", "--dtype, auto", "3900", 512)),
        Vec::<String>::new()
    );
}
