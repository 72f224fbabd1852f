//! Unit tests of the resolved configuration: presets, validation, request ranges.

use super::*;

#[test]
fn every_preset_is_valid() {
    for p in [
        Preset::Default,
        Preset::Fast,
        Preset::Tiny,
        Preset::ZeroDelay,
    ] {
        SimConfig::from_preset(p)
            .validate()
            .map_err(|e| format!("{p:?}: {e}"))
            .unwrap();
    }
    assert!(Preset::ZeroDelay.engine().is_zero_delay());
    assert!(!Preset::Default.engine().is_zero_delay());
}

#[test]
fn bad_values_are_rejected() {
    let mut c = SimConfig::default();
    c.engine.max_batched_tokens = 10;
    assert!(matches!(c.validate(), Err(SimError::InvalidConfig(_))));
    let mut c = SimConfig::default();
    c.faults.error_rate_500 = 0.7;
    c.faults.error_rate_429 = 0.7;
    assert!(c.validate().is_err());
    let mut c = SimConfig::default();
    c.engine.jitter_cv = f64::NAN;
    assert!(c.validate().is_err());
}

fn refusal(edit: impl FnOnce(&mut SimConfig)) -> String {
    let mut c = SimConfig::default();
    edit(&mut c);
    match c.validate() {
        Err(SimError::InvalidConfig(m)) => m,
        other => panic!("accepted: {other:?}"),
    }
}

#[test]
fn scales_drifts_and_selectors_are_checked() {
    let m = refusal(|c| c.engine.step_scale = 0.0);
    assert!(m.contains("step_scale must be a number > 0"), "{m}");
    let m = refusal(|c| c.engine.step_scale = f64::INFINITY);
    assert!(m.contains("step_scale"), "{m}");
    let m = refusal(|c| c.engine.time_scale = -0.5);
    assert!(m.contains("time_scale must be a number > 0"), "{m}");
    let m = refusal(|c| c.engine.time_scale = 5000.0);
    assert!(m.contains("at most 1000"), "{m}");
    let m = refusal(|c| c.engine.drift_per_repetition = -1.0);
    assert!(
        m.contains("drift_per_repetition must be finite and > -1"),
        "{m}"
    );
    let m = refusal(|c| c.engine.step_scale_repetitions = Some(vec![]));
    assert!(m.contains("at least one repetition"), "{m}");
    let m = refusal(|c| c.engine.step_scale_repetitions = Some(vec![0, 2]));
    assert!(m.contains("counts from 1") && m.contains("0,2"), "{m}");
    let m = refusal(|c| {
        c.engine.step_scale_requests = Some(RequestRange {
            first: 5,
            last: Some(4),
        });
    });
    assert!(m.contains("5..4 is empty"), "{m}");
    let m = refusal(|c| c.repetition = 0);
    assert!(m.contains("repetition counts from 1"), "{m}");
}

#[test]
fn request_ranges_parse_and_select() {
    let r: RequestRange = "29..56".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.first, r.last), (29, Some(56)));
    assert_eq!(r.to_string(), "29..56");
    assert!(!r.contains(28) && r.contains(29) && r.contains(56) && !r.contains(57));
    let open: RequestRange = "5..".parse().unwrap_or_else(|e| panic!("{e}"));
    assert!(!open.contains(4) && open.contains(5) && open.contains(u64::MAX));
    assert_eq!(open.to_string(), "5..");
    assert_eq!(
        serde_json::to_value(r).unwrap_or_default(),
        serde_json::json!("29..56")
    );
    for bad in ["", "29", "..5", "a..b", "3..x", "29-56"] {
        let e = bad.parse::<RequestRange>().err().unwrap_or_default();
        assert!(e.contains("write A..B"), "{bad:?}: {e}");
    }
    let e = "0..5".parse::<RequestRange>().err().unwrap_or_default();
    assert!(e.contains("numbered from 1"), "{e}");
    let e = "9..3".parse::<RequestRange>().err().unwrap_or_default();
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn step_scale_selection_and_repetition_factor() {
    let mut e = Preset::Default.engine();
    assert!(!e.step_scale_at(1), "1.0 is off");
    e.step_scale = 1.3;
    assert!(e.step_scale_at(1) && e.step_scale_at(7));
    e.step_scale_repetitions = Some(vec![3]);
    assert!(!e.step_scale_at(1) && e.step_scale_at(3));
    e.step_scale_requests = Some(RequestRange {
        first: 29,
        last: Some(56),
    });
    assert!(e.step_scale_selects(3, 29) && e.step_scale_selects(3, 56));
    assert!(!e.step_scale_selects(3, 28) && !e.step_scale_selects(3, 57));
    assert!(!e.step_scale_selects(2, 30));
    e.drift_per_repetition = 0.02;
    assert_eq!(e.repetition_factor(1), 1.0);
    assert!((e.repetition_factor(4) - 1.06).abs() < 1e-12);
}
