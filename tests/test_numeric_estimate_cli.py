"""surveykit estimate for designs for numeric answers: each group's n, sum and sum of squares
give the mean (and with --population-size the total); oracles: the moment estimator's closed
form computed here from the raw numbers, and RRreg's mix.unknown two-group solution."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from surveykit.cli import main


def run(*args):
    return CliRunner().invoke(main, ["estimate", *args], catch_exceptions=False)


def _sums(values):
    values = np.asarray(values, dtype=float)
    return f"n={values.size},sum={float(values.sum())!r},sum_squares={float((values ** 2).sum())!r}"


def test_eriksson_mean_total_and_se_are_the_closed_form():
    rng = np.random.default_rng(5)
    z = rng.choice([0.0, 1000, 5000, 20000, 3200, 4100, 7700], size=300)
    result = run("--design", "eriksson", "--param", "p=0.6", "--param",
                 "scrambler=0,1000,5000,20000", "--param", "dont_know=0.1", "--counts",
                 _sums(z) + ",dont_know=31", "--population-size", "5000", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    mu = np.mean([0, 1000, 5000, 20000])
    mean = (z.mean() - 0.4 * mu) / 0.6
    se = math.sqrt(z.var(ddof=1) / z.size) / 0.6
    assert data["mean"] == pytest.approx(mean, rel=1e-12)
    assert data["se"] == pytest.approx(se, rel=1e-10)
    assert data["total"] == pytest.approx(5000 * mean, rel=1e-12)
    assert data["ci_low"] == pytest.approx(mean - 1.959963984540054 * se, rel=1e-9)
    assert (data["n"], data["dont_know"]) == (300, 31)
    text = run("--design", "eriksson", "--param", "p=0.6", "--param",
               "scrambler=0,1000,5000,20000", "--counts", _sums(z), "--population-size", "5000")
    assert text.exit_code == 0
    mean_line = next(line for line in text.output.splitlines() if line.startswith("mean"))
    assert f"{mean:,.6g}" in mean_line  # amount_text: thousands separated, as the report
    total_line = next(line for line in text.output.splitlines() if line.startswith("total"))
    assert f"{5000 * mean:,.0f}" in total_line and "e+" not in total_line


def test_mix_unknown_solves_the_two_groups_as_rreg():
    # RRreg's mix.unknown: E[Z_g] = p_g mu_y + (1 - p_g) mu_x, two equations, two unknowns
    result = run("--design", "mix.unknown", "--param", "p=0.8,0.3",
                 "--counts", "1:n=2,sum=10,sum_squares=52",
                 "--counts", "2:n=2,sum=6,sum_squares=20", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    m1, m2 = 5.0, 3.0
    mu_y = ((1 - 0.3) * m1 - (1 - 0.8) * m2) / (0.8 - 0.3)
    mu_x = (0.3 * m1 - 0.8 * m2) / (0.3 - 0.8)
    assert data["mean"] == pytest.approx(mu_y) and data["unrelated_mean"] == pytest.approx(mu_x)


@pytest.mark.parametrize(("counts", "words"), [
    ("n=5,sum=x,sum_squares=3", "sum ('x') must be a number"),
    ("n=5,sum=3", "give sum_squares too"),
    ("n=5.5,sum=3,sum_squares=9", "n ('5.5') must be a whole number"),
    ("n=5,total=3,sum_squares=9", "must be n=N, sum=S, sum_squares=Q or dont_know=D"),
])
def test_bad_sums_are_usage_errors(counts, words):
    result = CliRunner().invoke(main, ["estimate", "--design", "eriksson", "--param", "p=0.6",
                                       "--param", "scrambler=0,1,2", "--counts", counts])
    assert result.exit_code == 2
    assert words in result.output


def test_numeric_options_are_refused_where_they_do_not_belong():
    no_counts = CliRunner().invoke(main, ["estimate", "--design", "mix_norm", "--param", "p=0.7",
                                          "--param", "mu=40", "--param", "sigma=15"])
    assert no_counts.exit_code == 2 and "--counts n=N,sum=S,sum_squares=Q" in no_counts.output
    method = CliRunner().invoke(main, ["estimate", "--design", "mix_norm", "--param", "p=0.7",
                                       "--param", "mu=40", "--param", "sigma=15",
                                       "--counts", "n=3,sum=3,sum_squares=5", "--method", "wald"])
    assert method.exit_code == 2 and "mean -/+ z se" in method.output
    size = CliRunner().invoke(main, ["estimate", "--design", "warner", "--param", "p=0.7",
                                     "--counts", "yes=3,no=4", "--population-size", "100"])
    assert size.exit_code == 2 and "--population-size is for designs for numeric" in size.output


def test_help_lists_every_design_for_numeric_answers():
    from surveykit.designs.quantitative import QUANTITATIVE_PRESETS

    text = CliRunner().invoke(main, ["estimate", "--help"]).output
    assert "Designs for numeric answers" in text
    for name in QUANTITATIVE_PRESETS:
        assert f"\n  {name}" in text
    assert max(len(line) for line in text.splitlines()) <= 80


# -- planning a numeric question ------------------------------------------------------------


@pytest.mark.parametrize(("model", "parameters"), [
    ("eriksson", {"p": 0.6, "scrambler": [0, 1000, 5000, 20000], "dont_know": 0.1}),
    ("mix_norm", {"p": 0.7, "mu": 5000, "sigma": 3000}),
    ("bar_lev", {"p": 0.5, "mu": 1.0, "sigma": 0.3, "scrambler": "uniform"}),
    ("additive", {"mu": 0, "sigma": 2000, "scrambler": "normal"}),
])
def test_the_planned_standard_error_is_the_spread_of_simulated_estimates(model, parameters):
    """Simulate 400 surveys of n respondents from a population of known mean and sd: the
    estimates' standard deviation matches plan_numeric's se within 4 of its own standard
    errors (the sd of 400 draws has relative se about 1 / sqrt(2 * 399))."""
    from surveykit.designs.registry import make_design
    from surveykit.estimation.quantitative import estimate_mean
    from surveykit.numeric_counts import NumericCounts
    from surveykit.planning import plan_numeric

    design = make_design(model, **parameters)
    rng = np.random.default_rng(11)
    population = rng.gamma(4.0, 1500.0, 200_000)          # mean 6000, sd 3000
    mean, sd = population.mean(), population.std()
    n = 500
    plan = plan_numeric(design, mean=mean, sd=sd, n=n)
    estimates = []
    for _ in range(400):
        simulated = design.simulate(rng.choice(population, n), rng=rng)
        counts = NumericCounts.from_answers(simulated.answers, dont_know=simulated.dont_know)
        estimates.append(estimate_mean(design, counts).mean)
    spread = np.std(estimates, ddof=1)
    assert abs(spread / plan.se - 1) < 4 / math.sqrt(2 * 399), (spread, plan.se)
    # and the n for a target is the smallest that reaches it
    target = plan_numeric(design, mean=mean, sd=sd, target_se=plan.se * 1.5)
    assert target.se <= plan.se * 1.5 < plan_numeric(design, mean=mean, sd=sd,
                                                     n=target.n - 1).se


def test_design_prints_the_numeric_plan_and_refuses_mixed_options():
    result = run_design("--design", "eriksson", "--param", "p=0.5", "--param",
                        "scrambler=0,1,2,3", "--range", "0,3", "--decimals", "0", "--mean",
                        "1.5", "--sd", "1", "--n", "400", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["epsilon_shafer"] == pytest.approx(math.log(5))
    # Var(r) = (p Var(y) + (1 - p) Var(S) + p (1 - p) (E y - E S)^2) / p^2
    var_r = (0.5 * 1 + 0.5 * np.var([0, 1, 2, 3]) + 0) / 0.25
    assert data["se"] == pytest.approx(math.sqrt(var_r / 400))
    text = run_design("--design", "eriksson", "--param", "p=0.5", "--param", "scrambler=0,1,2,3",
                      "--range", "0,3", "--decimals", "0")
    assert text.exit_code == 0 and "Shafer 1.6094" in text.output
    wrong = run_design("--design", "eriksson", "--param", "p=0.5", "--param",
                       "scrambler=0,1,2,3", "--epsilon", "1")
    assert wrong.exit_code == 2 and "--epsilon belong to yes/no" in wrong.output
    stray = run_design("--design", "warner", "--param", "p=0.7", "--range", "0,1")
    assert stray.exit_code == 2 and "--range belongs to designs for numeric" in stray.output
    no_sd = run_design("--design", "eriksson", "--param", "p=0.5", "--param",
                       "scrambler=0,1,2,3", "--n", "100")
    assert no_sd.exit_code != 0 and "give their assumed mean and sd" in no_sd.output


def run_design(*args):
    return CliRunner().invoke(main, ["design", *args])


@pytest.mark.parametrize(("counts", "words"), [
    ("n=5,sum=nan,sum_squares=3", "sum (nan) must be finite"),
    ("n=5,sum=1e308,sum_squares=1e308", "too large to estimate from"),
    ("n=5,sum=-3,sum_squares=1", "are inconsistent"),
])
def test_hostile_sums_are_one_line_errors(counts, words):
    result = CliRunner().invoke(main, ["estimate", "--design", "eriksson", "--param", "p=0.6",
                                       "--param", "scrambler=0,1,2", "--counts", counts])
    assert result.exit_code == 2, result.output   # a parameter error, as every bad --counts
    assert result.output.startswith("Error: ") and words in result.output
    assert result.output.count("\n") == 1
