//! Every flag of SGLang 0.5.23 bench_serving's parser (`cli_main`), with what it does when
//! the translation does not read it.

use crate::peer::argv::Arity::*;
use crate::peer::table::{Policy::*, Row, row};

const PROFILE: &str = "read only with --profile";
const DISPLAY: &str = "display only";

/// Every flag of `cli_main`'s parser, in its order.
pub(crate) const ROWS: &[Row] = &[
    row("--backend", One, Read),
    row("--base-url", One, Read),
    row("--host", One, Read),
    row("--port", One, Read),
    row(
        "--ready-check-timeout-sec",
        One,
        Ignored("servebench probes a running endpoint before each trial itself"),
    ),
    row("--dataset-name", One, Read),
    row("--dataset-path", One, Read),
    row("--dataset-offset", One, Dataset(&["agentic-trace"])),
    row("--agentic-max-turns", One, Dataset(&["agentic-trace"])),
    row("--speed-bench-category", One, Dataset(&["speed-bench"])),
    row("--speed-bench-output-len", One, Dataset(&["speed-bench"])),
    row("--model", One, Read),
    row("--served-model-name", One, Read),
    row("--tokenizer", One, Read),
    row("--num-prompts", One, Read),
    row("--sharegpt-output-len", One, Dataset(&["sharegpt"])),
    row("--sharegpt-context-len", One, Dataset(&["sharegpt"])),
    row(
        "--random-input-len",
        One,
        Dataset(&["random", "random-ids", "image"]),
    ),
    row(
        "--random-output-len",
        One,
        Dataset(&["random", "random-ids", "image"]),
    ),
    row(
        "--random-range-ratio",
        One,
        Dataset(&["random", "random-ids", "image"]),
    ),
    row("--image-count", One, Dataset(&["image"])),
    row("--image-resolution", One, Dataset(&["image"])),
    row("--random-image-count", Switch, Dataset(&["image"])),
    row("--image-format", One, Dataset(&["image"])),
    row("--image-content", One, Dataset(&["image"])),
    row("--request-rate", One, Read),
    row("--use-trace-timestamps", Switch, Dataset(&["mooncake"])),
    row("--max-concurrency", One, Read),
    row(
        "--output-file",
        One,
        Ignored("servebench writes its own result file (results/<name>/<run id>.json)"),
    ),
    row(
        "--output-details",
        Switch,
        Ignored("servebench keeps every request in the result's sidecar"),
    ),
    row("--goodput", Many, Read),
    row("--print-requests", Switch, Ignored(DISPLAY)),
    row("--disable-tqdm", Switch, Ignored(DISPLAY)),
    row(
        "--disable-stream",
        Switch,
        Refused("servebench measures streamed responses only (TTFT and ITL need the stream)"),
    ),
    row(
        "--return-logprob",
        Switch,
        Refused("servebench asks for no log-probabilities"),
    ),
    row("--top-logprobs-num", One, Read),
    row("--token-ids-logprob", Many, Read),
    row("--logprob-start-len", One, Read),
    row(
        "--return-routed-experts",
        Switch,
        Refused("servebench asks for no routed experts"),
    ),
    row("--cache-report", Switch, Read),
    row("--seed", One, Read),
    row("--disable-ignore-eos", Switch, Read),
    row("--temperature", One, Read),
    row("--top-p", One, Read),
    row("--extra-request-body", One, Read),
    row(
        "--apply-chat-template",
        Switch,
        Refused(
            "bench_serving applies the chat template on the client and posts text; servebench \
             posts chat messages with `api: openai-chat` and lets the server apply it",
        ),
    ),
    row(
        "--profile",
        Switch,
        Refused("servebench does not start the server's profiler"),
    ),
    row(
        "--plot-throughput",
        Switch,
        Ignored("`servebench report` makes the plots"),
    ),
    row("--profile-activities", Many, Ignored(PROFILE)),
    row("--profile-start-step", One, Ignored(PROFILE)),
    row("--profile-steps", One, Ignored(PROFILE)),
    row("--profile-num-steps", One, Ignored(PROFILE)),
    row("--profile-by-stage", Switch, Ignored(PROFILE)),
    row("--profile-stages", Many, Ignored(PROFILE)),
    row("--profile-output-dir", One, Ignored(PROFILE)),
    row("--profile-prefix", One, Ignored(PROFILE)),
    row(
        "--lora-name",
        Many,
        Refused("servebench sends every request to one model (no LoRA adapters)"),
    ),
    row(
        "--lora-request-distribution",
        One,
        Ignored("read only with --lora-name"),
    ),
    row(
        "--lora-zipf-alpha",
        One,
        Ignored("read only with --lora-name"),
    ),
    row("--prompt-suffix", One, Read),
    row(
        "--pd-separated",
        Switch,
        Refused("servebench has no prefill/decode-separated mode"),
    ),
    row("--profile-prefill-url", Many, Ignored(PROFILE)),
    row("--profile-decode-url", Many, Ignored(PROFILE)),
    row(
        "--flush-cache",
        Switch,
        Refused("servebench does not flush the server's cache before a trial"),
    ),
    row(
        "--flush-cache-timeout",
        One,
        Ignored("read only with --flush-cache"),
    ),
    row("--warmup-requests", One, Read),
    row(
        "--tokenize-prompt",
        Switch,
        Refused("servebench sends prompts as text, never as token ids"),
    ),
    row(
        "--gsp-num-groups",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-prompts-per-group",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-system-prompt-len",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-question-len",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-output-len",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-range-ratio",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-fast-prepare",
        Switch,
        Ignored("servebench prepares prompts its own way"),
    ),
    row(
        "--gsp-send-routing-key",
        Switch,
        Refused("servebench sends no per-group routing header"),
    ),
    row(
        "--gsp-num-turns",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-ordered",
        Switch,
        Refused("servebench always sends a shared-prefix trial in a seeded shuffled order"),
    ),
    row(
        "--gsp-group-distribution",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row(
        "--gsp-zipf-alpha",
        One,
        Dataset(&["generated-shared-prefix"]),
    ),
    row("--mooncake-slowdown-factor", One, Dataset(&["mooncake"])),
    row("--mooncake-num-rounds", One, Dataset(&["mooncake"])),
    row("--mooncake-workload", One, Dataset(&["mooncake"])),
    row(
        "--fake-prefill",
        Switch,
        Refused("servebench sends no disaggregation bootstrap fields"),
    ),
    row("--tag", One, Read),
    row("--header", Many, Read),
    row(
        "--rust-client",
        Switch,
        Ignored("a client implementation of bench_serving; servebench is its own client"),
    ),
    row(
        "--rust-worker-threads",
        One,
        Ignored("read only with --rust-client"),
    ),
];
