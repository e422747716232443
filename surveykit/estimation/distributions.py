"""Normal quantiles and tails, chi-square tails and quantiles, and the binomial pmf, without
``scipy.stats``.

Every command that prints an interval or a test needs a normal quantile or a chi-square tail,
and ``import scipy.stats`` costs about 1 s of CPU (issue 25: it was most of a CLI call's start-up).
These are the same numbers from the standard library's ``math`` and ``statistics``:

* the normal quantile is Wichura's algorithm AS 241 (``statistics.NormalDist.inv_cdf``, about
  16 digits, as ``scipy.special.ndtri``);
* the normal upper tail is ``erfc(x / sqrt 2) / 2`` (Abramowitz and Stegun 26.2.29);
* the chi-square upper tail with whole degrees of freedom is the regularized upper incomplete
  gamma function Q(df / 2, x / 2) in closed form (Abramowitz and Stegun 26.4.4 and 26.4.5:
  a Poisson sum for even df; erfc plus a sum for odd df), all terms positive, so no
  cancellation; other df fall back to ``scipy.special.chdtrc``;
* the chi-square quantile with one degree of freedom is the square of a normal quantile;
* the binomial pmf, cdf and upper tail are the functions ``scipy.stats.binom`` calls (Boost's,
  in ``scipy.special``), so their numbers are the same to the last bit, and the two-sided
  exact binomial test is ``scipy.stats.binomtest``'s algorithm on them.

tests/test_distributions.py checks each against ``scipy.stats`` as the oracle.

>>> round(normal_quantile(0.975), 6)
1.959964
>>> round(chi2_upper_tail(3.841458820694124, 1), 12)
0.05
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = [
    "binomial_pmf",
    "binomial_test",
    "chi2_upper_quantile",
    "chi2_upper_tail",
    "normal_quantile",
    "normal_upper_tail",
]

_STANDARD_NORMAL = NormalDist()


def normal_quantile(p: float) -> float:
    """The standard normal quantile: x with P(Z <= x) = p, for 0 < p < 1.

    >>> normal_quantile(0.5)
    0.0
    """
    return _STANDARD_NORMAL.inv_cdf(float(p))


def normal_upper_tail(x: float) -> float:
    """P(Z > x) for a standard normal Z: ``erfc(x / sqrt 2) / 2``, accurate far into the tail.

    >>> round(normal_upper_tail(1.959963984540054), 12)
    0.025
    """
    return 0.5 * math.erfc(float(x) / math.sqrt(2))


def chi2_upper_tail(x: float, df: float) -> float:
    """P(X > x) for X chi-square with ``df`` degrees of freedom.

    Whole df up to 100 (the tests of counts have a few) use the closed forms of Q(df / 2, x / 2):
    for even df = 2k, e^(-y) sum_{j<k} y^j / j!; for odd df = 2k + 1, erfc(sqrt y) +
    e^(-y) sum_{j<k} y^(j + 1/2) / Gamma(j + 3/2), with y = x / 2 (Abramowitz and Stegun
    26.4.4, 26.4.5). Each term is the previous one times y / (j + 1) or y / (j + 3/2). Other df,
    and x beyond 1400 (where e^(-y) underflows), use ``scipy.special.chdtrc``.

    >>> chi2_upper_tail(0.0, 3)
    1.0
    >>> round(chi2_upper_tail(2.0, 2), 15) == round(math.exp(-1), 15)
    True
    """
    x, df = float(x), float(df)
    if not df > 0:
        raise ValueError(f"df ({df}) must be positive")
    if x <= 0:
        return 1.0
    y = x / 2
    if not df.is_integer() or df > 100 or y > 700:  # e^(-y) underflows from y = 745 on
        from scipy.special import chdtrc  # scipy.special, not scipy.stats: a fraction of the cost

        return float(chdtrc(df, x))
    k = int(df) // 2
    if int(df) % 2 == 0:
        term, total = math.exp(-y), 0.0  # y^0 / 0! e^(-y)
        for j in range(k):
            total += term
            term *= y / (j + 1)
        return min(total, 1.0)
    total = math.erfc(math.sqrt(y))
    term = math.exp(-y) * math.sqrt(y) / math.gamma(1.5)  # y^(1/2) / Gamma(3/2) e^(-y)
    for j in range(k):
        total += term
        term *= y / (j + 1.5)
    return min(total, 1.0)


def chi2_upper_quantile(p: float, df: float = 1) -> float:
    """x with P(X > x) = p for X chi-square with ``df`` degrees of freedom (0 < p < 1).

    With one degree of freedom X = Z^2, so x = z^2 for the normal quantile z of p / 2 (not of
    1 - p / 2, which rounds to 1 for tiny p);
    other df use ``scipy.special.chdtri``.

    >>> round(chi2_upper_quantile(0.05), 6)
    3.841459
    """
    if df == 1:
        return normal_quantile(float(p) / 2) ** 2
    from scipy.special import chdtri  # scipy.special, not scipy.stats: a fraction of the cost

    return float(chdtri(df, p))


def binomial_pmf(m, n, s):
    """P(M = m) for M ~ Binomial(n, s), elementwise over arrays: ``scipy.stats.binom.pmf``'s own
    function (Boost's binomial pdf, via ``scipy.special``), without importing ``scipy.stats``.

    >>> round(float(binomial_pmf(1, 2, 0.5)), 15)
    0.5
    """
    pmf, _cdf, _sf = _binomial_ufuncs()
    return pmf(np.asarray(m, dtype=float), n, s)


def _binomial_ufuncs():
    """Boost's binomial pmf, cdf and upper tail, as ``scipy.stats.binom`` calls them."""
    try:
        # private names (scipy >= 1.12); a scipy that moves them falls back to scipy.stats
        from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
    except ImportError:  # pragma: no cover - depends on the installed scipy
        from scipy.stats import binom

        return binom.pmf, binom.cdf, binom.sf
    return _binom_pmf, _binom_cdf, _binom_sf


def binomial_test(k: int, n: int, p: float) -> float:
    """The two-sided exact binomial test's p-value of ``k`` successes in ``n`` trials against
    success probability ``p`` (0 < p < 1): the probability of every outcome no likelier than
    ``k`` (relative tolerance 1e-7), found by bisection on the other side of the mode.

    The algorithm and the numbers of ``scipy.stats.binomtest(k, n, p).pvalue`` (Boost's
    binomial cdf and upper tail: O(log n) evaluations at any n).

    >>> round(binomial_test(388, 1955, 0.2), 3)
    0.888
    """
    pmf, cdf, sf = _binomial_ufuncs()

    def below(x: float) -> float:  # P(X <= x), 0 below the support
        return 0.0 if x < 0 else 1.0 if x >= n else float(cdf(x, n, p))

    def above(x: float) -> float:  # P(X > x), 1 below the support
        return 1.0 if x < 0 else 0.0 if x >= n else float(sf(x, n, p))

    def density(x: float) -> float:
        return float(pmf(x, n, p))

    d = density(k)
    rerr = 1 + 1e-7
    if k == p * n:
        return 1.0
    if k < p * n:
        ix = _search(lambda x: -density(x), -d * rerr, math.ceil(p * n), n)
        y = n - ix + int(d * rerr == density(ix))
        pvalue = below(k) + above(n - y)
    else:
        ix = _search(density, d * rerr, 0, math.floor(p * n))
        y = ix + 1
        pvalue = below(y - 1) + above(k - 1)
    return min(1.0, pvalue)


def _search(a, d: float, lo: int, hi: int) -> int:
    """The i in [lo, hi] with a(i) <= d < a(i + 1), for a ascending on [lo, hi] (bisection)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        value = a(mid)
        if value < d:
            lo = mid + 1
        elif value > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1
