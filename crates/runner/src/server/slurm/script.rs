//! The shell script every task of a server step runs: it writes the rank's marker and node
//! probe into the results directory (proof that the nodes share it), sends its output to the
//! rank's own log, and `exec`s the head's or a worker's command, so the server stays the
//! task's process (Slurm's process tracking follows it, and the marker's pid is the server's).

use std::collections::BTreeMap;
use std::path::Path;

use servebench_spec::substitute::{Context, resolve};

/// How `${node.rank}` is written in the script: the task's node index, which Slurm sets.
const NODE_RANK_SHELL: &str = "\"$SLURM_NODEID\"";

/// `s` as one shell word: as it is when it holds only safe characters, else in single
/// quotes.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One argument substituted except for `${node.rank}` (and with `$$` still escaped), as a
/// shell word in which `${node.rank}` becomes the task's `$SLURM_NODEID`.
fn word(partial: &str) -> Result<String, String> {
    let parts: Vec<&str> = partial.split("${node.rank}").collect();
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(NODE_RANK_SHELL);
        }
        if !p.is_empty() {
            let plain =
                resolve(p, &Context::default()).map_err(|e| format!("server block: {e}"))?;
            out.push_str(&quote(&plain));
        }
    }
    if out.is_empty() {
        out.push_str("''");
    }
    Ok(out)
}

/// What the ranks run, every `${…}` but `${node.rank}` already substituted (`$$` escaped).
pub(crate) struct RankCommands<'a> {
    /// The head's argv (rank 0).
    pub(crate) head: &'a [String],
    /// A worker's argv (every other rank).
    pub(crate) worker: &'a [String],
    /// Variables that hold `${node.rank}`, set on every rank.
    pub(crate) env_per_rank: &'a BTreeMap<String, String>,
    /// Variables added on workers only.
    pub(crate) worker_env: &'a BTreeMap<String, String>,
}

/// The script of one step. `stem` is the common path of the rank files: the task writes
/// `{stem}.rank{R}.log` (its output), `{stem}.rank{R}.ready` (its marker: rank, node index,
/// node name, host name, pid) and `{stem}.rank{R}.node` (its node's facts and GPUs).
pub(crate) fn script(stem: &Path, cmds: &RankCommands<'_>) -> Result<String, String> {
    let stem = quote(&stem.display().to_string());
    let argv = |v: &[String]| -> Result<String, String> {
        v.iter()
            .map(|a| word(a))
            .collect::<Result<Vec<_>, _>>()
            .map(|w| w.join(" "))
    };
    let exports = |env: &BTreeMap<String, String>| -> Result<String, String> {
        let mut s = String::new();
        for (k, v) in env {
            s.push_str(&format!("export {}={}; ", quote(k), word(v)?));
        }
        Ok(s)
    };
    let head = argv(cmds.head)?;
    let worker = argv(cmds.worker)?;
    let common = exports(cmds.env_per_rank)?;
    let worker_env = exports(cmds.worker_env)?;
    Ok(format!(
        r#"r="${{SLURM_PROCID:-0}}"; s={stem}
{{ echo "host=$(hostname)"; echo "kernel=$(uname -r)"; echo "cores=$(nproc)"; grep -m1 MemTotal /proc/meminfo; grep -m1 'model name' /proc/cpuinfo
  if command -v nvidia-smi >/dev/null 2>&1; then echo '--- nvidia-smi'; nvidia-smi --query-gpu=index,name,uuid,memory.total,driver_version,pci.bus_id --format=csv 2>&1; fi; }} > "$s.rank$r.node" 2>/dev/null
printf '%s\t%s\t%s\t%s\t%s\n' "$r" "${{SLURM_NODEID:-0}}" "${{SLURMD_NODENAME:-}}" "$(hostname)" "$$" > "$s.rank$r.ready"
exec >> "$s.rank$r.log" 2>&1
echo "[servebench $(date -u +%Y-%m-%dT%H:%M:%SZ)] rank $r on node ${{SLURM_NODEID:-0}} (${{SLURMD_NODENAME:-}}, $(hostname)), pid $$"
{common}if [ "$r" = 0 ]; then exec {head}; else {worker_env}exec {worker}; fi
"#
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_rank_becomes_the_tasks_node_id_and_words_are_quoted() {
        assert_eq!(
            word("--node-rank=${node.rank}").unwrap(),
            "--node-rank=\"$SLURM_NODEID\""
        );
        assert_eq!(word("${node.rank}").unwrap(), "\"$SLURM_NODEID\"");
        assert_eq!(word("a b").unwrap(), "'a b'");
        assert_eq!(word("it's $$HOME").unwrap(), "'it'\\''s $HOME'");
        assert_eq!(word("").unwrap(), "''");
    }

    #[test]
    fn the_script_runs_the_head_on_rank_0_and_workers_elsewhere() {
        let head = vec!["srv".to_owned(), "--rank".into(), "${node.rank}".into()];
        let worker = vec!["srv".to_owned(), "--headless".into()];
        let mut we = BTreeMap::new();
        we.insert("ROLE".to_owned(), "w x".to_owned());
        let s = script(
            Path::new("/r/block-001-a"),
            &RankCommands {
                head: &head,
                worker: &worker,
                env_per_rank: &BTreeMap::new(),
                worker_env: &we,
            },
        )
        .unwrap();
        assert!(
            s.contains("if [ \"$r\" = 0 ]; then exec srv --rank \"$SLURM_NODEID\"; else export ROLE='w x'; exec srv --headless; fi"),
            "{s}"
        );
        assert!(s.contains("s=/r/block-001-a"), "{s}");
    }
}
