//! `spec.server.launcher` and `spec.server.worker`: servers that span several nodes.
//!
//! Absent, the server is started on this host as before. With `launcher.slurm`, `servebench
//! run` (inside a Slurm allocation) starts one `srun` step per block with one task per node;
//! the engine itself joins its ranks (SGLang `--nnodes/--node-rank/--dist-init-addr`, vLLM
//! `--nnodes/--node-rank/--master-addr/--headless`). The head (rank 0) serves HTTP on
//! `${port}` on the node where servebench runs. See docs/slurm.md.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the server is started: on this host (leave `launcher` out) or across the nodes of a
/// scheduler's allocation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Launcher {
    /// Start the server as one Slurm step per block, one task per node, inside the
    /// allocation `servebench run` runs in (`servebench submit` gets one with `sbatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmLauncher>,
}

impl Launcher {
    /// The node count of the server (1 without a multi-node launcher).
    pub fn nodes(&self) -> u32 {
        self.slurm.as_ref().map_or(1, |s| s.nodes)
    }
}

/// A server started through Slurm's `srun` inside an allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmLauncher {
    /// Nodes the server spans (`srun --nodes`); the allocation must hold at least this many.
    /// Rank 0 (the head, serving HTTP on `${port}`) runs on the allocation's first node,
    /// where servebench runs.
    #[schemars(range(min = 1))]
    pub nodes: u32,
    /// Tasks per node (`srun --ntasks-per-node`); task 0 is the head, every other task runs
    /// the worker command. Engines that launch their own per-GPU processes want 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub ntasks_per_node: u32,
    /// GPUs per node asked of Slurm (`--gpus-per-node`), for clusters that schedule GPUs as
    /// generic resources; leave out where whole nodes are allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub gpus_per_node: Option<u32>,
    /// Further `srun` options of the server step, e.g. `[--cpus-per-task=64, --exclusive]`.
    /// Site-specific choices (account, partition, QoS) belong on `servebench submit`'s
    /// command line, not in the spec.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_args: Vec<String>,
}

fn one() -> u32 {
    1
}

/// What the ranks other than the head (rank ≥ 1) run differently: `args` are appended after
/// `server.args` and before the variant's args, `env` is added to theirs. For engines whose
/// followers need a flag the head must not have, e.g. vLLM's `--headless`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerRanks {
    /// Arguments added on every rank but the head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added on every rank but the head.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}
