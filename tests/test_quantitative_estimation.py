"""Moment estimators of a numeric sensitive variable: closed forms as oracles, sufficient
statistics, weights, domains, "don't know", errors.

Closed forms: the mean of the transform, s_z / (b sqrt(n)) (RRreg's piSE), the SRSWOR
variance (1 - f) s_r^2 / n + f vbar / n, RRreg's two-group mix.unknown formulas, and the
with-replacement linearization variance of R survey's svymean/svyby (every respondent its
own PSU), written out here from their definitions.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from quantitative_exact import CASES, exact_answers

from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.quantitative import (
    SamplingVariance,
    answer_variance_sum,
    estimate_domains,
    estimate_mean,
    estimate_mean_from_answers,
    linearize,
)
from surveykit.numeric_counts import NumericCounts, NumericSums

ERIKSSON = make_design("eriksson", p=0.5, scrambler=[0, 1, 3, 5, 8])


def answers(design, n=400, seed=1, **kwargs):
    rng = np.random.default_rng(seed)
    values = rng.gamma(2.0, 5.0, n)
    return values, design.simulate(values, rng=rng, **kwargs)


def test_counts_are_the_sufficient_statistics_of_the_answers():
    _, sim = answers(ERIKSSON)
    z = sim.answers
    counts = NumericCounts.from_answers(z)
    sums = counts.get("1")
    assert (sums.n, sums.total, sums.sum_squares) == (z.size, pytest.approx(z.sum()),
                                                       pytest.approx(np.dot(z, z)))
    assert sums.variance == pytest.approx(np.var(z, ddof=1))
    # from the counts alone, the same estimate as from the answers
    assert estimate_mean(ERIKSSON, counts) == estimate_mean_from_answers(ERIKSSON, z)
    merged = NumericCounts.from_mapping({"1": sums}).get("1") + NumericSums(0, 0.0, 0.0, 3)
    assert merged.dont_know == 3
    # groups in order of first appearance, labels compared as text ("2" and 2 are one group)
    grouped = NumericCounts.from_answers([1.0, 2.0, 3.0, 4.0, np.nan], groups=["b", 2, "b", "2", 2],
                                         dont_know=[False] * 4 + [True])
    assert grouped.to_dict() == {"b": {"n": 2, "sum": 4.0, "sum_squares": 10.0, "dont_know": 0},
                                 "2": {"n": 2, "sum": 6.0, "sum_squares": 20.0, "dont_know": 1}}


def test_one_group_mean_and_se_are_the_closed_forms():
    _, sim = answers(ERIKSSON)
    z = sim.answers
    a, b = 0.5 * 3.4, 0.5
    e = estimate_mean_from_answers(ERIKSSON, z)
    assert e.mean == pytest.approx((z.mean() - a) / b, rel=1e-12)
    assert e.se == pytest.approx(np.std(z, ddof=1) / (b * math.sqrt(z.size)), rel=1e-12)
    assert e.total is None and e.sampling == "srswr"
    low, high = e.confidence_interval(0.9)
    assert (high - low) / 2 == pytest.approx(1.6448536269514722 * e.se, rel=1e-12)


def test_srswor_shrinks_only_the_sampling_part():
    design = make_design("bar_lev", p=0.6, mu=1.5, sigma=0.5, scrambler="uniform")
    _, sim = answers(design, n=300)
    z, N = sim.answers, 500
    r = design.transform(z)
    f = z.size / N
    vbar = design.transform_variance(r).mean()
    e = estimate_mean_from_answers(design, z, population_size=N, sampling="srswor")
    assert e.variance == pytest.approx((1 - f) * np.var(r, ddof=1) / z.size + f * vbar / z.size,
                                       rel=1e-10)
    assert e.alternatives["srswor_rrtcs"] == pytest.approx((1 - f) * np.var(r, ddof=1) / z.size,
                                                           rel=1e-10)
    assert e.alternatives["srswr"] == pytest.approx(np.var(r, ddof=1) / z.size, rel=1e-10)
    assert e.total == pytest.approx(N * e.mean) and e.total_se == pytest.approx(N * e.se)
    data = json.loads(json.dumps(e.to_dict()))
    assert {"mean", "se", "ci_low", "ci_high", "total", "total_se"} <= set(data)


def test_answer_variance_sum_is_the_sum_of_each_answer_s():
    design = make_design("saha", mu=[1.5, 5.5], sigma=[0.3, 2.6], scrambler="normal")
    _, sim = answers(design, n=50)
    z = sim.answers
    w = np.linspace(1, 3, z.size)
    r = design.transform(z)
    for method in ("unbiased", "plug_in"):
        assert answer_variance_sum(design, weight=w.sum(), weighted_sum=w @ z,
                                   weighted_squares=w @ z ** 2, method=method) == pytest.approx(
            float(w @ design.transform_variance(r, method)), rel=1e-9)


def test_mix_unknown_is_rrreg_s_two_group_formula():
    design = make_design("mix_unknown", p=[0.8, 0.3])
    rng = np.random.default_rng(4)
    groups = np.repeat([1, 2], [300, 200])
    sim = design.simulate(rng.normal(50, 10, 500), rng=rng, groups=groups,
                          unrelated=rng.normal(30, 8, 500))
    z1, z2 = sim.answers[groups == 1], sim.answers[groups == 2]
    p1, p2 = 0.8, 0.3
    v1, v2 = z1.var(ddof=1) / z1.size, z2.var(ddof=1) / z2.size
    e = estimate_mean_from_answers(design, sim.answers, groups=groups)
    assert e.mean == pytest.approx(((1 - p2) * z1.mean() - (1 - p1) * z2.mean()) / (p1 - p2))
    assert e.se == pytest.approx(math.sqrt((1 - p2) ** 2 * v1 + (1 - p1) ** 2 * v2) / (p1 - p2))
    assert e.unrelated_mean == pytest.approx((p2 * z1.mean() - p1 * z2.mean()) / (p2 - p1))
    assert e.unrelated_se == pytest.approx(math.sqrt(p2 ** 2 * v1 + p1 ** 2 * v2) / (p1 - p2))
    assert dict(e.group_sizes) == {"1": 300, "2": 200}
    with pytest.raises(ParameterError, match="sampling = 'srswor' is not available for design "
                                             "'mix_unknown'"):
        estimate_mean_from_answers(design, sim.answers, groups=groups, population_size=10_000,
                                   sampling="srswor")


def test_equal_weights_give_the_srs_estimate():
    design = make_design("chaudhuri_christofides", mu=[6, 6], sigma=[3, 3], scrambler="normal")
    _, sim = answers(design)
    z = sim.answers
    srs = estimate_mean_from_answers(design, z)
    weighted = estimate_mean_from_answers(design, z, weights=np.full(z.size, 7.0))
    assert weighted.mean == pytest.approx(srs.mean, rel=1e-12)
    # the with-replacement linearization of a Hajek mean with equal weights is s^2 / n
    assert weighted.variance == pytest.approx(srs.variance, rel=1e-12)
    assert weighted.total == pytest.approx(7.0 * z.size * srs.mean, rel=1e-12)


def test_weighted_total_and_mean_are_horvitz_thompson_with_the_with_replacement_variance():
    design = make_design("eichhorn_hayre", mu=2, sigma=0.5, scrambler="uniform")
    _, sim = answers(design, n=200)
    z = sim.answers
    w = np.random.default_rng(9).uniform(5, 50, z.size)
    r = design.transform(z)
    N = 6000.0
    e = estimate_mean_from_answers(design, z, weights=w, population_size=N)
    t = w * r
    assert e.total == pytest.approx(t.sum(), rel=1e-12)
    assert e.total_variance == pytest.approx(
        z.size / (z.size - 1) * np.sum((t - t.mean()) ** 2), rel=1e-12)
    assert e.mean == pytest.approx(t.sum() / N) and e.se == pytest.approx(e.total_se / N)
    hajek = estimate_mean_from_answers(design, z, weights=w)
    u = w * (r - np.sum(w * r) / w.sum()) / w.sum()
    assert hajek.mean == pytest.approx(np.sum(w * r) / w.sum(), rel=1e-12)
    assert hajek.variance == pytest.approx(
        z.size / (z.size - 1) * np.sum((u - u.mean()) ** 2), rel=1e-12)


def test_a_sampling_variance_without_replacement_gets_the_randomization_term():
    design = make_design("additive", mu=0, sigma=4, scrambler="normal")
    _, sim = answers(design, n=120)
    z = sim.answers
    w = np.full(z.size, 10.0)
    seen = []

    def of_sum(values, weights):
        seen.append((values.copy(), weights.copy()))
        return 123.0

    plan = SamplingVariance(of_sum=of_sum, with_replacement=False)
    e = estimate_mean_from_answers(design, z, weights=w, population_size=1200,
                                   sampling_variance=plan)
    r = design.transform(z)
    assert np.allclose(seen[0][0], r) and np.allclose(seen[0][1], w)
    assert e.total_variance == pytest.approx(123.0 + np.sum(w * design.transform_variance(r)))
    assert e.alternatives["plug_in"] == pytest.approx(
        (123.0 + np.sum(w * design.transform_variance(r, "plug_in"))) / 1200 ** 2)
    with_replacement = estimate_mean_from_answers(
        design, z, weights=w, population_size=1200,
        sampling_variance=SamplingVariance(of_sum=of_sum, with_replacement=True))
    assert with_replacement.total_variance == 123.0


@pytest.mark.parametrize(("name", "parameters", "rules"), CASES, ids=[c[0] for c in CASES])
def test_linearized_transform_is_unbiased_with_dont_know(name, parameters, rules):
    d = Fraction(1, 4)
    design = make_design(name, **parameters, dont_know=float(d))
    for y in (Fraction(0), Fraction(5), Fraction(-3, 2)):
        table = exact_answers(rules, y)
        zs = np.array([float(z) for z in table] + [np.nan])
        ps = np.array([float((1 - d) * p) for p in table.values()] + [float(d)])
        lin = linearize(design, list(zs[:-1]) + ["dont_know"])
        assert float(ps @ lin.r) == pytest.approx(float(y), abs=1e-9)
        variance = float(ps @ (lin.r - float(y)) ** 2)
        assert float(ps @ lin.v) == pytest.approx(variance, rel=1e-9, abs=1e-9)


def test_dont_know_answers_are_counted_and_left_out_of_the_mean():
    design = make_design("mix_norm", p=0.7, mu=40, sigma=15, dont_know=0.2)
    values, sim = answers(design, n=1000)
    z = np.where(sim.dont_know, np.nan, sim.answers)
    e = estimate_mean_from_answers(design, z, dont_know=sim.dont_know)
    assert e.dont_know == int(sim.dont_know.sum()) and e.n == 1000 - e.dont_know
    plain = make_design("mix_norm", p=0.7, mu=40, sigma=15)
    assert e.mean == pytest.approx(estimate_mean_from_answers(plain, z[~sim.dont_know]).mean)
    check = e.dont_know_check()
    assert check.designed == 0.2 and check.passed
    # the strings of a file work as well: "dont_know" and blanks (missing, left out)
    mixed = [*z[:5].tolist(), "dont_know", None]
    again = estimate_mean_from_answers(design, [v if not (isinstance(v, float) and math.isnan(v))
                                                else "dont_know" for v in mixed])
    assert again.n + again.dont_know == 6


def test_domains_are_hajek_means_with_the_linearization_variance():
    design = make_design("diana_perri_1", p=0.6, mu=[1.5, 2], sigma=[0.3, 1], scrambler="normal")
    values, sim = answers(design, n=600)
    z = sim.answers
    domains = np.where(values > 10, "high", "low")
    out = estimate_domains(design, z, domains)
    r = design.transform(z)
    n = z.size
    for label, e in out.items():
        inside = domains == label
        mean = r[inside].mean()
        assert e.mean == pytest.approx(mean, rel=1e-12)
        u = np.where(inside, r - mean, 0.0) / inside.sum()
        assert e.variance == pytest.approx(n / (n - 1) * np.sum((u - u.mean()) ** 2), rel=1e-12)
        assert e.total is None
    with_n = estimate_domains(design, z, domains, population_size=60_000)
    inside = domains == "high"
    assert with_n["high"].total == pytest.approx(60_000 / n * r[inside].sum(), rel=1e-12)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: estimate_mean(ERIKSSON, NumericCounts.from_answers([1.0])),
     "1 numeric answer(s): the mean and its standard error need at least 2"),
    (lambda: estimate_mean_from_answers(ERIKSSON, [1.0, 2.0], sampling="srs"),
     "sampling ('srs') must be one of srswr, srswor, srswor_rrtcs"),
    (lambda: estimate_mean_from_answers(ERIKSSON, [1.0, 2.0], sampling="srswor"),
     "sampling = 'srswor' needs population_size (N)"),
    (lambda: estimate_mean_from_answers(ERIKSSON, [1.0, 2.0, 3.0], population_size=2,
                                        sampling="srswor"),
     "population_size (2) is smaller than the 3 answers"),
    (lambda: estimate_mean_from_answers(ERIKSSON, [1.0, "ten"]),
     "answer 2 ('ten') is not a number or \"dont_know\""),
    (lambda: estimate_mean_from_answers(ERIKSSON, [1.0, 2.0], weights=[1, -1]),
     "weight of answer 2 (-1.0) must be a finite number >= 0"),
    (lambda: estimate_mean_from_answers(make_design("mix_unknown", p=[0.8, 0.3]), [1.0, 2.0]),
     "design 'mix_unknown' has 2 groups: give each respondent's group"),
    (lambda: estimate_mean_from_answers(make_design("mix_unknown", p=[0.8, 0.3]), [1.0, 2.0],
                                        groups=[1, 3]),
     "group 3 of answer 2 is not a group of design 'mix_unknown', which has groups 1 to 2"),
    (lambda: estimate_mean_from_answers(make_design("saha", mu=[1, 2]), [1.0, 2.0, 3.0],
                                        population_size=10, sampling="srswor"),
     "sampling = 'srswor': saha (mu = [1, 2], dont_know = 0): the answers' randomization "
     "variance is unknown (give every scrambler's sd)"),
    (lambda: estimate_mean(make_design("mix_norm", p=0.5, mu=0, sigma=1), "counts"),
     "counts must be NumericCounts"),
    (lambda: NumericCounts.from_mapping({"1": {"n": 2, "sum": 10, "sum_squares": 1}}),
     "sum (10) and sum of squares (1) of 2 answers are inconsistent"),
])
def test_bad_input_is_a_one_line_error(call, message):
    with pytest.raises((ParameterError, EstimationError)) as caught:
        call()
    assert message in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)
