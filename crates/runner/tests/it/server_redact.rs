//! Redaction of argv and env before anything is recorded.

use crate::server_support;

use std::collections::BTreeMap;
use std::time::Duration;

use servebench_runner::server::{redact_argv, redact_env, secret_values_of_env, start, stop};
use server_support::{fake_launch, strings};

#[test]
fn secret_flags_are_redacted_in_both_forms() {
    let argv = strings(&[
        "python3",
        "-m",
        "sglang.launch_server",
        "--api-key",
        "sk-live-123",
        "--hf-token=hf_abc",
        "--port",
        "8000",
        "--admin-password",
        "hunter2",
        "--client-secret=xyz",
        "--auth",
        "basic",
    ]);
    assert_eq!(
        redact_argv(&argv, &[]),
        strings(&[
            "python3",
            "-m",
            "sglang.launch_server",
            "--api-key",
            "***",
            "--hf-token=***",
            "--port",
            "8000",
            "--admin-password",
            "***",
            "--client-secret=***",
            "--auth",
            "***",
        ])
    );
}

#[test]
fn counting_flags_are_not_secrets() {
    let argv = strings(&[
        "--max-tokens",
        "128",
        "--max-total-tokens=4096",
        "--tokenizer",
        "zai-org/GLM-5",
        "--tokenizer-mode",
        "auto",
        "--max_prefill_tokens",
        "16384",
    ]);
    assert_eq!(redact_argv(&argv, &[]), argv);
}

#[test]
fn a_flag_after_a_secret_flag_is_kept() {
    // `--disable-auth` takes no value: the next flag is not swallowed.
    let argv = strings(&["--disable-auth", "--port", "8000"]);
    assert_eq!(redact_argv(&argv, &[]), argv);
}

#[test]
fn known_secret_values_are_redacted_anywhere() {
    let argv = strings(&[
        "curl",
        "-H",
        "Authorization: Bearer sk-live-123",
        "--data",
        "sk-live-123",
        "env",
        "HF_TOKEN=hf_abc",
        "CUDA_VISIBLE_DEVICES=0",
    ]);
    assert_eq!(
        redact_argv(&argv, &strings(&["sk-live-123", ""])),
        strings(&[
            "curl",
            "-H",
            "***",
            "--data",
            "***",
            "env",
            "HF_TOKEN=***",
            "CUDA_VISIBLE_DEVICES=0",
        ])
    );
}

#[test]
fn secret_env_names_are_redacted() {
    let env: BTreeMap<String, String> = [
        ("HF_TOKEN", "hf_abc"),
        ("OPENAI_API_KEY", "sk-1"),
        ("CUDA_VISIBLE_DEVICES", "0,1"),
        ("SGLANG_LOG_LEVEL", "info"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let red = redact_env(&env);
    assert_eq!(red["HF_TOKEN"], "***");
    assert_eq!(red["OPENAI_API_KEY"], "***");
    assert_eq!(red["CUDA_VISIBLE_DEVICES"], "0,1");
    assert_eq!(red["SGLANG_LOG_LEVEL"], "info");
    let mut secrets = secret_values_of_env(&env);
    secrets.sort();
    assert_eq!(secrets, ["hf_abc", "sk-1"]);
}

#[tokio::test]
async fn the_log_header_and_record_hold_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut launch = fake_launch(
        dir.path(),
        &[
            "--api-key",
            "sk-live-123",
            "--hf-token=hf_abc",
            "--say",
            "uses sk-live-123",
        ],
        Duration::from_secs(20),
    );
    launch
        .env
        .insert("HF_TOKEN".into(), "hf_secret_value".into());
    launch.secret_values.push("sk-live-123".into());
    let server = start(&launch).await.unwrap();
    let rec = server.record().clone();
    stop(server).await;
    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    let header: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("[servebench "))
        .collect();
    let header = header.join("\n");
    assert!(!header.contains("sk-live-123"), "{header}");
    assert!(!header.contains("hf_abc"), "{header}");
    assert!(
        header.contains("--api-key *** --hf-token=*** --say ***"),
        "{header}"
    );
    assert!(!header.contains("hf_secret_value"), "{header}");
    assert!(header.contains("env: HF_TOKEN=***"), "{header}");
    assert!(
        rec.argv.iter().all(|a| !a.contains("sk-live-123")),
        "{:?}",
        rec.argv
    );
    assert_eq!(rec.env["HF_TOKEN"], "***");
}

#[test]
fn numeric_values_of_token_named_flags_are_settings_not_secrets() {
    let argv: Vec<String> = [
        "sim",
        "--prefill-ms-per-token",
        "0.02",
        "--per-token-cost=3",
        "--hf-token",
        "hf_abc123",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = servebench_runner::server::redact_argv(&argv, &[]);
    assert_eq!(
        out,
        [
            "sim",
            "--prefill-ms-per-token",
            "0.02",
            "--per-token-cost=3",
            "--hf-token",
            "***"
        ]
    );
}
