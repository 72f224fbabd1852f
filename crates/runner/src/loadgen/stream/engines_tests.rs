//! The token-event rule of each engine's facts (`stream.token_chunks`) on its streams: a real
//! transcript where we hold one (transformers serve 5.24.0), else the chunk shapes its source
//! writes (cited in its facts.rs).

use super::vllm_tests::replay_body;
use super::*;
use servebench_engines::{Engine, profile};

const MS: u64 = 1_000_000;

fn rule(engine: Engine, chat: bool) -> StreamConsumer {
    let p = profile(engine).expect("a profile");
    StreamConsumer::reading(p.stream.token_chunks.api(chat))
}

fn at_ms(rec: &RequestRecord) -> Vec<u64> {
    rec.events.iter().map(|e| e.t_ns / MS).collect()
}

fn transcript(path: &str) -> String {
    let path = format!("{}/../engines/src/{path}", env!("CARGO_MANIFEST_DIR"));
    let http = std::fs::read_to_string(&path).expect(&path);
    let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
    body.to_owned()
}

#[test]
fn transformers_finish_chunk_without_text_is_no_token() {
    // 5.24.0: a role opener, 8 content chunks, then `"delta": {}` (chat) or `"text": ""`
    // (completions) with the finish reason and usage, sent after the last token.
    let chat = transcript("transformers/transcripts/5.24.0/chat-stream.http");
    let rec = replay_body(&chat, rule(Engine::Transformers, true));
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(at_ms(&rec), [2, 3, 4, 5, 6, 7, 8, 9]);
    let cmpl = transcript("transformers/transcripts/5.24.0/completions-stream.http");
    let rec = replay_body(&cmpl, rule(Engine::Transformers, false));
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(at_ms(&rec), [1, 2, 3, 4, 5, 6, 7, 8]);
    // Read by vLLM's rule, whose finish chunk carries a token, the same stream would count
    // the finish chunk: the engine's facts decide, not the chunk.
    let rec = replay_body(&cmpl, rule(Engine::Vllm, false));
    assert_eq!(at_ms(&rec), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn tgi_chat_has_no_opener_and_its_eos_chunk_is_a_token() {
    // db931fcf chat.rs:86-126: every delta names the role; a special token (EOS) is
    // `"content": ""`, here the last, with the finish reason; usage comes apart.
    let tok = |c: &str, fin: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"{c}\"}},\"logprobs\":null,\"finish_reason\":{fin}}}]}}\n\n"
        )
    };
    let body = [
        tok(" a", "null"),
        tok(" b", "null"),
        tok("", "\"stop\""),
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3,\"total_tokens\":6}}\n\ndata: [DONE]\n\n".into(),
    ]
    .concat();
    let rec = replay_body(&body, rule(Engine::Tgi, true));
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(at_ms(&rec), [1, 2, 3]);
    // The OpenAI API's reading takes the first chunk for a role opener only where it has
    // no text, and the EOS chunk for no token.
    let rec = replay_body(&body, StreamConsumer::new());
    assert_eq!(at_ms(&rec), [1, 2]);
}

#[test]
fn llamacpp_completions_count_a_held_back_token_but_not_the_final_chunk() {
    // b11434: a partial per token, `"text": ""` while a stop string's prefix is held back
    // (server-context.cpp:1977-2011); the final chunk's text is "" (:2235-2237).
    let part = |t: &str| {
        format!(
            "data: {{\"choices\":[{{\"text\":\"{t}\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}}],\"object\":\"text_completion\"}}\n\n"
        )
    };
    let body = [
        part(" a"),
        part(""),
        part(" b"),
        "data: {\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"stop\"}],\"object\":\"text_completion\",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3,\"total_tokens\":6}}\n\ndata: [DONE]\n\n".into(),
    ]
    .concat();
    let rec = replay_body(&body, rule(Engine::Llamacpp, false));
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(at_ms(&rec), [1, 2, 3]);
}
