//! `servebench probe URL [--model M] [--spec SPEC] [--json]`: a pre-flight of a running
//! endpoint — the engine and its version, and every guarantee a spec relies on, each holding,
//! failing or not available, with what to set.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use servebench_engines::Engine;
use servebench_result::checks::{CheckOutcome, CheckRecord};
use servebench_runner::engine::Endpoint;
use servebench_runner::engine::probe::{ProbeOptions, ProbeReport, probe};
use servebench_runner::loadgen::ApiKind;
use servebench_spec::substitute::{Context, resolve};

use crate::exit::Exit;

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server's base URL, e.g. `http://127.0.0.1:8000` (no `/v1`).
    url: String,
    /// The model requests name (default: the spec's `target.model`, else the only model the
    /// server lists).
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// The spec whose guarantees are checked: its workload (`ignore_eos`, `send_min_tokens`),
    /// `target` (API, tokenizer, engine, headers, API key) and verify rules (checked once per
    /// variant: they must hold for exactly one).
    #[arg(long, value_name = "SPEC")]
    spec: Option<PathBuf>,
    /// The API of the generation requests (default: the spec's, else `openai-completions`).
    #[arg(long, value_name = "API", value_parser = ["openai-completions", "openai-chat"])]
    api: Option<String>,
    /// The engine whose profile is used (default: the spec's `target.engine`, else `auto`:
    /// detected from what the server answers).
    #[arg(long, value_name = "ENGINE")]
    engine: Option<Engine>,
    /// The server's log file, for the spec's `log_contains` rules.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Output tokens asked of the generation request (the length check asks N, expects N).
    #[arg(long, value_name = "N", default_value_t = 16)]
    output_tokens: u32,
    /// A PEM file of CA certificates to trust for an `https://` URL (default: the spec's
    /// `target.tls.ca_file`).
    #[arg(long, value_name = "PEM")]
    ca_file: Option<PathBuf>,
    /// The longest any one step waits on the server, in seconds: the generation request
    /// (a stream that stalls or never ends is cut there), the tokenizer, the context limit,
    /// the verify rules, the metrics.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    deadline: f64,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Probe; exit 1 when a guarantee the spec needs fails or nothing answers.
pub(crate) fn run(args: Args) -> Result<Exit> {
    if !(args.deadline.is_finite() && args.deadline > 0.0 && args.deadline <= 86_400.0) {
        bail!(
            "--deadline {}: give the seconds a step may wait, more than 0 and at most 86400 \
             (e.g. --deadline 30, the default)",
            args.deadline
        );
    }
    if args.output_tokens < 2 {
        bail!("--output-tokens must be at least 2 (a length check of 1 token proves little)");
    }
    let spec = match &args.spec {
        Some(p) => match super::load_spec(p)? {
            Some(s) => Some(s),
            None => return Ok(Exit::Failed),
        },
        None => None,
    };
    let spec_dir = args
        .spec
        .as_deref()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let target = spec.as_ref().map(|s| &s.file.spec.target);
    let api = match args.api.as_deref() {
        Some("openai-chat") => ApiKind::Chat,
        Some(_) => ApiKind::Completions,
        None => target.map_or(ApiKind::Completions, |t| {
            servebench_runner::run::api_kind(t.api)
        }),
    };
    let engine = args
        .engine
        .or(target.map(|t| t.engine))
        .unwrap_or(Engine::Auto);
    let api_key = match target.and_then(|t| t.api_key_env.as_ref()) {
        Some(name) => Some(std::env::var(name).with_context(|| {
            format!(
                "the spec reads its API key from `{name}` (target.api_key_env), which is not set"
            )
        })?),
        None => None,
    };
    let mut headers = Vec::new();
    for (k, v) in target.map(|t| &t.headers).into_iter().flatten() {
        let env = Context {
            env: true,
            ..Context::default()
        };
        let v = resolve(v, &env).with_context(|| format!("target.headers.{k}"))?;
        headers.push((k.clone(), v));
    }
    let ca_file = args.ca_file.clone().or_else(|| {
        target
            .and_then(|t| t.tls.as_ref())
            .and_then(|t| t.ca_file.as_ref())
            .map(|f| spec_dir.join(f))
    });
    let opts = ProbeOptions {
        endpoint: Endpoint {
            base_url: args.url.trim_end_matches('/').to_owned(),
            ca_file,
            api_key,
            headers,
        },
        model: args.model.clone(),
        api,
        engine,
        spec: spec.map(|s| s.file),
        spec_dir,
        log: args.log.clone(),
        output_tokens: args.output_tokens,
        deadline: std::time::Duration::from_secs_f64(args.deadline),
        progress: !args.json,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = match rt.block_on(probe(&opts)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "servebench probe: {}",
                servebench_spec::text::printable(&e.to_string())
            );
            return Ok(Exit::Failed);
        }
    };
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("needed_fails".into(), report.needed_fails().into());
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", servebench_spec::text::printable(&render(&report)));
    }
    Ok(if report.needed_fails() {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

/// The report as a table: guarantee, outcome, what was seen; what to set below a row that
/// does not hold. A `*` marks the guarantees the spec needs.
fn render(r: &ProbeReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "probe of {} (model `{}`)", r.base_url, r.model);
    let _ = writeln!(out, "engine: {}\n", r.engine.describe());
    let _ = writeln!(out, "  {:<28} {:<14} what was seen", "guarantee", "outcome");
    for c in &r.checks {
        let _ = writeln!(out, "{}", row(c));
        if let Some(set) = c
            .set
            .as_deref()
            .filter(|_| c.outcome != CheckOutcome::Holds)
        {
            let _ = writeln!(out, "  {:<28} {:<14} set: {set}", "", "");
        }
    }
    let _ = writeln!(
        out,
        "\n{}",
        if r.spec_given {
            "* the spec relies on it"
        } else {
            "* a run with servebench's defaults relies on it (no --spec given: give one to \
             check what it relies on)"
        }
    );
    let whose = if r.spec_given {
        "the spec"
    } else {
        "a run with servebench's defaults"
    };
    if r.needed_fails() {
        let failed: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| c.is_blocking())
            .map(|c| c.guarantee.label())
            .collect();
        let _ = writeln!(
            out,
            "FAILED: {} — {whose} would not measure what it says",
            failed.join(", ")
        );
    } else {
        let _ = writeln!(out, "every guarantee {whose} relies on holds");
    }
    out
}

fn row(c: &CheckRecord) -> String {
    let mark = if c.needed { "*" } else { " " };
    format!(
        "{mark} {:<28} {:<14} {}",
        c.guarantee.label(),
        c.outcome.label(),
        c.detail
    )
}
