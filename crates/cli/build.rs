//! Records the git commit servebench is built from (`SERVEBENCH_GIT_SHA`), for result files.

use std::process::Command;

fn main() {
    let sha = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    let value = if sha.is_empty() {
        String::new()
    } else if dirty {
        format!("{sha}-dirty")
    } else {
        sha
    };
    println!("cargo:rustc-env=SERVEBENCH_GIT_SHA={value}");
    for p in ["../../.git/HEAD", "../../.git/index"] {
        if std::path::Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
