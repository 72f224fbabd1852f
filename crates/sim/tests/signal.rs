//! `run` stops gracefully on SIGTERM. Its own test binary: it signals its own process.

use std::time::Duration;

use clap::Parser;

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    sim: servebench_sim::SimArgs,
}

#[tokio::test]
async fn run_stops_on_sigterm() {
    let cli = Cli::try_parse_from(["sim", "--preset", "fast", "--label", "sig"])
        .unwrap_or_else(|e| panic!("{e}"));
    let task = tokio::spawn(servebench_sim::run(cli.sim));
    // `run` installs its signal handlers first thing; give it time to bind, then signal.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!task.is_finished());
    nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGTERM)
        .unwrap_or_else(|e| panic!("{e}"));
    let r = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap_or_else(|_| panic!("run did not stop on SIGTERM"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.is_ok(), "{r:?}");
}
