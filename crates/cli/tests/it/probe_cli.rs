//! `servebench probe` against the simulator, and what `run` checks before anything starts:
//! a model the server does not serve, nothing listening, an unset `${env.…}` — each refused
//! with the server's own words or what to set, and no result file written.

use crate::common::{read_json, sb, scratch, walk, write_spec};

/// A simulator on its own runtime, serving until the runtime drops.
struct Sim {
    rt: tokio::runtime::Runtime,
    url: String,
}

fn sim() -> Sim {
    sim_as(servebench_engines::Engine::Openai)
}

/// A simulator with an engine's personality.
fn sim_as(engine: servebench_engines::Engine) -> Sim {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let url = rt.block_on(async {
        let mut config = servebench_sim::SimConfig::from_preset(servebench_sim::Preset::Fast);
        config.wire.engine = engine;
        let h = servebench_sim::spawn(config).await.expect("sim");
        let url = h.base_url();
        // Kept serving for the runtime's life.
        std::mem::forget(h);
        url
    });
    Sim { rt, url }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

#[test]
fn probe_checks_every_guarantee_against_the_simulator() {
    let s = sim();
    let dir = scratch("probe_cli", "table");
    let out = sb(&dir).args(["probe", &s.url]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for row in [
        "engine: openai",
        "model served",
        "streaming works",
        "usage arrives",
        "output length honoured       holds          asked 16, got 16",
        "tokenize agrees with usage   holds",
        "context limit read           holds          8192 tokens",
        "every guarantee a run with servebench's defaults relies on holds",
    ] {
        assert!(text.contains(row), "{row}:\n{text}");
    }
    // JSON, chat API, another length.
    let out = sb(&dir)
        .args([
            "probe",
            &s.url,
            "--json",
            "--api",
            "openai-chat",
            "--output-tokens",
            "5",
        ])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v["needed_fails"], false, "{v}");
    assert_eq!(v["engine"]["engine"], "openai");
    let length = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["guarantee"] == "output_length")
        .expect("length check");
    assert_eq!(length["outcome"], "holds", "{length}");
    assert!(
        length["detail"]
            .as_str()
            .unwrap_or("")
            .contains("asked 5, got 5")
    );
    drop(s.rt);
}

/// Issue 41, item 5: without `--spec`, `probe` does not speak of "the spec", and what the
/// engine cannot do at all — transformers serve has no `/tokenize` — is not available, not a
/// failure (it exited 1 on "tokenize agrees with usage").
#[test]
fn probe_without_a_spec_does_not_fail_on_what_the_engine_cannot_do() {
    let s = sim_as(servebench_engines::Engine::Transformers);
    let dir = scratch("probe_cli", "transformers");
    let out = sb(&dir).args(["probe", &s.url]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("the spec relies"), "{text}");
    assert!(
        text.contains("tokenize agrees with usage   not available")
            && text.contains("has no tokenize endpoint"),
        "{text}"
    );
    assert!(
        text.contains("a run with servebench's defaults relies on it"),
        "{text}"
    );
    drop(s.rt);
}

#[test]
fn probe_fails_with_the_servers_reply_and_what_to_set() {
    let s = sim();
    let dir = scratch("probe_cli", "wrong-model");
    let out = sb(&dir)
        .args(["probe", &s.url, "--model", "default"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("the server serves `sim-model`, not `default`")
            && text.contains("set: target.model: sim-model")
            && text.contains("this server serves `sim-model`"),
        "{text}"
    );
    let port = free_port();
    let out = sb(&dir)
        .args(["probe", &format!("http://127.0.0.1:{port}")])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("connection refused (nothing listens there)"),
        "{err}"
    );
    drop(s.rt);
}

#[test]
fn a_run_that_reaches_no_server_or_the_wrong_model_writes_no_result() {
    let s = sim();
    let dir = scratch("probe_cli", "no-result");
    let spec = crate::common::repo().join("specs/endpoint.yaml");
    let results = dir.join("results");
    // The case of the issue: the simulator serves `sim-model`, the spec asks for `default`.
    let out = sb(&dir)
        .args(["run", "-q", "--requests", "8", "-c", "2", "--results-dir"])
        .arg(&results)
        .arg(&spec)
        .args(["--set", &format!("target.base_url={}", s.url)])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("the server serves `sim-model`, not `default`")
            && err.contains("--set target.model=sim-model")
            && err.contains("no result file was written"),
        "{err}"
    );
    assert!(walk(&results).is_empty(), "no file: {:?}", walk(&results));
    // Nothing listening: connection refused, and still no file.
    let port = free_port();
    let out = sb(&dir)
        .args(["run", "-q", "--results-dir"])
        .arg(&results)
        .arg(&spec)
        .args(["--set", &format!("target.base_url=http://127.0.0.1:{port}")])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("connection refused (nothing listens there)")
            && err.contains("no result file"),
        "{err}"
    );
    assert!(walk(&results).is_empty());
    // The right model: measured, and the engine and checks recorded per block.
    sb(&dir)
        .args(["run", "-q", "--requests", "8", "-c", "2", "--results-dir"])
        .arg(&results)
        .arg(&spec)
        .args(["--set", &format!("target.base_url={}", s.url)])
        .args(["--set", "target.model=sim-model"])
        .assert()
        .success();
    let r = read_json(&crate::common::result_file(&dir));
    let pre = &r["preflight"][0];
    assert_eq!(pre["engine"]["engine"], "openai", "{pre}");
    assert_eq!(pre["engine"]["source"], "detected");
    let checks: Vec<&str> = pre["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter_map(|c| c["guarantee"].as_str())
        .collect();
    assert!(
        checks.contains(&"model_served") && checks.contains(&"tokenize"),
        "{checks:?}"
    );
    drop(s.rt);
}

#[test]
fn an_unset_environment_variable_is_refused_before_anything_starts() {
    let dir = scratch("probe_cli", "env");
    let spec = write_spec(
        &dir,
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: env-check}
spec:
  server:
    command: ["${servebench}", sim, --port, "${port}", --preset, fast]
    env: {HF_TOKEN: "${env.SERVEBENCH_TEST_SURELY_UNSET_TOKEN}"}
  target: {model: sim-model}
  variants: [{name: a, baseline: true}]
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 4}
    requests: 4
"#,
    );
    let out = sb(&dir)
        .env_remove("SERVEBENCH_TEST_SURELY_UNSET_TOKEN")
        .args(["validate"])
        .arg(&spec)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("`SERVEBENCH_TEST_SURELY_UNSET_TOKEN` (spec.server.env.HF_TOKEN) is not set"),
        "{err}"
    );
    let out = sb(&dir)
        .env_remove("SERVEBENCH_TEST_SURELY_UNSET_TOKEN")
        .args(["run", "-q", "--results-dir"])
        .arg(dir.join("results"))
        .arg(&spec)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "not set: `SERVEBENCH_TEST_SURELY_UNSET_TOKEN` (read by spec.server.env.HF_TOKEN)"
        ) && err.contains("nothing was started or written"),
        "{err}"
    );
    assert!(walk(&dir.join("results")).is_empty());
}
