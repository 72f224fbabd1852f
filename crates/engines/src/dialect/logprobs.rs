//! Log-probabilities in the engines' shapes, built from a token's [`TokenLogprobs`]:
//! * OpenAI chat, `{"content": [{token, logprob, bytes, top_logprobs: [{token, logprob,
//!   bytes}]}]}`: vLLM 0.33.0 (openai/chat_completion/protocol.py:96-111), TensorRT-LLM
//!   (openai_protocol.py `ChatCompletionLogProbsContent`), the generic dialect; SGLang
//!   0.5.23 orders `token, bytes, logprob` (entrypoints/openai/protocol.py:157-172); TGI
//!   has no `bytes` (router/src/lib.rs:607-677);
//! * legacy completions, `{text_offset, token_logprobs, tokens, top_logprobs: [{token:
//!   logprob}]}`: vLLM (openai/completion/protocol.py:668-672), TensorRT-LLM, the generic
//!   dialect; SGLang writes `text_offset` -1 ("Not supported yet",
//!   entrypoints/openai/utils.py:126-160);
//! * llama.cpp, both APIs, `{"content": [{id, token, bytes, logprob, top_logprobs: [{id,
//!   token, bytes, logprob}]}]}` (tools/server/server-task.cpp:264-305, 1073-1081);
//! * vLLM's `return_tokens_as_token_ids` names tokens `token_id:N`.

use super::json::{Obj, arr, quoted};
use crate::dialect::text::TokenLogprobs;
use crate::dialect::tokenizer;

/// The field order of a chat log-probability entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatStyle {
    /// `token, logprob, bytes, top_logprobs`.
    OpenAi,
    /// `token, bytes, logprob, top_logprobs`.
    Sglang,
    /// `token, logprob, top_logprobs`, no bytes.
    Tgi,
}

/// The text of token `id` as generated (a space and its word).
fn text_of(id: u32) -> String {
    let mut s = String::from(" ");
    tokenizer::push_word(id, &mut s);
    s
}

fn name(id: u32, text: &str, as_ids: bool) -> String {
    if as_ids {
        format!("token_id:{id}")
    } else {
        text.to_owned()
    }
}

fn bytes(s: &str) -> String {
    serde_json::to_string(&s.as_bytes()).unwrap_or_else(|_| "[]".into())
}

fn chat_entry(style: ChatStyle, token: &str, logprob: f64) -> Obj {
    match style {
        ChatStyle::OpenAi => Obj::new()
            .f("token", token)
            .f("logprob", &logprob)
            .r("bytes", bytes(token)),
        ChatStyle::Sglang => Obj::new()
            .f("token", token)
            .r("bytes", bytes(token))
            .f("logprob", &logprob),
        ChatStyle::Tgi => Obj::new().f("token", token).f("logprob", &logprob),
    }
}

/// A generated token with its log-probabilities.
#[derive(Debug, Clone, Copy)]
pub struct Scored<'a> {
    /// Its token id.
    pub id: u32,
    /// Its text.
    pub text: &'a str,
    /// Its log-probabilities and alternatives.
    pub lp: &'a TokenLogprobs,
}

/// `{"content": [entry, …]}`.
pub fn chat(style: ChatStyle, toks: &[Scored<'_>], as_ids: bool) -> String {
    let entries = arr(toks.iter().map(|t| {
        let top = arr(t.lp.top.iter().map(|&(id, logprob)| {
            chat_entry(style, &name(id, &text_of(id), as_ids), logprob).done()
        }));
        chat_entry(style, &name(t.id, t.text, as_ids), t.lp.logprob)
            .r("top_logprobs", top)
            .done()
    }));
    Obj::new().r("content", entries).done()
}

/// The legacy completions object: each token's character offset from `start` on, or -1
/// for every token when `start` is `None` (SGLang).
pub fn completion(toks: &[Scored<'_>], start: Option<i64>, as_ids: bool) -> String {
    let mut offsets = Vec::with_capacity(toks.len());
    let mut at = start.unwrap_or(-1);
    for t in toks {
        offsets.push(at);
        if start.is_some() {
            at += t.text.chars().count() as i64;
        }
    }
    let tops = arr(toks.iter().map(|t| {
        t.lp.top
            .iter()
            .fold(Obj::new(), |o, &(id, logprob)| {
                o.f(&name(id, &text_of(id), as_ids), &logprob)
            })
            .done()
    }));
    Obj::new()
        .f("text_offset", &offsets)
        .r(
            "token_logprobs",
            arr(toks
                .iter()
                .map(|t| serde_json::Value::from(t.lp.logprob).to_string())),
        )
        .r(
            "tokens",
            arr(toks.iter().map(|t| quoted(&name(t.id, t.text, as_ids)))),
        )
        .r("top_logprobs", tops)
        .done()
}

fn llama_entry(id: u32, token: &str, logprob: f64) -> Obj {
    Obj::new()
        .f("id", &id)
        .f("token", token)
        .r("bytes", bytes(token))
        .f("logprob", &logprob)
}

/// llama.cpp's `{"content": [entry, …]}` (both APIs).
pub fn llama(toks: &[Scored<'_>]) -> String {
    let entries = arr(toks.iter().map(|t| {
        let top = arr(t
            .lp
            .top
            .iter()
            .map(|&(id, logprob)| llama_entry(id, &text_of(id), logprob).done()));
        llama_entry(t.id, t.text, t.lp.logprob)
            .r("top_logprobs", top)
            .done()
    }));
    Obj::new().r("content", entries).done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::text::TokenText;

    #[test]
    fn shapes_of_one_token() {
        let text = TokenText::sampled(3);
        let lp = text.logprobs(0, 2);
        let mut s = String::new();
        text.push(0, &mut s);
        let t = Scored {
            id: text.id(0),
            text: &s,
            lp: &lp,
        };
        let one = [t];
        let v: serde_json::Value =
            serde_json::from_str(&chat(ChatStyle::OpenAi, &one, false)).unwrap_or_default();
        let e = &v["content"][0];
        assert_eq!(e["token"], s.as_str());
        assert_eq!(e["top_logprobs"].as_array().map(Vec::len), Some(2));
        assert_eq!(e["top_logprobs"][0]["token"], s.as_str());
        assert_eq!(e["bytes"][0], 32);
        let raw = chat(ChatStyle::Sglang, &one, false);
        assert!(raw.starts_with(r#"{"content":[{"token":"#) && raw.contains(r#"","bytes":[32,"#));
        let v: serde_json::Value =
            serde_json::from_str(&chat(ChatStyle::Tgi, &one, true)).unwrap_or_default();
        assert_eq!(v["content"][0]["token"], format!("token_id:{}", t.id));
        assert!(v["content"][0].get("bytes").is_none());
        let v: serde_json::Value =
            serde_json::from_str(&completion(&one, None, false)).unwrap_or_default();
        assert_eq!(v["text_offset"][0], -1);
        let two = [t, t];
        let v: serde_json::Value =
            serde_json::from_str(&completion(&two, Some(0), false)).unwrap_or_default();
        assert_eq!(v["text_offset"], serde_json::json!([0, s.len()]));
        assert_eq!(v["tokens"][0], s.as_str());
        // serde_json's default parser may miss the last bit of a float.
        let top = v["top_logprobs"][0][s.as_str()].as_f64().unwrap_or(0.0);
        assert!((top - lp.logprob).abs() < 1e-12, "{top} {}", lp.logprob);
        let v: serde_json::Value = serde_json::from_str(&llama(&one)).unwrap_or_default();
        assert_eq!(v["content"][0]["id"], t.id);
    }
}
