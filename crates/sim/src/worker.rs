//! `servebench sim --worker`: a worker rank of a multi-node server, for servebench's Slurm
//! tests. A real engine's follower (SGLang `--node-rank 1`, vLLM `--headless`) serves no HTTP,
//! runs as long as the head does and dies when the head dies; this one does the same without
//! a GPU: it binds nothing, prints one start line (with the label, so verify rules can read
//! every rank's log), and watches the head's `/health`.

use std::future::Future;
use std::io::Write;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{SimArgs, SimError};

/// Time between two looks at the head.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);
/// Failed looks in a row, after the head answered once, that mean it is gone.
const FAILURES_TO_GIVE_UP: u32 = 4;
/// Longest a look may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs a worker until `shutdown` resolves (`Ok`) or the head goes away
/// (`Err(SimError::HeadGone)`). Writes its start line to `out`.
pub(crate) async fn run_worker<W, F>(
    args: &SimArgs,
    engine_lines: &[String],
    out: &mut W,
    shutdown: F,
) -> Result<(), SimError>
where
    W: Write,
    F: Future<Output = ()>,
{
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| "-".into());
    writeln!(
        out,
        "servebench sim worker: start version={} label={} model={} rank={} node={} head={}",
        crate::VERSION,
        args.label,
        args.model,
        env("SLURM_PROCID"),
        env("SLURMD_NODENAME"),
        args.head_url.as_deref().unwrap_or("-"),
    )
    .and_then(|()| {
        // The engine personality's lines of a worker rank (vLLM's MoE backend line).
        for line in engine_lines {
            writeln!(out, "{line}")?;
        }
        out.flush()
    })
    .map_err(SimError::Stdout)?;
    let Some(url) = args.head_url.clone() else {
        shutdown.await;
        return Ok(());
    };
    tokio::pin!(shutdown);
    let mut answered = false;
    let mut failures = 0;
    loop {
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            () = tokio::time::sleep(WATCH_INTERVAL) => {}
        }
        match health(&url).await {
            Ok(()) => {
                if !answered {
                    let _ = writeln!(out, "servebench sim worker: the head at {url} answers");
                    let _ = out.flush();
                }
                answered = true;
                failures = 0;
            }
            Err(detail) if answered => {
                failures += 1;
                if failures >= FAILURES_TO_GIVE_UP {
                    return Err(SimError::HeadGone { url, detail });
                }
            }
            Err(_) => {}
        }
    }
}

/// `GET {url}/health` over HTTP/1.0: `Ok` on a 2xx status.
async fn health(url: &str) -> Result<(), String> {
    let authority = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url} is not an http:// URL"))?
        .trim_end_matches('/');
    let look = async {
        let mut s = TcpStream::connect(authority)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let req = format!("GET /health HTTP/1.0\r\nHost: {authority}\r\n\r\n");
        s.write_all(req.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut head = [0u8; 16];
        let n = s.read(&mut head).await.map_err(|e| format!("read: {e}"))?;
        let line = String::from_utf8_lossy(&head[..n]).into_owned();
        match line.split_whitespace().nth(1) {
            Some(code) if code.starts_with('2') => Ok(()),
            _ => Err(format!("answer {line:?}")),
        }
    };
    tokio::time::timeout(PROBE_TIMEOUT, look)
        .await
        .unwrap_or_else(|_| Err("no answer in 2 s".into()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    fn parse(args: &[&str]) -> SimArgs {
        Cli::try_parse_from(std::iter::once("sim").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{e}"))
            .sim
    }

    #[tokio::test]
    async fn a_worker_without_a_head_stops_on_shutdown() {
        let args = parse(&["--worker", "--label", "cutlass"]);
        let mut out = Vec::new();
        run_worker(&args, &[], &mut out, async {})
            .await
            .expect("ok");
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.contains("label=cutlass"), "{text}");
    }

    #[tokio::test]
    async fn a_worker_ends_when_its_head_goes_away() {
        let head = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", head.local_addr().expect("addr"));
        // The head answers two looks, then closes its socket.
        let server = tokio::spawn(async move {
            for _ in 0..2 {
                let (mut s, _) = head.accept().await.expect("accept");
                let mut buf = [0u8; 256];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\n").await;
            }
        });
        let args = parse(&["--worker", "--head-url", &url]);
        let mut out = Vec::new();
        let never = std::future::pending::<()>();
        let r = tokio::time::timeout(
            Duration::from_secs(20),
            run_worker(&args, &[], &mut out, never),
        )
        .await
        .expect("the worker gave up within 20 s");
        server.await.expect("head task");
        match r {
            Err(SimError::HeadGone { url: u, .. }) => assert_eq!(u, url),
            other => panic!("expected HeadGone, got {other:?}"),
        }
        let text = String::from_utf8(out).expect("utf8");
        assert!(text.contains("answers"), "{text}");
    }
}
