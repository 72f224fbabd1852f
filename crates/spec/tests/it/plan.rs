//! Plans of specs read from text: the points a sweep's `include` entries add (with their own
//! request counts), and the rounds of a sequential plan (`trials.until_decided`).

use servebench_spec::parse_str;
use servebench_spec::plan::{plan, prompt_seed, round_blocks, sweep_points};

#[test]
fn include_points_carry_their_own_request_counts() {
    let src = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: per-point}
spec:
  server: {command: [s], args: [--port, "${port}"]}
  target: {model: m}
  variants: [{name: a, baseline: true}, {name: b}]
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 20
    request_rate: inf
  sweep:
    max_concurrency: [1]
    include:
      - {max_concurrency: 64, requests: 256}
      - {max_concurrency: 8}
"#;
    let spec = parse_str(src, "per-point.yaml").expect("valid");
    let got: Vec<_> = sweep_points(&spec.file)
        .iter()
        .map(|p| (p.max_concurrency, p.requests))
        .collect();
    assert_eq!(
        got,
        [
            (Some(1), Some(20)),
            (Some(64), Some(256)),
            (Some(8), Some(20))
        ]
    );
    // with no matrix key, the included points are the whole sweep
    let only = src.replace("    max_concurrency: [1]\n", "");
    let spec = parse_str(&only, "per-point.yaml").expect("valid");
    let got: Vec<_> = sweep_points(&spec.file)
        .iter()
        .map(|p| (p.max_concurrency, p.requests))
        .collect();
    assert_eq!(got, [(Some(64), Some(256)), (Some(8), Some(20))]);
}

#[test]
fn a_sequential_plan_shows_its_rounds_and_what_they_cost_at_most() {
    let src = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: seq}
spec:
  server: {command: [s], args: [--port, "${port}"]}
  target: {model: m}
  variants: [{name: a, baseline: true}, {name: b}, {name: c}]
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 20
    request_rate: inf
  sweep: {max_concurrency: [1, 8]}
  trials: {count: 5, until_decided: {max: 12, metrics: [output_throughput]}}
"#;
    let spec = parse_str(src, "seq.yaml").expect("valid");
    let plan = plan(&spec.file);
    assert_eq!(plan.trial_count, 5 * 3 * 2);
    let q = plan.sequential.as_ref().expect("sequential");
    assert_eq!((q.first_stage, q.max_trials, q.rounds), (5, 12, 7));
    assert_eq!(q.max_extra_trials, 7 * 3 * 2);
    assert_eq!(q.max_extra_starts, 7 * 3);
    assert_eq!(q.max_total(&plan), 12 * 3 * 2);
    let text = plan.to_string();
    assert!(
        text.contains("first stage: 5 trials per cell, 30 trials in 15 blocks"),
        "{text}"
    );
    assert!(text.contains("up to 7 more round(s)"), "{text}");
    assert!(
        text.contains("at most: 72 trials (42 more) and 36 server starts (21 more)"),
        "{text}"
    );

    // Round 6: b open at point 1 only, c done; the baseline runs where b needs it.
    let todo = vec![
        ("b".to_owned(), vec![1]),
        ("c".to_owned(), vec![]),
        ("a".to_owned(), vec![1]),
    ];
    let blocks = round_blocks(&spec.file, 6, &todo, 15, 30);
    type Row<'a> = (usize, &'a str, Vec<(usize, u32, usize)>);
    let got: Vec<Row<'_>> = blocks
        .iter()
        .map(|b| {
            (
                b.index,
                b.variant.as_str(),
                b.trials.iter().map(|t| (t.seq, t.trial, t.point)).collect(),
            )
        })
        .collect();
    // In the spec's variant order (baseline first), numbered on from the first stage.
    assert_eq!(
        got,
        [(15, "a", vec![(30, 6, 1)]), (16, "b", vec![(31, 6, 1)])]
    );
    // Paired prompts: the same seed for both arms at (t, point).
    assert_eq!(
        blocks[0].trials[0].prompt_seed,
        blocks[1].trials[0].prompt_seed
    );
    assert_eq!(blocks[0].trials[0].prompt_seed, prompt_seed(1, 6, 1));

    // per_trial: one block per (variant, point).
    let per_trial = src.replace("{count: 5,", "{count: 5, server_restart: per_trial,");
    let spec = parse_str(&per_trial, "seq.yaml").expect("valid");
    let todo = vec![("a".to_owned(), vec![0, 1]), ("b".to_owned(), vec![0, 1])];
    assert_eq!(round_blocks(&spec.file, 6, &todo, 0, 0).len(), 4);
}

/// Point labels say what the point sends: a shared prefix and its suffix, conversations, a
/// trace on its own clock (before, they read `in=file` for the first two and `rate=inf` for
/// a trace). Random and file datasets keep their labels.
#[test]
fn point_labels_say_what_each_dataset_sends() {
    let labels = |file: &str| -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cli/tests/specs")
            .join(file);
        let spec = servebench_spec::load(&path).expect("valid spec");
        sweep_points(&spec.file)
            .iter()
            .map(|p| p.to_string())
            .collect()
    };
    assert_eq!(
        labels("shared-prefix-cache.yaml"),
        ["c=2 rate=inf in=512+16 out=4"]
    );
    assert_eq!(
        labels("multi-turn.yaml"),
        ["c=2 rate=inf turns=3 user=16 out=8"]
    );
    assert_eq!(
        labels("trace-plain.yaml"),
        [
            "c=unlimited rate=trace speed=1x",
            "c=unlimited rate=trace speed=2x"
        ]
    );
    assert_eq!(
        labels("tiny-ab.yaml"),
        ["c=1 rate=inf in=16 out=8", "c=4 rate=inf in=16 out=8"]
    );
}

const NESTED: &str = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: nested}
spec:
  server: {command: [s], args: [--port, "${port}"]}
  target: {model: m}
  variants: [{name: a, baseline: true}, {name: b}]
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 20
  sweep: {max_concurrency: [1, 4]}
  trials: {count: 3, per_start: 2}
"#;

#[test]
fn per_start_repeats_every_point_within_one_start() {
    // Fails before `trials.per_start`: the field was unknown and each start measured each
    // point once.
    let spec = parse_str(NESTED, "nested.yaml").expect("valid");
    let p = plan(&spec.file);
    assert_eq!(
        p.server_starts, 6,
        "3 starts per variant, as without per_start"
    );
    assert_eq!(
        p.trial_count, 24,
        "2 variants × 3 starts × 2 repeats × 2 points"
    );
    let b = &p.blocks[0];
    let got: Vec<(u32, u32, usize)> = b
        .trials
        .iter()
        .map(|t| (t.trial, t.repeat, t.point))
        .collect();
    assert_eq!(got, [(1, 1, 0), (1, 1, 1), (1, 2, 0), (1, 2, 1)]);
    // Repeats draw different prompts, the same for both variants (paired).
    assert_ne!(b.trials[0].prompt_seed, b.trials[2].prompt_seed);
    assert_eq!(b.trials[2].prompt_seed, prompt_seed(1, 2, 0));
    assert_eq!(p.blocks[1].trials[2].prompt_seed, b.trials[2].prompt_seed);
    let text = p.to_string();
    assert!(
        text.contains("2 trials of every cell in each server start"),
        "{text}"
    );
    assert!(text.contains("trial 1 repeat 2/2"), "{text}");
    // One trial per start is today's plan: repetition t draws with index t.
    let one = parse_str(&NESTED.replace(", per_start: 2", ""), "one.yaml").expect("valid");
    let q = plan(&one.file);
    assert_eq!(q.blocks[2].trials[0].prompt_seed, prompt_seed(1, 2, 0));
    assert!(!q.to_string().contains("repeat"));
}

#[test]
fn design_optimize_needs_its_stated_values() {
    let src = NESTED.replace("per_start: 2}", "per_start: 2, design: optimize}");
    let err = parse_str(&src, "opt.yaml").expect_err("optimize without values");
    assert!(err.to_string().contains("trials.optimize"), "{err}");
    let ok = NESTED.replace(
        "per_start: 2}",
        "design: optimize, optimize: {sd_between: 0.01, sd_within: 0.05, start_seconds: 80, trial_seconds: 10}}",
    );
    parse_str(&ok, "opt.yaml").expect("valid with stated values");
}
