//! `server.launcher` and `server.worker`: what a server that spans nodes needs.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::substitute::{Reference, references};
use crate::types::{Server, SpecFile};

/// `srun` options servebench sets itself for the server step: a spec may not set them in
/// `extra_args` (the value servebench needs would be overridden, or the step misnamed).
const OWN_SRUN_OPTIONS: [(&str, &str); 8] = [
    ("--nodes", "nodes"),
    ("-N", "nodes"),
    ("--ntasks-per-node", "ntasks_per_node"),
    ("--ntasks", "nodes and ntasks_per_node"),
    ("-n", "nodes and ntasks_per_node"),
    ("--gpus-per-node", "gpus_per_node"),
    (
        "--job-name",
        "the step name (servebench names each block's step)",
    ),
    ("-J", "the step name (servebench names each block's step)"),
];

/// Options that would break the head's placement or the step's end.
const FORBIDDEN_SRUN_OPTIONS: [&str; 6] = [
    "--nodelist",
    "-w",
    "--relative",
    "-r",
    "--kill-on-bad-exit",
    "-K",
];

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let Some(server) = &spec.spec.server else {
        return;
    };
    let ranks = match &server.launcher {
        None => 1,
        Some(l) => match &l.slurm {
            None => {
                out.push(
                    Diagnostic::error(at("server.launcher"), "`launcher` names no launcher")
                        .with_hint(
                            "write `launcher: {slurm: {nodes: 2}}` to start the server across \
                             two nodes of a Slurm allocation, or leave `launcher` out to start \
                             it on this host",
                        ),
                );
                return;
            }
            Some(slurm) => {
                extra_args(&slurm.extra_args, out);
                if slurm.nodes > 1 && !mentions(server, spec, &Reference::NodeRank) {
                    out.push(
                        Diagnostic::warning(
                            at("server.launcher.slurm.nodes"),
                            format!(
                                "the server spans {} nodes but no argument or variable tells a rank which node it is: `${{node.rank}}` appears nowhere",
                                slurm.nodes
                            ),
                        )
                        .with_hint(
                            "SGLang and vLLM need it: add e.g. `--nnodes, \"${node.count}\", --node-rank, \"${node.rank}\"` to `server.args` (docs/slurm.md)",
                        ),
                    );
                }
                slurm.nodes * slurm.ntasks_per_node
            }
        },
    };
    if ranks <= 1
        && let Some(w) = &server.worker
        && (!w.args.is_empty() || !w.env.is_empty())
    {
        out.push(
            Diagnostic::warning(
                at("server.worker"),
                "`server.worker` applies to ranks other than the head, and this server has only the head",
            )
            .with_hint("it takes effect with `launcher: {slurm: {nodes: 2}}` or more; remove it otherwise"),
        );
    }
}

/// `extra_args` may not set what servebench sets, and are passed as written.
fn extra_args(args: &[String], out: &mut Vec<Diagnostic>) {
    for (i, a) in args.iter().enumerate() {
        let path = at(&format!("server.launcher.slurm.extra_args[{i}]"));
        let name = a.split('=').next().unwrap_or(a);
        if let Some((_, field)) = OWN_SRUN_OPTIONS.iter().find(|(o, _)| *o == name) {
            out.push(
                Diagnostic::error(
                    path,
                    format!("`{name}` is set by servebench for the server step"),
                )
                .with_hint(format!(
                    "say it with `server.launcher.slurm` ({field}) instead of `extra_args`"
                )),
            );
        } else if FORBIDDEN_SRUN_OPTIONS.contains(&name) {
            out.push(
                Diagnostic::error(
                    path,
                    format!(
                        "`{name}` would move the head off the node servebench runs on, or keep a dead rank's step alive"
                    ),
                )
                .with_hint(
                    "servebench places rank 0 on the allocation's first node and ends the step when a rank dies; choose nodes with `servebench submit --nodelist` or `salloc -w` instead",
                ),
            );
        } else if a.contains("${") {
            out.push(
                Diagnostic::error(
                    path,
                    "`extra_args` are passed to `srun` as written: references are not substituted",
                )
                .with_hint("write the value itself"),
            );
        }
    }
}

/// Whether any string of the server's launch (variants' included) holds `r`.
fn mentions(server: &Server, spec: &SpecFile, r: &Reference) -> bool {
    let worker = server.worker.as_ref();
    let strings = server
        .command
        .iter()
        .chain(&server.args)
        .chain(server.env.values())
        .chain(worker.into_iter().flat_map(|w| w.args.iter()))
        .chain(worker.into_iter().flat_map(|w| w.env.values()))
        .chain(
            spec.spec
                .variants
                .iter()
                .flat_map(|v| v.server.args.iter().chain(v.server.env.values())),
        );
    strings
        .into_iter()
        .any(|s| references(s).unwrap_or_default().contains(r))
}
