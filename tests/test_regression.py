"""Regression with a randomized-response variable: the library (surveykit.estimation.regression).

Reference fits: with the direct question (no randomization) the model is an
ordinary logistic or linear regression, so statsmodels' Logit and OLS on the
same rows are exact references (1e-6). Monte Carlo tests use fixed seeds and
state their tolerances in Monte Carlo standard errors; the full grid over
every design family is marked slow (tests/test_regression_simulation.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from regression_simulation import simulate_rows

from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.regression import regress

WARNER = make_design("warner", p=0.8)
SLD = make_design("sld", p=[0.2, 0.8], dont_know=0.1)


def _direct_rows(n=3000, seed=11):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                          "f": rng.choice(["arts", "law", "science"], size=n)})
    linear = -0.4 + 0.9 * frame.x1 - 0.5 * frame.x2 + 0.3 * frame.x1 * frame.x2 + \
        np.where(frame.f == "law", 0.6, 0.0)
    frame["rrt"] = np.where(rng.random(n) < 1 / (1 + np.exp(-linear)), "yes", "no")
    return frame


# -- exact references ----------------------------------------------------------------------


def test_direct_question_logistic_regression_equals_statsmodels_logit():
    frame = _direct_rows()
    fit = regress(frame, "rrt ~ x1 * x2 + C(f)", sensitive="rrt", design=make_design("direct"))
    X = fit.state_matrix.values
    y = (frame.rrt == "yes").astype(float).to_numpy()
    reference = sm.Logit(y, X).fit(disp=0, tol=1e-12, maxiter=100)
    assert list(fit.params.index) == ["(Intercept)", "x1", "x2", "C(f)law", "C(f)science",
                                      "x1:x2"]
    np.testing.assert_allclose(fit.params.to_numpy(), reference.params, atol=1e-6)
    np.testing.assert_allclose(fit.bse.to_numpy(), reference.bse, atol=1e-6)
    assert fit.loglik == pytest.approx(reference.llf, abs=1e-6)
    assert fit.aic == pytest.approx(reference.aic, abs=1e-6)
    assert fit.bic == pytest.approx(reference.bic, abs=1e-6)
    # the likelihood-ratio test of a term is the difference to the fit without it
    lr = fit.to_frame().set_index("term").loc["x1:x2", "lr_chi2"]
    smaller = sm.Logit(y, np.delete(X, 5, axis=1)).fit(disp=0, tol=1e-12)
    assert lr == pytest.approx(2 * (reference.llf - smaller.llf), abs=1e-6)


def test_statsmodels_names_equal_statsmodels_logit_on_a_direct_question():
    """A notebook user's statsmodels names give statsmodels' numbers where the models are the
    same (the direct question: no randomization); the current names stay."""
    frame = _direct_rows()
    fit = regress(frame, "rrt ~ x1 * x2 + C(f)", sensitive="rrt", design=make_design("direct"))
    X = fit.state_matrix.values
    y = (frame.rrt == "yes").astype(float).to_numpy()
    reference = sm.Logit(y, X).fit(disp=0, tol=1e-12, maxiter=100)
    terms = list(fit.params.index)
    for ours, theirs in ((fit.params, reference.params), (fit.bse, reference.bse),
                         (fit.zvalues, reference.tvalues), (fit.tvalues, reference.tvalues),
                         (fit.pvalues, reference.pvalues)):
        assert list(ours.index) == terms
        np.testing.assert_allclose(ours.to_numpy(), theirs, rtol=1e-6, atol=1e-9)
    for alpha in (0.05, 0.1):
        ours = fit.conf_int(alpha=alpha)
        assert list(ours.columns) == [0, 1] and list(ours.index) == terms
        np.testing.assert_allclose(ours.to_numpy(), reference.conf_int(alpha=alpha),
                                   rtol=1e-6, atol=1e-9)
    covariance = fit.cov_params()
    assert list(covariance.index) == list(covariance.columns) == terms
    np.testing.assert_allclose(covariance.to_numpy(), reference.cov_params(), rtol=1e-6,
                               atol=1e-12)
    assert fit.llf == fit.loglik == pytest.approx(reference.llf, abs=1e-8)
    assert fit.nobs == fit.n == reference.nobs
    assert (fit.df_model, fit.df_resid) == (reference.df_model, reference.df_resid)
    assert (fit.aic, fit.bic) == (pytest.approx(reference.aic), pytest.approx(reference.bic))
    new = frame.iloc[:7]
    np.testing.assert_allclose(fit.predict(new).prevalence,
                               reference.predict(fit.state_matrix.for_data(new)), rtol=1e-7)
    text = fit.summary()
    assert isinstance(text, str) and text.as_text() == text
    assert text._repr_html_().startswith("<pre>")


def test_df_model_counts_nuisance_parameters_and_not_intercepts():
    rng = np.random.default_rng(24)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7])
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    assert (fit.k_params, fit.df_model, fit.df_resid) == (4, 3, fit.nobs - 4)
    assert fit.aic == pytest.approx(-2 * fit.llf + 2 * 4)


def test_direct_question_as_predictor_equals_statsmodels_ols():
    rng = np.random.default_rng(5)
    frame = simulate_rows(make_design("direct"), n=2000, beta=[-0.3, 0.7, 0.4], rng=rng,
                          outcome=("gaussian", [1.0, 2.0, -0.5], 1.5))
    fit = regress(frame, "y ~ rrt * x1", sensitive="rrt", design=make_design("direct"),
                  sensitive_formula="~ x1 + x2")
    yes = (frame.rrt == "yes").astype(float)
    X = np.column_stack([np.ones(len(frame)), yes, frame.x1, yes * frame.x1])
    ols = sm.OLS(frame.y.to_numpy(), X).fit()
    n, p = X.shape
    assert list(fit.params.index) == ["(Intercept)", "rrt", "x1", "rrt:x1"]
    np.testing.assert_allclose(fit.params.to_numpy(), ols.params, atol=1e-6)
    # maximum likelihood divides the residual sum of squares by n, OLS by n - p
    np.testing.assert_allclose(fit.bse.to_numpy(), ols.bse * math.sqrt((n - p) / n), atol=1e-6)
    assert fit.nuisance["sigma"]["estimate"] == pytest.approx(
        math.sqrt(ols.ssr / n), abs=1e-6)
    Z = np.column_stack([np.ones(n), frame.x1, frame.x2])
    sensitive = sm.Logit(yes.to_numpy(), Z).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(fit.sensitive_params.to_numpy(), sensitive.params, atol=1e-6)
    assert fit.loglik == pytest.approx(ols.llf + sensitive.llf, abs=1e-6)


def test_direct_question_as_predictor_of_a_binary_outcome_equals_statsmodels_logit():
    rng = np.random.default_rng(6)
    frame = simulate_rows(make_design("direct"), n=2000, beta=[0.2, 0.5, 0.0], rng=rng,
                          outcome=("binomial", [-0.5, 1.0, 0.8], 0.0))
    fit = regress(frame, "y ~ rrt + x1", sensitive="rrt", design=make_design("direct"),
                  family="binomial")
    yes = (frame.rrt == "yes").astype(float)
    X = np.column_stack([np.ones(len(frame)), yes, frame.x1])
    reference = sm.Logit(frame.y.to_numpy(), X).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(fit.params.to_numpy(), reference.params, atol=1e-6)
    np.testing.assert_allclose(fit.bse.to_numpy(), reference.bse, atol=1e-6)


# -- properties of the likelihood ----------------------------------------------------------


def test_dont_know_answers_carry_no_information_about_the_coefficients():
    rng = np.random.default_rng(8)
    design = make_design("warner", p=0.8, dont_know=0.2)
    frame = simulate_rows(design, n=3000, beta=[-0.5, 0.8, -0.6], rng=rng)
    answered = frame[frame.rrt != "dont_know"]
    with_dk = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=design)
    without = regress(answered, "rrt ~ x1 + x2", sensitive="rrt", design=design)
    dk = int((frame.rrt == "dont_know").sum())
    assert with_dk.rows.dont_know_count() == dk > 0
    np.testing.assert_allclose(with_dk.params, without.params, atol=1e-8)
    np.testing.assert_allclose(with_dk.bse, without.bse, atol=1e-8)
    assert with_dk.loglik == pytest.approx(without.loglik + dk * math.log(0.2), abs=1e-6)


def test_dont_know_under_a_design_without_the_branch_is_left_out_and_counted():
    frame = _direct_rows(n=500)
    frame.loc[:9, "rrt"] = "don't know"
    fit = regress(frame, "rrt ~ x1", sensitive="rrt", design=make_design("direct"))
    assert fit.n == 490 and fit.rows.dont_know_left_out == 10
    assert any("don't know" in note for note in fit.warnings)


def test_rows_with_a_missing_value_in_a_used_column_are_dropped_and_counted():
    frame = _direct_rows(n=500)
    frame.loc[:4, "x1"] = np.nan
    frame.loc[5:6, "rrt"] = None
    frame.loc[7:20, "unused"] = np.nan
    fit = regress(frame, "rrt ~ x1", sensitive="rrt", design=make_design("direct"))
    assert (fit.n, fit.n_dropped) == (493, 7)
    assert fit.to_dict()["n_dropped"] == 7


def test_predictions_are_the_logistic_of_the_linear_predictor_with_intervals_inside():
    rng = np.random.default_rng(3)
    frame = simulate_rows(WARNER, n=4000, beta=[-0.5, 0.8, -0.6], rng=rng)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=WARNER)
    new = pd.DataFrame({"x1": [-1.0, 0.0, 2.0], "x2": [0.0, 1.0, 1.0]})
    predicted = fit.predict(new)
    b = fit.params
    linear = b["(Intercept)"] + b["x1"] * new.x1 + b["x2"] * new.x2
    np.testing.assert_allclose(predicted.prevalence, 1 / (1 + np.exp(-linear)), atol=1e-12)
    assert np.all(predicted.ci_low < predicted.prevalence)
    assert np.all(predicted.prevalence < predicted.ci_high)
    average = fit.prevalence()
    assert average.loc["yes", "prevalence"] == pytest.approx(fit.predict().prevalence.mean())
    assert average.loc["no", "prevalence"] == pytest.approx(
        1 - average.loc["yes", "prevalence"])


def test_k_category_design_is_a_multinomial_logit_with_the_first_category_as_reference():
    rng = np.random.default_rng(21)
    grr = make_design("grr", p=0.7, categories=["a", "b", "c"])
    beta = np.array([[0.2, -0.4], [0.8, -0.5], [-0.6, 0.3]])
    frame = simulate_rows(grr, n=20000, beta=beta, rng=rng)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=grr)
    assert list(fit.params.index) == [(c, t) for c in ("b", "c")
                                      for t in ("(Intercept)", "x1", "x2")]
    z = (fit.params.to_numpy() - beta.T.ravel()) / fit.bse.to_numpy()
    assert np.all(np.abs(z) < 4)
    assert "category 'c'" in fit.summary()


def test_cheating_detection_estimates_the_share_of_cheaters_jointly():
    rng = np.random.default_rng(22)
    cdm = make_design("cdm", p=[0.3, 0.7])
    frame = simulate_rows(cdm, n=20000, beta=[-0.5, 0.8, -0.6], rng=rng, gamma=0.15)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=cdm, group="group")
    gamma = fit.nuisance["gamma"]
    assert abs(gamma["estimate"] - 0.15) < 4 * gamma["se"]
    z = (fit.params.to_numpy() - [-0.5, 0.8, -0.6]) / fit.bse.to_numpy()
    assert np.all(np.abs(z) < 4)


def test_sld_with_direct_question_group_and_dont_know_recovers_t():
    rng = np.random.default_rng(23)
    frame = simulate_rows(SLD, n=15000, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7],
                          direct_share=0.2)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    assert set(fit.rows.group_sizes()) == {"1", "2", "direct"}
    t = fit.nuisance["t"]
    assert abs(t["estimate"] - 0.7) < 4 * t["se"]
    assert fit.to_dict()["parameters"]["t"]["lr_chi2"] > 10


def test_fixing_a_nuisance_parameter_removes_it_from_the_estimated_parameters():
    rng = np.random.default_rng(24)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7])
    free = regress(frame, "rrt ~ x1", sensitive="rrt", design=SLD, group="group")
    held = regress(frame, "rrt ~ x1", sensitive="rrt", design=SLD, group="group",
                   fixed={"t": 0.7})
    assert held.df_model == free.df_model - 1
    assert held.nuisance["t"] == {"estimate": 0.7, "se": None}
    assert held.loglik <= free.loglik


def test_starting_values_are_deterministic():
    rng = np.random.default_rng(25)
    frame = simulate_rows(SLD, n=2000, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7])
    first = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    second = regress(frame.sample(frac=1.0, random_state=1), "rrt ~ x1 + x2", sensitive="rrt",
                     design=SLD, group="group")
    np.testing.assert_allclose(first.params, second.params, atol=1e-8)
    assert first.iterations == regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD,
                                       group="group").iterations


def test_recovers_warner_coefficients_within_three_monte_carlo_standard_errors():
    """A fast check of the slow grid: 80 surveys of 1,500 rows; the mean estimate within 3
    Monte Carlo SE of the truth, the mean standard error within 20% of the spread (80
    replications measure a spread only to about 8%)."""
    rng = np.random.default_rng(2024)
    truth = np.array([-0.5, 0.8, -0.6])
    estimates, ses = [], []
    for _ in range(80):
        frame = simulate_rows(WARNER, n=1500, beta=truth, rng=rng)
        fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=WARNER)
        assert fit.converged
        estimates.append(fit.params.to_numpy())
        ses.append(fit.bse.to_numpy())
    estimates, ses = np.array(estimates), np.array(ses)
    spread = estimates.std(axis=0, ddof=1)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 3 * spread / math.sqrt(80))
    assert np.all(np.abs(ses.mean(axis=0) / spread - 1) < 0.2)


# -- what users get wrong --------------------------------------------------------------------


def _message(call) -> str:
    with pytest.raises((ParameterError, EstimationError)) as error:
        call()
    return str(error.value)


def test_unknown_column_is_named():
    frame = _direct_rows(n=200)
    assert _message(lambda: regress(frame, "rrt ~ age", sensitive="rrt",
                                    design=WARNER)).startswith(
        "formula 'rrt ~ age' uses column 'age', which is not in the data; the columns are")


def test_formula_that_does_not_parse_is_one_line():
    frame = _direct_rows(n=200)
    message = _message(lambda: regress(frame, "rrt ~ x1 +", sensitive="rrt", design=WARNER))
    assert message.startswith("formula ('rrt ~ x1 +') does not parse: ")
    assert "\n" not in message


def test_answer_the_design_lacks_is_named_with_its_column():
    frame = _direct_rows(n=200)
    frame.loc[3, "rrt"] = "maybe"
    assert _message(lambda: regress(frame, "rrt ~ x1", sensitive="rrt", design=WARNER)) == (
        "column 'rrt' holds 'maybe', which is not an answer of design 'warner'; its answers "
        "are yes, no, dont_know")


def test_two_group_design_without_group_column_says_so():
    frame = _direct_rows(n=200)
    assert _message(lambda: regress(frame, "rrt ~ x1", sensitive="rrt", design=SLD)) == (
        "design 'sld' has 2 groups: give the group column (--group COLUMN), which says which "
        "group each respondent was in")


def test_collinear_terms_are_named():
    frame = _direct_rows(n=200)
    frame["x3"] = 2 * frame.x1 - frame.x2
    message = _message(lambda: regress(frame, "rrt ~ x1 + x2 + x3", sensitive="rrt",
                                       design=WARNER))
    assert message == ("formula 'rrt ~ x1 + x2 + x3': term 'x3' is a linear combination of "
                       "'x1', 'x2' (collinear), so the data cannot tell their effects apart; "
                       "drop one of them")


@pytest.mark.parametrize("unit", [1e5, 1e60, 1e-40])
def test_a_covariate_in_another_unit_scales_its_coefficient_and_nothing_else(unit):
    # issue 19: a covariate of 1e5 (income in dollars) was "not identifiable: no information on
    # (Intercept)"; the fit is equivariant, so the oracle is the fit in the unit 1
    frame = _direct_rows(n=1500)
    frame["rrt"] = np.where(np.random.default_rng(2).random(1500) < 0.8, frame.rrt,
                            np.where(frame.rrt == "yes", "no", "yes"))
    base = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=WARNER)
    scaled = regress(frame.assign(x1=frame.x1 * unit), "rrt ~ x1 + x2", sensitive="rrt",
                     design=WARNER)
    factor = np.array([1.0, unit, 1.0])
    np.testing.assert_allclose(scaled.params.to_numpy() * factor, base.params.to_numpy(),
                               rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.diag(scaled.covariance)) * factor,
                               np.sqrt(np.diag(base.covariance)), rtol=1e-9)


def test_a_huge_covariate_is_named_with_its_row():
    frame = _direct_rows(n=200)
    frame.loc[5, "x1"] = 1e308
    assert _message(lambda: regress(frame, "rrt ~ x1", sensitive="rrt", design=WARNER)) == (
        "formula 'rrt ~ x1': term 'x1' is 1e+308 in row 6 of the rows used; values beyond "
        "1e+100 in size cannot be fitted in floating point: rescale the column (e.g. I(x/1e6))")


def test_a_huge_outcome_is_named_with_its_row():
    frame = _direct_rows(n=200)
    frame["y"] = frame.x2
    frame.loc[3, "y"] = -1e300
    assert _message(lambda: regress(frame, "y ~ rrt + x1", sensitive="rrt", design=WARNER)) == (
        "outcome column 'y' holds -1e+300 in row 4 of the rows used; values beyond 1e+100 in "
        "size cannot be fitted in floating point: rescale the column")


def test_perfect_separation_names_the_term():
    frame = _direct_rows(n=300)
    frame["rrt"] = np.where(frame.x1 > 0, "yes", "no")
    message = _message(lambda: regress(frame, "rrt ~ x1 + x2", sensitive="rrt",
                                       design=make_design("direct")))
    assert message.startswith("perfect separation: the term 'x1' separates the true answers")


def test_design_that_needs_both_groups_refuses_one():
    rng = np.random.default_rng(4)
    frame = simulate_rows(SLD, n=500, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7])
    frame = frame[frame.group == 1]
    assert _message(lambda: regress(frame, "rrt ~ x1", sensitive="rrt", design=SLD,
                                    group="group")).startswith(
        "design 'sld' needs answers from every group to separate the prevalence from t; group "
        "2 has none")


def test_group_value_the_design_lacks_is_named():
    rng = np.random.default_rng(4)
    frame = simulate_rows(SLD, n=100, beta=[0.3, 0.8, -0.6], rng=rng, nuisance=[0.7])
    frame.loc[0, "group"] = 3
    assert _message(lambda: regress(frame, "rrt ~ x1", sensitive="rrt", design=SLD,
                                    group="group")) == (
        "column 'group' holds '3', which is not a group of design 'sld': its groups are 1, 2, "
        "and 0 for respondents asked directly")


def test_sensitive_column_must_be_in_the_formula():
    frame = _direct_rows(n=100)
    frame["y"] = frame.x1
    assert _message(lambda: regress(frame, "y ~ x1", sensitive="rrt", design=WARNER)) == (
        "formula 'y ~ x1' uses the sensitive column 'rrt' neither as the response "
        "(rrt ~ ...) nor among the terms (... ~ rrt + ...)")


def test_cheaters_cannot_be_a_predictor():
    frame = _direct_rows(n=100)
    frame["y"] = frame.x1
    frame["group"] = 1
    frame.loc[:50, "group"] = 2
    message = _message(lambda: regress(frame, "y ~ rrt", sensitive="rrt",
                                       design=make_design("cdm", p=[0.3, 0.7]), group="group"))
    assert message.startswith("design 'cdm' has respondents in state 'cheater'")
