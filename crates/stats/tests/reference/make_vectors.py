#!/usr/bin/env python3
"""Reference vectors for servebench-stats, computed by an independent implementation.

Every expected output below comes from numpy / scipy / statsmodels (or, where no library
function exists, from a direct transcription of the formula in docs/statistics-method.md using scipy's
distribution functions). Inputs are drawn from a fixed seed so the file is reproducible:

    pip install numpy scipy statsmodels
    python3 crates/stats/tests/reference/make_vectors.py   # writes vectors.json beside it

`tests/it/reference_vectors.rs` reads vectors.json and checks every formula against it with the
tolerances recorded in "tolerance".
"""

import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests

rng = np.random.RandomState(20240607)


def fl(xs):
    return [float(x) for x in xs]


def lognormal(n, median, cv):
    return fl(median * np.exp(rng.normal(0.0, cv, size=n)))


# --- percentiles: numpy linear (Hyndman-Fan type 7) -------------------------------------
QS = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0]
percentile = []
for n in [1, 2, 3, 5, 10, 37, 100, 1001]:
    values = fl(rng.gamma(2.0, 50.0, size=n))
    percentile.append(
        {"values": values, "qs": QS, "expected": fl(np.quantile(values, QS, method="linear"))}
    )
percentile.append({"values": [1, 2, 3, 4, 10], "qs": QS,
                   "expected": fl(np.quantile([1.0, 2, 3, 4, 10], QS))})

# --- Student's t quantiles, fractional df ---------------------------------------------------
t_quantile = []
for df in [1.0, 1.5, 2.0, 3.7, 4.0, 6.0, 8.0, 12.345, 30.0, 100.5, 1000.0]:
    for p in [0.001, 0.025, 0.1, 0.6, 0.8, 0.9, 0.95, 0.975, 0.995, 0.999]:
        t_quantile.append({"p": p, "df": df, "expected": float(stats.t.ppf(p, df))})

# --- t intervals: raw and log scale -----------------------------------------------------
t_interval = []
for n, level in [(3, 0.95), (4, 0.95), (5, 0.95), (5, 0.99), (8, 0.90), (20, 0.95)]:
    values = lognormal(n, 1000.0, 0.05)
    m, se = np.mean(values), stats.sem(values)
    lo, hi = stats.t.interval(level, n - 1, loc=m, scale=se)
    logs = np.log(values)
    lm, lse = np.mean(logs), stats.sem(logs)
    llo, lhi = stats.t.interval(level, n - 1, loc=lm, scale=lse)
    t_interval.append({
        "values": values, "level": level,
        "mean": {"point": float(m), "lower": float(lo), "upper": float(hi), "std_err": float(se)},
        "geometric": {"point": float(np.exp(lm)), "lower": float(np.exp(llo)),
                      "upper": float(np.exp(lhi)), "std_err": float(lse)},
    })

# --- Welch's t-test (raw and on logs): scipy ttest_ind(equal_var=False) --------------------
welch = []
for na, nb, shift, cva, cvb, level in [
    (5, 5, 1.00, 0.02, 0.02, 0.95), (5, 5, 1.05, 0.02, 0.03, 0.95), (3, 7, 0.97, 0.01, 0.05, 0.95),
    (10, 4, 1.20, 0.10, 0.02, 0.99), (6, 6, 1.01, 0.005, 0.005, 0.90), (20, 15, 0.90, 0.08, 0.12, 0.95),
]:
    a = lognormal(na, 100.0, cva)
    b = lognormal(nb, 100.0 * shift, cvb)
    entry = {"baseline": a, "candidate": b, "level": level}
    for key, xa, xb in [("raw", np.array(a), np.array(b)), ("log", np.log(a), np.log(b))]:
        r = stats.ttest_ind(xb, xa, equal_var=False)
        ci = r.confidence_interval(level)
        entry[key] = {"diff": float(np.mean(xb) - np.mean(xa)), "t": float(r.statistic),
                      "df": float(r.df), "p": float(r.pvalue),
                      "lower": float(ci.low), "upper": float(ci.high)}
    entry["ratio"] = {"point": math.exp(entry["log"]["diff"]),
                      "lower": math.exp(entry["log"]["lower"]),
                      "upper": math.exp(entry["log"]["upper"])}
    welch.append(entry)

# --- Mann-Whitney U: scipy mannwhitneyu(candidate, baseline) -------------------------------
mann_whitney = []
def mwu_case(a, b, method):
    r = stats.mannwhitneyu(b, a, alternative="two-sided", method=method)
    mann_whitney.append({
        "baseline": fl(a), "candidate": fl(b), "method": method,
        "u": float(r.statistic), "p": float(r.pvalue),
        "min_attainable_p": 2.0 / math.comb(len(a) + len(b), len(a)),
        "hodges_lehmann": float(np.median(np.subtract.outer(b, a))),
    })
for na, nb, shift in [(3, 3, 1.5), (4, 4, 1.0), (4, 4, 2.0), (5, 5, 1.03), (5, 7, 1.1),
                      (8, 6, 0.95), (12, 12, 1.02), (20, 17, 1.05), (30, 30, 1.0)]:
    mwu_case(np.round(rng.normal(100, 5, na), 6), np.round(rng.normal(100 * shift, 5, nb), 6),
             "exact")
# ties -> normal approximation with tie and continuity corrections
for na, nb in [(5, 5), (8, 9), (15, 12)]:
    mwu_case(rng.randint(0, 6, na).astype(float), rng.randint(1, 7, nb).astype(float),
             "asymptotic")
# no ties but arms above the exact limit (50) -> normal approximation
mwu_case(rng.normal(0, 1, 60), rng.normal(0.3, 1, 55), "asymptotic")

# --- Cochran's Q and leave-one-out residuals --------------------------------------------
def cochran(d, se):
    d, se = np.asarray(d), np.asarray(se)
    w = 1 / se**2
    pooled = np.sum(w * d) / np.sum(w)
    q = float(np.sum(w * (d - pooled) ** 2))
    res = []
    for i in range(len(d)):
        keep = np.arange(len(d)) != i
        wr, dr = w[keep], d[keep]
        pr = np.sum(wr * dr) / np.sum(wr)
        res.append(float((d[i] - pr) / math.sqrt(se[i] ** 2 + 1 / np.sum(wr))))
    return {"estimates": fl(d), "std_errs": fl(se), "q": q, "df": len(d) - 1,
            "p": float(stats.chi2.sf(q, len(d) - 1)), "pooled": float(pooled),
            "pooled_se": float(1 / math.sqrt(np.sum(w))), "residuals": res}
cochran_q = [
    cochran([0.01, 0.02, 0.015, 0.012, 0.018], [0.01, 0.012, 0.009, 0.011, 0.01]),
    cochran([-0.028, 0.514, -0.335, -0.700], [0.004, 0.004, 0.004, 0.004]),
    cochran([0.1, -0.1], [0.05, 0.08]),
    cochran(fl(rng.normal(0.02, 0.03, 8)), fl(rng.uniform(0.01, 0.04, 8))),
]

# --- Spearman: scipy spearmanr -----------------------------------------------------------
spearman = []
for x, y in [
    (list(range(5)), [3.0, 1.0, 4.0, 1.5, 5.0]),
    (list(range(8)), fl(np.arange(8) * 0.1 + rng.normal(0, 0.2, 8))),
    (fl(rng.normal(0, 1, 30)), fl(rng.normal(0, 1, 30))),
    ([1.0, 2, 2, 3, 4, 4, 4, 5], [2.0, 1, 3, 3, 5, 4, 6, 6]),
    (list(range(12)), fl(-np.arange(12) + rng.normal(0, 3, 12))),
]:
    r = stats.spearmanr(x, y)
    spearman.append({"x": fl(x), "y": fl(y), "rho": float(r.statistic), "p": float(r.pvalue)})

# --- robust z: 0.6745 |x - median| / MAD (scipy median_abs_deviation, scale=1) ----------
robust = []
for x in [[100.0, 101, 99, 100.5, 130], fl(rng.normal(50, 2, 9)), [10.0, 10, 11, 9, 10, 25],
          [5.0, 5, 5, 5, 9]]:
    x = np.asarray(x)
    med, mad = np.median(x), stats.median_abs_deviation(x, scale=1.0)
    if mad > 0:
        z = 0.6745 * np.abs(x - med) / mad
    else:  # Iglewicz & Hoaglin fallback: mean absolute deviation
        z = np.abs(x - med) / (1.253314 * np.mean(np.abs(x - med)))
    robust.append({"values": fl(x), "mad": float(mad), "z": fl(z)})

# --- Holm: statsmodels multipletests(method="holm") --------------------------------------
holm = []
for p in [[0.01, 0.04, 0.03, 0.005], fl(rng.uniform(0, 0.2, 12)), [0.5], [0.001, 0.2, 0.049, 0.3, 0.02]]:
    holm.append({"p": fl(p), "adjusted": fl(multipletests(p, method="holm")[1])})

# --- order-statistic interval for a quantile (binomial bounds, scipy binom.cdf) ----------
def order_ci(n, q, level):
    a = 1 - level
    cdf = stats.binom.cdf(np.arange(n + 1), n, q)
    ks = [k for k in range(n + 1) if cdf[k] <= a / 2]
    us = [k for k in range(n + 1) if cdf[k] >= 1 - a / 2]
    if not ks or not us or us[0] >= n:
        need = math.ceil(max(math.log(a / 2) / math.log(1 - q), math.log(a / 2) / math.log(q)))
        return {"n": n, "q": q, "level": level, "required": need}
    l, u = ks[-1] + 1, us[0] + 1
    return {"n": n, "q": q, "level": level, "lower_rank": l, "upper_rank": u,
            "coverage": float(cdf[u - 1] - cdf[l - 1])}
order_stat = [order_ci(n, q, lv) for n in [10, 20, 50, 100, 500, 1000, 5000]
              for q in [0.5, 0.9, 0.99] for lv in [0.95, 0.99]]
min_requests = [{"q": q, "c": c, "expected": math.ceil(math.log(1 - c) / math.log(q))}
                for q in [0.5, 0.9, 0.95, 0.99, 0.999] for c in [0.95, 0.99]]

# --- sample size and minimum detectable effect --------------------------------------------
def tsum(alpha, power, df):
    return stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)
def n_needed(cv, delta, alpha, power):
    n = 2
    while n < 2 * tsum(alpha, power, 2 * n - 2) ** 2 * cv**2 / delta**2:
        n += 1
    return n
power = []
for cv, delta, alpha, pw in [(0.02, 0.05, 0.05, 0.8), (0.05, 0.05, 0.05, 0.8), (0.10, 0.05, 0.05, 0.8),
                             (0.01, 0.02, 0.05, 0.8), (0.03, 0.02, 0.01, 0.9), (0.2, 0.1, 0.05, 0.8)]:
    n = n_needed(cv, delta, alpha, pw)
    power.append({"cv": cv, "delta": delta, "alpha": alpha, "power": pw, "n": n,
                  "mde": {str(k): float(tsum(alpha, pw, 2 * k - 2) * cv * math.sqrt(2 / k))
                          for k in [2, 3, 5, 10, n]}})

# --- verdicts: docs/statistics-method.md's rule transcribed, on scipy's Welch numbers -------
def verdict_case(a, b, direction, theta, alpha):
    la, lb = np.log(a), np.log(b)
    r = stats.ttest_ind(lb, la, equal_var=False)
    ci = r.confidence_interval(1 - alpha)
    d, lo, hi, p = float(np.mean(lb) - np.mean(la)), float(ci.low), float(ci.high), float(r.pvalue)
    L = math.log1p(theta)
    beyond, inside = lo > L or hi < -L, lo > -L and hi < L
    better = (d > 0) if direction == "higher-is-better" else (d < 0)
    trials = None
    if p < alpha and beyond:
        v = "improved" if better else "regressed"
    elif inside:
        v = "equivalent"
    elif p < alpha:
        v = "likely-improved" if better else "likely-regressed"
    else:
        v = "inconclusive"
    if v not in ("improved", "regressed", "equivalent"):
        # advice for an undecided cell: trials per arm to clear the distance to ±θ
        sd = math.sqrt((np.var(la, ddof=1) + np.var(lb, ddof=1)) / 2)
        dist = abs(abs(d) - L)
        trials = max(n_needed(sd, dist, alpha, 0.8), max(len(a), len(b)) + 1)
    return {"baseline": fl(a), "candidate": fl(b), "direction": direction, "threshold": theta,
            "alpha": alpha, "verdict": v, "trials_to_settle": trials, "p": p,
            "ratio_lower": math.exp(lo), "ratio_upper": math.exp(hi)}
verdicts = [
    verdict_case(lognormal(5, 100, 0.01), lognormal(5, 110, 0.01), "higher-is-better", 0.02, 0.05),
    verdict_case(lognormal(5, 100, 0.01), lognormal(5, 110, 0.01), "lower-is-better", 0.02, 0.05),
    verdict_case(lognormal(5, 100, 0.01), lognormal(5, 90, 0.01), "higher-is-better", 0.02, 0.05),
    verdict_case(lognormal(10, 100, 0.003), lognormal(10, 100.2, 0.003), "higher-is-better", 0.02, 0.05),
    verdict_case(lognormal(8, 100, 0.005), lognormal(8, 102.5, 0.005), "higher-is-better", 0.02, 0.05),
    verdict_case(lognormal(5, 100, 0.05), lognormal(5, 103, 0.05), "higher-is-better", 0.02, 0.05),
    verdict_case(lognormal(4, 100, 0.08), lognormal(4, 100, 0.08), "lower-is-better", 0.05, 0.05),
    verdict_case(lognormal(8, 100, 0.005), lognormal(8, 101.8, 0.005), "lower-is-better", 0.02, 0.05),
]

out = {
    "generator": {
        "script": "crates/stats/tests/reference/make_vectors.py",
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": scipy.__version__, "statsmodels": statsmodels.__version__, "seed": 20240607,
    },
    "tolerance": {"relative": 1e-9, "absolute": 1e-12},
    "percentile": percentile, "t_quantile": t_quantile, "t_interval": t_interval,
    "welch": welch, "mann_whitney": mann_whitney, "cochran_q": cochran_q,
    "spearman": spearman, "robust_z": robust, "holm": holm, "order_stat": order_stat,
    "min_requests": min_requests, "power": power, "verdicts": verdicts,
}
path = Path(__file__).with_name("vectors.json")
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path} ({sum(len(v) for v in out.values() if isinstance(v, list))} vectors)",
      file=sys.stderr)
