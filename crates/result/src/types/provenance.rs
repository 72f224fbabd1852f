//! The parts of a run's provenance: the tool's build, the repository, the host and its
//! accelerators, the commands run to learn them and the hashes of files the run read
//! (assembled in [`super::ProvenanceRecord`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// servebench's version and build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    /// Crate version.
    pub version: String,
    /// Git SHA servebench was built from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_sha: Option<String>,
}

/// Git state of the spec's repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RepoInfo {
    /// `HEAD` commit.
    pub sha: String,
    /// Uncommitted changes outside `results/`.
    pub dirty: bool,
}

/// The host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// OS name and version.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model.
    pub cpu: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
}

/// One GPU as `nvidia-smi` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Accelerator {
    /// `nvidia-smi` index.
    pub index: u32,
    /// Model, e.g. `NVIDIA H200`.
    pub name: String,
    /// `GPU-…` UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Total memory in MiB.
    pub memory_total_mib: u64,
    /// Driver version, e.g. `580.159.04`.
    pub driver_version: String,
    /// Highest CUDA version the driver supports (`nvidia-smi -q`), e.g. `13.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    /// PCI bus id, e.g. `00000000:00:06.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// Compute capability, e.g. `9.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_cap: Option<String>,
}

/// A provenance command's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandOutput {
    /// As written in the spec.
    pub command: String,
    /// Exit status (`None`: could not be run or killed by a signal).
    pub status: Option<i32>,
    /// Standard output (truncated to 64 KiB).
    pub stdout: String,
    /// Standard error (truncated to 16 KiB).
    pub stderr: String,
}

/// A provenance file's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileHash {
    /// As written in the spec.
    pub path: String,
    /// `sha256:…`, or `None` when unreadable (see `error`).
    pub sha256: Option<String>,
    /// Size in bytes.
    pub bytes: Option<u64>,
    /// Why it could not be hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
