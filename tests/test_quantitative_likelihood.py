"""Maximum likelihood of the mixture designs against R (tests/reference/rrreg/mixture_ml.json,
made by tools/r_reference/rrreg_mixture_ml.R on rrreg_continuous.R's seeded data), and on
seeded simulations with tolerances in standard errors."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.quantitative_likelihood import fit_mixture

RRREG = Path(__file__).resolve().parent / "reference" / "rrreg"
REFERENCE = json.loads((RRREG / "mixture_ml.json").read_text(encoding="utf-8"))["fits"]
BY_HAND = json.loads((RRREG / "rruni_continuous.json").read_text(encoding="utf-8"))["rruni"]


def data(name: str) -> dict[str, np.ndarray]:
    rows = list(csv.DictReader((RRREG / name).read_text(encoding="utf-8").splitlines()))
    return {key: np.array([float(row[key]) for row in rows]) for key in rows[0]}


CASES = {
    "mix_norm": lambda: fit_mixture(make_design("mix_norm", p=0.7, mu=40, sigma=15),
                                    data("rruni_mix_norm.csv")["response"]),
    "mix_norm_p_estimated": lambda: fit_mixture(
        make_design("mix_norm", p=0.7, mu=40, sigma=15), data("rruni_mix_norm.csv")["response"],
        estimate_p=True),
    "mix_exp": lambda: fit_mixture(make_design("mix_exp", p=0.7, mu=10),
                                   data("rruni_mix_exp.csv")["response"]),
    "mix_unknown": lambda: fit_mixture(make_design("mix_unknown", p=[0.8, 0.3]),
                                       data("rruni_mix_unknown.csv")["response"],
                                       groups=data("rruni_mix_unknown.csv")["group"].astype(int)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_matches_r_maximum_likelihood_to_1e_6(case):
    fit = CASES[case]()
    reference = REFERENCE[case]
    assert fit.converged
    assert fit.loglik == pytest.approx(reference["log_likelihood"], rel=1e-10)
    for name, value in reference["estimate"].items():
        assert fit.estimates[name] == pytest.approx(value, rel=1e-6), name
        assert fit.se[name] == pytest.approx(reference["se"][name], rel=1e-6), name


def test_fit_agrees_with_the_by_hand_fit_of_rrreg_continuous():
    fit = CASES["mix_norm"]()
    hand = BY_HAND["mix.norm"]["maximum_likelihood_by_hand"]
    # optim's BFGS stopped within about 1e-8 of the maximum
    assert fit.estimates["mu"] == pytest.approx(hand["mu"], rel=1e-7)
    assert fit.estimates["sigma"] == pytest.approx(hand["sigma"], rel=1e-7)
    # optim's finite-difference Hessian is good to about 1e-6
    assert fit.se["sigma"] == pytest.approx(hand["sigma_se"], rel=1e-5)


def test_quantiles_and_posterior_truthfulness_of_the_fit():
    fit = CASES["mix_norm"]()
    mu, sigma = fit.estimates["mu"], fit.estimates["sigma"]
    value, se = fit.quantile(0.9)
    assert value == pytest.approx(mu + sigma * stats.norm.ppf(0.9), rel=1e-12)
    gradient = np.array([1.0, stats.norm.ppf(0.9)])
    assert se == pytest.approx(math.sqrt(gradient @ fit.covariance @ gradient), rel=1e-12)
    tau = fit.truthful_probability()
    # at the maximum with p known, the posterior weights need not average to p, but they do
    # when p is estimated (its score equation)
    assert 0 <= tau.min() and tau.max() <= 1
    free = CASES["mix_norm_p_estimated"]()
    assert free.truthful_probability().mean() == pytest.approx(free.estimates["p"], rel=1e-6)
    exp_fit = CASES["mix_exp"]()
    assert exp_fit.quantile(0.5)[0] == pytest.approx(exp_fit.mean * math.log(2), rel=1e-12)


@pytest.mark.parametrize(("name", "parameters", "truth", "family"), [
    ("mix_norm", {"p": 0.6, "mu": 30, "sigma": 20}, ("normal", 50, 10), "normal"),
    ("mix_exp", {"p": 0.5, "mu": 5}, ("exponential", 20), "exponential"),
])
def test_ml_estimates_are_unbiased_and_their_ses_right_on_simulations(name, parameters, truth,
                                                                       family):
    design = make_design(name, **parameters)
    rng = np.random.default_rng(20240607)
    estimates, ses = [], []
    for _ in range(120):
        y = rng.normal(truth[1], truth[2], 500) if truth[0] == "normal" \
            else rng.exponential(truth[1], 500)
        fit = fit_mixture(design, design.simulate(y, rng=rng).answers, family=family)
        estimates.append(fit.mean)
        ses.append(fit.mean_se)
    estimates = np.array(estimates)
    spread = estimates.std(ddof=1)
    # the mean within 4 Monte Carlo SEs; the average SE within 20% of the spread (about 3
    # SEs of a standard deviation from 120 fits)
    assert abs(estimates.mean() - truth[1]) < 4 * spread / math.sqrt(estimates.size)
    assert np.mean(ses) == pytest.approx(spread, rel=0.2)


def test_errors():
    with pytest.raises(ParameterError, match="maximum likelihood is for the mixture designs"):
        fit_mixture(make_design("eriksson", p=0.5, scrambler=[0, 1, 3]), [1.0] * 10)
    with pytest.raises(ParameterError, match="family \\('lognormal'\\) must be one of"):
        fit_mixture(make_design("mix_norm", p=0.5, mu=0, sigma=1), [1.0] * 10,
                    family="lognormal")
    with pytest.raises(EstimationError, match="3 numeric answers: a likelihood fit needs"):
        fit_mixture(make_design("mix_norm", p=0.5, mu=0, sigma=1), [1.0, 2.0, 3.0])
    with pytest.raises(ParameterError, match="estimate_p is for one-group designs"):
        fit_mixture(make_design("mix_unknown", p=[0.8, 0.3]), [1.0] * 10, groups=[1, 2] * 5,
                    estimate_p=True)
