//! An error prints its cause once. The binary prints errors with their chain (`{e:#}`), so a
//! variant that names its I/O error in its message must not also return it as `source()`:
//! the user would read "No such file or directory" twice.

use std::error::Error;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What `Error: {e:#}` prints: the message, then each source after ": ".
fn chain(e: &dyn Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

const CAUSE: &str = "the disk said no";

fn io_error() -> io::Error {
    io::Error::other(CAUSE)
}

fn path() -> PathBuf {
    PathBuf::from("/results/run.json")
}

#[test]
fn every_error_that_wraps_an_os_error_prints_it_exactly_once() {
    use servebench_result::StoreError;
    use servebench_runner::server::ServerError;
    let errors: Vec<(&str, Box<dyn Error>)> = vec![
        (
            "spec LoadError::Io",
            Box::new(servebench_spec::load::LoadError::Io {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "StoreError::Write",
            Box::new(StoreError::Write {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "StoreError::Rescued",
            Box::new(StoreError::Rescued {
                path: path(),
                error: io_error(),
                rescue: PathBuf::from("/tmp/rescue.json"),
            }),
        ),
        (
            "StoreError::Read",
            Box::new(StoreError::Read {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "ImportError::Read",
            Box::new(servebench_result::import::ImportError::Read {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "ReportError::Write",
            Box::new(servebench_report::ReportError::Write {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "ServerError::Log",
            Box::new(ServerError::Log {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "ServerError::SpawnFailed",
            Box::new(ServerError::SpawnFailed {
                program: "sglang".into(),
                log_path: path(),
                error: io_error(),
            }),
        ),
        (
            "GpuError::Run",
            Box::new(servebench_runner::gpu::GpuError::Run {
                program: PathBuf::from("nvidia-smi"),
                error: io_error(),
            }),
        ),
        (
            "DatasetError::Io",
            Box::new(servebench_runner::dataset::DatasetError::Io {
                path: path(),
                error: io_error(),
            }),
        ),
        (
            "SimError::Bind",
            Box::new(servebench_sim::SimError::Bind {
                addr: SocketAddr::from(([127, 0, 0, 1], 8000)),
                error: io_error(),
            }),
        ),
        (
            "SimError::Serve",
            Box::new(servebench_sim::SimError::Serve(io_error())),
        ),
        (
            "SimError::Stdout",
            Box::new(servebench_sim::SimError::Stdout(io_error())),
        ),
    ];
    for (name, e) in &errors {
        let text = chain(e.as_ref());
        assert_eq!(
            text.matches(CAUSE).count(),
            1,
            "{name} prints its cause {} times: {text}",
            text.matches(CAUSE).count()
        );
    }
}

#[test]
fn the_binary_prints_a_missing_spec_files_cause_once() {
    let out = assert_cmd::Command::cargo_bin("servebench")
        .unwrap_or_else(|e| panic!("{e}"))
        .args(["validate", "/nonexistent/servebench/spec.yaml"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cause = io::Error::from(io::ErrorKind::NotFound).to_string();
    let os = "No such file or directory";
    assert!(stderr.contains(os) || stderr.contains(&cause), "{stderr}");
    assert_eq!(stderr.matches(os).count(), 1, "{stderr}");
}
