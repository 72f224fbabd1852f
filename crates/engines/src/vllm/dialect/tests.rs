//! The vLLM dialect against its engine's log statements and metrics (files and lines named
//! beside each test).

use super::Vllm;
use crate::Engine;
use crate::dialect::tests::{addr, config};
use crate::dialect::*;

// vLLM 0.33.0: common/startup.py:96 on the head; fused_moe/oracle/nvfp4.py:239-243 on every
// worker; a headless rank runs no `log_non_default_args`.
#[test]
fn vllm_head_logs_non_default_args_and_workers_log_the_upper_case_backend() {
    let c = config(Engine::Vllm);
    let head = Vllm.start_lines(&c, addr());
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
    let rank = Vllm.worker_lines(&c);
    assert_eq!(rank.len(), 1, "{rank:?}");
    assert!(rank[0].contains(worker_line), "{rank:?}");
    assert!(
        !rank[0].contains("flashinfer_cutedsl"),
        "no lower-case name on a headless rank"
    );
    let ready = Vllm.ready_lines("http://127.0.0.1:8000");
    assert!(ready[0].ends_with("[entry.py:139] Starting vLLM server on http://127.0.0.1:8000"));
}

// Finding 48: a request whose prompt fits but whose `max_tokens` does not. By default the
// personality refuses it as 0.26.0 did on an H100 (renderers/params.py:433-452); with
// `--engine-version 0.33.0` it cuts `max_tokens` to what the context leaves, silently
// (0.33.0 serve/utils/api_utils.py:233-264), and refuses only a prompt beyond the context
// alone (renderers/params.py:537-551).
#[test]
fn vllm_cuts_max_tokens_from_0_33_0_and_refuses_before() {
    use crate::dialect::request::Api;
    let mut c = config(Engine::Vllm);
    c.max_model_len = 64;
    let words = vec!["w"; 40].join(" ");
    let body = |max: u32| {
        serde_json::json!({"model": c.model, "prompt": words, "max_tokens": max}).to_string()
    };
    let admit = |c: &Served, max: u32| Vllm.admit(Api::Completions, body(max).as_bytes(), c);
    let err = admit(&c, 40).expect_err("0.26.0's rule refuses");
    assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST);
    for v in ["0.33.0", "0.34.1rc1"] {
        c.wire.engine_version = Some(v.into());
        let req = admit(&c, 40).unwrap_or_else(|e| panic!("{v}: {e:?}"));
        assert_eq!(
            u64::from(req.max_tokens) + u64::from(req.prompt_tokens),
            64,
            "{v}"
        );
        assert_eq!(admit(&c, 8).expect("fits").max_tokens, 8, "{v}");
    }
    c.wire.engine_version = Some("0.32.9".into());
    assert!(admit(&c, 40).is_err(), "before 0.33.0: refused");
    c.wire.engine_version = Some("0.33.0".into());
    c.max_model_len = 16;
    assert!(
        admit(&c, 1).is_err(),
        "a prompt beyond the context alone is refused"
    );
}
