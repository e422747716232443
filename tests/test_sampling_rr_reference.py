"""Randomized-response designs under survey's api designs equal R to 1e-6.

* Six one-group designs (Warner, forced response, unrelated question, crosswise, Mangat,
  triangular; rr_designs.json, tools/r_reference/survey_api_rr.R): the weighted pseudo-MLE
  is svymean of the unbiased transform r = (answer - a)/b where that is inside [0, 1], so
  estimate, SE, deff, total and domains equal survey's; ``pi_hat`` (the unconstrained root)
  equals svymean always.
* A "don't know" design (the generalized Warner with 20% "don't know") and a two-group design
  with a nuisance parameter (the SLD and its honesty t) (complex_designs.json,
  tools/r_reference/survey_api_complex.R): svyratio, and svycontrast of svyby's group shares.

Replicate variances (JKn, JK1) refit the pseudo-MLE on every replicate; survey's replicates of
the linear transform leave [0, 1] where the pseudo-MLE stops on the boundary, so replicate
comparisons are made where every replicate estimate is inside (checked, not assumed)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from sampling_support import DESIGNS, REPLICATE_DESIGNS, reference, sample

from surveykit.designs.registry import make_design
from surveykit.sampling import survey_estimate, weighted_counts

TOLERANCE = 1e-6
RR = reference("rr_designs")
COMPLEX = reference("complex_designs")
ALL_DESIGNS = {**{name: (name, "linearization") for name in DESIGNS}, **REPLICATE_DESIGNS}


def close(value, expected, tolerance=TOLERANCE):
    return value == pytest.approx(expected, rel=tolerance, abs=tolerance * 1e-3)


@cache
def _fit(survey_design: str, design, answer: str, group: str | None = None):
    base, variance = ALL_DESIGNS[survey_design]
    data, sampling = DESIGNS[base]
    counts = weighted_counts(sample(data), sampling, design=design, answer=answer, group=group,
                             domain="stype", keep_respondents=variance != "linearization")
    return survey_estimate(design, counts, variance=variance)


def _inside(estimate) -> bool:
    """The estimate, and every replicate estimate, strictly inside the parameter space."""
    k = len(estimate.design.state_labels)
    values = [np.concatenate([estimate.shares, estimate.nuisance])]
    if estimate.replicate_estimates is not None:
        values += list(estimate.replicate_estimates)
    for x in values:
        if np.any(x[:k] <= 1e-9) or np.any(x[:k] >= 1 - 1e-9):
            return False
        for value, p in zip(x[k:], estimate.design.nuisance, strict=True):
            if not p.low + 1e-9 < value < p.high - 1e-9:
                return False
    return True


@pytest.mark.parametrize("survey_design", list(ALL_DESIGNS))
@pytest.mark.parametrize("name", list(RR["designs"]))
def test_one_group_designs_equal_svymean_of_the_unbiased_transform(survey_design, name):
    spec = RR["designs"][name]
    design = make_design(name, p=spec["p"])
    # the design is RRreg's: P(yes | yes) and P(yes | no) as getPW gives them
    assert design.matrix()[0, 0].tolist() == pytest.approx(
        [spec["P_yes_given_yes"], spec["P_yes_given_no"]], abs=1e-12)
    e = _fit(survey_design, design, f"answer_{name}")
    expected = RR["results"][survey_design][name]
    assert close(e.pi_hat, expected["mean"])
    assert e.df == expected["degf"]
    compared = 0
    if expected["interior"] and _inside(e):
        compared += 1
        assert close(e.estimate, expected["mean"])
        assert close(e.se, expected["mean_se"])
        assert close(e.total(), expected["total"])
        assert close(e.total_se(), expected["total_se"])
        if expected.get("deff") is not None:
            assert close(e.deff(), expected["deff"])
        if expected["ci_t_high"] <= 1 and expected["ci_t_low"] >= 0:
            low, high = e.confidence_interval(0.95, "wald")
            assert close(low, expected["ci_t_low"]) and close(high, expected["ci_t_high"])
    by = expected["by_stype"]
    for d in e.domains:
        assert close(d.pi_hat, by["estimate"][d.domain])
        if _inside(d):
            compared += 1
            assert close(d.estimate, by["estimate"][d.domain])
            assert close(d.se, by["se"][d.domain])
    assert compared >= 1


def test_most_randomized_comparisons_are_made():
    """The interior filter above leaves most cases in: it is no way around the comparison."""
    made = total = 0
    for survey_design in ALL_DESIGNS:
        for name, spec in RR["designs"].items():
            e = _fit(survey_design, make_design(name, p=spec["p"]), f"answer_{name}")
            total += 1
            made += RR["results"][survey_design][name]["interior"] and _inside(e)
    assert made >= 0.8 * total


GW = make_design("generalized_warner", p=0.6, q=0.2)
SLD = make_design("sld", p=[0.2, 0.8])


@pytest.mark.parametrize("survey_design", list(ALL_DESIGNS))
def test_dont_know_design_equals_svyratio(survey_design):
    spec = COMPLEX["designs"]["generalized_warner"]
    assert np.allclose(GW.matrix()[0], spec["matrix"]["values"], atol=1e-12)
    e = _fit(survey_design, GW, "answer_gw")
    expected = COMPLEX["dont_know"][survey_design]
    assert expected["interior"] and _inside(e)
    assert close(e.estimate, expected["estimate"])
    assert close(e.se, expected["se"])
    assert close(e.total(), expected["total"])
    assert close(e.total_se(), expected["total_se"])
    assert e.df == expected["degf"]
    assert e.n > e.weighted[:, :2].sum() / e.sum_weights * e.n - 1  # don't know counted in n
    for d in e.domains:
        if _inside(d):
            assert close(d.estimate, expected["by_stype"]["estimate"][d.domain])
            assert close(d.se, expected["by_stype"]["se"][d.domain])
        else:
            assert not 0 < expected["by_stype"]["estimate"][d.domain] < 1 or \
                d.replicate_estimates is not None


@pytest.mark.parametrize("survey_design", list(ALL_DESIGNS))
def test_two_group_design_with_nuisance_equals_svycontrast_of_group_shares(survey_design):
    e = _fit(survey_design, SLD, "answer_sld", group="group_sld")
    expected = COMPLEX["sld"][survey_design]
    assert expected["interior"] and _inside(e)
    t = e.parameters["t"]
    assert close(e.estimate, expected["estimate"]["pi"])
    assert close(t["estimate"], expected["estimate"]["t"])
    assert close(e.se, expected["se"]["pi"])
    assert close(t["se"], expected["se"]["t"])
    assert close(e.covariance[0, 2], expected["vcov"]["values"][0][1])
    assert e.df == expected["degf"]
    interior = {name for name, ref in expected["domains"].items()
                if 0 < ref["estimate"]["pi"] < 1 and 0 < ref["estimate"]["t"] < 1}
    inside = set()
    for d in e.domains:
        ref = expected["domains"][d.domain]
        if _inside(d) and d.domain in interior:
            inside.add(d.domain)
            assert close(d.estimate, ref["estimate"]["pi"])
            assert close(d.parameters["t"]["estimate"], ref["estimate"]["t"])
            assert close(d.se, ref["se"]["pi"])
            assert close(d.parameters["t"]["se"], ref["se"]["t"])
    if e.replicate_estimates is None:
        assert inside == interior      # every domain R finds inside is compared
