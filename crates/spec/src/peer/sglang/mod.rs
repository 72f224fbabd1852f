//! SGLang's benchmark client, `python -m sglang.bench_serving` (now
//! `sglang.benchmark.serving`; the old module path still runs it), as of SGLang 0.5.23
//! (PyPI wheel, `sglang/benchmark/serving.py` `cli_main`, datasets under
//! `sglang/benchmark/datasets/`). What each flag means there:
//!
//! * `--backend` picks the request function (`ASYNC_REQUEST_FUNCS`, serving.py:976):
//!   `sglang`/`sglang-native` post to SGLang's native `/generate`; `sglang-oai`, `vllm`,
//!   `lmdeploy` to `/v1/completions`; `*-chat` to `/v1/chat/completions`; `trt` to Triton's
//!   `generate_stream`; `gserver` is gRPC; `truss` Baseten's API. The default port follows
//!   the backend (30000 for SGLang's, 8000 for vllm and trt, 23333 for lmdeploy).
//! * `--request-rate` (default `inf`): after each request `get_request` sleeps
//!   `np.random.exponential(1 / rate)` unless the rate is `inf`; `-1` has no special meaning
//!   — numpy refuses the negative scale after the first request, and the run stops.
//! * random lengths (`compute_random_lens`, datasets/common.py:56): each drawn uniformly
//!   from `[max(⌊L·r⌋, 1), L]` with `r = --random-range-ratio`, default 0.0; the shared-prefix
//!   dataset draws its lengths the same way with `--gsp-range-ratio`, default 1.0 (fixed).
//! * `--random-input-len` 1024, `--random-output-len` 1024, `--num-prompts` 1000,
//!   `--warmup-requests` 1, `--seed` 42, `--temperature` 0.0, `ignore_eos` true unless
//!   `--disable-ignore-eos`.

/// bench_serving's `--seed` default (SGLang 0.5.23 `benchmark/serving.py`, `cli_main`):
/// `servebench from` writes it, and `servebench import` assumes it (the result file does
/// not record the seed), so a run of the `from` spec and the import of the same command
/// fill the workload alike.
pub const DEFAULT_SEED: u64 = 42;
/// bench_serving's `--warmup-requests` default (same source); written and assumed alike.
pub const DEFAULT_WARMUP_REQUESTS: u32 = 1;

use std::collections::BTreeMap;

mod datasets;
mod flags;

use super::argv;
use super::common::{
    base_url, extra_body, finish, goodput, headers, model_and_tokenizer, name_of, request_rate,
    u32_of, variant_of,
};
use super::draft::Draft;
use super::table::{Lines, defs};
use super::{PeerError, Translation, Values};
use crate::types::{ApiKind, TokenCount, TokenRange};

pub(crate) use flags::ROWS;

/// The tool and version whose parser this reads.
pub const TOOL: &str = "SGLang 0.5.23 bench_serving";

/// The default port of each backend (`run_benchmark`), 30000 for the others.
fn default_port(backend: &str) -> u16 {
    match backend {
        "lmdeploy" => 23333,
        "vllm" | "vllm-embedding" | "trt" => 8000,
        "gserver" => 9988,
        "truss" => 8080,
        _ => 30000,
    }
}

/// `[max(⌊L·r⌋, 1), L]`, or `L` when `r ≥ 1` (compute_random_lens).
pub(crate) fn sglang_range(len: u32, ratio: f64) -> TokenCount {
    let lo = ((f64::from(len) * ratio).floor() as u32).max(1);
    if lo >= len {
        TokenCount::Fixed(len)
    } else {
        TokenCount::Range(TokenRange { min: lo, max: len })
    }
}

/// Translate bench_serving's command line (program words first are skipped).
pub fn translate(argv: &[String]) -> Result<Translation, PeerError> {
    let parsed = argv::parse(argv, &defs(ROWS), str::to_owned)?;
    let v = Values { parsed: &parsed };
    let mut lines = Lines::default();
    let needs = Vec::new();

    let backend = v.str("--backend").unwrap_or("sglang").to_owned();
    let api = match backend.as_str() {
        "sglang" | "sglang-native" => {
            lines.given_or_default(
                "--backend",
                &v,
                "sglang",
                "target.api: openai-completions — the `sglang` backend posts to SGLang's native \
                 /generate, which servebench does not speak; servebench sends the same prompts \
                 to the same server's OpenAI /v1/completions (same engine, a different front \
                 end: its request parsing and detokenizing differ a little)",
            );
            ApiKind::OpenaiCompletions
        }
        "sglang-oai" | "vllm" | "lmdeploy" => {
            lines.mapped(
                "--backend",
                &v,
                "target.api: openai-completions (/v1/completions)",
            );
            ApiKind::OpenaiCompletions
        }
        "sglang-oai-chat" | "vllm-chat" | "lmdeploy-chat" => {
            lines.mapped(
                "--backend",
                &v,
                "target.api: openai-chat (/v1/chat/completions)",
            );
            ApiKind::OpenaiChat
        }
        other => {
            let why = match other {
                "sglang-embedding" | "vllm-embedding" => {
                    "embeddings: servebench measures streamed generation"
                }
                "trt" => {
                    "Triton's generate_stream endpoint; servebench speaks the OpenAI API \
                     (trtllm-serve serves it: use a chat or completions backend)"
                }
                "gserver" => "a gRPC server; servebench speaks the OpenAI API over HTTP",
                _ => "a provider's own API; servebench speaks the OpenAI API",
            };
            lines.refused("--backend", &v, why);
            ApiKind::OpenaiCompletions
        }
    };
    let base_url = base_url(
        &v,
        "0.0.0.0",
        default_port(&backend),
        &mut lines,
        "bench_serving",
    )?;
    let (model, tokenizer_path) = model_and_tokenizer(&v, "--served-model-name", &mut lines);

    let dataset_name = v.str("--dataset-name").unwrap_or("sharegpt").to_owned();
    let requests = u32_of(&v, "--num-prompts", 1000)?;
    let (dataset, requests) = datasets::dataset(&v, &dataset_name, requests, &mut lines)?;
    let request_rate = request_rate(
        &v,
        &mut lines,
        "bench_serving 0.5.23 gives it no meaning: `get_request` waits \
         np.random.exponential(1/rate) after each request unless the rate is inf, and a \
         negative scale raises, so the run stops after its first request",
    )?;
    let max_concurrency = match v.int("--max-concurrency")? {
        Some(c) if c >= 1 => {
            lines.mapped(
                "--max-concurrency",
                &v,
                format!("workload.max_concurrency: {c}"),
            );
            Some(c as u32)
        }
        Some(_) => {
            lines.ignored(
                "--max-concurrency",
                &v,
                "0 means no limit to bench_serving too",
            );
            None
        }
        None => None,
    };
    let warmup = match v.int("--warmup-requests")? {
        Some(n) if n >= 0 => n as u32,
        Some(n) => {
            return Err(PeerError::BadValue {
                flag: "--warmup-requests".into(),
                value: n.to_string(),
                why: "a count of requests".into(),
            });
        }
        None => DEFAULT_WARMUP_REQUESTS,
    };
    lines.given_or_default(
        "--warmup-requests",
        &v,
        "1",
        format!(
            "workload.warmup_requests: {warmup} (sent before each trial, as bench_serving sends \
             them before its run)"
        ),
    );
    let seed = v.int("--seed")?.unwrap_or(DEFAULT_SEED as i64);
    lines.given_or_default(
        "--seed",
        &v,
        "42",
        format!(
            "workload.seed: {seed} — servebench draws its own prompts from it (not numpy's \
             stream): the same seed gives the same prompts in every servebench run, not \
             bench_serving's prompts"
        ),
    );
    let ignore_eos = !v.has("--disable-ignore-eos");
    if ignore_eos {
        lines.tool_default(
            "--disable-ignore-eos",
            "off",
            "workload.ignore_eos: true (bench_serving sends ignore_eos unless told not to)",
        );
    } else {
        lines.mapped("--disable-ignore-eos", &v, "workload.ignore_eos: false");
    }
    let temperature = v.float("--temperature")?.unwrap_or(0.0);
    lines.given_or_default(
        "--temperature",
        &v,
        "0.0",
        format!("workload.temperature: {temperature}"),
    );
    if let Some(p) = v.float("--top-p")? {
        if p == 1.0 {
            lines.ignored(
                "--top-p",
                &v,
                "1.0 is no nucleus cut (servebench sends none)",
            );
        } else {
            lines.refused("--top-p", &v, "servebench sends no top_p");
        }
    }
    let zero_or = |name: &'static str, neutral: &str, lines: &mut Lines| {
        if let Some(x) = v.str(name) {
            if x.trim() == neutral {
                lines.ignored(name, &v, "the tool's default: nothing asked");
            } else {
                lines.refused(name, &v, "servebench asks for no log-probabilities");
            }
        }
    };
    zero_or("--top-logprobs-num", "0", &mut lines);
    zero_or("--logprob-start-len", "-1", &mut lines);
    if v.has("--token-ids-logprob") {
        lines.refused(
            "--token-ids-logprob",
            &v,
            "servebench asks for no log-probabilities",
        );
    }
    if v.has("--prompt-suffix") {
        match v.str("--prompt-suffix") {
            Some("") | None => lines.ignored("--prompt-suffix", &v, "empty: nothing appended"),
            Some(_) => lines.refused(
                "--prompt-suffix",
                &v,
                "servebench appends nothing to its prompts",
            ),
        }
    }
    if v.has("--cache-report") {
        lines.ignored(
            "--cache-report",
            &v,
            "servebench records the prefix-cache hit ratio (cache_hit_ratio) whenever the \
             server reports cached tokens; SGLang reports them when started with \
             --enable-cache-report",
        );
    }
    let slo = goodput(&v, &mut lines, ["ttft", "tpot", "e2el"])?;
    let headers = headers(&v, &mut lines)?;
    let mut labels = BTreeMap::new();
    if let Some(t) = v.str("--tag") {
        labels.insert("tag".to_owned(), t.to_owned());
        lines.mapped("--tag", &v, format!("metadata.labels.tag: {t}"));
    }

    let name = name_of("sglang", model.as_deref());
    let (request_body, takes_over) = extra_body(&v, "--extra-request-body", &mut lines)?;
    let draft = Draft {
        description: format!(
            "SGLang bench_serving's {dataset_name} workload, translated by `servebench from sglang`"
        ),
        name,
        labels,
        base_url,
        api,
        model,
        tokenizer_path,
        headers,
        variant: variant_of(&backend),
        dataset,
        requests,
        request_rate,
        burstiness: None,
        max_concurrency,
        warmup_requests: warmup,
        ignore_eos,
        temperature,
        seed: seed.unsigned_abs(),
        slo,
        percentiles: Vec::new(),
        trials: 5,
        request_body,
        takes_over,
    };
    let lines = lines.finish(ROWS, &v, &dataset_name, "bench_serving");
    Ok(finish(TOOL, draft, lines, &parsed, needs))
}
