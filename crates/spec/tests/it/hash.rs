//! The spec hash ignores key order, comments, formatting and spelled-out defaults, and
//! changes with anything that changes the experiment.

const BASE: &str = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: h}
spec:
  target: {model: m, base_url: "http://127.0.0.1:8000"}
  variants: [{name: a, baseline: true}]
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 10
"#;

fn hash(src: &str) -> String {
    let spec = servebench_spec::parse_str(src, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    servebench_spec::hash::spec_hash(&spec.file)
}

#[test]
fn insensitive_to_order_comments_formatting_and_defaults() {
    let reordered = r#"
# a comment
kind: Experiment
apiVersion: "servebench/v1alpha1"
spec:
  workload:
    requests: 10      # trailing comment
    dataset:
      output_tokens: 8
      input_tokens: 16
      kind: random
    request_rate: inf
    ignore_eos: true
    seed: 1
  variants:
    - baseline: true
      name: a
  target:
    model: m
    base_url: http://127.0.0.1:8000
  trials: {count: 5, order: interleaved, cooldown: 0s}
metadata:
  name: h
"#;
    assert_eq!(hash(BASE), hash(reordered));
}

#[test]
fn host_only_fields_do_not_change_the_hash() {
    let other_host = BASE.replace("http://127.0.0.1:8000", "http://10.1.2.3:9000");
    assert_eq!(hash(BASE), hash(&other_host));
}

#[test]
fn workload_changes_change_the_hash() {
    for (from, to) in [
        ("requests: 10", "requests: 11"),
        ("input_tokens: 16", "input_tokens: 17"),
        ("model: m", "model: n"),
    ] {
        assert_ne!(hash(BASE), hash(&BASE.replace(from, to)), "{from} -> {to}");
    }
}
