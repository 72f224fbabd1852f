//! The trace reader, the aggregation and the rules on synthetic traces.

use std::io::Write;

use servebench_spec::KernelCheck;

use super::aggregate::union_for_test;
use super::*;

fn event(cat: &str, name: &str, pid: i64, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": {}, "pid": {pid}, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{"stream": 7, "grid": [1, 2, 3]}}}}"#,
        serde_json::to_string(name).unwrap()
    )
}

fn trace(events: &[String]) -> String {
    let mut all = events.to_vec();
    all.push(r#"{"ph": "i", "name": "marker", "ts": 1}"#.to_owned());
    all.push(r#"{"ph": "f", "id": 3, "pid": 0, "tid": 0, "ts": 2}"#.to_owned());
    format!(
        r#"{{"schemaVersion": 1, "deviceProperties": [{{"id": 0}}], "traceEvents": [{}], "traceName": "x"}}"#,
        all.join(", ")
    )
}

fn rank_of(text: &str) -> RankKernels {
    let mut agg = Aggregator::default();
    read_events(text.as_bytes(), &mut |e| agg.add(e)).expect("trace");
    agg.finish("rank.json")
}

const GROUPED: &str = "void cutlass::device_kernel<at::cuda::detail::enable_3x_kernel_for_sm9x<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, X> > >(X::Params)";

#[test]
fn busy_time_is_the_union_of_intervals() {
    let mut iv = vec![(0.0, 10.0), (5.0, 12.0), (20.0, 25.0), (24.0, 24.5)];
    assert_eq!(union_for_test(&mut iv), 17.0);
    assert_eq!(union_for_test(&mut []), 0.0);
}

#[test]
fn kernels_are_aggregated_by_name_category_and_device() {
    let t = trace(&[
        event("kernel", GROUPED, 0, 100.0, 40.0),
        event("kernel", GROUPED, 0, 150.0, 40.0),
        event("kernel", "flash_fwd_kernel", 0, 130.0, 10.0),
        // Overlaps the first (another stream): the device is busy once.
        event("kernel", "vectorized_elementwise_kernel", 0, 110.0, 10.0),
        event(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            0,
            200.0,
            5.0,
        ),
        event("cpu_op", "aten::mm", 0, 0.0, 500.0),
        event("cuda_runtime", "cudaLaunchKernel", 0, 0.0, 3.0),
    ]);
    let r = rank_of(&t);
    assert_eq!(r.source, EvidenceSource::Kernels);
    assert_eq!(r.events, 5);
    assert_eq!(r.total_us, 105.0);
    // [100,140] ∪ [110,120] ∪ [130,140] ∪ [150,190] ∪ [200,205] = 40 + 40 + 5
    assert_eq!(r.busy_us, 85.0);
    assert_eq!(r.span_us, 105.0);
    assert_eq!(r.kernels[0].name, GROUPED);
    assert_eq!(r.kernels[0].calls, 2);
    assert_eq!(r.kernels[0].category, Category::GroupedGemm);
    assert!((r.kernels[0].share - 80.0 / 85.0).abs() < 1e-12);
    let cat = |c: Category| {
        r.categories
            .iter()
            .find(|s| s.category == c)
            .map(|s| s.total_us)
    };
    assert_eq!(cat(Category::GroupedGemm), Some(80.0));
    assert_eq!(cat(Category::Attention), Some(10.0));
    assert_eq!(cat(Category::Elementwise), Some(10.0));
    assert_eq!(cat(Category::Copies), Some(5.0));
    assert_eq!(cat(Category::Gemm), None);
}

#[test]
fn two_devices_add_their_busy_times() {
    let t = trace(&[
        event("kernel", "a", 0, 0.0, 10.0),
        event("kernel", "a", 1, 0.0, 10.0),
    ]);
    let r = rank_of(&t);
    assert_eq!((r.lanes, r.busy_us), (2, 20.0));
}

#[test]
fn a_cpu_trace_is_aggregated_on_its_operators() {
    let t = trace(&[
        event("cpu_op", "aten::scaled_dot_product_attention", 1, 0.0, 30.0),
        event("cpu_op", "aten::linear", 1, 40.0, 50.0),
        event("cpu_op", "aten::addmm", 1, 45.0, 40.0),
    ]);
    let r = rank_of(&t);
    assert_eq!(r.source, EvidenceSource::CpuOps);
    assert_eq!(r.busy_us, 80.0);
    assert_eq!(r.total_us, 120.0);
    assert_eq!(
        categorize("aten::scaled_dot_product_attention"),
        Category::Attention
    );
    assert_eq!(categorize("aten::addmm"), Category::Gemm);
    assert_eq!(categorize("aten::_softmax"), Category::Elementwise);
    assert_eq!(
        categorize("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
        Category::Communication
    );
}

#[test]
fn a_bare_array_and_gzip_are_read_and_a_cut_trace_is_an_error() {
    let events = [event("kernel", "k", 0, 0.0, 1.0)];
    let bare = format!("[{}]", events.join(","));
    assert_eq!(rank_of(&bare).events, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pt.trace.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(trace(&events).as_bytes()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let r = read_rank(&path).expect("gzip trace");
    assert_eq!((r.file.as_str(), r.events), ("t.pt.trace.json.gz", 1));
    // Still being written: an error, never a partial aggregate.
    let full = trace(&events);
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &full[..full.len() - 30]).unwrap();
    let err = read_rank(&cut).unwrap_err();
    assert!(err.is_incomplete(), "{err}");
    assert!(err.to_string().contains("the trace ends early"), "{err}");
    let none = dir.path().join("none.json");
    std::fs::write(&none, r#"{"other": 1}"#).unwrap();
    assert!(
        read_rank(&none)
            .unwrap_err()
            .to_string()
            .contains("traceEvents")
    );
}

fn evidence(ranks: Vec<RankKernels>) -> KernelEvidence {
    KernelEvidence {
        block: 0,
        variant: "a".into(),
        concurrency: 2,
        requests: 4,
        completed: 4,
        output_tokens: 100,
        load_s: 1.0,
        tpot_ms: Some(10.0),
        step_s: 2.0,
        wait_s: 0.5,
        trace_bytes: 1,
        ranks,
        error: None,
    }
}

fn check(matches: Option<&str>, min_share: Option<f64>, absent: Option<&str>) -> KernelCheck {
    KernelCheck {
        matches: matches.map(str::to_owned),
        min_share,
        absent: absent.map(str::to_owned),
    }
}

#[test]
fn a_rule_holds_only_on_every_rank() {
    let with = rank_of(&trace(&[
        event("kernel", GROUPED, 0, 0.0, 60.0),
        event("kernel", "rmsnorm", 0, 60.0, 40.0),
    ]));
    let without = rank_of(&trace(&[event("kernel", "rmsnorm", 0, 0.0, 40.0)]));
    let both = evidence(vec![with.clone(), with.clone()]);
    let grouped = check(Some("GroupProblemShape|_grouped_mm"), Some(0.5), None);
    assert!(judge(&grouped, &both).holds);
    assert!(!judge(&check(Some("GroupProblemShape"), Some(0.7), None), &both).holds);
    let one = evidence(vec![with.clone(), without.clone()]);
    let v = judge(&grouped, &one);
    assert!(!v.holds);
    assert!(v.detail.contains("none ran"), "{}", v.detail);
    assert!(
        judge(
            &check(None, None, Some("GroupProblemShape")),
            &evidence(vec![without])
        )
        .holds
    );
    let v = judge(&check(None, None, Some("GroupProblemShape")), &one);
    assert!(
        !v.holds && v.detail.contains("e.g. void cutlass"),
        "{}",
        v.detail
    );
    assert!(!judge(&check(Some("("), None, None), &both).holds);
    let e = evidence(vec![with]);
    assert_eq!(e.busy_per_token_ms(), Some(0.001));
    // 0.001 ms a token × 2 in flight over a 10 ms TPOT.
    assert!((e.busy_share_of_tpot().unwrap() - 0.0002).abs() < 1e-12);
    assert!(top_lines(&e, 1)[1].contains("60.0%"));
}

#[test]
fn an_api_process_trace_without_kernels_is_not_a_rank() {
    let gpu = rank_of(&trace(&[event("kernel", GROUPED, 0, 0.0, 60.0)]));
    let api = rank_of(&trace(&[event("cpu_op", "aten::empty", 0, 0.0, 1.0)]));
    let e = evidence(vec![gpu, api]);
    assert_eq!(e.judged_ranks().len(), 1);
    assert!(judge(&check(Some("GroupProblemShape"), Some(0.9), None), &e).holds);
    let empty = evidence(vec![rank_of(&trace(&[]))]);
    assert!(!judge(&check(None, None, Some("x")), &empty).holds);
}

/// Issue 50: what is not a trace is said as such, at once (no waiting for it to be written),
/// with its first bytes; a gzip bomb is refused at the bound instead of inflated whole.
#[test]
fn not_json_a_gzip_bomb_and_a_cut_gzip_are_each_said_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("page.json");
    std::fs::write(&html, "<html>\n<body>oops</body></html>").unwrap();
    let e = read_rank(&html).unwrap_err();
    assert!(!e.is_incomplete(), "{e}");
    let words = e.to_string();
    assert!(
        words.contains("not a Chrome trace (expected value at line 1 column 1)")
            && words.contains("the file begins `<html> <body>oops</body></html>`")
            && words.contains("evidence.kernels.dir"),
        "{words}"
    );
    // 40 MiB of blanks inside the array: some 40 kB of gzip, far beyond 200×.
    let bomb = dir.path().join("bomb.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(b"{\"traceEvents\": [").unwrap();
    let blanks = vec![b' '; 1 << 20];
    for _ in 0..40 {
        gz.write_all(&blanks).unwrap();
    }
    gz.write_all(b"]}").unwrap();
    std::fs::write(&bomb, gz.finish().unwrap()).unwrap();
    let e = read_rank(&bomb).unwrap_err();
    assert!(matches!(e, TraceError::Inflated { .. }), "{e}");
    assert!(e.to_string().contains("inflates beyond 200×"), "{e}");
    // A gzip trace cut short is still being written.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(trace(&[event("kernel", "k", 0, 0.0, 1.0)]).as_bytes())
        .unwrap();
    let whole = gz.finish().unwrap();
    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let e = read_rank(&cut).unwrap_err();
    assert!(e.is_incomplete(), "{e}");
    // One name of a megabyte is kept cut to its first 4096 bytes.
    let huge = "é".repeat(1 << 19);
    let r = rank_of(&trace(&[event("kernel", &huge, 0, 0.0, 1.0)]));
    let kept = &r.kernels[0].name;
    assert!(
        kept.len() <= MAX_NAME_BYTES + '…'.len_utf8() && kept.ends_with('…'),
        "{}",
        kept.len()
    );
}

#[test]
fn flashinfer_norms_are_norms_and_sglang_triton_attention_is_attention() {
    // names as SGLang 0.5.17 and vLLM 0.26.0 ran them on an H100 (results/gpu-*-moe-*/traces)
    let cases = [
        (
            "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*)",
            Category::Elementwise,
        ),
        ("_fwd_kernel", Category::Attention),
        ("_fwd_grouped_kernel_stage1", Category::Attention),
        ("_fwd_kernel_stage2", Category::Attention),
        (
            "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<2>>>",
            Category::Attention,
        ),
        (
            "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>(__nv_bfloat16 const*)",
            Category::Copies,
        ),
        ("flash_fwd_splitkv_kernel", Category::Attention),
        (
            "flashinfer::BatchPrefillWithPagedKVCacheKernel",
            Category::Attention,
        ),
        ("fused_moe_kernel", Category::GroupedGemm),
    ];
    for (name, want) in cases {
        assert_eq!(categorize(name), want, "{name}");
    }
}
