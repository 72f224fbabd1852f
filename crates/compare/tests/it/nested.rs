//! Nested designs (`trials.per_start`): the start is the unit of analysis. The committed
//! example run (5 starts per arm at c = 1, 4, 16, 32) with each start's trial repeated k times
//! in the same start (same block and t, repeat 1..=k).

use std::path::PathBuf;

use serde_json::Value;
use servebench_compare::{CompareOptions, CompareReport, LoadedResult, compare_within};

const EXAMPLE: &str = "docs/example-report/20261129T232243Z-f219.json";

fn example() -> Value {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(EXAMPLE);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the example result"))
        .expect("JSON")
}

/// The example with every trial repeated `k` times in its start; repeat r's output
/// throughput is the original's × `factor(r)`.
fn nested(k: u32, factor: impl Fn(u32) -> f64) -> LoadedResult {
    let mut doc = example();
    doc["spec"]["spec"]["trials"]["per_start"] = Value::from(k);
    let mut out = Vec::new();
    let mut seq = 0u64;
    for t in doc["trials"].as_array().expect("trials").clone() {
        for r in 1..=k {
            let mut c = t.clone();
            c["seq"] = Value::from(seq);
            seq += 1;
            if r > 1 {
                c["repeat"] = Value::from(r);
            }
            let v = c["summary"]["all"]["output_throughput"]
                .as_f64()
                .expect("a value");
            c["summary"]["all"]["output_throughput"] = Value::from(v * factor(r));
            out.push(c);
        }
    }
    doc["trials"] = Value::Array(out);
    LoadedResult {
        file: "nested.json".into(),
        result: serde_json::from_value(doc).expect("still a result"),
    }
}

fn report(r: &LoadedResult) -> CompareReport {
    let opts = CompareOptions {
        metrics: Some(vec!["output_throughput".into()]),
        ..CompareOptions::default()
    };
    compare_within(r, &opts).expect("compares")
}

fn cells(r: &CompareReport) -> Vec<(usize, usize, Option<servebench_stats::Estimate>)> {
    r.comparisons[0].metrics[0]
        .points
        .iter()
        .map(|p| (p.n_baseline, p.n_candidate, p.effect))
        .collect()
}

#[test]
fn identical_repeats_within_a_start_do_not_narrow_the_interval() {
    // Fails before the start became the unit: 5 starts × 4 identical repeats were read as
    // 20 trials per arm, and the interval shrank by about √4.
    let one = cells(&report(&nested(1, |_| 1.0)));
    let four = cells(&report(&nested(4, |_| 1.0)));
    assert_eq!(one.len(), 4);
    for (a, b) in one.iter().zip(&four) {
        assert_eq!((b.0, b.1), (5, 5), "five starts per arm, whatever k");
        let (ea, eb) = (a.2.expect("interval"), b.2.expect("interval"));
        assert!((ea.ci.lower - eb.ci.lower).abs() < 1e-12, "{ea:?} {eb:?}");
        assert!((ea.ci.upper - eb.ci.upper).abs() < 1e-12, "{ea:?} {eb:?}");
    }
}

#[test]
fn a_start_is_read_as_the_geometric_mean_of_its_repeats() {
    // Repeats at ×0.9 and ×1.1 of the original: each start's value is the original ×
    // √(0.99), the same for both arms, so the ratio and its interval are the original's.
    let one = cells(&report(&nested(1, |_| 1.0)));
    let two = cells(&report(&nested(2, |r| if r == 1 { 0.9 } else { 1.1 })));
    for (a, b) in one.iter().zip(&two) {
        let (ea, eb) = (a.2.expect("interval"), b.2.expect("interval"));
        assert!((ea.point - eb.point).abs() < 1e-9, "{ea:?} {eb:?}");
        assert!((ea.ci.upper - eb.ci.upper).abs() < 1e-9, "{ea:?} {eb:?}");
    }
}
