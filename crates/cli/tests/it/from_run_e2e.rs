//! `servebench from` → `run` with the peers' extra-body and image flags: SGLang's
//! `--extra-request-body` and `--dataset-name image`, vLLM's `--extra-body`, `--dataset-name
//! random-mm` and `custom_image`, each translated and run against a simulator that records
//! what it received.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::common::sb;
use serde_json::Value;

/// A simulator on a free port, recording the bodies it receives to `record`.
fn sim(record: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["sim", "--preset", "fast", "--record-requests"])
        .arg(record)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sim starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let url = line
        .split_whitespace()
        .last()
        .expect("a URL")
        .trim()
        .to_owned();
    (child, url)
}

fn from_then_run(tool: &str, argv: &str) -> Vec<Value> {
    from_then_run_in(&tempfile::tempdir().expect("tmp"), tool, argv)
}

fn from_then_run_in(dir: &tempfile::TempDir, tool: &str, argv: &str) -> Vec<Value> {
    let out = sb(dir.path())
        .args(["from", tool, "--", argv])
        .output()
        .expect("from");
    let spec = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{spec}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.path().join("from.yaml");
    std::fs::write(&path, &spec).expect("write");
    let record = dir.path().join("bodies");
    let (mut child, url) = sim(&record);
    let run = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .args(["--set", &format!("target.base_url={url}")])
        .args(["--set", "trials.count=1"])
        .output()
        .expect("run");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{spec}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_to_string(&record)
        .expect("recorded")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

#[test]
fn sglang_extra_request_body_and_images_run() {
    let bodies = from_then_run(
        "sglang",
        "python3 -m sglang.bench_serving --backend sglang-oai-chat --model sim-model \
         --dataset-name image --image-count 2 --image-resolution 8x16 --image-format png \
         --random-input-len 8 --random-output-len 4 --random-range-ratio 1 --num-prompts 3 \
         --extra-request-body '{\"top_k\": 5, \"temperature\": 0.5}'",
    );
    // Three measured requests and bench_serving's one warm-up.
    assert_eq!(bodies.len(), 4, "{bodies:?}");
    for b in &bodies {
        assert_eq!(b["top_k"], 5, "{b}");
        assert_eq!(b["temperature"], 0.5, "taken over: {b}");
        let parts = b["messages"][0]["content"].as_array().expect("parts");
        assert_eq!(parts.len(), 3, "{b}");
        assert_eq!(parts[1]["type"], "image_url");
    }
}

#[test]
fn vllm_extra_body_runs() {
    let bodies = from_then_run(
        "vllm",
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --model sim-model --dataset-name random --random-input-len 8 --random-output-len 4 \
         --num-prompts 3 --extra-body '{\"chat_template_kwargs\": {\"enable_thinking\": false}}'",
    );
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    for b in &bodies {
        assert_eq!(
            b["chat_template_kwargs"],
            serde_json::json!({"enable_thinking": false}),
            "{b}"
        );
    }
}

#[test]
fn vllm_random_mm_runs_with_its_images() {
    let bodies = from_then_run(
        "vllm",
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --model sim-model --dataset-name random-mm --random-input-len 8 --random-output-len 4 \
         --num-prompts 3 --random-mm-base-items-per-request 2 \
         --random-mm-bucket-config '{(16, 8, 1): 1.0}'",
    );
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    for b in &bodies {
        let parts = b["messages"][0]["content"].as_array().expect("parts");
        assert_eq!(parts.len(), 3, "{b}");
        assert_eq!(parts[0]["type"], "text");
        for p in &parts[1..] {
            let url = p["image_url"]["url"].as_str().expect("url");
            assert!(url.starts_with("data:image/png;base64,"), "{url}");
        }
        assert_eq!(b["ignore_eos"], true, "vLLM forces it for random-mm");
    }
}

#[test]
fn vllm_custom_image_runs_with_the_files_images() {
    let dir = tempfile::tempdir().expect("tmp");
    // vLLM's custom_image layouts: prompt + image_files, and a content array.
    std::fs::write(
        dir.path().join("imgs.jsonl"),
        "{\"prompt\": \"what is it\", \"image_files\": [\"https://example.com/a.png\"]}\n\
         {\"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"https://example.com/b.png\"}}, \
         {\"type\": \"text\", \"text\": \"and this\"}]}\n",
    )
    .expect("jsonl");
    let bodies = from_then_run_in(
        &dir,
        "vllm",
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --model sim-model --dataset-name custom_image --dataset-path imgs.jsonl \
         --custom-output-len 4 --num-prompts 2 --custom-ensure-client-side-data",
    );
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let mut contents: Vec<String> = bodies
        .iter()
        .map(|b| b["messages"][0]["content"].to_string())
        .collect();
    contents.sort();
    assert_eq!(
        contents,
        [
            r#"[{"image_url":{"url":"https://example.com/b.png"},"type":"image_url"},{"text":"and this","type":"text"}]"#,
            r#"[{"text":"what is it","type":"text"},{"image_url":{"url":"https://example.com/a.png"},"type":"image_url"}]"#,
        ]
    );
}
