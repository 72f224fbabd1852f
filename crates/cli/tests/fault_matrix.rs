//! The fault matrix of docs/reliability.md: each test drives the real `servebench` binary
//! against the simulator's fault flags (launched by the spec as `${servebench} sim`) or a
//! small scripted HTTP server in this process, and checks what servebench does: failures
//! are typed and counted, nothing measured is lost, nothing hangs.
//!
//! Rows covered elsewhere (not repeated here): a server that exits mid-trial, never becomes
//! ready, SIGKILL of servebench with its orphan stopped and the run resumed, and a result
//! folder that cannot be created are in `run_e2e.rs`; failed requests and failed trials as
//! compare flags in `compare_faults.rs`; the API key in `secrets_e2e.rs`.
//!
//! Every fault rate is 0 or 1 and every timing margin is wide, so no test depends on luck.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

mod common;
use common::{read_json, walk};

fn sb(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("servebench").expect("binary");
    c.current_dir(dir);
    c
}

fn write_spec(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("spec.yaml");
    std::fs::write(&p, text).expect("write spec");
    p
}

/// The only result file under `dir/results`.
fn result_file(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = walk(&dir.join("results"))
        .into_iter()
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.starts_with('.')
        })
        .collect();
    assert_eq!(found.len(), 1, "expected one result file, found {found:?}");
    found[0].clone()
}

/// The sidecar's lines, each parsed.
fn sidecar(result: &Path) -> Vec<Value> {
    let r = read_json(result);
    let path = result.with_file_name(r["requests_file"].as_str().expect("sidecar name"));
    std::fs::read_to_string(path)
        .expect("sidecar")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every sidecar line is whole JSON"))
        .collect()
}

/// A one-variant, one-point spec on the simulator (fast preset, fixed seed) with `extra`
/// simulator flags, `requests` measured requests at concurrency `c`.
fn sim_spec(extra: &str, requests: u32, c: u32, timeout: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: fault-row}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --seed, "7"{extra}]
    readiness: {{http: {{path: /health}}, interval: 10ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: only
      baseline: true
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: {requests}
    warmup_requests: 0
    request_timeout: {timeout}
  sweep: {{max_concurrency: [{c}]}}
  trials: {{count: 1}}
"#
    )
}

/// Runs `spec` in a fresh folder; returns the folder, the exit code and stderr.
fn run_spec(spec: &str) -> (tempfile::TempDir, i32, String) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = write_spec(dir.path(), spec);
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run servebench");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (dir, out.status.code().unwrap_or(-1), stderr + &stdout)
}

/// The single trial of a one-trial run, checked for the invariant of every row: the trial
/// is recorded, every request is in its denominators (completed + failed = requests), and
/// the sidecar holds one record per request with the same failures.
fn the_trial(dir: &Path, requests: u64) -> Value {
    let path = result_file(dir);
    let r = read_json(&path);
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 1, "{r}");
    let t = trials[0].clone();
    let all = &t["summary"]["all"];
    assert_eq!(all["requests"], requests, "{all}");
    assert_eq!(
        all["completed"].as_u64().unwrap_or(0) + all["failed"].as_u64().unwrap_or(0),
        requests,
        "{all}"
    );
    let failed = all["failed"].as_u64().unwrap_or(0);
    if requests > 0 {
        let rate = all["error_rate"].as_f64().expect("error_rate");
        assert!(
            (rate - failed as f64 / requests as f64).abs() < 1e-12,
            "{all}"
        );
    }
    let errors: u64 = t["errors"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    assert_eq!(errors, failed, "errors by kind add up to the failures");
    let lines = sidecar(&path);
    let measured: Vec<&Value> = lines.iter().filter(|l| l["warmup"] == false).collect();
    assert_eq!(measured.len() as u64, requests);
    let failed_lines = measured.iter().filter(|l| !l["error"].is_null()).count() as u64;
    assert_eq!(failed_lines, failed);
    t
}

fn errors_of(t: &Value) -> Vec<(String, u64)> {
    t["errors"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn readiness_flaps_requests_refused_while_down_are_counted_as_http_503() {
    // Up 150 ms, down 150 ms, repeating. 60 requests one at a time take ≥ 8 ms each (8
    // tokens at 1 ms per step), so the trial outlasts an up phase: some sends must land in
    // a down phase. tokenizer: none keeps the prompt building off the flapping server.
    let spec = sim_spec(
        r#", --flap-period-ms, "300", --flap-down-ms, "150""#,
        60,
        1,
        "20s",
    )
    .replace("tokenizer: server", "tokenizer: none");
    let (dir, code, out) = run_spec(&spec);
    assert_eq!(code, 0, "requests failing is data, not a failed run\n{out}");
    let t = the_trial(dir.path(), 60);
    assert_eq!(t["status"], "ok");
    let errors = errors_of(&t);
    assert!(
        errors.iter().all(|(k, _)| k == "http_503"),
        "only refusals: {errors:?}"
    );
    assert!(
        errors.iter().any(|(k, n)| k == "http_503" && *n > 0),
        "{errors:?}"
    );
    assert!(out.contains("had failed requests"), "{out}");
    assert!(out.contains("http_503"), "{out}");
}

#[test]
fn storms_of_500_and_429_are_counted_and_a_refusing_server_does_not_look_faster() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: storms}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}", --preset, fast, --seed, "7"]
    readiness: {http: {path: /health}, interval: 10ms, timeout: 20s}
    stop: {signal: SIGTERM, grace: 5s}
  target: {api: openai-completions, model: sim-model, tokenizer: server}
  variants:
    - name: base
      baseline: true
    - name: refuses-429
      server: {args: [--error-rate-429, "1.0"]}
    - name: errors-500
      server: {args: [--error-rate-500, "1.0"]}
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 12
    warmup_requests: 0
    request_timeout: 20s
  sweep: {max_concurrency: [2]}
  trials: {count: 3, server_restart: once}
  compare: {metrics: [output_throughput, request_throughput, ttft_p50, e2e_mean, error_rate]}
"#;
    let path = write_spec(dir.path(), spec);
    // Every trial is recorded, but a run in which trials had no successful request is not
    // a success: exit 1, with the reason.
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "6 trial(s) had no successful request",
        ));
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("12 of 12 requests failed (http_429: 12)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("12 of 12 requests failed (http_500: 12)"),
        "{stdout}"
    );
    let result = result_file(dir.path());
    let r = read_json(&result);
    for t in r["trials"].as_array().expect("trials") {
        let all = &t["summary"]["all"];
        let expected = match t["variant"].as_str() {
            Some("base") => None,
            Some("refuses-429") => Some("http_429"),
            _ => Some("http_500"),
        };
        match expected {
            None => assert_eq!(all["failed"], 0, "{t}"),
            Some(kind) => {
                assert_eq!(t["errors"][kind], 12, "{t}");
                assert_eq!(all["error_rate"], 1.0);
                // Refused requests produce nothing: no tokens, no completed requests, no
                // latency — never a latency from the refusals' quick answers.
                assert_eq!(all["output_throughput"], 0.0);
                assert_eq!(all["request_throughput"], 0.0);
                assert!(all["ttft"].is_null() && all["e2e"].is_null(), "{all}");
            }
        }
    }
    let cmp = sb(dir.path())
        .arg("compare")
        .arg(&result)
        .arg("--json")
        .assert()
        .code(0);
    let c: Value = serde_json::from_slice(&cmp.get_output().stdout).expect("json");
    for comp in c["comparisons"].as_array().expect("comparisons") {
        let name = comp["candidate"]["variant"]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        for m in comp["metrics"].as_array().expect("metrics") {
            let metric = m["metric"].as_str().unwrap_or("?");
            for p in m["points"].as_array().expect("points") {
                let verdict = p["verdict"].as_str().unwrap_or("?");
                // Nothing of a server that refuses every request reads as an improvement or
                // as equivalent: a throughput is regressed, a latency has no value to
                // compare, and the point says why.
                assert_ne!(verdict, "improved", "{name} {metric}: {p}");
                assert_ne!(verdict, "equivalent", "{name} {metric}: {p}");
                match metric {
                    "output_throughput" | "request_throughput" | "error_rate" => {
                        // Regressed, or — where the statistic is undefined (a throughput of
                        // 0 on the log scale; both arms constant) — not computed, with the
                        // reason, and flagged below. Never better.
                        assert!(
                            verdict == "regressed"
                                || (verdict == "not-computed" && p["error"].is_string()),
                            "{name} {metric}: {p}"
                        );
                        assert_eq!(p["n_candidate"], 3, "no trial vanished: {p}");
                    }
                    _ => {
                        assert_eq!(verdict, "not-computed", "{name} {metric}: {p}");
                        assert_eq!(p["n_candidate"], 0, "{p}");
                    }
                }
                let flags: Vec<&str> = p["flags"]
                    .as_array()
                    .map(|f| f.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                assert!(flags.contains(&"invalid-trial"), "{name} {metric}: {p}");
            }
            let evidence: Vec<String> = m["flags"]
                .as_array()
                .map(|f| {
                    f.iter()
                        .filter(|f| f["id"] == "invalid-trial")
                        .map(|f| f["evidence"].to_string())
                        .collect()
                })
                .unwrap_or_default();
            assert!(
                evidence.iter().any(|e| e.contains("failed request")),
                "{name} {metric}: {evidence:?}"
            );
        }
    }
    // A CI gate on suspicious measurements trips.
    sb(dir.path())
        .arg("compare")
        .arg(&result)
        .args(["--fail-on", "suspicious"])
        .assert()
        .code(1);
}

#[test]
fn mid_stream_disconnects_fail_the_requests_not_the_trial() {
    let (dir, code, out) = run_spec(&sim_spec(r#", --disconnect-rate, "1.0""#, 12, 2, "20s"));
    // every request failed: measured and kept, but the run is not a success
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("had no successful request"), "{out}");
    let t = the_trial(dir.path(), 12);
    assert_eq!(t["status"], "ok", "the server is alive: not an exit");
    assert_eq!(errors_of(&t), [("stream_disconnected".to_owned(), 12)]);
    // The tokens that arrived before the cut are kept in the records, as data.
    let lines = sidecar(&result_file(dir.path()));
    assert!(
        lines
            .iter()
            .all(|l| l["error"] == "stream_disconnected" && !l["end_ns"].is_null()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["events"].as_array().is_some_and(|e| !e.is_empty()))
    );
}

#[test]
fn stalls_longer_than_the_request_timeout_are_cut_as_timeouts() {
    // Every stream pauses 30 s; the request timeout is 400 ms.
    let started = Instant::now();
    let (dir, code, out) = run_spec(&sim_spec(
        r#", --stall-rate, "1.0", --stall-ms, "30000""#,
        6,
        3,
        "400ms",
    ));
    let took = started.elapsed();
    // every request failed: measured and kept, but the run is not a success
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("had no successful request"), "{out}");
    assert!(
        took < Duration::from_secs(25),
        "the run waited for the stall: {took:?}"
    );
    let t = the_trial(dir.path(), 6);
    assert_eq!(errors_of(&t), [("timeout".to_owned(), 6)]);
    for l in sidecar(&result_file(dir.path())) {
        let (send, end) = (
            l["send_ns"].as_u64().expect("sent"),
            l["end_ns"].as_u64().expect("ended"),
        );
        let held = Duration::from_nanos(end - send);
        assert!(
            held >= Duration::from_millis(400) && held < Duration::from_secs(10),
            "{held:?}"
        );
    }
}

#[test]
fn malformed_events_fail_as_malformed_event_with_the_bad_data_shown() {
    let (dir, code, out) = run_spec(&sim_spec(r#", --malformed-rate, "1.0""#, 12, 2, "20s"));
    // every request failed: measured and kept, but the run is not a success
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("had no successful request"), "{out}");
    let t = the_trial(dir.path(), 12);
    assert_eq!(errors_of(&t), [("malformed_event".to_owned(), 12)]);
    let lines = sidecar(&result_file(dir.path()));
    assert!(
        lines.iter().all(|l| l["error_detail"]
            .as_str()
            .is_some_and(|d| d.contains("trunc"))),
        "the detail shows the broken event: {lines:?}"
    );
}

/// A scripted OpenAI-compatible server on 127.0.0.1:0 that answers every generation
/// request with `body` as a chunked `text/event-stream` (HTTP/1.1, keep-alive), written in
/// pieces of at most 64 KiB. Threads end with the test process.
fn scripted_server(body: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let body = std::sync::Arc::new(body);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let body = body.clone();
            std::thread::spawn(move || {
                let _ = serve(conn, &body);
            });
        }
    });
    port
}

fn serve(conn: TcpStream, body: &[u8]) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    loop {
        let mut content_length = 0usize;
        let mut first = String::new();
        if reader.read_line(&mut first)? == 0 {
            return Ok(());
        }
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                content_length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut req = vec![0; content_length];
        reader.read_exact(&mut req)?;
        w.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        )?;
        for piece in body.chunks(64 << 10) {
            write!(w, "{:x}\r\n", piece.len())?;
            w.write_all(piece)?;
            w.write_all(b"\r\n")?;
        }
        w.write_all(b"0\r\n\r\n")?;
        w.flush()?;
    }
}

fn token_event(text: &str, finish: Option<&str>) -> String {
    let fr = finish.map_or("null".to_owned(), |f| format!("\"{f}\""));
    format!(
        "data: {{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"sim-model\",\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":{fr}}}]}}\n\n"
    )
}

/// A spec against an already running server at `port` (no server block).
fn base_url_spec(port: u16, requests: u32) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: fault-row}}
spec:
  target: {{api: openai-completions, model: sim-model, tokenizer: none, base_url: "http://127.0.0.1:{port}"}}
  variants:
    - name: only
      baseline: true
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: {requests}
    warmup_requests: 0
    request_timeout: 20s
  sweep: {{max_concurrency: [2]}}
  trials: {{count: 1}}
"#
    )
}

#[test]
fn a_response_without_usage_is_flagged_and_counted_by_the_client_never_by_the_request() {
    // 8 token events and [DONE], but no usage chunk although include_usage was asked for.
    let mut body = String::new();
    for i in 0..8 {
        body.push_str(&token_event(" w", (i == 7).then_some("length")));
    }
    body.push_str("data: [DONE]\n\n");
    let port = scripted_server(body.into_bytes());
    let (dir, code, out) = run_spec(&base_url_spec(port, 10));
    assert_eq!(code, 0, "{out}");
    let t = the_trial(dir.path(), 10);
    assert_eq!(t["status"], "ok");
    let s = &t["summary"];
    assert_eq!(s["all"]["failed"], 0, "{s}");
    assert_eq!(s["flags"]["no_usage"], 10, "{s}");
    assert_eq!(s["tokens"]["requests_without_usage"], 10);
    assert_eq!(s["tokens"]["client_output_tokens_without_usage"], 80);
    assert_eq!(s["tokens"]["usage_output_tokens"], 0);
    assert_eq!(s["all"]["output_tokens"], 80, "N_out is the client's count");
    for l in sidecar(&result_file(dir.path())) {
        assert!(l["usage"].is_null(), "never filled in: {l}");
    }
}

#[test]
fn an_oversized_event_fails_the_request_at_the_bound_instead_of_growing_without_end() {
    // One token, then an event of 6 MiB that never ends (the bound is 4 MiB).
    let mut body = token_event(" w", None).into_bytes();
    body.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"text\":\"");
    body.resize(body.len() + (6 << 20), b'x');
    let port = scripted_server(body);
    let (dir, code, out) = run_spec(&base_url_spec(port, 4));
    // every request failed: measured and kept, but the run is not a success
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("had no successful request"), "{out}");
    let t = the_trial(dir.path(), 4);
    assert_eq!(errors_of(&t), [("malformed_event".to_owned(), 4)]);
    for l in sidecar(&result_file(dir.path())) {
        let d = l["error_detail"].as_str().unwrap_or("");
        assert!(d.contains("exceeded 4194304 bytes"), "{d}");
    }
}

#[test]
fn a_port_already_taken_fails_the_start_at_once_with_the_servers_own_message() {
    // The spec pins the server to a port this test holds. The server cannot bind it and
    // exits; servebench says so at once (not after the 30 s readiness timeout), with the
    // log's tail, and records the trial as failed.
    let held = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = held.local_addr().expect("addr").port();
    // `${port}` must appear in the server block (validation refuses a spec without it), so
    // it goes to an unused variable and the server is pinned to the held port, as a server
    // whose own side port (metrics, distributed init) is taken.
    let spec = sim_spec("", 4, 1, "20s")
        .replace(r#"--port, "${port}""#, &format!(r#"--port, "{port}""#))
        .replace(
            "    stop: {signal",
            "    env: {UNUSED_PORT: \"${port}\"}\n    stop: {signal",
        )
        .replace("timeout: 20s}", "timeout: 30s}");
    let started = Instant::now();
    let (dir, code, out) = run_spec(&spec);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("before it was ready"), "{out}");
    assert!(
        out.to_lowercase().contains("address already in use"),
        "{out}"
    );
    let r = read_json(&result_file(dir.path()));
    let t = &r["trials"][0];
    assert_eq!(t["status"], "failed");
    assert!(
        t["failure"]
            .as_str()
            .is_some_and(|f| f.contains("before it was ready")),
        "{t}"
    );
    drop(held);
}

#[test]
fn a_full_disk_keeps_every_trial_and_says_where_the_requests_went() {
    // Files may grow to 160 KB (RLIMIT_FSIZE through prlimit; SIGXFSZ ignored so writes fail
    // with EFBIG as on a full disk). Each trial appends ~60 KB of request records, so the
    // sidecar append of trial 3 fails while the result file (~50 KB) still fits.
    let dir = tempfile::tempdir().expect("tmp");
    let spec = sim_spec("", 40, 4, "20s")
        .replace("output_tokens: 8", "output_tokens: 40")
        .replace(
            "trials: {count: 1}",
            "trials: {count: 6, server_restart: once}",
        );
    let path = write_spec(dir.path(), &spec);
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(r#"trap '' XFSZ; exec prlimit --fsize=160000 -- "$@""#)
        .arg("sh")
        .arg(&bin)
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run under prlimit");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    let result = result_file(dir.path());
    let r = read_json(&result);
    let kept = r["trials"].as_array().map_or(0, Vec::len);
    assert!((2..6).contains(&kept), "kept {kept}\n{stderr}");
    // The sidecar holds whole trials only: every earlier trial, none of the failed append.
    let lines = sidecar(&result);
    assert_eq!(lines.len(), (kept - 1) * 40, "{stderr}");
    assert!(
        lines
            .iter()
            .all(|l| l["seq"].as_u64() < Some(kept as u64 - 1))
    );
    // The error names the rescue file of the last trial's requests and the result file.
    let rescue = stderr
        .split_whitespace()
        .find(|w| w.contains("servebench-rescue-") && w.contains(".requests.jsonl"))
        .map(|w| w.trim_end_matches([';', '.', ',']))
        .unwrap_or_else(|| panic!("no rescue path in: {stderr}"));
    assert!(stderr.contains(&result.display().to_string()), "{stderr}");
    let rescued: Vec<Value> = std::fs::read_to_string(rescue)
        .expect("rescue file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(rescued.len(), 40);
    assert!(
        rescued
            .iter()
            .all(|l| l["seq"].as_u64() == Some(kept as u64 - 1))
    );
    // Put the rescued lines back as the message says, and finish the run with room to write.
    let sidecar_path = result.with_file_name(r["requests_file"].as_str().expect("name"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&sidecar_path)
        .expect("open sidecar");
    f.write_all(&std::fs::read(rescue).expect("read rescue"))
        .expect("append");
    let _ = std::fs::remove_file(rescue);
    sb(dir.path())
        .args(["run", "--no-bars", "--resume"])
        .arg(&result)
        .assert()
        .code(0);
    let r = read_json(&result);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["trials"].as_array().map(Vec::len), Some(6));
    assert_eq!(sidecar(&result).len(), 6 * 40);
}
