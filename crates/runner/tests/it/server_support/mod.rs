//! Helpers of the server-lifecycle tests: the fake server script, launches with short
//! timeouts, and process checks through `/proc`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use servebench_runner::server::{ServerLaunch, pick_free_port};
use servebench_spec::{HttpProbe, HumanDuration, Readiness, StopPolicy, StopSignal};

/// `tests/support/fake_server.py`.
pub(crate) fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_server.py")
}

/// `tests/fixtures/…`.
pub(crate) fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub(crate) fn strings(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| (*x).to_owned()).collect()
}

/// A launch of the fake server on a free port with `extra` flags, polling `/health` every
/// 50 ms for up to `timeout`, stopped by SIGTERM with a 5 s grace.
pub(crate) fn fake_launch(dir: &Path, extra: &[&str], timeout: Duration) -> ServerLaunch {
    let port = pick_free_port().expect("a free port on 127.0.0.1");
    let mut argv = strings(&["python3", "-u"]);
    argv.push(fake_server().display().to_string());
    argv.extend(strings(&["--port", &port.to_string()]));
    argv.extend(strings(extra));
    shell_launch_argv(dir, argv, port, timeout)
}

/// A launch of an arbitrary argv with the same test settings.
pub(crate) fn shell_launch_argv(
    dir: &Path,
    argv: Vec<String>,
    port: u16,
    timeout: Duration,
) -> ServerLaunch {
    let mut l = ServerLaunch::new(argv, port, dir.join("logs/server.log"));
    l.readiness = Readiness {
        http: HttpProbe {
            path: "/health".to_owned(),
            ..HttpProbe::default()
        },
        interval: HumanDuration::from_millis(50),
        timeout: HumanDuration::new(timeout),
    };
    l.stop = StopPolicy {
        signal: StopSignal::SIGTERM,
        grace: HumanDuration::from_secs(5),
    };
    l
}

/// Whether `pid` is a live (not zombie) process.
pub(crate) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s
                .rfind(')')
                .and_then(|i| s[i + 1..].split_whitespace().next())
                .unwrap_or("?");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// Waits up to 10 s for a file to appear and holds a pid.
pub(crate) async fn read_pid_file(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no pid in {} after 10 s", path.display());
}
