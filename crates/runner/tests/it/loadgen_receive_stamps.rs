//! A client too busy to read does not add its delay to TTFT: the lean executor dates reads by
//! the kernel's receive stamp. The server (its own thread and runtime) answers the measured
//! request's first token 30 ms after it arrives, and at that moment the client's one thread is
//! blocked for 200 ms by another task. Dated by the kernel, TTFT is about 30 ms; dated by the
//! clock after the read, about 200 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use servebench_runner::dataset::{Prompt, TrialPrompts};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, TrialOutcome, run_trial};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use crate::loadgen_support;
use loadgen_support::read_request;

const FIRST: &str = "data: {\"choices\":[{\"text\":\" a\"}]}\n\n";
const REST: &str = "data: {\"choices\":[{\"text\":\" b\",\"finish_reason\":\"length\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n\
data: [DONE]\n\n";
const SERVER_DELAY: Duration = Duration::from_millis(30);
const BLOCKED: Duration = Duration::from_millis(200);

/// Serves keep-alive `Content-Length` responses on its own thread. The first (warm-up)
/// request is answered after 100 ms; from the second on it wakes `busy` and waits
/// SERVER_DELAY before the first token.
fn server(busy: Arc<Notify>) -> String {
    let served = Arc::new(AtomicUsize::new(0));
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    std_listener.set_nonblocking(true).expect("nonblocking");
    let url = format!("http://{}", std_listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = TcpListener::from_std(std_listener).expect("listener");
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(connection(sock, Arc::clone(&busy), Arc::clone(&served)));
            }
        });
    });
    url
}

/// `served` counts requests across connections, so the measured one is recognised even if
/// the client opened a new connection for it.
async fn connection(mut sock: TcpStream, busy: Arc<Notify>, served: Arc<AtomicUsize>) {
    let mut buf = Vec::new();
    loop {
        if !read_request(&mut sock, &mut buf).await {
            return;
        }
        if served.fetch_add(1, SeqCst) > 0 {
            busy.notify_one();
            tokio::time::sleep(SERVER_DELAY).await;
        } else {
            // The kernel switches stamps on for the host from a work queue after the first
            // socket asks: give it time before anything measured arrives.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            FIRST.len() + REST.len()
        );
        if sock
            .write_all(format!("{head}{FIRST}").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if sock.write_all(REST.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// One warm-up request (same connection, so the kernel has switched stamps on), then one
/// measured request during which the client's thread is blocked.
async fn trial(kernel_stamps: bool) -> TrialOutcome {
    let busy = Arc::new(Notify::new());
    let url = server(Arc::clone(&busy));
    let hog = tokio::spawn(async move {
        busy.notified().await;
        std::thread::sleep(BLOCKED);
    });
    let target = Target {
        base_url: url,
        api: ApiKind::Completions,
        model: "m".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    };
    let mut cfg = LoadConfig::new(1);
    cfg.max_concurrency = Some(1);
    cfg.warmup_requests = 1;
    cfg.kernel_receive_stamps = kernel_stamps;
    let prompts = TrialPrompts {
        measured: vec![Prompt::text("p", 1)],
        warmup: vec![Prompt::text("w", 1)],
        send_offsets_ns: None,
        conversations: None,
    };
    let out = run_trial(&target, &cfg, &prompts).await.expect("runs");
    tokio::time::timeout(Duration::from_secs(10), hog)
        .await
        .expect("the server woke the blocking task")
        .expect("the blocking task ran");
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[0].error_detail
    );
    out
}

fn ttft_ms(out: &TrialOutcome) -> f64 {
    out.summary.metric("ttft_p50").expect("a TTFT")
}

#[tokio::test]
async fn kernel_stamps_leave_the_clients_own_delay_out_of_ttft() {
    let out = trial(true).await;
    let stamps = out
        .receive_stamps
        .expect("the lean executor counts its reads");
    assert!(
        stamps.kernel >= 1,
        "no read was stamped by the kernel: {stamps:?}"
    );
    let ttft = ttft_ms(&out);
    assert!(
        (29.0..150.0).contains(&ttft),
        "TTFT {ttft} ms: the server answered after 30 ms, the client read after 200"
    );
}

#[tokio::test]
async fn clock_dated_reads_include_the_clients_delay() {
    let out = trial(false).await;
    let stamps = out
        .receive_stamps
        .expect("the lean executor counts its reads");
    assert_eq!(stamps.kernel, 0, "{stamps:?}");
    assert!(stamps.clock >= 1, "{stamps:?}");
    let ttft = ttft_ms(&out);
    assert!(
        ttft >= 195.0,
        "TTFT {ttft} ms should include the 200 ms block"
    );
}
