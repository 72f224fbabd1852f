//! Issue 42's kinds, one test each (docs/reliability.md, "Rules every surface keeps"): a gate
//! never passes on evidence it does not have; every file a run reads is hashed and checked;
//! no user value becomes an option of git; a closed stdout ends a printing command quietly;
//! every count the spec takes is bounded; the equivalence probe's files are refused at
//! `validate` with their location; a BOM is named; free-map keys take `--set`; a run given
//! twice is not pooled as two trials. Each failed on the code before the change.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{self, repo, sb, scratch, write_spec};

fn measured() -> PathBuf {
    std::fs::read_dir(repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun"))
        .expect("committed sim result")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a result")
}

/// The committed vLLM result imported into `dir` (a run with no sweep point in common with
/// [`measured`]).
fn imported(dir: &Path) -> PathBuf {
    let out = sb(dir)
        .args(["import", "vllm"])
        .arg(repo().join("crates/cli/tests/fixtures/import/vllm-bench-serve.json"))
        .args([
            "--results-dir",
            "imp",
            "--input-tokens",
            "128",
            "--output-tokens",
            "16",
        ])
        .output()
        .expect("import");
    assert!(out.status.success(), "{out:?}");
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    dir.join(line.trim().strip_prefix("imported: ").expect("path"))
}

fn out_of(o: &std::process::Output) -> (i32, String) {
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn a_gate_with_no_gated_cell_or_no_probe_fails_and_says_why_unless_allowed() {
    let dir = scratch("hardening", "unjudged");
    let cand = imported(&dir);
    let base = measured();
    let gate = |extra: &[&str]| {
        out_of(
            &sb(&dir)
                .arg("compare")
                .arg(&base)
                .arg(&cand)
                .args(extra)
                .output()
                .expect("compare"),
        )
    };
    // No sweep point in common: before, "gate …: passed", exit 0.
    let (code, text) = gate(&["--fail-on", "not-shown-non-inferior,suspicious"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("TRIPPED"), "{text}");
    assert!(text.contains("no gated cell"), "{text}");
    assert!(text.contains("--allow-unjudged"), "{text}");
    // The same with the one opt-out: passes, as before.
    let (code, text) = gate(&[
        "--fail-on",
        "not-shown-non-inferior,suspicious",
        "--allow-unjudged",
    ]);
    assert_eq!(code, 0, "{text}");
    // No probe recorded: `output-changed` cannot judge anything (before: passed silently).
    let (code, text) = gate(&["--fail-on", "output-changed"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no output probe"), "{text}");
}

#[test]
fn history_never_passes_a_user_value_to_git_as_an_option() {
    let dir = scratch("hardening", "git-option");
    let repo_dir = dir.join("repo");
    std::fs::create_dir_all(repo_dir.join("results")).expect("dir");
    let git = |args: &[&str]| {
        let s = std::process::Command::new("git")
            .current_dir(&repo_dir)
            .args(args)
            .output()
            .expect("git");
        assert!(s.status.success(), "{s:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    ]);
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    let o = sb(&repo_dir)
        .args(["history", "--git=--output=../victim.txt", "results/"])
        .output()
        .expect("history");
    let (code, text) = out_of(&o);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("not `-`"), "{text}");
    // Before: git read `--output=../victim.txt` as its option and truncated the file.
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
}

#[test]
fn a_closed_stdout_ends_a_printing_command_quietly() {
    // `servebench schema | head -1`: the schema is larger than a pipe's buffer, so the
    // writes go on after the reader left. Before: killed by SIGPIPE (no exit code).
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("servebench"))
        .arg("schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 1];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("one byte");
    // The pipe's read end is dropped here.
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn minimal_spec(extra: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: hard}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast]
  target: {{model: sim-model}}
  variants: [{{name: a, baseline: true}}]
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 8}}
    requests: 8
{extra}"#
    )
}

#[test]
fn every_count_of_the_equivalence_probe_is_bounded_like_its_siblings() {
    let dir = scratch("hardening", "bounds");
    let spec = write_spec(
        &dir,
        &minimal_spec("  equivalence: {warmup_requests: 4294967295}\n"),
    );
    let (code, text) = out_of(&sb(&dir).arg("validate").arg(&spec).output().expect("v"));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("spec.equivalence.warmup_requests"), "{text}");
    assert!(text.contains("10,000,000"), "{text}");
    assert!(text.contains("spec.yaml:"), "located: {text}");
}

#[test]
fn an_equivalence_prompt_file_that_cannot_be_used_is_refused_at_validate_with_its_location() {
    let dir = scratch("hardening", "probe-files");
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty.jsonl", b"", "no usable entry"),
        ("latin1.jsonl", b"{\"prompt\": \"caf\xe9\"}\n", "not UTF-8"),
        (
            "bom.jsonl",
            b"\xef\xbb\xbf{\"prompt\": \"hi\"}\n",
            "byte-order mark",
        ),
        ("array.jsonl", b"[{\"prompt\": \"hi\"}]\n", "JSON array"),
        ("missing.jsonl", b"", "cannot read it"),
    ];
    for (name, bytes, words) in cases {
        if name != "missing.jsonl" {
            std::fs::write(dir.join(name), bytes).expect("write");
        }
        let spec = write_spec(
            &dir,
            &minimal_spec(&format!("  equivalence: {{prompts_file: {name}}}\n")),
        );
        let (code, text) = out_of(&sb(&dir).arg("validate").arg(&spec).output().expect("v"));
        // Before: "valid", and `run` recorded no probe without a word.
        assert_eq!(code, 1, "{name}: {text}");
        assert!(text.contains(words), "{name}: {text}");
        assert!(text.contains(name), "{name}: {text}");
        assert!(text.contains("equivalence.prompts_file"), "{name}: {text}");
        if name != "empty.jsonl" && name != "missing.jsonl" {
            assert!(text.contains(&format!("{name}:1:")), "{name}: {text}");
        }
    }
}

#[test]
fn a_bom_is_named_as_such() {
    let dir = scratch("hardening", "bom");
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(std::fs::read(measured()).expect("result"));
    std::fs::write(dir.join("bom.json"), bytes).expect("write");
    let (code, text) = out_of(&sb(&dir).args(["compare", "bom.json"]).output().expect("c"));
    assert_eq!(code, 2, "{text}");
    // Before: "expected value at line 1 column 1".
    assert!(text.contains("byte-order mark"), "{text}");
}

#[test]
fn free_map_keys_take_set_and_a_bad_value_names_its_key() {
    let dir = scratch("hardening", "set");
    let spec = write_spec(&dir, &minimal_spec(""));
    let o = sb(&dir)
        .arg("plan")
        .arg(&spec)
        .args([
            "--json",
            "--set",
            "server.env.FOO=1",
            "--set",
            "server.env.BAR=x",
        ])
        .output()
        .expect("plan");
    let (code, text) = out_of(&o);
    // Before: "the spec has no key `FOO` in `spec.server.env`".
    assert_eq!(code, 0, "{text}");
    let o = sb(&dir)
        .arg("plan")
        .arg(&spec)
        .args(["--set", "sweep.max_concurrency=[5000000000]"])
        .output()
        .expect("plan");
    let (code, text) = out_of(&o);
    assert_eq!(code, 1, "{text}");
    // Before: "invalid value: integer `5000000000`, expected u32" at the document.
    assert!(
        text.contains("at key: spec.sweep.max_concurrency[0]"),
        "{text}"
    );
    assert!(
        text.contains("set by `--set sweep.max_concurrency=[5000000000]`"),
        "{text}"
    );
}

#[test]
fn the_same_runs_given_twice_are_not_pooled_as_more_trials() {
    let dir = scratch("hardening", "pool-twice");
    let file = repo().join("crates/cli/tests/fixtures/import/vllm-repeated.jsonl");
    let o = sb(&dir)
        .args(["import", "vllm"])
        .arg(&file)
        .arg(&file)
        .args([
            "--as-trials",
            "--input-tokens",
            "1024",
            "--output-tokens",
            "128",
            "--results-dir",
            "r",
        ])
        .output()
        .expect("import");
    let (code, text) = out_of(&o);
    // Before: six trials from three runs.
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("is the same as"), "{text}");
    assert!(common::walk(&dir.join("r")).is_empty(), "nothing written");
}

#[test]
fn a_changed_input_file_is_named_by_compare_and_refused_by_rerun() {
    let dir = scratch("hardening", "input-hash");
    let trace = "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n\
                 {\"timestamp\": 50, \"input_tokens\": 8, \"output_tokens\": 2}\n";
    std::fs::write(dir.join("trace.jsonl"), trace).expect("trace");
    let spec = write_spec(
        &dir,
        &minimal_spec("").replace(
            "dataset: {kind: random, input_tokens: 8, output_tokens: 8}\n    requests: 8",
            "dataset: {kind: trace, path: trace.jsonl}\n    warmup_requests: 0",
        ),
    );
    let run = |name: &str| {
        let o = sb(&dir)
            .args(["run", "-q", "--results-dir", name])
            .arg(&spec)
            .output()
            .expect("run");
        assert!(o.status.success(), "{o:?}");
        common::walk(&dir.join(name))
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .expect("result")
    };
    let first = run("one");
    std::fs::write(
        dir.join("trace.jsonl"),
        trace.replace("\"output_tokens\": 2}\n{", "\"output_tokens\": 3}\n{"),
    )
    .expect("edit");
    let second = run("two");
    let (code, text) = out_of(
        &sb(&dir)
            .args(["compare", "--no-history"])
            .arg(&first)
            .arg(&second)
            .output()
            .expect("compare"),
    );
    assert_eq!(code, 0, "{text}");
    // Before: the runs read as comparable.
    assert!(text.contains("provenance.inputs[trace.jsonl]"), "{text}");
    let anew: Vec<std::ffi::OsString> = ["--spec-dir", ".", "--results-dir", "three", "-q"]
        .iter()
        .map(Into::into)
        .collect();
    let with: Vec<std::ffi::OsString> = vec!["--with".into(), second.clone().into()];
    for extra in [anew, with] {
        let (code, text) = out_of(
            &sb(&dir)
                .arg("rerun")
                .arg(&first)
                .args(extra)
                .output()
                .expect("rerun"),
        );
        // Before: re-run on the edited trace and judged against the published values.
        assert_eq!(code, 2, "{text}");
        assert!(
            text.contains("trace.jsonl is not the file the published run read"),
            "{text}"
        );
    }
}
