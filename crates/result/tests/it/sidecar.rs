//! The compressed sidecar: one zstd frame per trial, read back whole, cut back per frame on
//! resume (a frame cut short by a crash is dropped); plain sidecars of older runs still read
//! and are still appended to plainly.

use servebench_result::record::{RequestRecord, TokenEvent, Usage};
use servebench_result::{RequestLine, ResultStore, read_requests, sidecar_path};

fn record(index: u32, n: u64) -> RequestRecord {
    RequestRecord {
        index,
        send_ns: Some(1_000),
        events: (0..n)
            .map(|k| TokenEvent {
                t_ns: 5_000_000 + k * 10_000_123,
                tokens: 1,
            })
            .collect(),
        end_ns: Some(5_000_000 + n * 10_000_123),
        max_tokens: n as u32,
        usage: Some(Usage {
            prompt_tokens: 16,
            completion_tokens: n as u32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn trial(seq: usize, requests: u32) -> Vec<RequestLine> {
    (0..requests)
        .map(|i| RequestLine::new(seq, "a".into(), 1, seq, false, record(i, 16)))
        .collect()
}

#[test]
fn frames_per_trial_read_back_and_are_cut_per_frame() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = ResultStore::new(dir.path(), "run");
    assert!(
        store
            .requests_path
            .to_string_lossy()
            .ends_with(".requests.jsonl.zst")
    );
    for seq in 0..3 {
        store.append_requests(&trial(seq, 5)).expect("append");
    }
    let lines = read_requests(&store.requests_path).expect("read");
    assert_eq!(lines.len(), 15);
    assert_eq!(lines[0], trial(0, 5)[0].clone().round_trip());
    // A crash mid-append leaves a partial frame at the end.
    let whole = std::fs::metadata(&store.requests_path).expect("meta").len();
    store.append_requests(&trial(3, 5)).expect("append");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&store.requests_path)
        .expect("open");
    let longer = f.metadata().expect("meta").len();
    f.set_len(whole + (longer - whole) / 2).expect("cut");
    // Resume keeps trials 0 and 2 (as if 1 was not in the result), drops the cut frame.
    let reopened = ResultStore::for_result(&store.result_path);
    assert_eq!(reopened.requests_path, store.requests_path);
    reopened.prune_requests(&|seq| seq != 1).expect("prune");
    let seqs: Vec<usize> = read_requests(&store.requests_path)
        .expect("read")
        .iter()
        .map(|l| l.seq)
        .collect();
    assert_eq!(seqs, [0, 0, 0, 0, 0, 2, 2, 2, 2, 2]);
    // And appending goes on after the kept frames.
    reopened.append_requests(&trial(4, 2)).expect("append");
    assert_eq!(read_requests(&store.requests_path).expect("read").len(), 12);
}

#[test]
fn a_plain_sidecar_of_an_older_run_stays_plain() {
    let dir = tempfile::tempdir().expect("tmp");
    let result = dir.path().join("old.json");
    let plain = dir.path().join("old.requests.jsonl");
    let text: String = trial(0, 3)
        .iter()
        .map(|l| serde_json::to_string(l).expect("json") + "\n")
        .collect();
    std::fs::write(&plain, text).expect("write");
    assert_eq!(sidecar_path(&result), plain);
    let store = ResultStore::for_result(&result);
    assert_eq!(store.requests_path, plain);
    store.append_requests(&trial(1, 2)).expect("append");
    let all = read_requests(&plain).expect("read");
    assert_eq!(all.len(), 5);
    // Still plain text, one JSON object per line.
    let raw = std::fs::read_to_string(&plain).expect("utf-8");
    assert_eq!(raw.lines().count(), 5);
    store.prune_requests(&|seq| seq == 0).expect("prune");
    assert_eq!(read_requests(&plain).expect("read").len(), 3);
}

trait RoundTrip {
    fn round_trip(self) -> Self;
}

impl RoundTrip for RequestLine {
    /// Through JSON once (event instants after the first are kept to the µs).
    fn round_trip(self) -> Self {
        serde_json::from_str(&serde_json::to_string(&self).expect("json")).expect("read")
    }
}
