//! Verify rules (log and JSON) and the server-info read-back.

use crate::server_support;

use std::time::{Duration, Instant};

use serde_json::json;
use servebench_engines::GENERIC;
use servebench_runner::server::{
    RuleProblem, ServerRecord, server_info, server_info_at, start, stop, verify,
};
use servebench_spec::{JsonCheck, VerifyRule};
use server_support::fake_launch;

fn log_rule(text: &str) -> VerifyRule {
    VerifyRule {
        log_contains: Some(text.to_owned()),
        json: None,
        server_arg: None,
        kernel: None,
    }
}

fn json_rule(path: &str, pointer: &str, equals: serde_json::Value) -> VerifyRule {
    VerifyRule {
        log_contains: None,
        json: Some(JsonCheck {
            path: path.to_owned(),
            pointer: pointer.to_owned(),
            equals,
        }),
        server_arg: None,
        kernel: None,
    }
}

#[tokio::test]
async fn passing_rules_give_their_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(
        dir.path(),
        &[
            "--say",
            "server_args=ServerArgs(tp_size=8, moe_runner_backend='flashinfer_cutlass')",
            "--say-late",
            "warm-up done",
        ],
        Duration::from_secs(20),
    );
    let server = start(&launch).await.unwrap();
    let rules = [
        log_rule("moe_runner_backend='flashinfer_cutlass'"),
        // Printed 0.5 s after ready: found thanks to the re-read grace.
        log_rule("warm-up done"),
        json_rule(
            "/get_server_info",
            "/moe_runner_backend",
            json!("flashinfer_cutlass"),
        ),
        // A string matches the text of a number.
        json_rule("/get_server_info", "/tp_size", json!("8")),
    ];
    let outcomes = verify(&server, &rules, &GENERIC).await.unwrap();
    assert_eq!(outcomes.len(), 4);
    assert!(
        outcomes[0].evidence.contains("ServerArgs(tp_size=8"),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[1].evidence, "warm-up done");
    assert_eq!(
        outcomes[2].evidence,
        r#"/moe_runner_backend = "flashinfer_cutlass""#
    );
    assert_eq!(outcomes[3].evidence, "/tp_size = 8");
    assert_eq!(outcomes[3].rule, rules[3]);

    let info = server_info(&server, &GENERIC).await.unwrap();
    assert_eq!(info.endpoint, "/get_server_info");
    assert_eq!(info.info["version"], "fake-1.0");
    stop(server).await;
}

#[tokio::test]
async fn failing_rules_say_what_was_expected_and_found() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(
        dir.path(),
        &[
            "--say",
            "moe_runner_backend='flashinfer_cutlass'",
            "--unused-flag",
            "only-in-argv",
        ],
        Duration::from_secs(20),
    );
    let server = start(&launch).await.unwrap();
    let rules = [
        log_rule("moe_runner_backend='flashinfer_cutedsl'"),
        // In the argv (so in servebench's header line) but never printed by the server.
        log_rule("only-in-argv"),
        json_rule(
            "/get_server_info",
            "/moe_runner_backend",
            json!("flashinfer_cutedsl"),
        ),
        json_rule(
            "/get_server_info",
            "/server_args/moe_runner_backend",
            json!("x"),
        ),
        json_rule("/nope", "/a", json!(1)),
        log_rule("flashinfer_cutlass"),
    ];
    let t = Instant::now();
    let err = verify(&server, &rules, &GENERIC).await.unwrap_err();
    // One shared grace for all log rules, not one per rule.
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    assert_eq!(err.passed.len(), 1);
    assert_eq!(err.failures.len(), 5);
    let numbers: Vec<usize> = err.failures.iter().map(|f| f.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
    assert!(matches!(
        err.failures[0].problem,
        RuleProblem::LogTextMissing { .. }
    ));
    assert!(matches!(
        err.failures[1].problem,
        RuleProblem::LogTextMissing { .. }
    ));
    assert!(matches!(
        err.failures[3].problem,
        RuleProblem::PointerMissing { .. }
    ));

    let msg = err.to_string();
    let log = launch.log_path.display().to_string();
    assert!(msg.contains("5 of 6 verify rules failed"), "{msg}");
    assert!(
        msg.contains(&format!(
            "rule 1 (log_contains \"moe_runner_backend='flashinfer_cutedsl'\"): not found in the server log {log}"
        )),
        "{msg}"
    );
    assert!(
        msg.contains(
            r#"/moe_runner_backend is "flashinfer_cutlass", expected "flashinfer_cutedsl""#
        ),
        "{msg}"
    );
    assert!(
        msg.contains("pointer /server_args/moe_runner_backend not present in the response"),
        "{msg}"
    );
    assert!(msg.contains("rule 5 (json, GET http://127.0.0.1:"), "{msg}");
    assert!(msg.contains("/nope): HTTP 404"), "{msg}");
    stop(server).await;
}

#[tokio::test]
async fn the_simulator_describes_itself() {
    let mut config = servebench_sim::SimConfig::from_preset(servebench_sim::Preset::Default);
    config.port = 0;
    config.label = "variant-a".to_owned();
    let sim = servebench_sim::spawn(config).await.unwrap();
    let info = server_info_at(&sim.base_url(), None, &GENERIC)
        .await
        .unwrap();
    assert_eq!(info.endpoint, "/server_info");
    assert_eq!(info.info["server"], "servebench-sim");
    assert_eq!(info.info["label"], "variant-a");
    sim.shutdown().await.unwrap();

    // Nothing listening: no info, quickly.
    let port = servebench_runner::server::pick_free_port().unwrap();
    assert!(
        server_info_at(&format!("http://127.0.0.1:{port}"), None, &GENERIC)
            .await
            .is_none()
    );
}

#[test]
fn records_round_trip_through_json() {
    let rec = ServerRecord {
        argv: vec!["python3".into(), "--api-key".into(), "***".into()],
        env: [("HF_TOKEN".to_owned(), "***".to_owned())].into(),
        working_dir: None,
        pid: 4242,
        pgid: 4242,
        port: 8000,
        log_path: "results/x/logs/server-cutlass-1.log".into(),
        started_at: "2025-01-01T00:00:00Z".into(),
        ready_after_s: 80.5,
    };
    let v = serde_json::to_value(&rec).unwrap();
    assert_eq!(v["ready_after_s"], 80.5);
    let back: ServerRecord = serde_json::from_value(v).unwrap();
    assert_eq!(back, rec);
}

fn arg_rule(name: &str, equals: serde_json::Value) -> VerifyRule {
    VerifyRule {
        log_contains: None,
        json: None,
        server_arg: Some(servebench_spec::ServerArgCheck {
            name: name.to_owned(),
            equals,
        }),
        kernel: None,
    }
}

#[tokio::test]
async fn server_arg_rules_read_sglang_and_vllm_where_each_version_reports_them() {
    use servebench_engines::Engine;
    use servebench_engines::profile;
    let sglang = profile(Engine::Sglang).expect("profile");
    let dir = tempfile::tempdir().unwrap();
    // Older SGLang: `/get_server_info` only (the fake server has no `/server_info`: 404).
    let server = start(&fake_launch(dir.path(), &[], Duration::from_secs(20)))
        .await
        .unwrap();
    let ok = verify(
        &server,
        &[arg_rule("moe_runner_backend", json!("flashinfer_cutlass"))],
        sglang,
    )
    .await
    .unwrap();
    assert!(ok[0].evidence.contains("/get_server_info"), "{ok:?}");
    let err = verify(
        &server,
        &[arg_rule("moe_runner_backend", json!("flashinfer_cutedsl"))],
        sglang,
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains(
            r#"moe_runner_backend is "flashinfer_cutlass", expected "flashinfer_cutedsl""#
        ),
        "{err}"
    );
    stop(server).await;
    // SGLang ≥ 0.5.19's start-up line (srt/entrypoints/engine.py:311, 0.5.23), no argument
    // in JSON: read from the log; and ≤ 0.5.18's dataclass repr.
    for line in [
        "[2026-12-01 10:00:00] server_args={'model_path': 'm', 'tp_size': 8, 'moe_runner_backend': 'flashinfer_cutedsl', 'enable_metrics': False}",
        "[2026-12-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=8, moe_runner_backend='flashinfer_cutedsl', enable_metrics=False)",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let launch = fake_launch(
            dir.path(),
            &["--info", r#"{"version": "0.5.23"}"#, "--say", line],
            Duration::from_secs(20),
        );
        let server = start(&launch).await.unwrap();
        let ok = verify(
            &server,
            &[arg_rule("moe_runner_backend", json!("flashinfer_cutedsl"))],
            sglang,
        )
        .await
        .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(ok[0].evidence.contains("the log line"), "{ok:?}");
        stop(server).await;
    }
    // vLLM 0.33.0's head (common/startup.py:94-96): `non-default args: {…}`.
    let vllm = profile(Engine::Vllm).expect("profile");
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(
        dir.path(),
        &[
            "--say",
            "(APIServer pid=1) INFO 12-01 10:00:00 [utils.py:253] non-default args: {'model_tag': 'm', 'moe_backend': 'flashinfer_cutedsl', 'nnodes': 2}",
        ],
        Duration::from_secs(20),
    );
    let server = start(&launch).await.unwrap();
    verify(
        &server,
        &[arg_rule("moe_backend", json!("flashinfer_cutedsl"))],
        vllm,
    )
    .await
    .unwrap();
    // An engine that reports no arguments: said, with what to do instead.
    let llama = profile(Engine::Llamacpp).expect("profile");
    let err = verify(&server, &[arg_rule("moe_backend", json!("x"))], llama)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("does not report its server arguments"),
        "{err}"
    );
    stop(server).await;
}

#[tokio::test]
async fn the_seed_specs_rule_tells_its_variants_apart_in_both_sglang_log_forms() {
    use servebench_engines::profile;
    use servebench_spec::substitute::{Context, resolve};
    let spec = servebench_spec::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../specs/glm5-moe-runner-cutlass-vs-cutedsl.yaml"),
    )
    .expect("the seed spec is valid")
    .file;
    let p = profile(spec.spec.target.engine).expect("the seed spec names its engine");
    let rules_of = |variant: &str| -> Vec<VerifyRule> {
        let v = spec
            .spec
            .variants
            .iter()
            .find(|v| v.name == variant)
            .expect("variant");
        let ctx = Context {
            vars: Some(&v.vars),
            ..Context::default()
        };
        let mut rules = spec.spec.server.as_ref().expect("server").verify.clone();
        for r in &mut rules {
            if let Some(a) = &mut r.server_arg {
                a.equals =
                    json!(resolve(a.equals.as_str().expect("text"), &ctx).expect("resolves"));
            }
        }
        rules
    };
    // What SGLang prints with `--moe-runner-backend flashinfer_cutedsl`: ≥ 0.5.19 a dict
    // (srt/entrypoints/engine.py:311 in 0.5.23), ≤ 0.5.18 the dataclass repr. The rule of
    // before (`moe_runner_backend='${variant.backend}'`) matched only the second.
    for line in [
        "server_args={'model_path': 'lukealonso/GLM-5-NVFP4', 'tp_size': 8, 'moe_runner_backend': 'flashinfer_cutedsl'}",
        "server_args=ServerArgs(model_path='lukealonso/GLM-5-NVFP4', tp_size=8, moe_runner_backend='flashinfer_cutedsl')",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let launch = fake_launch(
            dir.path(),
            &["--info", "{}", "--say", line],
            Duration::from_secs(20),
        );
        let server = start(&launch).await.unwrap();
        verify(&server, &rules_of("cutedsl"), p)
            .await
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(
            verify(&server, &rules_of("cutlass"), p).await.is_err(),
            "the other variant's rule fails: {line}"
        );
        stop(server).await;
    }
}

#[test]
fn the_vllm_two_node_rank_rule_matches_what_headless_ranks_print() {
    use servebench_spec::substitute::{Context, resolve};
    let spec = servebench_spec::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../specs/glm5-moe-2node-vllm.yaml"),
    )
    .expect("valid")
    .file;
    let rules = &spec.spec.server.as_ref().expect("server").verify;
    let text_of = |variant: &str| -> String {
        let v = spec
            .spec
            .variants
            .iter()
            .find(|v| v.name == variant)
            .expect("variant");
        let ctx = Context {
            vars: Some(&v.vars),
            ..Context::default()
        };
        let t = rules
            .iter()
            .find_map(|r| r.log_contains.as_deref())
            .expect("a rank rule");
        resolve(t, &ctx).expect("resolves")
    };
    // vLLM 0.33.0 model_executor/layers/fused_moe/oracle/nvfp4.py:239-243, logged by every
    // rank's workers (the head's too); `non-default args:` is the head's only.
    let worker = "(Worker_PP1_TP3 pid=5150) INFO 12-01 10:01:02 [nvfp4.py:270] Using 'FLASHINFER_CUTEDSL' NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTEDSL', 'FLASHINFER_CUTLASS', 'VLLM_CUTLASS', 'MARLIN'].";
    let batched = "(Worker_PP1_TP3 pid=5150) INFO 12-01 10:01:02 [nvfp4.py:270] Using 'FLASHINFER_CUTEDSL_BATCHED' NvFp4 MoE backend out of potential backends: ['FLASHINFER_CUTEDSL_BATCHED'].";
    assert!(
        worker.contains(&text_of("cutedsl")),
        "{}",
        text_of("cutedsl")
    );
    assert!(!worker.contains(&text_of("cutlass")));
    assert!(
        !batched.contains(&text_of("cutedsl")),
        "BATCHED is another backend"
    );
    // The rule of before, the lower-case value, never appears on a headless rank.
    assert!(!worker.contains("flashinfer_cutedsl"));
    // The head-only argument is a `server_arg` rule (not checked on the ranks).
    assert!(rules.iter().any(|r| {
        r.server_arg
            .as_ref()
            .is_some_and(|a| a.name == "moe_backend")
    }));
}
