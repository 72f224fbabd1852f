//! The output-equivalence statistics against reference vectors computed by scipy and a
//! brute-force enumeration (`tests/reference/outputs.py` → `tests/reference/outputs.json`).

use serde_json::Value;
use servebench_stats::outputs::accuracy::mcnemar_exact;
use servebench_stats::outputs::interval::{paired_difference, wilson};
use servebench_stats::outputs::{PermutationMethod, PromptStarts, divergence_permutation};

fn load() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/outputs.json");
    let text = std::fs::read_to_string(path).expect("outputs.json is committed beside the test");
    serde_json::from_str(&text).expect("outputs.json is valid JSON")
}

fn close(actual: f64, expected: f64, what: &str) {
    let tol = 1e-9 * expected.abs() + 1e-12;
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: got {actual:e}, reference {expected:e}"
    );
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn labels(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("label") as u32)
        .collect()
}

#[test]
fn wilson_matches_scipy() {
    let root = load();
    for c in root["wilson"].as_array().expect("cases") {
        let (k, n) = (f(c, "k"), c["n"].as_u64().expect("n") as usize);
        let ci = wilson(k / n as f64, n, f(c, "level")).expect("interval");
        close(ci.lower, f(c, "lower"), &format!("wilson lower {c}"));
        close(ci.upper, f(c, "upper"), &format!("wilson upper {c}"));
    }
}

#[test]
fn newcombe_matches_the_transcription() {
    let root = load();
    for c in root["paired_difference"].as_array().expect("cases") {
        let e = paired_difference(&floats(&c["first"]), &floats(&c["second"]), f(c, "level"))
            .expect("interval");
        close(e.point, f(c, "point"), "point");
        close(e.ci.lower, f(c, "lower"), "newcombe lower");
        close(e.ci.upper, f(c, "upper"), "newcombe upper");
    }
}

#[test]
fn mcnemar_matches_scipy() {
    let root = load();
    for c in root["mcnemar"].as_array().expect("cases") {
        let (b, cc) = (c["b"].as_u64().expect("b"), c["c"].as_u64().expect("c"));
        close(mcnemar_exact(b, cc).expect("p"), f(c, "p"), "mcnemar");
    }
}

#[test]
fn permutation_matches_brute_force() {
    let root = load();
    for c in root["permutation"].as_array().expect("cases") {
        let prompts: Vec<PromptStarts> = c["prompts"]
            .as_array()
            .expect("prompts")
            .iter()
            .map(|p| PromptStarts {
                baseline: labels(&p["baseline"]),
                candidate: labels(&p["candidate"]),
            })
            .collect();
        let o = divergence_permutation(&prompts).expect("test");
        assert_eq!(o.method, PermutationMethod::Exact);
        let want = f(c, "p");
        assert!((o.p - want).abs() < 1e-9, "got {}, brute force {want}", o.p);
    }
}
