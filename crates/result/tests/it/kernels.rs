//! Kernel rules on real and synthetic traces: the committed CPU traces of transformers serve
//! (sdpa and eager attention, cut from a real run by scripts/trim-trace.py), and synthetic
//! traces built from kernel names seen on an H200 (the MoE experts backends) and read in the
//! flashinfer-python 0.7.2 wheel (the seed's spec): each committed spec's rules hold on the
//! arm they are written for and fail on the other.

use std::io::Write;
use std::path::{Path, PathBuf};

use servebench_result::kernels::{
    Category, EvidenceSource, KernelEvidence, RankKernels, judge, read_rank,
};
use servebench_spec::{KernelCheck, VerifyRule};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> RankKernels {
    read_rank(
        &repo()
            .join("crates/result/tests/fixtures/kernels")
            .join(name),
    )
    .expect("fixture")
}

fn evidence(ranks: Vec<RankKernels>) -> KernelEvidence {
    KernelEvidence {
        block: 0,
        variant: "v".into(),
        concurrency: 1,
        requests: 1,
        completed: 1,
        output_tokens: 16,
        load_s: 1.0,
        tpot_ms: Some(5.0),
        step_s: 1.0,
        wait_s: 1.0,
        trace_bytes: 0,
        ranks,
        error: None,
    }
}

/// A variant's kernel rules in a committed spec, `${variant.*}` substituted.
fn rules(spec: &str, variant: &str) -> Vec<KernelCheck> {
    let s = servebench_spec::load(&repo().join("specs").join(spec)).expect("spec");
    let v = s
        .file
        .spec
        .variants
        .iter()
        .find(|v| v.name == variant)
        .expect("variant");
    let ctx = servebench_spec::substitute::Context {
        vars: Some(&v.vars),
        ..Default::default()
    };
    let sub = |p: &Option<String>| {
        p.as_ref()
            .map(|t| servebench_spec::substitute::resolve(t, &ctx).expect("pattern"))
    };
    let server = s.file.spec.server.as_ref().expect("server");
    server
        .verify
        .iter()
        .chain(&v.server.verify)
        .filter_map(|r: &VerifyRule| r.kernel.clone())
        .map(|mut k| {
            k.matches = sub(&k.matches);
            k.absent = sub(&k.absent);
            k
        })
        .collect()
}

fn all_hold(rules: &[KernelCheck], ev: &KernelEvidence) -> (bool, String) {
    let mut ok = true;
    let mut why = Vec::new();
    for r in rules {
        let v = judge(r, ev);
        ok &= v.holds;
        why.push(v.detail);
    }
    (ok, why.join("\n"))
}

#[test]
fn the_cpu_traces_of_transformers_serve_tell_sdpa_from_eager() {
    let sdpa = fixture("transformers-cpu-sdpa.pt.trace.json.gz");
    let eager = fixture("transformers-cpu-eager.pt.trace.json.gz");
    assert_eq!(sdpa.source, EvidenceSource::CpuOps);
    assert_eq!(eager.source, EvidenceSource::CpuOps);
    let attention = |r: &RankKernels| {
        r.categories
            .iter()
            .find(|c| c.category == Category::Attention)
            .map_or(0.0, |c| c.total_us)
    };
    assert!(attention(&sdpa) > 0.0);
    assert_eq!(attention(&eager), 0.0);
    let spec = "transformers-cpu-kernels.yaml";
    for (variant, own, other) in [("sdpa", &sdpa, &eager), ("eager", &eager, &sdpa)] {
        let r = rules(spec, variant);
        assert_eq!(r.len(), 2, "{variant}: a matches and an absent rule");
        let (ok, why) = all_hold(&r, &evidence(vec![own.clone()]));
        assert!(ok, "{variant}'s rules on its own trace:\n{why}");
        // On the other arm's trace (or on a trace without the operator) they fail.
        let (ok, why) = all_hold(&r, &evidence(vec![other.clone()]));
        assert!(!ok, "{variant}'s rules on the other's trace:\n{why}");
        for rule in &r {
            assert!(
                !judge(rule, &evidence(vec![other.clone()])).holds,
                "{rule:?}"
            );
        }
    }
    // A rule holds only on every rank: the sdpa rule fails when one rank ran eager.
    let (ok, _) = all_hold(&rules(spec, "sdpa"), &evidence(vec![sdpa, eager]));
    assert!(!ok);
}

/// The H200 traces of `specs/gpu-transformers-moe-kernels.yaml` (run 97ed, results/
/// gpu-transformers-moe-kernels/: transformers 5.17, torch 2.11), each cut by
/// scripts/trim-trace.py to 4,000 events from its first grouped GEMM (eager: its first
/// kernel): the committed rules hold on their own arm's trace and fail on the other's.
#[test]
fn the_h200_traces_tell_grouped_mm_from_eager() {
    let grouped = fixture("h200-moe-grouped_mm.pt.trace.json.gz");
    let eager = fixture("h200-moe-eager.pt.trace.json.gz");
    assert_eq!(grouped.source, EvidenceSource::Kernels);
    assert_eq!(eager.source, EvidenceSource::Kernels);
    let moe = |r: &RankKernels| {
        r.categories
            .iter()
            .find(|c| c.category == Category::GroupedGemm)
            .map_or(0.0, |c| c.total_us)
    };
    assert!(moe(&grouped) > 0.0);
    assert_eq!(moe(&eager), 0.0);
    let spec = "gpu-transformers-moe-kernels.yaml";
    for (variant, own, other) in [
        ("grouped_mm", &grouped, &eager),
        ("eager", &eager, &grouped),
    ] {
        let r = rules(spec, variant);
        assert_eq!(r.len(), 1, "{variant}: one kernel rule");
        let (ok, why) = all_hold(&r, &evidence(vec![own.clone()]));
        assert!(ok, "{variant}'s rule on its own trace:\n{why}");
        let (ok, why) = all_hold(&r, &evidence(vec![other.clone()]));
        assert!(!ok, "{variant}'s rule on the other's trace:\n{why}");
    }
}

fn write_trace(dir: &Path, name: &str, kernels: &[(&str, f64, usize)]) -> RankKernels {
    let mut events = Vec::new();
    let mut ts = 1000.0;
    for (kname, dur, calls) in kernels {
        for _ in 0..*calls {
            events.push(serde_json::json!({
                "ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7,
                "ts": ts, "dur": dur, "args": {"stream": 7, "correlation": 1}
            }));
            ts += dur + 1.0;
        }
    }
    events.push(serde_json::json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0.0, "dur": 5.0}));
    let doc = serde_json::json!({"schemaVersion": 1, "traceEvents": events});
    let path = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(doc.to_string().as_bytes()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    read_rank(&path).expect("synthetic trace")
}

/// The names seen on an H200 for transformers 5.17's MoE experts backends (docs/kernels.md).
const GROUPED: &str = "void cutlass::device_kernel<at::cuda::detail::enable_3x_kernel_for_sm9x<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma<> > > >(T1::Params)";

#[test]
fn the_h200_spec_tells_grouped_mm_from_eager_on_synthetic_traces() {
    let dir = tempfile::tempdir().unwrap();
    let grouped = write_trace(
        dir.path(),
        "grouped.pt.trace.json.gz",
        &[
            (GROUPED, 40.0, 16),
            ("nvjet_tst_128x64_64x8_1x1_v_bz_coopA_TNT", 10.0, 40),
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::silu>",
                2.0,
                40,
            ),
        ],
    );
    let eager = write_trace(
        dir.path(),
        "eager.pt.trace.json.gz",
        &[
            ("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", 3.0, 2000),
            (
                "void at::native::indexFuncLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>",
                1.0,
                1000,
            ),
        ],
    );
    let spec = "gpu-transformers-moe-kernels.yaml";
    let g = rules(spec, "grouped_mm");
    let e = rules(spec, "eager");
    assert!(all_hold(&g, &evidence(vec![grouped.clone()])).0);
    assert!(!all_hold(&g, &evidence(vec![eager.clone()])).0);
    assert!(all_hold(&e, &evidence(vec![eager])).0);
    let (ok, why) = all_hold(&e, &evidence(vec![grouped]));
    assert!(!ok && why.contains("GroupProblemShape"), "{why}");
}

#[test]
fn the_seed_spec_catches_a_fallback_to_the_cutlass_runner() {
    let dir = tempfile::tempdir().unwrap();
    // CuTe DSL names its kernels after the Python class and function (unverified on real
    // hardware: see the spec).
    let cutedsl = |d: &Path, n: &str| {
        write_trace(
            d,
            n,
            &[
                (
                    "kernel_cutlass_kernel_flashinferfused_moecute_dslblackwellblockscaled_contiguous_gather_grouped_gemm_act_fusionBlockScaledContiguousGatherGroupedGemmKernel_object_at__0",
                    50.0,
                    8,
                ),
                (
                    "kernel_cutlass_kernel_flashinferfused_moecute_dslblackwellblockscaled_contiguous_grouped_gemm_finalize_fusionSm100BlockScaledContiguousGroupedGemmFinalizeFusionKernel_object_at__0",
                    40.0,
                    8,
                ),
                ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20.0, 8),
            ],
        )
    };
    let cutlass = |d: &Path, n: &str| {
        write_trace(
            d,
            n,
            &[
                (
                    "void tensorrt_llm::kernels::cutlass_kernels::expandInputRowsKernel<__nv_bfloat16, __nv_fp4_e2m1, 1, false>(...)",
                    5.0,
                    8,
                ),
                (
                    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::MoeProblemShape<>>>(...)",
                    60.0,
                    16,
                ),
                (
                    "void tensorrt_llm::kernels::cutlass_kernels::finalizeMoeRoutingKernel<__nv_bfloat16, __nv_bfloat16>(...)",
                    5.0,
                    8,
                ),
            ],
        )
    };
    let spec = "glm5-moe-runner-cutlass-vs-cutedsl.yaml";
    let d = dir.path();
    let ranks = |f: &dyn Fn(&Path, &str) -> RankKernels, tag: &str| -> Vec<RankKernels> {
        (0..8)
            .map(|r| f(d, &format!("{tag}-TP-{r}.trace.json.gz")))
            .collect()
    };
    let cute_ranks = ranks(&cutedsl, "cute");
    let cutlass_ranks = ranks(&cutlass, "cutlass");
    let c = rules(spec, "cutedsl");
    let k = rules(spec, "cutlass");
    assert!(all_hold(&c, &evidence(cute_ranks.clone())).0);
    assert!(all_hold(&k, &evidence(cutlass_ranks.clone())).0);
    assert!(!all_hold(&c, &evidence(cutlass_ranks.clone())).0);
    assert!(!all_hold(&k, &evidence(cute_ranks.clone())).0);
    // One rank fell back to the CUTLASS runner: the cutedsl start fails.
    let mut mixed = cute_ranks;
    mixed[3] = cutlass_ranks[3].clone();
    let (ok, why) = all_hold(&c, &evidence(mixed));
    assert!(!ok && why.contains("cutlass-TP-3"), "{why}");
}
