//! The load generator against the embedded simulator: exact prompt lengths through its
//! `/tokenize`, server timings beside the client's, the concurrency limit seen by the
//! server, and injected faults counted by kind exactly as the simulator injected them.

use std::time::Duration;

use servebench_runner::dataset::{
    LengthDist, RandomDataset, RandomPromptBuilder, ServerTokenizer, TokenCounter, TokenizeStyle,
};
use servebench_runner::loadgen::{ApiKind, ErrorKind, LoadConfig, Target, run_trial};
use servebench_sim::{Preset, SimConfig, SimHandle};

async fn sim(preset: Preset, tweak: impl FnOnce(&mut SimConfig)) -> SimHandle {
    let mut c = SimConfig::from_preset(preset);
    tweak(&mut c);
    servebench_sim::spawn(c).await.expect("simulator starts")
}

fn target(s: &SimHandle, api: ApiKind) -> Target {
    Target {
        base_url: s.base_url(),
        api,
        model: "sim-model".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    }
}

fn tokenizer(s: &SimHandle, style: TokenizeStyle) -> ServerTokenizer {
    ServerTokenizer::new(&s.base_url(), "/tokenize", None, None, style).expect("valid URL")
}

fn dataset(chat: bool) -> RandomDataset {
    RandomDataset {
        input_tokens: LengthDist::Uniform { min: 16, max: 128 },
        output_tokens: LengthDist::Fixed { tokens: 16 },
        chat,
    }
}

fn config(requests: usize, limit: usize) -> LoadConfig {
    let mut c = LoadConfig::new(requests);
    c.max_concurrency = Some(limit);
    c.warmup_requests = 4;
    c.request_timeout = Duration::from_secs(30);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_input_lengths_timings_and_the_limit_on_the_server() {
    for api in [ApiKind::Completions, ApiKind::Chat] {
        let s = sim(Preset::Fast, |_| {}).await;
        let mut b = RandomPromptBuilder::new(
            dataset(api == ApiKind::Chat),
            tokenizer(&s, TokenizeStyle::Auto),
        )
        .expect("valid dataset");
        let prompts = b.trial_prompts(40, 4, 7, 1, 0).await.expect("prompts");
        assert_eq!(b.stats().length_misses, 0);
        assert!(
            b.stats().round_trips <= 3 * b.stats().prompts,
            "{:?}",
            b.stats()
        );
        let out = run_trial(&target(&s, api), &config(40, 8), &prompts)
            .await
            .expect("runs");
        let sum = &out.summary;
        assert!(sum.errors.is_empty(), "{api:?}: {:?}", sum.errors);
        assert!(
            sum.flags.is_empty(),
            "{api:?}: exact lengths, full outputs: {:?}",
            sum.flags
        );
        let expected: u64 = prompts
            .measured
            .iter()
            .map(|p| u64::from(p.expected_input_tokens.unwrap_or(0)))
            .sum();
        assert_eq!(sum.all.input_tokens, expected);
        assert_eq!(sum.all.output_tokens, 40 * 16);
        assert!(
            out.records
                .iter()
                .all(|r| r.server_timings.and_then(|t| t.ttft_ms).is_some())
        );
        let overhead = sum.ttft_overhead.expect("server TTFT known");
        assert_eq!(overhead.count, 40);
        let st = s.stats();
        // Never above the limit (reaching it exactly is timing-dependent on a loaded host;
        // tests/loadgen_concurrency.rs checks that with long first tokens).
        assert!(
            (1..=8).contains(&st.max_in_flight),
            "{api:?}: {}",
            st.max_in_flight
        );
        assert_eq!(st.requests_received, 44);
        assert!(sum.all.peak_concurrency <= 8 && !sum.concurrency_limit_exceeded);
        s.shutdown().await.expect("stops");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_faults_are_counted_by_kind() {
    let s = sim(Preset::Fast, |c| {
        c.seed = 3;
        c.faults.error_rate_500 = 0.15;
        c.faults.error_rate_429 = 0.1;
        c.faults.disconnect_rate = 0.15;
        c.faults.malformed_rate = 0.15;
    })
    .await;
    let mut b = RandomPromptBuilder::new(dataset(false), tokenizer(&s, TokenizeStyle::Prompt))
        .expect("valid dataset");
    let prompts = b.trial_prompts(120, 0, 1, 1, 0).await.expect("prompts");
    let mut cfg = config(120, 8);
    cfg.warmup_requests = 0;
    let out = run_trial(&target(&s, ApiKind::Completions), &cfg, &prompts)
        .await
        .expect("runs");
    let st = s.stats();
    let e = &out.summary.errors;
    let n = |k: ErrorKind| e.get(&k).copied().unwrap_or(0) as u64;
    assert_eq!(
        n(ErrorKind::Http { status: 500 }),
        st.injected_500,
        "{e:?} vs {st:?}"
    );
    assert_eq!(
        n(ErrorKind::Http { status: 429 }),
        st.injected_429,
        "{e:?} vs {st:?}"
    );
    assert_eq!(
        n(ErrorKind::StreamDisconnected),
        st.injected_disconnects,
        "{e:?} vs {st:?}"
    );
    assert_eq!(
        n(ErrorKind::MalformedEvent),
        st.injected_malformed,
        "{e:?} vs {st:?}"
    );
    assert!(st.injected_500 > 0 && st.injected_disconnects > 0 && st.injected_malformed > 0);
    let failed: usize = e.values().sum();
    assert_eq!(out.summary.all.completed, 120 - failed);
    // A request whose malformed event came with its last tokens is "served" for the
    // simulator and failed for the client: the only allowed difference.
    let completed = out.summary.all.completed as u64;
    assert!(completed <= st.requests_served);
    assert!(st.requests_served <= completed + st.injected_malformed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_simulator_stream_times_out() {
    let s = sim(Preset::Fast, |c| {
        c.faults.stall_rate = 1.0;
        c.faults.stall_ms = 5_000;
    })
    .await;
    let mut b = RandomPromptBuilder::new(dataset(false), tokenizer(&s, TokenizeStyle::Auto))
        .expect("valid dataset");
    let prompts = b.trial_prompts(3, 0, 1, 1, 0).await.expect("prompts");
    let mut cfg = config(3, 3);
    cfg.warmup_requests = 0;
    cfg.request_timeout = Duration::from_millis(800);
    let started = std::time::Instant::now();
    let out = run_trial(&target(&s, ApiKind::Completions), &cfg, &prompts)
        .await
        .expect("runs");
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(out.summary.errors.get(&ErrorKind::Timeout), Some(&3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_tokenize_request_shapes() {
    let s = sim(Preset::ZeroDelay, |_| {}).await;
    for style in [
        TokenizeStyle::Prompt,
        TokenizeStyle::Content,
        TokenizeStyle::Auto,
    ] {
        let mut t = tokenizer(&s, style);
        assert_eq!(t.count("one two  three\nfour").await.expect("counts"), 4);
        assert_eq!(t.round_trips(), 1);
    }
}
