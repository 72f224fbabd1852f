//! Output equivalence of a comparison (`spec.equivalence`, docs/equivalence.md): the
//! candidate's probe outputs against the baseline's, judged against the baseline's own
//! repeatability across its server starts (stats' `outputs::divergence`), at the first
//! probe concurrency; at a second one, each arm's batch invariance and the verdict there.

mod accuracy;
mod collapse;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use servebench_result::{ProbeOutput, ProbeRecord, RunResult, first_difference};
use servebench_spec::Equivalence;
use servebench_stats::outputs::{Divergence, OutputVerdict, PromptStarts, divergence};

pub use accuracy::{AccuracyReport, POOLING, line as accuracy_line};
pub use collapse::Collapse;

/// The `equivalence` object of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EquivalenceReport {
    /// `unchanged`, `changed` or `inconclusive`: the verdict at the first probe
    /// concurrency (a second one's is in `batch`).
    pub verdict: String,
    /// The concurrency judged.
    pub concurrency: u32,
    /// What outputs were compared by: `token_ids`, `tokens` or `text` (the coarsest of both
    /// arms').
    pub compared_by: String,
    /// Probe prompts compared (answered by two baseline starts and one candidate start).
    pub prompts: usize,
    /// Server starts probed, per arm.
    pub baseline_starts: usize,
    /// Server starts probed of the candidate.
    pub candidate_starts: usize,
    /// Share of prompts whose output was identical at every baseline start: the engine's
    /// own repeatability.
    pub baseline_identical: f64,
    /// Share of prompts whose candidate outputs were all identical to every baseline
    /// output.
    pub identical: f64,
    /// The test: own and cross divergence, the interval on their difference, p, the
    /// method, the prompts that would settle an inconclusive verdict.
    pub test: Divergence,
    /// Significance level α.
    pub alpha: f64,
    /// `unchanged` needs the interval's upper end at most this.
    pub margin: f64,
    /// First positions (tokens, or words of text) where a baseline start's output differs
    /// from the first baseline start's, one per differing prompt and start.
    pub first_divergence_baseline: Vec<usize>,
    /// First positions where a candidate start's output differs from the first baseline
    /// start's.
    pub first_divergence_candidate: Vec<usize>,
    /// Where both arms returned the chosen tokens' log-probabilities: the mean absolute
    /// difference over the positions before the first divergence, candidate against the
    /// first baseline start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprob_mean_abs_diff: Option<f64>,
    /// At a second probe concurrency: each arm's outputs there against its own at the
    /// first, and the verdict there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchReport>,
    /// With `equivalence.reference`: each arm's task accuracy at the first probe
    /// concurrency and the paired comparison (McNemar).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracyReport>,
    /// The baseline gave one completion to most of its distinct prompts (an uninformative
    /// probe): `unchanged` is then reported as `inconclusive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<Collapse>,
    /// What to do about an inconclusive verdict, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
    /// Probe requests that failed, and other sentences.
    pub notes: Vec<String>,
}

/// The second probe concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// The concurrency.
    pub concurrency: u32,
    /// Share of prompts whose baseline outputs there equal its outputs at the first
    /// concurrency, start by start.
    pub baseline_invariant: f64,
    /// The same for the candidate.
    pub candidate_invariant: f64,
    /// The verdict there (candidate against baseline at this concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

fn records<'a>(r: &'a RunResult, variant: &str, c: u32) -> Vec<&'a ProbeRecord> {
    r.equivalence
        .iter()
        .filter(|p| p.variant == variant && p.concurrency == c)
        .collect()
}

/// The coarsest basis of `recs`: text below tokens below token ids.
fn basis(recs: &[&ProbeRecord]) -> &'static str {
    let rank = |s: &str| match s {
        "token_ids" => 2,
        "tokens" => 1,
        _ => 0,
    };
    match recs.iter().map(|r| rank(&r.compared_by)).min().unwrap_or(0) {
        2 => "token_ids",
        1 => "tokens",
        _ => "text",
    }
}

/// `o` as seen on `basis` (so that both arms are compared alike).
fn on_basis(o: &ProbeOutput, basis: &str) -> ProbeOutput {
    let mut o = o.clone();
    if basis != "token_ids" {
        o.token_ids = None;
    }
    if basis == "text" {
        o.tokens = None;
    }
    o
}

/// Per prompt, the class labels of each arm's starts (equal labels: identical outputs).
fn labels(
    base: &[&ProbeRecord],
    cand: &[&ProbeRecord],
    basis: &str,
) -> BTreeMap<usize, PromptStarts> {
    let mut classes: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut out: BTreeMap<usize, PromptStarts> = BTreeMap::new();
    for (arm, recs) in [(0, base), (1, cand)] {
        for r in recs {
            for o in &r.outputs {
                let Some(key) = on_basis(o, basis).key() else {
                    continue;
                };
                let seen = classes.entry(o.prompt).or_default();
                let label = match seen.iter().position(|k| *k == key) {
                    Some(i) => i,
                    None => {
                        seen.push(key);
                        seen.len() - 1
                    }
                } as u32;
                let e = out.entry(o.prompt).or_insert_with(|| PromptStarts {
                    baseline: Vec::new(),
                    candidate: Vec::new(),
                });
                if arm == 0 {
                    e.baseline.push(label);
                } else {
                    e.candidate.push(label);
                }
            }
        }
    }
    out
}

fn output_of(r: &ProbeRecord, prompt: usize) -> Option<&ProbeOutput> {
    r.outputs
        .iter()
        .find(|o| o.prompt == prompt && o.error.is_none())
}

/// The equivalence of `cand_v` in `cand` against `base_v` in `base`; `None` when neither
/// run probed.
pub fn equivalence(
    base: &RunResult,
    base_v: &str,
    cand: &RunResult,
    cand_v: &str,
    alpha: f64,
) -> Option<EquivalenceReport> {
    let settings = base
        .spec
        .spec
        .equivalence
        .clone()
        .or_else(|| cand.spec.spec.equivalence.clone())?;
    let c = settings.reference_concurrency();
    let b = records(base, base_v, c);
    let v = records(cand, cand_v, c);
    if b.is_empty() && v.is_empty() {
        return None;
    }
    let mut notes = Vec::new();
    let by = basis(&b.iter().chain(&v).copied().collect::<Vec<_>>());
    let failed: usize = b
        .iter()
        .chain(&v)
        .flat_map(|r| &r.outputs)
        .filter(|o| o.error.is_some())
        .count();
    if failed > 0 {
        notes.push(format!(
            "{failed} probe request(s) failed and are left out (their errors are in the result \
             file's `equivalence`)"
        ));
    }
    let st = labels(&b, &v, by);
    let judged = judge(&st, alpha, &settings);
    let (test, prompts, mut verdict) = match judged {
        Some((t, n)) => {
            let w = t.verdict.as_str().to_owned();
            (t, n, w)
        }
        None => {
            notes.push(format!(
                "not judged: it needs two probed server starts of the baseline `{base_v}` \
                 (its own repeatability) and one of `{cand_v}` answering the same prompts; \
                 there are {} and {}",
                b.len(),
                v.len()
            ));
            (
                empty_test(),
                0,
                OutputVerdict::Inconclusive.as_str().to_owned(),
            )
        }
    };
    let all_same = |xs: &[u32]| xs.windows(2).all(|w| w[0] == w[1]);
    let n = st.values().filter(|s| s.usable()).count().max(1) as f64;
    let baseline_identical = st
        .values()
        .filter(|s| s.usable() && all_same(&s.baseline))
        .count() as f64
        / n;
    let identical = st
        .values()
        .filter(|s| {
            s.usable()
                && all_same(&s.baseline)
                && s.candidate.iter().all(|l| Some(l) == s.baseline.first())
        })
        .count() as f64
        / n;
    let (first_b, first_v, lp) = positions(&b, &v, by);
    let collapsed = collapse::collapse(&b, by);
    let unchanged = OutputVerdict::Unchanged.as_str();
    if let Some(k) = &collapsed {
        notes.push(k.sentence(base_v));
        if verdict == unchanged {
            verdict = OutputVerdict::Inconclusive.as_str().to_owned();
        }
    }
    let advice = if collapsed.is_some() && verdict != OutputVerdict::Changed.as_str() {
        Some(
            "probe with prompts the model answers differently (a trained checkpoint, the \
             chat template it was trained with, `equivalence.prompts_file`): a collapsed \
             model hides what a kernel change computes"
                .to_owned(),
        )
    } else {
        (verdict == "inconclusive").then(|| match test.prompts_to_settle {
        Some(m) if prompts > 0 => format!(
            "about {m} probe prompts (now {prompts}) would likely settle it: set \
             `equivalence.prompts: {m}`"
        ),
        _ if prompts == 0 => "probe at least two server starts of each variant: `trials.count: \
                              2` or more with `server_restart: per_block`"
            .to_owned(),
        _ => format!(
            "the difference sits at the margin ({}): no practical number of prompts settles it; \
             widen `equivalence.margin` or look at the prompts that differ",
            settings.margin
        ),
        })
    };
    let mut batch = settings
        .concurrency
        .get(1)
        .map(|&c2| batch(base, base_v, cand, cand_v, c, c2, alpha, &settings));
    if let (Some(bt), Some(_)) = (batch.as_mut(), &collapsed)
        && bt.verdict.as_deref() == Some(unchanged)
    {
        bt.verdict = Some(OutputVerdict::Inconclusive.as_str().to_owned());
    }
    Some(EquivalenceReport {
        verdict,
        concurrency: c,
        compared_by: by.to_owned(),
        prompts,
        baseline_starts: b.len(),
        candidate_starts: v.len(),
        baseline_identical,
        identical,
        test,
        alpha,
        margin: settings.margin,
        first_divergence_baseline: first_b,
        first_divergence_candidate: first_v,
        logprob_mean_abs_diff: lp,
        batch,
        accuracy: accuracy::accuracy(&b, &v, alpha, settings.accuracy_margin),
        collapsed,
        advice,
        notes,
    })
}

/// The divergence test on the prompts of `labels` that both arms answered usably, and their
/// number; `None` when there is none.
fn judge(
    labels: &BTreeMap<usize, PromptStarts>,
    alpha: f64,
    settings: &Equivalence,
) -> Option<(Divergence, usize)> {
    let st: Vec<PromptStarts> = labels.values().filter(|s| s.usable()).cloned().collect();
    if st.is_empty() {
        return None;
    }
    let n = st.len();
    divergence(&st, alpha, settings.margin).ok().map(|d| (d, n))
}

fn empty_test() -> Divergence {
    use servebench_stats::{ConfidenceInterval, Estimate};
    Divergence {
        prompts: 0,
        own: 0.0,
        cross: 0.0,
        difference: Estimate {
            point: 0.0,
            ci: ConfidenceInterval {
                level: 0.0,
                lower: -1.0,
                upper: 1.0,
            },
            std_err: f64::NAN,
        },
        p: 1.0,
        method: servebench_stats::outputs::PermutationMethod::Exact,
        verdict: OutputVerdict::Inconclusive,
        prompts_to_settle: None,
    }
}

/// First-divergence positions against the first baseline start, and the mean absolute
/// log-probability difference of the candidate's chosen tokens before them.
fn positions(
    b: &[&ProbeRecord],
    v: &[&ProbeRecord],
    by: &str,
) -> (Vec<usize>, Vec<usize>, Option<f64>) {
    let Some(reference) = b.first() else {
        return (Vec::new(), Vec::new(), None);
    };
    let first = |recs: &[&ProbeRecord], lp: &mut Option<(f64, usize)>| {
        let mut out = Vec::new();
        for r in recs {
            for o in &r.outputs {
                let (Some(x), true) = (output_of(reference, o.prompt), o.error.is_none()) else {
                    continue;
                };
                let d = first_difference(&on_basis(x, by), &on_basis(o, by));
                if let Some(d) = d {
                    out.push(d);
                }
                if let (Some(la), Some(lb)) = (&x.logprobs, &o.logprobs) {
                    let upto = d.unwrap_or(usize::MAX).min(la.len()).min(lb.len());
                    let acc = lp.get_or_insert((0.0, 0));
                    for i in 0..upto {
                        acc.0 += (la[i] - lb[i]).abs();
                        acc.1 += 1;
                    }
                }
            }
        }
        out.sort_unstable();
        out
    };
    let mut ignored = None;
    let fb = first(&b[1..], &mut ignored);
    let mut lp = None;
    let fv = first(v, &mut lp);
    let mean = lp.and_then(|(s, n)| (n > 0).then(|| s / n as f64));
    (fb, fv, mean)
}

#[allow(clippy::too_many_arguments)]
fn batch(
    base: &RunResult,
    base_v: &str,
    cand: &RunResult,
    cand_v: &str,
    c1: u32,
    c2: u32,
    alpha: f64,
    settings: &Equivalence,
) -> BatchReport {
    let invariant = |r: &RunResult, variant: &str| {
        let (mut same, mut all) = (0usize, 0usize);
        for a in records(r, variant, c1) {
            let Some(z) = records(r, variant, c2)
                .into_iter()
                .find(|x| x.block == a.block)
            else {
                continue;
            };
            for o in &a.outputs {
                if let (Some(k1), Some(k2)) =
                    (o.key(), output_of(z, o.prompt).and_then(ProbeOutput::key))
                {
                    all += 1;
                    same += usize::from(k1 == k2);
                }
            }
        }
        if all == 0 {
            f64::NAN
        } else {
            same as f64 / all as f64
        }
    };
    let b2 = records(base, base_v, c2);
    let v2 = records(cand, cand_v, c2);
    let by = basis(&b2.iter().chain(&v2).copied().collect::<Vec<_>>());
    BatchReport {
        concurrency: c2,
        baseline_invariant: invariant(base, base_v),
        candidate_invariant: invariant(cand, cand_v),
        verdict: judge(&labels(&b2, &v2, by), alpha, settings)
            .map(|(d, _)| d.verdict.as_str().to_owned()),
    }
}

/// The report's lines in words (compare's text output).
pub fn lines(e: &EquivalenceReport) -> Vec<String> {
    let mut out = if e.prompts == 0 {
        // Nothing was compared: no shares to print (a 0% would read as "all changed").
        vec![format!(
            "outputs not judged at concurrency {}: no probe prompt was answered by two \
             baseline server starts and one candidate start ({} and {} starts probed)",
            e.concurrency, e.baseline_starts, e.candidate_starts
        )]
    } else {
        vec![format!(
            "outputs {} at concurrency {} ({} prompts by {}, {} and {} server starts): \
             identical {:.0}% (the baseline's own starts {:.0}%); divergence {:.3} vs own \
             {:.3}, difference {:+.3} [{:.3}, {:.3}], p = {:.3}",
            e.verdict,
            e.concurrency,
            e.prompts,
            e.compared_by,
            e.baseline_starts,
            e.candidate_starts,
            100.0 * e.identical,
            100.0 * e.baseline_identical,
            e.test.cross,
            e.test.own,
            e.test.difference.point,
            e.test.difference.ci.lower,
            e.test.difference.ci.upper,
            e.test.p
        )]
    };
    if let Some(a) = &e.accuracy {
        out.push(format!("  {}", accuracy::line(a)));
    }
    if !e.first_divergence_candidate.is_empty() {
        out.push(format!(
            "  first divergence (position, candidate vs the baseline's first start): {:?}",
            e.first_divergence_candidate
        ));
    }
    if let Some(lp) = e.logprob_mean_abs_diff {
        out.push(format!(
            "  mean |Δ logprob| of the chosen tokens before any divergence: {lp:.4}"
        ));
    }
    if let Some(b) = &e.batch {
        out.push(format!(
            "  at concurrency {}: outputs as at {}: baseline {:.0}%, candidate {:.0}%; verdict \
             there {}",
            b.concurrency,
            e.concurrency,
            100.0 * b.baseline_invariant,
            100.0 * b.candidate_invariant,
            b.verdict.as_deref().unwrap_or("not judged")
        ));
    }
    if let Some(a) = &e.advice {
        out.push(format!("  advice: {a}"));
    }
    for n in &e.notes {
        out.push(format!("  note: {n}"));
    }
    out
}
