//! Judging a `kernel` verify rule on a start's evidence: it holds only if it holds on every
//! rank's trace.

use regex::Regex;
use servebench_spec::KernelCheck;

use super::{KernelEvidence, RankKernels};

/// A rule's outcome on one start's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleVerdict {
    /// Whether it holds on every rank.
    pub holds: bool,
    /// What was found, per rank (`rank-0.json: 3 kernels match, 41.2% of busy time`).
    pub detail: String,
}

/// Judges `check` (its patterns already substituted) on `evidence`.
pub fn judge(check: &KernelCheck, evidence: &KernelEvidence) -> RuleVerdict {
    let fail = |detail: String| RuleVerdict {
        holds: false,
        detail,
    };
    if let Some(e) = &evidence.error {
        return fail(format!("no kernel evidence: {e}"));
    }
    let ranks = evidence.judged_ranks();
    if ranks.is_empty() {
        return fail(format!(
            "no trace holds kernels or CPU operators ({} trace file(s) read)",
            evidence.ranks.len()
        ));
    }
    let compile =
        |p: &str| Regex::new(p).map_err(|e| format!("`{p}` is not a regular expression: {e}"));
    let mut holds = true;
    let mut parts = Vec::new();
    if let Some(p) = &check.matches {
        let re = match compile(p) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let min = check.min_share.unwrap_or(0.0);
        for r in &ranks {
            let (n, share, calls) = matching(r, &re);
            let ok = calls > 0 && share >= min;
            holds &= ok;
            parts.push(format!(
                "{}: {n} name(s) match /{p}/, {calls} call(s), {:.1}% of busy time{}",
                r.file,
                share * 100.0,
                if ok {
                    String::new()
                } else if calls == 0 {
                    " — none ran".to_owned()
                } else {
                    format!(" — below min_share {:.1}%", min * 100.0)
                }
            ));
        }
    }
    if let Some(p) = &check.absent {
        let re = match compile(p) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        for r in &ranks {
            let found: Vec<&str> = r
                .kernels
                .iter()
                .filter(|k| re.is_match(&k.name))
                .map(|k| k.name.as_str())
                .collect();
            holds &= found.is_empty();
            parts.push(if found.is_empty() {
                format!("{}: no name matches /{p}/", r.file)
            } else {
                format!(
                    "{}: {} name(s) match /{p}/, e.g. {}",
                    r.file,
                    found.len(),
                    shorten(found[0], 160)
                )
            });
        }
    }
    if check.matches.is_none() && check.absent.is_none() {
        return fail("the rule sets neither `matches` nor `absent`".to_owned());
    }
    RuleVerdict {
        holds,
        detail: parts.join("; "),
    }
}

/// Names matching `re` on `rank`: how many, their share of busy time, their calls.
fn matching(rank: &RankKernels, re: &Regex) -> (usize, f64, u64) {
    rank.kernels
        .iter()
        .filter(|k| re.is_match(&k.name))
        .fold((0, 0.0, 0), |(n, s, c), k| {
            (n + 1, s + k.share, c + k.calls)
        })
}

/// The `n` longest kernels of each judged rank, one line each (`  41.2%  16×  name`), for a
/// failed rule's message.
pub fn top_lines(evidence: &KernelEvidence, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for r in evidence.judged_ranks() {
        out.push(format!(
            "{} ({} events, busy {:.1} ms):",
            r.file,
            r.events,
            r.busy_us / 1000.0
        ));
        for k in r.kernels.iter().take(n) {
            out.push(format!(
                "  {:>5.1}%  {:>6}×  {}",
                k.share * 100.0,
                k.calls,
                shorten(&k.name, 120)
            ));
        }
    }
    out
}

/// `s` cut to at most `max` characters, with `…` where cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
