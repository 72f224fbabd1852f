//! Every edge case of a streamed response, produced byte for byte by an in-process server,
//! through the real HTTP client.

use crate::loadgen_support;

use std::time::Duration;

use loadgen_support::{Script, Step, after, config, now, prompts, serve};
use servebench_runner::loadgen::{
    ApiKind, ErrorKind, LoadConfig, RequestRecord, Transport, TrialOutcome, run_trial,
};

const ROLE: &[u8] =
    b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
const TOK: &[u8] =
    b"data: {\"choices\":[{\"delta\":{\"content\":\" w\"},\"finish_reason\":null}]}\n\n";
const FIN: &[u8] =
    b"data: {\"choices\":[{\"delta\":{\"content\":\" z\"},\"finish_reason\":\"length\"}]}\n\n";
const USAGE: &[u8] =
    b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\n";
const DONE: &[u8] = b"data: [DONE]\n\n";

/// Runs `script` through both transports (each against its own server); asserts they
/// record the same outcome, and returns the lean client's.
async fn one(script: Script, api: ApiKind) -> (RequestRecord, TrialOutcome) {
    one_with(script, api, config(1)).await
}

async fn one_with(script: Script, api: ApiKind, cfg: LoadConfig) -> (RequestRecord, TrialOutcome) {
    let mut outs = Vec::new();
    for transport in [Transport::Lean, Transport::Reqwest] {
        let server = serve(script.clone()).await;
        let cfg = LoadConfig {
            transport,
            ..cfg.clone()
        };
        let prompts = prompts(cfg.requests, 3);
        outs.push(
            run_trial(&server.target(api), &cfg, &prompts)
                .await
                .expect("runs"),
        );
    }
    let (lean, reqwest) = (&outs[0].records[0], &outs[1].records[0]);
    assert_eq!(
        lean.error, reqwest.error,
        "{:?} / {:?}",
        lean.error_detail, reqwest.error_detail
    );
    assert_eq!(lean.events.len(), reqwest.events.len());
    assert_eq!(
        (lean.usage, &lean.finish_reason),
        (reqwest.usage, &reqwest.finish_reason)
    );
    let out = outs.swap_remove(0);
    (out.records[0].clone(), out)
}

#[tokio::test]
async fn events_split_across_chunks_crlf_and_keepalives() {
    // ROLE and TOK split mid-event over several writes, CRLF line ends, a keep-alive
    // comment, then FIN + USAGE + DONE in one write.
    let tok_crlf: Vec<u8> = String::from_utf8_lossy(TOK)
        .replace('\n', "\r\n")
        .into_bytes();
    let mut steps = vec![now(&ROLE[..10]), after(5, &ROLE[10..])];
    steps.push(after(5, b": ping\n\n"));
    steps.push(after(5, &tok_crlf[..7]));
    steps.push(after(5, &tok_crlf[7..tok_crlf.len() - 1]));
    steps.push(after(5, &tok_crlf[tok_crlf.len() - 1..]));
    steps.push(after(5, TOK));
    steps.push(after(5, &[FIN, USAGE, DONE].concat()));
    let (r, out) = one(Script::Stream(steps), ApiKind::Chat).await;
    assert_eq!(r.error, None, "{:?}", r.error_detail);
    assert_eq!(r.events.len(), 3);
    assert_eq!(r.usage.map(|u| u.completion_tokens), Some(3));
    assert_eq!(r.finish_reason.as_deref(), Some("length"));
    assert!(out.summary.flags.is_empty(), "{:?}", out.summary.flags);
    assert_eq!(out.summary.all.completed, 1);
}

#[tokio::test]
async fn a_role_only_first_chunk_does_not_count_as_the_first_token() {
    let steps = vec![
        now(ROLE),
        after(150, TOK),
        after(5, FIN),
        now(USAGE),
        now(DONE),
    ];
    let (r, out) = one(Script::Stream(steps), ApiKind::Chat).await;
    assert_eq!(r.error, None, "{:?}", r.error_detail);
    let ttft = out.summary.metric("ttft_p50").expect("ttft");
    assert!(
        ttft >= 150.0,
        "TTFT {ttft} ms must wait for the first content"
    );
}

#[tokio::test]
async fn malformed_json_is_a_malformed_event() {
    let steps = vec![
        now(TOK),
        now(b"data: {\"choices\":[{\"delta\":{\"content\n\n"),
        now(DONE),
    ];
    let (r, out) = one(Script::Stream(steps), ApiKind::Chat).await;
    assert_eq!(r.error, Some(ErrorKind::MalformedEvent));
    assert_eq!(out.summary.errors.get(&ErrorKind::MalformedEvent), Some(&1));
}

#[tokio::test]
async fn http_errors_keep_status_and_body() {
    let body = r#"{"error":{"message":"boom","type":"server_error"}}"#;
    let (r, _) = one(
        Script::Whole(500, "application/json", body),
        ApiKind::Completions,
    )
    .await;
    assert_eq!(r.error, Some(ErrorKind::Http { status: 500 }));
    assert!(r.error_detail.as_deref().unwrap_or("").contains("boom"));
    let (r, _) = one(
        Script::Whole(429, "text/plain", "slow down"),
        ApiKind::Completions,
    )
    .await;
    assert_eq!(r.error, Some(ErrorKind::Http { status: 429 }));
    assert_eq!(r.error_detail.as_deref(), Some("slow down"));
}

#[tokio::test]
async fn error_bodies_and_error_events_in_a_200() {
    let body = r#"{"error":{"message":"model not loaded"}}"#;
    let (r, _) = one(
        Script::Whole(200, "application/json", body),
        ApiKind::Completions,
    )
    .await;
    assert_eq!(r.error, Some(ErrorKind::ServerErrorEvent));
    let (r, _) = one(
        Script::Whole(200, "text/html", "<h1>proxy</h1>"),
        ApiKind::Completions,
    )
    .await;
    assert_eq!(r.error, Some(ErrorKind::MalformedEvent));
    for ev in [
        &b"data: {\"error\":{\"message\":\"oom\"}}\n\n"[..],
        b"event: error\ndata: oom\n\n",
    ] {
        let steps = vec![now(TOK), now(ev), now(DONE)];
        let (r, _) = one(Script::Stream(steps), ApiKind::Chat).await;
        assert_eq!(r.error, Some(ErrorKind::ServerErrorEvent));
        assert!(r.error_detail.as_deref().unwrap_or("").contains("oom"));
    }
}

#[tokio::test]
async fn a_slow_drip_is_cut_at_the_request_timeout() {
    let steps: Vec<Step> = (0..20).map(|_| after(300, TOK)).collect();
    let mut cfg = config(1);
    cfg.request_timeout = Duration::from_secs(1);
    let started = std::time::Instant::now();
    let (r, _) = one_with(Script::Stream(steps), ApiKind::Chat, cfg).await;
    assert!(started.elapsed() < Duration::from_secs(5), "nothing hangs");
    assert_eq!(r.error, Some(ErrorKind::Timeout));
    assert!(
        (2..=4).contains(&r.events.len()),
        "{} events before the cut",
        r.events.len()
    );
    let e2e = r.end_ns.expect("end") - r.send_ns.expect("send");
    assert!((1_000_000_000..1_500_000_000).contains(&e2e), "{e2e}");
}

#[tokio::test]
async fn a_broken_connection_is_stream_disconnected() {
    let steps = vec![now(TOK), after(5, TOK), Step::Cut(Duration::from_millis(5))];
    let (r, _) = one(Script::Stream(steps), ApiKind::Chat).await;
    assert_eq!(
        r.error,
        Some(ErrorKind::StreamDisconnected),
        "{:?}",
        r.error_detail
    );
    assert_eq!(r.events.len(), 2);
    // A clean end of body before [DONE] or a finish_reason is a disconnect too.
    let (r, _) = one(Script::Stream(vec![now(TOK), now(TOK)]), ApiKind::Chat).await;
    assert_eq!(r.error, Some(ErrorKind::StreamDisconnected));
}

#[tokio::test]
async fn missing_usage_is_flagged_not_filled_in() {
    let steps = vec![now(TOK), now(FIN), now(DONE)];
    let (r, out) = one(Script::Stream(steps), ApiKind::Chat).await;
    assert_eq!(r.error, None);
    assert_eq!(r.usage, None);
    let s = &out.summary;
    assert_eq!(
        s.flags
            .get(&servebench_result::record::RequestFlag::NoUsage),
        Some(&1)
    );
    // Requested 3 tokens, got 2 (client count): short output is flagged too.
    assert_eq!(
        s.flags
            .get(&servebench_result::record::RequestFlag::ShortOutput),
        Some(&1)
    );
    assert_eq!(
        s.all.output_tokens, 2,
        "the client's count, never the requested length"
    );
    assert_eq!(s.tokens.requests_without_usage, 1);
}

#[tokio::test]
async fn connection_refused_is_connect() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let target = servebench_runner::loadgen::Target {
        base_url: format!("http://{addr}"),
        api: ApiKind::Completions,
        model: "m".into(),
        api_key: Some("sk-test".into()),
        headers: Vec::new(),
        ca_file: None,
    };
    for transport in [Transport::Lean, Transport::Reqwest] {
        let cfg = LoadConfig {
            transport,
            ..config(2)
        };
        let out = run_trial(&target, &cfg, &prompts(2, 3))
            .await
            .expect("runs");
        assert!(
            out.records
                .iter()
                .all(|r| r.error == Some(ErrorKind::Connect)),
            "{transport:?}"
        );
        assert_eq!(out.summary.errors.get(&ErrorKind::Connect), Some(&2));
    }
}
