//! "What was run": the spec and its hash, each run (id, status, servebench version and git
//! SHA, host, accelerators), the workload, sweep and trials, and the variants with what
//! differs between them — their own server args and env — and what their servers said.

use std::collections::BTreeMap;

use servebench_result::{RunResult, ServerStart, TrialStatus};

use super::doc::{Block, Line, code, t};
use super::model::{Report, Role};

fn gib(bytes: u64) -> String {
    format!("{:.0} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn host(r: &RunResult) -> String {
    match &r.host {
        Some(h) => format!(
            "{}: {}, kernel {}, {} ({} cores), {} RAM",
            h.hostname,
            h.os,
            h.kernel,
            h.cpu,
            h.cores,
            gib(h.memory_bytes)
        ),
        None => "not recorded".into(),
    }
}

fn accelerators(r: &RunResult) -> String {
    if r.accelerators.is_empty() {
        return "none recorded (no nvidia-smi)".into();
    }
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for a in &r.accelerators {
        let cuda = a
            .cuda_version
            .as_deref()
            .map(|c| format!(", CUDA {c}"))
            .unwrap_or_default();
        let key = format!(
            "{} ({} MiB, driver {}{cuda})",
            a.name, a.memory_total_mib, a.driver_version
        );
        *groups.entry(key).or_default() += 1;
    }
    groups
        .into_iter()
        .map(|(k, n)| format!("{n} × {k}"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn trials(r: &RunResult) -> String {
    let ok = r
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .count();
    let planned = r.spec.spec.variants.len() * r.points.len() * r.spec.spec.trials.count as usize;
    format!(
        "{} recorded of {planned} planned ({ok} ok, {} failed)",
        r.trials.len(),
        r.trials.len() - ok
    )
}

fn serde_word<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

/// `key: value` pairs of a JSON object, nested keys dotted, nulls left out.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        serde_json::Value::Null => {}
        serde_json::Value::String(s) => out.push((prefix.to_owned(), s.clone())),
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}

fn workload(r: &RunResult) -> String {
    let mut pairs = Vec::new();
    flatten(
        "",
        &serde_json::to_value(&r.spec.spec.workload).unwrap_or_default(),
        &mut pairs,
    );
    pairs
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn sweep(r: &RunResult) -> String {
    r.points
        .iter()
        .map(|p| p.label.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

fn trial_plan(r: &RunResult) -> String {
    let t = &r.spec.spec.trials;
    format!(
        "{} per cell, order {}, server restart {}",
        t.count,
        serde_word(&t.order),
        serde_word(&t.server_restart)
    )
}

fn tool(r: &RunResult) -> String {
    let repo = match &r.repo {
        Some(repo) => format!(
            "; spec repository at {}{}",
            repo.sha,
            if repo.dirty { " (dirty)" } else { "" }
        ),
        None => String::new(),
    };
    format!(
        "servebench {} (git {}){repo}",
        r.tool.version,
        r.tool.git_sha.as_deref().unwrap_or("unknown")
    )
}

/// One row per fact, one column per result file.
fn run_table(report: &Report) -> Block {
    type Fact = fn(&RunResult) -> String;
    let facts: [(&str, Fact); 12] = [
        ("spec", |r| r.spec_name.clone()),
        ("spec hash", |r| r.spec_hash.clone()),
        ("run id", |r| r.run_id.clone()),
        ("status", |r| serde_word(&r.status)),
        ("measured", |r| {
            format!("{} → {}", r.created_at, r.updated_at)
        }),
        ("tool", tool),
        ("host", host),
        ("accelerators", accelerators),
        ("workload", workload),
        ("sweep", sweep),
        ("trials", trial_plan),
        ("recorded", trials),
    ];
    let mut header = vec![String::new()];
    let two = report.sources.len() > 1;
    for (i, s) in report.sources.iter().enumerate() {
        header.push(match (two, i) {
            (false, _) => format!("`{}`", s.file),
            (true, 0) => format!("baseline: `{}`", s.file),
            (true, _) => format!("candidate: `{}`", s.file),
        });
    }
    let rows = facts
        .iter()
        .map(|(name, f)| {
            let mut row: Vec<Line> = vec![vec![t(*name)]];
            for s in &report.sources {
                let v = f(&s.result);
                row.push(if matches!(*name, "spec hash" | "run id") {
                    vec![code(v)]
                } else {
                    vec![t(v)]
                });
            }
            row
        })
        .collect();
    Block::Table {
        header,
        right: Vec::new(),
        rows,
    }
}

fn patch(r: &RunResult, variant: &str) -> Line {
    let Some(v) = r.spec.spec.variants.iter().find(|v| v.name == variant) else {
        return vec![t("not in the spec")];
    };
    let mut parts: Vec<String> = v.patch_words();
    if let Some(url) = &v.base_url {
        parts.push(format!("base_url {url}"));
    }
    if parts.is_empty() {
        vec![t("none (the common command as is)")]
    } else {
        vec![code(parts.join(" "))]
    }
}

fn starts<'r>(r: &'r RunResult, variant: &str) -> Vec<&'r ServerStart> {
    r.servers.iter().filter(|s| s.variant == variant).collect()
}

fn verified(starts: &[&ServerStart]) -> String {
    if starts.is_empty() {
        return "no server started (external target)".into();
    }
    let rules: usize = starts.iter().map(|s| s.verify.len()).sum();
    let passed: usize = starts
        .iter()
        .map(|s| s.verify.iter().filter(|v| v.passed).count())
        .sum();
    // A start whose verify failed did start: it is said as such, apart from one that did
    // not start (or whose API did not answer).
    let failed_verify = starts
        .iter()
        .filter(|s| s.verify.iter().any(|v| !v.passed))
        .count();
    let failed_starts = starts
        .iter()
        .filter(|s| s.error.is_some() && !s.verify.iter().any(|v| !v.passed))
        .count();
    let mut out = if rules == 0 {
        "no verify rules".to_owned()
    } else {
        format!("{passed}/{rules} rule checks passed")
    };
    out.push_str(&format!(" over {} start(s)", starts.len()));
    if failed_verify > 0 {
        out.push_str(&format!(", {failed_verify} failed verify"));
    }
    if failed_starts > 0 {
        out.push_str(&format!(", {failed_starts} failed to start"));
    }
    out
}

fn server_said(starts: &[&ServerStart]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for s in starts {
        let Some(info) = &s.info else { continue };
        let get = |k: &str| info.info.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let said = match (get("server"), get("version")) {
            (Some(name), Some(v)) => format!("{name} {v}"),
            (None, Some(v)) => format!("version {v}"),
            _ => format!("answered {}", info.endpoint),
        };
        if !seen.contains(&said) {
            seen.push(said);
        }
    }
    if seen.is_empty() {
        "—".into()
    } else {
        seen.join("; ")
    }
}

fn ready(starts: &[&ServerStart]) -> String {
    let times: Vec<f64> = starts.iter().filter_map(|s| s.ready_after_s).collect();
    match (
        times.iter().copied().reduce(f64::min),
        times.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!("{lo:.2}–{hi:.2} s"),
        _ => "—".into(),
    }
}

/// The variants: role, own change, verification, server self-report, readiness.
fn variant_table(report: &Report) -> Block {
    let rows = report
        .arms
        .iter()
        .map(|arm| {
            let r = report.result(arm);
            let st = starts(r, &arm.variant);
            vec![
                vec![code(arm.variant.clone())],
                vec![t(match (report.sources.len() > 1, arm.role) {
                    (false, Role::Baseline) => "baseline".to_owned(),
                    (false, Role::Candidate) => "candidate".to_owned(),
                    (true, Role::Baseline) => format!("baseline (run {})", r.run_id),
                    (true, Role::Candidate) => format!("candidate (run {})", r.run_id),
                })],
                patch(r, &arm.variant),
                vec![t(verified(&st))],
                vec![t(server_said(&st))],
                vec![t(ready(&st))],
            ]
        })
        .collect();
    Block::Table {
        header: [
            "variant",
            "role",
            "its own patch (server args, env, request_body)",
            "verified",
            "server reports",
            "ready after",
        ]
        .map(String::from)
        .to_vec(),
        right: Vec::new(),
        rows,
    }
}

fn common_command(r: &RunResult) -> Option<String> {
    let server = r.spec.spec.server.as_ref()?;
    let mut argv = server.command.clone();
    argv.extend(server.args.iter().cloned());
    let env: Vec<String> = server.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let env = if env.is_empty() {
        String::new()
    } else {
        format!("{} ", env.join(" "))
    };
    Some(format!("{env}{}", argv.join(" ")))
}

/// The "What was run" section.
pub fn blocks(report: &Report) -> Vec<Block> {
    let mut out = vec![Block::Heading(2, "What was run".into()), run_table(report)];
    out.push(Block::Heading(3, "Variants".into()));
    out.push(Block::Para(vec![t(
        "Each variant runs the common server command with its own args and env appended, \
         and sends its own request_body fields over the workload's; that patch is all that \
         differs between them.",
    )]));
    out.push(variant_table(report));
    for (i, s) in report.sources.iter().enumerate() {
        if let Some(cmd) = common_command(&s.result) {
            let which = if report.sources.len() > 1 {
                format!(
                    " of {}",
                    if i == 0 {
                        "the baseline"
                    } else {
                        "the candidate"
                    }
                )
            } else {
                String::new()
            };
            out.push(Block::Para(vec![t(format!(
                "Common server command{which}:"
            ))]));
            out.push(Block::Code(cmd));
        }
    }
    out
}
