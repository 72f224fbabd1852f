//! `https://` targets: the simulator behind a small TLS proxy whose certificate a CA made at
//! test time (rcgen) signed. With `ca_file` a streaming trial succeeds over each transport;
//! without it the trial is refused before the first request, with the message that says
//! what to set. A whole run (`run::run`) is refused before it writes anything, and completes
//! with `tls.ca_file` (relative to the spec file) set.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use servebench_runner::dataset::{
    LengthDist, RandomDataset, RandomPromptBuilder, ServerTokenizer, TokenizeStyle,
};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, Transport, run_trial};
use servebench_sim::{Preset, SimConfig, SimHandle};
use tokio::net::{TcpListener, TcpStream};

/// A CA's PEM certificate and a `ServerConfig` whose certificate (for 127.0.0.1 and
/// `localhost`) it signed.
fn pki() -> (String, Arc<rustls::ServerConfig>) {
    let pki = servebench_sim::TestPki::generate().expect("pki");
    let config = pki.server_config().expect("server config");
    (pki.ca_pem, config)
}

/// A proxy on 127.0.0.1:0 to `upstream`: TLS terminated with `tls`, or plain TCP without.
pub(crate) async fn proxy(
    upstream: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                let Ok(mut server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = server.set_nodelay(true);
                match acceptor {
                    Some(a) => {
                        if let Ok(mut c) = a.accept(client).await {
                            let _ = tokio::io::copy_bidirectional(&mut c, &mut server).await;
                        }
                    }
                    None => {
                        let mut c = client;
                        let _ = tokio::io::copy_bidirectional(&mut c, &mut server).await;
                    }
                }
            });
        }
    });
    addr
}

async fn sim() -> SimHandle {
    servebench_sim::spawn(SimConfig::from_preset(Preset::Fast))
        .await
        .expect("simulator starts")
}

fn target(base_url: String, ca_file: Option<std::path::PathBuf>) -> Target {
    Target {
        base_url,
        api: ApiKind::Completions,
        model: "sim-model".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file,
    }
}

async fn prompts(
    base_url: &str,
    ca_file: &std::path::Path,
    n: usize,
) -> servebench_runner::dataset::TrialPrompts {
    let mut tok =
        ServerTokenizer::new(base_url, "/tokenize", None, None, TokenizeStyle::Auto).expect("URL");
    tok.set_ca_file(Some(ca_file)).expect("CA file");
    let ds = RandomDataset {
        input_tokens: LengthDist::Fixed { tokens: 32 },
        output_tokens: LengthDist::Fixed { tokens: 8 },
        chat: false,
    };
    let mut b = RandomPromptBuilder::new(ds, tok).expect("dataset");
    // /tokenize over https with the CA file.
    b.trial_prompts(n, 2, 7, 1, 0).await.expect("prompts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_streams_over_each_transport_with_ca_file_and_is_refused_without() {
    let s = sim().await;
    let (ca_pem, server) = pki();
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca_pem).expect("write CA");
    let addr = proxy(s.addr(), Some(server)).await;
    let url = format!("https://{addr}");
    let prompts = prompts(&url, &ca_file, 12).await;
    for transport in [Transport::Lean, Transport::Reqwest] {
        let mut cfg = LoadConfig::new(12);
        cfg.max_concurrency = Some(4);
        cfg.warmup_requests = 2;
        cfg.request_timeout = Duration::from_secs(30);
        cfg.transport = transport;

        let out = run_trial(&target(url.clone(), Some(ca_file.clone())), &cfg, &prompts)
            .await
            .expect("the trial runs over TLS");
        let sum = &out.summary;
        assert!(sum.errors.is_empty(), "{transport:?}: {:?}", sum.errors);
        assert_eq!(sum.all.completed, 12, "{transport:?}");
        assert!(
            out.records.iter().all(
                |r| r.usage.as_ref().is_some_and(|u| u.completion_tokens == 8)
                    && !r.events.is_empty()
            ),
            "{transport:?}: every request streamed its 8 tokens"
        );

        let err = run_trial(&target(url.clone(), None), &cfg, &prompts)
            .await
            .expect_err("an untrusted certificate is refused");
        let msg = err.to_string();
        assert!(
            msg.starts_with("the server's certificate is not trusted: ")
                && msg.ends_with("; if it is signed by a private CA, set target.tls.ca_file: PATH"),
            "{transport:?}: {msg}"
        );
    }
    let e = servebench_runner::tls::check(&url, None)
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("unknown issuer"), "{e}");
    servebench_runner::tls::check(&url, Some(&ca_file))
        .await
        .expect("trusted with the CA file");
}

fn run_spec(url: &str, ca_file: Option<&str>) -> String {
    let tls = ca_file.map_or(String::new(), |f| format!("\n    tls: {{ca_file: {f}}}"));
    format!(
        r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: https-target}}
spec:
  target:
    base_url: {url}
    api: openai-completions
    model: sim-model
    tokenizer: server{tls}
  variants:
    - {{name: base, baseline: true}}
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 4}}
    requests: 6
  trials:
    count: 1
"#
    )
}

fn run_options(results: &std::path::Path) -> servebench_runner::run::RunOptions {
    servebench_runner::run::RunOptions {
        results_root: results.to_path_buf(),
        servebench_bin: "/nonexistent/servebench".into(),
        tool: servebench_result::ToolInfo {
            version: "0.0.0".into(),
            git_sha: None,
        },
        resume: None,
        progress: servebench_runner::run::ProgressMode::Quiet,
        cancel: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        sequencer: None,
        search_judge: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_refused_before_anything_is_written_and_runs_with_ca_file() {
    use servebench_runner::run::{RunError, run};
    let s = sim().await;
    let (ca_pem, server) = pki();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ca.pem"), ca_pem).expect("write CA");
    let url = format!("https://{}", proxy(s.addr(), Some(server)).await);

    let results = dir.path().join("results");
    let path = dir.path().join("untrusted.yaml");
    let spec = servebench_spec::parse_str(&run_spec(&url, None), &path.to_string_lossy())
        .expect("a valid spec");
    match run(&spec, &run_options(&results)).await {
        Err(RunError::Setup(msg)) => assert!(
            msg.starts_with("the server's certificate is not trusted: ")
                && msg.ends_with("set target.tls.ca_file: PATH"),
            "{msg}"
        ),
        other => panic!("expected a setup error, got {other:?}"),
    }
    assert!(!results.exists(), "nothing is written before the check");

    let path = dir.path().join("trusted.yaml");
    let text = run_spec(&url, Some("ca.pem"));
    std::fs::write(&path, &text).expect("write spec");
    let mut spec =
        servebench_spec::parse_str(&text, &path.to_string_lossy()).expect("a valid spec");
    spec.path = Some(path.clone());
    let out = run(&spec, &run_options(&results))
        .await
        .expect("the run completes with the CA file");
    let trials = &out.result.trials;
    assert_eq!(trials.len(), 1, "{trials:?}");
    assert!(
        trials
            .iter()
            .all(|t| t.status == servebench_result::TrialStatus::Ok
                && t.errors.is_empty()
                && t.summary.as_ref().is_some_and(|m| m.all.completed == 6)),
        "{trials:?}"
    );
}
