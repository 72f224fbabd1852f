//! llama.cpp's Prometheus series in the simulator, as read in
//! llama.cpp (llama-cpp-python 0.3.36), `tools/server/server-task.cpp:1523-1610`: only
//! with `--metrics` (else 501 `not_supported_error`, server-context.cpp:4655-4660); no
//! labels; counters `llamacpp:prompt_tokens_total`, `llamacpp:tokens_predicted_total`,
//! `llamacpp:n_decode_total`; gauges `llamacpp:requests_processing`,
//! `llamacpp:requests_deferred`; numbers written by a C++ stream (`3`, `0.5`).

use crate::dialect::Snapshot;
use crate::dialect::metrics::{cpp_double, text};

/// llama.cpp's series.
pub(super) fn llamacpp(s: &Snapshot) -> String {
    text(|f| {
        let c = |v: u64| cpp_double(v as f64);
        let counters = [
            (
                "prompt_tokens_total",
                "Number of prompt tokens processed, excluding cached tokens",
                c(s.prompt_tokens),
            ),
            (
                "tokens_predicted_total",
                "Number of generation tokens processed",
                c(s.generation_tokens),
            ),
            (
                "n_decode_total",
                "Total number of llama_decode() calls, excluding speculative decoding and \
                     multimodal decoding",
                c(s.steps),
            ),
        ];
        for (name, help, v) in counters {
            let name = format!("llamacpp:{name}");
            f.head(&name, help, "counter");
            f.sample(&name, "", &v);
        }
        let gauges = [
            (
                "requests_processing",
                "Number of requests processing",
                c(s.running),
            ),
            (
                "requests_deferred",
                "Number of requests deferred",
                c(s.waiting),
            ),
        ];
        for (name, help, v) in gauges {
            let name = format!("llamacpp:{name}");
            f.head(&name, help, "gauge");
            f.sample(&name, "", &v);
        }
    })
}
