//! Black-box tests of `validate`, `schema` and `plan`, with the exit codes of docs/architecture.md.

use assert_cmd::Command;
use predicates::prelude::*;

fn sb() -> Command {
    let mut c = Command::cargo_bin("servebench").expect("binary built");
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

#[test]
fn validate_accepts_every_committed_spec() {
    sb().args([
        "validate",
        "specs/sim-ab.yaml",
        "specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml",
    ])
    .assert()
    .code(0)
    .stdout(predicate::str::contains("specs/sim-ab.yaml: valid"));
}

#[test]
fn validate_rejects_minus_one_rate_with_location_and_exit_1() {
    sb().args([
        "validate",
        "crates/spec/tests/fixtures/invalid/01-request-rate-minus-one.yaml",
    ])
    .assert()
    .code(1)
    .stderr(predicate::str::contains(
        "01-request-rate-minus-one.yaml:24:5: error",
    ))
    .stderr(predicate::str::contains("request_rate: inf"));
}

#[test]
fn validate_reports_every_file_and_the_worst_status() {
    let out = sb()
        .args([
            "validate",
            "specs/sim-ab.yaml",
            "crates/spec/tests/fixtures/invalid/09-duplicate-variant.yaml",
            "crates/spec/tests/fixtures/invalid/04-unknown-key-typo.yaml",
        ])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("used twice"), "{stderr}");
    assert!(
        stderr.contains("did you mean `max_concurrency`"),
        "{stderr}"
    );
}

#[test]
fn validate_missing_file_is_an_io_error_exit_2() {
    sb().args(["validate", "specs/does-not-exist.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read spec file"));
}

#[test]
fn unknown_subcommand_is_a_usage_error_exit_2() {
    sb().arg("frobnicate").assert().code(2);
}

#[test]
fn validate_json_lists_diagnostics() {
    let out = sb()
        .args([
            "validate",
            "--json",
            "crates/spec/tests/fixtures/invalid/07-no-baseline.yaml",
        ])
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v[0]["valid"], false);
    assert_eq!(v[0]["diagnostics"][0]["path"], "spec.variants");
    assert_eq!(v[0]["diagnostics"][0]["pos"]["line"], 13);
}

#[test]
fn schema_prints_the_committed_schema() {
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/spec.schema.json"
    ))
    .expect("committed schema");
    sb().arg("schema").assert().code(0).stdout(committed);
}

#[test]
fn schema_metrics_lists_the_catalogue_with_descriptions() {
    let out = sb().args(["schema", "metrics"]).assert().code(0);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let names: Vec<&str> = v
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert!(names.contains(&"ttft_p99") && names.contains(&"output_throughput"));
    let ttft = v
        .as_array()
        .and_then(|a| a.iter().find(|m| m["name"] == "ttft_p99"))
        .expect("ttft_p99");
    assert_eq!(ttft["unit"], "ms");
    assert_eq!(ttft["direction"], "lower_is_better");
    assert!(
        ttft["description"]
            .as_str()
            .is_some_and(|d| d.contains("99th percentile"))
    );
}

#[test]
fn plan_of_the_seed_spec_lists_fifty_trials_in_ten_blocks() {
    let out = sb()
        .args([
            "plan",
            "--json",
            "specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml",
        ])
        .assert()
        .code(0);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v["trial_count"], 50);
    assert_eq!(v["server_starts"], 10);
    assert_eq!(v["blocks"].as_array().map(Vec::len), Some(10));
    assert!(
        v["spec_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:"))
    );
    sb().args(["plan", "specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "50 trials in 10 blocks, 10 server starts",
        ))
        .stdout(predicate::str::contains("spec hash: sha256:"));
}

#[test]
fn plan_of_an_invalid_spec_exits_1() {
    sb().args([
        "plan",
        "crates/spec/tests/fixtures/invalid/02-request-rate-zero.yaml",
    ])
    .assert()
    .code(1);
}

#[test]
fn a_closed_output_pipe_ends_plan_quietly_without_a_panic() {
    // `servebench plan spec | head -0`: the reader is gone before the first line is written
    // (closed before the process starts, so there is no race with its writes).
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["plan", "specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(writer)
        .output()
        .expect("run servebench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // SIGPIPE stays ignored in every command (issue 42): the EPIPE ends the command quietly,
    // exit 0 and nothing on stderr but the spec's own warnings — not a panic (exit 101),
    // not an error, not a death by signal.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !stderr.contains("Broken pipe") && !stderr.contains("Error"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
}

#[test]
fn validate_refuses_a_duration_trial_without_a_request_rate() {
    sb().args(["validate", "crates/cli/tests/specs/duration-trials.yaml"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("duration-trials.yaml:23:"))
        .stderr(predicate::str::contains("needs a request rate"))
        .stderr(predicate::str::contains("give `request_rate` a number"));
}

/// Issue 41, item 11: `validate specs/*.yaml` passes on any machine. The GPU specs' tokenizer
/// is made on the GPU machine by a set-up script the spec names (`spec.setup`): elsewhere it
/// is reported as made by that script, a warning; the main job warns about nothing.
#[test]
fn validate_every_committed_spec_passes_here() {
    let specs: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs"))
        .expect("specs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            format!(
                "specs/{}",
                p.file_name().and_then(|n| n.to_str()).unwrap_or("")
            )
        })
        .collect();
    assert!(specs.len() > 10, "{specs:?}");
    let out = sb().arg("validate").args(&specs).output().expect("runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    assert!(
        stdout.contains("specs/sim-ab.yaml: valid\n"),
        "the main job warns about nothing: {stdout}"
    );
    if !std::path::Path::new("/tmp/servebench-moe/tokenizer.json").exists() {
        assert!(
            err.contains(
                "made by `python3 scripts/gpu/make-random-moe.py /tmp/servebench-moe` (spec.setup)"
            ),
            "{err}"
        );
    }
}

/// Issue 50: whether `validate specs/*.yaml` passes must not depend on what the machine
/// happens to hold. Every file a committed spec reads from outside the repository (a
/// tokenizer made on the GPU machine under /tmp, say) is declared as made by its set-up
/// script, so that `validate` reports it as such wherever it is missing. Before, the MoE
/// kernel spec named `/tmp/servebench-moe/tokenizer.json` undeclared, and the suite passed
/// only where that file had once been made.
#[test]
fn every_committed_spec_declares_the_files_it_reads_from_outside_the_repository() {
    let repo = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .expect("repo");
    let specs = repo.join("specs");
    let mut undeclared = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&specs).expect("specs/").flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let spec = servebench_spec::load(&path).expect("a committed spec parses");
        let setup = spec.file.spec.setup.as_ref();
        for f in servebench_runner::run::input_files(&spec.file, &specs) {
            seen += 1;
            let inside = lexical(&specs.join(&f)).starts_with(&repo);
            if !inside && !setup.is_some_and(|s| s.makes(&f)) {
                undeclared.push(format!("{}: {f}", path.display()));
            }
        }
    }
    assert!(seen > 5, "the specs read files: {seen}");
    assert!(
        undeclared.is_empty(),
        "read from outside the repository but not declared in `spec.setup.makes`: {undeclared:#?}"
    );
}

/// `path` with `.` and `..` taken out by name, as the spec's reader joins them.
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Only a file the spec declares as made by its set-up script is reported as such: any
/// other missing file stays an error.
#[test]
fn a_missing_file_not_declared_as_set_up_stays_an_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = |setup: &str| {
        format!(
            "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {{name: t}}\nspec:\n  \
             target: {{model: m, base_url: \"http://127.0.0.1:1\", tokenizer: local, \
             tokenizer_path: /tmp/servebench-t41-absent/tokenizer.json}}\n  variants: [{{name: \
             a, baseline: true}}]\n  workload:\n    dataset: {{kind: random, input_tokens: 8, \
             output_tokens: 4}}\n    requests: 4\n{setup}"
        )
    };
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p
    };
    let undeclared = write("undeclared.yaml", spec(""));
    let other = write(
        "other.yaml",
        spec("  setup: {script: make-it, makes: [/tmp/servebench-t41-absent/other.json]}\n"),
    );
    let declared = write(
        "declared.yaml",
        spec("  setup: {script: make-it, makes: [/tmp/servebench-t41-absent/tokenizer.json]}\n"),
    );
    for p in [&undeclared, &other] {
        sb().arg("validate")
            .arg(p)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "tokenizer.json: error: cannot read it",
            ));
    }
    sb().arg("validate")
        .arg(&declared)
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "tokenizer.json: warning: not here yet: made by `make-it` (spec.setup)",
        ));
}
