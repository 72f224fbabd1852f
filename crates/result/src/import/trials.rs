//! `servebench import … --as-trials`: several runs of another tool, the same workload
//! measured again and again (vLLM's `--append-result` lines, a loop over `bench_serving`), as
//! the trials of one arm of one result. Each run is one trial, so the runs' spread is the
//! trial-to-trial variance an interval and a verdict need — the one thing N one-trial results
//! cannot give, since `compare` never pools results across files.
//!
//! Runs pool only when they measured the same thing: the same workload (dataset, lengths,
//! requests, rate, concurrency…), model, API and variant name, compared on the specs the
//! import made of them. Anything else is refused with the first difference, at the file and
//! line of the run that differs.

use servebench_spec::plan::plan;

use super::ImportError;
use crate::{RunResult, point_info};

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The first spec field on which `b` differs from `a`, in words.
fn first_difference(a: &RunResult, b: &RunResult) -> Option<String> {
    let (sa, sb) = (&a.spec.spec, &b.spec.spec);
    let variant = |s: &servebench_spec::ExperimentSpec| {
        s.variants
            .first()
            .map(|v| v.name.clone())
            .unwrap_or_default()
    };
    [
        ("workload", json(&sa.workload), json(&sb.workload)),
        ("sweep (concurrency)", json(&sa.sweep), json(&sb.sweep)),
        (
            "target.model",
            sa.target.model.clone(),
            sb.target.model.clone(),
        ),
        ("target.api", json(&sa.target.api), json(&sb.target.api)),
        ("variant", variant(sa), variant(sb)),
    ]
    .into_iter()
    .find(|(_, x, y)| x != y)
    .map(|(what, x, y)| format!("its {what} is {y}, the first run's {x}"))
}

/// `source:line` of an imported run, for messages and notes.
fn whence(r: &RunResult) -> String {
    match &r.import {
        Some(i) => match i.line {
            Some(l) => format!("{}:{l}", i.source_file),
            None => i.source_file.clone(),
        },
        None => r.run_id.clone(),
    }
}

/// Refuses a run given twice (the same file named twice, a copy of it, or the same line
/// twice): pooled, it would count one measurement as two trials and narrow the interval on
/// evidence that is not there. Two runs are the same when their measured trial is, value
/// for value (two real runs never agree to the microsecond on every figure).
fn refuse_repeats(runs: &[RunResult]) -> Result<(), ImportError> {
    let key = |r: &RunResult| serde_json::to_string(&r.trials).unwrap_or_default();
    for (i, r) in runs.iter().enumerate() {
        if let Some(earlier) = runs[..i].iter().find(|e| key(e) == key(r)) {
            let (path, line) = match &r.import {
                Some(info) => (info.source_file.clone().into(), info.line.unwrap_or(1)),
                None => (r.run_id.clone().into(), 1),
            };
            return Err(ImportError::Field {
                path,
                line,
                message: format!(
                    "this run is the same as {} (every measured value equal): pooled twice it                      would count one run as two trials. Give each run once (drop the repeated                      file or line)",
                    whence(earlier)
                ),
            });
        }
    }
    Ok(())
}

/// The imported `runs` (one trial each, in the order given) as one result whose single arm
/// has one trial per run.
pub fn pool_as_trials(runs: Vec<RunResult>) -> Result<RunResult, ImportError> {
    let Some(first) = runs.first() else {
        return Err(ImportError::Empty {
            path: "(no file)".into(),
            message: "nothing to pool: give the runs' files".into(),
        });
    };
    refuse_repeats(&runs)?;
    for r in &runs[1..] {
        if let Some(diff) = first_difference(first, r) {
            let (path, line) = match &r.import {
                Some(i) => (i.source_file.clone().into(), i.line.unwrap_or(1)),
                None => (r.run_id.clone().into(), 1),
            };
            return Err(ImportError::Field {
                path,
                line,
                message: format!(
                    "cannot pool this run with {} as trials of one arm: {diff}. Runs pool \
                     only when they measured the same workload; import the others without \
                     --as-trials, or give the lengths a file does not record \
                     (--input-tokens, --output-tokens) alike",
                    whence(first)
                ),
            });
        }
    }
    let n = runs.len();
    let mut out = first.clone();
    out.spec.spec.trials.count = n as u32;
    let planned = plan(&out.spec);
    out.spec_hash = planned.spec_hash.clone();
    out.points = point_info(&planned);
    let mut shas: Vec<String> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut trial_notes = Vec::new();
    out.trials = Vec::with_capacity(n);
    for (i, r) in runs.iter().enumerate() {
        let Some(t) = r.trials.first() else { continue };
        let mut t = t.clone();
        t.seq = i;
        t.block = i;
        t.trial = i as u32 + 1;
        out.trials.push(t);
        if let Some(info) = &r.import {
            if !shas.contains(&info.source_sha256) {
                shas.push(info.source_sha256.clone());
            }
            if !sources.contains(&info.source_file) {
                sources.push(info.source_file.clone());
            }
            trial_notes.push(format!(
                "trial {}: {}{}",
                i + 1,
                whence(r),
                info.measured_at
                    .as_deref()
                    .map(|d| format!(" (measured {d})"))
                    .unwrap_or_default()
            ));
        }
    }
    let digest = {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(shas.join(",").as_bytes()))
    };
    let tool = out
        .import
        .as_ref()
        .map_or_else(|| "tool".to_owned(), |i| i.tool.clone());
    out.run_id = format!("imported-{tool}-{}-x{n}", &digest[..8]);
    if let Some(info) = &mut out.import {
        info.source_file = sources.join(", ");
        info.source_sha256 = if shas.len() == 1 {
            shas[0].clone()
        } else {
            format!("sha256:{digest}")
        };
        info.line = None;
        info.notes
            .retain(|n| !n.starts_with("one run of the tool is one trial"));
        info.notes.push(format!(
            "{n} runs of the tool pooled as {n} trials of one arm (`--as-trials`): each run is \
             one trial, and the spread between runs is the trial-to-trial variance the \
             intervals use; the runs were measured in separate sessions of the tool, in the \
             order below, so drift between them counts as variance"
        ));
        if shas.len() > 1 {
            info.notes.push(format!(
                "source_sha256 is the sha256 of the files' own sha256s ({}), in order",
                shas.join(", ")
            ));
        }
        info.notes.extend(trial_notes);
    }
    Ok(out)
}
