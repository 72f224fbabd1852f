use super::*;

#[test]
fn every_known_engine_has_its_own_profile_and_auto_has_none() {
    assert!(profile(Engine::Auto).is_none());
    for e in Engine::KNOWN {
        let p = profile(e).expect("profile");
        assert_eq!(p.engine, e, "{e}");
        assert!(!p.checked.is_empty() && !p.name.is_empty());
        assert_eq!(e.as_str().parse::<Engine>(), Ok(e));
        for v in p.version {
            assert!(v.path.starts_with('/') && v.pointer.starts_with('/'), "{e}");
        }
        if let Some(t) = p.tokenize {
            assert!(t.path.starts_with('/'), "{e}");
        }
    }
    assert!("auto".parse::<Engine>() == Ok(Engine::Auto));
    let err = "sglan".parse::<Engine>().unwrap_err();
    assert!(err.contains("sglang"), "{err}");
}

#[test]
fn refused_fields_are_the_ones_that_fail_a_request() {
    assert_eq!(
        profile(Engine::Transformers).map(|p| p.refused_fields()),
        Some(vec![("ignore_eos", 422), ("min_tokens", 422)])
    );
    assert!(GENERIC.refused_fields().is_empty());
    assert!(!profile(Engine::Transformers).is_some_and(|p| p.can_tokenize()));
    assert!(profile(Engine::Sglang).is_some_and(|p| p.reads_server_args()));
    assert!(!profile(Engine::Llamacpp).is_some_and(|p| p.reads_server_args()));
}

/// TGI db931fcf: `/info` holds limits and ids only (router/src/lib.rs:261-299), so a
/// `server_arg` rule can read those and nothing else; SGLang's arguments are open-ended.
#[test]
fn tgis_server_arguments_are_the_keys_of_its_info() {
    let tgi = profile(Engine::Tgi).expect("tgi");
    let names = tgi.server_arg_names().expect("a closed list");
    assert!(names.contains(&"max_concurrent_requests"), "{names:?}");
    for flag in ["quantize", "num_shard", "dtype", "max_batch_prefill_tokens"] {
        assert!(!names.contains(&flag), "{flag}");
    }
    assert!(tgi.reads_server_args());
    assert_eq!(
        profile(Engine::Sglang).and_then(|p| p.server_arg_names()),
        None
    );
}

/// TGI's `ChatRequest` (router/src/lib.rs:827-938) drops `chat_template_kwargs`,
/// `reasoning_effort` and `chat_template`, at generation and `/chat_tokenize` alike: the chat
/// count with them is still the engine's; llama.cpp b11434's input_tokens takes them.
#[test]
fn fields_an_engine_drops_do_not_make_chat_counts_estimates() {
    let tgi = profile(Engine::Tgi).expect("tgi");
    for f in ["chat_template_kwargs", "reasoning_effort", "chat_template"] {
        assert!(tgi.drops_field(f).is_some(), "{f}");
    }
    assert!(tgi.drops_field("top_k").is_none());
    assert!(tgi.tokenizes_with(&["chat_template_kwargs"]));
    assert!(!tgi.tokenizes_with(&["tools"]));
    let llama = profile(Engine::Llamacpp).expect("llamacpp");
    assert_eq!(
        llama.tokenize.and_then(|t| t.chat_path),
        Some("/v1/chat/completions/input_tokens")
    );
    assert!(llama.tokenizes_with(&["chat_template_kwargs", "reasoning_effort"]));
    assert!(!llama.tokenizes_with(&["chat_template"]));
    for e in Engine::KNOWN {
        let p = profile(e).expect("profile");
        assert!(p.drops_field("chat_template_kwargs").is_none() || e == Engine::Tgi);
    }
}

/// One vocabulary of finish reasons: each engine's own words by its profile, the OpenAI
/// API's as they are, anything else unknown.
#[test]
fn finish_words_are_read_into_one_vocabulary() {
    let tgi = profile(Engine::Tgi).expect("tgi");
    assert_eq!(tgi.ending("eos_token", false), Some(Ending::Stop));
    assert_eq!(tgi.ending("eos_token", true), None);
    assert_eq!(tgi.ending("stop_sequence", true), Some(Ending::Stop));
    assert_eq!(tgi.ending("length", false), Some(Ending::Length));
    let trt = profile(Engine::Trtllm).expect("trtllm");
    assert_eq!(trt.ending("cancelled", true), Some(Ending::Abort));
    assert_eq!(GENERIC.ending("tool_calls", true), Some(Ending::ToolCalls));
    assert_eq!(GENERIC.ending("eos_token", false), None);
    for e in Engine::KNOWN {
        for w in profile(e).expect("profile").stream.finish_words {
            assert!(
                !w.source.is_empty() && (w.on.chat || w.on.completions),
                "{e}"
            );
        }
    }
}
