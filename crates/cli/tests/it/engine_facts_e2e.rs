//! Issue 49's engine facts end to end: `validate` warns, before any GPU time, where a spec's
//! rule or request field cannot hold on the target engine (TGI's `/info` holds no launcher
//! flags; TGI drops `chat_template_kwargs`); and runs against the simulator's personalities
//! read what each engine really does (llama.cpp b11434 and TGI count chat prompts; TGI's
//! finish words are exported in one vocabulary; a TensorRT-LLM chat stream cut by a
//! generation error is the server's failure). The facts, their files and lines:
//! crates/engines/src/{tgi,llamacpp,trtllm}/facts.rs and docs/engines.md.

use serde_json::Value;

use crate::common::{result_file, sb, write_spec};

/// A spec launching `servebench sim --engine ENGINE SIM_ARGS` for `api`, with `extra`
/// inserted under `spec:` (variants, verify rules).
fn spec(engine: &str, sim_args: &str, api: &str, variants: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: facts}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --engine, {engine}{sim_args}]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
  target: {{api: {api}, model: sim-model, tokenizer: server, engine: {engine}}}
  variants:
{variants}
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 6}}
    requests: 12
    ignore_eos: false
  trials: {{count: 1}}
"#
    )
}

const ONE: &str = "    - {name: a, baseline: true}";

/// `servebench ARGS spec` in `dir`: the exit code and stdout + stderr.
fn servebench(
    dir: &std::path::Path,
    args: &[&str],
    spec: &std::path::Path,
) -> (Option<i32>, String) {
    let out = sb(dir).args(args).arg(spec).output().expect("servebench");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

/// The 1-based line and column of the first line of `text` that starts (after its indent)
/// with `start`.
fn at(text: &str, start: &str) -> String {
    let (n, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting `{start}`"));
    format!(":{}:{}", n + 1, l.len() - l.trim_start().len() + 1)
}

/// The measured requests of the run in `dir`, as JSON.
fn requests(dir: &std::path::Path) -> Vec<Value> {
    let result = result_file(dir);
    servebench_result::read_requests(&servebench_result::sidecar_path(&result))
        .expect("the sidecar")
        .into_iter()
        .filter(|l| !l.warmup)
        .map(|l| serde_json::to_value(&l.record).expect("json"))
        .collect()
}

#[test]
fn validate_warns_where_tgi_drops_chat_template_kwargs() {
    let dir = tempfile::tempdir().expect("tmp");
    let variants = "    - name: think\n      baseline: true\n      request_body:\n        chat_template_kwargs: {enable_thinking: true}\n    - name: nothink\n      request_body:\n        chat_template_kwargs: {enable_thinking: false}";
    let text = spec("tgi", "", "openai-chat", variants);
    let path = write_spec(dir.path(), &text);
    let (code, out) = servebench(dir.path(), &["validate"], &path);
    assert_eq!(code, Some(0), "warnings only: {out}");
    let first = at(&text, "chat_template_kwargs: {enable_thinking: true}");
    assert!(
        out.contains(&first)
            && out.contains("TGI drops `chat_template_kwargs`")
            && out.contains("measure one configuration twice")
            && out.contains("--tokenizer-config-path"),
        "{out}"
    );
    assert_eq!(
        out.matches("TGI drops `chat_template_kwargs`").count(),
        2,
        "one warning per variant: {out}"
    );
    // SGLang takes the field: no such warning.
    let sg = write_spec(dir.path(), &text.replace("tgi", "sglang"));
    let (_, out) = servebench(dir.path(), &["validate"], &sg);
    assert!(!out.contains("drops `chat_template_kwargs`"), "{out}");
}

#[test]
fn validate_warns_where_a_tgi_server_arg_rule_cannot_hold() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = spec("tgi", "", "openai-completions", ONE).replace(
        "    readiness:",
        "    verify:\n      - server_arg: {name: quantize, equals: fp8}\n      - server_arg: {name: max_concurrent_requests, equals: 128}\n    readiness:",
    );
    let path = write_spec(dir.path(), &text);
    let (code, out) = servebench(dir.path(), &["validate"], &path);
    assert_eq!(code, Some(0), "a warning: {out}");
    let line = at(&text, "- server_arg: {name: quantize");
    let line = line.rsplit_once(':').map(|(l, _)| l).unwrap_or_default();
    assert!(
        out.contains(line)
            && out.contains("`quantize` is not one")
            && out.contains("log_contains")
            && out.contains("`max_concurrent_requests`"),
        "{out}"
    );
    assert!(
        !out.contains("`max_concurrent_requests` is not one"),
        "{out}"
    );
}

#[test]
fn llamacpp_counts_chat_prompts_at_input_tokens() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = spec("llamacpp", "", "openai-chat", ONE).replace(
        "    ignore_eos: false\n",
        "    request_body: {chat_template_kwargs: {enable_thinking: false}}\n",
    );
    let path = write_spec(dir.path(), &text);
    let (code, out) = servebench(dir.path(), &["run", "--no-bars"], &path);
    assert_eq!(code, Some(0), "{out}");
    let reqs = requests(dir.path());
    assert!(!reqs.is_empty());
    for r in &reqs {
        assert_eq!(r["input_tokens_exact"], true, "counted by the server: {r}");
        assert_eq!(
            r["expected_input_tokens"], r["usage"]["prompt_tokens"],
            "the count is the engine's: {r}"
        );
    }
}

#[test]
fn tgi_counts_chat_prompts_with_the_fields_it_drops_and_exports_one_finish_vocabulary() {
    let dir = tempfile::tempdir().expect("tmp");
    // An A/B on `enable_thinking`: TGI drops it, so both arms' prompts are counted exactly
    // (and measure one configuration twice, which validate and run say).
    let variants = "    - name: think\n      baseline: true\n      request_body:\n        chat_template_kwargs: {enable_thinking: true}\n    - name: nothink\n      request_body:\n        chat_template_kwargs: {enable_thinking: false}";
    let text = spec("tgi", ", --eos-mean-tokens, \"2\"", "openai-chat", variants);
    let path = write_spec(dir.path(), &text);
    let (code, out) = servebench(dir.path(), &["run", "--no-bars"], &path);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("TGI drops `chat_template_kwargs`"), "{out}");
    for r in requests(dir.path()) {
        assert_eq!(
            r["input_tokens_exact"], true,
            "/chat_tokenize counted it: {r}"
        );
    }
    // Completions: TGI sends `eos_token` at EOS (server.rs:858); exported as `stop`, the
    // engine's word beside it.
    let cdir = tempfile::tempdir().expect("tmp");
    let text = spec(
        "tgi",
        ", --eos-mean-tokens, \"2\"",
        "openai-completions",
        ONE,
    );
    let path = write_spec(cdir.path(), &text);
    let (code, out) = servebench(cdir.path(), &["run", "--no-bars"], &path);
    assert_eq!(code, Some(0), "{out}");
    let reqs = requests(cdir.path());
    let stops: Vec<&Value> = reqs
        .iter()
        .filter(|r| r["finish_reason_sent"] == "eos_token")
        .collect();
    assert!(!stops.is_empty(), "some requests end at EOS: {reqs:?}");
    assert!(
        stops.iter().all(|r| r["finish_reason"] == "stop"),
        "{stops:?}"
    );
    assert!(
        reqs.iter()
            .all(|r| ["stop", "length"].contains(&r["finish_reason"].as_str().unwrap_or(""))),
        "{reqs:?}"
    );
    let csv = sb(cdir.path())
        .args(["export", "--table", "requests"])
        .arg(result_file(cdir.path()))
        .output()
        .expect("export");
    let csv = String::from_utf8_lossy(&csv.stdout);
    let head = csv.lines().next().unwrap_or("");
    assert!(head.contains("finish_reason,finish_reason_sent"), "{head}");
    assert!(csv.contains(",stop,eos_token,"), "{csv}");
}

#[test]
fn a_trtllm_generation_error_is_the_servers_failure_on_both_apis() {
    for (api, kind) in [
        ("openai-chat", "stream_cut_by_server"),
        ("openai-completions", "server_error_event"),
    ] {
        let dir = tempfile::tempdir().expect("tmp");
        let text = spec("trtllm", ", --stream-error-rate, \"1\"", api, ONE);
        let path = write_spec(dir.path(), &text);
        let (_, out) = servebench(dir.path(), &["run", "--no-bars"], &path);
        let reqs = requests(dir.path());
        assert!(!reqs.is_empty(), "{out}");
        for r in &reqs {
            assert_eq!(r["error"], kind, "{api}: {r}");
        }
        if kind == "stream_cut_by_server" {
            let d = reqs[0]["error_detail"].as_str().unwrap_or("");
            assert!(d.contains("TensorRT-LLM ends a chat stream"), "{d}");
        }
    }
}
