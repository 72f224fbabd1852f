//! Telemetry end to end on the simulator (`spec.telemetry`, docs/gpu.md): the engine's
//! `/metrics` scraped during every trial, GPUs from a scripted source (`SERVEBENCH_FAKE_GPU`)
//! or none at all, and the flags `compare` reads from them — each flag made by the simulator
//! or the scripted GPU and carried on the point that has it, and no other.

use std::path::Path;

use serde_json::Value;

use super::common::{read_json, result_file, sb, scratch, write_spec};

/// A sim A/A at `c` (two points), every trial with telemetry; `server_args` go to both arms.
fn spec(server_args: &str, points: &str, requests: u32) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: tel}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --jitter-cv, "0.02", --decode-base-ms, "2", --decode-per-seq-ms, "0.05"{server_args}]
    readiness: {{http: {{path: /health}}, interval: 50ms, timeout: 30s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - {{name: base, baseline: true, server: {{args: [--label, base]}}}}
    - {{name: cand, server: {{args: [--label, cand]}}}}
  workload:
    dataset: {{kind: random, input_tokens: 32, output_tokens: 24}}
    ignore_eos: true
    seed: 1
    requests: {requests}
    request_rate: inf
  sweep: {{max_concurrency: [{points}]}}
  trials: {{count: 3}}
  compare: {{metrics: [output_throughput, tpot_p50]}}
  telemetry: {{interval: 50ms}}
"#
    )
}

const FAKE_H200: &str = r#"{"devices": [{"index": 0, "name": "NVIDIA H200",
   "uuid": "GPU-00000000-1111-2222-3333-444444444444", "memory_total_mib": 143771,
   "max_sm_clock_mhz": 1980, "power_limit_w": 700}],
 "sample": {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "power_w": 450, "temperature_c": 50,
            "util_gpu_pct": 90, "util_mem_pct": 60, "memory_used_mib": 60000, "throttle": 0},
 "noise": {"seed": 3, "sm_clock_mhz": 10, "power_w": 15, "throttle_share": 0.02}"#;

/// Runs `spec` in `dir` (with `env`), then `compare --json`: the result and the report.
fn run(dir: &Path, spec: &str, env: &[(&str, String)]) -> (Value, Value) {
    let path = write_spec(dir, spec);
    let mut cmd = sb(dir);
    cmd.args(["run", "-q"]).arg(&path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = result_file(dir);
    let out = sb(dir)
        .args(["compare", "--json"])
        .arg(&file)
        .output()
        .expect("compare");
    let report: Value = serde_json::from_slice(&out.stdout).expect("compare json");
    (read_json(&file), report)
}

/// The ids of the comparison's flags, with the points each threatens.
fn flags(report: &Value) -> Vec<(String, Vec<String>)> {
    let c = &report["comparisons"][0];
    let mut out = Vec::new();
    for f in c["flags"].as_array().into_iter().flatten() {
        let mut points: Vec<String> = f["threatens"]["cells"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["point"].as_str().map(str::to_owned))
            .collect();
        points.sort();
        points.dedup();
        out.push((f["id"].as_str().unwrap_or("").to_owned(), points));
    }
    out
}

const TELEMETRY_FLAGS: [&str; 5] = [
    "server-queued",
    "throttled",
    "gpu-busy-at-start",
    "preempted",
    "kv-full",
];

fn telemetry_flags(report: &Value) -> Vec<(String, Vec<String>)> {
    flags(report)
        .into_iter()
        .filter(|(id, _)| TELEMETRY_FLAGS.contains(&id.as_str()))
        .collect()
}

#[test]
fn an_engine_limit_below_the_concurrency_is_server_queued_at_that_point_only() {
    let dir = scratch("telemetry_e2e", "queued");
    let fake = dir.join("gpu.json");
    std::fs::write(&fake, format!("{FAKE_H200}}}")).expect("fake");
    // --max-num-seqs 4: c=2 fits the engine's batch, c=16 queues 12 requests in the engine.
    let (result, report) = run(
        &dir,
        &spec(", --max-num-seqs, \"4\"", "2, 16", 64),
        &[("SERVEBENCH_FAKE_GPU", fake.display().to_string())],
    );
    assert_eq!(
        telemetry_flags(&report),
        vec![("server-queued".to_owned(), vec!["c=16".to_owned()])],
        "{report:#}"
    );
    let f = &report["comparisons"][0]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "server-queued")
        .cloned()
        .unwrap();
    assert_eq!(f["level"], "re-baseline");
    // Every trial's summary says what the engine and the (scripted) GPU did.
    for t in result["trials"].as_array().unwrap() {
        let tel = &t["summary"]["telemetry"];
        assert_eq!(tel["gpu"]["source"], "fake", "{tel:#}");
        assert!(tel["gpu"]["energy_j"].as_f64().unwrap() > 0.0, "{tel:#}");
        assert!(
            t["summary"]["telemetry"]["output_tokens_per_joule"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let server = &tel["server"];
        assert_eq!(server["failed"], 0, "{server:#}");
        let running_max = server["running"]["max"].as_f64().unwrap();
        assert!(
            running_max <= 4.0,
            "the engine never runs more than 4: {server:#}"
        );
        let waiting = server["waiting_while_held"].as_f64().unwrap_or(0.0);
        match t["point"].as_u64() {
            Some(0) => assert!(waiting < 0.5, "c=2 queues nothing: {server:#}"),
            _ => assert!(waiting > 8.0, "c=16 queues about 12: {server:#}"),
        }
    }
    // The time series are beside the request sidecar, one line per trial.
    let side = result_file(&dir).with_extension("telemetry.jsonl.zst");
    let text = String::from_utf8(
        zstd::decode_all(std::fs::File::open(&side).expect("sidecar")).expect("zstd"),
    )
    .expect("utf-8");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    assert_eq!(lines.len(), result["trials"].as_array().unwrap().len());
    let l = &lines[0];
    assert_eq!(
        l["server"]["names"]["running"],
        "servebench_sim_requests_running"
    );
    assert!(
        l["server"]["raw"]["servebench_sim_requests_received_total"].is_array(),
        "{l:#}"
    );
    assert_eq!(l["devices"][0]["name"], "NVIDIA H200");
    // The energy metrics are catalogue metrics compare can judge.
    let out = sb(&dir)
        .args([
            "compare",
            "--json",
            "--metric",
            "output_tokens_per_joule,joules_per_output_token",
        ])
        .arg(result_file(&dir))
        .output()
        .expect("compare");
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let m = &r["comparisons"][0]["metrics"];
    assert_eq!(m[0]["metric"], "output_tokens_per_joule", "{r:#}");
    assert_eq!(m[0]["points"][0]["n_baseline"], 3, "{r:#}");
}

#[test]
fn a_throttled_arm_and_a_busy_gpu_are_flagged_with_what_was_seen() {
    let dir = scratch("telemetry_e2e", "throttled");
    let fake = dir.join("gpu.json");
    // The candidate's GPU runs power-capped at 1500 MHz; before its server starts, a leftover
    // process holds 8148 MiB (the shape of compute-apps-busy.csv).
    std::fs::write(
        &fake,
        format!(
            r#"{FAKE_H200},
 "variants": {{"cand": {{"sample": {{"sm_clock_mhz": 1500}}, "throttle_share": 0.9,
   "busy_at_start": [{{"pid": 429, "name": "python3", "used_mib": 8148, "gpu": 0}}]}}}}}}"#
        ),
    )
    .expect("fake");
    let (result, report) = run(
        &dir,
        &spec("", "2", 24),
        &[("SERVEBENCH_FAKE_GPU", fake.display().to_string())],
    );
    let ids: Vec<String> = telemetry_flags(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(ids, vec!["throttled", "gpu-busy-at-start"], "{report:#}");
    let text = report.to_string();
    assert!(text.contains("sw_power_cap"), "{report:#}");
    assert!(
        text.contains("python3 (pid 429, 8148 MiB on GPU 0)"),
        "{report:#}"
    );
    let busy: Vec<&Value> = result["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            !s["gpus_before_start"]["processes"]
                .as_array()
                .unwrap()
                .is_empty()
        })
        .collect();
    assert!(busy.iter().all(|s| s["variant"] == "cand"), "{busy:?}");
    assert_eq!(busy.len(), 3);
}

#[test]
fn a_kv_cache_at_its_capacity_is_kv_full() {
    let dir = scratch("telemetry_e2e", "kvfull");
    // 1024 KV tokens hold 18 requests of 32 + 24 tokens (a request reserves prompt +
    // max_tokens at admission): at c=64 the engine fills its cache and the rest wait.
    let (_, report) = run(
        &dir,
        &spec(
            ", --kv-capacity-tokens, \"1024\", --max-model-len, \"512\"",
            "64",
            96,
        ),
        &[],
    );
    let got = telemetry_flags(&report);
    assert!(
        got.iter()
            .any(|(id, p)| id == "kv-full" && p == &vec!["c=64".to_owned()]),
        "{report:#}"
    );
}

#[test]
fn a_run_without_a_gpu_records_that_it_sampled_none() {
    let dir = scratch("telemetry_e2e", "nogpu");
    // No scripted GPU, and a PATH without nvidia-smi: NVML does not load on this machine.
    let (result, report) = run(
        &dir,
        &spec("", "2", 16),
        &[("PATH", "/usr/bin:/bin".into())],
    );
    for t in result["trials"].as_array().unwrap() {
        let gpu = &t["summary"]["telemetry"]["gpu"];
        if gpu["source"] != "none" {
            // A machine with a GPU samples it: nothing to check here.
            return;
        }
        assert_eq!(gpu["samples"], 0, "{gpu:#}");
        assert!(
            gpu["note"].as_str().unwrap().contains("no GPU sampled"),
            "{gpu:#}"
        );
        assert!(
            t["summary"]["telemetry"]["server"]["scrapes"]
                .as_u64()
                .unwrap()
                > 0
        );
    }
    for s in result["servers"].as_array().unwrap() {
        assert_eq!(s["gpus_before_start"]["source"], "none", "{s:#}");
    }
    assert!(telemetry_flags(&report).is_empty(), "{report:#}");
}

#[test]
fn the_decode_ceiling_of_each_point_is_recorded_and_shown() {
    let dir = scratch("telemetry_e2e", "ceiling");
    let fake = dir.join("gpu.json");
    std::fs::write(&fake, format!("{FAKE_H200}}}")).expect("fake");
    // Llama 3.1 8B's figures in bf16 on the scripted H200 (4.8 TB/s).
    let text = spec("", "1, 8", 24).replace(
        "  telemetry: {interval: 50ms}\n",
        "  telemetry: {interval: 50ms}\n  model_facts: {total_params: 8.03e9, bytes_per_weight: 2, kv_bytes_per_token: 131072}\n",
    );
    let path = write_spec(&dir, &text);
    let out = sb(&dir)
        .args(["run"])
        .arg(&path)
        .env("SERVEBENCH_FAKE_GPU", &fake)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("share of the memory-bound decode ceiling"),
        "{stdout}"
    );
    let result = read_json(&result_file(&dir));
    assert_eq!(result["model_facts"]["read_params"], 8.03e9);
    for t in result["trials"].as_array().unwrap() {
        let c = &t["summary"]["decode_ceiling"];
        let ceiling = c["tok_per_s"].as_f64().unwrap();
        let batch = c["batch"].as_f64().unwrap();
        let context = c["context_tokens"].as_f64().unwrap();
        let want = batch * 4800e9 / (8.03e9 * 2.0 + batch * context * 131_072.0);
        assert!((ceiling - want).abs() < 1e-6 * want, "{c:#}");
        let achieved = t["summary"]["all"]["output_throughput"].as_f64().unwrap();
        assert!((c["share"].as_f64().unwrap() - achieved / ceiling).abs() < 1e-9);
        assert_eq!(c["gpus"], 1);
    }
}
