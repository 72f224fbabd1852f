//! Whether the outputs reproduced (`spec.equivalence`, docs/equivalence.md): when both the
//! published run and the re-run carry probes, per published comparison (each variant
//! against the baseline variant) whether the output-equivalence verdict — and, with
//! reference answers, the accuracy verdict — came out the same in the re-run; and per
//! variant whether its own outputs are the same across the two runs (the same prompts sent
//! to the same engine: the published starts are the reference, the re-run's starts the
//! candidate, judged as any comparison is).

use serde::{Deserialize, Serialize};

use crate::LoadedResult;
use crate::equivalence::equivalence;

/// One published comparison's output verdicts, published and re-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputClaim {
    /// The candidate variant.
    pub candidate: String,
    /// The baseline variant.
    pub baseline: String,
    /// The published output-equivalence verdict (`not judged` when no prompt was).
    pub published: String,
    /// The re-run's.
    pub new: String,
    /// Both judged and the same verdict.
    pub reproduced: bool,
    /// With reference answers: the published accuracy verdict and the re-run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<(String, String)>,
}

/// One variant's outputs across the two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputsAcross {
    /// The variant.
    pub variant: String,
    /// Prompts compared (answered in both runs).
    pub prompts: usize,
    /// Share of prompts whose re-run outputs are identical to every published output.
    pub identical: f64,
    /// The verdict of the re-run's outputs against the published run's (`not judged`
    /// with fewer than two published starts).
    pub verdict: String,
}

/// The `outputs` object of a rerun report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputsReproduction {
    /// One row per published comparison.
    pub comparisons: Vec<OutputClaim>,
    /// One row per variant.
    pub variants: Vec<OutputsAcross>,
}

fn word(prompts: usize, verdict: &str) -> String {
    if prompts == 0 {
        "not judged".to_owned()
    } else {
        verdict.to_owned()
    }
}

/// `None` unless both runs carry probes.
pub(super) fn outputs(
    published: &LoadedResult,
    new: &LoadedResult,
    alpha: f64,
) -> Option<OutputsReproduction> {
    let (p, n) = (&published.result, &new.result);
    if p.equivalence.is_empty() || n.equivalence.is_empty() {
        return None;
    }
    let variants = &p.spec.spec.variants;
    let base = variants
        .iter()
        .find(|v| v.baseline)
        .or_else(|| variants.first())?;
    let mut comparisons = Vec::new();
    for v in variants.iter().filter(|v| v.name != base.name) {
        let (Some(a), Some(b)) = (
            equivalence(p, &base.name, p, &v.name, alpha),
            equivalence(n, &base.name, n, &v.name, alpha),
        ) else {
            continue;
        };
        let (was, now) = (word(a.prompts, &a.verdict), word(b.prompts, &b.verdict));
        comparisons.push(OutputClaim {
            candidate: v.name.clone(),
            baseline: base.name.clone(),
            reproduced: a.prompts > 0 && b.prompts > 0 && was == now,
            published: was,
            new: now,
            accuracy: match (&a.accuracy, &b.accuracy) {
                (Some(x), Some(y)) => Some((x.verdict.clone(), y.verdict.clone())),
                _ => None,
            },
        });
    }
    let across = variants
        .iter()
        .filter_map(|v| {
            let e = equivalence(p, &v.name, n, &v.name, alpha)?;
            Some(OutputsAcross {
                variant: v.name.clone(),
                prompts: e.prompts,
                identical: e.identical,
                verdict: word(e.prompts, &e.verdict),
            })
        })
        .collect();
    Some(OutputsReproduction {
        comparisons,
        variants: across,
    })
}

/// The section of the text report.
pub(super) fn lines(o: &OutputsReproduction) -> Vec<String> {
    let mut out = vec!["outputs (equivalence probe), published → re-run:".to_owned()];
    for c in &o.comparisons {
        let mut l = format!(
            "  {} vs {}: outputs {} → {}: {}",
            c.candidate,
            c.baseline,
            c.published,
            c.new,
            if c.reproduced {
                "reproduced"
            } else if c.published == "not judged" || c.new == "not judged" {
                "not judged"
            } else {
                "NOT reproduced"
            }
        );
        if let Some((was, now)) = &c.accuracy {
            l.push_str(&format!(
                "; accuracy {was} → {now}: {}",
                if was == now {
                    "reproduced"
                } else {
                    "NOT reproduced"
                }
            ));
        }
        out.push(l);
    }
    for v in &o.variants {
        if v.prompts == 0 {
            out.push(format!(
                "  {}: its outputs across the two runs not judged (it needs two published \
                 server starts)",
                v.variant
            ));
        } else {
            out.push(format!(
                "  {}: {:.0}% of {} prompts gave the published outputs in the re-run (outputs \
                 {} against the published starts)",
                v.variant,
                100.0 * v.identical,
                v.prompts,
                v.verdict
            ));
        }
    }
    out
}
