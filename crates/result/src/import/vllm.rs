//! vLLM's `vllm bench serve --save-result` (and the older `benchmarks/benchmark_serving.py
//! --save-result`): one JSON object, or one per line with `--append-result`. Fields as listed
//! in docs/import.md. The file records the traffic (`request_rate`, `burstiness`,
//! `max_concurrency`, `num_prompts`) but not the dataset or its lengths; those come from
//! `--input-tokens` / `--output-tokens`, from `--metadata` pairs, or from the per-request
//! lengths when `--save-detailed` kept them.

use servebench_spec::{ApiKind, DatasetKind, TokenCount, TokenRange};

use super::fields::Fields;
use super::{ImportError, ImportOptions, ImportTool, Imported, PerRequest, Source};

/// Trial-level fields and the catalogue metric each is.
const TRIAL_METRICS: [(&str, &str); 5] = [
    ("request_throughput", "request_throughput"),
    ("output_throughput", "output_throughput"),
    ("total_token_throughput", "total_throughput"),
    ("request_goodput", "goodput"),
    ("max_concurrent_requests", "peak_concurrency"),
];

/// vLLM's latency families and servebench's.
const FAMILIES: [(&str, &str); 5] = [
    ("ttft", "ttft"),
    ("tpot", "tpot"),
    ("itl", "itl"),
    ("e2el", "e2e"),
    ("client_queue_time", "queue_time"),
];

/// The statistic names vLLM writes (`mean`, `median`, `p99`…) that the catalogue has.
fn stat_name(vllm: &str) -> Option<&'static str> {
    match vllm {
        "mean" => Some("mean"),
        "median" | "p50" => Some("p50"),
        "p90" => Some("p90"),
        "p99" => Some("p99"),
        _ => None,
    }
}

/// A length from `--metadata KEY=VALUE` (strings) or a number field.
fn length(f: &mut Fields<'_>, keys: &[&str]) -> Option<TokenCount> {
    for k in keys {
        if let Some(t) = f.text(k)
            && let Ok(n) = t.trim().parse::<u32>()
            && n > 0
        {
            f.map(k, "workload.dataset length");
            return Some(TokenCount::Fixed(n));
        }
    }
    None
}

/// The lengths the successful requests had, as a fixed count or a range.
fn observed(lens: &[u64], ok: &[bool]) -> Option<TokenCount> {
    let v: Vec<u32> = lens
        .iter()
        .zip(ok)
        .filter(|(_, ok)| **ok)
        .map(|(l, _)| *l as u32)
        .filter(|l| *l > 0)
        .collect();
    let (min, max) = (*v.iter().min()?, *v.iter().max()?);
    Some(if min == max {
        TokenCount::Fixed(min)
    } else {
        TokenCount::Range(TokenRange { min, max })
    })
}

fn successes(p: &PerRequest) -> Vec<bool> {
    (0..p.ttfts.len()).map(|i| p.ok(i)).collect()
}

/// Read one vLLM result object.
pub fn read(
    doc: &serde_json::Value,
    src: &Source<'_>,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut f = Fields::new(doc, *src, "vLLM bench serve")?;
    let mut notes = Vec::new();
    let (completed, duration) = f.completed_and_duration()?;
    let failed = f.count("failed")?;
    f.map("failed", "summary.all.failed");
    let backend = f
        .text("backend")
        .or_else(|| f.text("endpoint_type"))
        .unwrap_or_else(|| "vllm".into());
    f.map("backend", "variant name");
    f.touch("endpoint_type");
    let label = f.text("label");
    f.touch("label");
    let model = opts.model.clone().or_else(|| f.text("model_id"));
    f.map("model_id", "target.model");
    let tokenizer = f.text("tokenizer_id");
    f.map(
        "tokenizer_id",
        "target.tokenizer (a tokenizer.json: local with its path; else server)",
    );
    let date = f.text("date");
    f.map(
        "date",
        "import.measured_at (local time of the measuring host)",
    );
    let num_prompts = f.count("num_prompts")?;
    f.map("num_prompts", "workload.requests");
    let request_rate = f.request_rate(&mut notes)?;
    let burstiness = f.num("burstiness")?.filter(|b| b.is_finite() && *b > 0.0);
    f.map(
        "burstiness",
        "workload.burstiness (gamma arrivals when not 1)",
    );
    let max_concurrency = f.count("max_concurrency")?.map(|c| c as u32);
    f.map("max_concurrency", "workload.max_concurrency");
    if f.has("ramp_up_strategy") {
        notes.push(
            "the request rate ramped up during the run (ramp_up_strategy): servebench has no \
             counterpart, the rate recorded is the final one"
                .into(),
        );
        for k in ["ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps"] {
            f.touch(k);
        }
    }

    for (key, name) in TRIAL_METRICS {
        f.metric(key, name)?;
    }
    for (fam, ours) in FAMILIES {
        for stat in ["mean", "median", "p50", "p90", "p99"] {
            let key = format!("{stat}_{fam}_ms");
            if let Some(s) = stat_name(stat) {
                f.metric(&key, &format!("{ours}_{s}"))?;
            }
        }
    }
    let input_tokens_total = f.count("total_input_tokens")?;
    let output_tokens_total = f.count("total_output_tokens")?;
    f.map("total_input_tokens", "summary.all.input_tokens");
    f.map("total_output_tokens", "summary.all.output_tokens");

    let per_request = f.per_request()?;
    let ok = per_request.as_ref().map(successes);

    let dataset_name = f.text("dataset_name").or_else(|| f.text("dataset"));
    f.map("dataset_name", "workload.dataset.kind");
    f.map("dataset", "workload.dataset.kind");
    let dataset = match dataset_name.as_deref() {
        Some("sharegpt") => DatasetKind::Sharegpt,
        Some("random") | None => DatasetKind::Random,
        Some(other) => {
            notes.push(format!(
                "dataset `{other}` has no servebench counterpart: recorded as kind jsonl"
            ));
            DatasetKind::Jsonl
        }
    };
    if dataset_name.is_none() {
        notes.push(
            "the dataset is not recorded by vLLM: recorded as random (its default in `vllm \
             bench serve`); add `--metadata dataset_name=…` when measuring to record it"
                .into(),
        );
    }
    let mut input_tokens = opts
        .input_tokens
        .or_else(|| length(&mut f, &["random_input_len", "input_len"]));
    let mut output_tokens = opts
        .output_tokens
        .or_else(|| length(&mut f, &["random_output_len", "output_len"]));
    if let (Some(p), Some(ok)) = (&per_request, &ok) {
        if input_tokens.is_none() && !p.input_lens.is_empty() {
            input_tokens = observed(&p.input_lens, ok);
            notes.push("input length taken from the per-request input_lens".into());
        }
        if output_tokens.is_none() {
            output_tokens = observed(&p.output_lens, ok);
            notes.push(
                "output length taken from the per-request output_lens (what was generated, \
                 not what was asked for)"
                    .into(),
            );
        }
    }
    if input_tokens.is_none() || output_tokens.is_none() {
        notes.push(
            "input/output lengths are not recorded by vLLM: give --input-tokens and \
             --output-tokens, else the workload cannot match a servebench run's"
                .into(),
        );
    }

    notes.push(
        "TPOT is (E2E − TTFT)/(N_out − 1) per request, the first token excluded, as \
         servebench's; but vLLM's E2E ends at the last chunk received (the trailing usage \
         chunk included), servebench's at the last token-bearing event"
            .into(),
    );
    notes.push(format!(
        "ignore_eos, temperature, seed and warm-up requests are not recorded (recent `vllm \
             bench serve` forces ignore_eos for the random dataset and no longer sends \
             temperature 0 by default); the seed and warm-up are vLLM's defaults (seed {}, {} \
             warm-up requests), as `servebench from vllm` writes them",
        servebench_spec::peer::vllm::DEFAULT_SEED,
        servebench_spec::peer::vllm::DEFAULT_WARMUP_REQUESTS
    ));
    let failed = match (failed, &ok) {
        (Some(n), _) => n,
        (None, Some(ok)) => ok.iter().filter(|o| !**o).count() as u64,
        (None, None) => {
            notes.push("failed requests are not recorded: counted as 0".into());
            0
        }
    };
    let requests = match num_prompts {
        Some(n) if n >= completed + failed => n,
        _ => completed + failed,
    } as u32;
    if model.is_none() {
        notes.push("model_id is missing: give --model to name the model".into());
    }
    let mut labels = std::collections::BTreeMap::new();
    if let Some(l) = label {
        labels.insert("vllm.label".to_owned(), l);
    }
    for (k, v) in f.unread_strings() {
        labels.insert(format!("vllm.{k}"), v);
        f.touch(&k);
    }
    let ignored = f.ignored();
    Ok(Imported {
        tool: ImportTool::Vllm,
        source: src.path.to_owned(),
        source_sha256: src.sha256.to_owned(),
        line: src.many.then_some(src.line),
        measured_at: date,
        api: if backend.contains("chat") {
            ApiKind::OpenaiChat
        } else {
            ApiKind::OpenaiCompletions
        },
        backend,
        model,
        tokenizer,
        dataset,
        input_tokens,
        output_tokens,
        ignore_eos: dataset == DatasetKind::Random,
        requests,
        request_rate,
        burstiness,
        max_concurrency,
        duration_s: Some(duration),
        completed,
        failed,
        input_tokens_total,
        output_tokens_total,
        reported: f.reported.clone(),
        per_request,
        mapped: f.mapped.clone(),
        ignored,
        notes,
        labels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_lengths_become_fixed_or_range() {
        let ok = [true, true, false];
        assert_eq!(observed(&[128, 128, 0], &ok), Some(TokenCount::Fixed(128)));
        assert_eq!(
            observed(&[100, 140, 0], &ok),
            Some(TokenCount::Range(TokenRange { min: 100, max: 140 }))
        );
        assert_eq!(observed(&[0, 0, 0], &ok), None);
    }
}
