//! The corpus of bad inputs on the newer surfaces (docs/reliability.md, "Bad input"): sizes
//! beyond servebench's ceilings, trace and prompt files with a bad line, `--set` values, the
//! other tool's import file, a history path that holds nothing. Each is refused with where
//! (the file's own line, or the spec key, or the `--set`) and what to write, by `validate`
//! where no server is needed and by `run` before anything starts; none crashes or hangs.

use std::path::Path;

use crate::common::{repo, sb, scratch, write_spec};

fn spec_file(name: &str) -> String {
    std::fs::read_to_string(repo().join("crates/cli/tests/specs").join(name)).expect("spec")
}

/// `validate` of `text` in `dir`: its exit code and stderr.
fn validate(dir: &Path, text: &str) -> (i32, String) {
    let spec = write_spec(dir, text);
    let out = sb(dir)
        .arg("validate")
        .arg(&spec)
        .output()
        .expect("validate");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sizes_beyond_the_ceilings_are_refused_at_validate_with_the_key_and_the_limit() {
    let dir = scratch("bad_inputs", "ceilings");
    let tiny = spec_file("tiny-ab.yaml");
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "a prompt length",
            tiny.replace("input_tokens: 16", "input_tokens: 2000000000"),
            "spec.workload.dataset.input_tokens",
            "2,000,000,000 tokens in a prompt or an answer: above servebench's ceiling of 16,777,216",
        ),
        (
            "a request count",
            tiny.replace("requests: 8", "requests: 4000000000"),
            "spec.workload.requests",
            "4,000,000,000 requests in a trial: above servebench's ceiling of 10,000,000",
        ),
        (
            "a trial's prompt tokens",
            tiny.replace("input_tokens: 16", "input_tokens: 1000000")
                .replace("requests: 8", "requests: 5000"),
            "spec.workload.requests",
            "prompt tokens in a trial (5,001 requests of up to 1,000,000 tokens",
        ),
        (
            "trials per cell",
            tiny.replace("count: 2", "count: 1000000"),
            "spec.trials.count",
            "1,000,000 trials per cell: above servebench's ceiling of 1,000",
        ),
        (
            "a sequential budget",
            spec_file("sequential.yaml").replace("max: 10,", "max: 4000000000,"),
            "spec.trials.until_decided.max",
            "4,000,000,000 trials per cell",
        ),
        (
            "a search's rounds",
            spec_file("search.yaml").replace("max_rounds: 6", "max_rounds: 4000000000"),
            "spec.search.max_rounds",
            "4,000,000,000 server starts per variant: above servebench's ceiling of 100",
        ),
        (
            "a trial by duration at a huge rate",
            tiny.replace("requests: 8", "duration: 1000s\n    request_rate: 1000000"),
            "spec.workload.duration",
            "1,000,000,000 requests in a trial (1000 s at 1000000 requests/s)",
        ),
    ];
    for (what, text, key, message) in cases {
        let (code, err) = validate(&dir, &text);
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(&format!("at key: {key}")), "{what}: {err}");
        assert!(err.contains(message), "{what}: {err}");
        assert!(err.contains("hint:"), "{what}: {err}");
    }
}

/// A one-variant trace spec on the simulator replaying `trace.jsonl` beside it.
fn trace_spec(format: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: bad-trace}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - {{name: base, baseline: true}}
  workload:
    dataset:
      kind: trace
      path: trace.jsonl
      trace: {{format: {format}}}
    request_timeout: 20s
  trials: {{count: 1}}
"#
    )
}

const GOOD_LINE: &str = r#"{"timestamp": 0, "input_tokens": 8, "output_tokens": 2}"#;

#[test]
fn bad_trace_lines_are_refused_at_their_line_by_validate_and_before_run_starts_anything() {
    let dir = scratch("bad_inputs", "trace");
    let cases = [
        (
            "a prompt of 2,000,000,000 tokens (aborted the process when built)",
            r#"{"timestamp": 5, "input_tokens": 2000000000, "output_tokens": 2}"#,
            "trace.jsonl:2: error: `input_tokens` 2,000,000,000 is above servebench's ceiling",
        ),
        (
            "a timestamp of 1e300 (waited for ever)",
            r#"{"timestamp": 1e300, "input_tokens": 8, "output_tokens": 2}"#,
            "trace.jsonl:2: error: timestamp 1e300 ms is too large",
        ),
        (
            "40 days after the first request",
            r#"{"timestamp": 3456000000, "input_tokens": 8, "output_tokens": 2}"#,
            "trace.jsonl:2: error: timestamp 3456000000 ms is 40 days after the trace's first",
        ),
        (
            "a missing field",
            r#"{"timestamp": 5, "input_tokens": 8}"#,
            "trace.jsonl:2: error: missing field `output_tokens`",
        ),
    ];
    for (what, line, want) in cases {
        std::fs::write(dir.join("trace.jsonl"), format!("{GOOD_LINE}\n{line}\n")).expect("trace");
        let (code, err) = validate(&dir, &trace_spec("plain"));
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(want), "{what}: {err}");
        assert!(
            err.contains("read for: workload.dataset.path"),
            "{what}: {err}"
        );
    }
    // Backwards in time (issue 27, item 9): at validate, with both lines.
    std::fs::write(
        dir.join("trace.jsonl"),
        format!(
            "{}\n{GOOD_LINE}\n",
            GOOD_LINE.replace("\"timestamp\": 0", "\"timestamp\": 10")
        ),
    )
    .expect("trace");
    let (code, err) = validate(&dir, &trace_spec("plain"));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("trace.jsonl:2: error: timestamp 0 is earlier than 10 on line 1"),
        "{err}"
    );
    // `run` refuses it before anything starts: no server, no result file.
    std::fs::write(
        dir.join("trace.jsonl"),
        format!(
            "{GOOD_LINE}\n{}\n",
            r#"{"timestamp": 5, "input_tokens": 2000000000, "output_tokens": 2}"#
        ),
    )
    .expect("trace");
    let spec = write_spec(&dir, &trace_spec("plain"));
    let out = sb(&dir)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("trace.jsonl:2: error: `input_tokens` 2,000,000,000"),
        "{err}"
    );
    assert!(err.contains("nothing was started"), "{err}");
    assert!(!dir.join("results").exists(), "nothing is written");
    // A Mooncake line: its own field names.
    std::fs::write(
        dir.join("trace.jsonl"),
        r#"{"timestamp": 0, "input_length": 8, "output_length": 4294967295, "hash_ids": [1]}"#,
    )
    .expect("trace");
    let (code, err) = validate(&dir, &trace_spec("mooncake"));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("trace.jsonl:1: error: `output_length` 4,294,967,295"),
        "{err}"
    );
}

/// A one-variant prompt-file spec (`kind`, `api`) reading `prompts.<ext>` beside it.
fn prompt_spec(kind: &str, api: &str, output: &str) -> String {
    let ext = if kind == "jsonl" { "jsonl" } else { "json" };
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: bad-prompts}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: {api}, model: sim-model, tokenizer: server}}
  variants:
    - {{name: base, baseline: true}}
  workload:
    dataset: {{kind: {kind}, path: prompts.{ext}{output}}}
    requests: 3
    warmup_requests: 0
    request_timeout: 20s
  trials: {{count: 1}}
"#
    )
}

#[test]
fn prompt_file_problems_are_named_at_the_files_own_line_with_what_to_write() {
    let dir = scratch("bad_inputs", "prompts");
    let ok = r#"{"prompt": "one two three", "max_tokens": 4}"#;
    let completions = prompt_spec("jsonl", "openai-completions", "");
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "an empty prompt (was sent and answered 400)",
            format!("{ok}\n\n{{\"prompt\": \"\", \"max_tokens\": 4}}\n{ok}\n").into_bytes(),
            &completions,
            "prompts.jsonl:3: error: the prompt is empty",
        ),
        (
            "a line of invalid UTF-8",
            [ok.as_bytes(), b"\n{\"prompt\": \"caf\xe9\", \"max_tokens\": 4}\n", ok.as_bytes()]
                .concat(),
            &completions,
            "prompts.jsonl:2: error: not UTF-8 text (byte 16",
        ),
        (
            "a chat entry sent to the completions API",
            format!(
                "{ok}\n{{\"messages\": [{{\"role\": \"user\", \"content\": \"hi\"}}], \"max_tokens\": 4}}\n{ok}\n"
            )
            .into_bytes(),
            &completions,
            "prompts.jsonl:2: error: a `messages` entry is a chat conversation, but the spec \
             sends to the completions API",
        ),
        (
            "an entry without an output length, after blank lines (was `entry 1`, 0-based)",
            format!("{ok}\n\n\n{{\"prompt\": \"no length\"}}\n{ok}\n").into_bytes(),
            &completions,
            "prompts.jsonl:4: error: the entry gives no output length",
        ),
        (
            "fewer prompts than a trial sends",
            format!("{ok}\n{ok}\n").into_bytes(),
            &completions,
            "prompts.jsonl: error: the file has 2 usable prompt(s), but a trial at point",
        ),
    ];
    for (what, content, spec, want) in cases {
        std::fs::write(dir.join("prompts.jsonl"), content).expect("prompts");
        let (code, err) = validate(&dir, spec);
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(want), "{what}: {err}");
    }
    // ShareGPT: an entry is named by the line it starts on.
    let sharegpt = prompt_spec("sharegpt", "openai-completions", "");
    std::fs::write(
        dir.join("prompts.json"),
        r#"[
  {"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b c"}]},
  {"conversations": [{"from": "human", "value": "d"}, {"from": "gpt", "value": "e"}]},
  {"conversations": [{"from": "human", "value": "f"}]}
]"#,
    )
    .expect("sharegpt");
    let (code, err) = validate(&dir, &sharegpt);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("prompts.json: warning: 1 of 3 entries are skipped"),
        "{err}"
    );
    assert!(err.contains("has 2 usable prompt(s), but a trial"), "{err}");
    // A JSON syntax error is at its line and column.
    std::fs::write(dir.join("prompts.json"), "[\n  {\"conversations\": [}\n]").expect("bad");
    let (code, err) = validate(&dir, &sharegpt);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("prompts.json:2: error:"), "{err}");
}

#[test]
fn set_values_are_read_as_a_spec_would_be_and_errors_name_the_set() {
    let dir = scratch("bad_inputs", "set");
    let spec = write_spec(&dir, &spec_file("tiny-ab.yaml"));
    // `1e3` is a whole number (YAML reads it as 1000.0): it was refused as "invalid type:
    // floating point `1000.0`, expected u32" at the document, naming no `--set`.
    let out = sb(&dir)
        .args(["run", "--quiet", "--set", "workload.requests=4e0"])
        .args(["-c", "1", "--trials", "1"])
        .arg(&spec)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let r = crate::common::read_json(&crate::common::result_file(&dir));
    assert_eq!(r["trials"][0]["summary"]["all"]["requests"], 4);
    // A value the typed spec cannot hold, which the schema passes: the `--set` is named.
    let out = sb(&dir)
        .args(["run", "--set", "workload.requests=5000000000"])
        .arg(&spec)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`--set workload.requests=5000000000`"),
        "{err}"
    );
}

#[test]
fn import_refuses_the_other_tools_file_and_says_which_it_is() {
    let dir = scratch("bad_inputs", "import");
    let fixture = |name: &str| repo().join("crates/cli/tests/fixtures/import").join(name);
    for (asked, file, found) in [
        (
            "sglang",
            "vllm-bench-serve.json",
            "a vLLM `vllm bench serve` result",
        ),
        (
            "sglang",
            "vllm-append-result.jsonl",
            "a vLLM `vllm bench serve` result",
        ),
        (
            "vllm",
            "sglang-bench-serving.jsonl",
            "an SGLang `bench_serving` result",
        ),
    ] {
        let out = sb(&dir)
            .args(["import", asked])
            .arg(fixture(file))
            .args(["--model", "m", "--stdout"])
            .output()
            .expect("import");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{asked} {file}: {err}");
        assert!(err.contains(&format!("this is {found}")), "{err}");
        let other = if asked == "vllm" { "sglang" } else { "vllm" };
        assert!(
            err.contains(&format!("`servebench import {other} ")),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "nothing imported");
    }
}

#[test]
fn history_fails_on_a_path_or_git_range_that_holds_nothing() {
    let dir = scratch("bad_inputs", "history");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    let results = dir.join("results/sim");
    std::fs::create_dir_all(&results).expect("mkdir");
    std::fs::write(
        results.join("run.json"),
        include_str!("../../../history/tests/fixtures/run.json"),
    )
    .expect("run");
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "a run"]);
    // A typo in the path: it read 0 runs and passed the gate with exit 0.
    let out = sb(&dir)
        .args(["history", "--git", "HEAD", "reslts/", "--fail-on", "step"])
        .output()
        .expect("history");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("git HEAD reslts/ holds no servebench result"),
        "{err}"
    );
    // The right path reads the run.
    sb(&dir)
        .args(["history", "--git", "HEAD", "results", "--fail-on", "step"])
        .assert()
        .code(0);
    // A folder with no result in the working tree, beside one with a run.
    std::fs::create_dir_all(dir.join("empty")).expect("mkdir");
    std::fs::write(dir.join("empty/notes.json"), "[1]").expect("write");
    let out = sb(&dir)
        .args(["history", "results", "empty", "--fail-on", "step"])
        .output()
        .expect("history");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("empty holds no servebench result: none of its 1"),
        "{err}"
    );
}

#[test]
fn a_trace_longer_than_the_servers_context_is_refused_before_its_prompts_are_built() {
    // Three requests of 16 million tokens against a server that takes 256: fitting those
    // prompts means building hundreds of megabytes of text and sending it to /tokenize (the
    // simulator refuses such a body, HTTP 413, so the trial failed with that); the planned
    // lengths are checked against the server's limit first, and nothing is built.
    let dir = scratch("bad_inputs", "trace-context");
    let line = |t: u32| {
        format!("{{\"timestamp\": {t}, \"input_tokens\": 16000000, \"output_tokens\": 16}}\n")
    };
    std::fs::write(
        dir.join("trace.jsonl"),
        [line(0), line(5), line(9)].concat(),
    )
    .expect("trace");
    let spec = write_spec(
        &dir,
        &trace_spec("plain").replace(
            "--preset, fast]",
            "--preset, fast, --max-model-len, \"256\"]",
        ),
    );
    let started = std::time::Instant::now();
    let out = sb(&dir)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let r = crate::common::read_json(&crate::common::result_file(&dir));
    let why = r["trials"][0]["failure"]
        .as_str()
        .expect("failed")
        .to_owned();
    assert!(
        why.contains("3 of 3 requests need more tokens than the server takes")
            && why.contains("16000000 prompt + 16 output = 16000016 tokens")
            && why.contains("nothing was sent"),
        "{why}"
    );
}
