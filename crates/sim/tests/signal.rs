//! `run` stops gracefully on SIGTERM. Its own test binary, the only one besides `it`: it
//! signals its own process, which would stop every simulator the other tests run in process.

use std::time::Duration;

use clap::Parser;

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    sim: servebench_sim::SimArgs,
}

#[tokio::test]
async fn run_stops_on_sigterm() {
    use tokio::signal::unix::{SignalKind, signal};
    // A listener of our own first: from here on SIGTERM cannot kill the test process, even
    // if it arrives before `run` has installed its handler.
    let mut ours = signal(SignalKind::terminate()).unwrap_or_else(|e| panic!("{e}"));
    let cli = Cli::try_parse_from(["sim", "--preset", "fast", "--label", "sig"])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut task = tokio::spawn(servebench_sim::run(cli.sim));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "run serves until signalled");
    // Signal until `run` returns: the first one may come before its handler exists.
    let result = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGTERM)
                .unwrap_or_else(|e| panic!("{e}"));
            ours.recv().await;
            tokio::select! {
                r = &mut task => return r,
                () = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
    })
    .await;
    let r = result
        .unwrap_or_else(|_| panic!("run did not stop on SIGTERM"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.is_ok(), "{r:?}");
}
