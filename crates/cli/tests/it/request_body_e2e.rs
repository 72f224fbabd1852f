//! `workload.request_body` and `variants[].request_body` end to end: the simulator records
//! every generation request's body as received (`--record-requests`), and each variant's
//! requests — warm-up and measured — carry exactly the workload's fields merged with its own
//! (a `null` removing one); an owned field is refused at its line; `target.model: auto`
//! finds the one model of every personality.

use crate::common;
use common::{read_json, result_file, sb, write_spec};
use serde_json::{Value, json};

fn spec(record: &std::path::Path) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: bodies}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --record-requests, "{rec}-${{variant.tag}}"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
  target: {{api: openai-chat, model: sim-model, tokenizer: server}}
  variants:
    - name: think
      baseline: true
      vars: {{tag: a}}
    - name: nothink
      vars: {{tag: b}}
      request_body:
        chat_template_kwargs: {{enable_thinking: false}}
        top_k: null
        stream_options: {{continuous_usage_stats: false}}
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 4}}
    requests: 3
    warmup_requests: 1
    request_body:
      chat_template_kwargs: {{enable_thinking: true, depth: 2}}
      top_k: 20
      stream_options: {{continuous_usage_stats: true}}
    request_body_takes_over: [stream_options]
  trials: {{count: 1}}
"#,
        rec = record.display()
    )
}

/// The recorded bodies of one server, without the fields that differ per request.
fn recorded(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a JSON body a line");
            let m = v.as_object_mut().expect("an object");
            for k in ["messages", "max_tokens"] {
                assert!(m.remove(k).is_some(), "{k} missing: {l}");
            }
            v
        })
        .collect()
}

#[test]
fn each_variant_sends_exactly_the_merged_body() {
    let dir = tempfile::tempdir().expect("tmp");
    let rec = dir.path().join("bodies");
    let path = write_spec(dir.path(), &spec(&rec));
    let run = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(0));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("request_body takes over stream_options"),
        "{said}"
    );
    let base = json!({"model": "sim-model", "stream": true, "temperature": 0.0,
        "ignore_eos": true});
    let with = |extra: Value| {
        let mut b = base.clone();
        for (k, v) in extra.as_object().expect("object") {
            b[k] = v.clone();
        }
        b
    };
    let think = with(json!({
        "chat_template_kwargs": {"enable_thinking": true, "depth": 2},
        "top_k": 20,
        "stream_options": {"include_usage": true, "continuous_usage_stats": true}}));
    let nothink = with(json!({
        "chat_template_kwargs": {"enable_thinking": false, "depth": 2},
        "stream_options": {"include_usage": true, "continuous_usage_stats": false}}));
    for (tag, want) in [("a", &think), ("b", &nothink)] {
        let got = recorded(&dir.path().join(format!("bodies-{tag}")));
        // One warm-up and three measured requests, every one with the same fields.
        assert_eq!(got.len(), 4, "{got:?}");
        for g in &got {
            assert_eq!(g, want, "variant {tag}");
        }
    }
    // The result keeps the spec, request bodies and all (so the hash covers them).
    let r = read_json(&result_file(dir.path()));
    assert_eq!(
        r["spec"]["spec"]["workload"]["request_body_takes_over"],
        json!(["stream_options"])
    );
    assert_eq!(
        r["spec"]["spec"]["variants"][1]["request_body"]["top_k"],
        Value::Null
    );
    // And compare says which owned fields the body took over.
    let out = sb(dir.path())
        .arg("compare")
        .arg(result_file(dir.path()))
        .output()
        .expect("compare");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("request_body set fields servebench otherwise owns (stream_options"),
        "{text}"
    );
}

#[test]
fn an_owned_field_is_refused_at_its_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = spec(&dir.path().join("x")).replace(
        "      top_k: 20\n",
        "      top_k: 20\n      max_tokens: 9\n",
    );
    let path = write_spec(dir.path(), &text);
    let out = sb(dir.path()).arg("validate").arg(&path).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string()
        + &String::from_utf8_lossy(&out.get_output().stdout);
    // `max_tokens` is on line 36 of the spec, indented 6.
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("max_tokens: 9"))
        .expect("line")
        + 1;
    assert!(
        err.contains(&format!(":{line}:7"))
            && err.contains("`max_tokens` is a field servebench sets"),
        "{err}"
    );
    assert!(
        err.contains("request_body_takes_over: [max_tokens]"),
        "{err}"
    );
}

#[test]
fn model_auto_finds_the_one_model_of_every_personality() {
    for engine in [
        "generic",
        "sglang",
        "vllm",
        "llamacpp",
        "tgi",
        "trtllm",
        "transformers",
    ] {
        let dir = tempfile::tempdir().expect("tmp");
        let api = if engine == "transformers" {
            "openai-chat"
        } else {
            "openai-completions"
        };
        let tok = if engine == "transformers" {
            "none"
        } else {
            "server"
        };
        let text = format!(
            r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: auto-{engine}}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --engine, {engine}, --model, served-{engine}]
    readiness: {{http: {{path: /v1/models}}, interval: 20ms, timeout: 20s}}
  target: {{api: {api}, model: auto, tokenizer: {tok}}}
  variants: [{{name: a, baseline: true}}]
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 4}}
    ignore_eos: false
    requests: 2
  trials: {{count: 1}}
"#
        );
        let path = write_spec(dir.path(), &text);
        let out = sb(dir.path()).arg("run").arg(&path).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "{engine}: {err}");
        assert!(
            err.contains(&format!(
                "target.model: auto: the server serves `served-{engine}`"
            )),
            "{engine}: {err}"
        );
        let r = read_json(&result_file(dir.path()));
        let checks = r["preflight"][0]["checks"].to_string();
        assert!(
            checks.contains(&format!("target.model: auto: `served-{engine}`")),
            "{engine}: {checks}"
        );
        let ok = r["trials"][0]["summary"]["all"]["completed"].as_u64();
        assert_eq!(ok, Some(2), "{engine}: {}", r["trials"][0]);
    }
}
