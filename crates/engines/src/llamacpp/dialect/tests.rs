//! The llama.cpp dialect against its engine's log statements and metrics (files and lines named
//! beside each test).

use super::Llamacpp;
use crate::Engine;
use crate::dialect::tests::{addr, config};
use crate::dialect::*;

// llama.cpp: server-context.cpp:1231, server.cpp:485,513; `srv  %12.*s: ` (server-common.h).
#[test]
fn llamacpp_logs_its_slots_then_loaded_and_listening() {
    let mut c = config(Engine::Llamacpp);
    c.max_num_seqs = 4;
    c.max_model_len = 4096;
    c.wire.flash_attn = crate::dialect::FlashAttn::On;
    let lines = Llamacpp.start_lines(&c, addr());
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
        Llamacpp.ready_lines("http://127.0.0.1:8080"),
        vec![
            "srv  llama_server: model loaded".to_owned(),
            "srv  llama_server: listening on http://127.0.0.1:8080".to_owned()
        ]
    );
}
