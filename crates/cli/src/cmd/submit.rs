//! `servebench submit SPEC`: get a Slurm allocation for a run. Writes a batch script beside
//! the results (kept for provenance: the run records it in `provenance.cluster`), submits it
//! with `sbatch`, and with `--wait` follows the batch output until the job ends and exits with
//! the run's status. docs/slurm.md.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use servebench_runner::server::slurm::shell_quote as q;

use crate::exit::Exit;

/// Arguments of `submit`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec file.
    spec: PathBuf,
    /// Nodes to allocate (`sbatch --nodes`; default: the spec's
    /// `server.launcher.slurm.nodes`, 1 without a launcher).
    #[arg(long, value_name = "N")]
    nodes: Option<u32>,
    /// Partition (`sbatch --partition`).
    #[arg(long, value_name = "NAME")]
    partition: Option<String>,
    /// Time limit (`sbatch --time`, e.g. `30`, `2:00:00`).
    #[arg(long, value_name = "TIME")]
    time: Option<String>,
    /// Account to charge (`sbatch --account`).
    #[arg(long, value_name = "NAME")]
    account: Option<String>,
    /// Nodes to run on (`sbatch --nodelist`); the first holds servebench and the head.
    #[arg(long, value_name = "LIST")]
    nodelist: Option<String>,
    /// A further `sbatch` option, written into the script as an `#SBATCH` line
    /// (repeatable), e.g. `--sbatch-arg=--qos=high`.
    #[arg(long = "sbatch-arg", value_name = "OPTION", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
    /// Folder that receives `<spec name>/<run id>.json`, the batch script and its output; it
    /// must be on a filesystem every node of the allocation sees.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// `servebench run --set KEY=VALUE` (repeatable), passed on to the run.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Follow the batch output until the job ends, and exit with the run's status.
    #[arg(long)]
    wait: bool,
}

/// Write the batch script, submit it, and with `--wait` follow it.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let Some(spec) = super::load_spec(&args.spec)? else {
        return Ok(Exit::Failed);
    };
    super::print_warnings(&spec, &args.spec.display().to_string());
    let needed = spec
        .file
        .spec
        .server
        .as_ref()
        .and_then(|s| s.launcher.as_ref())
        .map_or(1, servebench_spec::Launcher::nodes);
    let nodes = args.nodes.unwrap_or(needed);
    if nodes < needed {
        bail!(
            "--nodes {nodes} is fewer than the {needed} nodes the spec's server spans \
             (`server.launcher.slurm.nodes`): ask for at least {needed}, or leave --nodes out"
        );
    }
    if servebench_runner::gpu::find_on_path("sbatch").is_none() {
        bail!(
            "`sbatch` is not on PATH: submit from a machine with Slurm's client commands (a \
             login node; `module load slurm`), or inside an allocation run \
             `servebench run {}` directly",
            args.spec.display()
        );
    }
    let exe = std::env::current_exe().context("the path of servebench itself")?;
    let cwd = std::env::current_dir().context("the current folder")?;
    let spec_path = std::fs::canonicalize(&args.spec)
        .with_context(|| format!("resolving {}", args.spec.display()))?;
    let results = cwd.join(&args.results_dir);
    let dir = results.join(&spec.file.metadata.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let digits: String = servebench_result::now_rfc3339()
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let stamp = format!(
        "{}T{}Z",
        &digits[..8.min(digits.len())],
        &digits[8.min(digits.len())..]
    );
    let script_path = dir.join(format!("submit-{stamp}.sbatch"));
    let out_path = dir.join(format!("submit-{stamp}.out"));
    let mut head = vec![
        format!("--job-name=servebench-{}", spec.file.metadata.name),
        format!("--nodes={nodes}"),
        "--ntasks-per-node=1".to_owned(),
        format!("--output={}", out_path.display()),
    ];
    for (flag, v) in [
        ("partition", &args.partition),
        ("time", &args.time),
        ("account", &args.account),
        ("nodelist", &args.nodelist),
    ] {
        if let Some(v) = v {
            head.push(format!("--{flag}={v}"));
        }
    }
    head.extend(args.sbatch_args.iter().cloned());
    let mut run = vec![
        q(&exe.display().to_string()),
        "run".into(),
        "--no-bars".into(),
        "--results-dir".into(),
        q(&results.display().to_string()),
    ];
    for s in &args.sets {
        run.push("--set".into());
        run.push(q(s));
    }
    run.push(q(&spec_path.display().to_string()));
    let mut text = String::from("#!/bin/bash\n");
    text.push_str(&format!(
        "# Written by `servebench submit` ({}) for {}.\n",
        env!("CARGO_PKG_VERSION"),
        spec_path.display()
    ));
    for h in &head {
        text.push_str(&format!("#SBATCH {h}\n"));
    }
    text.push_str(&format!(
        "export {}={}\ncd {}\n{}\nrc=$?\necho \"{DONE} $rc\"\nexit $rc\n",
        servebench_runner::run::BATCH_SCRIPT_ENV,
        q(&script_path.display().to_string()),
        q(&cwd.display().to_string()),
        run.join(" ")
    ));
    std::fs::write(&script_path, &text)
        .with_context(|| format!("writing {}", script_path.display()))?;
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(&script_path)
        .output()
        .context("running sbatch")?;
    if !out.status.success() {
        bail!(
            "sbatch refused the batch script {} ({}): {}",
            script_path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let job = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_owned();
    println!(
        "submitted Slurm job {job} ({nodes} node(s)); batch script {}; output {}",
        script_path.display(),
        out_path.display()
    );
    if !args.wait {
        return Ok(Exit::Ok);
    }
    follow(&job, &out_path)
}

/// The last line the batch script prints: the run's exit status.
const DONE: &str = "servebench submit: the run exited with status";

/// Prints the batch output as it grows until Slurm no longer lists the job; the run's exit
/// status from its last line.
fn follow(job: &str, out_path: &Path) -> Result<Exit> {
    let mut printed = 0u64;
    let mut tail = String::new();
    loop {
        copy_new(out_path, &mut printed, &mut tail);
        let q = Command::new("squeue")
            .args(["-h", "-j", job, "-o", "%T"])
            .output()
            .context("running squeue")?;
        let listed = String::from_utf8_lossy(&q.stdout).trim().to_owned();
        if !q.status.success() || listed.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    // The output can land a moment after the job left the queue.
    for _ in 0..20 {
        copy_new(out_path, &mut printed, &mut tail);
        if tail.contains(DONE) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = tail
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(DONE))
        .and_then(|s| s.trim().parse::<i32>().ok());
    Ok(match status {
        Some(0) => Exit::Ok,
        Some(130) => Exit::Interrupted,
        Some(2) => Exit::Usage,
        Some(_) => Exit::Failed,
        None => {
            eprintln!(
                "servebench: Slurm job {job} ended without the run's final line in {}: it was \
                 cancelled, hit its time limit or its node failed (see the output; `sacct -j {job}` \
                 where accounting is on)",
                out_path.display()
            );
            Exit::Failed
        }
    })
}

/// Prints what was added to `path` since byte `printed`, and keeps the last part in `tail`.
fn copy_new(path: &Path, printed: &mut u64, tail: &mut String) {
    let Ok(mut f) = std::fs::File::open(path) else {
        return;
    };
    if f.seek(SeekFrom::Start(*printed)).is_err() {
        return;
    }
    let mut buf = Vec::new();
    if f.read_to_end(&mut buf).is_err() || buf.is_empty() {
        return;
    }
    *printed += buf.len() as u64;
    let mut out = std::io::stdout();
    let _ = out.write_all(&buf);
    let _ = out.flush();
    tail.push_str(&String::from_utf8_lossy(&buf));
    if tail.len() > 4096 {
        let cut = tail.len() - 2048;
        let cut = (cut..tail.len())
            .find(|&i| tail.is_char_boundary(i))
            .unwrap_or(0);
        *tail = tail[cut..].to_owned();
    }
}
