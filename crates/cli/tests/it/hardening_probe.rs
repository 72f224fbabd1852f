//! `servebench probe` against scripted servers on 127.0.0.1 (issue 42): every wait bounded
//! by `--deadline` with the step said as it begins, a stream that stalls or never ends cut
//! there with what was seen, a plain-HTTP server behind `https://` said in words (not a
//! death by SIGPIPE), and what a server sends escaped before it reaches the terminal.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::common::sb;

#[derive(Clone, Copy)]
enum Mode {
    /// Three token events, then silence.
    Stall,
    /// Token events for ever, whatever `max_tokens` asked.
    Endless,
    /// A model id and an error body holding terminal escape sequences.
    Hostile,
}

const ESCAPES: &str = "\\u001b]0;pwned\\u0007\\u001b[31mred";

/// A scripted server in threads of this process; its port.
fn server(mode: Mode) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = serve(conn, mode);
            });
        }
    });
    port
}

fn reply(w: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    write!(
        w,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn event(w: &mut TcpStream, text: &str) -> std::io::Result<()> {
    let e = format!(
        "data: {{\"id\":\"c\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":null}}]}}\n\n"
    );
    write!(w, "{:x}\r\n{e}\r\n", e.len())?;
    w.flush()
}

fn serve(conn: TcpStream, mode: Mode) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    while let Some(path) = crate::common::read_request(&mut reader)? {
        match (path.as_str(), mode) {
            ("/v1/models", Mode::Hostile) => reply(
                &mut w,
                "200 OK",
                &format!("{{\"data\":[{{\"id\":\"m{ESCAPES}\"}}]}}"),
            )?,
            ("/v1/completions", Mode::Hostile) => reply(
                &mut w,
                "500 Internal Server Error",
                &format!("{{\"error\":\"boom{ESCAPES}\"}}"),
            )?,
            ("/v1/completions", _) => {
                w.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
                )?;
                for _ in 0..3 {
                    event(&mut w, "word ")?;
                }
                if matches!(mode, Mode::Stall) {
                    std::thread::sleep(Duration::from_secs(120));
                }
                loop {
                    event(&mut w, "more ")?;
                }
            }
            _ => reply(&mut w, "404 Not Found", "{\"error\":\"no\"}")?,
        }
    }
    Ok(())
}

fn probe(url: &str, extra: &[&str]) -> (i32, String, String, Duration) {
    let t = Instant::now();
    let o = sb(std::path::Path::new("."))
        .arg("probe")
        .arg(url)
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("probe");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        t.elapsed(),
    )
}

#[test]
fn a_stalled_or_endless_stream_ends_at_the_probe_deadline_with_what_was_seen() {
    for (mode, words) in [
        (Mode::Stall, "the stream stalled"),
        (Mode::Endless, "did not end"),
    ] {
        let port = server(mode);
        let url = format!("http://127.0.0.1:{port}");
        let (code, out, err, took) = probe(&url, &["--model", "m", "--deadline", "2"]);
        // Before: 120 s with no output and no way to shorten it.
        assert_eq!(code, 1, "{out}{err}");
        assert!(took < Duration::from_secs(30), "took {took:?}");
        assert!(out.contains("cut at the deadline of 2 s"), "{out}");
        assert!(out.contains(words), "{out}");
        assert!(err.contains("streaming request (deadline 2 s)"), "{err}");
    }
}

#[test]
fn what_a_server_sends_is_escaped_before_it_reaches_the_terminal() {
    let port = server(Mode::Hostile);
    let (_, out, err, _) = probe(&format!("http://127.0.0.1:{port}"), &["--deadline", "5"]);
    // Before: the escape sequences were printed as they came.
    assert!(
        !out.contains('\u{1b}') && !err.contains('\u{1b}'),
        "{out:?}{err:?}"
    );
    assert!(!out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("\\x1b]0;pwned\\x07"), "{out}");
}

#[test]
fn https_to_a_plain_http_server_is_said_in_words_not_a_sigpipe() {
    // The simulator (hyper) answers a TLS hello with a plain-HTTP 400 and closes.
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let url = rt.block_on(async {
        let config = servebench_sim::SimConfig::from_preset(servebench_sim::Preset::Fast);
        let h = servebench_sim::spawn(config).await.expect("sim");
        let url = h.base_url();
        std::mem::forget(h);
        url
    });
    let https = url.replace("http://", "https://");
    for _ in 0..5 {
        let (code, out, err, _) = probe(&https, &["--deadline", "5"]);
        // Before: killed by SIGPIPE (exit 141) in most tries.
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains("it serves plain HTTP there"), "{err}");
    }
    drop(rt);
}
