"""E[1/M | M > 0]: the windowed sum below n s = 1000, the factorial series from there on.

References: the mpmath integral of tests/exact.py (50 digits, checked here
against the full mpmath sum), and the windowed sum itself above the crossover.
The derivation of the series' error bound is in docs/estimation.md.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from exact import inverse_moment_by_integral

from surveykit.estimation.exact import (
    _SERIES_FROM,
    _SERIES_TOLERANCE,
    _factorial_series,
    _windowed_sum,
    inverse_moment,
)


def _full_sum(n: int, s: float):
    """sum_{m=1}^{n} pmf(m) / m / P(M > 0) in mpmath at 50 digits, pmf by its recurrence."""
    with mpmath.workdps(50):
        s_mp = mpmath.mpf(s)
        term = (1 - s_mp) ** n  # pmf(0)
        total = mpmath.mpf(0)
        for m in range(1, n + 1):
            term *= s_mp / (1 - s_mp) * (n - m + 1) / m
            total += term / m
        return +(total / (1 - (1 - s_mp) ** n))


@pytest.mark.parametrize(("n", "s"), [(1, 0.3), (20, 0.3), (3000, 0.4), (5000, 0.05),
                                      (4000, 1e-5)])
def test_the_integral_oracle_agrees_with_the_full_mpmath_sum(n, s):
    reference = _full_sum(n, s)
    with mpmath.workdps(50):
        assert abs(inverse_moment_by_integral(n, s) / reference - 1) < mpmath.mpf("1e-40")


# (n, s) on both sides of n s = 1000, at n up to 10^15 and s near 0 and near 1.
CASES = [
    (1249, 0.8), (1250, 0.8),                      # the crossover inside the full-sum range
    (4999, 0.2), (5000, 0.2),
    (10**6, 0.3), (10**6, 0.999999), (10**6, 0.000999), (10**6, 0.001),
    (10**9, 0.2), (10**9, 1 - 1e-9), (10**9, 9.99e-7), (10**9, 1e-6),
    (10**12, 0.8), (10**12, 0.5), (10**12, 1 - 1e-12), (10**12, 1e-6),
    (10**12, 1e-9), (10**12, 9.99e-10), (10**12, 1e-10), (10**12, 1e-13),
    (10**15, 0.5), (10**15, 1e-12), (10**15, 2e-15),
]


def test_the_cases_cover_both_sides_of_the_crossover():
    sides = [n * s >= _SERIES_FROM for n, s in CASES]
    assert sides.count(True) >= 10 and sides.count(False) >= 8


@pytest.mark.parametrize(("n", "s"), CASES, ids=[
    f"n={n:.0e}-s={s:.6g}-{'series' if n * s >= _SERIES_FROM else 'window'}" for n, s in CASES])
def test_inverse_moment_agrees_with_the_mpmath_integral_on_both_sides_of_the_crossover(n, s):
    reference = float(inverse_moment_by_integral(n, s))
    assert inverse_moment(n, s) == pytest.approx(reference, rel=1e-13)


@pytest.mark.parametrize(("n", "s"), [
    (1250, 0.8), (4097, 0.3), (10**4, 0.1), (10**4, 0.999), (10**6, 0.001), (10**6, 0.5),
    (10**6, 1 - 1e-7), (10**8, 1e-5), (10**8, 0.9), (10**9, 0.8),
])
def test_series_agrees_with_the_windowed_sum_above_the_crossover(n, s):
    assert n * s >= _SERIES_FROM
    assert inverse_moment(n, s) == pytest.approx(_windowed_sum(n, s), rel=1e-13)


def test_below_the_crossover_inverse_moment_is_the_windowed_sum():
    for n, s in [(10**12, 9.99e-10), (10**6, 0.000999), (4096, 0.2), (50, 0.5)]:
        assert n * s < _SERIES_FROM
        assert inverse_moment(n, s) == _windowed_sum(n, s)


@pytest.mark.parametrize(("n", "s"), [(10**4, 0.1), (10**6, 0.0008), (10**12, 3e-10)])
@pytest.mark.parametrize("tolerance", [1e-3, 1e-6, 1e-9])
def test_series_error_is_within_its_bound_and_the_bound_is_tight(n, s, tolerance):
    """Loose tolerances stop the series early so its truncation error is measurable.

    The remainder is positive, so the sum lies below the truth; it is at least
    K! E[M! / (M+K+1)!; M > 0] ~ t_{K+1}, so the bound (K+2) t_{K+1} / t_1
    overstates it by at most a factor of about K + 2.
    """
    value, bound, terms = _factorial_series(n, s, tolerance=tolerance)
    reference = float(inverse_moment_by_integral(n, s))
    error = (reference - value) / reference
    assert bound <= tolerance
    assert 0 <= error <= bound
    assert error >= 0.9 * bound / (terms + 2)


def test_the_proven_worst_case_bound_is_below_the_tolerance():
    """From n s = X on, t_{K+1} / t_1 <= K! / X^K, so K = 6 terms reach (K+2) 6! / X^6."""
    worst = Fraction(8 * math.factorial(6), _SERIES_FROM**6)
    assert worst <= Fraction(_SERIES_TOLERANCE) < Fraction(1, 10**13)
    five_terms = Fraction(7 * math.factorial(5), _SERIES_FROM**5)
    assert five_terms > Fraction(_SERIES_TOLERANCE)  # so 6 terms are needed at the crossover


@pytest.mark.parametrize("s", [*np.geomspace(1e-12, 1, 25)[:-1], 0.5, 0.8, 1 - 1e-6, 1 - 1e-12])
def test_the_bound_holds_with_at_most_six_terms_wherever_the_series_is_used(s):
    """The runtime bound is below 1e-14 (< 1e-13) from the crossover to n = 10^18."""
    start = math.ceil(_SERIES_FROM / s)
    for n in sorted({start, start + 1, 2 * start, 10 * start, *(10**e for e in range(4, 19))}):
        if n * s < _SERIES_FROM:
            continue
        value, bound, terms = _factorial_series(n, s, tolerance=_SERIES_TOLERANCE)
        assert bound <= _SERIES_TOLERANCE
        assert terms <= 6
        assert value > 0


def test_the_series_stops_at_its_smallest_bound_when_n_s_is_too_small():
    """At n s = 20 no number of terms reaches 1e-14: the series stops where its bound is
    smallest and reports it (inverse_moment never uses it there; nor would the bound be
    proven, the dropped terms D_K ~ e^-20 being no longer negligible)."""
    value, bound, terms = _factorial_series(100, 0.2, tolerance=_SERIES_TOLERANCE)
    assert bound > _SERIES_TOLERANCE
    assert terms < 40
    assert value > 0
