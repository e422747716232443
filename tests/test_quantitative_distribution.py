"""The distribution of the true values: the mixture inversion against its formula, Woodruff's
intervals on seeded simulations, and deconvolution against the true quantiles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.quantitative_distribution import estimate_distribution


def test_mixture_inversion_is_the_formula_with_its_standard_error():
    design = make_design("mix_norm", p=0.7, mu=40, sigma=15)
    rng = np.random.default_rng(11)
    z = design.simulate(rng.normal(50, 10, 500), rng=rng).answers
    dist = estimate_distribution(design, z)
    t = dist.points
    F = np.array([np.mean(z <= x) for x in t])
    from scipy import stats

    expected = (F - 0.3 * stats.norm.cdf(t, 40, 15)) / 0.7
    assert np.allclose(dist.raw_cdf, expected, atol=1e-12)
    assert np.allclose(dist.cdf_se, np.sqrt(F * (1 - F) / (z.size - 1)) / 0.7, atol=1e-12)
    assert np.all(np.diff(dist.cdf) >= 0) and dist.cdf.min() >= 0 and dist.cdf.max() <= 1
    for q in (0.1, 0.5, 0.9):
        # inf {t: F_raw(t) >= q}, the same with the running maximum
        assert dist.quantile(q) == t[np.argmax(dist.raw_cdf >= q)]


def test_weighted_and_two_group_inversion():
    design = make_design("mix_unknown", p=[0.8, 0.3])
    rng = np.random.default_rng(12)
    groups = np.repeat([1, 2], 300)
    z = design.simulate(rng.normal(50, 10, 600), rng=rng, groups=groups,
                        unrelated=rng.normal(30, 8, 600)).answers
    w = rng.uniform(1, 3, 600)
    dist = estimate_distribution(design, z, groups=groups, weights=w)
    t = dist.points
    F1 = np.array([np.sum(w[:300] * (z[:300] <= x)) for x in t]) / w[:300].sum()
    F2 = np.array([np.sum(w[300:] * (z[300:] <= x)) for x in t]) / w[300:].sum()
    assert np.allclose(dist.raw_cdf, (0.7 * F1 - 0.2 * F2) / 0.5, atol=1e-12)
    median = dist.quantile(0.5)
    assert abs(median - 50) < 2.5


def test_woodruff_intervals_cover_the_median():
    design = make_design("eriksson", p=0.6, scrambler=list(range(31)))
    rng = np.random.default_rng(13)
    population_median = 10.0            # Poisson(10.3): P(y <= 10) = 0.53 >= 1/2 > P(y <= 9)
    covered = 0
    reps = 200
    for _ in range(reps):
        y = rng.poisson(10.3, 400)
        z = design.simulate(y, rng=rng).answers
        estimate = estimate_distribution(design, z).quantiles([0.5])[0]
        covered += estimate.ci_low <= population_median <= estimate.ci_high
    # discrete true values make Woodruff's interval conservative; at least 91% (3 SE below 95%)
    assert covered / reps >= 0.91


@pytest.mark.parametrize(("design", "draw"), [
    (make_design("additive", mu=0, sigma=5 * math.sqrt(2), scrambler="laplace"),
     lambda rng, n: rng.normal(50, 10, n)),
    (make_design("additive", mu=0, sigma=4, scrambler="normal"),
     lambda rng, n: rng.normal(50, 10, n)),
    (make_design("eichhorn_hayre", mu=1, sigma=0.3, scrambler="uniform"),
     lambda rng, n: rng.gamma(4, 10, n)),
])
def test_deconvolution_recovers_the_quantiles_the_answers_blur(design, draw):
    rng = np.random.default_rng(14)
    y = draw(rng, 20_000)
    answers = design.simulate(y, rng=rng).answers
    dist = estimate_distribution(design, answers)
    assert dist.method == "deconvolution" and dist.cdf_se is None
    r = design.transform(answers)
    for estimate in dist.quantiles((0.1, 0.25, 0.5, 0.75, 0.9)):
        truth = np.quantile(y, estimate.q)
        assert estimate.ci_low is None
        # 20 seeded runs of each case: root mean squared errors at most 0.023 sd(y) (at the
        # 0.9 quantile), bias at most 0.013 sd(y); the tolerance is four times that
        assert abs(estimate.estimate - truth) < 0.09 * np.std(y)
        if estimate.q in (0.1, 0.9):
            # the transformed answers are spread more widely than the true values
            assert abs(estimate.estimate - truth) < 0.5 * abs(np.quantile(r, estimate.q) - truth)


def test_designs_that_do_not_identify_the_distribution_say_so():
    with pytest.raises(ParameterError, match="does not identify the distribution"):
        estimate_distribution(make_design("saha", mu=[1, 2], sigma=[0.1, 1],
                                          scrambler="uniform"), [1.0, 2.0, 3.0])
    with pytest.raises(ParameterError, match="not only its mean and sd; give the deck"):
        estimate_distribution(make_design("eriksson", p=0.5, mu=3, sigma=1), [1.0, 2.0])
    with pytest.raises(ParameterError, match="needs positive answers"):
        estimate_distribution(make_design("eichhorn_hayre", mu=1, sigma=0.3,
                                          scrambler="uniform"), [1.0, -2.0, 3.0])
    with pytest.raises(ParameterError, match="deconvolution needs S's continuous distribution"):
        estimate_distribution(make_design("additive", scrambler="die"), [1.0, 2.0, 3.0])
    with pytest.raises(EstimationError, match="1 numeric answer"):
        estimate_distribution(make_design("mix_exp", p=0.5, mu=2), [1.0, "dont_know"])
