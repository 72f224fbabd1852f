//! Change points, Student's pooled t and the prediction interval against the independent
//! Python implementation (`tests/reference/changepoint.py` → `tests/reference/changepoint.json`).
//!
//! Tolerance: |actual − expected| ≤ 1e-9·|expected| + 1e-12 (from the file) for every
//! real-valued output; splits, outlier runs, change points, statuses and rules exactly;
//! permutation p-values within the Monte Carlo tolerance in the file (0.03).

use serde_json::Value;
use servebench_stats::changepoint::{Rule, Settings, Status, detect, max_t_split, permutation_p};
use servebench_stats::interval::prediction_interval;
use servebench_stats::student::pooled;

struct Ref {
    root: Value,
    rel: f64,
    abs: f64,
}

fn load() -> Ref {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/changepoint.json"
    );
    let text = std::fs::read_to_string(path).expect("changepoint.json is committed");
    let root: Value = serde_json::from_str(&text).expect("valid JSON");
    let rel = root["tolerance"]["relative"].as_f64().expect("tolerance");
    let abs = root["tolerance"]["absolute"].as_f64().expect("tolerance");
    assert!(rel <= 1e-9, "the file must not loosen the 1e-9 tolerance");
    Ref { root, rel, abs }
}

impl Ref {
    fn cases(&self, key: &str) -> &Vec<Value> {
        let c = self.root[key].as_array().expect("section is an array");
        assert!(!c.is_empty(), "section {key} is empty");
        c
    }

    fn close(&self, actual: f64, expected: f64, what: &str) {
        let tol = self.rel * expected.abs() + self.abs;
        assert!(
            (actual - expected).abs() <= tol,
            "{what}: got {actual:e}, reference {expected:e}"
        );
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn fv(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(f).collect()
}

fn uv(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("index") as usize)
        .collect()
}

#[test]
fn pooled_t_matches_scipy_equal_var() {
    let r = load();
    for (i, c) in r.cases("pooled").iter().enumerate() {
        let t = pooled(&fv(&c["before"]), &fv(&c["after"]), f(&c["level"])).expect("valid");
        for (name, got) in [
            ("diff", t.diff),
            ("std_err", t.std_err),
            ("df", t.df),
            ("t", t.t),
            ("p", t.p),
            ("lower", t.ci.lower),
            ("upper", t.ci.upper),
        ] {
            r.close(got, f(&c[name]), &format!("pooled {i} {name}"));
        }
    }
}

#[test]
fn prediction_interval_matches_scipy() {
    let r = load();
    for (i, c) in r.cases("prediction").iter().enumerate() {
        let ci = prediction_interval(&fv(&c["values"]), f(&c["level"])).expect("valid");
        r.close(ci.lower, f(&c["lower"]), &format!("prediction {i} lower"));
        r.close(ci.upper, f(&c["upper"]), &format!("prediction {i} upper"));
    }
}

#[test]
fn max_t_split_matches_scipy_per_split() {
    let r = load();
    for (i, c) in r.cases("max_t").iter().enumerate() {
        let min = c["min"].as_u64().expect("min") as usize;
        let (k, t) = max_t_split(&fv(&c["values"]), min, min).expect("fits");
        assert_eq!(k as u64, c["split"].as_u64().expect("split"), "max_t {i}");
        r.close(t, f(&c["t"]), &format!("max_t {i} t"));
    }
}

#[test]
fn permutation_p_agrees_within_monte_carlo_error() {
    let r = load();
    let tol = f(&r.root["tolerance"]["permutation_p"]);
    for (i, c) in r.cases("permutation").iter().enumerate() {
        let min = c["min"].as_u64().expect("min") as usize;
        let p = permutation_p(&fv(&c["values"]), min, min, f(&c["observed"]), 999, 7);
        let want = f(&c["p"]);
        assert!(
            (p - want).abs() <= tol,
            "permutation {i}: {p} vs reference {want}"
        );
    }
}

fn status(s: &str) -> Status {
    match s {
        "confirmed" => Status::Confirmed,
        _ => Status::Unconfirmed,
    }
}

fn rule(s: &str) -> Rule {
    match s {
        "segmentation" => Rule::Segmentation,
        "persistence" => Rule::Persistence,
        _ => Rule::Newest,
    }
}

#[test]
fn detect_matches_the_reference_implementation() {
    let r = load();
    let s = &r.root["settings"];
    let settings = Settings {
        alpha: f(&s["alpha"]),
        min_segment: s["min_segment"].as_u64().expect("min") as usize,
        window: s["window"].as_u64().expect("window") as usize,
        outlier_level: f(&s["outlier_level"]),
        newest_level: f(&s["newest_level"]),
        level: f(&s["level"]),
        ..Settings::default()
    };
    for c in r.cases("detect") {
        let name = c["name"].as_str().expect("name");
        let d = detect(&fv(&c["values"]), &settings).expect("valid");
        let outliers: Vec<usize> = d.outliers.iter().map(|o| o.index).collect();
        let want: Vec<usize> = c["outliers"]
            .as_array()
            .expect("array")
            .iter()
            .map(|o| o["index"].as_u64().expect("index") as usize)
            .collect();
        assert_eq!(outliers, want, "{name}: outlier runs");
        for (o, w) in d
            .outliers
            .iter()
            .zip(c["outliers"].as_array().expect("array"))
        {
            r.close(o.shift, f(&w["shift"]), &format!("{name} outlier shift"));
            r.close(
                o.interval.lower,
                f(&w["lower"]),
                &format!("{name} outlier lower"),
            );
            r.close(
                o.interval.upper,
                f(&w["upper"]),
                &format!("{name} outlier upper"),
            );
        }
        let cps = c["change_points"].as_array().expect("array");
        assert_eq!(d.change_points.len(), cps.len(), "{name}: {d:?}");
        for (cp, w) in d.change_points.iter().zip(cps) {
            assert_eq!(
                cp.index as u64,
                w["index"].as_u64().expect("index"),
                "{name}"
            );
            assert_eq!(
                cp.status,
                status(w["status"].as_str().expect("status")),
                "{name}"
            );
            assert_eq!(cp.rule, rule(w["rule"].as_str().expect("rule")), "{name}");
            assert_eq!(cp.before, uv(&w["before"]), "{name}: before");
            assert_eq!(cp.after, uv(&w["after"]), "{name}: after");
            let sh = &w["shift"];
            r.close(cp.shift.diff, f(&sh["diff"]), &format!("{name} shift"));
            r.close(cp.shift.p, f(&sh["p"]), &format!("{name} p"));
            r.close(cp.shift.ci.lower, f(&sh["lower"]), &format!("{name} lower"));
            r.close(cp.shift.ci.upper, f(&sh["upper"]), &format!("{name} upper"));
        }
    }
}
