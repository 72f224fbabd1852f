//! A launched server that serves only HTTPS (the simulator with `--tls-cert`/`--tls-key`),
//! end to end: `target.base_url: https://127.0.0.1:${port}` is resolved for each start, and
//! the readiness probe, the verify rules, the server-info read-back, `/tokenize` and the load
//! all go there over TLS, trusting `target.tls.ca_file`. Without the CA the run is refused at
//! the first probe with what to set, not after the readiness timeout.

use std::path::Path;

use assert_cmd::Command;

use crate::common::{read_json, result_file};

/// A CA and a certificate for 127.0.0.1 signed by it, written to `dir` (cert.pem, key.pem,
/// ca.pem: the names the spec uses).
fn pki(dir: &Path) {
    servebench_sim::TestPki::generate()
        .expect("pki")
        .write(dir)
        .expect("written");
}

/// The spec, in `dir`, with or without `target.tls.ca_file`.
fn spec(dir: &Path, trust: bool) -> std::path::PathBuf {
    let tls = if trust {
        "\n    tls: {ca_file: ca.pem}"
    } else {
        ""
    };
    let text = format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: https-launched}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --tls-cert, cert.pem, --tls-key, key.pem]
    working_dir: .
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 60s}}
    verify:
      - json: {{path: /v1/sim/info, pointer: /label, equals: "${{variant.label}}"}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target:
    api: openai-completions
    model: sim-model
    tokenizer: server
    base_url: "https://127.0.0.1:${{port}}"{tls}
  variants:
    - name: a
      baseline: true
      server: {{args: [--label, a]}}
      vars: {{label: a}}
  workload:
    dataset: {{kind: random, input_tokens: 24, output_tokens: 8}}
    requests: 24
    warmup_requests: 2
    max_concurrency: 4
    request_timeout: 20s
  trials: {{count: 1}}
"#
    );
    let path = dir.join("https.yaml");
    std::fs::write(&path, text).expect("write spec");
    path
}

fn run(dir: &Path, spec: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("servebench")
        .expect("binary")
        .current_dir(dir)
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(spec)
        .assert()
}

#[test]
fn a_launched_https_only_server_is_probed_verified_and_measured_over_tls() {
    let dir = tempfile::tempdir().expect("tmp");
    pki(dir.path());
    let spec = spec(dir.path(), true);
    run(dir.path(), &spec).code(0);
    let path = result_file(dir.path());
    let result = read_json(&path);
    let server = &result["servers"][0];
    assert!(server["error"].is_null(), "{server}");
    assert_eq!(server["verify"][0]["passed"], true, "{server}");
    assert!(
        server["info"]["endpoint"].is_string(),
        "read back: {server}"
    );
    let trial = &result["trials"][0];
    assert_eq!(trial["status"], "ok", "{trial}");
    assert_eq!(trial["summary"]["all"]["completed"], 24, "{trial}");
    // Prompts were fitted through the server's /tokenize, over TLS too: exact lengths.
    let lines = crate::common::faults::sidecar(&path);
    assert_eq!(lines.len(), 26, "24 measured + 2 warm-up");
    for l in &lines {
        assert_eq!(l["input_tokens_exact"], true, "{l}");
        assert_eq!(l["expected_input_tokens"], 24, "{l}");
        assert!(l["error"].is_null(), "{l}");
    }
}

#[test]
fn a_launched_server_whose_certificate_does_not_verify_is_refused_at_the_first_probe() {
    let dir = tempfile::tempdir().expect("tmp");
    pki(dir.path());
    let spec = spec(dir.path(), false);
    let out = run(dir.path(), &spec).failure();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.get_output().stdout),
        String::from_utf8_lossy(&out.get_output().stderr)
    );
    // Refused at the first probe that reached the server (the readiness timeout's message
    // would say "not ready after 60.0 s").
    assert!(
        text.contains("certificate is not trusted") && text.contains("target.tls.ca_file"),
        "{text}"
    );
    assert!(!text.contains("not ready after"), "{text}");
}
