//! SSE event rate: the simulator in zero-delay mode against a bare axum server that streams
//! the same events, counted by a raw-socket client in other processes on another core.
//!
//! `cargo bench -p servebench-sim --bench sse_rate -- [--secs S] [--conns C] [--tokens N]
//! [--rounds R] [--server-cpu X] [--client-cpu Y]`
//!
//! Every server runs a current-thread tokio runtime pinned (with `taskset`, when present)
//! to the server CPU; clients are pinned to the client CPU. Two measurements, R rounds each:
//!
//! * **one core each**: one server at a time, the order alternating between rounds. These
//!   are the rates each server reaches on a core; on a shared machine other work takes the
//!   core away at times, so each line also shows how long the server was on its CPU and how
//!   long it waited, runnable, for it (from `/proc/PID/task/*/schedstat`).
//! * **head to head**: both servers at once on the same core, each with its own client and
//!   the same load. The kernel gives the two busy processes equal CPU time, and whatever
//!   else runs on the machine slows both alike, so the ratio of their rates is the ratio of
//!   their per-event costs, steady even where the one-core rates are noisy.
//!
//! The verdict: the median head-to-head ratio sim/bare must be >= 0.90 (exit 1 otherwise).

mod bare;
mod client;
mod measure;

use measure::{Opts, Rate, best, head_to_head, median, one_core};
use servebench_sim::{Preset, SimConfig};

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
    let addr = addr
        .parse()
        .unwrap_or_else(|e| panic!("address {addr}: {e}"));
    let _ = servebench_sim::raise_nofile_limit();
    let (events, secs) = one_core_runtime().block_on(client::run(
        addr,
        o.conns,
        o.tokens,
        std::time::Duration::from_secs_f64(o.warmup),
        std::time::Duration::from_secs_f64(o.secs),
    ));
    println!("events={events} secs={secs:.4}");
}

fn summary(name: &str, v: &[f64]) {
    println!(
        "  {name:<26} best {:>7.0} events/s, median {:>7.0}",
        best(v),
        median(v)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve-sim") => return serve_sim(),
        Some("serve-bare") => return serve_bare(),
        Some("client") => {
            let addr = args.get(1).map_or("", String::as_str);
            return run_client(addr, &Opts::parse(args.get(2..).unwrap_or_default()));
        }
        _ => {}
    }
    let o = Opts::parse(&args);
    println!(
        "sse_rate: {} connections x {} tokens per request, {} s windows, {} rounds, servers on \
         cpu {}, clients on cpu {}; every token its own flushed SSE event",
        o.conns, o.tokens, o.secs, o.rounds, o.server_cpu, o.client_cpu
    );
    println!("one core each (one server at a time):");
    let (mut bare, mut sim) = (Vec::new(), Vec::new());
    for round in 0..o.rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for is_sim in order {
            let r: Rate = one_core(if is_sim { "serve-sim" } else { "serve-bare" }, &o);
            println!(
                "  round {:>2}: {:<14} {:>7.0} events/s  (server on its cpu {:>3.0}% of the window, waited {:>2.0}%)",
                round + 1,
                if is_sim {
                    "servebench-sim"
                } else {
                    "bare axum"
                },
                r.events_per_s,
                r.on_cpu * 100.0,
                r.waited * 100.0,
            );
            if is_sim {
                sim.push(r.events_per_s)
            } else {
                bare.push(r.events_per_s)
            }
        }
    }
    summary("bare axum SSE server", &bare);
    summary("servebench-sim zero-delay", &sim);
    let seq: Vec<f64> = sim.iter().zip(&bare).map(|(s, b)| s / b).collect();
    println!(
        "  ratio sim/bare: best rates {:.3}, median rates {:.3}, median of round ratios {:.3}",
        best(&sim) / best(&bare),
        median(&sim) / median(&bare),
        median(&seq)
    );
    println!(
        "head to head (both servers on cpu {} at once, equal load):",
        o.server_cpu
    );
    let mut ratios = Vec::new();
    for round in 0..o.rounds {
        let (b, s) = head_to_head(&o);
        println!(
            "  round {:>2}: bare axum {:>7.0} events/s, servebench-sim {:>7.0} events/s, ratio {:.3}",
            round + 1,
            b,
            s,
            s / b
        );
        ratios.push(s / b);
    }
    let ratio = median(&ratios);
    let verdict = if ratio >= 0.9 { "PASS" } else { "FAIL" };
    println!("ratio sim/bare, head to head, median: {ratio:.3} (required >= 0.90): {verdict}");
    if ratio < 0.9 {
        std::process::exit(1);
    }
}
