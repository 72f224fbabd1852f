//! Every engine profile end to end against the simulator's personality of that engine
//! (`servebench sim --engine …`): `servebench probe` tells the engine and checks what a spec
//! relies on, and the seed spec verifies against the SGLang personality in both start-up log
//! forms, its kernel rules included (the personality's profiler writes each arm's kernels).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::common::{read_json, repo, sb, scratch};

/// A `servebench sim` child and its base URL; killed on drop.
struct Sim {
    child: Child,
    url: String,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sim(args: &[&str]) -> Sim {
    let mut child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["sim", "--port", "0", "--preset", "fast"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start servebench sim");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the listening line");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    Sim { child, url }
}

fn probe(url: &str, extra: &[&str]) -> (bool, Value) {
    // One folder per server (its port): tests probing at once must not remove each other's
    // working directory (`scratch` empties it), which once failed a probe with ENOENT.
    let port: String = url
        .rsplit(':')
        .next()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let dir = scratch("engines_e2e", &format!("probe-{port}"));
    let out = sb(&dir)
        .args(["probe", url, "--json"])
        .args(extra)
        .output()
        .expect("probe");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), v)
}

fn outcome(v: &Value, g: &str) -> String {
    v["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["guarantee"] == g))
        .map(|c| c["outcome"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default()
}

/// (personality flags, engine told, guarantees that hold, that are not available)
type Case = (
    &'static [&'static str],
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

#[test]
fn probe_tells_every_personality_and_what_it_guarantees() {
    // (personality flags, engine told, guarantees that hold, that are not available)
    let cases: [Case; 6] = [
        (
            &["--engine", "sglang", "--enable-metrics"],
            "sglang",
            &[
                "streaming",
                "usage",
                "output_length",
                "tokenize",
                "context_limit",
                "metrics",
            ],
            &[],
        ),
        (
            &["--engine", "vllm"],
            "vllm",
            &[
                "streaming",
                "usage",
                "output_length",
                "tokenize",
                "context_limit",
                "metrics",
            ],
            &[],
        ),
        (
            &["--engine", "llamacpp", "--metrics"],
            "llamacpp",
            &[
                "streaming",
                "usage",
                "output_length",
                "tokenize",
                "context_limit",
                "metrics",
            ],
            &[],
        ),
        (
            &["--engine", "trtllm", "--enable-metrics"],
            "trtllm",
            &["streaming", "usage", "output_length", "tokenize"],
            &["context_limit"],
        ),
        (
            &["--engine", "tgi"],
            "tgi",
            &["streaming", "usage", "tokenize", "context_limit", "metrics"],
            &["output_length"],
        ),
        (
            &["--engine", "transformers"],
            "transformers",
            &["streaming", "usage", "output_length"],
            &["context_limit", "metrics"],
        ),
    ];
    for (flags, engine, holds, absent) in cases {
        let s = sim(flags);
        let (ok, v) = probe(&s.url, &["--output-tokens", "6"]);
        assert_eq!(v["engine"]["engine"], engine, "{flags:?}: {v:#}");
        assert_eq!(v["engine"]["source"], "detected");
        for g in holds {
            assert_eq!(outcome(&v, g), "holds", "{engine} {g}: {v:#}");
        }
        for g in absent {
            assert_eq!(outcome(&v, g), "not_available", "{engine} {g}: {v:#}");
        }
        if engine == "transformers" {
            // No tokenize endpoint: without a spec that asks for the server's tokenizer, that
            // is not available rather than a failure (issue 41), with what to set.
            assert_eq!(outcome(&v, "tokenize"), "not_available", "{v:#}");
        }
        assert!(ok, "{engine}: {v:#}");
    }
}

// TensorRT-LLM's running/waiting/KV gauges need `enable_iter_perf_stats` besides
// `return_perf_metrics` (metrics/collector.py `log_iteration_stats`, openai_server.py
// lifespan): the probe says so and what to set. Before: the personality served the gauges
// with `--enable-metrics` alone, and the check named nothing to set.
#[test]
fn probe_says_trtllm_needs_iter_perf_stats() {
    for (flags, want) in [
        (&["--engine", "trtllm", "--enable-metrics"][..], "fails"),
        (
            &[
                "--engine",
                "trtllm",
                "--enable-metrics",
                "--enable-iter-perf-stats",
            ][..],
            "holds",
        ),
    ] {
        let s = sim(flags);
        let (_, v) = probe(&s.url, &["--output-tokens", "6"]);
        assert_eq!(outcome(&v, "metrics"), want, "{flags:?}: {v:#}");
        if want == "fails" {
            let set = v["checks"]
                .as_array()
                .and_then(|a| a.iter().find(|c| c["guarantee"] == "metrics"))
                .and_then(|c| c["set"].as_str())
                .unwrap_or("");
            assert!(set.contains("enable_iter_perf_stats: true"), "{v:#}");
        }
    }
}

#[test]
fn the_seed_spec_verifies_against_sglang_in_both_log_forms() {
    for form in ["dict", "dataclass"] {
        let dir = scratch("engines_e2e", &format!("seed-{form}"));
        let results = dir.join("results");
        let traces = dir.join("traces");
        let command = format!(
            "server.command=[\"${{servebench}}\", sim, --engine, sglang, --sglang-log-form, {form}, --preset, fast]"
        );
        let out = sb(&dir)
            .args(["run", "-q", "--results-dir"])
            .arg(&results)
            .arg(repo().join("specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml"))
            .args(["--set", &command])
            .args(["--set", "server.readiness.interval=100ms"])
            .args([
                "--set",
                "trials.count=1",
                "--set",
                "sweep.max_concurrency=[2]",
            ])
            .args([
                "--set",
                "workload.requests=4",
                "--set",
                "workload.warmup_requests=0",
            ])
            .args(["--set", "workload.dataset.input_tokens=32"])
            .args(["--set", "workload.dataset.output_tokens=8"])
            // The spec's kernel rules too: the personality's profiler writes the kernels of
            // the backend each arm launches, into the test's own folder.
            .args([
                "--set",
                &format!("evidence.kernels.dir={}", traces.display()),
            ])
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{form}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = read_json(&crate::common::result_file(&dir));
        let starts = r["servers"].as_array().expect("servers");
        assert_eq!(starts.len(), 2, "{form}");
        for s in starts {
            let verify = s["verify"].as_array().expect("verify");
            // The log rule, then the arm's two kernel rules, all held.
            assert_eq!(verify.len(), 3, "{form}: {s:#}");
            assert!(verify.iter().all(|v| v["passed"] == true), "{form}: {s:#}");
            let v = &verify[0];
            let backend = match s["variant"].as_str() {
                Some("cutlass") => "flashinfer_cutlass",
                _ => "flashinfer_cutedsl",
            };
            assert!(
                v["detail"].as_str().unwrap_or("").contains(backend),
                "{form}: {v}"
            );
        }
        for b in r["preflight"].as_array().expect("preflight") {
            assert_eq!(b["engine"]["engine"], "sglang");
            assert_eq!(b["engine"]["source"], "spec");
        }
    }
}
