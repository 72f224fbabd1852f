//! The fault matrix of docs/reliability.md, part 1: the simulator's fault flags (launched
//! by the spec as `${servebench} sim`). Each test drives the real `servebench` binary and
//! checks what it does: failures are typed and counted, nothing measured is lost, nothing
//! hangs. Part 2 (`fault_wire.rs`) uses a scripted HTTP server for what the simulator cannot
//! produce; part 3 (`fault_host.rs`) the host: a port taken, a full disk.
//!
//! Rows covered elsewhere (not repeated here): a server that exits mid-trial, never becomes
//! ready, SIGKILL of servebench with its orphan stopped and the run resumed, and a result
//! folder that cannot be created are in `run_e2e.rs`; failed requests and failed trials as
//! compare flags in `compare_faults.rs`; the API key in `secrets_e2e.rs`.
//!
//! Every fault rate is 0 or 1 and every timing margin is wide, so no test depends on luck.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::faults::*;
use common::read_json;

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
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 9, "3 variants × 3 trials, every one recorded");
    for t in trials {
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
    let comparisons = c["comparisons"].as_array().expect("comparisons");
    assert_eq!(comparisons.len(), 2, "each refusing variant against base");
    for comp in comparisons {
        assert_eq!(comp["metrics"].as_array().map(Vec::len), Some(5), "{comp}");
        let name = comp["candidate"]["variant"]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        for m in comp["metrics"].as_array().expect("metrics") {
            let metric = m["metric"].as_str().unwrap_or("?");
            let points = m["points"].as_array().expect("points");
            assert_eq!(points.len(), 1, "{m}");
            for p in points {
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
        // The timeout's clock starts just before the executor builds the request, `send_ns`
        // just before the write. No await lies between them, but on a loaded 2-core machine
        // the thread can be descheduled there for a time slice or two (CI read 399.85 ms,
        // then 394.29 ms), so the floor allows 25 ms: what it checks is that no request was
        // cut early, which would show as far less.
        assert!(
            held >= Duration::from_millis(375) && held < Duration::from_secs(10),
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
