//! `servebench kernels TRACE…` (docs/kernels.md, "Listing a trace's kernels"): each trace's
//! kernels by name with their category, calls and share of the busy time, its categories,
//! and for two traces a `kernel` rule that tells them apart — what a rule's author needs
//! and no command listed before (issue 51).

use std::fmt::Write as _;

use super::RankKernels;
use super::rule::shorten;

/// One trace's listing: a heading, the categories, then the `top` longest kernels (all of
/// them with `top` 0).
pub fn listing(r: &RankKernels, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} events on {} lane(s), busy {:.1} ms ({:?})",
        r.file,
        r.events,
        r.lanes,
        r.busy_us / 1000.0,
        r.source
    );
    let _ = writeln!(out, "  by category:");
    for c in &r.categories {
        let _ = writeln!(
            out,
            "    {:>6.1}%  {:>8}×  {}",
            c.share * 100.0,
            c.calls,
            c.category.label()
        );
    }
    let shown = if top == 0 { r.kernels.len() } else { top };
    let _ = writeln!(
        out,
        "  kernels ({} of {}, longest first): share, calls, category, name",
        shown.min(r.kernels.len()),
        r.kernels.len()
    );
    for k in r.kernels.iter().take(shown) {
        let _ = writeln!(
            out,
            "    {:>6.1}%  {:>8}×  {:<17} {}",
            k.share * 100.0,
            k.calls,
            k.category.label(),
            shorten(&k.name, 160)
        );
    }
    out
}

/// The words of a kernel name a rule may match: first the text its category's pattern
/// matched (`GroupProblemShape` in a mangled CUTLASS name), then its runs of letters (4 or
/// more; a mangled name's lengths and a template's numbers split them), in order.
fn words(name: &str) -> Vec<&str> {
    let runs = name
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 4);
    super::category::category_match(name)
        .into_iter()
        .chain(runs)
        .collect()
}

/// The least share a suggested `matches` rule asks: half the share seen, floored to a
/// percent (a later start may run the kernel a little less).
fn min_share(share: f64) -> f64 {
    ((share * 50.0).floor() / 100.0).max(0.01)
}

/// A word of the longest kernel of `a` (with at least 1% of its busy time) that no kernel
/// name of `b` contains, with that kernel's share: a rule `matches` it on `a`'s variant and
/// `absent` it on `b`'s.
fn distinguishing(a: &RankKernels, b: &RankKernels) -> Option<(String, f64, String)> {
    // A word no name of `b` holds even inside a longer word (the rule's regex would match
    // there too).
    let in_b = |w: &str| b.kernels.iter().any(|k| k.name.contains(w));
    a.kernels.iter().filter(|k| k.share >= 0.01).find_map(|k| {
        // Letters, or a category pattern's match (letters, digits, `_`, `:`): no
        // character a regex reads specially, so the word is its own pattern.
        let w = words(&k.name).into_iter().find(|w| !in_b(w))?;
        // The share of every kernel of `a` the word matches, which the rule will read.
        let share: f64 = a
            .kernels
            .iter()
            .filter(|x| x.name.contains(w))
            .map(|x| x.share)
            .sum();
        Some((w.to_owned(), share, k.name.clone()))
    })
}

/// For two traces: the `kernel` rules that tell them apart, in spec YAML, or why none is
/// found.
pub fn suggest(a: &RankKernels, b: &RankKernels) -> String {
    let mut out = String::new();
    let mut any = false;
    for (x, y) in [(a, b), (b, a)] {
        let Some((word, share, from)) = distinguishing(x, y) else {
            continue;
        };
        any = true;
        let _ = writeln!(
            out,
            "`{word}` (from {}, {:.1}% of {}'s busy time) is in no kernel name of {}:",
            shorten(&from, 80),
            share * 100.0,
            x.file,
            y.file
        );
        let _ = writeln!(
            out,
            "  the variant of {}:  - kernel: {{matches: \"{word}\", min_share: {}}}",
            x.file,
            min_share(share)
        );
        let _ = writeln!(
            out,
            "  the variant of {}:  - kernel: {{absent: \"{word}\"}}",
            y.file
        );
    }
    if !any {
        let _ = writeln!(
            out,
            "no kernel with 1% or more of either trace's busy time has a name word the other \
             trace lacks: the two ran the same kernels (compare their shares above; a \
             `matches` rule with `min_share` may still tell them apart)"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Category, EvidenceSource, KernelStat};

    fn rank(file: &str, kernels: &[(&str, f64)]) -> RankKernels {
        RankKernels {
            file: file.into(),
            source: EvidenceSource::Kernels,
            events: 10,
            lanes: 1,
            total_us: 100.0,
            busy_us: 100.0,
            span_us: 100.0,
            kernels: kernels
                .iter()
                .map(|(n, s)| KernelStat {
                    name: (*n).into(),
                    category: Category::Other,
                    calls: 3,
                    total_us: s * 100.0,
                    share: *s,
                })
                .collect(),
            categories: Vec::new(),
        }
    }

    #[test]
    fn a_word_only_one_trace_has_becomes_the_rule() {
        let grouped = rank(
            "a.json",
            &[
                ("void cutlass::Kernel<GroupProblemShape<int>>", 0.4),
                ("elementwise_kernel", 0.3),
            ],
        );
        let eager = rank(
            "b.json",
            &[
                ("void cutlass::Kernel<Gemm<int>>", 0.5),
                ("elementwise_kernel", 0.3),
            ],
        );
        let s = suggest(&grouped, &eager);
        assert!(
            s.contains("kernel: {matches: \"GroupProblemShape\", min_share: 0.2}"),
            "{s}"
        );
        assert!(s.contains("kernel: {absent: \"GroupProblemShape\"}"), "{s}");
        let same = suggest(&eager, &eager.clone());
        assert!(same.starts_with("no kernel"), "{same}");
        assert!(listing(&grouped, 1).contains("kernels (1 of 2"));
    }
}
