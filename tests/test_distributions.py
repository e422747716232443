"""surveykit.estimation.distributions against scipy.stats, the oracle it replaces (issue 25:
``scipy.stats`` cost most of a CLI call's start-up; these give the same numbers without it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from surveykit.estimation.distributions import (
    binomial_pmf,
    binomial_test,
    chi2_upper_quantile,
    chi2_upper_tail,
    normal_quantile,
    normal_upper_tail,
)

# probabilities from the far tails to the centre, and the levels people ask for
PROBABILITIES = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.001, 0.999, 999),
                                [0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1 - 1e-12]])


def test_normal_quantile_equals_scipy_to_15_digits():
    ours = np.array([normal_quantile(p) for p in PROBABILITIES])
    np.testing.assert_allclose(ours, stats.norm.ppf(PROBABILITIES), rtol=5e-15, atol=1e-300)


def test_normal_upper_tail_equals_scipy_to_12_digits_out_to_z_37():
    # math.erfc loses a few digits in the far tail (2e-13 relative at z = 30), so 12 here
    x = np.linspace(-8, 37, 4501)
    ours = np.array([normal_upper_tail(v) for v in x])
    np.testing.assert_allclose(ours, stats.norm.sf(x), rtol=1e-12, atol=0)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 6, 7, 10, 11, 40, 99, 100, 101, 500])
def test_chi2_upper_tail_equals_scipy_to_12_digits(df):
    # from the bulk out to tails of 1e-300, where a sum with cancellation would show (math.erfc
    # gives 1.4e-13 relative at 1e-240 for odd df, hence 12 digits, not 15)
    x = np.concatenate([np.linspace(0, 5 * df + 50, 800), np.geomspace(1e-8, 1300, 300)])
    ours = np.array([chi2_upper_tail(v, df) for v in x])
    np.testing.assert_allclose(ours, stats.chi2.sf(x, df), rtol=1e-12, atol=1e-300)


def test_chi2_upper_tail_other_df_uses_scipy_special():
    for df in (0.5, 2.5, 1500):
        for x in (0.1, 1.0, df, 3 * df):
            assert chi2_upper_tail(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-14)


def test_chi2_upper_tail_refuses_nonpositive_df():
    with pytest.raises(ValueError, match="df"):
        chi2_upper_tail(1.0, 0)


@pytest.mark.parametrize("df", [1, 2, 5])
def test_chi2_upper_quantile_equals_scipy_to_14_digits(df):
    p = PROBABILITIES[(PROBABILITIES > 1e-200) & (PROBABILITIES < 1)]
    ours = np.array([chi2_upper_quantile(q, df) for q in p])
    np.testing.assert_allclose(ours, stats.chi2.isf(p, df), rtol=1e-13)


@pytest.mark.parametrize("n, s", [(1, 0.3), (7, 0.5), (100, 0.01), (4096, 0.8),
                                  (10**6, 1e-4), (10**9, 0.999999)])
def test_binomial_pmf_is_scipy_stats_binom_pmf_to_the_bit(n, s):
    m = np.unique(np.linspace(0, n, min(n + 1, 2001)).astype(np.int64))
    np.testing.assert_array_equal(binomial_pmf(m, n, s), stats.binom.pmf(m, n, s))
    assert math.isclose(float(np.sum(binomial_pmf(np.arange(n + 1), n, s))), 1.0,
                        rel_tol=1e-12) if n <= 10**4 else True


@pytest.mark.parametrize("n, p", [(1, 0.5), (10, 0.2), (80, 0.2), (1955, 0.2), (1000, 0.5),
                                  (12345, 0.013), (10**6, 0.2), (10**8, 0.37)])
def test_binomial_test_is_scipy_binomtest_to_the_bit(n, p):
    # every k up to n = 1000 (at p = 0.5 every k meets its mirror image: the ties); above,
    # the bulk, both tails and the mode's neighbours (scipy's binomtest costs 2 ms a call:
    # every k of n = 1955 took 3.8 s of CPU in scipy alone)
    centre = round(n * p)
    ks = set(range(n + 1)) if n <= 1000 else set(
        np.linspace(0, n, 301).astype(int).tolist()) | set(range(max(0, centre - 100),
                                                                 min(n, centre + 100) + 1))
    for k in sorted(ks):
        assert binomial_test(k, n, p) == stats.binomtest(k, n, p).pvalue, (k, n, p)
