//! Load-generator benchmark: the client's own CPU time per streamed token event, 10,000
//! concurrent streams, and what the client adds to TTFT, against the simulator running in a
//! separate process (so `getrusage(RUSAGE_SELF)` of the client measures the client alone).
//!
//! ```text
//! loadgen_bench sim --mode zero|paced|c10k|wide [--step-ms MS] [--port P]
//!     [--front tcp|tls --ca-out PATH]
//!     serves the simulator (current-thread runtime) until SIGTERM/SIGINT; prints
//!     "servebench sim listening on http://HOST:PORT"; `--front` puts a proxy in front of it
//!     in the same process (`front.rs`): a TCP relay, or TLS terminated with a certificate
//!     whose CA's PEM is written to PATH (then the URL printed is https://)
//! loadgen_bench client --url URL [--requests N] [--concurrency C] [--input-tokens I]
//!     [--output-tokens O] [--output-spread S] [--warmup W] [--ca-file PATH]
//!     [--raw | --reqwest | --user-clock]
//!     runs one trial on a current-thread runtime and prints the figures; `--reqwest` uses
//!     the reqwest executor instead of the lean one; `--user-clock` dates reads by the clock
//!     instead of the kernel's receive stamp; `--raw` sends the same requests through
//!     the minimal reference client of `raw.rs` instead
//! ```
//!
//! `bench/loadgen.sh` runs the three scenarios with client and simulator pinned to one core
//! each; `docs/performance.md` records the results.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use servebench_runner::dataset::{
    LengthDist, RandomDataset, RandomPromptBuilder, ServerTokenizer, TokenizeStyle,
};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, raise_open_file_limit, run_trial};
use servebench_sim::{Preset, SimConfig};

mod front;
mod raw;

type BoxError = Box<dyn std::error::Error>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sim") => run_sim(&args[1..]),
        Some("client") => run_client(&args[1..]),
        _ => Err("usage: loadgen_bench sim --mode zero|paced|c10k | client --url URL ...".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` lookup.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn num<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T, BoxError> {
    match flag(args, name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("{name}: not a number: {v}").into()),
    }
}

fn current_thread() -> Result<tokio::runtime::Runtime, BoxError> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// The simulator configurations of the three scenarios.
fn sim_config(mode: &str, port: u16, step_ms: f64) -> Result<SimConfig, BoxError> {
    let mut c = match mode {
        // Tokens as fast as the HTTP stack takes them.
        "zero" => SimConfig::from_preset(Preset::ZeroDelay),
        // 10 ms decode steps whatever the batch, no noise; prefill is free, so the engine's
        // TTFT is one to two steps.
        "paced" | "c10k" | "wide" => {
            let mut c = SimConfig::from_preset(Preset::Default);
            let e = &mut c.engine;
            e.decode_base_ms = 10.0;
            e.decode_per_seq_ms = 0.0;
            e.prefill_ms_per_token = 0.0;
            e.jitter_cv = 0.0;
            e.speed_cv = 0.0;
            if mode == "wide" {
                // Every stream admitted at once (up to 16,384), one token per stream each
                // `--step-ms` (default 10): the same per-stream event rate at any
                // concurrency, for client CPU per event at c=64 against c=1024.
                e.max_num_seqs = 16_384;
                e.max_batched_tokens = 1 << 22;
                e.kv_capacity_tokens = 1 << 30;
                e.decode_base_ms = step_ms;
            }
            if mode == "c10k" {
                // Every stream admitted at once, one token per 250 ms: 10,000 streams stay
                // open together for seconds at ~40,000 events/s.
                e.max_num_seqs = 16_384;
                e.max_batched_tokens = 1 << 22;
                e.kv_capacity_tokens = 1 << 30;
                e.decode_base_ms = 250.0;
            }
            c
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    c.port = port;
    Ok(c)
}

fn run_sim(args: &[String]) -> Result<(), BoxError> {
    let mode = flag(args, "--mode").unwrap_or("zero");
    let config = sim_config(
        mode,
        num(args, "--port", 0u16)?,
        num(args, "--step-ms", 10.0)?,
    )?;
    current_thread()?.block_on(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        let Some(front) = flag(args, "--front") else {
            servebench_sim::run_until(config, &mut std::io::stdout(), shutdown).await?;
            return Ok(());
        };
        let handle = servebench_sim::spawn(config).await?;
        let (tls, scheme) = match front {
            "tcp" => (None, "http"),
            "tls" => {
                let (server, ca_pem) = front::pki()?;
                std::fs::write(
                    flag(args, "--ca-out").ok_or("--ca-out is required")?,
                    ca_pem,
                )?;
                (Some(server), "https")
            }
            other => return Err(format!("--front: tcp or tls, not {other}").into()),
        };
        let addr = front::serve(handle.addr(), tls).await?;
        println!("servebench sim listening on {scheme}://{addr}");
        shutdown.await;
        Ok(())
    })
}

/// User + system CPU time of this process.
fn cpu_time() -> Result<Duration, BoxError> {
    let u = getrusage(UsageWho::RUSAGE_SELF)?;
    let tv = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    Ok(tv(u.user_time()) + tv(u.system_time()))
}

fn run_client(args: &[String]) -> Result<(), BoxError> {
    let url = flag(args, "--url").ok_or("--url is required")?.to_owned();
    let requests: usize = num(args, "--requests", 2000)?;
    let concurrency: usize = num(args, "--concurrency", 64)?;
    let input: u32 = num(args, "--input-tokens", 32)?;
    let output: u32 = num(args, "--output-tokens", 256)?;
    let warmup: usize = num(args, "--warmup", concurrency.min(64))?;
    let spread: u32 = num(args, "--output-spread", 0)?;
    let nofile = raise_open_file_limit()?;
    current_thread()?.block_on(async move {
        let ca_file = flag(args, "--ca-file").map(std::path::PathBuf::from);
        let mut tokenizer = ServerTokenizer::new(&url, "/tokenize", None, None, TokenizeStyle::Prompt)?;
        tokenizer.set_ca_file(ca_file.as_deref())?;
        let spec = RandomDataset {
            input_tokens: LengthDist::Fixed { tokens: input },
            // `--output-spread S`: uniform in [O − S, O + S], so closed-loop waves desynchronise.
            output_tokens: match spread {
                0 => LengthDist::Fixed { tokens: output },
                s => LengthDist::Uniform { min: output.saturating_sub(s).max(1), max: output + s },
            },
            chat: false,
        };
        let mut builder = RandomPromptBuilder::new(spec, tokenizer)?;
        let prompts = builder.trial_prompts(requests, warmup, 1, 1, 0).await?;
        let target = Target {
            base_url: url.clone(),
            api: ApiKind::Completions,
            model: "sim-model".into(),
            api_key: None,
            headers: Vec::new(),
            ca_file: ca_file.clone(),
        };
        let mut cfg = LoadConfig::new(requests);
        cfg.max_concurrency = Some(concurrency);
        cfg.warmup_requests = warmup;
        cfg.request_timeout = Duration::from_secs(300);
        cfg.trial_deadline = Some(Duration::from_secs(570));
        if args.iter().any(|a| a == "--reqwest") {
            cfg.transport = servebench_runner::loadgen::Transport::Reqwest;
        }
        // `--user-clock`: date reads by a clock reading after the read, not by the kernel's
        // receive stamp.
        cfg.kernel_receive_stamps = !args.iter().any(|a| a == "--user-clock");
        if args.iter().any(|a| a == "--raw") {
            let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse()?;
            let body = |p| servebench_runner::loadgen::body::build_body(&target, &cfg, p, 0);
            let warm: Vec<_> = prompts.warmup.iter().map(body).collect::<Result<_, _>>()?;
            let measured: Vec<_> = prompts.measured.iter().map(body).collect::<Result<_, _>>()?;
            raw::run(addr, warm, concurrency).await?;
            let n = measured.len();
            let cpu0 = cpu_time()?;
            let o = raw::run(addr, measured, concurrency).await?;
            // Every request streams `output` tokens (fixed lengths, no faults): CPU a token
            // event of the measured phase.
            if spread == 0 {
                let cpu = cpu_time()? - cpu0;
                println!(
                    "raw_client client_cpu_us_per_event={:.3}",
                    cpu.as_secs_f64() * 1e6 / (n as f64 * f64::from(output)).max(1.0)
                );
            }
            let o = servebench_result::metrics::LatencyStats::from_values(o).ok_or("no result")?;
            println!(
                "raw_client ttft_overhead_ms mean={:.3} p50={:.3} p90={:.3} p99={:.3} max={:.3} n={}",
                o.mean, o.p50, o.p90, o.p99, o.max, o.count
            );
            return Ok(());
        }

        let (cpu0, wall0) = (cpu_time()?, Instant::now());
        let out = run_trial(&target, &cfg, &prompts).await?;
        let (cpu, wall) = (cpu_time()? - cpu0, wall0.elapsed());

        let all = out.records.iter().chain(&out.warmup_records);
        let events: usize = all.clone().map(|r| r.events.len()).sum();
        let failed_warmup = out.warmup_records.iter().filter(|r| r.error.is_some()).count();
        let s = &out.summary;
        let tls = servebench_runner::tls::client_config(ca_file.as_deref())?;
        let stats_client = reqwest::Client::builder()
            .tls_backend_preconfigured(rustls::ClientConfig::clone(&tls))
            .build()?;
        let sim_stats: serde_json::Value =
            stats_client.get(format!("{url}/v1/sim/stats")).send().await?.json().await?;
        let ms = |name: &str| s.metric(name).map_or("-".to_owned(), |v| format!("{v:.3}"));
        println!("open_file_limit={nofile}");
        println!(
            "requests={} warmup={} concurrency={} input_tokens={} output_tokens={}",
            requests, warmup, concurrency, input, output
        );
        println!(
            "completed={} errors={:?} flags={:?} warmup_failed={}",
            s.all.completed, s.errors, s.flags, failed_warmup
        );
        println!("token_events={events} wall_s={:.3} client_cpu_s={:.3}", wall.as_secs_f64(), cpu.as_secs_f64());
        println!(
            "client_cpu_us_per_event={:.3} events_per_s={:.0}",
            cpu.as_secs_f64() * 1e6 / events.max(1) as f64,
            events as f64 / wall.as_secs_f64()
        );
        println!(
            "ttft_mean_ms={} ttft_p50_ms={} ttft_p99_ms={} tpot_p50_ms={} e2e_p50_ms={} output_throughput={}",
            ms("ttft_mean"),
            ms("ttft_p50"),
            ms("ttft_p99"),
            ms("tpot_p50"),
            ms("e2e_p50"),
            ms("output_throughput")
        );
        // Decomposition: send → response headers (request write, server parse, headers
        // back) and headers → first token, per request, in ms.
        let mut to_headers = Vec::new();
        let mut headers_to_first = Vec::new();
        for r in &out.records {
            if let (Some(sn), Some(h), Some(f)) = (r.send_ns, r.headers_ns, r.events.first()) {
                to_headers.push((h - sn) as f64 / 1e6);
                headers_to_first.push((f.t_ns - h) as f64 / 1e6);
            }
        }
        for (name, v) in [("send_to_headers_ms", to_headers), ("headers_to_first_token_ms", headers_to_first)] {
            if let Some(st) = servebench_result::metrics::LatencyStats::from_values(v) {
                println!("{name} mean={:.3} p50={:.3} p99={:.3} max={:.3}", st.mean, st.p50, st.p99, st.max);
            }
        }
        if let Some(o) = &s.ttft_overhead {
            println!(
                "ttft_overhead_ms mean={:.3} p50={:.3} p90={:.3} p99={:.3} max={:.3} n={}",
                o.mean, o.p50, o.p90, o.p99, o.max, o.count
            );
        }
        if let Some(st) = out.receive_stamps {
            println!("reads_dated_by_kernel={} reads_dated_by_clock={}", st.kernel, st.clock);
            // Reads are counted in the measured phase only: events a read from its records,
            // and the CPU a read on the assumption that warm-up reads cost the same.
            let reads = st.kernel + st.clock;
            let measured: usize = out.records.iter().map(|r| r.events.len()).sum();
            if reads > 0 {
                let per_read = measured as f64 / reads as f64;
                println!(
                    "events_per_read={per_read:.3} client_cpu_us_per_read={:.3}",
                    cpu.as_secs_f64() * 1e6 / events.max(1) as f64 * per_read
                );
            }
        }
        println!(
            "client_peak_concurrency={} sim_max_in_flight={} sim_requests_received={}",
            s.all.peak_concurrency, sim_stats["max_in_flight"], sim_stats["requests_received"]
        );
        Ok(())
    })
}
