//! vLLM's benchmark client, `vllm bench serve` (and the older `benchmarks/benchmark_serving.py`
//! with the same flags), as of vLLM 0.33.0 (PyPI wheel: `vllm/benchmarks/serve.py`
//! `add_cli_args`, `vllm/benchmarks/datasets/datasets.py` `add_dataset_parser`). What each
//! flag means there:
//!
//! * `--backend` (default `openai`) picks the request function (`ASYNC_REQUEST_FUNCS`,
//!   lib/endpoint_request_func.py:1155): `vllm`/`openai` stream `/v1/completions`,
//!   `openai-chat` `/v1/chat/completions`; the path is `--endpoint` (default
//!   `/v1/completions`). Requests carry `--served-model-name`, else `--model`.
//! * `--request-rate` (default `inf`): `get_request` asserts every rate is positive, so `-1`
//!   stops the run before it starts; `--burstiness` (1) is the gamma shape of the gaps.
//! * random lengths (`get_sampling_params`, datasets/utils.py:39): drawn from
//!   `[⌊L·(1−r)⌋, ⌈L·(1+r)⌉]` (output at least 1), `r = --random-range-ratio` in [0, 1),
//!   default 0.0 (fixed); the input length has the tokenizer's special tokens taken off
//!   first, and `--random-prefix-len` tokens (default 0) of one fixed prefix go before it.
//! * `--random-input-len` 1024, `--random-output-len` 128, `--num-prompts` 1000,
//!   `--num-warmups` 0, `--seed` 0; `ignore_eos` is set for the random datasets (serve.py:
//!   2183) or with `--ignore-eos`; no temperature is sent unless `--temperature` is given (the
//!   server's default applies).

mod datasets;
mod flags;
mod images;
mod percentiles;

/// `vllm bench serve`'s `--seed` default (vLLM 0.33.0 `benchmarks/serve.py`): written by
/// `servebench from` and assumed by `servebench import` (its result file does not record it).
pub const DEFAULT_SEED: u64 = 0;
/// `vllm bench serve`'s `--num-warmups` default (same source); written and assumed alike.
pub const DEFAULT_WARMUP_REQUESTS: u32 = 0;

use std::collections::BTreeMap;

use super::argv;
use super::common::{
    base_url, extra_body, finish, goodput, headers, model_and_tokenizer, name_of, request_rate,
    variant_of,
};
use super::draft::Draft;
use super::table::{Lines, defs};
use super::{PeerError, Translation, Values, py_float};
use crate::types::{ApiKind, TokenCount, TokenRange};

pub(crate) use flags::ROWS;

/// The tool and version whose parser this reads.
pub const TOOL: &str = "vLLM 0.33.0 `vllm bench serve`";

/// vLLM's `FlexibleArgumentParser` accepts `--max_concurrency` for `--max-concurrency`.
fn dashes(s: &str) -> String {
    match s.strip_prefix("--") {
        Some(rest) => format!("--{}", rest.replace('_', "-")),
        None => s.to_owned(),
    }
}

/// `[⌊L·(1−r)⌋, ⌈L·(1+r)⌉]` (the low end at least `floor`), or `L` when `r = 0`.
fn vllm_range(len: u32, r: f64, floor: u32) -> TokenCount {
    let l = f64::from(len);
    let lo = ((l * (1.0 - r)).floor() as u32).max(floor);
    let hi = ((l * (1.0 + r)).ceil() as u32).max(lo);
    if lo == hi {
        TokenCount::Fixed(lo)
    } else {
        TokenCount::Range(TokenRange { min: lo, max: hi })
    }
}

/// `--random-range-ratio`: one float for both, or `{"input": …, "output": …}`.
fn range_ratios(v: &Values<'_>) -> Result<(f64, f64), PeerError> {
    let Some(s) = v.str("--random-range-ratio") else {
        return Ok((0.0, 0.0));
    };
    let bad = |why: &str| PeerError::BadValue {
        flag: "--random-range-ratio".into(),
        value: s.to_owned(),
        why: why.to_owned(),
    };
    let (i, o) = if s.trim_start().starts_with('{') {
        let m: BTreeMap<String, f64> = serde_json::from_str(s)
            .map_err(|_| bad("write a number, or {\"input\": R, \"output\": R}"))?;
        match (m.get("input"), m.get("output")) {
            (Some(i), Some(o)) => (*i, *o),
            _ => return Err(bad("the JSON form needs both `input` and `output`")),
        }
    } else {
        let r = py_float("--random-range-ratio", s)?;
        (r, r)
    };
    if !(0.0..1.0).contains(&i) || !(0.0..1.0).contains(&o) {
        return Err(bad("vLLM takes a ratio in [0, 1)"));
    }
    Ok((i, o))
}

/// Translate `vllm bench serve`'s command line (program words first are skipped).
pub fn translate(argv: &[String]) -> Result<Translation, PeerError> {
    let parsed = argv::parse(argv, &defs(ROWS), dashes)?;
    let v = Values { parsed: &parsed };
    let mut lines = Lines::default();
    let needs = Vec::new();

    let backend = v.str("--backend").unwrap_or("openai").to_owned();
    let endpoint = v.str("--endpoint").unwrap_or("/v1/completions").to_owned();
    let api = match backend.as_str() {
        "openai" | "vllm" => {
            lines.given_or_default(
                "--backend",
                &v,
                "openai",
                "target.api: openai-completions (/v1/completions)",
            );
            ApiKind::OpenaiCompletions
        }
        "openai-chat" => {
            lines.mapped(
                "--backend",
                &v,
                "target.api: openai-chat (/v1/chat/completions)",
            );
            ApiKind::OpenaiChat
        }
        other => {
            let why = if other.contains("embeddings") || other.contains("pooling") {
                "pooling and embeddings: servebench measures streamed generation"
            } else if other == "vllm-rerank" {
                "reranking: servebench measures streamed generation"
            } else if other == "openai-responses" {
                "the Responses API; servebench speaks chat and completions"
            } else {
                "audio: servebench sends text"
            };
            lines.refused("--backend", &v, why);
            ApiKind::OpenaiCompletions
        }
    };
    let standard = match api {
        ApiKind::OpenaiCompletions => "/v1/completions",
        ApiKind::OpenaiChat => "/v1/chat/completions",
    };
    if endpoint != standard {
        lines.refused(
            "--endpoint",
            &v,
            format!(
                "servebench posts to {standard} for `api: {}`; another path has no counterpart",
                if api == ApiKind::OpenaiChat {
                    "openai-chat"
                } else {
                    "openai-completions"
                }
            ),
        );
    } else if v.has("--endpoint") {
        lines.mapped(
            "--endpoint",
            &v,
            format!("the path of target.api ({standard})"),
        );
    }
    let base_url = base_url(&v, "127.0.0.1", 8000, &mut lines, "vllm bench serve")?;
    let (model, tokenizer_path) = model_and_tokenizer(&v, "--served-model-name", &mut lines);

    let dataset_name = v.str("--dataset-name").unwrap_or("random").to_owned();
    let (dataset, requests, forced_eos) =
        datasets::dataset(&v, &dataset_name, api == ApiKind::OpenaiChat, &mut lines)?;
    let request_rate = request_rate(
        &v,
        &mut lines,
        "vllm bench serve 0.33.0 asserts every rate is positive (`Obtained non-positive \
         request rate`), so the run stops before it starts",
    )?;
    let burstiness = match v.float("--burstiness")? {
        Some(b) if (b - 1.0).abs() > 1e-12 && b > 0.0 => {
            lines.mapped(
                "--burstiness",
                &v,
                format!("workload.arrival: gamma, workload.burstiness: {b}"),
            );
            Some(b)
        }
        Some(_) => {
            lines.mapped("--burstiness", &v, "Poisson arrivals (shape 1)");
            None
        }
        None => None,
    };
    if let Some(p) = v.float("--probe-request-rate")? {
        if p > 0.0 {
            lines.refused(
                "--probe-request-rate",
                &v,
                "servebench sends no probe requests beside the load",
            );
        } else {
            lines.ignored("--probe-request-rate", &v, "0: no probes");
        }
    }
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
            lines.ignored("--max-concurrency", &v, "no limit");
            None
        }
        None => None,
    };
    let warmup = match v.int("--num-warmups")? {
        Some(n) if n >= 0 => n as u32,
        Some(n) => {
            return Err(PeerError::BadValue {
                flag: "--num-warmups".into(),
                value: n.to_string(),
                why: "a count of requests".into(),
            });
        }
        None => DEFAULT_WARMUP_REQUESTS,
    };
    lines.given_or_default(
        "--num-warmups",
        &v,
        "0",
        format!(
            "workload.warmup_requests: {warmup} (vLLM repeats its first request; servebench's \
             warm-up requests are prompts of their own)"
        ),
    );
    let seed = v.int("--seed")?.unwrap_or(DEFAULT_SEED as i64);
    lines.given_or_default(
        "--seed",
        &v,
        "0",
        format!(
            "workload.seed: {seed} — servebench draws its own prompts from it: the same seed \
             gives the same prompts in every servebench run, not vLLM's"
        ),
    );
    let ignore_eos = forced_eos || v.has("--ignore-eos");
    if v.has("--ignore-eos") {
        lines.mapped("--ignore-eos", &v, "workload.ignore_eos: true");
    } else if forced_eos {
        lines.tool_default(
            "--ignore-eos",
            "off",
            format!(
                "workload.ignore_eos: true — vLLM sets it for the {dataset_name} dataset with an \
                 OpenAI backend (serve.py)"
            ),
        );
    } else {
        lines.tool_default("--ignore-eos", "off", "workload.ignore_eos: false");
    }
    let temperature = match v.float("--temperature")? {
        Some(t) => {
            lines.mapped("--temperature", &v, format!("workload.temperature: {t}"));
            t
        }
        None => {
            lines.tool_default(
                "--temperature",
                "none",
                "workload.temperature: 0 — vLLM 0.33.0 sends no temperature unless told (the \
                 server's default applies, often the model's generation_config); servebench \
                 always sends one: pass --temperature 0 to vLLM for the same requests",
            );
            0.0
        }
    };
    if v.has("--skip-chat-template") {
        lines.ignored(
            "--skip-chat-template",
            &v,
            "servebench renders no chat template on the client",
        );
    }
    let slo = goodput(&v, &mut lines, ["ttft", "tpot", "e2el"])?;
    let headers = headers(&v, &mut lines)?;
    let mut labels = BTreeMap::new();
    if let Some(l) = v.str("--label") {
        labels.insert("label".to_owned(), l.to_owned());
        lines.mapped("--label", &v, format!("metadata.labels.label: {l}"));
    }
    if v.has("--metadata") {
        for kv in v.list("--metadata") {
            if let Some((k, val)) = kv.split_once('=') {
                labels.insert(format!("vllm.{k}"), val.to_owned());
            }
        }
        lines.mapped("--metadata", &v, "metadata.labels as vllm.KEY: VALUE");
    }
    let (request_body, takes_over) = extra_body(&v, "--extra-body", &mut lines)?;
    let draft = Draft {
        name: name_of("vllm", model.as_deref()),
        description: format!(
            "vllm bench serve's {dataset_name} workload, translated by `servebench from vllm`"
        ),
        labels,
        base_url,
        api,
        model,
        tokenizer_path,
        headers,
        variant: variant_of(v.str("--label").unwrap_or(&backend)),
        dataset,
        requests,
        request_rate,
        burstiness,
        max_concurrency,
        warmup_requests: warmup,
        ignore_eos,
        temperature,
        seed: seed.unsigned_abs(),
        slo,
        percentiles: percentiles::percentiles(&v, &mut lines),
        trials: 5,
        request_body,
        takes_over,
    };
    let lines = lines.finish(ROWS, &v, &dataset_name, "vllm bench serve");
    Ok(finish(TOOL, draft, lines, &parsed, needs))
}
