//! Starting a server: spawn it as the leader of a new process group with its output in the
//! log, then poll the readiness probe until it answers as expected, failing at once if the
//! process exits.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::time::Instant;

use super::error::ServerError;
use super::log::{ServerLog, TAIL_LINES, utc_now};
use super::port::port_is_free;
use super::redact::{redact_argv, redact_env, secret_values_of_env, shell_join};
use super::stop::{StopOptions, Target, stop_group};
use super::{RunningServer, ServerLaunch, ServerRecord, http};
use servebench_result::server::ExitRecord;

/// Longest a single readiness probe may wait for its answer.
const MAX_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the server of `launch` and waits until it is ready.
///
/// The command runs in its own process group (pgid = pid) with stdout and stderr appended to
/// `launch.log_path`, after a header with the UTC time and the redacted argv and env. The
/// readiness probe (`{base}{path}`, the base `http://127.0.0.1:{port}` unless the launch
/// names another: [`ServerLaunch::probe_base`]) is sent every `readiness.interval` until
/// it answers `expect_status` or `readiness.timeout` has passed since the spawn. If the
/// process exits first, this fails at once with its exit status. On any failure after the
/// spawn the whole group is stopped (by `launch.stop`) before the error, which carries the
/// log's tail, is returned.
pub async fn start(launch: &ServerLaunch) -> Result<RunningServer, ServerError> {
    start_with(launch, |_, _| {}).await
}

/// [`start`], calling `on_spawn(pid, pgid)` as soon as the process exists, before readiness:
/// a caller that records it (the result file) can find and stop the group after being
/// killed while the server was still starting.
pub async fn start_with(
    launch: &ServerLaunch,
    on_spawn: impl FnOnce(u32, i32),
) -> Result<RunningServer, ServerError> {
    let program = launch.argv.first().ok_or(ServerError::EmptyCommand)?;
    if !port_is_free(launch.port) {
        return Err(ServerError::PortInUse { port: launch.port });
    }
    let client = http::client(launch.ca_file.as_deref()).map_err(ServerError::HttpClient)?;
    let mut secrets = launch.secret_values.clone();
    secrets.extend(secret_values_of_env(&launch.env));
    let argv = redact_argv(&launch.argv, &secrets);
    let env = redact_env(&launch.env);
    let started_at = utc_now();
    let mut header = vec![format!("server start: {}", shell_join(&argv))];
    if !env.is_empty() {
        let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        header.push(format!("env: {}", pairs.join(" ")));
    }
    if let Some(dir) = &launch.working_dir {
        header.push(format!("working dir: {}", dir.display()));
    }
    let (log, out, err) =
        ServerLog::create(&launch.log_path, &header).map_err(|source| ServerError::Log {
            path: launch.log_path.clone(),
            error: source,
        })?;

    let mut cmd = Command::new(program);
    cmd.args(&launch.argv[1..])
        .envs(&launch.env)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .kill_on_drop(false);
    if let Some(dir) = &launch.working_dir {
        cmd.current_dir(dir);
    }
    let t0 = Instant::now();
    let spawned = cmd.spawn().and_then(|c| {
        let pid = c
            .id()
            .ok_or_else(|| std::io::Error::other("no pid after spawn"))?;
        Ok((c, pid))
    });
    let (mut child, pid) = match spawned {
        Ok(c) => c,
        Err(source) => {
            log.event(&format!("cannot start `{program}`: {source}"));
            return Err(ServerError::SpawnFailed {
                program: program.clone(),
                log_path: launch.log_path.clone(),
                error: source,
            });
        }
    };
    // Started with process_group(0): the group id is the pid.
    let pgid = i32::try_from(pid).expect("a pid is a positive pid_t (i32)");
    log.event(&format!(
        "spawned pid {pid} in its own process group {pgid}"
    ));
    on_spawn(pid, pgid);

    let r = &launch.readiness;
    let url = http::url(&launch.probe_base(), &r.http.path);
    let probe = format!(
        "{} {url} → {}",
        r.http.method.as_str(),
        r.http.expect_status
    );
    let outcome = wait_ready(&mut child, &client, launch, &url, t0).await;
    let failure = match outcome {
        Ok(ready_after) => {
            log.event(&format!(
                "ready after {:.2} s ({probe})",
                ready_after.as_secs_f64()
            ));
            let record = ServerRecord {
                argv,
                env,
                working_dir: launch.working_dir.clone(),
                pid,
                pgid,
                port: launch.port,
                log_path: launch.log_path.clone(),
                started_at,
                ready_after_s: ready_after.as_secs_f64(),
            };
            return Ok(RunningServer::new(record, child, log, launch, ready_after));
        }
        Err(f) => f,
    };

    let reaped = match &failure {
        NotReady::Exited(st, _) => Some(*st),
        NotReady::TimedOut(_) | NotReady::Untrusted(_) => None,
    };
    match &failure {
        NotReady::Exited(st, after) => log.event(&format!(
            "the server exited ({st}) {:.2} s after the spawn, before it was ready",
            after.as_secs_f64()
        )),
        NotReady::TimedOut(last) => log.event(&format!(
            "not ready after {:.2} s ({probe}; last answer: {last}); stopping it",
            r.timeout.get().as_secs_f64()
        )),
        NotReady::Untrusted(e) => log.event(&format!(
            "the server's certificate is not trusted ({probe}): {e}; stopping it"
        )),
    }
    let target = Target {
        pgid,
        child: Some(&mut child),
        reaped,
        port: Some(launch.port),
        log: Some(&log),
    };
    // The group may outlive its leader (workers of a launcher): stop it either way.
    stop_group(target, &launch.stop, &StopOptions::default()).await;
    let log_tail = log.tail(TAIL_LINES);
    let log_path = launch.log_path.clone();
    Err(match failure {
        NotReady::Exited(status, after) => ServerError::ExitedBeforeReady {
            status,
            after,
            log_path,
            log_tail,
        },
        NotReady::TimedOut(last) => ServerError::ReadinessTimeout {
            after: r.timeout.get(),
            probe,
            last_status_or_error: last,
            log_path,
            log_tail,
        },
        NotReady::Untrusted(error) => ServerError::UntrustedCertificate {
            probe,
            error,
            log_path,
        },
    })
}

/// For a launch reached over `https://`: why the server's certificate is refused by the
/// trusted roots and `ca_file`, in words — the handshake and classification of
/// `tls::check`, the same as for a running endpoint. `None` otherwise (no server yet, plain
/// HTTP, a trusted certificate).
async fn untrusted(launch: &ServerLaunch) -> Option<String> {
    let base = launch.base_url.as_deref()?;
    match crate::tls::check(base, launch.ca_file.as_deref()).await {
        Err(crate::tls::TlsError::Untrusted(why)) => Some(why),
        _ => None,
    }
}

/// Why the server never became ready.
#[derive(Debug)]
enum NotReady {
    /// The main process exited (status, time since spawn).
    Exited(ExitRecord, Duration),
    /// The timeout passed; the last probe's answer.
    TimedOut(String),
    /// An HTTPS probe was refused by certificate verification (the client's error).
    Untrusted(String),
}

/// Polls the probe; the time from spawn to the expected answer.
async fn wait_ready(
    child: &mut Child,
    client: &reqwest::Client,
    launch: &ServerLaunch,
    url: &str,
    t0: Instant,
) -> Result<Duration, NotReady> {
    let r = &launch.readiness;
    let deadline = t0 + r.timeout.get();
    let interval = r.interval.get();
    let exited = |st: std::io::Result<std::process::ExitStatus>| {
        let rec = st.map_or(ExitRecord::UNKNOWN, ExitRecord::from);
        NotReady::Exited(rec, t0.elapsed())
    };
    let mut last = "no probe was answered".to_owned();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(NotReady::TimedOut(last));
        }
        let timeout = interval
            .clamp(Duration::from_secs(1), MAX_PROBE_TIMEOUT)
            .min(deadline - now);
        tokio::select! {
            biased;
            st = child.wait() => return Err(exited(st)),
            answer = http::probe(client, &r.http, url, timeout) => match answer {
                Ok(s) if s == r.http.expect_status => return Ok(t0.elapsed()),
                Ok(s) => last = format!("HTTP {s}"),
                Err(e) => {
                    // A certificate that does not verify will not verify later either.
                    if let Some(why) = untrusted(launch).await {
                        return Err(NotReady::Untrusted(why));
                    }
                    last = e;
                }
            },
        }
        let next = (Instant::now() + interval).min(deadline);
        tokio::select! {
            biased;
            st = child.wait() => return Err(exited(st)),
            () = tokio::time::sleep_until(next) => {}
        }
    }
}
