//! Request flags apart from failure kinds: derived per request, written on version-2
//! sidecar lines, derived again from version-1 lines, counted per trial with the lengths of
//! an input mismatch, and shown with what to do in the end-of-run table; the share of token
//! events that arrived in one read; every committed result still loads.

use std::path::{Path, PathBuf};

use servebench_result::metrics::{InputMismatch, SummaryOptions, summarize};
use servebench_result::record::{ErrorKind, RequestFlag, RequestRecord, TokenEvent, Usage};
use servebench_result::{REQUEST_RECORD_VERSION, RequestLine, load_result, table};

const MS: u64 = 1_000_000;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A successful request of `n` tokens 5 ms apart, `sent` prompt tokens counted as
/// `counted` by the server.
fn req(index: u32, sent: u32, counted: u32, n: u32) -> RequestRecord {
    let send = u64::from(index) * 10;
    RequestRecord {
        index,
        intended_ns: send * MS,
        send_ns: Some(send * MS),
        events: (0..u64::from(n))
            .map(|k| TokenEvent {
                t_ns: (send + 10 + 5 * k) * MS,
                tokens: 1,
            })
            .collect(),
        end_ns: Some((send + 10 + 5 * u64::from(n)) * MS),
        max_tokens: n,
        output_target: Some(n),
        expected_input_tokens: Some(sent),
        input_tokens_exact: true,
        usage: Some(Usage {
            prompt_tokens: counted,
            completion_tokens: n,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn opts() -> SummaryOptions {
    SummaryOptions {
        max_concurrency: Some(4),
        closed_loop: true,
        slo: None,
    }
}

#[test]
fn version_2_lines_carry_their_flags_and_version_1_lines_derive_them() {
    let line = RequestLine::new(0, "a".into(), 1, 0, false, req(0, 128, 57, 8));
    assert_eq!(line.record_version, REQUEST_RECORD_VERSION);
    assert_eq!(line.flags, [RequestFlag::InputLengthMismatch]);
    let text = serde_json::to_string(&line).expect("serialises");
    assert!(
        text.contains(r#""record_version":2"#)
            && text.contains(r#""flags":["input_length_mismatch"]"#),
        "{text}"
    );
    let back: RequestLine = serde_json::from_str(&text).expect("reads");
    assert_eq!(back, line);

    // A version-1 line: no version, no flags written; the reader derives them.
    let mut v1: serde_json::Value = serde_json::from_str(&text).expect("json");
    let obj = v1.as_object_mut().expect("object");
    obj.remove("record_version");
    obj.remove("flags");
    obj.remove("usage");
    let old: RequestLine = serde_json::from_value(v1).expect("a version-1 line reads");
    assert_eq!(old.record_version, 1);
    assert!(old.flags.is_empty());
    assert_eq!(old.request_flags(), [RequestFlag::NoUsage]);

    // A failed request has no flags: it is counted by its failure kind.
    let mut failed = req(1, 128, 57, 8);
    failed.fail(ErrorKind::Timeout, "cut");
    assert!(
        RequestLine::new(1, "a".into(), 1, 0, false, failed)
            .flags
            .is_empty()
    );
}

#[test]
fn the_committed_sidecar_of_version_1_still_reads() {
    let dir = repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun");
    let sidecar = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".requests.jsonl"))
        .expect("a committed sidecar");
    let text = std::fs::read_to_string(&sidecar).expect("read");
    let mut n = 0;
    for l in text.lines() {
        let line: RequestLine = serde_json::from_str(l).expect("a version-1 line");
        assert_eq!(line.record_version, 1);
        let _ = line.request_flags();
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn a_trial_counts_flags_apart_from_failures_with_the_mismatched_lengths() {
    let mut recs: Vec<RequestRecord> = (0..5).map(|i| req(i, 128, 57, 8)).collect();
    recs.push(req(5, 128, 128, 8));
    recs[4].fail(ErrorKind::Http { status: 503 }, "busy");
    let s = summarize(&recs, &opts());
    assert_eq!(s.flags.get(&RequestFlag::InputLengthMismatch), Some(&4));
    assert_eq!(s.errors.get(&ErrorKind::Http { status: 503 }), Some(&1));
    assert_eq!(
        s.input_mismatch,
        Some(InputMismatch {
            sent_tokens: 128,
            counted_tokens: 57
        })
    );
    assert_eq!(
        s.all.completed, 5,
        "flagged requests still count as completed"
    );
}

#[test]
fn the_batched_share_counts_events_that_share_a_read() {
    // 8 events per request; in the first request events 2–4 share one read instant.
    let mut a = req(0, 16, 16, 8);
    let t = a.events[2].t_ns;
    a.events[3].t_ns = t;
    a.events[4].t_ns = t;
    let b = req(1, 16, 16, 8);
    let s = summarize(&[a, b], &opts());
    let share = s.batched_event_share.expect("events");
    assert!((share - 3.0 / 16.0).abs() < 1e-12, "{share}");
    let none = summarize(&[req(0, 16, 16, 8)], &opts());
    assert_eq!(none.batched_event_share, Some(0.0));
}

fn committed_results() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "json")
                && std::fs::read_to_string(&p)
                    .is_ok_and(|t| t.contains("\"schema_version\"") && t.contains("\"run_id\""))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in ["results", "docs", "crates/cli/tests/fixtures/rerun/results"] {
        walk(&repo().join(d), &mut out);
    }
    out
}

#[test]
fn every_committed_result_loads() {
    let files = committed_results();
    assert!(files.len() >= 4, "{files:?}");
    for f in files {
        let r = load_result(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!r.run_id.is_empty());
    }
}

#[test]
fn the_end_of_run_table_says_what_a_flag_means_and_what_to_do() {
    let f = repo().join("results/llamacpp-gemma-flash-attn/20261129T234758Z-a9f5.json");
    let mut r = load_result(&f).expect("committed result");
    let before = table::render(&r);
    assert!(!before.contains("requests flagged"), "{before}");
    for t in &mut r.trials {
        if let Some(s) = &mut t.summary {
            s.flags.insert(RequestFlag::InputLengthMismatch, 2500);
            s.input_mismatch = Some(InputMismatch {
                sent_tokens: 128,
                counted_tokens: 57,
            });
        }
    }
    let n = 2500 * r.trials.iter().filter(|t| t.summary.is_some()).count();
    let after = table::render(&r);
    let want = format!(
        "{n} requests: input length mismatch (server counted 57 prompt tokens for 128 sent)"
    );
    assert!(after.contains(&want), "{after}");
    assert!(after.contains("tokenizer"), "{after}");
}

#[test]
fn the_end_of_run_table_shows_the_share_of_held_back_streams() {
    let f = repo().join("results/llamacpp-gemma-flash-attn/20261129T234758Z-a9f5.json");
    let mut r = load_result(&f).expect("committed result");
    let mut completed = 0;
    let mut flagged = 0;
    for t in &mut r.trials {
        if let Some(s) = &mut t.summary {
            s.flags.insert(RequestFlag::ContentHeldBack, 2);
            completed += s.all.completed;
            flagged += 2;
        }
    }
    let after = table::render(&r);
    let want = format!(
        "{flagged} requests ({:.1}% of completed): no content chunk although usage counted",
        100.0 * flagged as f64 / completed as f64
    );
    assert!(after.contains(&want), "{after}");
    assert!(after.contains("no TPOT or ITL"), "{after}");
}
