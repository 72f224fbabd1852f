//! Unit tests of request records: error kinds and flags as strings, detail truncation, the
//! compact event encoding.

use super::*;

#[test]
fn error_kinds_round_trip_as_strings() {
    let kinds = [
        ErrorKind::Connect,
        ErrorKind::Http { status: 503 },
        ErrorKind::NotSent,
        ErrorKind::StreamDisconnected,
        ErrorKind::StreamCutByServer,
    ];
    for k in kinds {
        let s = serde_json::to_string(&k).expect("serialises");
        let back: ErrorKind = serde_json::from_str(&s).expect("parses");
        assert_eq!(back, k, "{s}");
    }
    assert_eq!(ErrorKind::Http { status: 429 }.to_string(), "http_429");
    assert_eq!(
        ErrorKind::StreamCutByServer.to_string(),
        "stream_cut_by_server"
    );
    assert!("http_x".parse::<ErrorKind>().is_err());
    let map: std::collections::BTreeMap<ErrorKind, usize> = [
        (ErrorKind::Http { status: 500 }, 2),
        (ErrorKind::Timeout, 1),
    ]
    .into();
    let json = serde_json::to_string(&map).expect("map keys are strings");
    assert_eq!(json, r#"{"timeout":1,"http_500":2}"#);
}

#[test]
fn request_flags_are_not_failure_kinds() {
    for f in RequestFlag::ALL {
        let s = serde_json::to_string(&f).expect("serialises");
        assert_eq!(s, format!("\"{f}\""));
        let back: RequestFlag = serde_json::from_str(&s).expect("parses");
        assert_eq!(back, f);
        assert!(
            f.as_str().parse::<ErrorKind>().is_err(),
            "{f} is a failure kind"
        );
    }
}

#[test]
fn detail_is_truncated_on_a_char_boundary() {
    let mut r = RequestRecord::default();
    r.fail(ErrorKind::Transport, "é".repeat(600));
    let d = r.error_detail.clone().expect("kept");
    assert!(d.len() <= MAX_DETAIL);
    r.fail(ErrorKind::Timeout, "second");
    assert_eq!(r.error, Some(ErrorKind::Transport), "first error wins");
}

#[test]
fn events_are_written_compactly_and_read_in_either_form() {
    let events = vec![
        TokenEvent {
            t_ns: 1_234_567,
            tokens: 1,
        },
        TokenEvent {
            t_ns: 11_234_999,
            tokens: 1,
        },
        TokenEvent {
            t_ns: 11_234_999,
            tokens: 1,
        },
        TokenEvent {
            t_ns: 21_000_000,
            tokens: 1,
        },
    ];
    let r = RequestRecord {
        events: events.clone(),
        ..Default::default()
    };
    let text = serde_json::to_string(&r).expect("serialises");
    assert!(
        text.contains(r#""events":{"t0_ns":1234567,"dt_us":[10000,0,9765]}"#),
        "{text}"
    );
    let back: RequestRecord = serde_json::from_str(&text).expect("reads");
    // The first instant is exact, later ones to the µs; equal instants stay equal.
    assert_eq!(back.events[0], events[0]);
    assert_eq!(back.events[1].t_ns, back.events[2].t_ns);
    for (a, b) in back.events.iter().zip(&events) {
        assert!(a.t_ns.abs_diff(b.t_ns) < 1000, "{a:?} {b:?}");
    }
    // Version 1 pairs still read.
    let old = text.replace(
        r#"{"t0_ns":1234567,"dt_us":[10000,0,9765]}"#,
        "[[1234567,1],[11234999,1],[11234999,1],[21000000,1]]",
    );
    let v1: RequestRecord = serde_json::from_str(&old).expect("pairs read");
    assert_eq!(v1.events, events);
    // Tokens per event are kept when not all 1; no events stay `[]`.
    let mut multi = r.clone();
    multi.events[3].tokens = 4;
    let text = serde_json::to_string(&multi).expect("serialises");
    assert!(text.contains(r#""tokens":[1,1,1,4]"#), "{text}");
    let back: RequestRecord = serde_json::from_str(&text).expect("reads");
    assert_eq!(back.events[3].tokens, 4);
    let none = serde_json::to_string(&RequestRecord::default()).expect("ok");
    assert!(none.contains(r#""events":[]"#), "{none}");
}

#[test]
fn token_events_serialise_as_pairs() {
    let e = TokenEvent { t_ns: 5, tokens: 2 };
    assert_eq!(serde_json::to_string(&e).expect("ok"), "[5,2]");
}
