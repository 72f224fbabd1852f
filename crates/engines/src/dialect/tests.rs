//! The dialects' start-up log lines against the engines' log statements; their metrics
//! against their engines' profiles.

use super::*;
use crate::dialect::SglangLogForm;

fn config(engine: Engine) -> Served {
    let mut c = Served::default();
    c.wire.engine = engine;
    c.wire.moe_backend = Some("flashinfer_cutedsl".into());
    c.wire.tp_size = 8;
    c.model = "glm-5".into();
    c.wire.model_path = Some("lukealonso/GLM-5-NVFP4".into());
    c
}

fn addr() -> std::net::SocketAddr {
    "127.0.0.1:30000".parse().unwrap_or_else(|e| panic!("{e}"))
}

// SGLang ≥ 0.5.19, entrypoints/engine.py:311,1185: `server_args={resolved_dict()}`.
#[test]
fn sglang_dict_form_prints_the_backend_as_a_dict_entry() {
    let lines = start_lines(&config(Engine::Sglang), addr());
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    // `[YYYY-mm-dd HH:MM:SS] server_args={...}` (utils/common.py:2630-2636)
    assert_eq!(&l[..1], "[");
    assert_eq!(&l[20..35], "] server_args={");
    assert!(l.contains("'model_path': 'lukealonso/GLM-5-NVFP4'"), "{l}");
    assert!(l.contains("'tp_size': 8"), "{l}");
    assert!(l.contains("'served_model_name': 'glm-5'"), "{l}");
    assert!(
        l.contains("'moe_runner_backend': 'flashinfer_cutedsl'}"),
        "{l}"
    );
    // The rule the seed spec wrote for SGLang ≤ 0.5.18 does not match this form.
    assert!(
        !l.contains("moe_runner_backend='flashinfer_cutedsl'"),
        "{l}"
    );
}

// SGLang ≤ 0.5.18: `logger.info(f"{server_args=}")`, the dataclass repr.
#[test]
fn sglang_dataclass_form_prints_the_backend_as_a_field() {
    let mut c = config(Engine::Sglang);
    c.wire.sglang_log_form = SglangLogForm::Dataclass;
    let lines = start_lines(&c, addr());
    let l = &lines[0];
    assert!(
        l.contains("] server_args=ServerArgs(model_path='lukealonso/GLM-5-NVFP4', "),
        "{l}"
    );
    assert!(
        l.contains("moe_runner_backend='flashinfer_cutedsl')"),
        "{l}"
    );
    assert!(l.contains("enable_dp_attention=False"), "{l}");
    assert!(l.contains("quantization=None"), "{l}");
    assert_eq!(ready_lines(&c, "http://x").len(), 1);
    assert!(ready_lines(&c, "http://x")[0].ends_with("The server is fired up and ready to roll!"));
}

// vLLM 0.33.0: common/startup.py:96 on the head; fused_moe/oracle/nvfp4.py:239-243 on every
// worker; a headless rank runs no `log_non_default_args`.
#[test]
fn vllm_head_logs_non_default_args_and_workers_log_the_upper_case_backend() {
    let c = config(Engine::Vllm);
    let head = start_lines(&c, addr());
    let args = head
        .iter()
        .find(|l| l.contains("non-default args: {"))
        .unwrap_or_else(|| panic!("{head:?}"));
    assert!(args.starts_with("(APIServer pid="), "{args}");
    assert!(args.contains(" INFO "), "{args}");
    assert!(
        args.contains("[startup.py:96] non-default args: {'model_tag': "),
        "{args}"
    );
    assert!(
        args.contains("'moe_backend': 'flashinfer_cutedsl'"),
        "{args}"
    );
    assert!(args.contains("'tensor_parallel_size': 8"), "{args}");
    let worker_line = "Using 'FLASHINFER_CUTEDSL' NvFp4 MoE backend out of potential backends:";
    assert!(
        head.iter()
            .any(|l| l.starts_with("(Worker_TP0 pid=") && l.contains(worker_line))
    );
    let rank = worker_lines(&c);
    assert_eq!(rank.len(), 1, "{rank:?}");
    assert!(rank[0].contains(worker_line), "{rank:?}");
    assert!(
        !rank[0].contains("flashinfer_cutedsl"),
        "no lower-case name on a headless rank"
    );
    let ready = ready_lines(&c, "http://127.0.0.1:8000");
    assert!(ready[0].ends_with("[entry.py:139] Starting vLLM server on http://127.0.0.1:8000"));
}

// llama.cpp: server-context.cpp:1231, server.cpp:485,513; `srv  %12.*s: ` (server-common.h).
#[test]
fn llamacpp_logs_its_slots_then_loaded_and_listening() {
    let mut c = config(Engine::Llamacpp);
    c.max_num_seqs = 4;
    c.max_model_len = 4096;
    c.wire.flash_attn = crate::dialect::FlashAttn::On;
    let lines = start_lines(&c, addr());
    assert_eq!(lines[0], "srv          main: initializing ...");
    // The rule of specs/gpu-llamacpp-flash-attn.yaml matches it.
    assert!(lines.contains(&"llama_context: flash_attn            = enabled".to_owned()));
    assert!(lines.contains(&"llama_context: n_seq_max             = 4".to_owned()));
    assert_eq!(
        lines.last().map(String::as_str),
        Some(
            "srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096, kv_unified = 'true'"
        )
    );
    assert_eq!(
        ready_lines(&c, "http://127.0.0.1:8080"),
        vec![
            "srv  llama_server: model loaded".to_owned(),
            "srv  llama_server: listening on http://127.0.0.1:8080".to_owned()
        ]
    );
}

#[test]
fn the_other_engines_log_nothing_of_their_own() {
    for p in [
        Engine::Openai,
        Engine::Tgi,
        Engine::Trtllm,
        Engine::Transformers,
    ] {
        assert!(start_lines(&config(p), addr()).is_empty(), "{p:?}");
        assert!(worker_lines(&config(p)).is_empty(), "{p:?}");
    }
}

#[test]
fn response_ids_take_each_engines_form() {
    assert_eq!(response_id(Engine::Tgi, Api::Chat, 7), "");
    assert!(response_id(Engine::Vllm, Api::Completions, 7).starts_with("cmpl-"));
    assert!(response_id(Engine::Llamacpp, Api::Completions, 7).starts_with("chatcmpl-"));
    let u = response_id(Engine::Transformers, Api::Chat, 7);
    let parts: Vec<usize> = u.split('-').map(str::len).collect();
    assert_eq!(parts, vec![8, 4, 4, 4, 12], "{u}");
}

/// Each dialect serves its metrics where its engine's profile says (the path the client
/// scrapes) and writes every series the profile names (running, waiting, KV use,
/// preemptions): a fact changed on one side only fails here.
#[test]
fn each_dialect_serves_the_metrics_its_engines_profile_names() {
    let snapshot = Snapshot {
        running: 3,
        waiting: 2,
        decoding: 3,
        kv_usage: 0.5,
        kv_used_tokens: 100,
        preemptions: 0,
        prompt_tokens: 40,
        generation_tokens: 20,
        steps: 7,
        requests: 5,
        finished: 2,
    };
    let mut wire = Served::default().wire;
    wire.enable_metrics = true;
    wire.iter_perf_stats = true;
    for (name, engine) in crate::dialect::ENGINE_NAMES {
        let d = of(engine);
        assert_eq!(d.engine(), engine, "{name}");
        let facts = crate::profile(engine).and_then(|p| p.metrics);
        assert_eq!(d.metrics_path(), facts.map(|m| m.path), "{name}");
        let Some(m) = facts else { continue };
        let text = d.metrics_text("sim-model", &snapshot, &wire);
        let samples: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .collect();
        let named = [Some(m.running), Some(m.waiting), m.kv_usage]
            .into_iter()
            .chain([m.preemptions.map(|p| p.name)])
            .flatten();
        for series in named {
            assert!(
                samples.contains(&series),
                "{name}: no `{series}` in\n{text}"
            );
        }
    }
}

/// TensorRT-LLM records every series when a request finishes, and prometheus_client writes
/// no family without samples: before the first request ends the endpoint serves none (before,
/// the personality served zeros and the gauges at once).
#[test]
fn trtllm_serves_no_series_before_a_request_has_finished() {
    let mut s = Snapshot {
        running: 1,
        waiting: 0,
        decoding: 1,
        kv_usage: 0.1,
        kv_used_tokens: 10,
        preemptions: 0,
        prompt_tokens: 8,
        generation_tokens: 0,
        steps: 1,
        requests: 1,
        finished: 0,
    };
    let before = metrics::trtllm_text("m", &s, true);
    assert!(!before.contains("trtllm_"), "{before}");
    s.finished = 1;
    let after = metrics::trtllm_text("m", &s, true);
    assert!(after.contains("trtllm_prompt_tokens_total{"), "{after}");
    assert!(after.contains("trtllm_num_requests_running{"), "{after}");
    assert!(
        after.contains("trtllm_request_success_total{engine_type=\"pytorch\",finished_reason=\"length\",model_name=\"m\"} 1.0"),
        "{after}"
    );
}
