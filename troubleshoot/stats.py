"""Confidence interval of a mean, for measure effectiveness (docs/kb.md).

Each closed session contributes one relative improvement per step (a measure,
or measures applied together); the effectiveness of a step is the mean over
sessions with a two-sided 95 % Student t interval::

    mean ± t(0.975, n - 1) · s / √n

where ``s`` is the sample standard deviation. It assumes the sessions are
independent and their improvements roughly normal; with n < 2 there is no
interval. The t quantile is tabulated for 1-30 degrees of freedom (rounded to
three decimals, as printed in statistics tables) and computed beyond with the
Cornish-Fisher expansion of t in powers of 1/df around the normal quantile
(Abramowitz & Stegun 26.7.5), which agrees with the table to 1e-3 at df = 30.

    >>> round(t_quantile_975(4), 3), round(t_quantile_975(60), 3), round(t_quantile_975(120), 3)
    (2.776, 2.0, 1.98)
    >>> mean, low, high = mean_interval([0.5, 0.4, 0.6])
    >>> round(mean, 2), round(low, 3), round(high, 3)
    (0.5, 0.252, 0.748)
    >>> mean_interval([0.5])
    (0.5, None, None)
"""

from __future__ import annotations

import math
import statistics

# t(0.975, df) for df = 1..30
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = statistics.NormalDist().inv_cdf(0.975)


def t_quantile_975(df: int) -> float:
    """The 97.5th percentile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_interval(values: list[float]) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)``: the mean and its 95 % t interval (None, None for one value)."""
    if not values:
        raise ValueError("no values")
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half
