"""Outlier cutoffs calibrated to the number of trials (crates/stats/src/robust.rs).

For n normally distributed trial values, the largest robust z = 0.6745·|x − median|/MAD
exceeds STATISTICS.md's 3.5 in 9–29% of arms (n = 3…30): at 5 trials nearly every
comparison would carry an outlier flag. The cutoff used is the 99th percentile of that
maximum, so an arm of well-behaved trials is flagged about 1% of the time.

    python3 crates/stats/tests/reference/robust_cutoffs.py
"""
import numpy as np

rng = np.random.default_rng(12345)
for n in range(3, 31):
    x = rng.standard_normal((200_000, n))
    med = np.median(x, axis=1, keepdims=True)
    mad = np.median(np.abs(x - med), axis=1, keepdims=True)
    m = (0.6745 * np.abs(x - med) / mad).max(axis=1)
    print(f"{n}: {np.quantile(m, 0.99):.2f}  (share above 3.5: {(m > 3.5).mean():.3f})")
