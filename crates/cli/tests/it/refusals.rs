//! Issue 50: every refusal names the cause it saw and what to do, and what was accepted
//! silently is refused with its place. `probe` of a server whose `/v1/models` is no model
//! list (an HTML page, a 404, a 500, bytes that are not JSON, a URL already ending in `/v1`),
//! a negative number given to an option, `--fail-on none` beside a condition, a binary file
//! given as a spec, a trace window that holds no request, a prompt line asking for 0 tokens.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use crate::common::{repo, sb, scratch};

/// A server on 127.0.0.1 that answers every request with `status`, `content_type` and
/// `body`; its port.
fn answering(status: &'static str, content_type: &'static str, body: &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = serve(conn, status, content_type, body);
            });
        }
    });
    port
}

fn serve(conn: TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    while crate::common::read_request(&mut reader)?.is_some() {
        write!(
            w,
            "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )?;
        w.write_all(body)?;
    }
    Ok(())
}

fn probe(url: &str) -> (i32, String) {
    let o = sb(Path::new("."))
        .args(["probe", url, "--deadline", "5"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("probe");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn probe_says_what_v1_models_answered_instead_of_a_model_list() {
    let cases: [(&str, &str, &[u8], &str); 4] = [
        (
            "200 OK",
            "text/html",
            b"<!DOCTYPE html><title>Welcome to nginx</title>",
            "HTTP 200, text/html, 46 bytes starting `<!DOCTYPE html><title>Welcome to nginx</title>`",
        ),
        (
            "404 Not Found",
            "text/plain",
            b"404 page not found",
            "HTTP 404, text/plain, 18 bytes starting `404 page not found`",
        ),
        (
            "500 Internal Server Error",
            "application/json",
            b"{\"error\": \"engine is loading\"}",
            "HTTP 500, application/json, 30 bytes starting `{\"error\": \"engine is loading\"}`",
        ),
        (
            "200 OK",
            "application/json",
            b"\x00\x01garbage",
            "HTTP 200, application/json, 9 bytes starting",
        ),
    ];
    for (status, kind, body, words) in cases {
        let port = answering(status, kind, body);
        let (code, err) = probe(&format!("http://127.0.0.1:{port}"));
        // Before: "the server lists no model in /v1/models: give --model NAME", for each.
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!(
                "GET http://127.0.0.1:{port}/v1/models answered {words}"
            )),
            "{status}: {err}"
        );
        assert!(err.contains("give --model NAME"), "{err}");
        assert!(!err.contains("lists no model"), "{err}");
    }
    // The URL already ends in /v1: servebench asked for /v1/v1/models.
    let port = answering(
        "404 Not Found",
        "application/json",
        b"{\"detail\":\"Not Found\"}",
    );
    let (code, err) = probe(&format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "the URL ends in `/v1`, and servebench adds `/v1/…` itself: give `http://127.0.0.1:{port}`"
        )),
        "{err}"
    );
}

#[test]
fn a_negative_margin_reaches_the_margins_own_check() {
    let spec = repo().join("crates/cli/tests/specs/tiny-ab.yaml");
    let o = sb(Path::new("."))
        .arg("plan")
        .arg(&spec)
        .args([
            "--fail-on",
            "not-shown-non-inferior",
            "--gate-margin",
            "-0.05",
        ])
        .output()
        .expect("plan");
    let err = String::from_utf8_lossy(&o.stderr);
    // Before: "unexpected argument '-0' found" (clap read the value as a short flag).
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--gate-margin -0.05: the margin is a fraction in (0, 1)"),
        "{err}"
    );
}

#[test]
fn fail_on_none_beside_a_condition_is_refused() {
    let spec = repo().join("crates/cli/tests/specs/tiny-ab.yaml");
    let o = sb(Path::new("."))
        .arg("plan")
        .arg(&spec)
        .args(["--fail-on", "none,regressed"])
        .output()
        .expect("plan");
    let err = String::from_utf8_lossy(&o.stderr);
    // Before: accepted, the gate on `regressed` as if `none` were not there.
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--fail-on holds `none` beside regressed: `none` turns the gate off"),
        "{err}"
    );
    let o = sb(Path::new("."))
        .arg("plan")
        .arg(&spec)
        .args(["--fail-on", "none"])
        .output()
        .expect("plan");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_binary_spec_a_window_with_no_request_and_max_tokens_0_are_said_for_what_they_are() {
    let dir = scratch("refusals", "validate");
    std::fs::write(dir.join("logo.yaml"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0").expect("png");
    let o = sb(&dir)
        .args(["validate", "logo.yaml"])
        .output()
        .expect("validate");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the file is not text: byte 0 (line 1, column 1) is 0x89"),
        "{err}"
    );
    let spec = |dataset: &str| {
        format!(
            "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {{name: r}}\nspec:\n  \
             target: {{base_url: \"http://127.0.0.1:9\", model: m}}\n  variants: [{{name: a, \
             baseline: true}}]\n  workload:\n    dataset: {dataset}\n"
        )
    };
    std::fs::write(
        dir.join("t.jsonl"),
        "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n\
         {\"timestamp\": 1000, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    )
    .expect("trace");
    std::fs::write(
        dir.join("late.yaml"),
        spec("{kind: trace, path: t.jsonl, trace: {start: 60s}}"),
    )
    .expect("spec");
    let o = sb(&dir)
        .args(["validate", "late.yaml"])
        .output()
        .expect("validate");
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // Before: "invalid length distribution the trace window (start 60s, …) holds no request".
    assert!(
        out.contains("`trace.start` is 60 s, after the last request")
            && !out.contains("invalid length distribution"),
        "{out}"
    );
    std::fs::write(
        dir.join("p.jsonl"),
        "{\"prompt\": \"hi\", \"max_tokens\": 0}\n",
    )
    .expect("p");
    std::fs::write(
        dir.join("zero.yaml"),
        spec("{kind: jsonl, path: p.jsonl}\n    requests: 1"),
    )
    .expect("spec");
    let o = sb(&dir)
        .args(["validate", "zero.yaml"])
        .output()
        .expect("validate");
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("p.jsonl:1") && out.contains("`max_tokens` is 0"),
        "{out}"
    );
}

#[test]
fn a_result_whose_host_probe_is_no_measurement_is_refused_with_its_key() {
    let dir = scratch("refusals", "host_probe");
    let fixture =
        crate::common::walk(&repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun"))
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .expect("a published result");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("read")).expect("json");
    let probe = serde_json::json!({"version": 1, "scope": "client-host", "single_thread": 400.0,
        "all_core": 1600.0, "threads": 4, "memory_gbps": 10.0, "took_s": 1.0});
    for (field, value, words) in [
        // Before: compared as a measurement, without a word.
        (
            "single_thread",
            serde_json::json!(0.0),
            "`host_probe.single_thread` is 0: a figure of the host probe is a rate above 0",
        ),
        // Before: "invalid type: string \"fast\", expected f64 at line 1 column …", no key.
        (
            "all_core",
            serde_json::json!("fast"),
            "at `host_probe.all_core`: invalid type: string \"fast\"",
        ),
    ] {
        let mut p = probe.clone();
        p[field] = value;
        r["host_probe"] = p;
        std::fs::write(dir.join("r.json"), r.to_string()).expect("write");
        let o = sb(&dir)
            .args(["compare", "r.json"])
            .output()
            .expect("compare");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(words), "{err}");
    }
}
