"""Exact moments for the generalized Warner estimator: E[1/M | M > 0] and Warner's variance.

M ~ Binomial(n, s) is the number of yes/no answers among n respondents when
each answers with probability s = p + q. The conditional variance of Eq. (2)
is proportional to E[1/M | M > 0] (docs/errata.md, item 1).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math

import numpy as np

from surveykit.errors import ParameterError
from surveykit.validation import check_sample_size

__all__ = ["inverse_moment", "warner_variance"]


# Terms below exp(-_LOG_DROP) times the largest one are outside the summation
# window; the window is widened until a proven bound on what it leaves out is
# below _TRUNCATION_TOLERANCE of the sum.
_LOG_DROP = 80.0
_TRUNCATION_TOLERANCE = 1e-17
_FULL_SUM_BELOW = 4096


def inverse_moment(n: int, s: float) -> float:
    """E[1/M | M > 0] for M ~ Binomial(n, s), exactly up to floating point.

    This is the factor A / (1 - (1 - s)^n) of the corrected Theorem 3.10
    (docs/errata.md, item 1). The binomial mass is summed only where it lives:
    the window around the mode is widened until the terms it leaves out,
    bounded by a geometric series (the binomial pmf is log-concave, so the
    ratio of successive terms is monotone), are below 1e-17 of the sum. The
    window has O(sqrt(n s (1 - s))) terms, so n = 10^9 takes milliseconds.

    >>> inverse_moment(1, 0.3)
    1.0
    >>> round(inverse_moment(2, 0.5), 12)  # (2*0.25*1 + 0.25*0.5) / 0.75
    0.833333333333
    """
    # scipy.stats costs ~1 s to import; only the commands that compute pay for it
    from scipy import stats

    n = check_sample_size(n)
    if not 0 < s <= 1:
        raise ParameterError(f"s = p + q ({s}) must be in (0, 1]")
    if s == 1:
        return 1.0 / n
    p_positive = -math.expm1(n * math.log1p(-s))
    if n <= _FULL_SUM_BELOW:
        m = np.arange(1, n + 1)
        return float(np.sum(stats.binom.pmf(m, n, s) / m) / p_positive)
    mode = min(n, max(1, math.floor((n + 1) * s)))
    sd = math.sqrt(n * s * (1 - s))
    half_width = math.ceil(math.sqrt(2 * _LOG_DROP) * sd + 50)
    while True:
        lo = max(1, mode - half_width)
        hi = min(n, mode + half_width)
        m = np.arange(lo, hi + 1)
        pmf = stats.binom.pmf(m, n, s)
        total = float(np.sum(pmf / m))
        left_out = 0.0
        odds = s / (1 - s)
        if hi < n:
            # ratio pmf(k+1)/pmf(k) = (n-k)/(k+1) * s/(1-s), decreasing in k
            ratio = (n - hi) / (hi + 1) * odds
            left_out += float(stats.binom.pmf(hi, n, s)) * ratio / (1 - ratio) if ratio < 1 \
                else math.inf
        if lo > 1:
            # ratio pmf(k-1)/pmf(k) = k/(n-k+1) * (1-s)/s, increasing in k
            ratio = lo / (n - lo + 1) / odds
            left_out += float(stats.binom.pmf(lo, n, s)) * ratio / (1 - ratio) if ratio < 1 \
                else math.inf
        if left_out <= _TRUNCATION_TOLERANCE * total or (lo == 1 and hi == n):
            return total / p_positive
        half_width *= 2


def warner_variance(*, pi: float, p: float, n: int) -> float:
    """Variance of Warner's estimator, the paper's Eq. (1).

    Var = (-(pi - 1/2)^2 + 1/4)/n + (1/(4(2p - 1)^2) - 1/4)/n
        = pi(1 - pi)/n + p(1 - p)/(n (2p - 1)^2)      (Warner 1965, Eq. 7)
    """
    n = check_sample_size(n)
    return (-(pi - 0.5) ** 2 + 0.25) / n + (1 / (4 * (2 * p - 1) ** 2) - 0.25) / n
