"""The runs per group a two-sided Welch test needs, by SciPy and statsmodels: the reference
`schedlab plan` is tested against (schedlab-analyze's tests/power.rs and the binary's
tests/it/compare.rs), computed here without any of schedlab's code.

Reads a JSON array of cases `{"sd_a": ..., "sd_b": ..., "delta": ..., "cap": ...}` on stdin (or,
in place of the three, a group's and a baseline's values and the difference in percent of the
baseline's mean: `{"group": [...], "baseline": [...], "detect_pct": ..., "cap": ...}`) and
writes a JSON array with, per case, `{"scipy": n}` (the smallest integer n in [2, cap] whose power
reaches 0.8, or null when even `cap` runs fall short) and, where the spreads are equal and more
than two runs are needed, `"statsmodels"`: `TTestIndPower().solve_power` rounded up.

With n runs a side Welch's statistic is noncentral t with noncentrality
delta / sqrt((sd_a² + sd_b²) / n) and degrees of freedom (n - 1)(sd_a² + sd_b²)² / (sd_a⁴ + sd_b⁴)
(the README's "How many runs?"); its power is the chance of passing either critical value of the
central t at alpha 0.05. Power grows with n, so the smallest n is found by doubling, then
bisection on integers.
"""

import json
import math
import sys
import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.power import TTestIndPower

ALPHA, POWER = 0.05, 0.8


def power(n, va, vb, delta):
    df = (n - 1) * (va + vb) ** 2 / (va * va + vb * vb)
    nc = abs(delta) / math.sqrt((va + vb) / n)
    critical = stats.t.ppf(1 - ALPHA / 2, df)
    below = stats.nct.cdf(-critical, df, nc)
    # SciPy gives nan for the lower tail far beyond the noncentrality (it underflows): it is 0
    # to many more digits than the power needs.
    if math.isnan(below):
        below = 0.0
    return stats.nct.sf(critical, df, nc) + below


def runs(sd_a, sd_b, delta, cap):
    va, vb = sd_a * sd_a, sd_b * sd_b
    if va + vb == 0 or power(2, va, vb, delta) >= POWER:
        return 2
    # Double, then bisect: SciPy's noncentral t loses its upper tail at noncentralities far
    # beyond the few a power of 80 % needs, so the search never evaluates much past the answer.
    low, high = 2, 2
    while True:
        low, high = high, min(2 * high, cap)
        if power(high, va, vb, delta) >= POWER:
            break
        if high == cap:
            return None
    while high - low > 1:  # power(low) < POWER <= power(high)
        mid = (low + high) // 2
        if power(mid, va, vb, delta) >= POWER:
            high = mid
        else:
            low = mid
    return high


def main():
    warnings.filterwarnings("ignore")
    results = []
    for case in json.load(sys.stdin):
        if "group" in case:
            group, baseline = np.array(case["group"]), np.array(case["baseline"])
            sd_a, sd_b = np.std(group, ddof=1), np.std(baseline, ddof=1)
            delta = case["detect_pct"] / 100 * np.mean(baseline)
        else:
            sd_a, sd_b, delta = case["sd_a"], case["sd_b"], case["delta"]
        cap = int(case["cap"])
        result = {"scipy": runs(sd_a, sd_b, delta, cap)}
        # statsmodels solves for n of 2 or more only (below, it returns nan).
        if sd_a == sd_b and sd_a > 0 and (result["scipy"] or 0) > 2:
            n = TTestIndPower().solve_power(
                effect_size=abs(delta) / sd_a, alpha=ALPHA, power=POWER, ratio=1.0
            )
            if not math.isnan(n):
                result["statsmodels"] = math.ceil(n)
        results.append(result)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
