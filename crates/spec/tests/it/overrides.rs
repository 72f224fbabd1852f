//! `--set KEY=VALUE` overrides: applied by dotted path, the value read as YAML, the result
//! validated like a spec file; unknown keys, wrong types and specs made invalid are refused
//! with the message `validate` gives.

use servebench_spec::hash::spec_hash;
use servebench_spec::overrides::{Override, OverrideError, apply};
use servebench_spec::{Spec, parse_str};

const BASE: &str = r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: o}
spec:
  target: {model: m, base_url: "http://127.0.0.1:8000"}
  variants:
    - name: a
      baseline: true
    - name: b
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 10
  sweep:
    max_concurrency: [1, 4]
  trials:
    count: 5
"#;

fn base() -> Spec {
    parse_str(BASE, "o.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn sets(args: &[&str]) -> Vec<Override> {
    args.iter()
        .map(|a| Override::parse(a).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn refused(args: &[&str]) -> String {
    match apply(&base(), &sets(args), "o.yaml") {
        Ok(_) => panic!("{args:?} should be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn values_are_read_as_yaml_and_the_hash_is_the_resolved_specs() {
    let s = apply(
        &base(),
        &sets(&[
            "workload.requests=200",
            "sweep.max_concurrency=[64, 256]",
            "trials.count=3",
            "variants.b.base_url=http://10.0.0.7:8000",
        ]),
        "o.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.file.spec.workload.requests, Some(200));
    assert_eq!(s.file.spec.sweep.max_concurrency, Some(vec![64, 256]));
    assert_eq!(s.file.spec.trials.count, 3);
    assert_eq!(
        s.file.spec.variants[1].base_url.as_deref(),
        Some("http://10.0.0.7:8000")
    );
    // The same spec written out in a file hashes the same.
    let written = BASE
        .replace("requests: 10", "requests: 200")
        .replace("[1, 4]", "[64, 256]")
        .replace("count: 5", "count: 3")
        .replace(
            "- name: b",
            "- name: b\n      base_url: http://10.0.0.7:8000",
        );
    let direct = parse_str(&written, "w.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec_hash(&s.file), spec_hash(&direct.file));
    assert_ne!(spec_hash(&s.file), spec_hash(&base().file));
    // The source and path stay the original file's.
    assert_eq!(s.source, BASE);
}

#[test]
fn a_later_override_wins_and_an_empty_value_restores_the_default() {
    let s = apply(
        &base(),
        &sets(&[
            "workload.requests=20",
            "workload.requests=30",
            "trials.count=",
        ]),
        "o.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.file.spec.workload.requests, Some(30));
    let default = parse_str(&BASE.replace("  trials:\n    count: 5\n", ""), "d.yaml")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.file.spec.trials.count, default.file.spec.trials.count);
}

#[test]
fn an_unknown_key_lists_the_keys_at_that_level() {
    let msg = refused(&["workload.reqests=5"]);
    assert!(msg.contains("no key `reqests` in `spec.workload`"), "{msg}");
    assert!(msg.contains("did you mean `requests`?"), "{msg}");
    assert!(msg.contains("dataset"), "{msg}");
    assert!(msg.contains("warmup_requests"), "{msg}");
    let top = refused(&["workloads.requests=5"]);
    assert!(top.contains("no key `workloads` in `spec`"), "{top}");
    assert!(top.contains("did you mean `workload`?"), "{top}");
}

#[test]
fn an_unknown_variant_names_the_variants() {
    let msg = refused(&["variants.c.base_url=http://x:1"]);
    assert!(msg.contains("no item `c`"), "{msg}");
    assert!(msg.contains("a, b"), "{msg}");
}

#[test]
fn a_value_of_the_wrong_type_gets_validates_message() {
    let msg = refused(&["workload.requests=many"]);
    assert!(
        msg.contains("`spec.workload.requests` must be a whole number"),
        "{msg}"
    );
    assert!(
        msg.contains("set by `--set workload.requests=many`"),
        "{msg}"
    );
    // Not located in the generated text: the file label without a line.
    assert!(msg.contains("o.yaml: error:"), "{msg}");
}

#[test]
fn an_override_that_makes_the_spec_invalid_is_refused() {
    let msg = refused(&["variants.a.baseline=false"]);
    assert!(msg.contains("no variant is the baseline"), "{msg}");
    let msg = refused(&["workload.dataset.kind=nonsense"]);
    assert!(msg.contains("o.yaml"), "{msg}");
}

#[test]
fn malformed_and_non_yaml_values_are_refused() {
    assert!(matches!(
        Override::parse("workload.requests"),
        Err(OverrideError::Malformed(_))
    ));
    let msg = refused(&["sweep.max_concurrency=[64, 256"]);
    assert!(msg.contains("not YAML"), "{msg}");
    let msg = refused(&["workload.requests.count=5"]);
    assert!(msg.contains("a single value"), "{msg}");
}

#[test]
fn a_plain_load_measurement_warns_about_neither_variants_nor_trials() {
    let one = BASE.replace("    - name: b\n", "");
    let s = parse_str(&one, "one.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert!(!servebench_spec::is_plain_load(&s.file));
    assert!(
        s.warnings
            .iter()
            .any(|w| w.message.contains("only one variant"))
    );
    let plain = apply(&s, &sets(&["trials.count=1"]), "one.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert!(servebench_spec::is_plain_load(&plain.file));
    let words: Vec<&str> = plain.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        !words
            .iter()
            .any(|w| w.contains("only one variant") || w.contains("per cell")),
        "{words:?}"
    );
    // Two variants with one trial still hear about the missing intervals.
    let two =
        apply(&base(), &sets(&["trials.count=1"]), "o.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        two.warnings
            .iter()
            .any(|w| w.message.contains("1 trial per cell"))
    );
}

#[test]
fn overrides_add_no_warning_about_keys_the_file_does_not_write() {
    let s = base();
    let o = apply(&s, &sets(&["workload.requests=50"]), "o.yaml").unwrap_or_else(|e| panic!("{e}"));
    let words =
        |sp: &Spec| -> Vec<String> { sp.warnings.iter().map(|w| w.message.clone()).collect() };
    // It may take one away (50 requests at c=4 are enough waves; the file's 10 are not).
    let before = words(&s);
    for w in words(&o) {
        assert!(before.contains(&w), "the override added `{w}`");
    }
}

/// Issue 51: overrides applied in two steps keep the first step's. `trials.design:
/// optimize` sets `trials.count` and `trials.per_start` through `apply` after the command
/// line's overrides; the second `apply` read the file again and dropped the first (`-c 1`
/// planned every point of the file, and the spec hash was the file's).
#[test]
fn a_second_apply_keeps_the_first_overrides() {
    let first = apply(
        &base(),
        &sets(&["sweep.max_concurrency=[1]", "workload.requests=12"]),
        "o.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let second =
        apply(&first, &sets(&["trials.count=7"]), "o.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(second.file.spec.sweep.max_concurrency, Some(vec![1]));
    assert_eq!(second.file.spec.workload.requests, Some(12));
    assert_eq!(second.file.spec.trials.count, 7);
    assert_eq!(
        second.overrides,
        [
            "sweep.max_concurrency=[1]",
            "workload.requests=12",
            "trials.count=7"
        ]
    );
    let at_once = apply(
        &base(),
        &sets(&[
            "sweep.max_concurrency=[1]",
            "workload.requests=12",
            "trials.count=7",
        ]),
        "o.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec_hash(&second.file), spec_hash(&at_once.file));
}
