"""Reference values for crates/stats/src/nested (one-way random-effects ANOVA).

Computed by statsmodels' OLS ANOVA table (the sums of squares; statsmodels 0.14+) and by a
hand ANOVA in plain Python (k0, the components, the Satterthwaite standard error and df of
the mean of start means). Run: python3 crates/stats/tests/reference/nested_anova.py
"""
import math

DATA = {
    "balanced": [[4.61, 4.66, 4.58], [4.71, 4.69, 4.75], [4.52, 4.57, 4.55], [4.64, 4.60, 4.67]],
    "unbalanced": [[4.61], [4.71, 4.69, 4.75], [4.52, 4.57], [4.64, 4.60, 4.67, 4.62]],
}


def hand(starts):
    n = len(starts)
    N = sum(len(s) for s in starts)
    means = [sum(s) / len(s) for s in starts]
    grand = sum(sum(s) for s in starts) / N
    ssb = sum(len(s) * (m - grand) ** 2 for s, m in zip(starts, means))
    ssw = sum(sum((y - m) ** 2 for y in s) for s, m in zip(starts, means))
    msb, msw = ssb / (n - 1), ssw / (N - n)
    k0 = (N - sum(len(s) ** 2 for s in starts) / N) / (n - 1)
    h = sum(1 / len(s) for s in starts) / n
    a, b = msb / (k0 * n), msw * (h - 1 / k0) / n
    v = a + b
    df = v * v / (a * a / (n - 1) + b * b / (N - n))
    mos = sum(means) / n
    sm = sum((m - mos) ** 2 for m in means) / (n - 1)
    return dict(ssb=ssb, ssw=ssw, msb=msb, msw=msw, k0=k0, var_between=(msb - msw) / k0,
                var_within=msw, se=math.sqrt(v), df=df, se_start_means=math.sqrt(sm / n))


def statsmodels_ss(starts):
    import pandas as pd
    import statsmodels.api as sm
    from statsmodels.formula.api import ols
    rows = [(f"s{i}", y) for i, s in enumerate(starts) for y in s]
    df = pd.DataFrame(rows, columns=["start", "y"])
    t = sm.stats.anova_lm(ols("y ~ C(start)", data=df).fit())
    return t["sum_sq"]["C(start)"], t["sum_sq"]["Residual"]


for name, starts in DATA.items():
    r = hand(starts)
    try:
        ssb, ssw = statsmodels_ss(starts)
        assert abs(ssb - r["ssb"]) < 1e-12 and abs(ssw - r["ssw"]) < 1e-12, (ssb, ssw, r)
        r["statsmodels"] = "agrees"
    except ImportError:
        r["statsmodels"] = "not installed"
    print(name, {k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
