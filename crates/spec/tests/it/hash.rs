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

#[test]
fn a_launcher_and_worker_ranks_change_the_hash_and_their_absence_does_not() {
    let with_server = BASE.replace(
        "spec:\n",
        "spec:\n  server:\n    command: [s]\n    args: [--port, \"${port}\"]\n",
    );
    let spec = servebench_spec::parse_str(&with_server, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    let canonical = servebench_spec::hash::canonical_json(&spec.file);
    assert!(
        !canonical.contains("launcher") && !canonical.contains("worker"),
        "an absent launcher must not appear in the hashed JSON: {canonical}"
    );
    let two_nodes = with_server.replace(
        "    args: [--port, \"${port}\"]\n",
        "    args: [--port, \"${port}\", --node-rank, \"${node.rank}\"]\n    launcher: {slurm: {nodes: 2}}\n",
    );
    let one_node = with_server.replace(
        "    args: [--port, \"${port}\"]\n",
        "    args: [--port, \"${port}\", --node-rank, \"${node.rank}\"]\n    launcher: {slurm: {nodes: 1}}\n",
    );
    let headless = two_nodes.replace(
        "    launcher:",
        "    worker: {args: [--headless]}\n    launcher:",
    );
    let hashes = [
        hash(&with_server),
        hash(&two_nodes),
        hash(&one_node),
        hash(&headless),
    ];
    for i in 0..hashes.len() {
        for j in i + 1..hashes.len() {
            assert_ne!(hashes[i], hashes[j], "specs {i} and {j} hash alike");
        }
    }
}

/// The hash of every committed result's spec is still what that result recorded: a new
/// optional field left out (a launcher, worker ranks…) must not change the hash of specs
/// that do not use it, or `run --resume` and `rerun` would refuse the published runs.
#[test]
fn committed_results_keep_their_spec_hash() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let mut checked = 0;
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("read results/").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("read");
            let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
            let (Some(spec), Some(stored)) = (doc.get("spec"), doc["spec_hash"].as_str()) else {
                continue;
            };
            let spec: servebench_spec::SpecFile = serde_json::from_value(spec.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(
                servebench_spec::hash::spec_hash(&spec),
                stored,
                "{}: the spec now hashes differently",
                p.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "expected the committed results, found {checked}"
    );
}
