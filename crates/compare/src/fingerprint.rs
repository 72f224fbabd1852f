//! The fingerprint of a measurement, compared field by field (docs/architecture.md, "Hashes and fingerprints"): the
//! workload (dataset, lengths, seed, rate, concurrency, request count, warm-up…), the model
//! and API, the server launch minus the variant's own patch (its launcher included), the
//! host, the accelerators, the node count and each node's machine and GPUs (`nodes[1].host.cpu`;
//! a one-host run counts one node), the servebench version and the recorded provenance. Each differing leaf becomes one
//! [`FingerprintDifference`] named by its dotted path (`workload.seed`, `host.cpu`,
//! `accelerators[0].driver_version`). What was served is compared, not only what the spec
//! said ([`crate::served`]): `target.model` is the model the blocks measured (`auto`
//! resolved), and `served.engine` / `served.engine_version` the engines the preflight found.
//!
//! Host fields that cannot change a result are no difference: physical memory within 1%
//! (`MemTotal` moves by a few MiB between boots of the same machine), and the kernel's build
//! string after its version (`6.18.44-fc-v973-gpu` and `6.18.44-fc-v974-gpu` are one kernel
//! version; a different `6.18.45` is a difference). The host probe's figures
//! ([`crate::host_probe`]) are compared with the tolerance its measured repeatability sets,
//! and only when both runs recorded it: a run without the probe never differs by it.
//!
//! Left out on purpose: request and trial timeouts, readiness, verify and stop settings
//! (they decide what fails, not how fast it runs), `target.api_key_env`, the host-only
//! fields the spec hash leaves out (`servebench_spec::hash::HOST_ONLY_FIELDS`: where the
//! server is reached and started, the CA file — one rule for the hash and the fingerprint; a
//! test keeps the two lists in step), `workload.max_concurrency` (each point's resolved
//! limit is in its label, which points are matched on), GPU UUIDs and PCI
//! ids (two identical GPUs are the same hardware), and the git SHA of the build (a note: it
//! changes with every commit). An imported result (`origin: imported`) may lack host,
//! accelerators and provenance; what it lacks is said in a note, not listed as a difference.

use std::collections::BTreeMap;

use serde_json::Value;
use servebench_stats::flags::FingerprintDifference;

use servebench_result::{Origin, RunResult};

/// Flatten `value` under `prefix` into leaf paths and their text.
fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Array(items) => {
            let words: Vec<String> = items.iter().map(text).collect();
            out.insert(prefix.to_owned(), format!("[{}]", words.join(", ")));
        }
        other => {
            out.insert(prefix.to_owned(), text(other));
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// `value` serialised and stripped of `skip` keys at its top level.
fn section<T: serde::Serialize>(value: &T, skip: &[&str]) -> Value {
    let mut v = serde_json::to_value(value).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        for k in skip {
            map.remove(*k);
        }
    }
    v
}

/// The fingerprint of one side as flat `path → text`, and what it could not say.
fn leaves(r: &RunResult) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let spec = &r.spec.spec;
    // `max_concurrency` is compared where every point's limit resolves to: the point's
    // label (`c=1`), which the sweeps are matched on — a limit written in `workload` and
    // one written as a one-value `sweep` measure the same thing.
    flatten(
        "workload",
        &section(
            &spec.workload,
            &["request_timeout", "trial_timeout", "max_concurrency"],
        ),
        &mut out,
    );
    flatten(
        "target",
        &section(&spec.target, &["api_key_env", "base_url", "tls"]),
        &mut out,
    );
    crate::served::add_leaves(r, &mut out);
    if let Some(tls) = &spec.target.tls {
        flatten("target.tls", &section(tls, &["ca_file"]), &mut out);
    }
    match &spec.server {
        Some(s) => flatten(
            "server",
            &section(s, &["readiness", "verify", "stop", "working_dir"]),
            &mut out,
        ),
        None => {
            out.insert("server".into(), "none (already running target)".into());
        }
    }
    if let Some(h) = &r.host {
        flatten("host", &section(h, &[]), &mut out);
    }
    if !r.accelerators.is_empty() {
        out.insert(
            "accelerators.count".into(),
            r.accelerators.len().to_string(),
        );
        for (i, a) in r.accelerators.iter().enumerate() {
            flatten(
                &format!("accelerators[{i}]"),
                &section(a, &["index", "uuid", "pci_bus_id"]),
                &mut out,
            );
        }
    }
    // A server over several nodes: their number and each node's machine and GPUs (the head's
    // node is also `host`); a one-host run counts one node, so old results compare as before.
    let nodes = r
        .provenance
        .cluster
        .as_ref()
        .map_or(&[][..], servebench_result::cluster::ClusterRecord::nodes);
    out.insert("nodes.count".into(), nodes.len().max(1).to_string());
    for n in nodes {
        let p = format!("nodes[{}]", n.node_rank);
        flatten(&format!("{p}.host"), &section(&n.host, &[]), &mut out);
        out.insert(
            format!("{p}.accelerators.count"),
            n.accelerators.len().to_string(),
        );
        for (i, a) in n.accelerators.iter().enumerate() {
            flatten(
                &format!("{p}.accelerators[{i}]"),
                &section(a, &["index", "uuid", "pci_bus_id"]),
                &mut out,
            );
        }
    }
    out.insert("servebench_version".into(), r.tool.version.clone());
    for c in &r.provenance.commands {
        let status = c.status.map_or("none".into(), |s| s.to_string());
        out.insert(
            format!("provenance.commands[{}]", c.command),
            format!("exit {status}: {}", c.stdout.trim()),
        );
    }
    // The files the run read (prompt file, trace, tokenizer, the probe's prompts and
    // reference answers): two runs that read different contents measured different
    // workloads, whatever their specs say (the one input-hash rule, docs/reliability.md).
    for f in &r.provenance.inputs {
        out.insert(
            format!("provenance.inputs[{}]", f.path),
            f.sha256.clone().unwrap_or_else(|| "unreadable".into()),
        );
    }
    for f in &r.provenance.files {
        out.insert(
            format!("provenance.files[{}]", f.path),
            f.sha256.clone().unwrap_or_else(|| "unreadable".into()),
        );
    }
    out
}

/// Physical memory within this relative difference is the same machine.
const MEMORY_TOLERANCE: f64 = 0.01;

/// The kernel release's version, `6.18.44` of `6.18.44-fc-v973-gpu`: its leading digits and
/// dots.
fn kernel_version(release: &str) -> &str {
    let end = release
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(release.len());
    release[..end].trim_end_matches('.')
}

/// Whether two texts of field `key` are the same for the fingerprint: equal, or host fields
/// that differ in what cannot change a result (module docs).
fn same(key: &str, x: &str, y: &str) -> bool {
    if x == y {
        return true;
    }
    if key.ends_with("host.memory_bytes") {
        return match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(a), Ok(b)) if a > 0.0 && b > 0.0 => (a / b - 1.0).abs() <= MEMORY_TOLERANCE,
            _ => false,
        };
    }
    if key.ends_with("host.kernel") {
        let (a, b) = (kernel_version(x), kernel_version(y));
        return !a.is_empty() && a == b;
    }
    false
}

/// The host probe's figures that moved beyond their tolerance, and a note when they could
/// not be compared or moved within it.
fn probe_differences(
    base: &RunResult,
    cand: &RunResult,
) -> (Vec<FingerprintDifference>, Option<String>) {
    match crate::host_probe::changes(base, cand) {
        Ok(changes) => {
            let diffs: Vec<FingerprintDifference> = changes
                .iter()
                .filter(|c| c.differs())
                .map(|c| FingerprintDifference {
                    field: format!("host_probe.{}", c.figure.field),
                    baseline: format!("{} {}", crate::text::num(c.before), c.figure.unit),
                    candidate: format!(
                        "{} {} ({:+.1}%, beyond the probes' ±{:.1}% repeatability)",
                        crate::text::num(c.after),
                        c.figure.unit,
                        c.change() * 100.0,
                        c.tolerance * 100.0
                    ),
                })
                .collect();
            let loaded: Vec<String> = changes
                .iter()
                .filter(|c| c.within_load())
                .map(|c| {
                    format!(
                        "host_probe.{} {:+.1}% ({} → {} {}): beyond the quiet-host \
                         repeatability (±{:.1}%), but a trial's host was contended, where the \
                         probe reads the load as much as the machine \
                         (docs/statistics-measured.md, \"Host probe on a loaded shared VM\"); \
                         not a fingerprint difference",
                        c.figure.field,
                        c.change() * 100.0,
                        crate::text::num(c.before),
                        crate::text::num(c.after),
                        c.figure.unit,
                        c.tolerance * 100.0,
                    )
                })
                .collect();
            (diffs, (!loaded.is_empty()).then(|| loaded.join("; ")))
        }
        // Both without the probe (results from before it): nothing to say.
        Err(_)
            if crate::host_probe::run_probe(base).is_none()
                && crate::host_probe::run_probe(cand).is_none() =>
        {
            (Vec::new(), None)
        }
        Err(why) => (Vec::new(), Some(why)),
    }
}

/// A long value shortened for a message: its first line, at most 80 characters.
fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut cut: String = line.chars().take(80).collect();
    if cut.len() < s.len() {
        cut.push('…');
    }
    cut
}

/// Whether a missing field is explained by the side being imported.
fn may_lack(path: &str) -> bool {
    ["host", "accelerators", "provenance", "servebench_version"]
        .iter()
        .any(|p| path.starts_with(p))
}

/// Fields that differ between the fingerprints of `base` and `cand`, and notes on what
/// could not be checked or does not count. Empty differences: the two runs are comparable
/// (servebench-history groups runs into series by this rule).
pub fn compare(base: &RunResult, cand: &RunResult) -> (Vec<FingerprintDifference>, Vec<String>) {
    let (a, b) = (leaves(base), leaves(cand));
    let mut diffs = Vec::new();
    let mut unchecked: Vec<String> = Vec::new();
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if same(k, x, y) => {}
            (Some(x), Some(y)) => diffs.push(FingerprintDifference {
                field: k.clone(),
                baseline: short(x),
                candidate: short(y),
            }),
            (x, y) => {
                let lacking_imported = if x.is_none() {
                    base.origin == Origin::Imported
                } else {
                    cand.origin == Origin::Imported
                };
                if k.starts_with("provenance")
                    || k.starts_with(crate::served::PREFIX)
                    || (lacking_imported && may_lack(k))
                {
                    unchecked.push(k.clone());
                } else {
                    diffs.push(FingerprintDifference {
                        field: k.clone(),
                        baseline: x.map_or("absent".into(), |s| short(s)),
                        candidate: y.map_or("absent".into(), |s| short(s)),
                    });
                }
            }
        }
    }
    let mut notes = Vec::new();
    let (probe, probe_note) = probe_differences(base, cand);
    diffs.extend(probe);
    notes.extend(probe_note);
    for (side, r) in [("baseline", base), ("candidate", cand)] {
        if r.origin == Origin::Imported {
            let mut lacks = Vec::new();
            if r.host.is_none() {
                lacks.push("host");
            }
            if r.accelerators.is_empty() {
                lacks.push("accelerators");
            }
            if r.provenance.commands.is_empty() && r.provenance.files.is_empty() {
                lacks.push("provenance");
            }
            let what = if lacks.is_empty() {
                "it records full provenance".to_owned()
            } else {
                format!(
                    "it lacks {}, so those fields could not be checked",
                    lacks.join(", ")
                )
            };
            notes.push(format!(
                "the {side} result is imported (converted from another tool's output): {what}"
            ));
            if let Some(info) = &r.import {
                for n in &info.notes {
                    notes.push(format!("{side} imported from {}: {n}", info.tool));
                }
            }
        }
    }
    if !unchecked.is_empty() {
        notes.push(format!(
            "recorded on one side only, not checked: {}",
            unchecked.join(", ")
        ));
    }
    if let (Some(x), Some(y)) = (&base.tool.git_sha, &cand.tool.git_sha)
        && x != y
    {
        notes.push(format!(
            "servebench was built from different commits ({x} vs {y}); same version, so not a \
             fingerprint difference"
        ));
    }
    (diffs, notes)
}

#[cfg(test)]
#[path = "fingerprint_tests.rs"]
mod tests;
