//! SSE event rate: the simulator in zero-delay mode against a bare axum server that streams
//! the same events, each on one core (a current-thread tokio runtime, pinned with `taskset`
//! when available), counted by a raw-socket client in another process on another core.
//!
//! `cargo bench -p servebench-sim --bench sse_rate -- [--secs S] [--conns C] [--tokens N]
//! [--rounds R] [--server-cpu X] [--client-cpu Y]`. Rounds alternate which server goes
//! first, and each pair is compared: the verdict is the median of the per-round ratios of
//! wall-clock event rates (best and median rates are printed too). Each measurement also
//! shows how much of the window the server spent on its CPU and how long it waited,
//! runnable, for it (from `/proc/PID/task/*/schedstat`): on a shared machine other work
//! takes the core away at times, and the wait column says which rounds were disturbed.
//! Exits 1 when the simulator reaches < 90% of the bare server's rate.

mod bare;
mod client;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use servebench_sim::{Preset, SimConfig};

#[derive(Debug, Clone)]
struct Opts {
    secs: f64,
    warmup: f64,
    conns: usize,
    tokens: u32,
    rounds: usize,
    server_cpu: String,
    client_cpu: String,
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        secs: 3.0,
        warmup: 0.5,
        conns: 64,
        tokens: 2000,
        rounds: 5,
        server_cpu: "0".into(),
        client_cpu: "1".into(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--secs" => o.secs = val().parse().unwrap_or(o.secs),
            "--warmup" => o.warmup = val().parse().unwrap_or(o.warmup),
            "--conns" => o.conns = val().parse().unwrap_or(o.conns),
            "--tokens" => o.tokens = val().parse().unwrap_or(o.tokens),
            "--rounds" => o.rounds = val().parse().unwrap_or(o.rounds),
            "--server-cpu" => o.server_cpu = val(),
            "--client-cpu" => o.client_cpu = val(),
            _ => {} // `--bench` from cargo, and anything else
        }
    }
    o
}

fn one_core_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn serve_sim() {
    one_core_runtime().block_on(async {
        let _ = servebench_sim::raise_nofile_limit();
        let h = servebench_sim::spawn(SimConfig::from_preset(Preset::ZeroDelay))
            .await
            .unwrap_or_else(|e| panic!("sim: {e}"));
        println!("{}", h.addr());
        std::future::pending::<()>().await;
    });
}

fn serve_bare() {
    one_core_runtime().block_on(async {
        let _ = servebench_sim::raise_nofile_limit();
        if let Err(e) = bare::serve().await {
            panic!("bare: {e}");
        }
    });
}

fn run_client(addr: &str, o: &Opts) {
    let addr: SocketAddr = addr
        .parse()
        .unwrap_or_else(|e| panic!("address {addr}: {e}"));
    let _ = servebench_sim::raise_nofile_limit();
    let (events, secs) = one_core_runtime().block_on(client::run(
        addr,
        o.conns,
        o.tokens,
        Duration::from_secs_f64(o.warmup),
        Duration::from_secs_f64(o.secs),
    ));
    println!("events={events} secs={secs:.4}");
}

/// `exe args…`, under `taskset -c cpu` when taskset exists.
fn command(cpu: &str, args: &[&str]) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let pinned = Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    let mut c = if pinned {
        let mut c = Command::new("taskset");
        c.arg("-c").arg(cpu).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    c.args(args);
    c
}

fn first_line(child: &mut Child) -> String {
    let out = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("child stdout"));
    let mut line = String::new();
    let _ = BufReader::new(out).read_line(&mut line);
    line.trim().to_owned()
}

/// (on-CPU ns, runnable-but-waiting ns) of all threads of `pid`.
fn cpu_ns(pid: u32) -> (u64, u64) {
    let mut total = (0, 0);
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return total;
    };
    for t in tasks.flatten() {
        let stat = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        let mut f = stat
            .split_whitespace()
            .map(|x| x.parse::<u64>().unwrap_or(0));
        total.0 += f.next().unwrap_or(0);
        total.1 += f.next().unwrap_or(0);
    }
    total
}

#[derive(Debug, Clone, Copy)]
struct Measurement {
    /// Events per wall-clock second.
    wall_rate: f64,
    /// Share of the window the server spent on a CPU.
    cpu_share: f64,
    /// Share of the window the server was runnable but waited for its CPU.
    waited: f64,
}

/// Starts `mode`'s server, measures it with a client process, stops it.
fn measure(mode: &str, o: &Opts, extra: &[String]) -> Measurement {
    let mut server = command(&o.server_cpu, &[mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn server: {e}"));
    let addr = first_line(&mut server);
    let start = (std::time::Instant::now(), cpu_ns(server.id()));
    let mut args: Vec<&str> = vec!["client", &addr];
    args.extend(extra.iter().map(String::as_str));
    let mut client = command(&o.client_cpu, &args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn client: {e}"));
    let result = first_line(&mut client);
    let (elapsed, end) = (start.0.elapsed().as_nanos() as f64, cpu_ns(server.id()));
    let _ = client.kill();
    let _ = client.wait();
    let _ = server.kill();
    let _ = server.wait();
    let field = |k: &str| -> f64 {
        result
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("bad client output {result:?}"))
    };
    let (cpu, waited) = ((end.0 - start.1.0) as f64, (end.1 - start.1.1) as f64);
    Measurement {
        wall_rate: field("events=") / field("secs="),
        cpu_share: cpu / elapsed,
        waited: waited / elapsed,
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve-sim") => return serve_sim(),
        Some("serve-bare") => return serve_bare(),
        Some("client") => {
            return run_client(
                args.get(1).map_or("", String::as_str),
                &parse_opts(&args[2..]),
            );
        }
        _ => {}
    }
    let o = parse_opts(&args);
    let extra: Vec<String> = vec![
        "--secs".into(),
        o.secs.to_string(),
        "--warmup".into(),
        o.warmup.to_string(),
        "--conns".into(),
        o.conns.to_string(),
        "--tokens".into(),
        o.tokens.to_string(),
    ];
    println!(
        "sse_rate: {} connections, {} tokens per request, {} s per measurement, {} rounds, \
         server on cpu {}, client on cpu {}",
        o.conns, o.tokens, o.secs, o.rounds, o.server_cpu, o.client_cpu
    );
    let (mut bare, mut sim) = (Vec::new(), Vec::new());
    for round in 0..o.rounds {
        let order = if round % 2 == 0 {
            ["serve-bare", "serve-sim"]
        } else {
            ["serve-sim", "serve-bare"]
        };
        for mode in order {
            let m = measure(mode, &o, &extra);
            println!(
                "round {}: {:<14} {:>8.0} events/s   (server on its cpu {:>3.0}% of the time, waited {:>2.0}%)",
                round + 1,
                if mode == "serve-bare" {
                    "bare axum"
                } else {
                    "servebench-sim"
                },
                m.wall_rate,
                m.cpu_share * 100.0,
                m.waited * 100.0,
            );
            if mode == "serve-bare" {
                bare.push(m)
            } else {
                sim.push(m)
            }
        }
    }
    let rates = |v: &[Measurement]| v.iter().map(|m| m.wall_rate).collect::<Vec<f64>>();
    let (b, sm) = (rates(&bare), rates(&sim));
    let ratios: Vec<f64> = sm.iter().zip(&b).map(|(s, b)| s / b).collect();
    println!(
        "bare axum SSE server:      best {:.0} events/s, median {:.0}",
        best(&b),
        median(&b)
    );
    println!(
        "servebench-sim zero-delay: best {:.0} events/s, median {:.0}",
        best(&sm),
        median(&sm)
    );
    println!(
        "ratio sim/bare: best rates {:.3}, median rates {:.3}",
        best(&sm) / best(&b),
        median(&sm) / median(&b)
    );
    let ratio = median(&ratios);
    let verdict = if ratio >= 0.9 { "PASS" } else { "FAIL" };
    println!("ratio sim/bare, median of round ratios: {ratio:.3} (required >= 0.90): {verdict}");
    if ratio < 0.9 {
        std::process::exit(1);
    }
}
