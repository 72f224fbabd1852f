//! Server lifecycle against real processes: readiness, early exit, timeout, group stop with
//! escalation, a server dying mid-run.

use crate::server_support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use servebench_runner::server::{
    GpuRelease, PortRelease, ServerError, pick_free_port, port_is_free, start, stop,
};
use servebench_spec::{HumanDuration, StopSignal};
use server_support::{alive, fake_launch, read_pid_file, shell_launch_argv, strings};

#[tokio::test]
async fn delayed_server_is_ready_after_its_delay() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(
        dir.path(),
        &["--ready-after", "0.6", "--say", "loading weights"],
        Duration::from_secs(20),
    );
    let server = start(&launch).await.unwrap();
    assert!(
        server.ready_after() >= Duration::from_millis(600),
        "ready after {:?}",
        server.ready_after()
    );
    let rec = server.record().clone();
    assert_eq!(rec.port, launch.port);
    assert_eq!(rec.pgid, i32::try_from(rec.pid).unwrap());
    assert!(rec.started_at.ends_with('Z'), "{}", rec.started_at);
    assert!((rec.ready_after_s - server.ready_after().as_secs_f64()).abs() < 1e-9);
    assert!(!port_is_free(launch.port));

    let report = stop(server).await;
    assert!(report.is_clean(), "{report:?}");
    assert!(!report.escalated_to_sigkill);
    assert_eq!(report.signal, StopSignal::SIGTERM);
    assert!(report.exit_status.unwrap().signal == Some(15), "{report:?}");
    assert!(matches!(report.port, PortRelease::Free { .. }));
    assert!(matches!(
        report.gpu,
        GpuRelease::NoNvidiaSmi | GpuRelease::NoneHeld
    ));
    assert!(port_is_free(launch.port));

    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    assert!(log.contains("server start: python3 -u"), "{log}");
    assert!(log.contains("loading weights"));
    assert!(log.contains("] ready after"));
    assert!(log.contains("stop: sent SIGTERM to process group"));
    assert!(log.contains("stop: port"));
    assert!(log.contains("stop: GPU memory"));
}

#[tokio::test]
async fn exit_before_ready_fails_at_once_with_status_and_log_tail() {
    let dir = tempfile::tempdir().unwrap();
    let port = pick_free_port().unwrap();
    let argv = strings(&[
        "sh",
        "-c",
        "echo 'loading model'; echo 'RuntimeError: CUDA out of memory' >&2; exit 3",
    ]);
    // A long readiness timeout: the failure must come from the exit, not the timeout.
    let launch = shell_launch_argv(dir.path(), argv, port, Duration::from_secs(60));
    let t = Instant::now();
    let err = start(&launch).await.unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let ServerError::ExitedBeforeReady {
        status, log_tail, ..
    } = &err
    else {
        panic!("expected ExitedBeforeReady, got {err:?}");
    };
    assert_eq!(status.code, Some(3));
    assert!(log_tail.contains("CUDA out of memory"), "{log_tail}");
    let msg = err.to_string();
    assert!(msg.contains("exit code 3"), "{msg}");
    assert!(
        msg.contains(&launch.log_path.display().to_string()),
        "{msg}"
    );
    assert!(
        msg.contains("  | RuntimeError: CUDA out of memory"),
        "{msg}"
    );
}

#[tokio::test]
async fn readiness_timeout_shows_last_answer_and_log_tail_and_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let mut launch = fake_launch(
        dir.path(),
        &[
            "--ready-after",
            "1000",
            "--say",
            "compiling kernels",
            "--spawn-child",
            pidfile.to_str().unwrap(),
        ],
        // Long enough for the Python fake server to start and answer 503 at least once on a
        // busy machine (at 1.5 s its first answer could come after the deadline).
        Duration::from_millis(4000),
    );
    // Few probes, so the server's access log of them does not push its own line out of the tail.
    launch.readiness.interval = HumanDuration::from_millis(400);
    let err = start(&launch).await.unwrap_err();
    let ServerError::ReadinessTimeout {
        after,
        last_status_or_error,
        log_tail,
        ..
    } = &err
    else {
        panic!("expected ReadinessTimeout, got {err:?}");
    };
    assert_eq!(*after, Duration::from_millis(4000));
    assert_eq!(last_status_or_error, "HTTP 503");
    assert!(log_tail.contains("compiling kernels"), "{log_tail}");
    let msg = err.to_string();
    assert!(msg.contains("not ready after 4.0 s"), "{msg}");
    assert!(msg.contains("/health"), "{msg}");
    // The server and its child were stopped before the error came back.
    let child = read_pid_file(&pidfile).await;
    assert!(!alive(child), "child {child} still alive");
    assert!(port_is_free(launch.port));
}

#[tokio::test]
async fn a_server_that_never_binds_times_out_with_connection_refused() {
    let dir = tempfile::tempdir().unwrap();
    let port = pick_free_port().unwrap();
    let argv = strings(&["sh", "-c", "echo 'still loading'; exec sleep 30"]);
    let launch = shell_launch_argv(dir.path(), argv, port, Duration::from_millis(800));
    let t = Instant::now();
    let err = start(&launch).await.unwrap_err();
    // Timeout plus a SIGTERM stop: well under the 30 s sleep.
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let ServerError::ReadinessTimeout {
        last_status_or_error,
        log_tail,
        ..
    } = &err
    else {
        panic!("expected ReadinessTimeout, got {err:?}");
    };
    assert!(
        last_status_or_error.to_lowercase().contains("refused"),
        "{last_status_or_error}"
    );
    assert!(log_tail.contains("still loading"), "{log_tail}");
    assert!(log_tail.contains("stop: sent SIGTERM"), "{log_tail}");
}

#[tokio::test]
async fn missing_program_and_busy_port_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let port = pick_free_port().unwrap();
    let launch = shell_launch_argv(
        dir.path(),
        strings(&["/nonexistent/servebench-no-such-server"]),
        port,
        Duration::from_secs(5),
    );
    let err = start(&launch).await.unwrap_err();
    assert!(matches!(err, ServerError::SpawnFailed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("/nonexistent/servebench-no-such-server")
    );

    let held = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let busy = held.local_addr().unwrap().port();
    let launch = fake_launch(dir.path(), &[], Duration::from_secs(5));
    let launch = servebench_runner::server::ServerLaunch {
        port: busy,
        ..launch
    };
    let err = start(&launch).await.unwrap_err();
    assert!(
        matches!(err, ServerError::PortInUse { port } if port == busy),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains(&format!("port {busy} is already in use"))
    );

    let empty = shell_launch_argv(dir.path(), Vec::new(), port, Duration::from_secs(1));
    assert!(matches!(
        start(&empty).await,
        Err(ServerError::EmptyCommand)
    ));
}

#[tokio::test]
async fn sigterm_ignored_escalates_to_sigkill_for_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let mut launch = fake_launch(
        dir.path(),
        &[
            "--ignore-sigterm",
            "--spawn-child",
            pidfile.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    launch.stop.grace = HumanDuration::from_millis(700);
    let server = start(&launch).await.unwrap();
    let child = read_pid_file(&pidfile).await;
    assert!(alive(child));
    let report = stop(server).await;
    assert!(report.escalated_to_sigkill, "{report:?}");
    assert!(report.group_pids.contains(&child), "{report:?}");
    let exited = report.exited_after_s.unwrap();
    assert!(exited >= 0.7, "exited after {exited}");
    assert_eq!(report.exit_status.unwrap().signal, Some(9));
    assert!(
        matches!(report.port, PortRelease::Free { .. }),
        "{report:?}"
    );
    assert!(report.is_clean());
    assert!(port_is_free(launch.port));
    assert!(!alive(child), "child {child} survived the group kill");
    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    assert!(log.contains("sent SIGKILL"), "{log}");
}

#[tokio::test]
async fn a_child_of_the_server_dies_with_it_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let launch = fake_launch(
        dir.path(),
        &["--spawn-child", pidfile.to_str().unwrap()],
        Duration::from_secs(20),
    );
    let server = start(&launch).await.unwrap();
    let child = read_pid_file(&pidfile).await;
    assert!(alive(child));
    let report = stop(server).await;
    // The server does not forward the signal to its child: only a group signal reaches it.
    assert!(!report.escalated_to_sigkill, "{report:?}");
    assert!(
        !alive(child),
        "child {child} survived: the signal was not sent to the group"
    );
}

#[tokio::test]
async fn a_server_that_exits_mid_run_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(
        dir.path(),
        &["--exit-after", "0.8", "--exit-code", "7"],
        Duration::from_secs(20),
    );
    let mut server = start(&launch).await.unwrap();
    assert_eq!(server.try_exit_status(), None);
    let st = tokio::time::timeout(Duration::from_secs(10), server.exited())
        .await
        .expect("the server exits after 0.8 s");
    assert_eq!(st.code, Some(7));
    assert_eq!(server.try_exit_status().unwrap().code, Some(7));
    let report = stop(server).await;
    assert_eq!(report.exited_before_stop.unwrap().code, Some(7));
    assert!(report.is_clean(), "{report:?}");
    let log = std::fs::read_to_string(&launch.log_path).unwrap();
    assert!(log.contains("the server exited (exit code 7)"), "{log}");
}

#[tokio::test]
async fn dropping_a_running_server_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let launch = fake_launch(dir.path(), &[], Duration::from_secs(20));
    let server = start(&launch).await.unwrap();
    let pid = server.pgid();
    drop(server);
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server {pid} survived the drop");
}

#[test]
fn picked_ports_are_free_and_outside_the_ephemeral_range() {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let low: u16 = range.split_whitespace().next().unwrap().parse().unwrap();
    for _ in 0..20 {
        let p = pick_free_port().unwrap();
        // A child forked by another test thread inherits sockets for a moment: the check
        // must not be fooled by that (its probe sockets never listen).
        assert!(port_is_free(p), "picked {p}, then not free");
        if low > 16_000 {
            assert!(p < low, "{p} is in the ephemeral range from {low}");
        }
    }
    assert!(!port_is_free(0));
}
