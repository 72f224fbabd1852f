//! The fault matrix of docs/reliability.md, part 2: what the simulator cannot produce, from
//! a small scripted HTTP server in this process — a response without `usage`, an SSE event
//! larger than the client's bound.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};

use crate::common;
use common::faults::*;

/// A scripted OpenAI-compatible server on 127.0.0.1:0 that answers every generation
/// request with `body` as a chunked `text/event-stream` (HTTP/1.1, keep-alive), written in
/// pieces of at most 64 KiB. Threads end with the test process.
fn scripted_server(body: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let body = std::sync::Arc::new(body);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let body = body.clone();
            std::thread::spawn(move || {
                let _ = serve(conn, &body);
            });
        }
    });
    port
}

fn serve(conn: TcpStream, body: &[u8]) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    while crate::common::read_request(&mut reader)?.is_some() {
        w.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        )?;
        for piece in body.chunks(64 << 10) {
            write!(w, "{:x}\r\n", piece.len())?;
            w.write_all(piece)?;
            w.write_all(b"\r\n")?;
        }
        w.write_all(b"0\r\n\r\n")?;
        w.flush()?;
    }
    Ok(())
}

fn token_event(text: &str, finish: Option<&str>) -> String {
    let fr = finish.map_or("null".to_owned(), |f| format!("\"{f}\""));
    format!(
        "data: {{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"sim-model\",\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":{fr}}}]}}\n\n"
    )
}

/// A spec against an already running server at `port` (no server block).
fn base_url_spec(port: u16, requests: u32) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: fault-row}}
spec:
  target: {{api: openai-completions, model: sim-model, tokenizer: none, base_url: "http://127.0.0.1:{port}"}}
  variants:
    - name: only
      baseline: true
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: {requests}
    warmup_requests: 0
    request_timeout: 20s
  sweep: {{max_concurrency: [2]}}
  trials: {{count: 1}}
"#
    )
}

#[test]
fn a_response_without_usage_is_flagged_and_counted_by_the_client_never_by_the_request() {
    // 8 token events and [DONE], but no usage chunk although include_usage was asked for.
    let mut body = String::new();
    for i in 0..8 {
        body.push_str(&token_event(" w", (i == 7).then_some("length")));
    }
    body.push_str("data: [DONE]\n\n");
    let port = scripted_server(body.into_bytes());
    let (dir, code, out) = run_spec(&base_url_spec(port, 10));
    assert_eq!(code, 0, "{out}");
    let t = the_trial(dir.path(), 10);
    assert_eq!(t["status"], "ok");
    let s = &t["summary"];
    assert_eq!(s["all"]["failed"], 0, "{s}");
    assert_eq!(s["flags"]["no_usage"], 10, "{s}");
    assert_eq!(s["tokens"]["requests_without_usage"], 10);
    assert_eq!(s["tokens"]["client_output_tokens_without_usage"], 80);
    assert_eq!(s["tokens"]["usage_output_tokens"], 0);
    assert_eq!(s["all"]["output_tokens"], 80, "N_out is the client's count");
    for l in sidecar(&result_file(dir.path())) {
        assert!(l["usage"].is_null(), "never filled in: {l}");
    }
}

#[test]
fn an_oversized_event_fails_the_request_at_the_bound_instead_of_growing_without_end() {
    // One token, then an event of 6 MiB that never ends (the bound is 4 MiB).
    let mut body = token_event(" w", None).into_bytes();
    body.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"text\":\"");
    body.resize(body.len() + (6 << 20), b'x');
    let port = scripted_server(body);
    let (dir, code, out) = run_spec(&base_url_spec(port, 4));
    // every request failed: measured and kept, but the run is not a success
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("had no successful request"), "{out}");
    let t = the_trial(dir.path(), 4);
    assert_eq!(errors_of(&t), [("malformed_event".to_owned(), 4)]);
    for l in sidecar(&result_file(dir.path())) {
        let d = l["error_detail"].as_str().unwrap_or("");
        assert!(d.contains("exceeded 4194304 bytes"), "{d}");
    }
}
