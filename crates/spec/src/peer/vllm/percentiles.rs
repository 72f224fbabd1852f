//! `--percentile-metrics` and `--metric-percentiles`: which percentiles `vllm bench serve`
//! prints. Read in vLLM 0.26.0 `vllm/benchmarks/serve.py:1681-1697` (the wheel at hand; the
//! flags are in 0.33.0's parser too, `crates/spec/tests/fixtures/peer-flags/vllm-0.33.0.txt`):
//! `--percentile-metrics` defaults to `ttft,tpot,itl` for generative models (of `ttft`,
//! `tpot`, `itl`, `e2el`), `--metric-percentiles` to `99`.
//!
//! servebench's summary shows the mean, p50 and p99 of TTFT, TPOT, ITL and E2E; any other
//! level asked for becomes `<family>_p<level>` in `compare.metrics`, which adds its column
//! to the summary of a one-variant run (`servebench_result::table::rates::columns`).

use crate::peer::Values;
use crate::peer::table::Lines;

/// The catalogue family of one of vLLM's percentile metric names.
fn family(name: &str) -> Option<&'static str> {
    match name.trim() {
        "ttft" => Some("ttft"),
        "tpot" => Some("tpot"),
        "itl" => Some("itl"),
        "e2el" => Some("e2e"),
        _ => None,
    }
}

/// The metric names the two flags ask for beyond p50 and p99, with their lines.
pub(crate) fn percentiles(v: &Values<'_>, lines: &mut Lines) -> Vec<String> {
    let metrics = v.str("--percentile-metrics").unwrap_or("ttft,tpot,itl");
    let families: Vec<&str> = metrics.split(',').filter_map(family).collect();
    let levels: Vec<String> = v
        .str("--metric-percentiles")
        .unwrap_or("99")
        .split(',')
        .map(|l| l.trim().replace('.', "_"))
        .filter(|l| !l.is_empty() && l != "50" && l != "99")
        .collect();
    let mut out = Vec::new();
    for l in &levels {
        for f in &families {
            let name = format!("{f}_p{l}");
            if crate::metrics::percentile(&name).is_some() {
                out.push(name);
            }
        }
    }
    let shown = if out.is_empty() {
        "the summary's p50 and p99 (every level asked for is one of them)".to_owned()
    } else {
        format!(
            "compare.metrics adds {} (the summary shows mean, p50, p99 and these)",
            out.join(", ")
        )
    };
    for flag in ["--percentile-metrics", "--metric-percentiles"] {
        if v.has(flag) {
            lines.mapped(flag, v, shown.clone());
        }
    }
    out
}
