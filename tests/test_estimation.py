"""Estimation: the exact conditional variance, estimates, intervals and their coverage."""

import collections
import math
from fractions import Fraction

import numpy as np
import pytest
from exact import enumerate_conditional_moments
from scipy import stats

from surveykit import (
    ConfidenceInterval,
    EstimationError,
    GeneralizedWarner,
    ParameterError,
    Warner,
    estimate,
    estimate_from_labels,
)
from surveykit.estimation import (
    CI_METHODS,
    DEFAULT_CI_METHOD,
    conditional_variance,
    interval_arrays,
)
from surveykit.estimation.exact import inverse_moment, warner_variance

# -- the exact conditional variance --------------------------------------------------------

GRID = [
    (n, p, q, pi)
    for n in (1, 2, 3, 5, 8, 13)
    for p, q in (("0.4", "0.1"), ("0.6", "0.2"), ("0.5", "0.1"), ("0.75", "0.25"), ("0.3", "0.05"))
    for pi in ("0", "0.05", "0.5", "0.9")
]


@pytest.mark.parametrize(("n", "p", "q", "pi"), GRID)
def test_exact_variance_agrees_with_enumeration(n, p, q, pi):
    mean, variance = enumerate_conditional_moments(n, p, q, pi)
    gw = GeneralizedWarner(p=float(p), q=float(q))
    assert mean == Fraction(pi)  # Theorem 3.9 holds exactly
    got = conditional_variance(gw, pi=float(pi), n=n)
    assert got == pytest.approx(float(variance), rel=1e-12, abs=0)


@pytest.mark.parametrize(
    ("n", "p", "q", "pi", "true", "printed"),
    [
        # /work/shared/paper/ERRATA.md item 1, re-derived by tests/exact.py
        (3, "0.4", "0.1", "0.5", 0.4794973545, 0.4195601852),
        (5, "0.5", "0.1", "0.3", 0.2045909311, 0.20249592),
    ],
)
def test_theorem_3_10_as_printed_misses_the_conditioning_factor(n, p, q, pi, true, printed):
    _, variance = enumerate_conditional_moments(n, p, q, pi)
    assert float(variance) == pytest.approx(true, abs=1e-10)
    gw = GeneralizedWarner(p=float(p), q=float(q))
    q1, q2, q3 = gw.probabilities(float(pi))
    s = gw.answer_rate
    a = sum(math.comb(n, k) * s ** (n - k) * q3**k / (n - k) for k in range(n))  # A as printed
    assert q1 * q2 * a / (gw.p - gw.q) ** 2 == pytest.approx(printed, abs=1e-8)
    assert conditional_variance(gw, pi=float(pi), n=n) == pytest.approx(true, abs=1e-10)


@pytest.mark.parametrize(("n", "s"), [(4097, 0.3), (6000, 0.8), (5000, 0.05)])
def test_inverse_moment_agrees_with_mpmath_full_sum(n, s):
    """Reference: the full sum over m = 1..n in mpmath at 40 significant digits."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    s_mp = mpmath.mpf(str(s))
    term = (1 - s_mp) ** n  # pmf(0)
    total = mpmath.mpf(0)
    for m in range(1, n + 1):
        term *= s_mp / (1 - s_mp) * (n - m + 1) / m
        total += term / m
    reference = total / (1 - (1 - s_mp) ** n)
    assert inverse_moment(n, s) == pytest.approx(float(reference), rel=1e-13)


def _asymptotic_inverse_moment(n: int, s: float) -> float:
    """E[1/M] = (1/mu) sum_k (-1)^k E[(M - mu)^k] / mu^k, to k = 4 (error O(n^-3) relative)."""
    mu, v = n * s, n * s * (1 - s)
    k3 = v * (1 - 2 * s)
    m4 = 3 * v * v + v * (1 - 6 * s * (1 - s))
    return (1 + v / mu**2 - k3 / mu**3 + m4 / mu**4) / mu


@pytest.mark.parametrize("n", [10**6, 10**7, 10**8, 10**9])
@pytest.mark.parametrize("s", [0.2, 0.8, 0.95])
def test_inverse_moment_agrees_with_the_asymptotic_series_at_large_n(n, s):
    # the first omitted terms are ~15 (v / mu^2)^3, below 1e-16 here
    assert inverse_moment(n, s) == pytest.approx(_asymptotic_inverse_moment(n, s), rel=1e-13)


@pytest.mark.parametrize("p", [0.55, 0.7, 0.75, 0.9, 1.0])
@pytest.mark.parametrize("pi", [0.0, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("method", ["exact", "grab-savage"])
def test_warner_case_gives_warners_variance(p, pi, method):
    """p + q = 1: M = n, and the variance is the paper's Eq. (1)."""
    n = 137
    assert conditional_variance(Warner(p=p), pi=pi, n=n, method=method) == pytest.approx(
        warner_variance(pi=pi, p=p, n=n), rel=1e-12, abs=1e-300
    )


@pytest.mark.parametrize("yes", [0, 17, 60, 137])
def test_warner_case_gives_warners_estimator(yes):
    """Example 3.7 (corrected, docs/errata.md item 5): pi_hat = (p-1)/(2p-1) + n1/((2p-1) n)."""
    p, n = 0.7, 137
    e = estimate(yes=yes, no=n - yes, dont_know=0, design=Warner(p=p))
    assert e.pi_hat == pytest.approx((p - 1) / (2 * p - 1) + yes / ((2 * p - 1) * n), abs=1e-12)


def test_grab_savage_approximation_is_close_at_large_n_and_refused_where_undefined():
    gw = GeneralizedWarner(p=0.5, q=0.2)
    exact = conditional_variance(gw, pi=0.3, n=2000)
    approx = conditional_variance(gw, pi=0.3, n=2000, method="grab-savage")
    assert approx == pytest.approx(exact, rel=1e-5)
    with pytest.raises(ParameterError, match=r"Grab-Savage approximation needs \(n \+ 1\)"):
        conditional_variance(GeneralizedWarner(p=0.2, q=0.1), pi=0.3, n=2, method="grab-savage")
    with pytest.raises(ParameterError, match="method .'fast'. must be 'exact' or 'grab-savage'"):
        conditional_variance(gw, pi=0.3, n=20, method="fast")  # type: ignore[arg-type]


def test_conditional_variance_is_vectorized_over_pi():
    gw = GeneralizedWarner(p=0.6, q=0.2)
    pis = np.array([0.0, 0.3, 1.0])
    together = conditional_variance(gw, pi=pis, n=50)
    one_by_one = [conditional_variance(gw, pi=float(x), n=50) for x in pis]
    assert together == pytest.approx(one_by_one, rel=1e-15)


@pytest.mark.parametrize(("n", "message"), [(0, r"n \(0\) must be at least 1"),
                                            (2.5, r"n \(2\.5\) must be a whole number")])
def test_conditional_variance_refuses_bad_n(n, message):
    with pytest.raises(ParameterError, match=message):
        conditional_variance(GeneralizedWarner(p=0.6, q=0.2), pi=0.3, n=n)


# -- estimates -----------------------------------------------------------------------------


def test_estimate_is_a_frozen_result_with_a_readable_repr():
    e = estimate(yes=30, no=50, dont_know=20, design=GeneralizedWarner(p=0.6, q=0.2))
    assert (e.n, e.yes, e.no, e.dont_know) == (100, 30, 50, 20)
    assert e.pi_hat == pytest.approx((50 * 0.2 - 30 * 0.6) / (80 * (0.2 - 0.6)))
    assert e.se == pytest.approx(math.sqrt(e.variance))
    assert "pi_hat=" in repr(e) and "GeneralizedWarner(p=0.6, q=0.2)" in repr(e)
    with pytest.raises(AttributeError):
        e.pi_hat = 0.5  # type: ignore[misc]


def test_estimate_outside_the_unit_interval_is_clipped_for_the_mle_only():
    # 19 of 100 say yes; even pi = 0 predicts 22 in expectation
    e = estimate(yes=19, no=81, dont_know=0, design=GeneralizedWarner(p=0.7, q=0.2))
    assert e.pi_hat < 0
    assert e.pi_mle == 0.0
    assert e.variance == pytest.approx(
        conditional_variance(GeneralizedWarner(p=0.7, q=0.2), pi=0.0, n=100)
    )
    low, high = e.confidence_interval()
    assert low == 0.0 and 0 < high < 1


def test_pi_mle_maximizes_the_likelihood_on_the_unit_interval():
    gw = GeneralizedWarner(p=0.55, q=0.25)
    grid = np.linspace(0, 1, 20001)
    for yes, no in [(40, 20), (20, 40), (5, 60), (60, 5), (33, 34)]:
        e = estimate(yes=yes, no=no, dont_know=7, design=gw)
        q1, q2, _ = gw.probabilities(grid)
        loglik = yes * np.log(q1) + no * np.log(q2)
        assert e.pi_mle == pytest.approx(grid[np.argmax(loglik)], abs=1e-4)


@pytest.mark.parametrize(
    ("counts", "error", "message"),
    [
        ({"yes": -1, "no": 5, "dont_know": 0}, ParameterError, r"yes \(-1\) must not be negative"),
        ({"yes": 1, "no": 2.5, "dont_know": 0}, ParameterError,
         r"no \(2\.5\) must be a whole number"),
        ({"yes": 1, "no": 2, "dont_know": "3"}, ParameterError,
         r"dont_know \('3'\) must be a whole number"),
        ({"yes": 0, "no": 0, "dont_know": 12}, EstimationError,
         "no yes/no answers: pi cannot be estimated"),
    ],
)
def test_estimate_refuses_bad_counts(counts, error, message):
    with pytest.raises(error, match=message):
        estimate(**counts, design=GeneralizedWarner(p=0.6, q=0.2))


def test_estimate_needs_a_generalized_warner_mechanism():
    with pytest.raises(ParameterError, match="design .* must be a design, e.g. GeneralizedWarner"):
        estimate(yes=1, no=2, dont_know=0, design=(0.6, 0.2))  # type: ignore[arg-type]


def test_estimate_from_labels_counts_like_bincount():
    gw = GeneralizedWarner(p=0.6, q=0.2)
    labels = np.random.default_rng(3).choice(["yes", "no", "dont_know"], size=1000)
    e = estimate_from_labels(labels, design=gw)
    assert (e.yes, e.no, e.dont_know) == tuple(int((labels == k).sum()) for k in
                                                ("yes", "no", "dont_know"))
    codes = np.select([labels == "yes", labels == "no"], [0, 1], 2)
    assert estimate_from_labels(codes, design=gw) == e
    with pytest.raises(ParameterError, match="label 'maybe' is not an answer of design "
                                             "'generalized_warner'; its answers are yes, no"):
        estimate_from_labels(["yes", "maybe"], design=gw)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64])
def test_estimate_from_codes_and_groups_counts_every_cell(dtype):
    # one-byte codes are counted cell by cell, wider ones by bincount: both must give the
    # counts a plain Python count of (group, response) pairs gives
    from surveykit.designs import make_design

    sld = make_design("sld", p=[0.1667, 0.8333], dont_know=0.1)
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 3, size=5000).astype(dtype)
    groups = rng.integers(1, 3, size=5000).astype(dtype)
    pairs = collections.Counter(zip(groups.tolist(), codes.tolist(), strict=True))
    expected = [[pairs[(g, r)] for r in range(3)] for g in (1, 2)]
    assert estimate_from_labels(codes, design=sld, groups=groups).counts.tolist() == expected
    one = estimate_from_labels(codes, design=GeneralizedWarner(p=0.6, q=0.2))
    assert [one.yes, one.no, one.dont_know] == [sum(pairs[(g, r)] for g in (1, 2))
                                                for r in range(3)]


# -- intervals ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", CI_METHODS)
def test_every_interval_is_a_named_tuple_inside_the_unit_interval(method):
    gw = GeneralizedWarner(p=0.6, q=0.2)
    for yes, no in [(0, 40), (40, 0), (13, 27), (1, 1)]:
        e = estimate(yes=yes, no=no, dont_know=5, design=gw)
        ci = e.confidence_interval(0.95, method)
        assert isinstance(ci, ConfidenceInterval)
        assert 0.0 <= ci.low <= ci.high <= 1.0
        wider = e.confidence_interval(0.99, method)
        assert wider.low <= ci.low + 1e-12 and wider.high >= ci.high - 1e-12
        if method != "wald":
            assert ci.low - 1e-9 <= e.pi_mle <= ci.high + 1e-9


def test_likelihood_ratio_limits_sit_on_the_chi_square_cutoff():
    gw = GeneralizedWarner(p=0.6, q=0.2)
    e = estimate(yes=30, no=50, dont_know=20, design=gw)
    low, high = e.confidence_interval(0.95, "likelihood-ratio")

    def loglik(pi):
        q1, q2, _ = gw.probabilities(pi)
        return 30 * math.log(q1) + 50 * math.log(q2)

    cutoff = stats.chi2.isf(0.05, 1) / 2
    assert loglik(e.pi_mle) - loglik(low) == pytest.approx(cutoff, rel=1e-9)
    assert loglik(e.pi_mle) - loglik(high) == pytest.approx(cutoff, rel=1e-9)


def test_interval_arguments_are_checked():
    e = estimate(yes=30, no=50, dont_know=20, design=GeneralizedWarner(p=0.6, q=0.2))
    with pytest.raises(ParameterError, match=r"level \(95\.0\) must be strictly between 0 and 1"):
        e.confidence_interval(95)
    with pytest.raises(ParameterError, match="method .'bootstrap'. must be one of"):
        e.confidence_interval(0.95, "bootstrap")  # type: ignore[arg-type]


COVERAGE_GRID = [
    (p, q, pi, n)
    for p, q in ((0.6, 0.2), (0.75, 0.25), (0.5, 0.1))
    for pi in (0.01, 0.1, 0.5)
    for n in (50, 500)
]


def _simulated_coverage(p, q, pi, n, method, reps, seed):
    gw = GeneralizedWarner(p=p, q=q)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, gw.probabilities(pi), size=reps)
    counts = counts[counts[:, 0] + counts[:, 1] > 0]
    low, high = interval_arrays(yes=counts[:, 0], no=counts[:, 1], dont_know=counts[:, 2],
                                design=gw, method=method)
    return float(np.mean((low <= pi) & (pi <= high)))


def _exact_coverage(p, q, pi, n, method):
    gw = GeneralizedWarner(p=p, q=q)
    q1, _, _ = gw.probabilities(pi)
    s = gw.answer_rate
    total = 0.0
    for m in range(1, n + 1):
        weight = stats.binom.pmf(m, n, s)
        if weight < 1e-15:
            continue
        yes = np.arange(m + 1)
        low, high = interval_arrays(yes=yes, no=m - yes, dont_know=n - m, design=gw,
                                    method=method)
        covered = (low <= pi) & (pi <= high)
        total += weight * float(np.sum(stats.binom.pmf(yes, m, q1 / s) * covered))
    return total / (1 - (1 - s) ** n)


@pytest.mark.parametrize(("p", "q", "pi", "n"), COVERAGE_GRID)
def test_default_interval_covers_at_least_94_percent_in_simulated_surveys(p, q, pi, n):
    """20,000 seeded surveys a cell: the SE of a coverage near 95% is 0.0015, so a
    true coverage of 93.5% (plain Wilson's worst cell) fails here with ~3 SE to spare."""
    coverage = _simulated_coverage(p, q, pi, n, DEFAULT_CI_METHOD, reps=20_000, seed=2026)
    assert coverage >= 0.94


@pytest.mark.parametrize(("p", "q", "pi", "n"), COVERAGE_GRID)
def test_default_interval_exact_coverage_is_at_least_94_percent(p, q, pi, n):
    assert _exact_coverage(p, q, pi, n, DEFAULT_CI_METHOD) >= 0.94


def test_the_coverage_test_can_fail_plain_wilson_undercovers_for_warner():
    """Warner p = 0.75, pi = 0.5, n = 50: plain Wilson covers 93.5%, below the 94% bar."""
    assert _exact_coverage(0.75, 0.25, 0.5, 50, "wilson") < 0.94
    assert _simulated_coverage(0.75, 0.25, 0.5, 50, "wilson", reps=20_000, seed=2026) < 0.94


# -- Monte Carlo: Theorem 3.9 and the variance, seeded -----------------------------------------


@pytest.mark.parametrize(("p", "q", "pi", "n"), [(0.6, 0.2, 0.3, 30), (0.4, 0.1, 0.5, 6),
                                                 (0.5, 0.1, 0.05, 200)])
def test_simulated_mean_and_variance_given_answers_match_the_exact_moments(p, q, pi, n):
    """200,000 seeded surveys; tolerances are 4 Monte Carlo standard errors."""
    gw = GeneralizedWarner(p=p, q=q)
    rng = np.random.default_rng(20261122)
    counts = rng.multinomial(n, gw.probabilities(pi), size=200_000)
    m = counts[:, 0] + counts[:, 1]
    counts, m = counts[m > 0], m[m > 0]
    pi_hat = (counts[:, 1] * q - counts[:, 0] * p) / (m * (q - p))
    reps = pi_hat.size
    exact_var = conditional_variance(gw, pi=pi, n=n)
    assert abs(pi_hat.mean() - pi) <= 4 * math.sqrt(exact_var / reps)
    centred = pi_hat - pi_hat.mean()
    se_var = math.sqrt((np.mean(centred**4) - np.var(pi_hat) ** 2) / reps)
    assert abs(np.var(pi_hat, ddof=1) - exact_var) <= 4 * se_var


@pytest.mark.parametrize(("method", "scipy_method"),
                         [("wilson", "wilson"), ("wilson-cc", "wilsoncc"),
                          ("clopper-pearson", "exact")])
def test_intervals_agree_with_scipys_binomial_proportion_intervals(method, scipy_method):
    """Reference: scipy.stats.binomtest(...).proportion_ci for theta, mapped to pi."""
    gw = GeneralizedWarner(p=0.6, q=0.2)
    s = gw.answer_rate
    for m in (1, 5, 17, 80, 400):
        for yes in range(m + 1):
            reference = stats.binomtest(yes, m).proportion_ci(0.95, method=scipy_method)
            expected = np.clip((np.array([reference.low, reference.high]) * s - gw.q)
                               / (gw.p - gw.q), 0, 1)
            low, high = interval_arrays(yes=yes, no=m - yes, dont_know=0, design=gw,
                                        method=method)
            assert [float(low), float(high)] == pytest.approx(expected, abs=1e-11)


def test_mechanism_is_a_deprecated_name_of_the_design_with_the_same_result():
    """One name for one thing: `design`. The 0.1 keyword `mechanism=` and the `.mechanism`
    attributes still work, each with a DeprecationWarning, and give what `design` gives."""
    gw = GeneralizedWarner(p=0.6, q=0.2)
    expected = estimate(yes=30, no=50, dont_know=20, design=gw)
    with pytest.warns(DeprecationWarning, match=r"estimate\(\): 'mechanism' is deprecated"):
        old = estimate(yes=30, no=50, dont_know=20, mechanism=gw)
    assert old == expected
    with pytest.warns(DeprecationWarning, match="Estimate.mechanism"):
        assert old.mechanism is gw
    with pytest.warns(DeprecationWarning, match="estimate_from_labels"):
        assert estimate_from_labels(["yes", "no"], mechanism=gw).n == 2
    with pytest.raises(ParameterError, match="give design or mechanism, not both"):
        estimate(yes=1, no=1, dont_know=0, design=gw, mechanism=gw)
