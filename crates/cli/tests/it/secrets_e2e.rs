//! An authenticated endpoint end to end: the spec reads the API key from the environment
//! (`target.api_key_env`) and also hands it to the server as a flag (`--api-key
//! ${env.NAME}`); the simulator then refuses requests without `Authorization: Bearer`. The
//! run must succeed, and the key must appear in no file servebench wrote (result, sidecar,
//! server logs, report) and in none of its output.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use assert_cmd::Command;

use crate::common;
use common::{read_json, result_file, walk, write_spec};

const KEY: &str = "sk-sbtest-7Qx9Lr2mZc4Vt8Hn";
const ENV: &str = "SERVEBENCH_TEST_SECRET_KEY";
/// A header value read from the environment (`target.headers`): redacted like the key.
const HEADER: &str = "hdr-sbtest-4Kp8Wd1sQe6Zy";
const HEADER_ENV: &str = "SERVEBENCH_TEST_SECRET_HEADER";

/// `servebench` in `dir` with the key in its environment.
fn sb(dir: &Path) -> Command {
    let mut c = common::sb(dir);
    c.env(ENV, KEY);
    c.env(HEADER_ENV, HEADER);
    c
}

/// Runs `c`, returns stdout + stderr, asserting the exit code.
fn output(c: &mut Command, code: i32) -> String {
    let a = c.assert().code(code);
    let o = a.get_output();
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn the_api_key_authenticates_every_request_and_is_written_nowhere() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: secret-key}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --api-key, "${{env.{ENV}}}"]
    readiness: {{http: {{path: /health}}, interval: 10ms, timeout: 20s}}
    verify:
      - log_contains: "api_key=required"
    stop: {{signal: SIGTERM, grace: 5s}}
  target:
    api: openai-chat
    model: sim-model
    tokenizer: server
    api_key_env: {ENV}
    headers: {{X-Bench-Token: "${{env.{HEADER_ENV}}}"}}
  variants:
    - name: a
      baseline: true
      server: {{args: [--label, a]}}
    - name: b
      server: {{args: [--label, b]}}
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: 8
    warmup_requests: 1
  sweep: {{max_concurrency: [2]}}
  trials: {{count: 2}}
"#
    );
    let spec_path = write_spec(dir.path(), &spec);
    let mut said = String::new();
    said += &output(sb(dir.path()).arg("validate").arg(&spec_path), 0);
    said += &output(sb(dir.path()).args(["plan", "--json"]).arg(&spec_path), 0);
    said += &output(sb(dir.path()).args(["run", "--no-bars"]).arg(&spec_path), 0);
    let result = result_file(dir.path());
    let r = read_json(&result);
    // Every request was authenticated: none failed (the simulator answers 401 without it).
    for t in r["trials"].as_array().expect("trials") {
        assert_eq!(t["status"], "ok", "{t}");
        assert_eq!(t["summary"]["all"]["failed"], 0, "{t}");
    }
    // The flag was recorded, its value redacted.
    let argv = r["servers"][0]["argv"].to_string();
    assert!(argv.contains("--api-key"), "{argv}");
    said += &output(sb(dir.path()).arg("compare").arg(&result), 0);
    said += &output(sb(dir.path()).arg("compare").arg(&result).arg("--json"), 0);
    said += &output(
        sb(dir.path())
            .arg("report")
            .arg(&result)
            .arg("-o")
            .arg(dir.path().join("report")),
        0,
    );
    assert!(!said.contains(KEY), "the key was printed:\n{said}");
    assert!(!said.contains(HEADER), "the header was printed:\n{said}");

    let files = walk(dir.path());
    let kinds = |ext: &str| {
        files
            .iter()
            .filter(|p| p.to_string_lossy().ends_with(ext))
            .count()
    };
    assert!(
        kinds(".requests.jsonl.zst") == 1 && kinds(".log") == 4,
        "{files:?}"
    );
    assert!(
        kinds("report.md") == 1 && kinds("report.html") == 1,
        "{files:?}"
    );
    for f in &files {
        if f == &spec_path {
            continue;
        }
        let mut bytes = std::fs::read(f).expect("read");
        // The sidecar is compressed: look into what it holds.
        if f.to_string_lossy().ends_with(".zst") {
            bytes = zstd_decoded(f);
        }
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key is in {}",
            f.display()
        );
        assert!(
            !bytes.windows(HEADER.len()).any(|w| w == HEADER.as_bytes()),
            "the header value is in {}",
            f.display()
        );
    }
}

#[test]
fn the_simulator_refuses_generation_without_the_key_and_keeps_probes_open() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut config = servebench_sim::SimConfig::from_preset(servebench_sim::Preset::Fast);
        config.api_key = Some(servebench_sim::ApiKey(KEY.to_owned()));
        let sim = servebench_sim::spawn(config).await.expect("sim");
        let addr = sim.addr();
        let status = move |req: String| {
            let mut s = TcpStream::connect(addr).expect("connect");
            s.write_all(req.as_bytes()).expect("write");
            let mut buf = [0u8; 12];
            s.read_exact(&mut buf).expect("status line");
            String::from_utf8_lossy(&buf[9..12]).into_owned()
        };
        let body = r#"{"model":"sim-model","prompt":"a b c","max_tokens":2}"#;
        let post = move |auth: &str| {
            format!(
                "POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{auth}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        let (none, wrong, right, health) = tokio::task::spawn_blocking(move || {
            (
                status(post("")),
                status(post("authorization: Bearer nope\r\n")),
                status(post(&format!("authorization: Bearer {KEY}\r\n"))),
                status("GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".into()),
            )
        })
        .await
        .expect("client");
        assert_eq!((none.as_str(), wrong.as_str()), ("401", "401"));
        assert_eq!(right, "200");
        assert_eq!(health, "200");
        sim.shutdown().await.expect("shutdown");
    });
}

/// What a compressed sidecar holds, as JSON lines (the request sidecar, or the telemetry
/// sidecar a default scrape of the engine's metrics writes).
fn zstd_decoded(path: &std::path::Path) -> Vec<u8> {
    if path.to_string_lossy().ends_with(".telemetry.jsonl.zst") {
        return servebench_result::read_telemetry(path)
            .expect("a readable telemetry sidecar")
            .iter()
            .map(|l| serde_json::to_string(l).expect("json") + "\n")
            .collect::<String>()
            .into_bytes();
    }
    servebench_result::read_requests(path)
        .expect("a readable sidecar")
        .iter()
        .map(|l| serde_json::to_string(l).expect("json") + "\n")
        .collect::<String>()
        .into_bytes()
}
