//! Every flag of vLLM 0.33.0 `vllm bench serve`'s parser (`add_cli_args` with
//! `add_dataset_parser`), with what it does when the translation does not read it.

use crate::peer::argv::Arity::*;
use crate::peer::table::{Policy::*, Row, row};

const DISPLAY: &str = "display only";
const RESULT: &str = "servebench writes its own result file (results/<name>/<run id>.json)";
const SAMPLING: &str = "servebench sends temperature only (no other sampling parameter)";

/// Every flag of `add_cli_args` (which adds `add_dataset_parser`'s first), in their order.
pub(crate) const ROWS: &[Row] = &[
    row(
        "--trust-remote-code",
        Switch,
        Ignored("for the client's tokenizer; servebench counts with the server's /tokenize"),
    ),
    row("--seed", One, Read),
    row("--num-prompts", One, Read),
    row("--dataset-name", One, Read),
    row(
        "--no-stream",
        Switch,
        Ignored("how the tool loads a hub dataset"),
    ),
    row("--dataset-path", One, Read),
    row(
        "--no-oversample",
        Switch,
        Ignored("servebench never repeats prompts of a file to reach a count"),
    ),
    row("--skip-chat-template", Switch, Read),
    row(
        "--enable-multimodal-chat",
        Switch,
        Ignored(
            "the same chat request either way: a prompt's images go as image_url parts of its \
             user message",
        ),
    ),
    row(
        "--disable-shuffle",
        Switch,
        Refused("servebench draws a file's prompts in a seeded order"),
    ),
    row(
        "--custom-output-len",
        One,
        Dataset(&["custom", "custom_image"]),
    ),
    row(
        "--custom-ensure-client-side-data",
        Switch,
        Dataset(&["custom_image"]),
    ),
    row("--spec-bench-output-len", One, Dataset(&["spec_bench"])),
    row("--spec-bench-category", One, Dataset(&["spec_bench"])),
    row("--sharegpt-output-len", One, Dataset(&["sharegpt"])),
    row(
        "--timed-trace-chunk-hash-size",
        One,
        Dataset(&["timed_trace"]),
    ),
    row(
        "--timed-trace-sec-multiplier",
        One,
        Dataset(&["timed_trace"]),
    ),
    row(
        "--timed-trace-label-timestamp",
        One,
        Dataset(&["timed_trace"]),
    ),
    row(
        "--timed-trace-label-input-length",
        One,
        Dataset(&["timed_trace"]),
    ),
    row(
        "--timed-trace-label-output-length",
        One,
        Dataset(&["timed_trace"]),
    ),
    row(
        "--timed-trace-label-hash-ids",
        One,
        Dataset(&["timed_trace"]),
    ),
    row("--blazedit-min-distance", One, Dataset(&["hf"])),
    row("--blazedit-max-distance", One, Dataset(&["hf"])),
    row("--asr-max-audio-len-sec", One, Dataset(&["hf"])),
    row("--asr-min-audio-len-sec", One, Dataset(&["hf"])),
    row(
        "--random-input-len",
        One,
        Dataset(&["random", "random-mm", "random-rerank"]),
    ),
    row(
        "--random-output-len",
        One,
        Dataset(&["random", "random-mm", "random-rerank"]),
    ),
    row(
        "--random-range-ratio",
        One,
        Dataset(&["random", "random-mm", "random-rerank"]),
    ),
    row(
        "--random-prefix-len",
        One,
        Dataset(&["random", "random-mm", "random-rerank"]),
    ),
    row(
        "--random-batch-size",
        One,
        Dataset(&["random", "random-mm", "random-rerank"]),
    ),
    row("--no-reranker", Switch, Dataset(&["random-rerank"])),
    row(
        "--random-mm-base-items-per-request",
        One,
        Dataset(&["random-mm"]),
    ),
    row(
        "--random-mm-num-mm-items-range-ratio",
        One,
        Dataset(&["random-mm"]),
    ),
    row(
        "--random-mm-limit-mm-per-prompt",
        One,
        Dataset(&["random-mm"]),
    ),
    row("--random-mm-bucket-config", One, Dataset(&["random-mm"])),
    row("--hf-subset", One, Dataset(&["hf"])),
    row("--hf-split", One, Dataset(&["hf"])),
    row("--hf-name", One, Dataset(&["hf"])),
    row("--hf-output-len", One, Dataset(&["hf"])),
    row("--bfcl-categories", One, Dataset(&["hf"])),
    row(
        "--prefix-repetition-prefix-len",
        One,
        Dataset(&["prefix_repetition"]),
    ),
    row(
        "--prefix-repetition-suffix-len",
        One,
        Dataset(&["prefix_repetition"]),
    ),
    row(
        "--prefix-repetition-num-prefixes",
        One,
        Dataset(&["prefix_repetition"]),
    ),
    row(
        "--prefix-repetition-output-len",
        One,
        Dataset(&["prefix_repetition"]),
    ),
    row(
        "--speed-bench-dataset-subset",
        One,
        Dataset(&["speed_bench"]),
    ),
    row("--speed-bench-output-len", One, Dataset(&["speed_bench"])),
    row("--speed-bench-category", One, Dataset(&["speed_bench"])),
    row("--label", One, Read),
    row("--backend", One, Read),
    row("--base-url", One, Read),
    row("--host", One, Read),
    row("--port", One, Read),
    row("--endpoint", One, Read),
    row("--header", Many, Read),
    row("--max-concurrency", One, Read),
    row("--model", One, Read),
    row("--input-len", One, Read),
    row("--output-len", One, Read),
    row("--tokenizer", One, Read),
    row(
        "--tokenizer-mode",
        One,
        Ignored("for the client's tokenizer; servebench counts with the server's /tokenize"),
    ),
    row(
        "--use-beam-search",
        Switch,
        Refused("servebench streams one sampled sequence per request"),
    ),
    row(
        "--logprobs",
        One,
        Refused("servebench asks for no log-probabilities"),
    ),
    row("--request-rate", One, Read),
    row("--burstiness", One, Read),
    row("--probe-request-rate", One, Read),
    row("--disable-tqdm", Switch, Ignored(DISPLAY)),
    row("--num-warmups", One, Read),
    row(
        "--profile",
        Switch,
        Refused("servebench does not start the server's profiler"),
    ),
    row("--save-result", Switch, Ignored(RESULT)),
    row(
        "--save-detailed",
        Switch,
        Ignored("servebench keeps every request in the result's sidecar"),
    ),
    row("--append-result", Switch, Ignored(RESULT)),
    row("--metadata", Many, Read),
    row("--result-dir", One, Ignored(RESULT)),
    row("--result-filename", One, Ignored(RESULT)),
    row("--ignore-eos", Switch, Read),
    row("--self-timed", Switch, Dataset(&["timed_trace"])),
    row("--no-self-timed", Switch, Dataset(&["timed_trace"])),
    row("--percentile-metrics", One, Read),
    row("--metric-percentiles", One, Read),
    row("--goodput", Many, Read),
    row(
        "--request-id-prefix",
        One,
        Ignored("servebench's request ids are its own"),
    ),
    row("--top-p", One, Refused(SAMPLING)),
    row("--top-k", One, Refused(SAMPLING)),
    row("--min-p", One, Refused(SAMPLING)),
    row("--temperature", One, Read),
    row("--frequency-penalty", One, Refused(SAMPLING)),
    row("--presence-penalty", One, Refused(SAMPLING)),
    row("--repetition-penalty", One, Refused(SAMPLING)),
    row("--served-model-name", One, Read),
    row(
        "--lora-modules",
        Many,
        Refused("servebench sends every request to one model (no LoRA adapters)"),
    ),
    row(
        "--lora-assignment",
        One,
        Ignored("read only with --lora-modules"),
    ),
    row(
        "--ramp-up-strategy",
        One,
        Refused("servebench keeps one request rate per trial (sweep `request_rate` for several)"),
    ),
    row(
        "--ramp-up-start-rps",
        One,
        Ignored("read only with --ramp-up-strategy"),
    ),
    row(
        "--ramp-up-end-rps",
        One,
        Ignored("read only with --ramp-up-strategy"),
    ),
    row(
        "--ready-check-timeout-sec",
        One,
        Ignored("servebench probes a running endpoint before each trial itself"),
    ),
    row(
        "--chat-template-kwargs",
        One,
        Refused("servebench renders no prompts on the client"),
    ),
    row("--extra-body", One, Read),
    row(
        "--skip-tokenizer-init",
        Switch,
        Ignored("servebench needs no client tokenizer with `tokenizer: server`"),
    ),
    row(
        "--insecure",
        Switch,
        Refused(
            "servebench checks an https:// server's certificate; trust its CA with \
             target.tls.ca_file instead",
        ),
    ),
    row(
        "--plot-timeline",
        Switch,
        Ignored("`servebench report` makes the plots"),
    ),
    row(
        "--timeline-itl-thresholds",
        One,
        Ignored("read only with --plot-timeline"),
    ),
    row(
        "--plot-dataset-stats",
        Switch,
        Ignored("`servebench report` makes the plots"),
    ),
];
