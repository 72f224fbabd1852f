//! The Slurm allocation servebench runs in: its job, nodes and their addresses, read from the
//! job's environment and checked against the spec's node count.

use servebench_result::cluster::AllocationRecord;

use super::cmd;

/// The Slurm allocation servebench runs in, read from the job's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// `SLURM_JOB_ID`.
    pub job_id: String,
    /// `SLURM_JOB_NAME`.
    pub job_name: Option<String>,
    /// `SLURM_JOB_PARTITION`.
    pub partition: Option<String>,
    /// Every node of the allocation, in Slurm's order (the first is where the batch script,
    /// and so servebench, runs).
    pub nodes: Vec<String>,
    /// The address of the first node (`NodeAddr`), the value of `${head.host}`.
    pub head_addr: String,
}

impl Allocation {
    /// The allocation this process runs in, checked to hold `nodes` nodes, with `srun` on
    /// `PATH` and this process on its first node. The error says what to do instead.
    pub async fn detect(nodes: u32) -> Result<Allocation, String> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let Some(job_id) = var("SLURM_JOB_ID") else {
            return Err(format!(
                "the spec starts its server through Slurm (`server.launcher.slurm`, {nodes} \
                 node(s)), but servebench is not running inside a Slurm allocation \
                 (SLURM_JOB_ID is not set): submit it with `servebench submit SPEC` (sbatch), \
                 or run it inside one: `salloc -N{nodes} --ntasks-per-node=1 -- servebench run SPEC`"
            ));
        };
        if crate::gpu::find_on_path("srun").is_none() {
            return Err(format!(
                "servebench runs in Slurm job {job_id} but `srun` is not on PATH: load Slurm's \
                 client commands (e.g. `module load slurm`) before `servebench run`"
            ));
        }
        let Some(list) = var("SLURM_JOB_NODELIST").or_else(|| var("SLURM_NODELIST")) else {
            return Err(format!(
                "Slurm job {job_id}: SLURM_JOB_NODELIST is not set, so the nodes of the \
                 allocation are unknown; run servebench from the batch script or `salloc`, \
                 not from a shell that only copied SLURM_JOB_ID"
            ));
        };
        let names = cmd::hostnames(&list)
            .await
            .map_err(|e| format!("cannot list the nodes of Slurm job {job_id}: {e}"))?;
        if names.len() < nodes as usize {
            return Err(format!(
                "the spec's server spans {nodes} nodes (`server.launcher.slurm.nodes`), but \
                 Slurm job {job_id} holds {} ({}): allocate at least {nodes} \
                 (`salloc -N{nodes}` or `servebench submit --nodes {nodes}`), or lower \
                 `server.launcher.slurm.nodes`",
                names.len(),
                names.join(",")
            ));
        }
        if let Some(here) = var("SLURMD_NODENAME")
            && here != names[0]
        {
            return Err(format!(
                "servebench runs on node {here}, but the server's head (rank 0) is placed on \
                 the allocation's first node {}, and the head must run where servebench runs \
                 (the port is picked and probed there): run servebench from the batch script, \
                 not from an `srun` step on another node",
                names[0]
            ));
        }
        let head_addr = cmd::node_addr(&names[0]).await;
        Ok(Allocation {
            job_id,
            job_name: var("SLURM_JOB_NAME"),
            partition: var("SLURM_JOB_PARTITION"),
            nodes: names,
            head_addr,
        })
    }

    /// The first `n` nodes: the server's.
    pub fn server_nodes(&self, n: u32) -> Vec<String> {
        self.nodes.iter().take(n as usize).cloned().collect()
    }

    /// What the result records about this allocation (`batch_script` and `node_info` are
    /// filled by the caller).
    pub fn record(&self, server_nodes: u32, recorded_at: String) -> AllocationRecord {
        AllocationRecord {
            job_id: self.job_id.clone(),
            job_name: self.job_name.clone(),
            partition: self.partition.clone(),
            nodes: self.nodes.clone(),
            server_nodes: self.server_nodes(server_nodes),
            batch_script: None,
            node_info: Vec::new(),
            recorded_at,
        }
    }
}
