//! Output equivalence end to end on the simulator (docs/equivalence.md): the committed
//! `specs/sim-equivalence.yaml`, whose candidate changes the greedy output of about 30% of
//! prompts (`--numerics-change 0.3`), comes out `changed` in `compare --json`'s
//! `equivalence` object and trips `--fail-on output-changed`; the same spec with the
//! candidate's arguments made the baseline's (a `--set`) comes out `unchanged` and passes;
//! `servebench report` has the section; a resumed run keeps the probes it has and probes only
//! a block that has none.
//!
//! The simulator answers `temperature: 0` deterministically by prompt (docs/simulator.md),
//! and which prompts `--numerics-change` changes is fixed by prompt hash, so the counts here
//! do not depend on chance or machine load.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

/// Run the committed spec with `sets` into a fresh folder; its result file.
fn run(sets: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp");
    let mut cmd = sb();
    cmd.current_dir(dir.path())
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(dir.path().join("results"))
        .arg(repo().join("specs/sim-equivalence.yaml"));
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.assert().code(0);
    let file = result_file(dir.path());
    (dir, file)
}

fn result_file(dir: &Path) -> PathBuf {
    let folder = dir.join("results/sim-equivalence");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("results folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".requests.json")
        })
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

fn compare(result: &Path, gate: bool) -> (i32, Value) {
    let mut cmd = sb();
    cmd.arg("compare").arg(result).arg("--json");
    if gate {
        cmd.args(["--fail-on", "output-changed"]);
    }
    let out = cmd.output().expect("compare runs");
    let v = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn equivalence_a_numerics_change_of_30_percent_is_changed_and_trips_the_gate() {
    let (_dir, file) = run(&[]);
    let result: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    let probes = result["equivalence"].as_array().expect("probes recorded");
    // Three starts of each variant, one concurrency, 24 prompts each.
    assert_eq!(probes.len(), 6, "{probes:?}");
    assert!(
        probes
            .iter()
            .all(|p| p["outputs"].as_array().map(Vec::len) == Some(24))
    );
    let (code, v) = compare(&file, true);
    let e = &v["comparisons"][0]["equivalence"];
    assert_eq!(e["verdict"], "changed", "{e:#}");
    assert_eq!(
        e["baseline_identical"], 1.0,
        "the simulator is repeatable: {e:#}"
    );
    let identical = e["identical"].as_f64().expect("share");
    assert!(
        (0.4..0.95).contains(&identical),
        "about 70% of prompts unchanged: {identical}"
    );
    assert!(e["test"]["p"].as_f64().expect("p") <= 0.05, "{e:#}");
    assert!(
        !e["first_divergence_candidate"]
            .as_array()
            .expect("positions")
            .is_empty()
    );
    assert_eq!(code, 1, "--fail-on output-changed trips");
    // The report has the section.
    let out = file.with_extension("report");
    sb().arg("report")
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("## Output equivalence"), "{md}");
    assert!(md.contains("outputs changed"), "{md}");
    // The first-divergence plot, in the section: one dot per distinct position of the
    // candidate's row (the count written above a shared one), and the baseline's own row
    // empty, said in words (the simulator repeats itself).
    let section = &md[md.find("## Output equivalence").expect("section")..];
    assert!(section.contains("divergence-fast_kernel.svg"), "{section}");
    let svg = std::fs::read_to_string(out.join("divergence-fast_kernel.svg")).expect("the plot");
    let mut distinct: Vec<u64> = e["first_divergence_candidate"]
        .as_array()
        .expect("positions")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let total = distinct.len();
    distinct.dedup();
    assert_eq!(svg.matches("<circle").count(), distinct.len(), "{svg}");
    assert!(
        distinct.len() < total,
        "some positions are shared: {distinct:?}"
    );
    assert!(svg.contains("no output differs"), "{svg}");
    assert!(svg.contains("first differing position (tokens)"), "{svg}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(!html.contains("divergence-fast_kernel.svg could not be drawn"));
    assert!(
        v["gate"]["reasons"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("output-changed")),
        "{:#}",
        v["gate"]
    );
}

#[test]
fn equivalence_identical_arms_are_unchanged_and_pass_the_gate() {
    let (_dir, file) = run(&["variants.fast_kernel.server.args=[--label, fast_kernel]"]);
    let (code, v) = compare(&file, true);
    let e = &v["comparisons"][0]["equivalence"];
    assert_eq!(e["verdict"], "unchanged", "{e:#}");
    assert_eq!(e["identical"], 1.0, "{e:#}");
    assert_eq!(code, 0, "{:#}", v["gate"]);
    // The text output says it in words.
    let out = sb().arg("compare").arg(&file).output().expect("compare");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("outputs unchanged at concurrency 1"),
        "{text}"
    );
}

#[test]
fn equivalence_a_resumed_run_keeps_its_probes_and_probes_only_what_it_lacks() {
    let (dir, file) = run(&["variants.fast_kernel.server.args=[--label, fast_kernel]"]);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    let before = v["equivalence"].clone();
    // As if the run had stopped during the last two blocks: block 4 probed (its trial not
    // measured), block 5 not yet probed.
    v["trials"]
        .as_array_mut()
        .expect("trials")
        .retain(|t| t["block"].as_u64() < Some(4));
    v["equivalence"]
        .as_array_mut()
        .expect("probes")
        .retain(|p| p["block"].as_u64() != Some(5));
    v["status"] = Value::from("interrupted");
    std::fs::write(&file, serde_json::to_vec_pretty(&v).expect("json")).expect("write");
    sb().current_dir(dir.path())
        .args(["run", "--quiet", "--no-bars", "--resume"])
        .arg(&file)
        .assert()
        .code(0);
    let after: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    let probes = after["equivalence"].as_array().expect("probes");
    assert_eq!(probes.len(), 6, "{probes:#?}");
    let of = |list: &Value, block: u64| {
        list.as_array()
            .expect("probes")
            .iter()
            .filter(|p| p["block"].as_u64() == Some(block))
            .cloned()
            .collect::<Vec<_>>()
    };
    // Blocks 0–4 keep the probe they had; block 5 was probed once, now.
    for b in 0..5 {
        assert_eq!(of(&after["equivalence"], b), of(&before, b), "block {b}");
    }
    assert_eq!(of(&after["equivalence"], 5).len(), 1);
    assert_eq!(after["trials"].as_array().map(Vec::len), Some(6));
}

#[test]
fn equivalence_with_one_baseline_start_says_not_judged_not_a_share_of_zero() {
    // One trial: one server start per variant, so the baseline's own repeatability is not
    // measured and nothing is judged. Today's main printed "identical 0%".
    let (_dir, file) = run(&["trials.count=1"]);
    let (code, v) = compare(&file, true);
    let e = &v["comparisons"][0]["equivalence"];
    assert_eq!(e["prompts"], 0, "{e:#}");
    assert_eq!(e["verdict"], "inconclusive", "{e:#}");
    assert_eq!(
        code, 0,
        "an unjudged comparison does not trip output-changed"
    );
    let out = sb().arg("compare").arg(&file).output().expect("compare");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("outputs not judged at concurrency 1"),
        "{text}"
    );
    assert!(text.contains("(1 and 1 starts probed)"), "{text}");
    assert!(!text.contains("identical 0%"), "{text}");
}
