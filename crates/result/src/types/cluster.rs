//! What a run records about servers that span nodes: the scheduler's allocations (job id,
//! nodes, partition, the batch script `servebench submit` wrote), each node's hardware, and
//! per server start the Slurm step and its ranks. Types only: servebench-runner's
//! `server::slurm` fills them. Absent for a server started on one host.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Accelerator, HostInfo};

/// Where a multi-node run ran (`provenance.cluster`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterRecord {
    /// The scheduler, `slurm`.
    pub scheduler: String,
    /// One entry per allocation the run measured in, in order (a `run --resume` in a new
    /// allocation adds one).
    pub allocations: Vec<AllocationRecord>,
}

impl ClusterRecord {
    /// The nodes of the first allocation, each with its hardware: what the run's trials were
    /// measured on first (part of the fingerprint).
    pub fn nodes(&self) -> &[NodeRecord] {
        self.allocations.first().map_or(&[], |a| &a.node_info)
    }
}

/// One Slurm allocation (job) the run was measured in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AllocationRecord {
    /// `SLURM_JOB_ID`.
    pub job_id: String,
    /// `SLURM_JOB_NAME`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// `SLURM_JOB_PARTITION`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Every node of the allocation, in Slurm's order (`scontrol show hostnames`).
    pub nodes: Vec<String>,
    /// The nodes the server's steps ran on (the first `server.launcher.slurm.nodes`); the
    /// first is the head's, where servebench ran.
    pub server_nodes: Vec<String>,
    /// The batch script `servebench submit` wrote and submitted, when the run came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_script: Option<BatchScript>,
    /// Each server node as its probe described it, in `server_nodes` order.
    #[serde(default)]
    pub node_info: Vec<NodeRecord>,
    /// When servebench started measuring in it, UTC RFC 3339.
    pub recorded_at: String,
}

/// The batch script of a submitted run, kept beside the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchScript {
    /// Its path, as written by `servebench submit`.
    pub path: String,
    /// Its text.
    pub text: String,
}

/// One node of a server that spans nodes, as a probe task on it described it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeRecord {
    /// The node's Slurm name (`SLURMD_NODENAME`).
    pub node: String,
    /// Its index in the server's nodes (`SLURM_NODEID`; 0 is the head's node).
    pub node_rank: u32,
    /// The machine: host name, OS, kernel, CPU, cores, memory.
    pub host: HostInfo,
    /// Its GPUs from `nvidia-smi`, when present.
    #[serde(default)]
    pub accelerators: Vec<Accelerator>,
}

/// A server start launched as a Slurm step (`ServerStart::slurm`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SlurmStepRecord {
    /// The allocation's `SLURM_JOB_ID`.
    pub job_id: String,
    /// `JOB.STEP`, once Slurm listed it (absent when the step never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The step's name (`srun -J`), unique per run and block, by which a later run finds it.
    pub step_name: String,
    /// The nodes it was asked to run on; the first holds the head.
    pub nodes: Vec<String>,
    /// The `srun` command line.
    pub srun_argv: Vec<String>,
    /// Every rank that reported in, in rank order.
    #[serde(default)]
    pub ranks: Vec<RankRecord>,
}

/// One rank (Slurm task) of a server step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RankRecord {
    /// The task's rank (`SLURM_PROCID`); 0 is the head.
    pub rank: u32,
    /// Its node's index in the step (`SLURM_NODEID`, the value of `${node.rank}`).
    pub node_rank: u32,
    /// The node's Slurm name.
    pub node: String,
    /// The node's host name.
    pub hostname: String,
    /// The pid of the server process on its node.
    pub pid: u32,
    /// Its log (stdout and stderr), beside the result.
    pub log_path: String,
    /// The argv it ran, secrets redacted.
    pub argv: Vec<String>,
}
