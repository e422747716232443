"""Exact moments for the generalized Warner estimator: E[1/M | M > 0] and Warner's variance.

M ~ Binomial(n, s) is the number of yes/no answers among n respondents when
each answers with probability s = p + q. The conditional variance of Eq. (2)
is proportional to E[1/M | M > 0] (docs/errata.md, item 1).

E[1/M | M > 0] is computed two ways, split at n s = 1000 (docs/estimation.md,
"Computing E[1/M | M > 0]", has the proof):

* n s < 1000: the binomial mass summed over a window around the mode, with a
  geometric bound on what the window leaves out (below 1e-17 of the sum). The
  window has O(sqrt(n s)) < 900 terms here (n <= 4096 sums all n terms), so
  this side costs at most about 0.4 ms whatever n is.
* n s >= 1000: the inverse factorial series
  1/m = sum_{k>=1} (k-1)! / ((m+1)(m+2)...(m+k)) taken in expectation. Each
  term has a closed form, E[M! / (M+k)!] = P(Binomial(n+k, s) >= k) /
  ((n+1)...(n+k) s^k), so

      E[1/M; M > 0] = sum_{k=1}^{K} t_k - D_K + R_K,
      t_k = (k-1)! / ((n+1)(n+2)...(n+k) s^k),

  with the remainder 0 <= R_K <= (K+2) t_{K+1} and the dropped lower-tail and
  M = 0 terms 0 <= D_K <= 1e-429 t_1. K is the first number of terms with
  (K+2) t_{K+1} <= 1e-14 t_1, which is a relative error bound because
  E[1/M; M > 0] >= t_1 - D_K. At n s >= 1000, K <= 6, so the cost is constant:
  about 1 microsecond at any n.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math

import numpy as np

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError
from surveykit.estimation.distributions import binomial_pmf
from surveykit.validation import check_sample_size

__all__ = ["inverse_moment", "nu_optimistic", "nu_walley", "warner_variance"]


# Terms below exp(-_LOG_DROP) times the largest one are outside the summation
# window; the window is widened until a proven bound on what it leaves out is
# below _TRUNCATION_TOLERANCE of the sum.
_LOG_DROP = 80.0
_TRUNCATION_TOLERANCE = 1e-17
_FULL_SUM_BELOW = 4096

# From n s = 1000 on, the factorial series reaches _SERIES_TOLERANCE by K = 6
# terms (the bound is at most 8 * 6! / 1000^6 = 5.8e-15 there) and the terms it
# drops are below 1e-429 relative; below, the window has at most ~900 terms.
_SERIES_FROM = 1000
# 1e-14 for the truncation leaves room for rounding (about K + 5 roundings of
# 1.1e-16 each, all terms being positive) within the 1e-13 relative accuracy promised.
_SERIES_TOLERANCE = 1e-14


def inverse_moment(n: int, s: float) -> float:
    """E[1/M | M > 0] for M ~ Binomial(n, s), to 1e-13 relative or better.

    This is the factor A / (1 - (1 - s)^n) of the corrected Theorem 3.10
    (docs/errata.md, item 1). Below n s = 1000 the binomial mass is summed
    over a window around the mode, widened until the terms it leaves out,
    bounded by a geometric series (the binomial pmf is log-concave, so the
    ratio of successive terms is monotone), are below 1e-17 of the sum. From
    n s = 1000 on, the inverse factorial series of 1/M is summed until its
    proven remainder bound is below 1e-14 (at most 6 terms): constant cost at
    any n (module docstring; proof in docs/estimation.md).

    >>> inverse_moment(1, 0.3)
    1.0
    >>> round(inverse_moment(2, 0.5), 12)  # (2*0.25*1 + 0.25*0.5) / 0.75
    0.833333333333
    >>> round(inverse_moment(10**12, 0.8) * 0.8e12, 12)  # 1 + (1 - s)/(n s) + ...
    1.0
    """
    n = check_sample_size(n)
    if not 0 < s <= 1:
        raise ParameterError(f"s = p + q ({s}) must be in (0, 1]")
    if s == 1:
        return 1.0 / n
    if n * s >= _SERIES_FROM:
        value, bound, _terms = _factorial_series(n, s, tolerance=_SERIES_TOLERANCE)
        if bound <= _SERIES_TOLERANCE:  # always, from n s = 1000 on (docs/estimation.md)
            return value
    return _windowed_sum(n, s)


def _factorial_series(n: int, s: float, *, tolerance: float) -> tuple[float, float, int]:
    """(E[1/M | M > 0] from the first K terms, the bound on their relative error, K).

    t_1 = 1 / ((n+1) s), t_{k+1} = t_k k / ((n+k+1) s); stops at the first K
    with (K+2) t_{K+1} <= tolerance t_1, or where that bound stops shrinking
    (the series is asymptotic: its terms grow again from k ~ n s on), so the
    returned bound may exceed tolerance only when n s is small. The bound
    ignores the dropped terms D_K <= e^-(n s) (polynomial) t_1, which is
    negligible only for n s in the hundreds or more (docs/estimation.md).

    >>> value, bound, terms = _factorial_series(10**6, 0.2, tolerance=1e-14)
    >>> terms, bound < 1e-14
    (3, True)
    """
    term = 1.0 / ((n + 1) * s)  # t_K, here K = 1
    first = total = term
    terms, previous_bound = 1, math.inf
    while True:
        following = term * terms / ((n + terms + 1) * s)  # t_{K+1}
        bound = (terms + 2) * following / first  # relative error bound of the K-term sum
        if bound <= tolerance or bound >= previous_bound:  # done, or the best it can do
            break
        total, term, terms, previous_bound = total + following, following, terms + 1, bound
    # P(M > 0) rounds to 1 from n s = 40 on; kept for the tests at smaller n s
    return total / -math.expm1(n * math.log1p(-s)), bound, terms


def _windowed_sum(n: int, s: float) -> float:
    """E[1/M | M > 0] by summing pmf(m) / m over a window around the mode (0 < s < 1).

    The window is widened until the geometric bound on the terms it leaves out
    is below 1e-17 of the sum; n <= 4096 sums every term. O(sqrt(n s (1 - s)))
    terms.

    >>> round(_windowed_sum(2, 0.5), 12)
    0.833333333333
    """
    p_positive = -math.expm1(n * math.log1p(-s))
    if n <= _FULL_SUM_BELOW:
        m = np.arange(1, n + 1)
        return float(np.sum(binomial_pmf(m, n, s) / m) / p_positive)
    mode = min(n, max(1, math.floor((n + 1) * s)))
    sd = math.sqrt(n * s * (1 - s))
    half_width = math.ceil(math.sqrt(2 * _LOG_DROP) * sd + 50)
    while True:
        lo = max(1, mode - half_width)
        hi = min(n, mode + half_width)
        m = np.arange(lo, hi + 1)
        pmf = binomial_pmf(m, n, s)
        total = float(np.sum(pmf / m))
        left_out = 0.0
        odds = s / (1 - s)
        if hi < n:
            # ratio pmf(k+1)/pmf(k) = (n-k)/(k+1) * s/(1-s), decreasing in k
            ratio = (n - hi) / (hi + 1) * odds
            left_out += float(binomial_pmf(hi, n, s)) * ratio / (1 - ratio) if ratio < 1 \
                else math.inf
        if lo > 1:
            # ratio pmf(k-1)/pmf(k) = k/(n-k+1) * (1-s)/s, increasing in k
            ratio = lo / (n - lo + 1) / odds
            left_out += float(binomial_pmf(lo, n, s)) * ratio / (1 - ratio) if ratio < 1 \
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


def nu_walley(design: GeneralizedWarner, *, pi: float, n: int) -> float:
    """nu_W(p, q): Warner's variance (Eq. 1) at truth probability p, i.e. Q_0 (Section 3.2).

    The worst variance among the redistributions Q_lambda
    (:meth:`~surveykit.designs.warner.GeneralizedWarner.redistribute`); ``inf`` when
    p <= 1/2 (some Q_lambda is then uninformative).

    >>> nu_walley(GeneralizedWarner(p=0.45, q=0.1), pi=0.5, n=10)
    inf
    >>> nu_walley(GeneralizedWarner(p=0.75, q=0.1), pi=0.5, n=10) == warner_variance(
    ...     pi=0.5, p=0.75, n=10)
    True
    """
    if design.p <= 0.5:
        return math.inf
    return warner_variance(pi=pi, p=design.p, n=n)


def nu_optimistic(design: GeneralizedWarner, *, pi: float, n: int) -> float:
    """nu_O(p, q): Warner's variance at truth probability 1 - q, i.e. Q_1 (Section 3.2): the
    smallest variance among the redistributions Q_lambda.

    >>> nu_optimistic(GeneralizedWarner(p=0.6, q=0.15), pi=0.5, n=10) == warner_variance(
    ...     pi=0.5, p=0.85, n=10)
    True
    """
    return warner_variance(pi=pi, p=1 - design.q, n=n)
