//! Images and any percentile end to end on the simulator: an `image` workload sends its
//! seeded PNGs as `image_url` parts (read back from `--record-requests`), the simulator counts
//! `--image-tokens` per image, and the requests' input tokens are the server's; `ttft_p95`
//! is compared and gated, from the stored histograms.

use crate::common;
use common::{read_json, result_file, sb, write_spec};
use serde_json::Value;

fn image_spec(record: &std::path::Path, metrics: &str, requests: u32) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: images}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --image-tokens, "100", --label, "${{variant.label}}",
           --record-requests, "{rec}-${{variant.label}}"]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
  target: {{api: openai-chat, model: sim-model, tokenizer: server}}
  variants:
    - {{name: a, baseline: true, vars: {{label: a}}}}
    - {{name: b, vars: {{label: b}}}}
  workload:
    dataset:
      kind: image
      input_tokens: 12
      output_tokens: 4
      image: {{count: 2, width: 16, height: 8, format: png}}
    requests: {requests}
    warmup_requests: 1
    max_concurrency: 4
  trials: {{count: 3}}
  compare:
    metrics: [{metrics}]
    gate: {{metrics: [ttft_p95], fail_on: [regressed]}}
"#,
        rec = record.display()
    )
}

#[test]
fn an_image_workload_runs_and_its_input_tokens_are_the_servers() {
    let dir = tempfile::tempdir().expect("tmp");
    let rec = dir.path().join("bodies");
    let path = write_spec(
        dir.path(),
        &image_spec(&rec, "ttft_p95, output_throughput", 90),
    );
    let out = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .output()
        .expect("run");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "run: {text}");
    // Every request of variant a: two PNG data URLs after the text, the same images as b's.
    let bodies = |tag: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.path().join(format!("bodies-{tag}")))
            .expect("recorded")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    let (a, b) = (bodies("a"), bodies("b"));
    assert_eq!(a.len(), 3 * 91, "3 trials of 90 requests and a warm-up");
    for body in &a {
        let parts = body["messages"][0]["content"].as_array().expect("parts");
        assert_eq!(parts.len(), 3, "{body}");
        assert_eq!(parts[0]["type"], "text");
        for p in &parts[1..] {
            assert_eq!(p["type"], "image_url");
            let url = p["image_url"]["url"].as_str().expect("url");
            assert!(
                url.starts_with("data:image/png;base64,iVBORw0KGgo"),
                "{url}"
            );
        }
    }
    let images = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|b| b["messages"][0]["content"][1]["image_url"]["url"].to_string())
            .collect()
    };
    let (ia, ib) = (images(&a), images(&b));
    let mut sa = ia.clone();
    sa.sort();
    let mut sb_ = ib.clone();
    sb_.sort();
    assert_eq!(sa, sb_, "both variants send the same images (paired)");
    sa.dedup();
    assert_eq!(sa.len(), ia.len(), "every request's images are its own");
    // The records: 2 images each, no local estimate, the server's prompt tokens (the text
    // and 100 per image).
    let result = result_file(dir.path());
    let r = read_json(&result);
    let t0 = &r["trials"][0]["summary"];
    assert_eq!(t0["tokens"]["image_requests"], 90, "{t0}");
    let lines = servebench_result::read_requests(&servebench_result::sidecar_path(&result))
        .expect("the sidecar");
    let rec = &lines
        .iter()
        .find(|l| !l.warmup)
        .expect("a measured request")
        .record;
    assert_eq!(rec.images, 2);
    assert_eq!(rec.expected_input_tokens, None);
    let prompt = rec.usage.as_ref().expect("usage").prompt_tokens;
    assert!(prompt > 200 && prompt < 240, "{prompt}");
    // ttft_p95 is compared (from the histograms) and gated.
    let cmp = sb(dir.path())
        .args(["compare", "--json"])
        .arg(&result)
        .output()
        .expect("compare");
    let json: Value = serde_json::from_slice(&cmp.stdout).expect("compare json");
    let s = json.to_string();
    assert!(s.contains("\"ttft_p95\""), "{s}");
    let gated = sb(dir.path())
        .arg("compare")
        .arg(&result)
        .args(["--fail-on", "regressed", "--gate-metric", "ttft_p95"])
        .output()
        .expect("gate");
    assert!(matches!(gated.status.code(), Some(0 | 1)), "{gated:?}");
    let gtext = String::from_utf8_lossy(&gated.stdout);
    assert!(gtext.contains("gate --fail-on regressed"), "{gtext}");
}

#[test]
fn a_percentile_the_requests_cannot_support_is_warned_and_flagged() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = write_spec(
        dir.path(),
        &image_spec(&dir.path().join("x"), "ttft_p95", 20),
    );
    let out = sb(dir.path())
        .arg("validate")
        .arg(&path)
        .output()
        .expect("validate");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("`ttft_p95` needs at least 90 requests per trial"),
        "{text}"
    );
    // An unknown percentile family or level is refused with a suggestion.
    let bad = image_spec(&dir.path().join("x"), "ttft_p100", 20);
    let path = write_spec(dir.path(), &bad);
    let out = sb(dir.path())
        .arg("validate")
        .arg(&path)
        .output()
        .expect("validate");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("unknown metric `ttft_p100`"), "{text}");
}
