#!/usr/bin/env python3
"""Reference boundaries for crates/stats/src/sequential.rs, by methods independent of it.

The Rust module carries the density of the standardized cumulative statistic Z_k from look to
look on Jennison & Turnbull's grid (ch. 19) and solves each boundary by Newton. Here:

1. Boundaries ("boundaries"): for each look k, brentq on c_k of
       P(|Z_j| < c_j, j < k) − P(|Z_j| < c_j, j ≤ k) = α(t_k) − α(t_{k−1}),
   with the rectangle probabilities from scipy's multivariate normal CDF (Genz's randomized
   quasi-Monte Carlo, fixed seed) for Corr(Z_i, Z_j) = √(t_i/t_j).  No grid, no recursion.
2. Boundaries again ("boundaries_quadrature"), by brute-force quadrature: the sub-density of Z_k carried from look to
   look on a uniform grid of 4001 points over each continuation region (Simpson weights,
   numpy matrix products, scipy's normal functions), each c_k by brentq.  Not Jennison &
   Turnbull's grid, and far finer: accurate to ~1e-9, where Genz's QMC (step 1) is good to
   ~1e-7 in probability, ~1e-5 in c when looks are close together.
3. Monte Carlo: 10^7 Brownian paths per design, observed at the fractions; the share that
   first crosses ±c_k at look k, for the published boundaries of two designs and for the
   boundaries of step 1.  Each share has a binomial standard error, reported beside it.

Spending functions (two-sided symmetric, α/2 per side as in ld98 / R's ldbounds):
    O'Brien–Fleming type   α(t) = 2·(2 − 2Φ(z_{1−α/4}/√t))
    Pocock type            α(t) = α·ln(1 + (e − 1)t)

    pip install numpy scipy
    python3 crates/stats/tests/reference/sequential_boundaries.py   # writes the .json beside it

`tests/it/sequential.rs` reads sequential_boundaries.json.
"""

import json
import math
import platform
from pathlib import Path

import numpy as np
import scipy
from scipy import optimize, stats

SEED = 20240611
PATHS = 10_000_000


def spent(spending, alpha, t):
    if t >= 1.0:
        return alpha
    if spending == "obrien-fleming":
        return 4.0 * stats.norm.sf(stats.norm.isf(alpha / 4.0) / math.sqrt(t))
    if spending == "pocock":
        return alpha * math.log1p((math.e - 1.0) * t)
    raise ValueError(spending)


def correlation(fractions):
    t = np.asarray(fractions)
    return np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))


def continue_probability(fractions, bounds):
    """P(|Z_j| < c_j for every look j given), by Genz's algorithm (fixed seed)."""
    k = len(bounds)
    if k == 0:
        return 1.0
    c = np.asarray(bounds, dtype=float)
    if k == 1:
        return 1.0 - 2.0 * stats.norm.sf(c[0])
    mvn = stats.multivariate_normal(mean=np.zeros(k), cov=correlation(fractions[:k]), seed=SEED,
                                    maxpts=2_000_000 * k, abseps=1e-9, releps=1e-9)
    return float(mvn.cdf(c, lower_limit=-c))


def solve_boundaries(spending, alpha, fractions):
    bounds = []
    before = 0.0
    for k, t in enumerate(fractions):
        target = spent(spending, alpha, t) - before
        before = spent(spending, alpha, t)
        if k == 0:
            bounds.append(float(stats.norm.isf(target / 2.0)))
            continue
        cont = continue_probability(fractions, bounds)

        def excess(c):
            return cont - continue_probability(fractions[: k + 1], bounds + [c]) - target

        bounds.append(float(optimize.brentq(excess, 0.5, 8.0, xtol=1e-9)))
    return bounds


def simpson_grid(c, points=4001):
    z = np.linspace(-c, c, points)
    w = np.ones(points)
    w[1:-1:2] = 4.0
    w[2:-1:2] = 2.0
    return z, w * (z[1] - z[0]) / 3.0


def quadrature_boundaries(spending, alpha, fractions):
    """Boundaries by the recursion on a uniform grid (step 2 of the docstring)."""
    bounds = []
    before = 0.0
    z = hw = None
    for k, t in enumerate(fractions):
        target = spent(spending, alpha, t) - before
        before = spent(spending, alpha, t)
        if k == 0:
            c = float(stats.norm.isf(target / 2.0))
            z, w = simpson_grid(c)
            hw = stats.norm.pdf(z) * w
        else:
            tp = fractions[k - 1]
            sd = math.sqrt(t - tp)
            offsets = z * math.sqrt(tp)

            def excess(c, offsets=offsets, hw=hw, sd=sd, t=t, target=target):
                up = c * math.sqrt(t)
                return float(np.sum(hw * (stats.norm.sf((up - offsets) / sd)
                                           + stats.norm.sf((up + offsets) / sd)))) - target

            c = float(optimize.brentq(excess, 0.5, 12.0, xtol=1e-13))
            znew, wnew = simpson_grid(c)
            kernel = stats.norm.pdf((np.outer(znew, np.full_like(z, math.sqrt(t)))
                                     - offsets[None, :]) / sd) * (math.sqrt(t) / sd)
            hw = (kernel @ hw) * wnew
            z = znew
        bounds.append(c)
    return bounds


def monte_carlo(fractions, bounds, seed):
    """First-crossing shares of ±c_k by 10^7 Brownian paths, in chunks."""
    rng = np.random.default_rng(seed)
    t = np.asarray(fractions)
    c = np.asarray(bounds)
    increments_sd = np.sqrt(np.diff(np.concatenate([[0.0], t])))
    counts = np.zeros(len(t), dtype=np.int64)
    chunk = 1_000_000
    for _ in range(PATHS // chunk):
        s = np.cumsum(rng.standard_normal((chunk, len(t))) * increments_sd, axis=1)
        z = s / np.sqrt(t)
        crossed = np.abs(z) >= c
        first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
        counts += np.bincount(first[first >= 0], minlength=len(t))
    shares = counts / PATHS
    return {
        "paths": PATHS,
        "seed": seed,
        "first_crossing": [float(x) for x in shares],
        "std_err": [float(math.sqrt(p * (1 - p) / PATHS)) for p in shares],
        "total": float(shares.sum()),
        "total_std_err": float(math.sqrt(shares.sum() * (1 - shares.sum()) / PATHS)),
    }


EQ5 = [0.2, 0.4, 0.6, 0.8, 1.0]
DESIGNS = [
    # (name, spending, alpha, fractions, published boundaries or None)
    ("obf-5-equal", "obrien-fleming", 0.05, EQ5, [4.877, 3.357, 2.680, 2.290, 2.031]),
    ("pocock-5-equal", "pocock", 0.05, EQ5, [2.438, 2.427, 2.410, 2.397, 2.386]),
    ("obf-unequal", "obrien-fleming", 0.05, [0.15, 0.4, 0.55, 0.9, 1.0], None),
    ("pocock-servebench-rounds", "pocock", 0.05, [5 / 30, 6 / 30, 7 / 30, 8 / 30, 9 / 30], None),
    ("obf-alpha-0.01", "obrien-fleming", 0.01, [0.3, 0.6, 1.0], None),
    ("pocock-early-end", "pocock", 0.10, [0.25, 0.5, 1.0], None),
    ("obf-8-equal", "obrien-fleming", 0.05, [k / 8 for k in range(1, 9)], None),
]

out = {
    "generator": {
        "script": "crates/stats/tests/reference/sequential_boundaries.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "seed": SEED,
    },
    "designs": [],
}
for i, (name, spending, alpha, fractions, published) in enumerate(DESIGNS):
    bounds = solve_boundaries(spending, alpha, fractions)
    entry = {
        "name": name,
        "spending": spending,
        "alpha": alpha,
        "fractions": fractions,
        "spent": [spent(spending, alpha, t) for t in fractions],
        "boundaries": bounds,
        "boundaries_quadrature": quadrature_boundaries(spending, alpha, fractions),
        "monte_carlo": monte_carlo(fractions, bounds, SEED + i),
    }
    if published is not None:
        entry["published"] = published
        entry["monte_carlo_published"] = monte_carlo(fractions, published, SEED + 100 + i)
    out["designs"].append(entry)
    print(name, " ".join(f"{b:.6f}" for b in bounds), "|",
          " ".join(f"{b:.6f}" for b in entry["boundaries_quadrature"]),
          f"MC total {entry['monte_carlo']['total']:.5f} ± {entry['monte_carlo']['total_std_err']:.5f}")

path = Path(__file__).with_name("sequential_boundaries.json")
path.write_text(json.dumps(out, indent=1) + "\n")
print("wrote", path)
