//! The SGLang dialect against its engine's log statements and metrics (files and lines named
//! beside each test).

use super::Sglang;
use crate::Engine;
use crate::dialect::tests::{addr, config};
use crate::dialect::*;

// SGLang ≥ 0.5.19, entrypoints/engine.py:311,1185: `server_args={resolved_dict()}`.
#[test]
fn sglang_dict_form_prints_the_backend_as_a_dict_entry() {
    let lines = Sglang.start_lines(&config(Engine::Sglang), addr());
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
    let lines = Sglang.start_lines(&c, addr());
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
    assert_eq!(Sglang.ready_lines("http://x").len(), 1);
    assert!(
        Sglang.ready_lines("http://x")[0].ends_with("The server is fired up and ready to roll!")
    );
}
