//! The kernels a simulated trace holds: a model step's kernels, those of its MoE layer named
//! after the backend the server runs (`--sim-kernels`, else `--moe-backend`). The MoE
//! kernels' names are the ones the engines' MoE backends launch, read in their sources
//! (cited beside each); the others are stand-ins, one per category kernel evidence sorts
//! names into (docs/kernels.md), with durations chosen so a step's shares are plausible
//! for a small MoE model, not measured.

/// One kernel of a simulated step.
#[derive(Debug, Clone, PartialEq)]
pub struct SimKernel {
    /// The device kernel's name, as the trace writes it.
    pub name: String,
    /// The CPU operator that launches it (the `cpu_op` event of a trace with CPU activity).
    pub op: &'static str,
    /// Its duration in a decode step, µs.
    pub us: f64,
}

fn k(name: &str, op: &'static str, us: f64) -> SimKernel {
    SimKernel {
        name: name.to_owned(),
        op,
        us,
    }
}

/// A layer's kernels outside its MoE: norm, attention, the projections' GEMMs.
fn dense() -> Vec<SimKernel> {
    vec![
        k("rms_norm_kernel", "_C::rms_norm", 6.0),
        k("nvjet_tst_128x64_64x8_1x2_h_bz_TNT", "aten::mm", 22.0),
        k("flash_fwd_splitkv_kernel", "vllm::unified_attention", 28.0),
        k("nvjet_tst_64x64_64x8_1x1_h_bz_TNT", "aten::mm", 12.0),
        k("fused_add_rms_norm_kernel", "_C::fused_add_rms_norm", 6.0),
        k("topkGatingSoftmax", "_moe_C::topk_softmax", 4.0),
    ]
}

/// The MoE layer's kernels under `backend`.
fn moe(backend: &str) -> Vec<SimKernel> {
    match backend {
        // The Triton fused MoE kernel, named after its function (vLLM 0.26.0
        // model_executor/layers/fused_moe/fused_moe.py:295).
        "auto" | "triton" => vec![
            k("fused_moe_kernel", "vllm::fused_moe", 30.0),
            k("fused_moe_kernel", "vllm::fused_moe", 24.0),
            k("act_and_mul_kernel", "_C::silu_and_mul", 5.0),
            k("moe_sum_kernel", "_moe_C::moe_sum", 3.0),
        ],
        // CUTLASS's grouped GEMM, as an H200 trace of transformers' `grouped_mm` names it
        // (docs/kernels.md, "On the H200"); transformers' experts implementation of that name
        // runs it too.
        "cutlass" | "grouped_mm" => vec![
            k(GROUPED_GEMM, "aten::_grouped_mm", 26.0),
            k(GROUPED_GEMM, "aten::_grouped_mm", 20.0),
            k("act_and_mul_kernel", "_C::silu_and_mul", 5.0),
        ],
        // flashinfer's C++ CUTLASS MoE runner: its permute and finalize kernels
        // (flashinfer-python 0.7.2 data/csrc/fused_moe/cutlass_backend/
        // cutlass_fused_moe_kernels.cuh:1572, :1965), the grouped GEMM between them.
        "flashinfer_cutlass" => vec![
            k("expandInputRowsKernel", "trtllm::fused_moe", 4.0),
            k(GROUPED_GEMM, "trtllm::fused_moe", 44.0),
            k("finalizeMoeRoutingKernel", "trtllm::fused_moe", 5.0),
        ],
        // flashinfer's CuTe DSL MoE (CuteDslMoEWrapper): the kernels are named after their
        // classes (flashinfer-python 0.7.2 fused_moe/cute_dsl/blackwell/
        // blockscaled_contiguous_gather_grouped_gemm_act_fusion.py:331,
        // blockscaled_contiguous_grouped_gemm_finalize_fusion.py:316, moe_finalize.py:55).
        "flashinfer_cutedsl" => vec![
            k(
                "kernel_cutlass_BlockScaledContiguousGatherGroupedGemmKernel_0",
                "flashinfer::cute_dsl_moe",
                26.0,
            ),
            k(
                "kernel_cutlass_Sm100BlockScaledContiguousGroupedGemmFinalizeFusionKernel_0",
                "flashinfer::cute_dsl_moe",
                18.0,
            ),
            k(
                "kernel_cutlass__MoeFinalizeKernel_0",
                "flashinfer::cute_dsl_moe",
                3.0,
            ),
        ],
        // transformers' `eager` experts: a loop of dense GEMMs, one per expert hit, reading
        // the routing back to the host (docs/kernels.md: its top kernel is `Memcpy DtoH`).
        "eager" => vec![
            k("Memcpy DtoH (Device -> Pinned)", "aten::item", 9.0),
            k("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "aten::mm", 8.0),
            k("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "aten::mm", 8.0),
            k("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "aten::mm", 8.0),
            k("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "aten::mm", 8.0),
            k("act_and_mul_kernel", "aten::silu", 5.0),
        ],
        // Any other backend: one kernel named after it, so that a spec can tell it apart.
        other => vec![k(&format!("sim_moe_{other}_kernel"), "sim::moe", 40.0)],
    }
}

/// CUTLASS's grouped GEMM kernel (the name shortened, its template arguments elided).
const GROUPED_GEMM: &str = "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int>>, cutlass::gemm::collective::CollectiveMma<…>>>";

/// One layer's kernels in order, its MoE run by `backend`.
pub fn layer(backend: &str) -> Vec<SimKernel> {
    let mut out = dense();
    out.extend(moe(backend));
    out
}

/// The last kernels of a step: the LM head and sampling.
pub fn head() -> Vec<SimKernel> {
    vec![
        k("nvjet_tst_256x128_64x4_2x1_v_bz_TNT", "aten::mm", 40.0),
        k("sampling_from_probs_kernel", "vllm::sampler", 8.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backend_has_its_own_moe_kernels() {
        let names = |b: &str| -> Vec<String> { moe(b).into_iter().map(|k| k.name).collect() };
        assert!(names("flashinfer_cutedsl")[0].contains("BlockScaledContiguousGatherGroupedGemm"));
        assert!(names("flashinfer_cutlass").contains(&"expandInputRowsKernel".to_owned()));
        assert_eq!(names("triton")[0], "fused_moe_kernel");
        assert_eq!(names("auto"), names("triton"));
        assert!(names("grouped_mm")[0].contains("GroupProblemShape"));
        assert_eq!(names("deep_gemm"), ["sim_moe_deep_gemm_kernel"]);
    }
}
