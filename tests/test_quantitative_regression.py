"""Linear regression with a scrambled outcome or predictor: statsmodels and closed forms as
oracles, the two-group design against its moment estimator, and seeded simulations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from surveykit.designs import make_design
from surveykit.errors import ParameterError
from surveykit.estimation.quantitative import estimate_mean_from_answers
from surveykit.estimation.quantitative_regression import fit_linear


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 65, n)
    region = rng.choice(["north", "south", "east"], n)
    income = 20 + 0.8 * age + np.where(region == "south", -5.0, 0.0) + rng.normal(0, 8, n)
    return pd.DataFrame({"age": age, "region": region, "income": income,
                         "w": rng.uniform(0.5, 4, n)})


@pytest.mark.parametrize("cov_type", ["HC0", "HC1"])
@pytest.mark.parametrize("weighted", [False, True])
def test_scrambled_outcome_is_least_squares_on_the_transform(cov_type, weighted):
    design = make_design("bar_lev", p=0.6, mu=1, sigma=0.3, scrambler="uniform")
    data = people(800, 1)
    rng = np.random.default_rng(2)
    data["reported"] = design.simulate(data["income"], rng=rng).answers
    fit = fit_linear(data, "reported ~ age + C(region)", design=design, scrambled="reported",
                     weights="w" if weighted else None, cov_type=cov_type)
    X = pd.get_dummies(data[["age", "region"]], columns=["region"], drop_first=True,
                       dtype=float)
    X = sm.add_constant(X)
    r = design.transform(data["reported"].to_numpy())
    model = sm.WLS(r, X, weights=data["w"]) if weighted else sm.OLS(r, X)
    reference = model.fit(cov_type=cov_type)
    assert np.allclose(fit.coefficients, reference.params.to_numpy(), rtol=1e-10)
    assert np.allclose(fit.bse.to_numpy(), reference.bse.to_numpy(), rtol=1e-9)
    assert fit.terms == ("(Intercept)", "age", "C(region)north", "C(region)south")


def test_two_group_outcome_intercept_is_rrreg_s_moment_estimator():
    design = make_design("mix_unknown", p=[0.8, 0.3])
    rng = np.random.default_rng(3)
    groups = np.repeat([1, 2], 400)
    answers = design.simulate(rng.normal(50, 10, 800), rng=rng, groups=groups,
                              unrelated=rng.normal(30, 8, 800)).answers
    data = pd.DataFrame({"z": answers, "g": groups})
    fit = fit_linear(data, "z ~ 1", design=design, scrambled="z", group="g")
    moment = estimate_mean_from_answers(design, answers, groups=groups)
    assert fit.params["(Intercept)"] == pytest.approx(moment.mean, rel=1e-12)
    assert fit.unrelated_mean == pytest.approx(moment.unrelated_mean, rel=1e-12)
    # HC0 of two group means is sum c_g^2 (n_g - 1) / n_g s_g^2 / n_g: RRreg's within 1/n
    hc0 = fit_linear(data, "z ~ 1", design=design, scrambled="z", group="g", cov_type="HC0")
    assert hc0.bse["(Intercept)"] == pytest.approx(moment.se, rel=2e-3)


def test_scrambled_predictor_with_nothing_scrambled_is_ols():
    design = make_design("eriksson", p=1.0, scrambler=[0, 1])      # everybody truthful
    data = people(300, 4)
    data["y"] = 3 + 0.1 * data["income"] + np.random.default_rng(5).normal(0, 1, 300)
    fit = fit_linear(data, "y ~ income + age", design=design, scrambled="income")
    reference = sm.OLS(data["y"], sm.add_constant(data[["income", "age"]])).fit(cov_type="HC1")
    assert np.allclose(fit.coefficients, reference.params.to_numpy(), rtol=1e-10)
    assert np.allclose(fit.bse.to_numpy(), reference.bse.to_numpy(), rtol=1e-9)


def test_scrambled_predictor_slope_is_the_corrected_closed_form():
    design = make_design("additive", mu=0, sigma=10, scrambler="laplace")
    data = people(1000, 6)
    rng = np.random.default_rng(7)
    data["y"] = 3 + 0.1 * data["income"] + rng.normal(0, 1, 1000)
    data["reported"] = design.simulate(data["income"], rng=rng).answers
    fit = fit_linear(data, "y ~ reported", design=design, scrambled="reported")
    r = design.transform(data["reported"].to_numpy())
    v = design.transform_variance(r)
    y = data["y"].to_numpy()
    slope = np.sum((r - r.mean()) * (y - y.mean())) / (np.sum((r - r.mean()) ** 2) - v.sum())
    assert fit.params["reported"] == pytest.approx(slope, rel=1e-10)
    naive = sm.OLS(y, sm.add_constant(r)).fit().params[1]
    assert abs(fit.params["reported"] - 0.1) < abs(naive - 0.1)   # attenuation removed


@pytest.mark.parametrize("mode", ["outcome", "predictor"])
def test_intervals_cover_on_seeded_simulations(mode):
    design = make_design("diana_perri_1", p=0.5, mu=[1.2, 5], sigma=[0.2, 3],
                         scrambler="uniform")
    rng = np.random.default_rng(8)
    covered, estimates, ses = 0, [], []
    reps = 100
    for _ in range(reps):
        data = people(600, int(rng.integers(1 << 30)))
        if mode == "outcome":
            data["reported"] = design.simulate(data["income"], rng=rng).answers
            fit = fit_linear(data, "reported ~ age", design=design, scrambled="reported")
            term, truth = "age", 0.8
        else:
            data["y"] = 3 + 0.1 * data["income"] + rng.normal(0, 1, 600)
            data["reported"] = design.simulate(data["income"], rng=rng).answers
            fit = fit_linear(data, "y ~ reported + age", design=design, scrambled="reported")
            term, truth = "reported", 0.1
        low, high = fit.conf_int().loc[term]
        covered += low <= truth <= high
        estimates.append(fit.params[term])
        ses.append(fit.bse[term])
    estimates = np.array(estimates)
    spread = estimates.std(ddof=1)
    assert abs(estimates.mean() - truth) < 4 * spread / math.sqrt(reps)
    assert np.mean(ses) == pytest.approx(spread, rel=0.25)   # about 3.5 SE of an sd from 100
    assert covered / reps >= 0.88        # 100 runs: 3.2 SE below 95% (the slow suite: 93-97%)


def test_dont_know_and_missing_rows_are_counted_and_left_out():
    design = make_design("mix_norm", p=0.7, mu=40, sigma=15, dont_know=0.2)
    data = people(500, 9)
    sim = design.simulate(data["income"], rng=np.random.default_rng(10))
    data["reported"] = np.where(sim.dont_know, "dont_know", sim.answers.astype(object))
    data.loc[0, "age"] = np.nan
    fit = fit_linear(data, "reported ~ age", design=design, scrambled="reported")
    assert fit.n_dropped == 1
    assert fit.dont_know == int(sim.dont_know[1:].sum())
    assert fit.n == 499 - fit.dont_know
    assert f"Rows: {fit.n} used (1 dropped for missing values), {fit.dont_know} \"don't know\" " \
        "left out" in fit.summary()


@pytest.mark.parametrize(("formula", "message"), [
    ("y ~ reported * age", "must enter as a plain term, without interactions"),
    ("y ~ I(reported ** 2)", "must enter as a plain term"),
    ("y ~ age", "does not use the scrambled column 'reported'"),
])
def test_predictor_rules(formula, message):
    design = make_design("additive", mu=0, sigma=1, scrambler="normal")
    data = people(50, 11)
    data["y"] = data["income"]
    data["reported"] = design.simulate(data["income"], rng=np.random.default_rng(1)).answers
    with pytest.raises(ParameterError, match=message):
        fit_linear(data, formula, design=design, scrambled="reported")


def test_a_two_group_design_cannot_be_a_predictor():
    data = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "z": [1.0, 2.0, 3.0, 4.0],
                         "g": [1, 2, 1, 2]})
    with pytest.raises(ParameterError, match="cannot be a predictor"):
        fit_linear(data, "y ~ z", design=make_design("mix_unknown", p=[0.8, 0.3]),
                   scrambled="z", group="g")
