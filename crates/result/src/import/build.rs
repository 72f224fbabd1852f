//! An [`Imported`] run as a servebench [`RunResult`]: a spec that says what the tool ran
//! (no `server` block: the tool did not launch it), one sweep point, one trial whose summary
//! holds the tool's metrics under `reported` and, when the file kept per-request arrays,
//! latencies recomputed from them with servebench's definitions.

use std::collections::BTreeMap;

use servebench_spec::plan::plan;
use servebench_spec::{
    ApiVersion, ArrivalProcess, CompareSettings, Dataset, ExperimentSpec, Kind, Metadata,
    Provenance, ServerPatch, SpecFile, Sweep, Target, TokenizerSource, Trials, Variant, Workload,
};

use super::{ImportError, ImportOptions, Imported, PerRequest};
use crate::metrics::histograms::{HistogramSet, record_ms};
use crate::metrics::{LatencyStats, TokenAccounting, TrialSummary, WindowSummary};
use crate::{
    ImportInfo, RESULT_SCHEMA_VERSION, RunResult, RunStatus, ToolInfo, TrialResult, TrialStatus,
};
use crate::{now_rfc3339, point_info};

const NAME_PATTERN: &str = "^[a-z0-9][a-z0-9._-]{0,127}$";
const VARIANT_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// Names given on the command line are used as written or refused: `compare` pairs variants
/// by exact name, so a `--variant` quietly rewritten would no longer meet its arm.
pub(super) fn check_names(opts: &ImportOptions) -> Result<(), ImportError> {
    let check = |what, value: &Option<String>, pattern, fixed: fn(&str) -> String| match value {
        Some(v) if fixed(v) != *v => Err(ImportError::BadName {
            what,
            value: v.clone(),
            pattern,
            hint: format!("write e.g. `{}`", fixed(v)),
        }),
        _ => Ok(()),
    };
    check("--name", &opts.name, NAME_PATTERN, sanitize_name)?;
    check("--variant", &opts.variant, VARIANT_PATTERN, variant_name)
}

/// A name that fits `metadata.name` (NAME_PATTERN), made from a tool's model or backend.
pub fn sanitize_name(raw: &str) -> String {
    fit(&raw.to_lowercase(), 128, "imported")
}

/// A name that fits a variant (VARIANT_PATTERN: case kept).
fn variant_name(raw: &str) -> String {
    fit(raw, 64, "imported")
}

/// `raw` with characters outside `[A-Za-z0-9._-]` made `-`, no leading `.`, `_` or `-`, at
/// most `max` characters; `empty` when nothing is left.
fn fit(raw: &str, max: usize, empty: &str) -> String {
    let mut s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while s.starts_with(['.', '_', '-']) {
        s.remove(0);
    }
    s.truncate(max);
    if s.is_empty() { empty.into() } else { s }
}

fn spec_of(im: &Imported, opts: &ImportOptions) -> SpecFile {
    // As `from` writes it (one rule): a hub id the tool counted with is the served
    // model's own counting, `server`; only a tokenizer.json file is `local`.
    let (tokenizer, tokenizer_path) = TokenizerSource::of_peer(im.tokenizer.as_deref());
    let model = im.model.clone().unwrap_or_else(|| "unknown".into());
    let short_model = model.rsplit('/').next().unwrap_or(&model).to_owned();
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| sanitize_name(&format!("{}-{short_model}", im.tool.as_str())));
    let mut labels = im.labels.clone();
    labels.insert("imported-from".into(), im.tool.as_str().into());
    let (arrival, burstiness) = match im.burstiness {
        Some(b) if (b - 1.0).abs() > 1e-12 => (ArrivalProcess::Gamma, Some(b)),
        _ => (ArrivalProcess::Poisson, None),
    };
    // Not recorded by either tool: their own defaults, as `servebench from` writes them for
    // the same command, so the two converters fill the workload alike (docs/import.md).
    let (seed, warmup_requests) = match im.tool {
        super::ImportTool::Sglang => (
            servebench_spec::peer::sglang::DEFAULT_SEED,
            servebench_spec::peer::sglang::DEFAULT_WARMUP_REQUESTS,
        ),
        super::ImportTool::Vllm => (
            servebench_spec::peer::vllm::DEFAULT_SEED,
            servebench_spec::peer::vllm::DEFAULT_WARMUP_REQUESTS,
        ),
    };
    let variant = opts
        .variant
        .clone()
        .unwrap_or_else(|| variant_name(&im.backend));
    SpecFile {
        api_version: ApiVersion::V1Alpha1,
        kind: Kind::Experiment,
        metadata: Metadata {
            name,
            description: Some(format!(
                "imported from {} result {}",
                im.tool.as_str(),
                im.source.display()
            )),
            labels,
        },
        spec: ExperimentSpec {
            server: None,
            target: Target {
                base_url: None,
                api: im.api,
                model,
                engine: Default::default(),
                tokenizer,
                tokenizer_path,
                api_key_env: None,
                headers: BTreeMap::new(),
                tls: None,
            },
            variants: vec![Variant {
                name: variant,
                baseline: true,
                server: ServerPatch::default(),
                base_url: None,
                vars: BTreeMap::new(),
                request_body: None,
            }],
            workload: Workload {
                dataset: Dataset {
                    kind: im.dataset,
                    input_tokens: im.input_tokens,
                    output_tokens: im.output_tokens,
                    path: None,
                    shared_prefix: None,
                    multi_turn: None,
                    trace: None,
                    image: None,
                },
                ignore_eos: im.ignore_eos,
                requests: Some(im.requests.max(1)),
                request_rate: im.request_rate,
                arrival,
                burstiness,
                max_concurrency: None,
                seed,
                warmup_requests,
                ..default_workload()
            },
            // The concurrency limit as a one-value sweep, as servebench specs usually write it
            // (the point label, which `compare` matches on, is the same either way).
            sweep: Sweep {
                max_concurrency: im.max_concurrency.map(|c| vec![c]),
                ..Sweep::default()
            },
            trials: Trials {
                count: 1,
                ..Trials::default()
            },
            compare: CompareSettings::default(),
            slo: None,
            search: None,
            provenance: Provenance::default(),
            telemetry: None,
            model_facts: None,
            equivalence: None,
            evidence: None,
            setup: None,
        },
    }
}

/// The workload defaults, read through serde so they stay the spec crate's.
fn default_workload() -> Workload {
    serde_json::from_value(serde_json::json!({"dataset": {"kind": "random"}}))
        .expect("a workload of only a dataset is valid: every other field has a default")
}

/// Latencies recomputed from the per-request arrays with servebench's definitions: E2E =
/// TTFT + Σ gaps (the last token-bearing chunk), TPOT = (E2E − TTFT)/(N_out − 1) for
/// N_out ≥ 2, ITL per chunk.
fn recompute(p: &PerRequest, w: &mut WindowSummary) -> HistogramSet {
    let mut hist = HistogramSet::default();
    let (mut ttft, mut tpot, mut itl, mut e2e) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..p.ttfts.len() {
        if !p.ok(i) {
            continue;
        }
        let t = p.ttfts[i];
        let gaps: f64 = p.itls[i].iter().sum();
        let e = (t + gaps) * 1000.0;
        ttft.push(t * 1000.0);
        e2e.push(e);
        record_ms(&mut hist.ttft, t * 1000.0);
        record_ms(&mut hist.e2e, e);
        let n = p.output_lens[i];
        if n >= 2 {
            let v = (e - t * 1000.0) / (n - 1) as f64;
            tpot.push(v);
            record_ms(&mut hist.tpot, v);
        }
        for g in &p.itls[i] {
            itl.push(g * 1000.0);
            record_ms(&mut hist.itl, g * 1000.0);
        }
    }
    w.ttft = LatencyStats::from_values(ttft);
    w.tpot = LatencyStats::from_values(tpot);
    w.itl = LatencyStats::from_values(itl);
    w.e2e = LatencyStats::from_values(e2e);
    hist
}

fn summary(im: &Imported) -> TrialSummary {
    let r = |k: &str| im.reported.get(k).copied();
    let total = im.completed + im.failed;
    let mut all = WindowSummary {
        window_ns: None,
        duration_s: im.duration_s,
        requests: total as usize,
        completed: im.completed as usize,
        failed: im.failed as usize,
        output_tokens: im.output_tokens_total.unwrap_or(0),
        input_tokens: im.input_tokens_total.unwrap_or(0),
        output_throughput: r("output_throughput"),
        total_throughput: r("total_throughput"),
        request_throughput: r("request_throughput"),
        goodput: r("goodput"),
        error_rate: (total > 0).then(|| im.failed as f64 / total as f64),
        peak_concurrency: r("peak_concurrency").map_or(0, |v| v as usize),
        mean_concurrency: r("mean_concurrency"),
        ..WindowSummary::default()
    };
    let hist = match &im.per_request {
        Some(p) => recompute(p, &mut all),
        None => HistogramSet::default(),
    };
    // The trial-level values went into the window above; `reported` keeps the rest of what
    // the tool wrote (its latency percentiles, which the window recomputes where it can).
    let mut reported = im.reported.clone();
    for k in [
        "output_throughput",
        "total_throughput",
        "request_throughput",
        "goodput",
        "mean_concurrency",
        "peak_concurrency",
    ] {
        reported.remove(k);
    }
    TrialSummary {
        all,
        steady: WindowSummary::default(),
        max_concurrency: im.max_concurrency.map(|c| c as usize),
        // Not known from another tool's file: load-not-sustained is not checked.
        limit_held_fraction: None,
        rate_held_fraction: None,
        send_lateness: None,
        turns: Vec::new(),
        scheduled_rate: None,
        achieved_rate: None,
        concurrency_limit_exceeded: false,
        errors: BTreeMap::new(),
        flags: BTreeMap::new(),
        input_mismatch: None,
        batched_event_share: None,
        tokens: TokenAccounting {
            usage_output_tokens: im.output_tokens_total.unwrap_or(0),
            ..TokenAccounting::default()
        },
        ttft_overhead: None,
        histograms: hist.encode(),
        percentile_method: match im.per_request {
            Some(_) => "linear interpolation (Hyndman-Fan 7, numpy default) over the imported \
                        per-request values"
                .into(),
            None => format!(
                "as reported by {} (numpy linear percentiles); no per-request values",
                im.tool.as_str()
            ),
        },
        reported,
        telemetry: None,
        decode_ceiling: None,
    }
}

/// The servebench result of an imported run.
pub fn build_result(im: &Imported, opts: &ImportOptions) -> RunResult {
    let spec = spec_of(im, opts);
    let variant = spec.spec.variants[0].name.clone();
    let hash_tail = im
        .source_sha256
        .trim_start_matches("sha256:")
        .chars()
        .take(8)
        .collect::<String>();
    let run_id = match im.line {
        Some(l) => format!("imported-{}-{hash_tail}-l{l}", im.tool.as_str()),
        None => format!("imported-{}-{hash_tail}", im.tool.as_str()),
    };
    let now = now_rfc3339();
    let plan = plan(&spec);
    let measured = im.measured_at.clone().unwrap_or_default();
    let status = if im.completed > 0 {
        TrialStatus::Ok
    } else {
        TrialStatus::Failed
    };
    let trial = TrialResult {
        seq: 0,
        block: 0,
        variant,
        trial: 1,
        point: 0,
        repeat: 1,
        prompt_seed: 0,
        status,
        failure: (status == TrialStatus::Failed)
            .then(|| format!("{} recorded no successful request", im.tool.as_str())),
        started_at: measured.clone(),
        ended_at: measured,
        errors: if im.failed > 0 {
            BTreeMap::from([(
                "failed (as the tool counted)".to_owned(),
                im.failed as usize,
            )])
        } else {
            BTreeMap::new()
        },
        summary: Some(summary(im)),
        receive_stamps: None,
        host_load: None,
    };
    let mut notes = im.notes.clone();
    notes.push(
        "one run of the tool is one trial: no interval, and no between-trial variance".into(),
    );
    if im.per_request.is_some() {
        notes.push(
            "latency percentiles were recomputed from the per-request ttfts and itls with \
             servebench's definitions; the tool's own values are kept under `reported`"
                .into(),
        );
    }
    RunResult {
        schema_version: RESULT_SCHEMA_VERSION,
        origin: crate::Origin::Imported,
        run_id,
        status: RunStatus::Complete,
        error: None,
        created_at: now.clone(),
        updated_at: now,
        resumes: Vec::new(),
        spec_name: spec.metadata.name.clone(),
        spec_hash: plan.spec_hash.clone(),
        points: point_info(&plan),
        spec,
        spec_path: None,
        overrides: Vec::new(),
        tool: ToolInfo {
            version: format!(
                "{} (imported by servebench {})",
                match im.tool {
                    super::ImportTool::Sglang => "sglang bench_serving",
                    super::ImportTool::Vllm => "vllm bench serve",
                },
                env!("CARGO_PKG_VERSION")
            ),
            git_sha: None,
        },
        repo: None,
        host: None,
        host_probe: None,
        accelerators: Vec::new(),
        provenance: Default::default(),
        servers: Vec::new(),
        trials: vec![trial],
        requests_file: None,
        import: Some(ImportInfo {
            tool: im.tool.as_str().into(),
            source_file: im.source.display().to_string(),
            source_sha256: im.source_sha256.clone(),
            line: im.line,
            measured_at: im.measured_at.clone(),
            mapped: im.mapped.clone(),
            ignored: im.ignored.clone(),
            notes,
        }),
        looks: Vec::new(),
        search: None,
        preflight: Vec::new(),
        model_facts: None,
        equivalence: Vec::new(),
        kernels: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_spec_pattern() {
        assert_eq!(sanitize_name("vllm-Llama-3.1-8B"), "vllm-llama-3.1-8b");
        assert_eq!(sanitize_name("__x y"), "x-y");
        assert_eq!(sanitize_name("///"), "imported");
    }
}
