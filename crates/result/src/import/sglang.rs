//! SGLang's `python -m sglang.bench_serving --output-file FILE`: one JSON object per line
//! (the file is appended to), fields as listed in docs/import.md. Python's `json.dumps`
//! writes the default `request_rate` (`inf`) as the bare token `Infinity`.

use servebench_spec::{ApiKind, DatasetKind, TokenCount, TokenRange};

use super::fields::Fields;
use super::{ImportError, ImportOptions, ImportTool, Imported, Source};

/// Summary fields and the catalogue metric each is.
const METRICS: [(&str, &str); 17] = [
    ("request_throughput", "request_throughput"),
    ("output_throughput", "output_throughput"),
    ("mean_ttft_ms", "ttft_mean"),
    ("median_ttft_ms", "ttft_p50"),
    ("p99_ttft_ms", "ttft_p99"),
    ("mean_tpot_ms", "tpot_mean"),
    ("median_tpot_ms", "tpot_p50"),
    ("p99_tpot_ms", "tpot_p99"),
    ("mean_itl_ms", "itl_mean"),
    ("median_itl_ms", "itl_p50"),
    ("p99_itl_ms", "itl_p99"),
    ("max_itl_ms", "itl_max"),
    ("mean_e2e_latency_ms", "e2e_mean"),
    ("median_e2e_latency_ms", "e2e_p50"),
    ("p99_e2e_latency_ms", "e2e_p99"),
    ("concurrency", "mean_concurrency"),
    ("total_throughput", "total_throughput"),
];

/// The input and output lengths `bench_serving --dataset-name random` draws: uniform
/// integers on `[max(⌊L·r⌋, 1), L]` (input) and `[⌊L·r⌋, L]` (output), r the range ratio.
fn random_lengths(len: u32, ratio: f64, at_least_one: bool) -> (TokenCount, Option<String>) {
    if ratio >= 1.0 {
        return (TokenCount::Fixed(len), None);
    }
    let low = (f64::from(len) * ratio.max(0.0)).floor() as u32;
    let mut note = None;
    let min = if low == 0 {
        if !at_least_one {
            note = Some(format!(
                "an output length can be drawn as 0 (⌊{len}·{ratio}⌋ = 0); recorded as a \
                 range from 1"
            ));
        }
        1
    } else {
        low
    };
    if min >= len {
        return (TokenCount::Fixed(len), note);
    }
    (TokenCount::Range(TokenRange { min, max: len }), note)
}

/// Read one line of an SGLang `bench_serving` output file.
pub fn read(
    doc: &serde_json::Value,
    src: &Source<'_>,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut f = Fields::new(doc, *src, "SGLang bench_serving")?;
    let mut notes = Vec::new();
    let (completed, duration) = f.completed_and_duration()?;
    let backend = f.text("backend").unwrap_or_else(|| "sglang".into());
    f.map("backend", "variant name");
    let dataset_name = f.text("dataset_name");
    let request_rate = trace_or_rate(doc, &mut f, &mut notes)?;
    let max_concurrency = f.count("max_concurrency")?.map(|c| c as u32);
    f.map("max_concurrency", "workload.max_concurrency");

    let (dataset, mut input_tokens, mut output_tokens) = match dataset_name.as_deref() {
        Some("random") | Some("random-ids") => {
            let ratio = f.num("random_range_ratio")?.unwrap_or(0.0);
            let input = f.count("random_input_len")?.map(|v| v as u32);
            let output = f.count("random_output_len")?.map(|v| v as u32);
            f.map("random_input_len", "workload.dataset.input_tokens");
            f.map("random_output_len", "workload.dataset.output_tokens");
            f.map("random_range_ratio", "workload.dataset input/output ranges");
            if ratio < 1.0 {
                notes.push(format!(
                    "random_range_ratio {ratio}: bench_serving draws each input length uniformly \
                     from [max(⌊L·r⌋, 1), L] and each output length from [⌊L·r⌋, L] — lengths \
                     are a range, not exact (servebench's random dataset is exact unless given \
                     {{min, max}})"
                ));
            }
            let i = input.map(|l| random_lengths(l, ratio, true));
            let o = output.map(|l| random_lengths(l, ratio, false));
            notes.extend(o.as_ref().and_then(|(_, n)| n.clone()));
            if dataset_name.as_deref() == Some("random-ids") {
                notes.push("dataset random-ids: prompts are random token ids, not text".into());
            } else {
                notes.push(
                    "dataset random: prompts are ShareGPT text cut or repeated to length, not \
                     servebench's random words"
                        .into(),
                );
            }
            (DatasetKind::Random, i.map(|x| x.0), o.map(|x| x.0))
        }
        Some("sharegpt") => {
            let out = f.count("sharegpt_output_len")?.map(|v| v as u32);
            f.map("sharegpt_output_len", "workload.dataset.output_tokens");
            notes.push(
                "dataset sharegpt: the file does not record which ShareGPT file or which \
                 conversations were sampled"
                    .into(),
            );
            (DatasetKind::Sharegpt, None, out.map(TokenCount::Fixed))
        }
        Some(other) => {
            notes.push(format!(
                "dataset `{other}` has no servebench counterpart: recorded as kind jsonl with \
                 no path, so no servebench run matches its workload"
            ));
            (DatasetKind::Jsonl, None, None)
        }
        None => {
            notes.push("dataset_name is not recorded".into());
            (DatasetKind::Random, None, None)
        }
    };
    f.map("dataset_name", "workload.dataset.kind");
    for k in [
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
        "sharegpt_output_len",
    ] {
        f.touch(k);
    }
    if opts.input_tokens.is_some() {
        input_tokens = opts.input_tokens;
    }
    if opts.output_tokens.is_some() {
        output_tokens = opts.output_tokens;
    }

    for (key, name) in METRICS {
        f.metric(key, name)?;
    }
    if !f.has("total_throughput")
        && let Some(v) = f.num("input_throughput")?
        && let Some(o) = f.reported.get("output_throughput").copied()
        && v.is_finite()
    {
        f.reported.insert("total_throughput".into(), v + o);
        f.map(
            "input_throughput",
            "total_throughput (input_throughput + output_throughput)",
        );
    }
    let input_tokens_total = f.count("total_input_tokens")?;
    let output_tokens_total = f.count("total_output_tokens")?;
    f.map("total_input_tokens", "summary.all.input_tokens");
    f.map("total_output_tokens", "summary.all.output_tokens");
    f.touch("total_output_tokens_retokenized");
    notes.push(
        "E2E (and so TPOT = (E2E − TTFT)/(N_out − 1)) ends at the last chunk received, the \
         trailing [DONE] included; servebench's E2E ends at the last token-bearing event"
            .into(),
    );
    notes.push(
        "TTFT is measured from before the HTTP request is opened, connection set-up included"
            .into(),
    );
    notes.push(
        "std_* fields are population SDs over requests: no catalogue metric, not imported".into(),
    );
    let per_request = f.per_request()?;
    if !f.has("max_itl_ms") {
        // SGLang 0.5.23 benchmark/serving.py computes max_itl_ms (:1298) but its result
        // dict (:1855-1907) no longer holds it.
        notes.push(if per_request.is_some() {
            "max_itl_ms is not in the file (bench_serving computes it but, as of 0.5.23, no \
             longer writes it): itl_max comes from the per-request `itls`"
                .into()
        } else {
            "max_itl_ms is not in the file (bench_serving computes it but, as of 0.5.23, no \
             longer writes it): itl_max is not imported; `--output-details` writes the \
             per-request `itls` it can be read from"
                .into()
        });
    }
    let failed = match &per_request {
        Some(p) => p.failures() as u64,
        None => {
            notes.push(
                "failed requests are not recorded without --output-details: counted as 0".into(),
            );
            0
        }
    };
    let model = opts.model.clone();
    if model.is_none() {
        notes.push("the model is not recorded by bench_serving: give --model to name it".into());
    }
    notes.push(format!(
        "ignore_eos assumed on (bench_serving's default; --disable-ignore-eos is not \
             recorded); the seed and warm-up requests are not recorded either: bench_serving's \
             defaults are assumed (seed {}, {} warm-up request), as `servebench from sglang` \
             writes them",
        servebench_spec::peer::sglang::DEFAULT_SEED,
        servebench_spec::peer::sglang::DEFAULT_WARMUP_REQUESTS
    ));
    let ignored = f.ignored();
    let requests = (completed + failed) as u32;
    Ok(Imported {
        tool: ImportTool::Sglang,
        source: src.path.to_owned(),
        source_sha256: src.sha256.to_owned(),
        line: src.many.then_some(src.line),
        measured_at: None,
        api: if backend.contains("chat") {
            ApiKind::OpenaiChat
        } else {
            ApiKind::OpenaiCompletions
        },
        backend,
        model,
        tokenizer: None,
        dataset,
        input_tokens,
        output_tokens,
        ignore_eos: true,
        requests,
        request_rate,
        burstiness: None,
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
        labels: Default::default(),
    })
}

/// `request_rate`: SGLang writes `"trace"` when requests were sent at a trace's own
/// timestamps (`--use-trace-timestamps`; 0.5.23 benchmark/serving.py:1860), else a number
/// or `Infinity`.
fn trace_or_rate(
    doc: &serde_json::Value,
    f: &mut Fields<'_>,
    notes: &mut Vec<String>,
) -> Result<servebench_spec::Rate, ImportError> {
    if doc.get("request_rate").and_then(serde_json::Value::as_str) == Some("trace") {
        f.map(
            "request_rate",
            "workload.request_rate (inf: the trace's own schedule)",
        );
        notes.push(
            "request_rate `trace`: bench_serving sent each request at its trace timestamp \
             (--use-trace-timestamps), not at a constant rate; recorded as `inf`, so no \
             servebench run at a constant rate has its workload"
                .into(),
        );
        return Ok(servebench_spec::Rate::Inf);
    }
    f.request_rate(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(extra: serde_json::Value) -> serde_json::Value {
        // The fields SGLang 0.5.23's bench_serving writes (benchmark/serving.py:1855-1907),
        // with no `max_itl_ms`.
        let mut v: serde_json::Value = serde_json::from_str(
            r#"{
            "tag": null, "backend": "sglang", "dataset_name": "random", "request_rate": 4.0,
            "max_concurrency": 8, "sharegpt_output_len": null, "random_input_len": 128,
            "random_output_len": 32, "random_range_ratio": 1.0, "server_info": null,
            "duration": 10.0, "completed": 40, "total_input_tokens": 5120,
            "total_input_text_tokens": 5120, "total_input_vision_tokens": 0,
            "total_output_tokens": 1280, "total_output_tokens_retokenized": 1280,
            "request_throughput": 4.0, "input_throughput": 512.0, "output_throughput": 128.0,
            "total_throughput": 640.0, "mean_e2e_latency_ms": 300.0,
            "median_e2e_latency_ms": 290.0, "std_e2e_latency_ms": 10.0,
            "p90_e2e_latency_ms": 320.0, "p95_e2e_latency_ms": 330.0, "p99_e2e_latency_ms": 350.0,
            "mean_ttft_ms": 30.0, "median_ttft_ms": 29.0, "std_ttft_ms": 2.0, "p90_ttft_ms": 33.0,
            "p95_ttft_ms": 34.0, "p99_ttft_ms": 36.0, "mean_tpot_ms": 8.0, "median_tpot_ms": 8.0,
            "std_tpot_ms": 0.5, "p90_tpot_ms": 8.6, "p95_tpot_ms": 8.8, "p99_tpot_ms": 9.0,
            "mean_itl_ms": 8.0, "median_itl_ms": 7.9, "std_itl_ms": 0.6, "p90_itl_ms": 8.7,
            "p95_itl_ms": 8.9, "p99_itl_ms": 9.5, "concurrency": 1.2, "accept_length": null,
            "max_output_tokens_per_s": 160.0, "max_concurrent_requests": 8
        }"#,
        )
        .expect("valid JSON");
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            for (k, x) in e {
                o.insert(k.clone(), x.clone());
            }
        }
        v
    }

    fn read_line(doc: &serde_json::Value) -> Result<Imported, ImportError> {
        let src = Source {
            path: std::path::Path::new("bench.jsonl"),
            sha256: "sha256:0",
            line: 1,
            many: false,
        };
        read(doc, &src, &ImportOptions::default())
    }

    #[test]
    fn a_trace_replay_imports_and_says_what_its_rate_is() {
        // 0.5.23 benchmark/serving.py:1860: `"trace" if use_trace_timestamps else request_rate`.
        let im = read_line(&line(serde_json::json!({"request_rate": "trace"})))
            .expect("a trace result imports");
        assert_eq!(im.request_rate, servebench_spec::Rate::Inf);
        assert!(
            im.notes.iter().any(|n| n.contains("request_rate `trace`")),
            "{:?}",
            im.notes
        );
        let err =
            read_line(&line(serde_json::json!({"request_rate": "fast"}))).expect_err("not a rate");
        assert!(err.to_string().contains("request_rate"), "{err}");
    }

    #[test]
    fn a_missing_max_itl_is_said_not_dropped() {
        let im = read_line(&line(serde_json::json!({}))).expect("imports");
        assert!(!im.reported.contains_key("itl_max"));
        assert!(
            im.notes
                .iter()
                .any(|n| n.contains("max_itl_ms is not in the file") && n.contains("not imported")),
            "{:?}",
            im.notes
        );
        let im = read_line(&line(serde_json::json!({"max_itl_ms": 41.0}))).expect("imports");
        assert_eq!(im.reported.get("itl_max"), Some(&41.0));
        assert!(!im.notes.iter().any(|n| n.contains("max_itl_ms")));
    }

    #[test]
    fn range_ratio_bounds_follow_bench_serving() {
        assert_eq!(random_lengths(512, 1.0, true).0, TokenCount::Fixed(512));
        assert_eq!(
            random_lengths(512, 0.5, true).0,
            TokenCount::Range(TokenRange { min: 256, max: 512 })
        );
        let (out, note) = random_lengths(128, 0.0, false);
        assert_eq!(out, TokenCount::Range(TokenRange { min: 1, max: 128 }));
        assert!(note.is_some());
        assert!(random_lengths(128, 0.0, true).1.is_none());
    }
}
