//! vLLM's datasets as servebench's.

use super::{range_ratios, vllm_range};
use crate::peer::common::{count_words, u32_of};
use crate::peer::draft::{DraftDataset, DraftTrace};
use crate::peer::table::Lines;
use crate::peer::{PeerError, Values};
use crate::types::{DatasetKind, TokenCount};

/// The dataset, the request count, and whether vLLM forces `ignore_eos` for it.
pub(super) fn dataset(
    v: &Values<'_>,
    name: &str,
    chat: bool,
    lines: &mut Lines,
) -> Result<(DraftDataset, Option<u32>, bool), PeerError> {
    let mut d = DraftDataset {
        kind: DatasetKind::Random,
        input_tokens: None,
        output_tokens: None,
        path: None,
        shared_prefix: None,
        trace: None,
        image: None,
    };
    let requests = u32_of(v, "--num-prompts", 1000)?;
    let mut out_requests = Some(requests);
    // `--input-len` / `--output-len` overwrite the dataset's own length flags (serve.py).
    let general = |v: &Values<'_>, lines: &mut Lines, flag: &'static str, specific: &str| {
        if v.has(flag) {
            lines.mapped(flag, v, format!("read as {specific}"));
        }
    };
    let input_len = |v: &Values<'_>| -> Result<u32, PeerError> {
        match v.int("--input-len")? {
            Some(_) => u32_of(v, "--input-len", 1024),
            None => u32_of(v, "--random-input-len", 1024),
        }
    };
    let output_len = |v: &Values<'_>, specific: &str, default: u32| -> Result<u32, PeerError> {
        match v.int("--output-len")? {
            Some(_) => u32_of(v, "--output-len", default),
            None => u32_of(v, specific, default),
        }
    };
    let num_prompts = |lines: &mut Lines, text: String| {
        lines.given_or_default("--num-prompts", v, "1000", text);
    };
    let mut forced_eos = false;
    if matches!(name, "random" | "random-mm" | "prefix_repetition") && v.has("--dataset-path") {
        lines.refused(
            "--dataset-path",
            v,
            format!(
                "vLLM 0.33.0 stops with `Cannot use '{name}' dataset with --dataset-path` \
                 (serve.py)"
            ),
        );
    }
    match name {
        "random" | "random-mm" => {
            forced_eos = true;
            let mm = name == "random-mm";
            if mm && !chat {
                lines.refused(
                    "--dataset-name",
                    v,
                    "vLLM 0.33.0 stops with `Multi-modal content (images) is not supported on \
                     backend`: random-mm needs --backend openai-chat; written as random text",
                );
            } else {
                lines.given_or_default(
                    "--dataset-name",
                    v,
                    "random",
                    if mm {
                        "workload.dataset.kind: image — vLLM's random-mm: random token ids with \
                         random RGB images, sent as JPEG data URLs (RandomMultiModalDataset, \
                         process_image); servebench's text is words adjusted to the exact \
                         length the server counts, its images PNG: the same pixels, a larger \
                         payload"
                    } else {
                        "workload.dataset.kind: random — vLLM's prompts are random token ids, \
                         decoded and re-encoded; servebench's are words adjusted to the exact \
                         length the server counts"
                    },
                );
            }
            let (ri, ro) = range_ratios(v)?;
            let input = input_len(v)?;
            let output = output_len(v, "--random-output-len", 128)?;
            // servebench's lengths start at 1 (vLLM refuses a total of 0 tokens too).
            let i = match vllm_range(input, ri, 1) {
                TokenCount::Range(r) if r.min >= r.max => TokenCount::Fixed(r.max),
                other => other,
            };
            let o = vllm_range(output, ro, 1);
            general(v, lines, "--input-len", "--random-input-len");
            general(v, lines, "--output-len", "--random-output-len");
            let prefix = match v.int("--random-prefix-len")? {
                Some(p) if p > 0 && mm => {
                    lines.refused(
                        "--random-prefix-len",
                        v,
                        "servebench's image dataset has no shared prefix",
                    );
                    None
                }
                Some(p) if p > 0 => Some(p as u32),
                _ => None,
            };
            lines.given_or_default(
                "--random-input-len",
                v,
                "1024",
                format!(
                    "{} {} (vLLM takes the tokenizer's special tokens off before drawing; \
                     servebench's lengths are as the server counts them)",
                    if prefix.is_some() {
                        "shared_prefix.suffix_tokens:"
                    } else {
                        "workload.dataset.input_tokens:"
                    },
                    count_words(i)
                ),
            );
            lines.given_or_default(
                "--random-output-len",
                v,
                "128",
                format!("workload.dataset.output_tokens: {}", count_words(o)),
            );
            lines.given_or_default(
                "--random-range-ratio",
                v,
                "0.0",
                if ri == 0.0 && ro == 0.0 {
                    "fixed lengths".to_owned()
                } else {
                    format!(
                        "lengths drawn uniformly from [⌊L·(1−r)⌋, ⌈L·(1+r)⌉] (input r = {ri}, \
                         output r = {ro})"
                    )
                },
            );
            match prefix {
                Some(p) => {
                    d.kind = DatasetKind::SharedPrefix;
                    d.shared_prefix = Some((1, requests, TokenCount::Fixed(p), i));
                    d.output_tokens = Some(o);
                    lines.mapped(
                        "--random-prefix-len",
                        v,
                        format!(
                            "workload.dataset.kind: shared_prefix with one group of {requests} \
                             prompts: one fixed {p}-token prefix before each random part"
                        ),
                    );
                    num_prompts(
                        lines,
                        format!("shared_prefix.prompts_per_group: {requests}"),
                    );
                    out_requests = None;
                }
                None => {
                    if v.has("--random-prefix-len") && !mm {
                        lines.ignored("--random-prefix-len", v, "0: no prefix");
                    }
                    d.input_tokens = Some(i);
                    d.output_tokens = Some(o);
                    num_prompts(lines, format!("workload.requests: {requests}"));
                }
            }
            if mm && chat {
                d.kind = DatasetKind::Image;
                d.image = Some(super::images::random_mm(v, lines)?);
            }
            if let Some(b) = v.int("--random-batch-size")? {
                if b == 1 {
                    lines.ignored("--random-batch-size", v, "1: one prompt a request");
                } else {
                    lines.refused(
                        "--random-batch-size",
                        v,
                        "batched prompts are for the embeddings benchmark",
                    );
                }
            }
        }
        "sharegpt" => {
            d.kind = DatasetKind::Sharegpt;
            lines.mapped(
                "--dataset-name",
                v,
                "workload.dataset.kind: sharegpt — the same conversations, chosen and filtered \
                 differently (vLLM shuffles with its seed and drops too short or too long \
                 ones): not the same prompts",
            );
            d.path = Some(
                v.str("--dataset-path")
                    .unwrap_or("ShareGPT_V3_unfiltered_cleaned_split.json")
                    .to_owned(),
            );
            if v.has("--dataset-path") {
                lines.mapped(
                    "--dataset-path",
                    v,
                    format!("workload.dataset.path: {}", d.path.as_deref().unwrap_or("")),
                );
            }
            if v.has("--output-len") || v.has("--sharegpt-output-len") {
                let n = output_len(v, "--sharegpt-output-len", 1)?;
                d.output_tokens = Some(TokenCount::Fixed(n));
                general(v, lines, "--output-len", "--sharegpt-output-len");
                if v.has("--sharegpt-output-len") {
                    lines.mapped(
                        "--sharegpt-output-len",
                        v,
                        format!("workload.dataset.output_tokens: {n}"),
                    );
                }
            }
            num_prompts(lines, format!("workload.requests: {requests}"));
        }
        "custom" | "custom_image" => {
            d.kind = DatasetKind::Jsonl;
            let images = name == "custom_image";
            lines.mapped(
                "--dataset-name",
                v,
                if images {
                    super::images::CUSTOM_IMAGE
                } else {
                    "workload.dataset.kind: jsonl (one {\"prompt\": …} a line, as vLLM's \
                     custom dataset)"
                },
            );
            if images {
                super::images::client_side(v, lines);
            }
            d.path = v.str("--dataset-path").map(str::to_owned);
            if d.path.is_some() {
                lines.mapped(
                    "--dataset-path",
                    v,
                    format!("workload.dataset.path: {}", d.path.as_deref().unwrap_or("")),
                );
            } else {
                d.path = Some("prompts.jsonl".into());
                lines.refused(
                    "--dataset-name",
                    v,
                    "vLLM's custom dataset needs --dataset-path; written as prompts.jsonl",
                );
            }
            match v.int("--custom-output-len")? {
                Some(-1) if images => lines.refused(
                    "--custom-output-len",
                    v,
                    "vLLM's custom_image reads no length from its lines (it sends -1); \
                     servebench reads each line's own max_tokens/output_tokens",
                ),
                Some(-1) => lines.mapped(
                    "--custom-output-len",
                    v,
                    "each line's own output_tokens (-1: the file's lengths)",
                ),
                other => {
                    let n = match other {
                        Some(_) => u32_of(v, "--custom-output-len", 256)?,
                        None => output_len(v, "--custom-output-len", 256)?,
                    };
                    d.output_tokens = Some(TokenCount::Fixed(n));
                    general(v, lines, "--output-len", "--custom-output-len");
                    lines.given_or_default(
                        "--custom-output-len",
                        v,
                        "256",
                        format!("workload.dataset.output_tokens: {n}"),
                    );
                }
            }
            num_prompts(lines, format!("workload.requests: {requests}"));
        }
        "prefix_repetition" => {
            forced_eos = false;
            d.kind = DatasetKind::SharedPrefix;
            lines.mapped(
                "--dataset-name",
                v,
                "workload.dataset.kind: shared_prefix (prompts repeating a few prefixes)",
            );
            let prefix = u32_of(v, "--prefix-repetition-prefix-len", 256)?;
            let suffix = u32_of(v, "--prefix-repetition-suffix-len", 256)?;
            let groups = u32_of(v, "--prefix-repetition-num-prefixes", 10)?;
            let out = output_len(v, "--prefix-repetition-output-len", 128)?;
            let per = (requests / groups).max(1);
            d.shared_prefix = Some((
                groups,
                per,
                TokenCount::Fixed(prefix),
                TokenCount::Fixed(suffix),
            ));
            d.output_tokens = Some(TokenCount::Fixed(out));
            for (flag, default, text) in [
                (
                    "--prefix-repetition-prefix-len",
                    "256",
                    format!("shared_prefix.prefix_tokens: {prefix}"),
                ),
                (
                    "--prefix-repetition-suffix-len",
                    "256",
                    format!("shared_prefix.suffix_tokens: {suffix}"),
                ),
                (
                    "--prefix-repetition-num-prefixes",
                    "10",
                    format!("shared_prefix.groups: {groups}"),
                ),
                (
                    "--prefix-repetition-output-len",
                    "128",
                    format!("workload.dataset.output_tokens: {out}"),
                ),
            ] {
                lines.given_or_default(flag, v, default, text);
            }
            general(v, lines, "--output-len", "--prefix-repetition-output-len");
            num_prompts(
                lines,
                format!(
                    "shared_prefix.prompts_per_group: {per} (num_prompts // num_prefixes, as \
                     vLLM's)"
                ),
            );
            out_requests = None;
        }
        "timed_trace" => {
            forced_eos = true;
            d.kind = DatasetKind::Trace;
            lines.mapped(
                "--dataset-name",
                v,
                "workload.dataset.kind: trace, format mooncake (the same fields: timestamp, \
                 input_length, output_length, hash_ids), replayed on its own clock",
            );
            d.path = Some(v.str("--dataset-path").unwrap_or("trace.jsonl").to_owned());
            if v.has("--dataset-path") {
                lines.mapped(
                    "--dataset-path",
                    v,
                    format!("workload.dataset.path: {}", d.path.as_deref().unwrap_or("")),
                );
            }
            let mult = v.float("--timed-trace-sec-multiplier")?.unwrap_or(1.0);
            let seconds = (mult - 1.0).abs() < 1e-12;
            if !seconds && (mult - 0.001).abs() > 1e-12 {
                lines.refused(
                    "--timed-trace-sec-multiplier",
                    v,
                    "servebench reads trace timestamps in seconds (1) or milliseconds (0.001) \
                     only",
                );
            } else {
                lines.given_or_default(
                    "--timed-trace-sec-multiplier",
                    v,
                    "1",
                    format!("trace.timestamp_unit: {}", if seconds { "s" } else { "ms" }),
                );
            }
            let block = u32_of(v, "--timed-trace-chunk-hash-size", 16)?;
            lines.given_or_default(
                "--timed-trace-chunk-hash-size",
                v,
                "16",
                format!("trace.block_tokens: {block}"),
            );
            for (flag, default) in [
                ("--timed-trace-label-timestamp", "timestamp"),
                ("--timed-trace-label-input-length", "input_length"),
                ("--timed-trace-label-output-length", "output_length"),
                ("--timed-trace-label-hash-ids", "hash_ids"),
            ] {
                match v.str(flag) {
                    Some(x) if x != default => lines.refused(
                        flag,
                        v,
                        format!("servebench's Mooncake format reads the field `{default}`"),
                    ),
                    Some(_) => lines.mapped(flag, v, "the Mooncake field name"),
                    None => {}
                }
            }
            if v.has("--no-self-timed") {
                lines.refused(
                    "--no-self-timed",
                    v,
                    "servebench replays a trace on its own timestamps only",
                );
            }
            if v.has("--self-timed") {
                lines.mapped("--self-timed", v, "replayed on its own timestamps");
            }
            d.trace = Some(DraftTrace {
                speed: 1.0,
                seconds,
                block_tokens: block,
                requests: Some(requests),
            });
            num_prompts(
                lines,
                format!("workload.dataset.trace.requests: {requests} (the trace's first ones)"),
            );
            out_requests = None;
        }
        other => {
            lines.refused(
                "--dataset-name",
                v,
                format!(
                    "servebench has no `{other}` dataset (it has random, jsonl, sharegpt, \
                     shared_prefix, multi_turn and trace); written as random lengths so the \
                     spec validates"
                ),
            );
            d.input_tokens = Some(TokenCount::Fixed(input_len(v)?));
            d.output_tokens = Some(TokenCount::Fixed(output_len(
                v,
                "--random-output-len",
                128,
            )?));
            num_prompts(lines, format!("workload.requests: {requests}"));
        }
    }
    Ok((d, out_requests, forced_eos))
}
