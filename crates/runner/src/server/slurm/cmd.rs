//! The Slurm client commands servebench runs (`scontrol`, `squeue`, `scancel`), each bounded
//! in time, with `SLURM_CONF` and the rest of the environment inherited.

use std::time::Duration;

use tokio::process::Command;

/// Longest one client command may take (the controller answers in milliseconds).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs `program args…`; its stdout on success, else a message with its stderr.
pub(crate) async fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let shown = format!("{program} {}", args.join(" "));
    let run = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(CLIENT_TIMEOUT, run).await {
        Err(_) => return Err(format!("`{shown}` did not answer in {CLIENT_TIMEOUT:?}")),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "`{program}` is not installed or not on PATH (servebench needs Slurm's client \
                 commands on the node it runs on)"
            ));
        }
        Ok(Err(e)) => return Err(format!("cannot run `{shown}`: {e}")),
        Ok(Ok(o)) => o,
    };
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{shown}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The node names of a Slurm node list (`scontrol show hostnames LIST`), in order.
pub(crate) async fn hostnames(list: &str) -> Result<Vec<String>, String> {
    let out = output("scontrol", &["show", "hostnames", list]).await?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// The address other nodes reach `node` at (`NodeAddr=` of `scontrol show node -o`), or the
/// name itself when Slurm gives none.
pub(crate) async fn node_addr(node: &str) -> String {
    match output("scontrol", &["show", "node", node, "-o"]).await {
        Ok(out) => out
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("NodeAddr="))
            .filter(|a| !a.is_empty() && *a != "(null)")
            .unwrap_or(node)
            .to_owned(),
        Err(_) => node.to_owned(),
    }
}

/// The live steps of job `job` named `name` (`JOB.STEP` ids), from `squeue -s`.
pub(crate) async fn steps_named(job: &str, name: &str) -> Result<Vec<String>, String> {
    let out = output("squeue", &["-h", "-s", "-j", job, "-o", "%i|%j"]).await?;
    Ok(out
        .lines()
        .filter_map(|l| l.trim().split_once('|'))
        .filter(|(_, n)| *n == name)
        .map(|(id, _)| id.to_owned())
        .collect())
}

/// Whether step `id` (`JOB.STEP`) is still known to the controller: listed by `squeue -s`
/// or shown by `scontrol show step` (which fails with "not found" once it is gone). A job
/// that is itself gone has no steps.
pub(crate) async fn step_alive(id: &str) -> bool {
    let job = id.split('.').next().unwrap_or(id);
    let listed = match output("squeue", &["-h", "-s", "-j", job, "-o", "%i"]).await {
        Ok(out) => out.lines().any(|l| l.trim() == id),
        // An unknown job: squeue fails with "Invalid job id specified".
        Err(_) => false,
    };
    listed
        || output("scontrol", &["show", "step", id])
            .await
            .is_ok_and(|o| o.contains("StepId="))
}

/// `scancel [--signal=SIG] JOB.STEP`.
pub(crate) async fn cancel(id: &str, signal: Option<&str>) -> Result<(), String> {
    let sig = signal.map(|s| format!("--signal={s}"));
    let mut args: Vec<&str> = sig.iter().map(String::as_str).collect();
    args.push(id);
    output("scancel", &args).await.map(|_| ())
}
