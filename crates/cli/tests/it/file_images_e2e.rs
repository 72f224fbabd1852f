//! Images in a `jsonl` prompt file end to end on the simulator: a relative image file, a
//! data URL and an `http(s)` URL arrive as `image_url` parts (read back from
//! `--record-requests`), the file as the data URL of its bytes; the image file is hashed in
//! `provenance.inputs`; a missing file is refused at its line, a completions spec at validate.

use crate::common;
use base64::Engine as _;
use common::{read_json, result_file, sb, write_spec};
use serde_json::Value;

fn spec(record: &std::path::Path, api: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: file-images}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --image-tokens, "50",
           --record-requests, "{rec}"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
  target: {{api: {api}, model: sim-model, tokenizer: server}}
  variants:
    - {{name: a, baseline: true}}
  workload:
    dataset: {{kind: jsonl, path: data/prompts.jsonl}}
    requests: 3
    warmup_requests: 0
    max_concurrency: 1
  trials: {{count: 1}}
"#,
        rec = record.display()
    )
}

/// A 2×2 PNG (the one the file holds).
fn png_bytes() -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(
            "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGNgYGRiZmFlYGPn4OTiBgABOwBDwl3VSwAAAABJRU5ErkJggg==",
        )
        .expect("base64")
}

const DATA_URL: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4wcUFAAJ6AN1nJ0J9AAAAAElFTkSuQmCC";

fn prompts(dir: &std::path::Path, first_image: &str) {
    std::fs::create_dir_all(dir.join("data/img")).expect("mkdir");
    std::fs::write(dir.join("data/img/cat.png"), png_bytes()).expect("png");
    let lines = [
        format!(
            r#"{{"prompt": "describe the picture", "images": ["{first_image}"], "max_tokens": 3}}"#
        ),
        format!(
            r#"{{"messages": [{{"role": "user", "content": [{{"type": "image_url", "image_url": {{"url": "{DATA_URL}"}}}}, {{"type": "text", "text": "what is this"}}]}}], "max_tokens": 4}}"#
        ),
        r#"{"prompt": "and this one", "images": ["https://example.com/dog.jpg"], "max_tokens": 5}"#
            .to_owned(),
    ];
    std::fs::write(dir.join("data/prompts.jsonl"), lines.join("\n") + "\n").expect("jsonl");
}

#[test]
fn jsonl_image_files_urls_and_data_urls_reach_the_server_as_parts() {
    let dir = tempfile::tempdir().expect("tmp");
    prompts(dir.path(), "img/cat.png");
    let rec = dir.path().join("bodies");
    let path = write_spec(dir.path(), &spec(&rec, "openai-chat"));
    let out = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies: Vec<Value> = std::fs::read_to_string(&rec)
        .expect("recorded")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(bodies.len(), 3);
    let by_len = |n: u64| {
        bodies
            .iter()
            .find(|b| b["max_tokens"] == n)
            .unwrap_or_else(|| panic!("max_tokens {n}: {bodies:?}"))["messages"][0]["content"]
            .clone()
    };
    let file_url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png_bytes())
    );
    assert_eq!(
        by_len(3),
        serde_json::json!([{"type": "text", "text": "describe the picture"},
                           {"type": "image_url", "image_url": {"url": file_url}}])
    );
    assert_eq!(
        by_len(4),
        serde_json::json!([{"type": "image_url", "image_url": {"url": DATA_URL}},
                           {"type": "text", "text": "what is this"}]),
        "the line's own order"
    );
    assert_eq!(
        by_len(5),
        serde_json::json!([{"type": "text", "text": "and this one"},
                           {"type": "image_url", "image_url": {"url": "https://example.com/dog.jpg"}}])
    );
    // One image each: the server's prompt tokens (text and 50 per image), no local estimate.
    let result = result_file(dir.path());
    let lines = servebench_result::read_requests(&servebench_result::sidecar_path(&result))
        .expect("the sidecar");
    for l in &lines {
        assert_eq!(l.record.images, 1);
        assert_eq!(l.record.expected_input_tokens, None);
        let prompt = l.record.usage.as_ref().expect("usage").prompt_tokens;
        assert!(prompt > 50, "{prompt}");
    }
    // The image file is an input: hashed with the prompt file.
    let r = read_json(&result);
    let inputs: Vec<&str> = r["provenance"]["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(inputs, ["data/prompts.jsonl", "data/img/cat.png"], "{r}");
    // An edited image is an edited input: `rerun` refuses to measure again, naming it.
    let mut edited = png_bytes();
    edited.push(0);
    std::fs::write(dir.path().join("data/img/cat.png"), edited).expect("edit");
    let rerun = sb(dir.path())
        .args(["rerun", "--quiet"])
        .arg(&result)
        .output()
        .expect("rerun");
    let text = String::from_utf8_lossy(&rerun.stderr);
    assert_ne!(rerun.status.code(), Some(0), "{text}");
    assert!(
        text.contains("data/img/cat.png is not the file the published run read"),
        "{text}"
    );
}

#[test]
fn a_missing_image_is_refused_at_its_line_and_completions_at_validate() {
    let dir = tempfile::tempdir().expect("tmp");
    prompts(dir.path(), "img/gone.png");
    let path = write_spec(dir.path(), &spec(&dir.path().join("x"), "openai-chat"));
    for cmd in ["validate", "run"] {
        let out = sb(dir.path()).arg(cmd).arg(&path).output().expect(cmd);
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{cmd}: {text}");
        assert!(
            text.contains("prompts.jsonl:1: error: image `img/gone.png` cannot be read"),
            "{cmd}: {text}"
        );
        assert!(text.contains("relative to the prompt file"), "{text}");
    }
    prompts(dir.path(), "img/cat.png");
    // The equivalence probe compares text answers: a prompt line with images is refused.
    let eq = spec(&dir.path().join("x"), "openai-chat").replace(
        "  trials:",
        "  equivalence: {prompts_file: data/prompts.jsonl}\n  trials:",
    );
    let out = sb(dir.path())
        .arg("validate")
        .arg(write_spec(dir.path(), &eq))
        .output()
        .expect("validate");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("prompts.jsonl:1: error: the line has images, but the equivalence probe"),
        "{text}"
    );
    let path = write_spec(
        dir.path(),
        &spec(&dir.path().join("x"), "openai-completions"),
    );
    let out = sb(dir.path())
        .arg("validate")
        .arg(&path)
        .output()
        .expect("validate");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("prompts.jsonl:1: error: the entry has images"),
        "{text}"
    );
}

/// An engine whose profile takes no image parts (TGI) is warned at validate, for image lines
/// and for an `image` dataset alike.
#[test]
fn images_for_an_engine_that_takes_none_are_warned() {
    let dir = tempfile::tempdir().expect("tmp");
    prompts(dir.path(), "img/cat.png");
    let tgi = spec(&dir.path().join("x"), "openai-chat")
        .replace("model: sim-model,", "model: sim-model, engine: tgi,");
    let image = tgi.replace(
        "dataset: {kind: jsonl, path: data/prompts.jsonl}",
        "dataset: {kind: image, input_tokens: 8, output_tokens: 4, image: {count: 1, width: 8, \
         height: 8, format: png}}",
    );
    for (text, want) in [
        (
            &tgi,
            "prompts.jsonl:1: warning: the entry has images, but TGI takes no",
        ),
        (&image, "TGI takes no `image_url` parts"),
    ] {
        let path = write_spec(dir.path(), text);
        let out = sb(dir.path())
            .arg("validate")
            .arg(&path)
            .output()
            .expect("validate");
        let all = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{all}");
        assert!(all.contains(want), "{all}");
    }
}
