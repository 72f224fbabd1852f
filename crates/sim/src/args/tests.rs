//! The flags' parsing and resolution.

use clap::Parser;

use super::*;

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

fn parse(args: &[&str]) -> SimConfig {
    let cli = Cli::try_parse_from(std::iter::once("sim").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{e}"));
    cli.sim.to_config().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn defaults_come_from_the_default_preset() {
    let c = parse(&[]);
    assert_eq!(c, SimConfig::default());
    assert_eq!(c.port, 0);
    assert_eq!(c.host.to_string(), "127.0.0.1");
    assert_eq!(c.model, "sim-model");
}

#[test]
fn flags_override_the_preset() {
    let c = parse(&[
        "--preset",
        "tiny",
        "--decode-base-ms",
        "7.5",
        "--label",
        "fast",
        "--seed",
        "9",
        "--drift-per-min",
        "-0.1",
        "--exit-after-requests",
        "3",
    ]);
    assert_eq!(c.preset, Preset::Tiny);
    assert_eq!(c.engine.max_num_seqs, 4);
    assert_eq!(c.engine.decode_base_ms, 7.5);
    assert_eq!(c.engine.drift_per_min, -0.1);
    assert_eq!(c.label, "fast");
    assert_eq!(c.seed, 9);
    assert_eq!(c.faults.exit_after_requests, Some(3));
}

#[test]
fn zero_delay_flag_zeroes_times() {
    let c = parse(&["--zero-delay"]);
    assert!(c.engine.is_zero_delay());
    assert_eq!(c.engine.max_num_seqs, 256);
}

#[test]
fn run_artefact_flags_parse() {
    let c = parse(&[
        "--repetition",
        "3",
        "--drift-per-repetition",
        "0.02",
        "--step-scale",
        "1.3",
        "--step-scale-repetitions",
        "1,3",
        "--step-scale-requests",
        "29..56",
        "--time-scale",
        "0.1",
    ]);
    assert_eq!(c.repetition, 3);
    assert_eq!(c.engine.drift_per_repetition, 0.02);
    assert_eq!(c.engine.step_scale, 1.3);
    assert_eq!(c.engine.step_scale_repetitions, Some(vec![1, 3]));
    assert_eq!(
        c.engine.step_scale_requests,
        Some(RequestRange {
            first: 29,
            last: Some(56)
        })
    );
    assert_eq!(c.engine.time_scale, 0.1);
    let c = parse(&["--drift-per-repetition", "-0.01"]);
    assert_eq!(c.engine.drift_per_repetition, -0.01);
    let d = parse(&[]);
    assert_eq!(d.repetition, 1);
    assert_eq!(
        (
            d.engine.step_scale,
            d.engine.time_scale,
            d.engine.drift_per_repetition
        ),
        (1.0, 1.0, 0.0)
    );
}

#[test]
fn seed_and_repetition_come_from_the_runners_environment() {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let env = |id: &str| {
        cmd.get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_env())
            .map(|e| e.to_string_lossy().into_owned())
    };
    assert_eq!(env("seed").as_deref(), Some("SERVEBENCH_BLOCK_SEED"));
    assert_eq!(env("repetition").as_deref(), Some("SERVEBENCH_REPETITION"));
}

fn refusal(args: &[&str]) -> String {
    match Cli::try_parse_from(std::iter::once("sim").chain(args.iter().copied())) {
        Err(e) => e.to_string(),
        Ok(cli) => match cli.sim.to_config() {
            Err(e) => e.to_string(),
            Ok(c) => panic!("accepted: {c:?}"),
        },
    }
}

#[test]
fn bad_artefact_flags_are_refused_clearly() {
    let m = refusal(&["--step-scale-repetitions", "3"]);
    assert!(m.contains("give --step-scale F too"), "{m}");
    let m = refusal(&["--step-scale-requests", "1..4"]);
    assert!(m.contains("give --step-scale F too"), "{m}");
    let m = refusal(&["--step-scale", "0"]);
    assert!(m.contains("step_scale must be a number > 0"), "{m}");
    let m = refusal(&["--step-scale", "1.3", "--step-scale-requests", "56..29"]);
    assert!(m.contains("empty"), "{m}");
    let m = refusal(&["--step-scale", "1.3", "--step-scale-requests", "29-56"]);
    assert!(m.contains("write A..B"), "{m}");
    let m = refusal(&["--step-scale", "1.3", "--step-scale-repetitions", "0"]);
    assert!(m.contains("counts from 1"), "{m}");
    let m = refusal(&["--time-scale", "0"]);
    assert!(m.contains("time_scale must be a number > 0"), "{m}");
    let m = refusal(&["--repetition", "0"]);
    assert!(m.contains("repetition counts from 1"), "{m}");
}

#[test]
fn invalid_values_fail_resolution() {
    let cli = Cli::try_parse_from(["sim", "--stall-rate", "1.5"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(cli.sim.to_config().is_err());
}

#[test]
fn personality_flags_take_the_engines_own_spellings() {
    use crate::config::{Engine, SglangLogForm};
    // The seed spec's SGLang command line, as a variant passes it.
    let c = parse(&[
        "--engine",
        "sglang",
        "--model-path",
        "lukealonso/GLM-5-NVFP4",
        "--served-model-name",
        "glm-5",
        "--tp",
        "8",
        "--moe-runner-backend",
        "flashinfer_cutedsl",
        "--sglang-log-form",
        "dataclass",
        "--enable-metrics",
        "--enable-cache-report",
    ]);
    assert_eq!(c.wire.engine, Engine::Sglang);
    assert_eq!(c.model, "glm-5");
    assert_eq!(c.wire.model_path.as_deref(), Some("lukealonso/GLM-5-NVFP4"));
    assert_eq!(c.wire.tp_size, 8);
    assert_eq!(c.wire.moe_backend.as_deref(), Some("flashinfer_cutedsl"));
    assert_eq!(c.wire.sglang_log_form, SglangLogForm::Dataclass);
    assert!(c.wire.enable_metrics && c.wire.cache_report);
    // vLLM's spellings.
    let c = parse(&[
        "--engine",
        "vllm",
        "--moe-backend",
        "flashinfer_cutlass",
        "--tensor-parallel-size",
        "2",
        "--enable-prompt-tokens-details",
        "--max-num-batched-tokens",
        "4096",
    ]);
    assert_eq!(c.wire.moe_backend.as_deref(), Some("flashinfer_cutlass"));
    assert_eq!((c.wire.tp_size, c.engine.max_batched_tokens), (2, 4096));
    assert!(c.wire.cache_report);
    // llama.cpp's --metrics.
    assert!(
        parse(&["--engine", "llamacpp", "--metrics"])
            .wire
            .enable_metrics
    );
    assert_eq!(parse(&[]).wire, crate::config::WireParams::default());
    assert_eq!(
        parse(&["--reasoning-tokens", "16"]).output.reasoning_tokens,
        16
    );
    let m = refusal(&["--held-back-rate", "1.5"]);
    assert!(m.contains("held_back_rate"), "{m}");
    let m = refusal(&["--empty-text-rate", "1.5"]);
    assert!(m.contains("empty_text_rate"), "{m}");
    assert_eq!(
        parse(&["--empty-text-rate", "0.25"]).wire.empty_text_rate,
        0.25
    );
    let m = refusal(&["--engine", "sglangx"]);
    assert!(m.contains("sglang"), "{m}");
    let m = refusal(&["--sse-ping-ms", "0"]);
    assert!(m.contains("sse_ping_ms"), "{m}");
}

#[test]
fn output_equivalence_knobs_are_shares() {
    let c = parse(&["--numerics-change", "0.1", "--batch-variance", "0.5"]);
    assert_eq!(c.output.numerics_change, 0.1);
    assert_eq!(c.output.batch_variance, 0.5);
    let m = refusal(&["--numerics-change", "1.5"]);
    assert!(m.contains("numerics_change is a share of prompts"), "{m}");
    let m = refusal(&["--batch-variance", "2"]);
    assert!(m.contains("batch_variance"), "{m}");
}

#[test]
fn tls_takes_a_certificate_and_its_key_together() {
    let c = parse(&["--tls-cert", "c.pem", "--tls-key", "k.pem"]);
    let tls = c.tls.expect("tls");
    assert_eq!(tls.cert, std::path::PathBuf::from("c.pem"));
    assert_eq!(tls.key, std::path::PathBuf::from("k.pem"));
    assert!(parse(&[]).tls.is_none());
    for half in [["--tls-cert", "c.pem"], ["--tls-key", "k.pem"]] {
        let err = Cli::try_parse_from(std::iter::once("sim").chain(half)).expect_err("half");
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }
}

#[test]
fn engine_takes_the_dialect_names_of_the_one_engine_list() {
    use crate::config::{Engine, engine_name};
    // `--engine` names every engine of servebench-engines' list but `auto` (a spec's "detect
    // it"), the simulator's own dialect as `generic`, as before the list was shared.
    let names = [
        "generic",
        "sglang",
        "vllm",
        "llamacpp",
        "tgi",
        "trtllm",
        "transformers",
    ];
    let mut seen = Vec::new();
    for name in names {
        let e = parse(&["--engine", name]).wire.engine;
        assert_eq!(engine_name(e), name);
        seen.push(e);
    }
    let mut all: Vec<Engine> = Engine::KNOWN.to_vec();
    all.sort();
    seen.sort();
    assert_eq!(seen, all, "every known engine has a dialect");
    assert_eq!(parse(&[]).wire.engine, Engine::Openai);
    for name in ["auto", "openai", "SGLang"] {
        let e = Cli::try_parse_from(["sim", "--engine", name])
            .map(|_| ())
            .unwrap_err();
        let m = e.to_string();
        assert!(m.contains("possible values: generic, sglang, vllm"), "{m}");
    }
}

#[test]
fn profiler_flags_belong_to_their_engine_and_vllms_config_is_checked_as_vllm_does() {
    let m = refusal(&["--engine", "sglang", "--profiler-config", "{}"]);
    assert!(m.contains("--profiler-config is vLLM's"), "{m}");
    let m = refusal(&["--tserve-profiler"]);
    assert!(m.contains("--engine transformers"), "{m}");
    let m = refusal(&[
        "--engine",
        "vllm",
        "--profiler-config",
        r#"{"profiler": "torch"}"#,
    ]);
    assert!(m.contains("torch_profiler_dir must be set"), "{m}");
    let m = refusal(&["--engine", "vllm", "--profiler-config", "torch"]);
    assert!(m.contains("JSON of ProfilerConfig"), "{m}");
    let m = refusal(&["--sim-kernels", "two words"]);
    assert!(m.contains("one word"), "{m}");
    let c = parse(&[
        "--engine",
        "vllm",
        "--moe-backend",
        "flashinfer_cutedsl",
        "--sim-kernels",
        "triton",
        "--profiler-config",
        r#"{"profiler": "torch", "torch_profiler_dir": "/t"}"#,
    ]);
    assert_eq!(c.wire.profiler.kernels.as_deref(), Some("triton"));
    assert_eq!(c.wire.moe_backend.as_deref(), Some("flashinfer_cutedsl"));
}
