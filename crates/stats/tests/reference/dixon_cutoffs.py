"""Dixon's Q cutoffs for the outlier-trial rule (crates/stats/src/robust.rs, `dixon_q`).

Q of a sample is the gap between its most extreme value (either end) and that value's
neighbour, over the sample's range (Dean & Dixon 1951, the r10 ratio). Two trials equally far
from the rest are then no outlier (the gap is small), which the robust z, built on the MAD of
five values, cannot tell. The cutoff for n is the 99th percentile of Q over normally
distributed samples of n, estimated here by Monte Carlo (10^6 samples per n, fixed seed), so
an arm of well-behaved trials is flagged about 1% of the time; the classical one-sided table
(Rorabacher 1991, Anal. Chem. 63(2): 0.994, 0.926, 0.821, 0.740, 0.680, 0.634, 0.598, 0.568 at
n = 3…10 for 99%) is printed beside it for reference.

    python3 crates/stats/tests/reference/dixon_cutoffs.py
"""
import numpy as np

RORABACHER_95 = {3: 0.970, 4: 0.829, 5: 0.710, 6: 0.625, 7: 0.568, 8: 0.526, 9: 0.493, 10: 0.466}
RORABACHER_99 = {3: 0.994, 4: 0.926, 5: 0.821, 6: 0.740, 7: 0.680, 8: 0.634, 9: 0.598, 10: 0.568}
rng = np.random.default_rng(20261130)
for n in range(3, 11):
    x = np.sort(rng.standard_normal((1_000_000, n)), axis=1)
    rng_ = x[:, -1] - x[:, 0]
    q = np.maximum(x[:, 1] - x[:, 0], x[:, -1] - x[:, -2]) / rng_
    print(f"{n}: 95% {np.quantile(q, 0.95):.3f} (table {RORABACHER_95[n]}), "
          f"99% {np.quantile(q, 0.99):.3f} (table {RORABACHER_99[n]})")
