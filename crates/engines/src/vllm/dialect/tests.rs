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
