//! Which tool wrote a result object, from fields only that tool writes, so that `import
//! sglang` of a vLLM file (or the reverse) is refused with the tool it is instead of being
//! read field by field into a wrong result (the two share `completed`, `duration`,
//! `request_throughput`, `mean_ttft_ms`…).
//!
//! Read in the tools' sources:
//! * SGLang `bench_serving` writes `total_output_tokens_retokenized` and
//!   `mean_e2e_latency_ms` in every result (sglang 0.5.23 `benchmark/serving.py` 1875, 1880;
//!   0.5.3 `bench_serving.py` 1877, 1881); vLLM writes neither.
//! * vLLM `bench serve --save-result` writes `model_id` and `num_prompts` in every result
//!   (vllm 0.33.0 `benchmarks/serve.py` 2310, 2312), and `mean_e2el_ms` when end-to-end
//!   latency is among its percentile metrics; SGLang writes none of them.

use serde_json::Value;

use super::ImportTool;

/// The tool whose fields `doc` has, and the fields that say so; `None` when it has neither
/// tool's own fields (or both).
pub fn written_by(doc: &Value) -> Option<(ImportTool, String)> {
    let has = |k: &str| doc.get(k).is_some();
    let present = |keys: &[&'static str]| -> Vec<&'static str> {
        keys.iter().copied().filter(|k| has(k)).collect()
    };
    let sglang = present(&["total_output_tokens_retokenized", "mean_e2e_latency_ms"]);
    let mut vllm = present(&["mean_e2el_ms"]);
    if has("model_id") && has("num_prompts") {
        vllm.extend(["model_id", "num_prompts"]);
    }
    let fields = |v: &[&str]| {
        v.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    match (sglang.is_empty(), vllm.is_empty()) {
        (false, true) => Some((ImportTool::Sglang, fields(&sglang))),
        (true, false) => Some((ImportTool::Vllm, fields(&vllm))),
        _ => None,
    }
}

/// What `tool` writes, in words.
pub(super) fn describe(tool: ImportTool) -> &'static str {
    match tool {
        ImportTool::Sglang => "an SGLang `bench_serving` result",
        ImportTool::Vllm => "a vLLM `vllm bench serve` result",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_is_known_by_its_own_fields() {
        let sg = serde_json::json!({"completed": 3, "mean_e2e_latency_ms": 5.0,
            "total_output_tokens_retokenized": 9});
        let (t, why) = written_by(&sg).expect("sglang");
        assert_eq!(t, ImportTool::Sglang);
        assert_eq!(
            why,
            "`total_output_tokens_retokenized` and `mean_e2e_latency_ms`"
        );
        let vl = serde_json::json!({"completed": 3, "model_id": "m", "num_prompts": 3});
        assert_eq!(written_by(&vl).map(|w| w.0), Some(ImportTool::Vllm));
        let plain = serde_json::json!({"completed": 3, "duration": 1.0});
        assert_eq!(written_by(&plain), None, "neither tool's own fields");
        let both = serde_json::json!({"mean_e2el_ms": 1.0, "mean_e2e_latency_ms": 1.0});
        assert_eq!(written_by(&both), None, "both: not told apart");
    }
}
