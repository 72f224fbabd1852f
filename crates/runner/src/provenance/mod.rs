//! What is recorded about the machine, the repository and the software with each run.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use servebench_result::{CommandOutput, FileHash, HostInfo, ProvenanceRecord, RepoInfo};

/// Host facts from /proc and /etc (Linux); unknown fields say `unknown`.
pub fn host_info() -> HostInfo {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|s| s.trim_matches('"').to_owned())
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = read("/proc/sys/kernel/osrelease").trim().to_owned();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| {
            v.split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let hostname = read("/proc/sys/kernel/hostname").trim().to_owned();
    HostInfo {
        hostname: if hostname.is_empty() {
            "unknown".into()
        } else {
            hostname
        },
        os,
        kernel: if kernel.is_empty() {
            "unknown".into()
        } else {
            kernel
        },
        cpu,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
    }
}

/// `HEAD` of the git repository holding `dir`, and whether it has uncommitted changes
/// outside `results/`. `None` outside a repository or without git.
pub fn repo_info(dir: &Path) -> Option<RepoInfo> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let sha = git(&["rev-parse", "HEAD"])?;
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let status = Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["status", "--porcelain", "--", ".", ":(exclude)results"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    Some(RepoInfo {
        sha,
        dirty: !status.stdout.is_empty(),
    })
}

const STDOUT_LIMIT: usize = 64 * 1024;
const STDERR_LIMIT: usize = 16 * 1024;

/// Run each provenance command with `sh -c` (60 s limit each) and keep its output.
pub fn run_commands(commands: &[String], cwd: Option<&Path>) -> Vec<CommandOutput> {
    commands
        .iter()
        .map(|c| run_one(c, cwd, Duration::from_secs(60)))
        .collect()
}

fn run_one(command: &str, cwd: Option<&Path>, limit: Duration) -> CommandOutput {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return CommandOutput {
                command: command.into(),
                status: None,
                stdout: String::new(),
                stderr: e.to_string(),
            };
        }
    };
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        let mut e = Vec::new();
        if let Some(s) = out.as_mut() {
            let _ = s.read_to_end(&mut o);
        }
        if let Some(s) = err.as_mut() {
            let _ = s.read_to_end(&mut e);
        }
        (o, e)
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s.code(),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let (o, e) = reader.join().unwrap_or_default();
    CommandOutput {
        command: command.into(),
        status,
        stdout: truncated(&o, STDOUT_LIMIT),
        stderr: truncated(&e, STDERR_LIMIT),
    }
}

fn truncated(bytes: &[u8], limit: usize) -> String {
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(limit)]).into_owned();
    if bytes.len() > limit {
        format!("{s}\n[… truncated]")
    } else {
        s
    }
}

/// sha256 of each file (paths relative to `base`).
pub fn hash_files(files: &[String], base: &Path) -> Vec<FileHash> {
    files
        .iter()
        .map(|f| {
            let p = base.join(f);
            match hash_file(&p) {
                Ok((h, n)) => FileHash {
                    path: f.clone(),
                    sha256: Some(h),
                    bytes: Some(n),
                    error: None,
                },
                Err(e) => FileHash {
                    path: f.clone(),
                    sha256: None,
                    bytes: None,
                    error: Some(e.to_string()),
                },
            }
        })
        .collect()
}

fn hash_file(p: &Path) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((format!("sha256:{}", hex::encode(h.finalize())), n))
}

/// Provenance of a spec: commands run in the spec's folder, files relative to it.
pub fn collect(spec: &servebench_spec::Provenance, spec_dir: &Path) -> ProvenanceRecord {
    ProvenanceRecord {
        commands: run_commands(&spec.commands, Some(spec_dir)),
        files: hash_files(&spec.files, spec_dir),
        inputs: Vec::new(),
        cluster: None,
        env: Default::default(),
    }
}
