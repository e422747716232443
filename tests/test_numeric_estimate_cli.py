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
    assert f"{mean:.6g}" in mean_line
    total_line = next(line for line in text.output.splitlines() if line.startswith("total"))
    assert f"{5000 * mean:.0f}" in total_line and "e+" not in total_line


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
