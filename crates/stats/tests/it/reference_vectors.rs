//! Every formula against reference vectors computed by numpy / scipy / statsmodels
//! (`tests/reference/make_vectors.py` → `tests/reference/vectors.json`).
//!
//! Tolerance: |actual − expected| ≤ 1e-9·|expected| + 1e-12 (from the file) for every
//! real-valued output; ranks, counts, methods and verdict names must match exactly.

use serde_json::Value;
use servebench_stats::cochran::cochran_q;
use servebench_stats::distributions::t_quantile;
use servebench_stats::error::StatsError;
use servebench_stats::holm::holm_adjust;
use servebench_stats::interval::{geometric_mean_ci, mean_ci};
use servebench_stats::mann_whitney::{MwuMethod, hodges_lehmann, mann_whitney};
use servebench_stats::order_stat::{min_requests_for_quantile, quantile_ci_sorted};
use servebench_stats::percentile::percentiles;
use servebench_stats::power::{minimum_detectable_effect, sample_size};
use servebench_stats::robust::{mad, robust_z};
use servebench_stats::spearman::spearman;
use servebench_stats::verdict::{Direction, Verdict, compare_arms};
use servebench_stats::welch::{welch, welch_log_ratio};

struct Ref {
    root: Value,
    rel: f64,
    abs: f64,
}

fn load() -> Ref {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/vectors.json");
    let text = std::fs::read_to_string(path).expect("vectors.json is committed beside the test");
    let root: Value = serde_json::from_str(&text).expect("vectors.json is valid JSON");
    let rel = root["tolerance"]["relative"]
        .as_f64()
        .expect("tolerance.relative");
    let abs = root["tolerance"]["absolute"]
        .as_f64()
        .expect("tolerance.absolute");
    assert!(
        rel <= 1e-9,
        "the file must not loosen the 1e-9 relative tolerance"
    );
    Ref { root, rel, abs }
}

impl Ref {
    fn cases(&self, key: &str) -> &Vec<Value> {
        let cases = self.root[key].as_array().expect("section is an array");
        assert!(!cases.is_empty(), "section {key} is empty");
        cases
    }

    fn close(&self, actual: f64, expected: f64, what: &str) {
        let tol = self.rel * expected.abs() + self.abs;
        assert!(
            (actual - expected).abs() <= tol,
            "{what}: got {actual:e}, scipy {expected:e} (diff {:e}, tol {tol:e})",
            (actual - expected).abs()
        );
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn fv(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(f).collect()
}

#[test]
fn percentiles_match_numpy_linear() {
    let r = load();
    for (i, c) in r.cases("percentile").iter().enumerate() {
        let got = percentiles(&fv(&c["values"]), &fv(&c["qs"])).expect("valid input");
        for (j, (g, e)) in got.iter().zip(fv(&c["expected"])).enumerate() {
            r.close(*g, e, &format!("percentile case {i} q#{j}"));
        }
    }
}

#[test]
fn t_quantiles_match_scipy_with_fractional_df() {
    let r = load();
    for c in r.cases("t_quantile") {
        let (p, df) = (f(&c["p"]), f(&c["df"]));
        let got = t_quantile(p, df).expect("valid");
        r.close(got, f(&c["expected"]), &format!("t.ppf({p}, {df})"));
    }
}

#[test]
fn t_intervals_match_scipy() {
    let r = load();
    for (i, c) in r.cases("t_interval").iter().enumerate() {
        let (v, level) = (fv(&c["values"]), f(&c["level"]));
        for (key, e) in [
            ("mean", mean_ci(&v, level).expect("n ≥ 3")),
            ("geometric", geometric_mean_ci(&v, level).expect("n ≥ 3")),
        ] {
            let want = &c[key];
            r.close(e.point, f(&want["point"]), &format!("{key} {i} point"));
            r.close(e.ci.lower, f(&want["lower"]), &format!("{key} {i} lower"));
            r.close(e.ci.upper, f(&want["upper"]), &format!("{key} {i} upper"));
            r.close(
                e.std_err,
                f(&want["std_err"]),
                &format!("{key} {i} std_err"),
            );
        }
    }
}

#[test]
fn welch_matches_scipy_ttest_ind() {
    let r = load();
    for (i, c) in r.cases("welch").iter().enumerate() {
        let (a, b, level) = (fv(&c["baseline"]), fv(&c["candidate"]), f(&c["level"]));
        let raw = welch(&a, &b, level).expect("valid");
        let log = welch_log_ratio(&a, &b, level).expect("valid");
        for (key, w) in [("raw", raw), ("log", log.log)] {
            let e = &c[key];
            r.close(w.diff, f(&e["diff"]), &format!("welch {i} {key} diff"));
            r.close(w.t, f(&e["t"]), &format!("welch {i} {key} t"));
            r.close(w.df, f(&e["df"]), &format!("welch {i} {key} df"));
            r.close(w.p, f(&e["p"]), &format!("welch {i} {key} p"));
            r.close(
                w.ci.lower,
                f(&e["lower"]),
                &format!("welch {i} {key} lower"),
            );
            r.close(
                w.ci.upper,
                f(&e["upper"]),
                &format!("welch {i} {key} upper"),
            );
        }
        let e = &c["ratio"];
        r.close(log.ratio.point, f(&e["point"]), &format!("ratio {i} point"));
        r.close(
            log.ratio.ci.lower,
            f(&e["lower"]),
            &format!("ratio {i} lower"),
        );
        r.close(
            log.ratio.ci.upper,
            f(&e["upper"]),
            &format!("ratio {i} upper"),
        );
    }
}

#[test]
fn mann_whitney_and_hodges_lehmann_match_scipy() {
    let r = load();
    let mut exact = 0;
    for (i, c) in r.cases("mann_whitney").iter().enumerate() {
        let (a, b) = (fv(&c["baseline"]), fv(&c["candidate"]));
        let got = mann_whitney(&a, &b).expect("valid");
        let want_method = match c["method"].as_str() {
            Some("exact") => MwuMethod::Exact,
            _ => MwuMethod::NormalApprox,
        };
        assert_eq!(got.method, want_method, "case {i}: method");
        exact += usize::from(got.method == MwuMethod::Exact);
        r.close(got.u, f(&c["u"]), &format!("mwu {i} U"));
        r.close(got.p, f(&c["p"]), &format!("mwu {i} p"));
        r.close(
            got.min_attainable_p,
            f(&c["min_attainable_p"]),
            &format!("mwu {i} min p"),
        );
        let hl = hodges_lehmann(&a, &b).expect("valid");
        r.close(hl, f(&c["hodges_lehmann"]), &format!("HL {i}"));
    }
    assert!(exact >= 5, "the exact path must be exercised");
}

#[test]
fn cochran_q_matches_reference() {
    let r = load();
    for (i, c) in r.cases("cochran_q").iter().enumerate() {
        let h = cochran_q(&fv(&c["estimates"]), &fv(&c["std_errs"])).expect("valid");
        r.close(h.q, f(&c["q"]), &format!("Q {i}"));
        assert_eq!(h.df as u64, c["df"].as_u64().expect("df"), "df {i}");
        r.close(h.p, f(&c["p"]), &format!("Q p {i}"));
        r.close(h.pooled, f(&c["pooled"]), &format!("pooled {i}"));
        r.close(h.pooled_se, f(&c["pooled_se"]), &format!("pooled se {i}"));
        for (j, (g, e)) in h.residuals.iter().zip(fv(&c["residuals"])).enumerate() {
            r.close(*g, e, &format!("residual {i}/{j}"));
        }
    }
}

#[test]
fn spearman_matches_scipy() {
    let r = load();
    for (i, c) in r.cases("spearman").iter().enumerate() {
        let got = spearman(&fv(&c["x"]), &fv(&c["y"])).expect("valid");
        r.close(got.rho, f(&c["rho"]), &format!("rho {i}"));
        r.close(got.p, f(&c["p"]), &format!("spearman p {i}"));
    }
}

#[test]
fn robust_z_matches_scipy_mad() {
    let r = load();
    for (i, c) in r.cases("robust_z").iter().enumerate() {
        let v = fv(&c["values"]);
        r.close(mad(&v).expect("valid"), f(&c["mad"]), &format!("MAD {i}"));
        for (j, (g, e)) in robust_z(&v)
            .expect("valid")
            .iter()
            .zip(fv(&c["z"]))
            .enumerate()
        {
            r.close(*g, e, &format!("z {i}/{j}"));
        }
    }
}

#[test]
fn holm_matches_statsmodels() {
    let r = load();
    for (i, c) in r.cases("holm").iter().enumerate() {
        let got = holm_adjust(&fv(&c["p"])).expect("valid");
        for (j, (g, e)) in got.iter().zip(fv(&c["adjusted"])).enumerate() {
            r.close(*g, e, &format!("holm {i}/{j}"));
        }
    }
}

#[test]
fn order_statistic_intervals_match_binomial_bounds() {
    let r = load();
    for c in r.cases("order_stat") {
        let n = c["n"].as_u64().expect("n") as usize;
        let (q, level) = (f(&c["q"]), f(&c["level"]));
        // Values equal to their rank, so bounds read back as ranks.
        let v: Vec<f64> = (1..=n).map(|k| k as f64).collect();
        let got = quantile_ci_sorted(&v, q, level);
        match c.get("required").and_then(Value::as_u64) {
            Some(required) => assert_eq!(
                got,
                Err(StatsError::TooFewSamples {
                    what: "order-statistic quantile interval",
                    n,
                    required: required as usize
                }),
                "n={n} q={q} level={level}"
            ),
            None => {
                let got = got.expect("enough data");
                assert_eq!(
                    got.lower_rank,
                    c["lower_rank"].as_u64().expect("l"),
                    "n={n} q={q}"
                );
                assert_eq!(
                    got.upper_rank,
                    c["upper_rank"].as_u64().expect("u"),
                    "n={n} q={q}"
                );
                assert_eq!(got.lower, got.lower_rank as f64);
                r.close(
                    got.coverage,
                    f(&c["coverage"]),
                    &format!("coverage n={n} q={q}"),
                );
            }
        }
    }
    for c in r.cases("min_requests") {
        let (q, conf) = (f(&c["q"]), f(&c["c"]));
        assert_eq!(
            min_requests_for_quantile(q, conf),
            c["expected"].as_u64(),
            "q={q} c={conf}"
        );
    }
}

#[test]
fn sample_size_and_mde_match_reference() {
    let r = load();
    for c in r.cases("power") {
        let (cv, delta, alpha, power) =
            (f(&c["cv"]), f(&c["delta"]), f(&c["alpha"]), f(&c["power"]));
        let n = sample_size(cv, delta, alpha, power).expect("valid");
        assert_eq!(n, c["n"].as_u64().expect("n"), "cv={cv} delta={delta}");
        for (k, want) in c["mde"].as_object().expect("mde map") {
            let k: u64 = k.parse().expect("n key");
            let got = minimum_detectable_effect(k, cv, alpha, power).expect("valid");
            r.close(got, f(want), &format!("MDE n={k} cv={cv}"));
        }
    }
}

#[test]
fn verdicts_match_the_transcribed_rule() {
    let r = load();
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in r.cases("verdicts").iter().enumerate() {
        let direction = match c["direction"].as_str() {
            Some("higher-is-better") => Direction::HigherIsBetter,
            _ => Direction::LowerIsBetter,
        };
        let got = compare_arms(
            &fv(&c["baseline"]),
            &fv(&c["candidate"]),
            direction,
            f(&c["threshold"]),
            f(&c["alpha"]),
        )
        .expect("valid");
        r.close(got.test.p, f(&c["p"]), &format!("verdict {i} p"));
        r.close(
            got.effect.ci.lower,
            f(&c["ratio_lower"]),
            &format!("verdict {i} lower"),
        );
        r.close(
            got.effect.ci.upper,
            f(&c["ratio_upper"]),
            &format!("verdict {i} upper"),
        );
        let want = match c["verdict"].as_str().expect("verdict") {
            "improved" => Verdict::Improved,
            "regressed" => Verdict::Regressed,
            "equivalent" => Verdict::Equivalent,
            "likely-improved" => Verdict::LikelyImproved,
            "likely-regressed" => Verdict::LikelyRegressed,
            "inconclusive" => Verdict::Inconclusive,
            other => panic!("unknown verdict {other:?} in the vectors"),
        };
        assert_eq!(got.verdict, want, "verdict case {i}");
        assert_eq!(
            got.trials_to_settle,
            c["trials_to_settle"].as_u64(),
            "verdict case {i}: trials to settle"
        );
        seen.insert(c["verdict"].as_str().unwrap_or_default().to_string());
    }
    assert_eq!(seen.len(), 6, "every verdict is exercised: {seen:?}");
}
