//! Verify rules (log and JSON) and the server-info read-back.

use crate::server_support;

use std::time::{Duration, Instant};

use serde_json::json;
use servebench_runner::server::{
    RuleProblem, ServerRecord, server_info, server_info_at, start, stop, verify,
};
use servebench_spec::engine::GENERIC;
use servebench_spec::{JsonCheck, VerifyRule};
use server_support::fake_launch;

fn log_rule(text: &str) -> VerifyRule {
    VerifyRule {
        log_contains: Some(text.to_owned()),
        json: None,
        server_arg: None,
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
