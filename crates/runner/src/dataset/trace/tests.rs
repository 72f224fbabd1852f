//! Unit tests of the trace reader and builder.
use super::*;
use crate::dataset::tokenize::WordCount;

fn write(lines: &str) -> tempfile::NamedTempFile {
    use std::io::Write;
    let mut f = tempfile::NamedTempFile::new().expect("tmp");
    f.write_all(lines.as_bytes()).expect("write");
    f
}

#[test]
fn bad_lines_are_refused_with_their_line_number() {
    let f = write(
        "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n\n{\"timestamp\": 5, \"input_tokens\": 8}\n",
    );
    let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("missing field");
    assert!(
        e.to_string().contains(":3: missing field `output_tokens`"),
        "{e}"
    );
    let f = write(
        "{\"timestamp\": 10, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 5, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    );
    let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("backwards");
    assert!(
        e.to_string()
            .contains(":2: timestamp 5 is earlier than 10 on line 1"),
        "{e}"
    );
    let f = write(
        "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 2, \"hash_ids\": [1]}\n",
    );
    let e =
        load_trace(f.path(), TraceLayout::Mooncake { block_tokens: 512 }, 1.0).expect_err("blocks");
    assert!(
        e.to_string().contains("needs 2 hash_ids, the line has 1"),
        "{e}"
    );
}

#[test]
fn sizes_are_bounded_before_anything_is_built() {
    // A length no context holds: refused at its line, before a prompt of it is fitted.
    let f = write(concat!(
        "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        "{\"timestamp\": 1, \"input_tokens\": 2000000000, \"output_tokens\": 2}\n",
    ));
    let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("too long");
    assert!(
        e.to_string().contains(
            ":2: `input_tokens` 2,000,000,000 is above servebench's ceiling of 16,777,216"
        ),
        "{e}"
    );
    let f = write(
        "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 4294967295, \"hash_ids\": [1]}\n",
    );
    let e = load_trace(f.path(), TraceLayout::Mooncake { block_tokens: 512 }, 1.0)
        .expect_err("too long");
    assert!(
        e.to_string().contains(":1: `output_length` 4,294,967,295"),
        "{e}"
    );
    // A timestamp that would make the replay wait for ever.
    let f = write(concat!(
        "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        "{\"timestamp\": 1e300, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    ));
    let e = load_trace(f.path(), TraceLayout::Plain, 1.0).expect_err("1e300");
    assert!(
        e.to_string()
            .contains(":2: timestamp 1e300 ms is too large"),
        "{e}"
    );
    // 40 days after the first request, in seconds: beyond one replay's span.
    let f = write(concat!(
        "{\"timestamp\": 100, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        "{\"timestamp\": 3456100, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    ));
    let e = load_trace(f.path(), TraceLayout::Plain, 1000.0).expect_err("40 days");
    let msg = e.to_string();
    assert!(
        msg.contains(":2: timestamp 3456100 s is 40 days after"),
        "{msg}"
    );
    assert!(msg.contains("ceiling of 31 days"), "{msg}");
    // Epoch milliseconds are fine: only the offsets from the first request count.
    let f = write(concat!(
        "{\"timestamp\": 1764000000000, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        "{\"timestamp\": 1764000000250.5, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    ));
    let t = load_trace(f.path(), TraceLayout::Plain, 1.0).expect("epoch ms");
    assert_eq!(t[1].at_ns, 250_500_000);
    // A window whose prompts together exceed what a trial may build.
    let lines: String = (0..70)
        .map(|i| {
            format!("{{\"timestamp\": {i}, \"input_tokens\": 16000000, \"output_tokens\": 1}}\n")
        })
        .collect();
    let f = write(&lines);
    let t = load_trace(f.path(), TraceLayout::Plain, 1.0).expect("each line fits");
    let e = TraceBuilder::new(
        &t,
        TraceWindow::default(),
        TraceLayout::Plain,
        false,
        WordCount,
    )
    .expect_err("the window is too large");
    assert!(
        e.to_string()
            .contains("70 requests total 1,120,000,000 prompt tokens"),
        "{e}"
    );
    let w = TraceWindow {
        requests: Some(60),
        ..TraceWindow::default()
    };
    assert!(TraceBuilder::new(&t, w, TraceLayout::Plain, false, WordCount).is_ok());
}

#[test]
fn timestamps_in_seconds_and_windows() {
    let f = write(
        "{\"timestamp\": 1.5, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 2, \"input_tokens\": 8, \"output_tokens\": 2}\n{\"timestamp\": 4, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    );
    let t = load_trace(f.path(), TraceLayout::Plain, 1000.0).expect("loads");
    let at: Vec<u64> = t.iter().map(|e| e.at_ns).collect();
    assert_eq!(at, [0, 500_000_000, 2_500_000_000]);
    let w = TraceWindow {
        start: Duration::from_millis(400),
        duration: Some(Duration::from_secs(3)),
        requests: None,
    };
    assert_eq!(w.select(&t).len(), 2);
    let w = TraceWindow {
        requests: Some(1),
        ..w
    };
    assert_eq!(w.select(&t)[0].at_ns, 500_000_000);
}

#[tokio::test]
async fn mooncake_blocks_are_shared_and_lengths_exact() {
    let f = write(concat!(
        "{\"timestamp\": 0, \"input_length\": 20, \"output_length\": 2, \"hash_ids\": [7, 8, 9]}\n",
        "{\"timestamp\": 10, \"input_length\": 18, \"output_length\": 3, \"hash_ids\": [7, 8, 4]}\n",
        "{\"timestamp\": 30, \"input_length\": 5, \"output_length\": 3, \"hash_ids\": [8]}\n",
    ));
    let layout = TraceLayout::Mooncake { block_tokens: 8 };
    let t = load_trace(f.path(), layout, 1.0).expect("loads");
    let mut b =
        TraceBuilder::new(&t, TraceWindow::default(), layout, false, WordCount).expect("ok");
    let p = b.trial_prompts(1, 2.0, 1, 1, 0).await.expect("builds");
    assert_eq!(p.send_offsets_ns, Some(vec![0, 5_000_000, 15_000_000]));
    let words: Vec<Vec<&str>> = p
        .measured
        .iter()
        .map(|pr| match &pr.body {
            PromptBody::Text(t) => t.split(' ').collect(),
            PromptBody::Messages(_) => panic!("text"),
        })
        .collect();
    assert_eq!(words[0].len(), 20);
    assert_eq!(words[1].len(), 18);
    assert_eq!(words[0][..16], words[1][..16], "blocks 7 and 8 shared");
    assert_ne!(words[0][16..18], words[1][16..18], "block 9 is not block 4");
    assert_eq!(
        words[2][..5],
        words[0][8..13],
        "block 8 is the same text alone"
    );
    assert_eq!(p.measured[1].max_tokens, 3);
    let other = b.trial_prompts(0, 1.0, 1, 2, 0).await.expect("builds");
    assert_ne!(
        other.measured[0], p.measured[0],
        "trials draw their own blocks"
    );
}

#[test]
fn a_window_with_no_request_says_where_the_requests_are_and_which_key_to_change() {
    let f = write(concat!(
        "{\"timestamp\": 0, \"input_tokens\": 8, \"output_tokens\": 2}\n",
        "{\"timestamp\": 2000, \"input_tokens\": 8, \"output_tokens\": 2}\n",
    ));
    let trace = load_trace(f.path(), TraceLayout::Plain, 1.0).expect("loads");
    let window = |start: u64, duration: Option<u64>, requests: Option<usize>| TraceWindow {
        start: Duration::from_secs(start),
        duration: duration.map(Duration::from_millis),
        requests,
    };
    let refused = |w: TraceWindow| {
        TraceBuilder::new(&trace, w, TraceLayout::Plain, false, WordCount)
            .expect_err("an empty window")
            .to_string()
    };
    // Before: "invalid length distribution the trace window (start 60s, …) holds no request".
    let e = refused(window(60, None, None));
    assert_eq!(
        e,
        "the trace window holds no request: `trace.start` is 60 s, after the last request (its \
         2 requests are due from 0 s to 2 s); give a `trace.start` below 2 s"
    );
    let e = refused(window(0, None, Some(0)));
    assert!(e.contains("`trace.requests` is 0"), "{e}");
    let e = refused(window(1, Some(500), None));
    assert!(
        e.contains("from `trace.start` 1 s for `trace.duration` 0.5 s no request is due")
            && e.contains("widen `trace.duration`"),
        "{e}"
    );
}
