//! The physical limit: the memory-bound decode ceiling of a trial, and the GPUs' peak memory
//! bandwidth it is computed from.
//!
//! A decode step of a batch of B sequences reads, at the least, every weight one token passes
//! through once (`read_params × bytes_per_weight`; a mixture of experts whose B tokens all
//! chose the same experts — so this is a lower bound on the bytes) and each sequence's KV
//! cache (`context × kv_bytes_per_token`), and makes B tokens. No step is faster than those
//! bytes over the GPUs' peak bandwidth, so
//!
//! ```text
//! ceiling (tok/s) = B × bandwidth / (read_params × bytes_per_weight + B × context × kv_bytes_per_token)
//! ```
//!
//! with B the trial's mean requests in flight over its steady window, context its mean prompt
//! length plus half its mean output length, and bandwidth the sum over the server's GPUs
//! (tensor parallelism splits the bytes). Prefill, sampling and scheduling are left out:
//! every real server is below it, and how far below is the finding (docs/gpu.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use servebench_spec::model_facts::ResolvedModelFacts;

/// One row of the bandwidth table: the words a GPU's name must hold (lower case, whole
/// words), its peak memory bandwidth in GB/s, and where the figure is from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthEntry {
    /// Every one of these words is in the name (`NVIDIA H100 80GB HBM3` → `h100`).
    pub words: &'static [&'static str],
    /// Peak memory bandwidth, GB/s.
    pub gb_per_s: f64,
    /// The vendor's figure it is.
    pub source: &'static str,
}

/// Peak memory bandwidth by the name NVML and `nvidia-smi` report, most specific first;
/// figures from NVIDIA's product datasheets (`telemetry.hbm_gb_per_s` overrides).
pub const BANDWIDTH: [BandwidthEntry; 21] = [
    e(
        &["gh200"],
        4900.0,
        "GH200 Grace Hopper datasheet: 144 GB HBM3e, 4.9 TB/s",
    ),
    e(
        &["h200"],
        4800.0,
        "H200 datasheet (SXM and NVL): 141 GB HBM3e, 4.8 TB/s",
    ),
    e(
        &["h100", "nvl"],
        3900.0,
        "H100 datasheet, H100 NVL: 94 GB HBM3, 3.9 TB/s",
    ),
    e(
        &["h100", "pcie"],
        2000.0,
        "H100 datasheet, H100 PCIe: 80 GB HBM2e, 2 TB/s",
    ),
    e(
        &["h100"],
        3350.0,
        "H100 datasheet, H100 SXM: 80 GB HBM3, 3.35 TB/s",
    ),
    e(&["h20"], 4000.0, "H20: 96 GB HBM3, 4.0 TB/s"),
    e(&["b300"], 8000.0, "HGX B300 datasheet: 8 TB/s per GPU"),
    e(&["gb300"], 8000.0, "GB300 NVL72 datasheet: 8 TB/s per GPU"),
    e(&["gb200"], 8000.0, "GB200 NVL72 datasheet: 8 TB/s per GPU"),
    e(
        &["b200"],
        8000.0,
        "HGX B200 datasheet: 180 GB HBM3e, 8 TB/s per GPU",
    ),
    e(
        &["rtx", "pro", "6000", "blackwell"],
        1792.0,
        "RTX PRO 6000 Blackwell datasheet: 96 GB GDDR7, 1792 GB/s",
    ),
    e(
        &["a100", "80gb", "pcie"],
        1935.0,
        "A100 datasheet, A100 80GB PCIe: 1935 GB/s",
    ),
    e(
        &["a100", "80gb"],
        2039.0,
        "A100 datasheet, A100 80GB SXM: 2039 GB/s",
    ),
    e(&["a100"], 1555.0, "A100 datasheet, A100 40GB: 1555 GB/s"),
    e(&["l40s"], 864.0, "L40S datasheet: 48 GB GDDR6, 864 GB/s"),
    e(&["l40"], 864.0, "L40 datasheet: 48 GB GDDR6, 864 GB/s"),
    e(&["l4"], 300.0, "L4 datasheet: 24 GB GDDR6, 300 GB/s"),
    e(&["a10"], 600.0, "A10 datasheet: 24 GB GDDR6, 600 GB/s"),
    e(
        &["rtx", "6000", "ada"],
        960.0,
        "RTX 6000 Ada datasheet: 48 GB GDDR6, 960 GB/s",
    ),
    e(
        &["rtx", "5090"],
        1792.0,
        "GeForce RTX 5090 specifications: 32 GB GDDR7, 1792 GB/s",
    ),
    e(
        &["rtx", "4090"],
        1008.0,
        "GeForce RTX 4090 specifications: 24 GB GDDR6X, 1008 GB/s",
    ),
];

const fn e(words: &'static [&'static str], gb_per_s: f64, source: &'static str) -> BandwidthEntry {
    BandwidthEntry {
        words,
        gb_per_s,
        source,
    }
}

/// The table's entry for a GPU's name (words compared in lower case, whole).
pub fn bandwidth_of(name: &str) -> Option<&'static BandwidthEntry> {
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    BANDWIDTH
        .iter()
        .find(|entry| entry.words.iter().all(|w| words.contains(w)))
}

/// A trial's decode ceiling and how close its output throughput came to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DecodeCeiling {
    /// The ceiling, output tokens per second.
    pub tok_per_s: f64,
    /// Output throughput over the ceiling (`output_throughput / tok_per_s`).
    pub share: f64,
    /// Batch B: mean requests in flight over the steady window.
    pub batch: f64,
    /// Mean tokens in context per sequence: prompt + half the output.
    pub context_tokens: f64,
    /// Peak bandwidth of the server's GPUs together, GB/s.
    pub bandwidth_gb_per_s: f64,
    /// GPUs counted.
    pub gpus: usize,
    /// Where the bandwidth came from (the table's source, or `telemetry.hbm_gb_per_s`).
    pub bandwidth_from: String,
}

/// What one trial gives the ceiling.
#[derive(Debug, Clone, Copy)]
pub struct CeilingInput {
    /// Mean requests in flight (≥ 1 is used).
    pub batch: f64,
    /// Mean prompt tokens per request.
    pub prompt_tokens: f64,
    /// Mean output tokens per request.
    pub output_tokens: f64,
    /// The trial's output throughput, tok/s.
    pub output_throughput: f64,
}

/// The bandwidth of `names` (one per GPU the server uses): `override_gb_per_s` per GPU when
/// given, else the table's. `Err` names a GPU the table does not know.
pub fn gpus_bandwidth(
    names: &[String],
    override_gb_per_s: Option<f64>,
) -> Result<(f64, String), String> {
    if names.is_empty() {
        return Err("no GPU of the server is known (telemetry found none)".to_owned());
    }
    if let Some(bw) = override_gb_per_s {
        return Ok((
            bw * names.len() as f64,
            format!("telemetry.hbm_gb_per_s: {bw} GB/s per GPU"),
        ));
    }
    let mut total = 0.0;
    let mut sources: Vec<&str> = Vec::new();
    for n in names {
        let entry = bandwidth_of(n).ok_or_else(|| {
            format!(
                "the bandwidth of `{n}` is not in servebench's table: set \
                 `telemetry.hbm_gb_per_s` to its peak memory bandwidth in GB/s"
            )
        })?;
        total += entry.gb_per_s;
        if !sources.contains(&entry.source) {
            sources.push(entry.source);
        }
    }
    Ok((total, sources.join("; ")))
}

/// The ceiling of one trial; `None` when the figures give none (no batch, no bytes).
pub fn decode_ceiling(
    facts: &ResolvedModelFacts,
    bandwidth: (f64, String),
    gpus: usize,
    input: &CeilingInput,
) -> Option<DecodeCeiling> {
    let batch = input.batch.max(1.0);
    let context = input.prompt_tokens.max(0.0) + input.output_tokens.max(0.0) / 2.0;
    let bytes =
        facts.read_params * facts.bytes_per_weight + batch * context * facts.kv_bytes_per_token;
    if !(bytes > 0.0 && bandwidth.0 > 0.0) {
        return None;
    }
    let tok_per_s = batch * bandwidth.0 * 1e9 / bytes;
    Some(DecodeCeiling {
        tok_per_s,
        share: input.output_throughput / tok_per_s,
        batch,
        context_tokens: context,
        bandwidth_gb_per_s: bandwidth.0,
        gpus,
        bandwidth_from: bandwidth.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_the_driver_reports_them_find_their_bandwidth() {
        let bw = |n: &str| bandwidth_of(n).map(|e| e.gb_per_s);
        // The H200 of crates/runner/tests/fixtures/nvidia-smi-h200 (driver 580.159.04).
        assert_eq!(bw("NVIDIA H200"), Some(4800.0));
        assert_eq!(bw("NVIDIA H100 80GB HBM3"), Some(3350.0));
        assert_eq!(bw("NVIDIA H100 PCIe"), Some(2000.0));
        assert_eq!(bw("NVIDIA H100 NVL"), Some(3900.0));
        assert_eq!(bw("NVIDIA GH200 480GB"), Some(4900.0));
        assert_eq!(bw("NVIDIA H20"), Some(4000.0));
        assert_eq!(bw("NVIDIA B200"), Some(8000.0));
        assert_eq!(bw("NVIDIA A100-SXM4-80GB"), Some(2039.0));
        assert_eq!(bw("NVIDIA A100 80GB PCIe"), Some(1935.0));
        assert_eq!(bw("NVIDIA A100-PCIE-40GB"), Some(1555.0));
        assert_eq!(
            bw("NVIDIA RTX PRO 6000 Blackwell Server Edition"),
            Some(1792.0)
        );
        assert_eq!(bw("NVIDIA RTX 6000 Ada Generation"), Some(960.0));
        assert_eq!(bw("NVIDIA L4"), Some(300.0));
        assert_eq!(bw("NVIDIA L40S"), Some(864.0));
        assert_eq!(bw("Tesla T4"), None);
    }

    #[test]
    fn an_8b_model_in_bf16_on_one_h200_decodes_at_most_about_300_tokens_a_second_alone() {
        // Llama 3.1 8B: 7.5e9 weights read per step (8.03e9 less the 0.53e9 input embedding
        // table), bf16, 128 KiB of KV per token.
        let facts = ResolvedModelFacts {
            total_params: 8.03e9,
            active_params: 8.03e9,
            read_params: 7.505e9,
            bytes_per_weight: 2.0,
            kv_bytes_per_token: 131_072.0,
        };
        let bw = gpus_bandwidth(&["NVIDIA H200".to_owned()], None).unwrap();
        let c = decode_ceiling(
            &facts,
            bw,
            1,
            &CeilingInput {
                batch: 1.0,
                prompt_tokens: 128.0,
                output_tokens: 32.0,
                output_throughput: 10.0,
            },
        )
        .unwrap();
        // 4.8e12 / (1.501e10 + 144 × 131072) = 319 tok/s.
        assert!((c.tok_per_s - 319.0).abs() < 1.0, "{}", c.tok_per_s);
        assert!((c.share - 10.0 / c.tok_per_s).abs() < 1e-12);
        // A batch of 64 reads the weights once for 64 tokens.
        let c64 = decode_ceiling(
            &facts,
            gpus_bandwidth(&["NVIDIA H200".to_owned()], None).unwrap(),
            1,
            &CeilingInput {
                batch: 64.0,
                prompt_tokens: 128.0,
                output_tokens: 32.0,
                output_throughput: 2000.0,
            },
        )
        .unwrap();
        assert!(c64.tok_per_s > 40.0 * c.tok_per_s);
        let e = gpus_bandwidth(&["Tesla T4".to_owned()], None).unwrap_err();
        assert!(e.contains("telemetry.hbm_gb_per_s"), "{e}");
        assert_eq!(
            gpus_bandwidth(&vec!["Tesla T4".to_owned(); 2], Some(320.0))
                .unwrap()
                .0,
            640.0
        );
    }
}
