"""Simulated power (surveykit.power_analysis.simulated): against the analytic power, against a
closed form for non-compliance, the size of the regression and correlation tests, and the
command's --simulate. Every simulation is seeded; tolerances are in Monte Carlo SEs."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import numpy as np
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.designs import make_design
from surveykit.errors import ParameterError
from surveykit.power_analysis.analytic import power
from surveykit.power_analysis.simulated import _Survey, simulate_power


@pytest.mark.parametrize(("name", "params", "nuisance", "n", "alternative", "reps"), [
    ("warner", {"p": 0.8}, None, 500, "two-sided", 4000),          # Eq. 2, vectorized
    ("fr", {"p": [0.1, 0.2], "dont_know": 0.1}, None, 300, "greater", 4000),
    ("sld", {"p": [1 / 6, 5 / 6]}, {"t": 0.8}, 800, "two-sided", 4000),   # linear solve
    ("uqtunknown", {"p": [0.8, 0.3]}, {"pi_innocuous": 0.4}, 400, "less", 4000),
    ("kuk", {"p": [0.7, 0.3], "repetitions": 2}, None, 300, "two-sided", 400),  # Newton fits
])
def test_simulated_power_agrees_with_the_analytic_power_within_3_mc_se(name, params, nuisance,
                                                                        n, alternative, reps):
    design = make_design(name, **params)
    pi, null = (0.2, 0.3) if alternative == "less" else (0.3, 0.15)
    result = simulate_power(design, n=n, reps=reps, pi=pi, null=null, nuisance=nuisance,
                            alternative=alternative, rng=np.random.default_rng(24))
    analytic = power(design, pi=pi, null=null, n=n, nuisance=nuisance,
                     alternative=alternative).power
    assert result.analytic == pytest.approx(analytic, abs=1e-12)
    assert result.failed == 0
    assert abs(result.power - analytic) < 3 * result.mc_se, (result.power, analytic)
    assert result.mc_se == pytest.approx(math.sqrt(result.power * (1 - result.power) / reps))


def test_carriers_who_say_no_lower_the_power_as_the_biased_yes_share_predicts():
    """Warner, p = 0.8: 30% of carriers ignore the instructions and say no. The estimator
    then sees lambda = 0.7 pi 0.8 + 0.3 pi 0 + (1 - pi) 0.2, and pi_hat = (lambda - 0.2)/0.6
    is normal around (lambda - 0.2)/0.6 with sd sqrt(lambda (1 - lambda) / n) / 0.6."""
    design, n, pi, null = make_design("warner", p=0.8), 600, 0.3, 0.1
    result = simulate_power(design, n=n, reps=5000, pi=pi, null=null, alternative="greater",
                            compliance=(0.7, 1.0), rng=np.random.default_rng(5))
    lam = 0.7 * pi * 0.8 + (1 - pi) * 0.2
    center, sd = (lam - 0.2) / 0.6, math.sqrt(lam * (1 - lam) / n) / 0.6
    se_null = power(design, pi=pi, null=null, n=n).se_null
    threshold = null + NormalDist().inv_cdf(0.95) * se_null
    expected = 1 - NormalDist(center, sd).cdf(threshold)
    assert abs(result.power - expected) < 3 * result.mc_se
    assert result.power < result.analytic - 5 * result.mc_se


def test_simulated_answers_follow_the_design_s_columns():
    """The draws behind every replicate: shares of answers per state and group match the
    design's matrix within 3 binomial SEs."""
    design = make_design("sld", p=[0.2, 0.7])
    matrix = design.matrix([0.85])
    survey = _Survey(design, matrix, (20000, 20000))
    rng = np.random.default_rng(3)
    truth = rng.random(40000) < 0.4
    groups, answers = survey.rows(rng, truth)
    for g in (1, 2):
        for state, column in ((True, 0), (False, 1)):
            chosen = (groups == g) & (truth == state)
            share = np.mean(answers[chosen] == "yes")
            expected = matrix[g - 1, 0, column]
            assert abs(share - expected) < 3 * math.sqrt(expected * (1 - expected)
                                                         / chosen.sum())


def test_progress_is_reported_once_per_replicate():
    seen = []
    simulate_power(make_design("kuk", p=[0.7, 0.3], repetitions=2), n=200, reps=7, pi=0.3,
                   null=0.1, rng=np.random.default_rng(1), progress=seen.append)
    assert sum(seen) == 7


def test_a_regression_simulation_reports_power_and_its_error():
    result = simulate_power(make_design("warner", p=0.8), n=400, reps=12, pi=0.3,
                            model="logistic", effect=1.0, rng=np.random.default_rng(2))
    assert result.power == 1.0 and result.mc_se == 0.0 and result.failed == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", ["logistic", "linear", "correlation"])
def test_without_an_effect_the_tests_reject_at_about_alpha(model):
    """The size: with effect 0, 400 surveys reject in 5% of them, within 3 Monte Carlo SEs
    (0.033); RRcor's critical value comes from its own null simulation."""
    result = simulate_power(make_design("sld", p=[1 / 6, 5 / 6]), n=600, reps=400, pi=0.4,
                            model=model, effect=0.0, nuisance={"t": 0.9},
                            rng=np.random.default_rng(11))
    se = math.sqrt(0.05 * 0.95 / 400)
    assert abs(result.power - 0.05) < 3 * se, result


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model": "probit", "pi": 0.3}, "model ('probit') must be one of prevalence, logistic, "
     "linear, correlation"),
    ({"model": "logistic", "pi": 0.3}, "model 'logistic' needs effect: the slope of the "
     "log-odds per SD of the covariate"),
    ({"model": "correlation", "pi": 0.3, "effect": 1.5}, "effect (1.5) is a correlation: it "
     "must lie strictly between -1 and 1"),
    ({"pi": 0.3, "compliance": (0.9,)}, "compliance ((0.9,)) must be two probabilities: for "
     "carriers and for non-carriers of the trait, e.g. (0.9, 1.0)"),
    ({"pi": 1.0}, "pi (1.0) must be a prevalence strictly between 0 and 1"),
])
def test_bad_input_is_one_line(kwargs, message):
    with pytest.raises(ParameterError) as error:
        simulate_power(make_design("warner", p=0.8), n=100, reps=10,
                       rng=np.random.default_rng(1), **kwargs)
    assert str(error.value) == message


def test_the_command_simulates_beside_the_analytic_power():
    args = ["power", "--design", "warner", "--param", "p=0.8", "--pi", "0.3", "--null", "0.15",
            "--n", "500", "--simulate", "3000", "--seed", "9", "--format", "json"]
    result = CliRunner().invoke(main, args, prog_name="surveykit")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["seed"] == 9 and data["reps"] == 3000
    assert abs(data["power"] - data["analytic"]) < 3 * data["mc_se"]
    again = CliRunner().invoke(main, args, prog_name="surveykit")
    assert json.loads(again.output) == data
    text = CliRunner().invoke(main, args[:-2], prog_name="surveykit").output.splitlines()
    assert text[0] == "Simulated power of the test of pi = 0.3 against 0.15 (two-sided)"
    assert f"power           {data['power']:.4f} (Monte Carlo se {data['mc_se']:.4f})" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "logistic", "--effect", "0.5", "--pi", "0.3", "--n", "100"],
     "Error: --model logistic is simulated: give --simulate REPS (see 'surveykit power "
     "--help')"),
    (["--simulate", "10", "--pi", "0.3", "--power", "0.8"],
     "Error: a simulation takes --pi and --n (not --power) (see 'surveykit power --help')"),
    (["--effect", "0.5", "--pi", "0.3", "--n", "100"],
     "Error: --effect belongs to a simulation: give --simulate REPS (see 'surveykit power "
     "--help')"),
])
def test_command_errors_are_one_line_with_exit_2(args, message):
    result = CliRunner().invoke(main, ["power", "--design", "warner", "--param", "p=0.8", *args],
                                prog_name="surveykit")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == message
