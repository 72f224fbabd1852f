//! Where the time goes, side by side (`evidence.kernels`, docs/kernels.md): each arm's
//! kernel (or CPU operator) time per output token by category, its top kernels, the
//! difference by category ("grouped/MoE GEMM −62% of its time, attention unchanged"), and
//! how much of TPOT is kernel time at all.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use servebench_result::RunResult;
use servebench_result::kernels::{Category, EvidenceSource, KernelEvidence};

/// A change of a category's time per token within ±this is "unchanged".
pub const UNCHANGED: f64 = 0.05;

/// Both arms' kernel evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelsReport {
    /// The baseline's.
    pub baseline: ArmKernels,
    /// The candidate's.
    pub candidate: ArmKernels,
    /// Per category present in either arm: the candidate's time per token against the
    /// baseline's.
    pub categories: Vec<CategoryChange>,
}

/// One arm's evidence, the mean over its server starts with evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmKernels {
    /// The variant.
    pub variant: String,
    /// Server starts with evidence.
    pub starts: usize,
    /// What was aggregated (kernels, or CPU operators on a CPU).
    pub source: EvidenceSource,
    /// Busy time per output token, ms.
    pub busy_per_token_ms: Option<f64>,
    /// Kernel time per decode step over the probe's median TPOT.
    pub busy_share_of_tpot: Option<f64>,
    /// Median TPOT of the probe's requests, ms.
    pub tpot_ms: Option<f64>,
    /// Per category, ms per output token.
    pub per_token_ms: BTreeMap<Category, f64>,
    /// The longest kernels of the first judged rank of the first start: (name, share,
    /// calls).
    pub top: Vec<(String, f64, u64)>,
}

/// One category's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryChange {
    /// The category.
    pub category: Category,
    /// Baseline, ms per output token.
    pub baseline_ms: f64,
    /// Candidate, ms per output token.
    pub candidate_ms: f64,
    /// Candidate / baseline − 1 (`None` where the baseline has none).
    pub change: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One arm's evidence from `result`, `None` where no start of `variant` has any.
pub fn arm(result: &RunResult, variant: &str) -> Option<ArmKernels> {
    let evs: Vec<&KernelEvidence> = result
        .kernels
        .iter()
        .filter(|k| k.variant == variant && k.error.is_none() && !k.judged_ranks().is_empty())
        .collect();
    let first = evs.first()?;
    let collect = |f: &dyn Fn(&KernelEvidence) -> Option<f64>| -> Vec<f64> {
        evs.iter().filter_map(|e| f(e)).collect()
    };
    let mut per_token_ms = BTreeMap::new();
    for c in Category::ALL {
        let v = collect(&|e| {
            e.category_per_token_ms()
                .into_iter()
                .find(|(k, _)| *k == c)
                .map(|(_, ms)| ms)
        });
        if let Some(m) = mean(&v) {
            // A start without the category counts as zero.
            per_token_ms.insert(c, m * v.len() as f64 / evs.len() as f64);
        }
    }
    let ranks = first.judged_ranks();
    let top = ranks
        .first()
        .map(|r| {
            r.kernels
                .iter()
                .take(8)
                .map(|k| (k.name.clone(), k.share, k.calls))
                .collect()
        })
        .unwrap_or_default();
    Some(ArmKernels {
        variant: variant.to_owned(),
        starts: evs.len(),
        source: ranks.first().map_or(EvidenceSource::Empty, |r| r.source),
        busy_per_token_ms: mean(&collect(&KernelEvidence::busy_per_token_ms)),
        busy_share_of_tpot: mean(&collect(&KernelEvidence::busy_share_of_tpot)),
        tpot_ms: mean(&collect(&|e| e.tpot_ms)),
        per_token_ms,
        top,
    })
}

/// Both arms' evidence and the change by category; `None` unless both have some.
pub fn kernels(
    base: &RunResult,
    base_variant: &str,
    cand: &RunResult,
    cand_variant: &str,
) -> Option<KernelsReport> {
    let baseline = arm(base, base_variant)?;
    let candidate = arm(cand, cand_variant)?;
    let categories = Category::ALL
        .iter()
        .filter_map(|c| {
            let b = baseline.per_token_ms.get(c).copied();
            let k = candidate.per_token_ms.get(c).copied();
            if b.is_none() && k.is_none() {
                return None;
            }
            let (b, k) = (b.unwrap_or(0.0), k.unwrap_or(0.0));
            Some(CategoryChange {
                category: *c,
                baseline_ms: b,
                candidate_ms: k,
                change: (b > 0.0).then(|| k / b - 1.0),
            })
        })
        .collect();
    Some(KernelsReport {
        baseline,
        candidate,
        categories,
    })
}

/// The change in words: "grouped/MoE GEMM −62% of its time, attention unchanged, …".
pub fn change_words(r: &KernelsReport) -> String {
    let parts: Vec<String> = r
        .categories
        .iter()
        .map(|c| match c.change {
            None => format!(
                "{} new ({:.3} ms a token)",
                c.category.label(),
                c.candidate_ms
            ),
            Some(x) if x.abs() < UNCHANGED => format!("{} unchanged", c.category.label()),
            Some(x) => format!(
                "{} {}{:.0}% of its time",
                c.category.label(),
                if x < 0.0 { "−" } else { "+" },
                x.abs() * 100.0
            ),
        })
        .collect();
    parts.join(", ")
}

/// One line on how much of TPOT is kernel time: small means the host sets the pace.
pub fn tpot_words(a: &ArmKernels) -> String {
    let what = match a.source {
        EvidenceSource::CpuOps => "CPU-operator",
        _ => "GPU kernel",
    };
    match a.busy_share_of_tpot {
        Some(s) if s < 0.5 => format!(
            "`{}`: {what} time is {:.0}% of TPOT: the host side, not the {}, sets the pace",
            a.variant,
            s * 100.0,
            if a.source == EvidenceSource::CpuOps {
                "operators"
            } else {
                "GPU"
            }
        ),
        Some(s) => format!("`{}`: {what} time is {:.0}% of TPOT", a.variant, s * 100.0),
        None => format!("`{}`: no TPOT to set {what} time against", a.variant),
    }
}

/// The text lines `compare` prints.
pub fn lines(r: &KernelsReport) -> Vec<String> {
    let mut out = vec!["kernels (evidence.kernels, per output token of the probe):".to_owned()];
    for a in [&r.baseline, &r.candidate] {
        out.push(format!(
            "  {}: busy {} ms a token over {} start(s); {}",
            a.variant,
            a.busy_per_token_ms
                .map_or_else(|| "?".to_owned(), |b| format!("{b:.3}")),
            a.starts,
            a.per_token_ms
                .iter()
                .map(|(c, ms)| format!("{} {ms:.3}", c.label()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for (name, share, calls) in a.top.iter().take(3) {
            out.push(format!(
                "    {:>5.1}% {:>6}× {}",
                share * 100.0,
                calls,
                name.chars().take(100).collect::<String>()
            ));
        }
    }
    out.push(format!("  change: {}", change_words(r)));
    for a in [&r.baseline, &r.candidate] {
        out.push(format!("  {}", tpot_words(a)));
    }
    out
}
