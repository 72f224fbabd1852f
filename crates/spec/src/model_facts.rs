//! The figures of a model the memory-bound decode ceiling needs, from `spec.model_facts` and
//! (for the figures not given there) a Hugging Face `config.json`: parameters in total and
//! per token, the parameters one decode step must read, bytes per weight, KV bytes per token.
//!
//! Counting from a config (docs/gpu.md, "The physical limit"): per layer, attention
//! (`q`, `k`, `v`, `o` projections with grouped KV heads, or DeepSeek's latent attention when
//! `kv_lora_rank` is given) and a gated MLP (`gate`, `up`, `down`: 3·h·I), or for a mixture of
//! experts its routed experts, shared experts and router; the embedding table, and an output
//! head of its own unless `tie_word_embeddings`. Norms and biases are left out (well under
//! 0.1% of a model). Checked on Llama 3.1 8B (8.03 B) and Mixtral 8x7B (46.7 B total,
//! 12.9 B active), the figures their authors publish (tests below).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::ModelFacts;

/// The figures the ceiling is computed from, every one known.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolvedModelFacts {
    /// Parameters of the whole model.
    pub total_params: f64,
    /// Parameters one token passes through.
    pub active_params: f64,
    /// Parameters one decode step reads at the least: the active ones without the input
    /// embedding table (a step reads one row of it per sequence, not the table).
    pub read_params: f64,
    /// Bytes per weight as served.
    pub bytes_per_weight: f64,
    /// KV-cache bytes per token in context.
    pub kv_bytes_per_token: f64,
}

/// What was counted from a config, before `spec.model_facts` overrides it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountedConfig {
    /// Parameters in total.
    pub total_params: f64,
    /// Parameters per token.
    pub active_params: f64,
    /// The input embedding table, when it is not the output head too.
    pub input_embedding: f64,
    /// KV-cache elements per token (multiply by bytes per element).
    pub kv_elements_per_token: f64,
    /// Bytes per weight from `torch_dtype`/`dtype` and `quantization_config`, when they say.
    pub bytes_per_weight: Option<f64>,
}

fn num(cfg: &Value, keys: &[&str]) -> Option<f64> {
    keys.iter()
        .find_map(|k| cfg.get(*k).and_then(Value::as_f64))
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// Counts the parameters and KV elements of a Hugging Face `config.json`. A multimodal
/// config's language model (`text_config`) is what serves tokens. Errors name the field.
pub fn count_config(cfg: &Value) -> Result<CountedConfig, String> {
    let cfg = match cfg.get("text_config") {
        Some(t) if cfg.get("hidden_size").is_none() && t.is_object() => t,
        _ => cfg,
    };
    let need = |keys: &[&str]| {
        num(cfg, keys).ok_or_else(|| {
            format!(
                "config.json has no `{}`: give `model_facts.total_params`, `active_params` and \
                 `kv_bytes_per_token` instead",
                keys[0]
            )
        })
    };
    let h = need(&["hidden_size", "n_embd", "d_model"])?;
    let layers = need(&["num_hidden_layers", "n_layer", "num_layers"])?;
    let heads = need(&["num_attention_heads", "n_head"])?;
    let vocab = need(&["vocab_size"])?;
    let kv_heads = num(cfg, &["num_key_value_heads"]).unwrap_or(heads);
    let head_dim = num(cfg, &["head_dim"]).unwrap_or(h / heads.max(1.0));
    let (attn, kv_elements) = match num(cfg, &["kv_lora_rank"]) {
        // DeepSeek's multi-head latent attention: the cache holds the latent and the rope key.
        Some(kv_lora) => {
            let rope = num(cfg, &["qk_rope_head_dim"]).unwrap_or(0.0);
            let nope = num(cfg, &["qk_nope_head_dim"]).unwrap_or(head_dim);
            let v_dim = num(cfg, &["v_head_dim"]).unwrap_or(head_dim);
            let q = match num(cfg, &["q_lora_rank"]) {
                Some(r) => h * r + r * heads * (nope + rope),
                None => h * heads * (nope + rope),
            };
            let kv = h * (kv_lora + rope) + kv_lora * heads * (nope + v_dim);
            (q + kv + heads * v_dim * h, kv_lora + rope)
        }
        None => (
            2.0 * h * heads * head_dim + 2.0 * h * kv_heads * head_dim,
            2.0 * kv_heads * head_dim,
        ),
    };
    let dense_mlp = num(cfg, &["intermediate_size", "n_inner", "ffn_dim"]).map(|i| 3.0 * h * i);
    let experts = num(
        cfg,
        &["num_local_experts", "num_experts", "n_routed_experts"],
    )
    .filter(|e| *e > 1.0);
    let (layer_total, layer_active, dense_layers, dense_layer) = match experts {
        Some(e) => {
            let k = need(&["num_experts_per_tok", "moe_top_k", "top_k"])?;
            let i_moe = need(&["moe_intermediate_size", "intermediate_size"])?;
            let expert = 3.0 * h * i_moe;
            let shared_i = num(cfg, &["shared_expert_intermediate_size"]).unwrap_or(i_moe);
            let shared = num(cfg, &["n_shared_experts", "num_shared_experts"]).unwrap_or(0.0)
                * 3.0
                * h
                * shared_i;
            let router = h * e;
            let dense_layers = num(cfg, &["first_k_dense_replace"]).unwrap_or(0.0);
            (
                e * expert + shared + router,
                k * expert + shared + router,
                dense_layers.min(layers),
                dense_mlp.unwrap_or(0.0),
            )
        }
        None => {
            let mlp = dense_mlp.ok_or_else(|| {
                "config.json has no `intermediate_size`: give `model_facts.total_params`, \
                 `active_params` and `kv_bytes_per_token` instead"
                    .to_owned()
            })?;
            (mlp, mlp, 0.0, mlp)
        }
    };
    let moe_layers = layers - dense_layers;
    let body_total = layers * attn + dense_layers * dense_layer + moe_layers * layer_total;
    let body_active = layers * attn + dense_layers * dense_layer + moe_layers * layer_active;
    let tied = cfg
        .get("tie_word_embeddings")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let table = vocab * h;
    let embeddings = if tied { table } else { 2.0 * table };
    Ok(CountedConfig {
        total_params: body_total + embeddings,
        active_params: body_active + embeddings,
        input_embedding: if tied { 0.0 } else { table },
        kv_elements_per_token: layers * kv_elements,
        bytes_per_weight: bytes_per_weight(cfg),
    })
}

/// Bytes per weight from a config's dtype and quantisation, where they say.
fn bytes_per_weight(cfg: &Value) -> Option<f64> {
    if let Some(q) = cfg.get("quantization_config") {
        if let Some(bits) = num(q, &["bits", "weight_bits", "num_bits"]) {
            return Some(bits / 8.0);
        }
        let method = q.get("quant_method").and_then(Value::as_str).unwrap_or("");
        return match method {
            "fp8" | "fbgemm_fp8" => Some(1.0),
            _ => None,
        };
    }
    let dtype = cfg
        .get("torch_dtype")
        .or_else(|| cfg.get("dtype"))
        .and_then(Value::as_str)?;
    match dtype {
        "bfloat16" | "float16" | "half" => Some(2.0),
        "float32" | "float" => Some(4.0),
        "float8_e4m3fn" | "float8_e5m2" => Some(1.0),
        _ => None,
    }
}

/// Every figure the ceiling needs: `facts`' own, else counted from `config` (the parsed
/// `config.json` it names). The error says which figure is missing and what to write.
pub fn resolve(facts: &ModelFacts, config: Option<&Value>) -> Result<ResolvedModelFacts, String> {
    let counted = config.map(count_config).transpose()?;
    let missing = |what: &str, example: &str| {
        format!(
            "model_facts: `{what}` is not given{}: write e.g. `{what}: {example}`",
            if facts.config.is_some() {
                " and cannot be read from the config"
            } else {
                " (nor a `config`)"
            }
        )
    };
    let total = facts
        .total_params
        .or(counted.map(|c| c.total_params))
        .ok_or_else(|| missing("total_params", "8.03e9"))?;
    let active = facts
        .active_params
        .or(counted.map(|c| c.active_params))
        .unwrap_or(total);
    let bytes = facts
        .bytes_per_weight
        .or(counted.and_then(|c| c.bytes_per_weight))
        .ok_or_else(|| missing("bytes_per_weight", "2"))?;
    let kv = match facts.kv_bytes_per_token {
        Some(kv) => kv,
        None => {
            let c = counted.ok_or_else(|| missing("kv_bytes_per_token", "131072"))?;
            c.kv_elements_per_token * facts.kv_bytes_per_element.unwrap_or(2.0)
        }
    };
    let embedding = match (facts.active_params, counted) {
        (None, Some(c)) => c.input_embedding,
        _ => 0.0,
    };
    for (name, v) in [
        ("total_params", total),
        ("active_params", active),
        ("bytes_per_weight", bytes),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("model_facts: `{name}` must be above 0 (it is {v})"));
        }
    }
    if active > total {
        return Err(format!(
            "model_facts: `active_params` ({active:.4e}) is above `total_params` ({total:.4e})"
        ));
    }
    Ok(ResolvedModelFacts {
        total_params: total,
        active_params: active,
        read_params: (active - embedding).max(0.0),
        bytes_per_weight: bytes,
        kv_bytes_per_token: kv.max(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// meta-llama/Llama-3.1-8B's config.json (the fields counted).
    fn llama_8b() -> Value {
        serde_json::json!({
            "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
            "tie_word_embeddings": false, "torch_dtype": "bfloat16"
        })
    }

    #[test]
    fn llama_3_1_8b_has_its_published_8_03_billion_parameters() {
        let c = count_config(&llama_8b()).unwrap();
        assert!(
            (c.total_params / 1e9 - 8.03).abs() < 0.005,
            "{}",
            c.total_params
        );
        assert_eq!(c.total_params, c.active_params);
        // 2 (K and V) × 32 layers × 8 KV heads × 128 = 65,536 elements, 128 KiB in bf16.
        assert_eq!(c.kv_elements_per_token, 65_536.0);
        let r = resolve(
            &ModelFacts {
                config: Some("config.json".into()),
                ..ModelFacts::default()
            },
            Some(&llama_8b()),
        )
        .unwrap();
        assert_eq!(r.bytes_per_weight, 2.0);
        assert_eq!(r.kv_bytes_per_token, 131_072.0);
        assert!((r.read_params - (r.active_params - 128_256.0 * 4096.0)).abs() < 1.0);
    }

    #[test]
    fn mixtral_8x7b_counts_46_7_billion_in_total_and_12_9_billion_active() {
        let cfg = serde_json::json!({
            "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000,
            "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": false
        });
        let c = count_config(&cfg).unwrap();
        assert!(
            (c.total_params / 1e9 - 46.7).abs() < 0.05,
            "{}",
            c.total_params
        );
        assert!(
            (c.active_params / 1e9 - 12.9).abs() < 0.05,
            "{}",
            c.active_params
        );
        assert_eq!(c.bytes_per_weight, None);
    }

    #[test]
    fn given_figures_win_and_missing_ones_are_named() {
        let r = resolve(
            &ModelFacts {
                total_params: Some(1e9),
                bytes_per_weight: Some(2.0),
                kv_bytes_per_token: Some(1000.0),
                ..ModelFacts::default()
            },
            None,
        )
        .unwrap();
        assert_eq!((r.active_params, r.read_params), (1e9, 1e9));
        let e = resolve(
            &ModelFacts {
                total_params: Some(1e9),
                ..ModelFacts::default()
            },
            None,
        )
        .unwrap_err();
        assert!(e.contains("bytes_per_weight"), "{e}");
        let e = count_config(&serde_json::json!({"hidden_size": 8})).unwrap_err();
        assert!(e.contains("num_hidden_layers"), "{e}");
    }

    #[test]
    fn quantised_weights_are_read_from_the_config() {
        let mut cfg = llama_8b();
        cfg["quantization_config"] = serde_json::json!({"quant_method": "fp8"});
        assert_eq!(count_config(&cfg).unwrap().bytes_per_weight, Some(1.0));
        cfg["quantization_config"] = serde_json::json!({"quant_method": "awq", "bits": 4});
        assert_eq!(count_config(&cfg).unwrap().bytes_per_weight, Some(0.5));
    }
}
