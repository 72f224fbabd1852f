//! Task accuracy end to end on the simulator (docs/equivalence.md, "Task accuracy"): the
//! committed `specs/sim-accuracy.yaml` probes the 40 generated arithmetic questions of
//! `specs/data/arithmetic-answers.jsonl`; the simulator answers the ones its `--answers`
//! draw picks right (0.9 of them, by prompt hash) and the candidate's `--numerics-change
//! 0.3` flips a share of those. `compare --json` carries the accuracy under `equivalence`;
//! `--fail-on accuracy-dropped` trips on the drop and passes the A/A.
//!
//! Deterministic: the simulator's greedy answers and both of its choices are fixed by
//! prompt hash, so the counts do not depend on chance or machine load.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

fn run(sets: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp");
    let mut cmd = sb();
    cmd.current_dir(dir.path())
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(dir.path().join("results"))
        .arg(repo().join("specs/sim-accuracy.yaml"));
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.assert().code(0);
    let folder = dir.path().join("results/sim-accuracy");
    let file = std::fs::read_dir(&folder)
        .expect("results folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".requests.json")
        })
        .expect("a result file");
    (dir, file)
}

fn compare(result: &Path) -> (i32, Value, String) {
    let out = sb()
        .arg("compare")
        .arg(result)
        .args(["--json", "--fail-on", "accuracy-dropped"])
        .output()
        .expect("compare runs");
    let v = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    let text = sb()
        .arg("compare")
        .arg(result)
        .output()
        .expect("compare runs");
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

#[test]
fn equivalence_accuracy_drops_under_a_numerics_change_and_trips_the_gate() {
    let (_dir, file) = run(&[]);
    let result: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    let probes = result["equivalence"].as_array().expect("probes");
    assert_eq!(probes.len(), 6);
    for p in probes {
        let outs = p["outputs"].as_array().expect("outputs");
        assert_eq!(outs.len(), 40, "every reference line is a probe prompt");
        assert!(outs.iter().all(|o| o["correct"].is_boolean()), "{p:#}");
    }
    // The baseline's right answers are the reference's: "What is 5 * 14?" is line 1.
    let right: Vec<&Value> = probes[0]["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter(|o| o["correct"] == true)
        .collect();
    assert!(!right.is_empty());
    let (code, v, text) = compare(&file);
    let a = &v["comparisons"][0]["equivalence"]["accuracy"];
    assert_eq!(a["verdict"], "lower", "{a:#}");
    assert_eq!(a["prompts"], 40);
    let (b, c) = (
        a["baseline"].as_f64().expect("b"),
        a["candidate"].as_f64().expect("c"),
    );
    assert!(b > 0.75 && b < 1.0, "about 0.9 answered right: {b}");
    assert!(c < b - 0.1, "{a:#}");
    assert_eq!(
        a["candidate_only"], 0,
        "a numerics change only takes answers away"
    );
    assert!(a["p_value"].as_f64().expect("p") <= 0.05);
    assert!(a["difference"]["ci"]["upper"].as_f64().expect("upper") < 0.0);
    assert_eq!(a["baseline_unstable"], 0, "the simulator is repeatable");
    assert_eq!(code, 1, "--fail-on accuracy-dropped trips: {:#}", v["gate"]);
    assert!(
        v["gate"]["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("accuracy-dropped: fast_kernel vs reference_kernel")),
        "{:#}",
        v["gate"]
    );
    assert!(
        text.contains("accuracy lower (40 reference prompts"),
        "{text}"
    );
}

#[test]
fn equivalence_accuracy_of_identical_arms_is_equal_and_passes_the_gate() {
    let (_dir, file) = run(&["variants.fast_kernel.server.args=[--label, fast_kernel]"]);
    let (code, v, _) = compare(&file);
    let a = &v["comparisons"][0]["equivalence"]["accuracy"];
    assert_eq!(a["baseline"], a["candidate"], "{a:#}");
    assert_eq!(
        (a["baseline_only"].as_u64(), a["candidate_only"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(a["p_value"], 1.0);
    assert_eq!(a["verdict"], "unchanged", "{a:#}");
    assert_eq!(code, 0, "{:#}", v["gate"]);
}

#[test]
fn equivalence_accuracy_a_bad_reference_line_is_refused_where_it_is() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp");
    let spec = std::fs::read_to_string(repo().join("specs/sim-accuracy.yaml")).expect("spec");
    std::fs::write(dir.path().join("spec.yaml"), spec).expect("write");
    std::fs::create_dir_all(dir.path().join("data")).expect("dir");
    std::fs::write(
        dir.path().join("data/arithmetic-answers.jsonl"),
        "{\"prompt\": \"What is 1 + 1?\", \"answer\": \"2\"}\n{\"prompt\": \"What is 2 + 2?\", \"regex\": \"(4\"}\n",
    )
    .expect("write");
    let out = sb()
        .arg("validate")
        .arg(dir.path().join("spec.yaml"))
        .output()
        .expect("validate");
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("arithmetic-answers.jsonl:2"), "{err}");
    assert!(err.contains("`regex` does not compile"), "{err}");
}

#[test]
fn equivalence_accuracy_the_committed_set_is_the_generator_s_output() {
    let out = std::process::Command::new("python3")
        .arg(repo().join("scripts/make-arithmetic-answers.py"))
        .args(["--out", "-"])
        .output()
        .expect("python3 runs the generator");
    assert!(out.status.success());
    let committed =
        std::fs::read(repo().join("specs/data/arithmetic-answers.jsonl")).expect("committed set");
    assert_eq!(
        out.stdout, committed,
        "regenerate: scripts/make-arithmetic-answers.py"
    );
}

#[test]
fn equivalence_rerun_says_whether_the_outputs_and_accuracy_reproduced() {
    // Two runs of the same spec: the second judged as the first's re-run (`--with`). The
    // simulator answers greedily by prompt, so every verdict reproduces and each variant's
    // outputs are the published ones. Today's main printed nothing about outputs.
    let (_a, first) = run(&[]);
    let (_b, second) = run(&[]);
    let out = sb()
        .arg("rerun")
        .arg(&first)
        .arg("--with")
        .arg(&second)
        .arg("--json")
        .output()
        .expect("rerun");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let o = &v["outputs"];
    let c = &o["comparisons"][0];
    assert_eq!(c["candidate"], "fast_kernel", "{o:#}");
    assert_eq!(
        (c["published"].as_str(), c["new"].as_str()),
        (Some("changed"), Some("changed"))
    );
    assert_eq!(c["reproduced"], true);
    assert_eq!(
        c["accuracy"],
        serde_json::json!(["lower", "lower"]),
        "{o:#}"
    );
    let variants = o["variants"].as_array().expect("variants");
    assert_eq!(variants.len(), 2);
    for r in variants {
        assert_eq!(r["identical"], 1.0, "{r:#}");
        assert_eq!(r["prompts"], 40);
        assert_eq!(r["verdict"], "unchanged", "{r:#}");
    }
    let text = sb()
        .arg("rerun")
        .arg(&first)
        .arg("--with")
        .arg(&second)
        .output()
        .expect("rerun");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "fast_kernel vs reference_kernel: outputs changed → changed: reproduced; accuracy \
             lower → lower: reproduced"
        ),
        "{text}"
    );
    assert!(
        text.contains("reference_kernel: 100% of 40 prompts gave the published outputs"),
        "{text}"
    );
}
