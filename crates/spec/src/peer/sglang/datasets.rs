//! bench_serving's datasets as servebench's.

use super::sglang_range;
use crate::peer::common::{count_words, u32_of};
use crate::peer::draft::{DraftDataset, DraftImage, DraftTrace};
use crate::peer::table::Lines;
use crate::peer::{PeerError, Values};
use crate::types::{DatasetKind, TokenCount};

/// The dataset and the request count.
pub(super) fn dataset(
    v: &Values<'_>,
    name: &str,
    requests: u32,
    lines: &mut Lines,
) -> Result<(DraftDataset, Option<u32>), PeerError> {
    let mut d = DraftDataset {
        kind: DatasetKind::Random,
        input_tokens: None,
        output_tokens: None,
        path: None,
        shared_prefix: None,
        trace: None,
        image: None,
    };
    let mut out_requests = Some(requests);
    let num_prompts_line = |lines: &mut Lines, text: String| {
        lines.given_or_default("--num-prompts", v, "1000", text);
    };
    match name {
        "random" | "random-ids" | "image" => {
            let what = if name == "image" {
                d.kind = DatasetKind::Image;
                d.image = Some(image(v, lines)?);
                "random prompts with random images (datasets/image.py); servebench's text is \
                 words adjusted to the exact length the server counts"
            } else if name == "random" {
                "bench_serving's `random` cuts ShareGPT text to each length; servebench's \
                 random prompts are words adjusted to the exact length the server counts"
            } else {
                "bench_serving's `random-ids` draws random token ids; servebench's random \
                 prompts are words adjusted to the exact length the server counts"
            };
            lines.mapped(
                "--dataset-name",
                v,
                format!(
                    "workload.dataset.kind: {} — {what}",
                    if name == "image" { "image" } else { "random" }
                ),
            );
            let input = u32_of(v, "--random-input-len", 1024)?;
            let output = u32_of(v, "--random-output-len", 1024)?;
            let ratio = v.float("--random-range-ratio")?.unwrap_or(0.0);
            let (i, o) = (sglang_range(input, ratio), sglang_range(output, ratio));
            d.input_tokens = Some(i);
            d.output_tokens = Some(o);
            lines.given_or_default(
                "--random-input-len",
                v,
                "1024",
                format!(
                    "workload.dataset.input_tokens: {} (bench_serving takes the tokenizer's \
                     special tokens off each length, so the server counts L; servebench's \
                     lengths are as the server counts them)",
                    count_words(i)
                ),
            );
            lines.given_or_default(
                "--random-output-len",
                v,
                "1024",
                format!("workload.dataset.output_tokens: {}", count_words(o)),
            );
            lines.given_or_default(
                "--random-range-ratio",
                v,
                "0.0",
                format!(
                    "each length drawn uniformly from [max(⌊L·{ratio}⌋, 1), L]{}",
                    if ratio >= 1.0 {
                        ": fixed"
                    } else {
                        " — a range, not a fixed length (pass --random-range-ratio 1 for fixed \
                         lengths)"
                    }
                ),
            );
            num_prompts_line(lines, format!("workload.requests: {requests}"));
        }
        "sharegpt" => {
            d.kind = DatasetKind::Sharegpt;
            lines.given_or_default(
                "--dataset-name",
                v,
                "sharegpt",
                "workload.dataset.kind: sharegpt — the same conversations, but chosen and \
                 filtered differently (bench_serving shuffles them with its seed and drops \
                 too short or too long ones): not the same prompts",
            );
            match v.str("--dataset-path").filter(|p| !p.is_empty()) {
                Some(p) => {
                    d.path = Some(p.to_owned());
                    lines.mapped("--dataset-path", v, format!("workload.dataset.path: {p}"));
                }
                None => {
                    d.path = Some("ShareGPT_V3_unfiltered_cleaned_split.json".into());
                    lines.tool_default(
                        "--dataset-path",
                        "''",
                        "workload.dataset.path: ShareGPT_V3_unfiltered_cleaned_split.json — \
                         bench_serving downloads it from the Hugging Face hub \
                         (anon8231489123/ShareGPT_Vicuna_unfiltered); servebench reads a local \
                         file: put it beside the spec",
                    );
                }
            }
            if let Some(n) = v.int("--sharegpt-output-len")? {
                let n = u32::try_from(n).unwrap_or(1).max(1);
                d.output_tokens = Some(TokenCount::Fixed(n));
                lines.mapped(
                    "--sharegpt-output-len",
                    v,
                    format!("workload.dataset.output_tokens: {n}"),
                );
            }
            if v.has("--sharegpt-context-len") {
                lines.refused(
                    "--sharegpt-context-len",
                    v,
                    "servebench drops no conversation by length (it refuses a trial whose \
                     requests exceed the server's context instead)",
                );
            }
            num_prompts_line(lines, format!("workload.requests: {requests}"));
        }
        "generated-shared-prefix" => {
            d.kind = DatasetKind::SharedPrefix;
            lines.mapped(
                "--dataset-name",
                v,
                "workload.dataset.kind: shared_prefix (groups of prompts sharing a system \
                 prompt)",
            );
            let groups = u32_of(v, "--gsp-num-groups", 64)?;
            let per = u32_of(v, "--gsp-prompts-per-group", 16)?;
            let ratio = v.float("--gsp-range-ratio")?.unwrap_or(1.0);
            let prefix = sglang_range(u32_of(v, "--gsp-system-prompt-len", 2048)?, ratio);
            let suffix = sglang_range(u32_of(v, "--gsp-question-len", 128)?, ratio);
            let out = sglang_range(u32_of(v, "--gsp-output-len", 256)?, ratio);
            d.shared_prefix = Some((groups, per, prefix, suffix));
            d.output_tokens = Some(out);
            lines.given_or_default(
                "--gsp-num-groups",
                v,
                "64",
                format!("shared_prefix.groups: {groups}"),
            );
            lines.given_or_default(
                "--gsp-prompts-per-group",
                v,
                "16",
                format!("shared_prefix.prompts_per_group: {per}"),
            );
            lines.given_or_default(
                "--gsp-system-prompt-len",
                v,
                "2048",
                format!("shared_prefix.prefix_tokens: {}", count_words(prefix)),
            );
            lines.given_or_default(
                "--gsp-question-len",
                v,
                "128",
                format!("shared_prefix.suffix_tokens: {}", count_words(suffix)),
            );
            lines.given_or_default(
                "--gsp-output-len",
                v,
                "256",
                format!("workload.dataset.output_tokens: {}", count_words(out)),
            );
            lines.given_or_default(
                "--gsp-range-ratio",
                v,
                "1.0",
                format!("lengths drawn from [max(⌊L·{ratio}⌋, 1), L] (1: fixed)"),
            );
            if v.has("--num-prompts") {
                lines.ignored(
                    "--num-prompts",
                    v,
                    format!(
                        "bench_serving sends groups × prompts per group ({}) for this dataset",
                        groups * per
                    ),
                );
            }
            out_requests = None;
            match v.int("--gsp-num-turns")? {
                Some(t) if t > 1 => lines.refused(
                    "--gsp-num-turns",
                    v,
                    "servebench's shared-prefix prompts are single turns (multi_turn \
                     conversations share no system prompt)",
                ),
                Some(_) => lines.ignored("--gsp-num-turns", v, "one turn, as servebench's"),
                None => {}
            }
            match v.str("--gsp-group-distribution") {
                Some("uniform") => lines.ignored(
                    "--gsp-group-distribution",
                    v,
                    "every group gets its prompts, as servebench's",
                ),
                Some(_) => lines.refused(
                    "--gsp-group-distribution",
                    v,
                    "servebench gives every group the same number of prompts (no Zipf draw)",
                ),
                None => {}
            }
            if v.has("--gsp-zipf-alpha") {
                lines.ignored(
                    "--gsp-zipf-alpha",
                    v,
                    "read only with --gsp-group-distribution zipf",
                );
            }
        }
        "mooncake" => {
            d.kind = DatasetKind::Trace;
            lines.mapped(
                "--dataset-name",
                v,
                "workload.dataset.kind: trace, format mooncake (timestamps in ms, hash_ids of \
                 512 tokens), replayed on the trace's own clock",
            );
            let workload = v.str("--mooncake-workload").unwrap_or("conversation");
            match v.str("--dataset-path").filter(|p| !p.is_empty()) {
                Some(p) => {
                    d.path = Some(p.to_owned());
                    lines.mapped("--dataset-path", v, format!("workload.dataset.path: {p}"));
                }
                None => {
                    d.path = Some(format!("{workload}_trace.jsonl"));
                    lines.tool_default(
                        "--dataset-path",
                        "''",
                        format!(
                            "workload.dataset.path: {workload}_trace.jsonl — bench_serving \
                             downloads Mooncake's {workload} trace from GitHub \
                             (kvcache-ai/Mooncake, FAST25-release); servebench reads a local \
                             file: put it beside the spec"
                        ),
                    );
                }
            }
            if v.has("--mooncake-workload") {
                lines.mapped(
                    "--mooncake-workload",
                    v,
                    "which trace file (the path above)",
                );
            }
            let slow = v.float("--mooncake-slowdown-factor")?.unwrap_or(1.0);
            let speed = if slow > 0.0 { 1.0 / slow } else { 1.0 };
            lines.given_or_default(
                "--mooncake-slowdown-factor",
                v,
                "1.0",
                format!("workload.dataset.trace.speed: {speed} (the inverse of the slowdown)"),
            );
            d.trace = Some(DraftTrace {
                speed,
                seconds: false,
                block_tokens: 512,
                requests: Some(requests),
            });
            num_prompts_line(
                lines,
                format!("workload.dataset.trace.requests: {requests} (the trace's first ones)"),
            );
            out_requests = None;
            if v.has("--use-trace-timestamps") {
                lines.mapped(
                    "--use-trace-timestamps",
                    v,
                    "a trace is always replayed on its own timestamps",
                );
            } else {
                lines.tool_default(
                    "--use-trace-timestamps",
                    "off",
                    "servebench replays a trace on its own timestamps; bench_serving does so \
                     only for the `sglang` backend or with this flag, else it sends the \
                     trace's requests at --request-rate",
                );
            }
            match v.int("--mooncake-num-rounds")? {
                Some(n) if n > 1 => lines.refused(
                    "--mooncake-num-rounds",
                    v,
                    "servebench replays each trace line as one request (no multi-round \
                     sessions)",
                ),
                Some(_) => lines.ignored("--mooncake-num-rounds", v, "one round, as servebench's"),
                None => {}
            }
        }
        other => {
            lines.refused(
                "--dataset-name",
                v,
                format!(
                    "servebench has no `{other}` dataset (it has random, jsonl, sharegpt, \
                     shared_prefix, multi_turn and trace); written as random lengths from \
                     --random-input-len/--random-output-len so the spec validates"
                ),
            );
            let i = sglang_range(u32_of(v, "--random-input-len", 1024)?, 1.0);
            let o = sglang_range(u32_of(v, "--random-output-len", 1024)?, 1.0);
            d.input_tokens = Some(i);
            d.output_tokens = Some(o);
            num_prompts_line(lines, format!("workload.requests: {requests}"));
        }
    }
    if matches!(name, "random" | "random-ids" | "generated-shared-prefix")
        && v.str("--dataset-path").is_some_and(|p| !p.is_empty())
    {
        lines.ignored(
            "--dataset-path",
            v,
            "bench_serving's random text is cut from this ShareGPT file; servebench's random \
             prompts need no file",
        );
    }
    Ok((d, out_requests))
}

/// `--image-count`, `--image-resolution`, `--image-format`, `--image-content` and
/// `--random-image-count` (SGLang 0.5.23 serving.py:2432-2464, datasets/image.py:73-100) as
/// `dataset.image`.
fn image(v: &Values<'_>, lines: &mut Lines) -> Result<DraftImage, PeerError> {
    let count = u32_of(v, "--image-count", 1)?;
    lines.given_or_default(
        "--image-count",
        v,
        "1",
        format!("workload.dataset.image.count: {count}"),
    );
    let res = v.str("--image-resolution").unwrap_or("1080p");
    let bad = || PeerError::BadValue {
        flag: "--image-resolution".into(),
        value: res.to_owned(),
        why: "4k, 1080p, 720p, 360p or HEIGHTxWIDTH".into(),
    };
    let (width, height) = match res {
        "4k" => (3840, 2160),
        "1080p" => (1920, 1080),
        "720p" => (1280, 720),
        "360p" => (640, 360),
        r if r.starts_with("random:") => {
            lines.refused(
                "--image-resolution",
                v,
                "servebench draws every image at one size; written as 1080p",
            );
            (1920, 1080)
        }
        r => {
            let (h, w) = r
                .to_lowercase()
                .split_once('x')
                .map(|(h, w)| (h.to_owned(), w.to_owned()))
                .ok_or_else(bad)?;
            (
                w.parse::<u32>().map_err(|_| bad())?,
                h.parse::<u32>().map_err(|_| bad())?,
            )
        }
    };
    if !res.starts_with("random:") {
        lines.given_or_default(
            "--image-resolution",
            v,
            "1080p",
            format!(
                "workload.dataset.image: width {width}, height {height} (bench_serving's \
                 HEIGHTxWIDTH)"
            ),
        );
    }
    let format = v.str("--image-format").unwrap_or("jpeg");
    let text = if format == "png" {
        "workload.dataset.image.format: png".to_owned()
    } else {
        format!(
            "workload.dataset.image.format: png — servebench writes PNG or BMP, not {format}: \
             the same pixels, a larger payload"
        )
    };
    lines.given_or_default("--image-format", v, "jpeg", text);
    match v.str("--image-content") {
        Some("blank") => lines.refused(
            "--image-content",
            v,
            "servebench's images are random pixels (every request's its own)",
        ),
        Some(_) => lines.mapped("--image-content", v, "random pixels, as servebench's"),
        None => {}
    }
    if v.has("--random-image-count") {
        lines.refused(
            "--random-image-count",
            v,
            "servebench sends the same number of images with every request",
        );
    }
    Ok((count, width, height))
}
