//! Starting and stopping a server: [`spawn`] for in-process use, [`run`] for the CLI.

use std::future::Future;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

use super::arrival::{Arrival, StampedListener};
use super::dialect::Readiness;
use super::tls::{TlsListener, server_config};
use super::{AppState, SimInfo, SimStats, router};
use crate::config::SimConfig;
use crate::{SimArgs, SimError, driver, raise_nofile_limit};

/// How long a server cut by the exit fault may take to close its connections.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// A running in-process simulator. Dropping it stops the server abruptly; prefer
/// [`SimHandle::shutdown`].
#[derive(Debug)]
pub struct SimHandle {
    addr: SocketAddr,
    /// `http`, or `https` with `--tls-cert`.
    scheme: &'static str,
    state: Arc<AppState>,
    kill: CancellationToken,
    stop: CancellationToken,
    server: Option<JoinHandle<io::Result<()>>>,
    engine: Option<JoinHandle<()>>,
}

/// Binds, starts the engine and the HTTP server on the current tokio runtime, logs one
/// `servebench sim: start ...` line with the configuration to stderr (and the engine
/// personality's own start-up lines), and returns at once. A personality whose engine
/// listens only once loaded (vLLM, TGI, TensorRT-LLM, transformers serve) binds now and
/// listens after `--startup-delay-ms`, so connections are refused until then.
pub async fn spawn(config: SimConfig) -> Result<SimHandle, SimError> {
    config.validate()?;
    let tls = config.tls.as_ref().map(server_config).transpose()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let addr = SocketAddr::new(config.host, config.port);
    let delay = Duration::from_millis(config.faults.startup_delay_ms);
    let closed = config.dialect().readiness() == Readiness::Closed && !delay.is_zero();
    let bind_error = |error| SimError::Bind { addr, error };
    let bound = if closed {
        let socket = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4(),
            SocketAddr::V6(_) => TcpSocket::new_v6(),
        }
        .map_err(bind_error)?;
        socket.set_reuseaddr(true).map_err(bind_error)?;
        socket.bind(addr).map_err(bind_error)?;
        Bound::Socket(socket)
    } else {
        Bound::Listening(TcpListener::bind(addr).await.map_err(bind_error)?)
    };
    let local = bound.local_addr().map_err(SimError::Serve)?;
    let kill = CancellationToken::new();
    let stop = CancellationToken::new();
    let (engine, speed, engine_task) = driver::start(
        config.engine.clone(),
        config.seed,
        config.repetition,
        kill.clone(),
    );
    let config_cache = config.prefix_cache;
    let record = match &config.record_requests {
        Some(path) => Some(std::sync::Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| {
                    SimError::InvalidConfig(format!("--record-requests {}: {e}", path.display()))
                })?,
        )),
        None => None,
    };
    let state = Arc::new(AppState {
        ready_at: Instant::now() + delay,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        served: config.served(),
        config,
        engine,
        stats: Arc::default(),
        speed,
        requests: 0.into(),
        answered: 0.into(),
        exited: CancellationToken::new(),
        kill: kill.clone(),
        stop: stop.clone(),
        prefix_cache: config_cache
            .map(|p| std::sync::Mutex::new(crate::prefix_cache::PrefixCache::new(p))),
        record,
        served_stop: 0.into(),
        last_finish: std::sync::Mutex::new(None),
    });
    eprintln!("{}", state.log_line(local));
    for line in state.dialect().start_lines(&state.served, local) {
        eprintln!("{line}");
    }
    let ready_lines = state.dialect().ready_lines(&format!("{scheme}://{local}"));
    let app = router(Arc::clone(&state)).into_make_service_with_connect_info::<Arrival>();
    let until_stop = stop.clone();
    let server = tokio::spawn(async move {
        let listener = match bound {
            Bound::Listening(l) => {
                if !ready_lines.is_empty() {
                    let stop = until_stop.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            () = stop.cancelled() => {}
                            () = tokio::time::sleep(delay) => print_lines(&ready_lines),
                        }
                    });
                }
                l
            }
            Bound::Socket(socket) => {
                tokio::select! {
                    () = until_stop.cancelled() => return Ok(()),
                    () = tokio::time::sleep(delay) => {}
                }
                print_lines(&ready_lines);
                socket.listen(1024)?
            }
        };
        let listener = StampedListener(listener);
        let stopped = until_stop.cancelled_owned();
        match tls {
            None => {
                axum::serve(listener, app)
                    .with_graceful_shutdown(stopped)
                    .await
            }
            Some(tls) => {
                let listener = TlsListener::new(listener, tls)?;
                axum::serve(listener, app)
                    .with_graceful_shutdown(stopped)
                    .await
            }
        }
    });
    Ok(SimHandle {
        addr: local,
        scheme,
        state,
        kill,
        stop,
        server: Some(server),
        engine: Some(engine_task),
    })
}

/// The listening socket: listening at once, or bound now and listening once ready.
#[derive(Debug)]
enum Bound {
    Listening(TcpListener),
    Socket(TcpSocket),
}

impl Bound {
    fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Bound::Listening(l) => l.local_addr(),
            Bound::Socket(s) => s.local_addr(),
        }
    }
}

fn print_lines(lines: &[String]) {
    for line in lines {
        eprintln!("{line}");
    }
}

impl SimHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT` (`https://` when serving TLS).
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Live counters.
    pub fn stats(&self) -> SimStats {
        self.state.stats.snapshot()
    }

    /// Restarts the peak in-flight count from the current in-flight count.
    pub fn reset_peak(&self) {
        self.state.stats.reset_peak();
    }

    /// What the info endpoint reports.
    pub fn info(&self) -> SimInfo {
        self.state.info()
    }

    /// True once the `exit_after_requests` fault has fired.
    pub fn has_exited(&self) -> bool {
        self.state.exiting()
    }

    /// Resolves when the `exit_after_requests` fault fires (never, without it).
    pub async fn exited(&self) {
        self.state.exited.cancelled().await;
    }

    /// Graceful stop: stop accepting, let in-flight responses finish for up to the
    /// configured grace, then cut what is left.
    pub async fn shutdown(mut self) -> Result<(), SimError> {
        self.stop.cancel();
        let grace = self.state.config.shutdown_grace;
        self.join(grace).await
    }

    /// Waits until the server stops by itself (the `exit_after_requests` fault), then
    /// returns [`SimError::InjectedExit`].
    pub async fn wait(mut self) -> Result<(), SimError> {
        self.exited().await;
        self.join(KILL_WAIT).await?;
        Err(SimError::InjectedExit {
            requests: self.state.config.faults.exit_after_requests.unwrap_or(0),
        })
    }

    async fn join(&mut self, grace: Duration) -> Result<(), SimError> {
        let mut result = Ok(());
        if let Some(mut server) = self.server.take() {
            let joined = match timeout(grace, &mut server).await {
                Ok(r) => Some(r),
                Err(_) => {
                    self.kill.cancel();
                    timeout(KILL_WAIT, &mut server).await.ok()
                }
            };
            result = match joined {
                Some(Ok(Ok(()))) => Ok(()),
                Some(Ok(Err(e))) => Err(SimError::Serve(e)),
                Some(Err(e)) => Err(SimError::Serve(io::Error::other(e))),
                None => {
                    server.abort();
                    Ok(())
                }
            };
        }
        self.kill.cancel();
        if let Some(engine) = self.engine.take() {
            let _ = engine.await;
        }
        result
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop.cancel();
        self.kill.cancel();
    }
}

/// Serves `config` until `shutdown` resolves (graceful stop, `Ok`) or the exit fault fires
/// (`Err(SimError::InjectedExit)`). Raises the open-file limit first, and writes exactly one
/// line, `servebench sim listening on http://HOST:PORT`, to `out` once bound.
pub async fn run_until<W, F>(config: SimConfig, out: &mut W, shutdown: F) -> Result<(), SimError>
where
    W: Write,
    F: Future<Output = ()>,
{
    if let Err(e) = raise_nofile_limit() {
        eprintln!("servebench sim: warning: {e}");
    }
    let handle = spawn(config).await?;
    writeln!(out, "servebench sim listening on {}", handle.base_url())
        .and_then(|()| out.flush())
        .map_err(SimError::Stdout)?;
    let exited = tokio::select! {
        () = shutdown => false,
        () = handle.exited() => true,
    };
    if exited {
        handle.wait().await
    } else {
        handle.shutdown().await
    }
}

/// `servebench sim`: resolves the flags, serves, prints the listening line to stdout, and
/// returns `Ok` after a graceful stop on SIGTERM or SIGINT, or
/// `Err(SimError::InjectedExit)` when the exit fault fires (the CLI should then exit
/// non-zero, as a crashed server would).
pub async fn run(args: SimArgs) -> Result<(), SimError> {
    let config = args.to_config()?;
    let mut term = signal(SignalKind::terminate()).map_err(SimError::Serve)?;
    let mut int = signal(SignalKind::interrupt()).map_err(SimError::Serve)?;
    let shutdown = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    };
    if args.worker {
        let lines = config.dialect().worker_lines(&config.served());
        return crate::worker::run_worker(&args, &lines, &mut io::stdout(), shutdown).await;
    }
    run_until(config, &mut io::stdout(), shutdown).await
}
