//! The longest request a server takes (prompt + output tokens), read before the trials so that
//! a workload the server cannot take is refused with what to change, instead of every request
//! failing one by one (docs/workloads.md, "Requests longer than the server takes").
//!
//! - `GET /v1/models`: vLLM, SGLang and the simulator list `max_model_len` for each model.
//! - `GET /props`: llama.cpp's `default_generation_settings.n_ctx`, the context of one slot
//!   (its `--ctx-size` divided among `--parallel` slots), which is what one request may use.
//!
//! Best effort: a server that says neither has no known limit, and nothing is checked.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::http;
use crate::dataset::TrialPrompts;

/// Timeout of each read.
const LIMIT_TIMEOUT: Duration = Duration::from_secs(3);

/// The most tokens (prompt + output) one request may use on a server, and where it said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLimit {
    /// Prompt + output tokens.
    pub tokens: u64,
    /// Where it came from, e.g. "`max_model_len` of sim-model in /v1/models".
    pub source: String,
}

/// Reads the limit from the server at `base_url` (`model`: the spec's model name; with
/// `api_key` and `headers` as requests send them, `ca_file` trusted for `https://`).
pub async fn context_limit(
    base_url: &str,
    ca_file: Option<&Path>,
    model: &str,
    api_key: Option<&str>,
    headers: &[(String, String)],
) -> Option<ContextLimit> {
    let client = http::client(ca_file).ok()?;
    let get = |path: &str| {
        let mut req = client.get(http::url(base_url, path)).timeout(LIMIT_TIMEOUT);
        if let Some(key) = api_key {
            req = req.bearer_auth(key);
        }
        for (k, v) in headers {
            req = req.header(k, v);
        }
        async move {
            let resp = req.send().await.ok()?;
            if !resp.status().is_success() {
                return None;
            }
            resp.json::<Value>().await.ok()
        }
    };
    if let Some(models) = get("/v1/models").await
        && let Some(limit) = from_models(&models, model)
    {
        return Some(limit);
    }
    from_props(&get("/props").await?)
}

/// `max_model_len` of `model` (or of the only model listed) in a `/v1/models` answer.
fn from_models(doc: &Value, model: &str) -> Option<ContextLimit> {
    let data = doc.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    let tokens = entry.get("max_model_len")?.as_u64()?;
    let id = entry.get("id").and_then(Value::as_str).unwrap_or(model);
    Some(ContextLimit {
        tokens,
        source: format!("`max_model_len` of {id} in /v1/models"),
    })
}

/// llama.cpp's per-slot context in a `/props` answer.
fn from_props(doc: &Value) -> Option<ContextLimit> {
    let tokens = doc
        .pointer("/default_generation_settings/n_ctx")
        .and_then(Value::as_u64)?;
    Some(ContextLimit {
        tokens,
        source: "`default_generation_settings.n_ctx` (the context of one slot) in /props".into(),
    })
}

/// Refuses prompts whose exact length plus `max_tokens` exceeds `limit`: the message says how
/// many, the longest, the limit and where it came from, and what to change. Prompts whose
/// length is unknown or estimated (chat turns, no tokenizer) are not checked.
pub fn check_lengths(prompts: &TrialPrompts, limit: &ContextLimit) -> Result<(), String> {
    let all = prompts.measured.iter().chain(&prompts.warmup);
    // Only lengths the server's (or the model tokenizer's) own count gave: a word-count
    // estimate could refuse a workload that fits.
    check_planned(
        all.map(|p| match (p.expected_input_tokens, p.input_tokens_exact) {
            (Some(input), true) => Some((input, p.max_tokens)),
            _ => None,
        }),
        limit,
    )
}

/// [`check_lengths`] over the (prompt, output) lengths of a trial's requests as planned,
/// `None` for one whose length is not known exactly: the check a trial's prompts get before
/// they are built, when their lengths are known from the workload (a trace, fixed lengths).
pub fn check_planned(
    lengths: impl IntoIterator<Item = Option<(u32, u32)>>,
    limit: &ContextLimit,
) -> Result<(), String> {
    let mut over = 0usize;
    let mut total = 0usize;
    let mut longest: Option<(u64, u64)> = None;
    for l in lengths {
        total += 1;
        let Some((input, output)) = l else {
            continue;
        };
        let (input, output) = (u64::from(input), u64::from(output));
        if input + output > limit.tokens {
            over += 1;
            if longest.is_none_or(|(i, o)| input + output > i + o) {
                longest = Some((input, output));
            }
        }
    }
    let Some((input, output)) = longest else {
        return Ok(());
    };
    Err(format!(
        "{over} of {total} requests need more tokens than the server takes: the longest is \
         {input} prompt + {output} output = {} tokens, the server's limit is {} ({}). Shorten \
         `workload.dataset` (input_tokens, output_tokens, or the trace's lengths), or give the \
         server a longer context (vLLM --max-model-len, SGLang --context-length, llama.cpp \
         --ctx-size, which --parallel divides among its slots); nothing was sent",
        input + output,
        limit.tokens,
        limit.source
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Prompt;

    fn prompts(lengths: &[(Option<u32>, u32)]) -> TrialPrompts {
        TrialPrompts {
            measured: lengths
                .iter()
                .map(|&(input, max_tokens)| Prompt {
                    expected_input_tokens: input,
                    input_tokens_exact: input.is_some(),
                    max_tokens,
                    ..Prompt::text("x", max_tokens)
                })
                .collect(),
            warmup: Vec::new(),
            send_offsets_ns: None,
            conversations: None,
        }
    }

    #[test]
    fn reads_the_limit_of_the_spec_model_or_of_the_only_model_and_llama_cpp_slots() {
        let two = serde_json::json!({"data": [
            {"id": "a", "max_model_len": 4096},
            {"id": "b", "max_model_len": 8192}
        ]});
        assert_eq!(from_models(&two, "b").map(|l| l.tokens), Some(8192));
        assert_eq!(from_models(&two, "c"), None, "which one is unknown");
        let one = serde_json::json!({"data": [{"id": "served", "max_model_len": 2048}]});
        let l = from_models(&one, "other-name").expect("the only model");
        assert_eq!(l.tokens, 2048);
        assert!(l.source.contains("served"), "{}", l.source);
        let none = serde_json::json!({"data": [{"id": "gpt", "object": "model"}]});
        assert_eq!(from_models(&none, "gpt"), None);
        let props = serde_json::json!({"default_generation_settings": {"n_ctx": 1024}});
        assert_eq!(from_props(&props).map(|l| l.tokens), Some(1024));
    }

    #[test]
    fn refuses_prompts_over_the_limit_naming_the_longest_and_what_to_change() {
        let limit = ContextLimit {
            tokens: 1000,
            source: "`max_model_len` of m in /v1/models".into(),
        };
        assert_eq!(check_lengths(&prompts(&[(Some(900), 100)]), &limit), Ok(()));
        assert_eq!(
            check_lengths(&prompts(&[(None, 5000)]), &limit),
            Ok(()),
            "unknown lengths are not checked"
        );
        let mut estimated = prompts(&[(Some(5000), 16)]);
        estimated.measured[0].input_tokens_exact = false;
        assert_eq!(
            check_lengths(&estimated, &limit),
            Ok(()),
            "estimated lengths are not checked"
        );
        let err = check_lengths(
            &prompts(&[(Some(900), 101), (Some(10), 16), (Some(990), 64)]),
            &limit,
        )
        .expect_err("over");
        assert!(err.starts_with("2 of 3 requests"), "{err}");
        assert!(
            err.contains("990 prompt + 64 output = 1054 tokens"),
            "{err}"
        );
        assert!(err.contains("limit is 1000 (`max_model_len` of m"), "{err}");
        assert!(
            err.contains("--max-model-len") && err.contains("--ctx-size"),
            "{err}"
        );
    }
}
