//! `validate` and `plan` warn when a closed-loop point's requests are fewer than 3 waves of
//! its concurrency (docs/compare.md, load-not-sustained).

fn warnings(sweep: &str) -> Vec<String> {
    let text = format!(
        "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {{name: t}}\nspec:\n  \
         target: {{model: m, base_url: \"http://127.0.0.1:1\"}}\n  variants: [{{name: a, \
         baseline: true}}, {{name: b, base_url: \"http://127.0.0.1:2\"}}]\n  workload:\n    \
         dataset: {{kind: random, input_tokens: 8, output_tokens: 4}}\n    requests: 64\n  \
         sweep: {sweep}\n"
    );
    servebench_spec::parse_str(&text, "t.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
        .warnings
        .into_iter()
        .map(|w| w.message)
        .collect()
}

/// The issue-29 case: 64 requests at c=32 are two waves, and `validate` said nothing.
#[test]
fn two_waves_are_warned_about_and_enough_waves_are_not() {
    let w = warnings("{max_concurrency: [1, 8, 32]}");
    let waves: Vec<&String> = w.iter().filter(|m| m.contains("waves")).collect();
    assert_eq!(waves.len(), 1, "{w:?}");
    assert!(
        waves[0].contains(
            "point `c=32 rate=inf in=8 out=4`: 64 requests at concurrency 32 are 2.0 waves"
        ),
        "{}",
        waves[0]
    );
    // A point's own request count fixes it.
    let w = warnings("{max_concurrency: [1, 8], include: [{max_concurrency: 32, requests: 128}]}");
    assert!(!w.iter().any(|m| m.contains("waves")), "{w:?}");
    // Open loop: no waves.
    let w = warnings("{max_concurrency: [32], request_rate: [10]}");
    assert!(!w.iter().any(|m| m.contains("waves")), "{w:?}");
}

/// Issue 41, item 11: `--request-rate 100000 --max-concurrency 1` is the closed loop of
/// `inf` — the limit, not the rate, decides every send — and `validate` says so; a rate the
/// limit does not bind is left alone.
#[test]
fn a_rate_the_limit_binds_is_said_to_be_the_closed_loop_of_inf() {
    let w = warnings("{max_concurrency: [1], request_rate: [100000]}");
    let closed: Vec<&String> = w.iter().filter(|m| m.contains("closed loop")).collect();
    assert_eq!(closed.len(), 1, "{w:?}");
    assert!(
        closed[0].contains(
            "100000 requests/s under max_concurrency 1 is the same closed loop \
                            as `request_rate: inf`"
        ),
        "{}",
        closed[0]
    );
    let w = warnings("{max_concurrency: [32], request_rate: [10]}");
    assert!(!w.iter().any(|m| m.contains("closed loop")), "{w:?}");
    let w = warnings("{max_concurrency: [1]}");
    assert!(!w.iter().any(|m| m.contains("closed loop")), "{w:?}");
}
