"""Equal weights, no strata, no clusters: today's results, for every design in the registry.

* The estimate is the maximum-likelihood estimate of :func:`surveykit.estimation.estimate`
  exactly (shares and nuisance parameters bit for bit), whatever the common weight.
* The standard error: every respondent is then a PSU of one stratum sampled with replacement,
  and the linearized variance is n/(n - 1) sum_i (B u_i)(B u_i)' with B the inverse
  information and u_i the respondent's score. Where the fit reproduces the observed shares
  of every answer (the model is saturated: G2 has 0 degrees of freedom) and lies inside the
  parameter space, sum_i u_i u_i' is the observed information (the second-derivative term
  sum_r n_r d2 mu_r / mu_r vanishes because the fitted mu_r are the observed shares and the
  columns of the design's matrix sum to 1), so the design-based variance is exactly
  n/(n - 1) times the inverse observed information. For over-identified designs (Kuk's cards
  with several draws) the two agree as n grows; here within 2%.
  The one-group yes/no designs' ``Estimate.se`` is the exact conditional variance, which is
  the inverse information to O(1/n^2); both are shown.
"""

from __future__ import annotations

import numpy as np
import pytest

from surveykit.designs.registry import EXAMPLES, make_design, parse_parameters
from surveykit.estimation.estimate import fit_counts
from surveykit.sampling import SamplingDesign, WeightedCounts, survey_estimate

N_PER_GROUP = 2000


def _design(name: str):
    return make_design(name, **parse_parameters(name, EXAMPLES[name]))


def _counts(design) -> np.ndarray:
    """Counts near the expected ones at interior shares (deterministic, no ties)."""
    k = len(design.state_labels)
    shares = np.linspace(1.0, 2.0, k)
    shares /= shares.sum()
    matrix = design.matrix()
    expected = N_PER_GROUP * np.einsum("grs,s->gr", matrix, shares)
    counts = np.floor(expected + 0.37).astype(np.int64)
    return counts


def _weighted(design, counts: np.ndarray, weight: float) -> WeightedCounts:
    groups, responses = np.nonzero(counts)
    table = {"group": [design.group_names[g] for g in groups],
             "response": [design.response_labels[r] for r in responses],
             "weight": [weight * counts[g, r] for g, r in zip(groups, responses, strict=True)],
             "weight2": [weight ** 2 * counts[g, r]
                         for g, r in zip(groups, responses, strict=True)],
             "n": [int(counts[g, r]) for g, r in zip(groups, responses, strict=True)]}
    sampling = SamplingDesign(weight="w" if weight != 1 else None)
    return WeightedCounts.from_table(table, sampling, responses=design.response_labels,
                                     groups=design.group_names)


@pytest.mark.parametrize("name", list(EXAMPLES))
@pytest.mark.parametrize("weight", [1.0, 37.25])
def test_equal_weights_give_todays_estimate_exactly(name, weight):
    design = _design(name)
    counts = _counts(design)
    today = fit_counts(design, counts)
    survey = survey_estimate(design, _weighted(design, counts, weight))
    assert np.array_equal(survey.shares, today.shares)
    assert np.array_equal(survey.nuisance, today.nuisance)
    assert survey.n == today.n


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_srs_linearization_is_n_over_n_minus_1_times_the_inverse_information(name):
    design = _design(name)
    counts = _counts(design)
    today = fit_counts(design, counts)
    survey = survey_estimate(design, _weighted(design, counts, 3.0))
    k = len(design.state_labels)
    n = today.n
    index = [i for i in range(k + len(design.nuisance)) if today.identified[i]]
    ratio = np.diag(survey.covariance)[index] / np.diag(today.covariance)[index]
    if today.df == 0:
        assert np.allclose(ratio, n / (n - 1), rtol=1e-8), ratio
    else:
        assert np.allclose(ratio, n / (n - 1), rtol=0.02), ratio
    assert survey.df == n - 1
    if design.is_binary and today.variance is not None and len(design.group_names) == 1:
        # the exact conditional variance of one-group designs is the inverse information to
        # O(1/n^2)
        assert today.se ** 2 == pytest.approx(today.covariance[0, 0], rel=5e-3)


def test_without_fpc_the_common_weight_does_not_change_the_variance():
    design = _design("sld")
    counts = _counts(design)
    a = survey_estimate(design, _weighted(design, counts, 1.0))
    b = survey_estimate(design, _weighted(design, counts, 250.0))
    assert np.allclose(a.covariance, b.covariance, rtol=1e-10)
    assert b.total() == pytest.approx(250.0 * a.total(), rel=1e-12)
