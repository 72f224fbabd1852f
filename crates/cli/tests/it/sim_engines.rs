//! `servebench sim --engine …` from the command line: the stdout contract (one listening
//! line), the engine's start-up lines on stderr, one of its endpoints, a clean SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `servebench sim` child, its stderr lines as they come, its base URL.
struct Sim {
    child: Child,
    stderr: mpsc::Receiver<String>,
    addr: String,
    stdout: BufReader<std::process::ChildStdout>,
}

fn sim(args: &[&str]) -> Sim {
    let mut child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("sim")
        .args(["--preset", "fast"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start servebench sim");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let (tx, stderr) = mpsc::channel();
    let err = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut line = String::new();
    stdout.read_line(&mut line).expect("listening line");
    let addr = line
        .trim()
        .strip_prefix("servebench sim listening on http://")
        .unwrap_or_else(|| panic!("stdout: {line:?}"))
        .to_owned();
    Sim {
        child,
        stderr,
        addr,
        stdout,
    }
}

impl Sim {
    /// The first stderr line containing `needle`, within 10 s.
    fn stderr_line(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(l) if l.contains(needle) => return l,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        panic!("no stderr line with {needle:?}");
    }

    /// `GET path` over a plain HTTP/1.0 connection: (status, body).
    fn get(&self, path: &str) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr).expect("write");
        let mut resp = String::new();
        s.read_to_string(&mut resp).expect("read");
        let status = resp
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = resp.split_once("\r\n\r\n").map(|(_, b)| b.to_owned());
        (status, body.unwrap_or_default())
    }

    /// SIGTERM; the exit status and what stdout printed after the listening line.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(killed.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let status = self.child.wait().expect("wait");
        let mut rest = String::new();
        let _ = self.stdout.read_to_string(&mut rest);
        (status, rest)
    }
}

#[test]
fn sim_as_sglang_logs_server_args_in_both_forms_and_serves_server_info() {
    for (form, needle) in [
        ("dict", "'moe_runner_backend': 'flashinfer_cutedsl'"),
        ("dataclass", "moe_runner_backend='flashinfer_cutedsl'"),
    ] {
        let s = sim(&[
            "--engine",
            "sglang",
            "--sglang-log-form",
            form,
            "--served-model-name",
            "glm-5",
            "--moe-runner-backend",
            "flashinfer_cutedsl",
        ]);
        let start = s.stderr_line("servebench sim: start ");
        assert!(
            start.contains(" engine=sglang moe_backend=flashinfer_cutedsl "),
            "{start}"
        );
        let args = s.stderr_line("server_args=");
        assert!(args.contains(needle), "{form}: {args}");
        let (code, body) = s.get("/server_info");
        assert_eq!(code, 200, "{body}");
        assert!(
            body.contains(r#""moe_runner_backend":"flashinfer_cutedsl""#),
            "{body}"
        );
        assert!(body.contains(r#""served_model_name":"glm-5""#), "{body}");
        let (status, rest) = s.stop();
        assert!(status.success(), "{status:?}");
        assert_eq!(rest, "", "stdout carries one line only");
    }
}

#[test]
fn sim_as_vllm_logs_non_default_args_on_the_head_and_the_backend_on_a_worker() {
    let head = sim(&["--engine", "vllm", "--moe-backend", "flashinfer_cutedsl"]);
    let l = head.stderr_line("non-default args:");
    assert!(l.contains("'moe_backend': 'flashinfer_cutedsl'"), "{l}");
    head.stderr_line("Using 'FLASHINFER_CUTEDSL' NvFp4 MoE backend");
    let (code, body) = head.get("/version");
    assert_eq!((code, body.as_str()), (200, r#"{"version":"0.33.0"}"#));
    let (status, _) = head.stop();
    assert!(status.success(), "{status:?}");
    // A headless rank: the worker's line only, on stdout after its start line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "sim",
            "--worker",
            "--engine",
            "vllm",
            "--moe-backend",
            "flashinfer_cutedsl",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("worker");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines = vec![String::new(), String::new()];
    for l in &mut lines {
        out.read_line(l).expect("line");
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    assert!(
        lines[0].starts_with("servebench sim worker: start "),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("Using 'FLASHINFER_CUTEDSL' NvFp4 MoE backend"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("non-default args")),
        "{lines:?}"
    );
}
