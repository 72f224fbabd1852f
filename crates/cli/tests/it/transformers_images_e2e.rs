//! Images on a real engine: `transformers serve` 5.24.0 on the CPU, serving the tiny
//! vision-language model `scripts/setup-transformers` makes (`tiny-vlm`: Llava of the tiny LM
//! and a 1-layer CLIP; every image is 16 prompt tokens, whatever its size), takes an `image`
//! workload's `image_url` parts (cli/serving/utils.py `get_processor_inputs_from_messages`,
//! the VLM modality). Each request's input tokens are the server's `usage.prompt_tokens`, and
//! they are what the request carried: the text servebench fitted exactly, the chat template's
//! tokens, and 16 per image (the set-up measured both through the model's processor).
//!
//! Needs `scripts/setup-transformers`; under CI a missing set-up fails the test.

use std::path::Path;

use serde_json::Value;

use crate::common::{self, read_json, result_file, sb, scratch};
use crate::transformers_e2e::require_transformers;

const SPEC: &str = r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: transformers-cpu-images}
spec:
  server:
    command: ["${env.TRANSFORMERS_SERVE}"]
    args: [tiny-vlm, --host, 127.0.0.1, --port, "${port}", --device, cpu]
    env: {OMP_NUM_THREADS: "1"}
    readiness:
      http:
        method: POST
        path: /v1/chat/completions
        body: {messages: [{role: user, content: ready}], max_tokens: 1}
      interval: 500ms
      timeout: 180s
    verify:
      - log_contains: "[Request received] Model: tiny-vlm"
    stop: {signal: SIGTERM, grace: 10s}
  target: {api: openai-chat, engine: transformers, model: tiny-vlm, tokenizer: local,
           tokenizer_path: tokenizer.json}
  variants:
    - {name: a, baseline: true}
  workload:
    dataset:
      kind: image
      input_tokens: 12
      output_tokens: 4
      image: {count: 2, width: 24, height: 16, format: png}
    seed: 1
    requests: 6
    warmup_requests: 1
    max_concurrency: 2
    request_timeout: 120s
  trials: {count: 1}
"#;

#[test]
fn an_image_workloads_prompt_tokens_are_the_text_the_template_and_each_image() {
    let Some(env) = require_transformers() else {
        return;
    };
    let vlm = Path::new(&env["TRANSFORMERS_MODEL_DIR"]).with_file_name("tiny-vlm");
    let info_path = vlm.join("servebench-tiny-vlm.json");
    if !info_path.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: CI must run scripts/setup-transformers (it makes tiny-vlm)",
            info_path.display()
        );
        eprintln!("NOT RUN: no tiny-vlm here; run scripts/setup-transformers again");
        return;
    }
    let info = read_json(&info_path);
    let per_image = info["image_tokens"].as_u64().expect("image_tokens");
    let template = info["chat_template_tokens"].as_u64().expect("template");
    let dir = scratch("transformers_images_e2e", "images");
    let spec = common::write_spec(&dir, SPEC);
    let out = sb(&dir)
        .envs(&env)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .arg("--set")
        .arg(format!(
            "target.tokenizer_path={}",
            env["TRANSFORMERS_TOKENIZER"]
        ))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "servebench run failed:\n{stderr}");
    let file = result_file(&dir);
    let r = read_json(&file);
    let lines = common::faults::sidecar_lines(
        &file.with_file_name(r["requests_file"].as_str().expect("sidecar")),
    );
    let measured: Vec<&Value> = lines.iter().filter(|l| l["warmup"] == false).collect();
    assert_eq!(measured.len(), 6, "{lines:?}");
    for l in measured {
        assert!(l["error"].is_null(), "a failed request: {l}");
        assert_eq!(l["images"], 2, "{l}");
        assert!(
            l["expected_input_tokens"].is_null(),
            "no local estimate: {l}"
        );
        assert_eq!(
            l["usage"]["prompt_tokens"].as_u64(),
            Some(12 + template + 2 * per_image),
            "usage.prompt_tokens vs the text, the chat template and {per_image} per image: {l}"
        );
    }
    let t0 = &r["trials"][0]["summary"];
    assert_eq!(t0["tokens"]["image_requests"], 6, "{t0}");
}
