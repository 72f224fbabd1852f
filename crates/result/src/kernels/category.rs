//! The categories kernels and operators are grouped in, by name: a small table of regular
//! expressions, the first match wins (docs/kernels.md prints it).

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a kernel's time goes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Collectives between ranks (NCCL, custom all-reduce, all-to-all).
    Communication,
    /// Grouped GEMMs and the MoE experts' kernels (CUTLASS grouped GEMM, `_grouped_mm`,
    /// fused MoE).
    GroupedGemm,
    /// Attention (FlashAttention, FlashInfer, `scaled_dot_product_attention`, paged).
    Attention,
    /// Dense GEMMs (cuBLAS, CUTLASS, `aten::mm`, `addmm`, `linear`).
    Gemm,
    /// Copies, fills, concatenation, indexing.
    Copies,
    /// Element-wise kernels, normalisation, activations, reductions, sampling.
    Elementwise,
    /// Everything else.
    Other,
}

impl Category {
    /// Every category, in the order they are tried and shown.
    pub const ALL: [Category; 7] = [
        Category::Communication,
        Category::GroupedGemm,
        Category::Attention,
        Category::Gemm,
        Category::Copies,
        Category::Elementwise,
        Category::Other,
    ];

    /// Its name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Category::Communication => "communication",
            Category::GroupedGemm => "grouped/MoE GEMM",
            Category::Attention => "attention",
            Category::Gemm => "GEMM",
            Category::Copies => "copies",
            Category::Elementwise => "elementwise/norm",
            Category::Other => "other",
        }
    }
}

/// The table: a category and the pattern (case-insensitive) its names match, tried in order.
pub const PATTERNS: [(Category, &str); 6] = [
    (
        Category::Communication,
        r"nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|c10d|cross_device|custom_?ar|nvshmem|deep_?ep|one_?shot|two_?shot",
    ),
    (
        Category::GroupedGemm,
        r"group(ed)?_?(mm|gemm)|GroupProblemShape|moe|expert|fused_experts|ptr_?array",
    ),
    (
        Category::Attention,
        // Not every `flash…` name is attention: FlashInfer's norms (`flashinfer::norm::…`,
        // seen in SGLang 0.5.17's traces) fall through to elementwise/norm. SGLang's Triton
        // attention backend names its kernels `_fwd_kernel` (extend and prefill),
        // `_fwd_grouped_kernel_stage1` and `_fwd_kernel_stage2` (decode): SGLang 0.5.17,
        // kernels/ops/attention/extend_attention.py:242, prefill_attention.py:35,
        // decode_attention.py:384,732.
        r"attention|attn|flash_?(fwd|bwd|decod|prefill|mla)|flashinfer::(prefill|decode|mla|page|attention)|(batch|single)_?(prefill|decode)|fmha|mha|sdpa|paged|mla|decode_?kernel|prefill_?kernel|^_fwd_(grouped_)?kernel(_stage[12])?$",
    ),
    (
        Category::Gemm,
        r"gemm|gemv|matmul|aten::(mm|addmm|bmm|linear|baddbmm)\b|cublas|cutlass|xmma|wgmma|nvjet|splitk",
    ),
    (
        Category::Copies,
        r"memcpy|memset|copy|reshape_and_cache|aten::(to|_to_copy|contiguous|cat|clone|empty|zeros|index_select|slice|narrow|view|reshape|expand|transpose|permute|t|select|stack|split|unsqueeze|squeeze)\b|cat_?array|fill|gather|scatter|index",
    ),
    (
        Category::Elementwise,
        r"elementwise|vectorized|unrolled|reduce|norm|silu|gelu|relu|act_and_mul|rotary|rope|softmax|sigmoid|topk|sort|argmax|sampl|aten::(add|mul|sub|div|neg|exp|pow|rsqrt|sqrt|mean|sum|where|tanh|cos|sin|max|min|ge|gt|lt|le|eq|ne|masked_fill|tril|triu|cumsum|arange|embedding)\b|triton_",
    ),
];

fn compiled() -> &'static Vec<(Category, Regex)> {
    static TABLE: OnceLock<Vec<(Category, Regex)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        PATTERNS
            .iter()
            .map(|(c, p)| {
                let re = RegexBuilder::new(p)
                    .case_insensitive(true)
                    .build()
                    .expect("the category patterns are valid");
                (*c, re)
            })
            .collect()
    })
}

/// The text of `name` its category's pattern matched (`GroupProblemShape` of a CUTLASS
/// grouped GEMM's mangled name), for `servebench kernels`' suggested rules.
pub(crate) fn category_match(name: &str) -> Option<&str> {
    compiled()
        .iter()
        .find_map(|(_, re)| re.find(name))
        .map(|m| m.as_str())
}

/// The category of a kernel or operator name.
pub fn categorize(name: &str) -> Category {
    compiled()
        .iter()
        .find(|(_, re)| re.is_match(name))
        .map_or(Category::Other, |(c, _)| *c)
}
