"""surveykit regress: real CLI runs on the minarets data (tests/data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from terminal import run_on_a_terminal

from surveykit.cli import main

MINARETS = str(Path(__file__).parent / "data" / "minarets.csv")
SLD = ["--design", "sld", "--param", "p=0.16666666666666666,0.8333333333333334",
       "--group", "condition"]


def run(*args: str):
    return CliRunner().invoke(main, ["regress", *args])


@pytest.fixture
def rr_only(tmp_path) -> str:
    frame = pd.read_csv(MINARETS)
    path = tmp_path / "minarets_rr.csv"
    frame[frame.RRdesign == 1].to_csv(path, index=False)
    return str(path)


def test_text_output_reads_like_r_summary_in_80_columns(rr_only):
    result = run(rr_only, "--formula", "rrt ~ age.c * leftRight.c", "--sensitive", "rrt", *SLD)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "Coefficients (log-odds of a true 'yes'):" in lines
    row = next(line for line in lines if line.startswith("leftRight.c "))
    assert row.split()[:3] == ["leftRight.c", "0.62447", "0.15685"]
    assert any(line.startswith("t ") and "0.65171" in line for line in lines)
    assert "Log-likelihood: -821.084 (df = 5), AIC: 1652.17, BIC: 1677.85" in lines
    assert lines[-1].startswith("Converged after")


def test_json_output_has_the_documented_keys(rr_only):
    result = run(rr_only, "--formula", "rrt ~ leftRight.c", "--sensitive", "rrt", *SLD,
                 "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in ("n", "coefficients", "parameters", "loglik", "aic", "bic", "converged",
                "iterations"):
        assert key in data
    assert data["n"] == 1256
    assert [c["term"] for c in data["coefficients"]] == ["(Intercept)", "leftRight.c"]
    assert set(data["coefficients"][0]) >= {"term", "estimate", "se", "z", "p_value",
                                            "lr_chi2"}
    assert set(data["parameters"]["t"]) >= {"estimate", "se"}
    assert data["converged"] is True


def test_predictions_at_given_covariate_values(tmp_path):
    result = run(MINARETS, "--formula", "rrt ~ RRdesign * leftRight.c", "--sensitive", "rrt",
                 *SLD, "--at", "RRdesign=1,leftRight.c=2", "--format", "json")
    assert result.exit_code == 0, result.output
    prediction = json.loads(result.output)["predictions"][0]
    b = {c["term"]: c["estimate"] for c in json.loads(result.output)["coefficients"]}
    linear = b["(Intercept)"] + b["RRdesign"] + 2 * b["leftRight.c"] + 2 * b[
        "RRdesign:leftRight.c"]
    assert prediction["prevalence"] == pytest.approx(1 / (1 + np.exp(-linear)), abs=1e-12)
    assert prediction["ci_low"] < prediction["prevalence"] < prediction["ci_high"]


def test_sensitive_answer_as_predictor_with_its_own_model(rr_only):
    result = run(rr_only, "--formula", "leftRight ~ rrt + age", "--sensitive", "rrt", *SLD,
                 "--sensitive-formula", "~ age", "--fix", "t=0.635806")
    assert result.exit_code == 0, result.output
    assert "Coefficients (outcome model):" in result.output
    assert "Sensitive-answer model (log-odds of a true 'yes'):" in result.output
    assert "fixed" in result.output


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--formula", "rrt ~ agee", "--sensitive", "rrt", *SLD], 2,
     "Error: formula 'rrt ~ agee' uses column 'agee', which is not in the data; the columns "
     "are age, leftRight, rrt, condition, RRdesign, leftRight.c, age.c"),
    (["--formula", "rrt ~ age +", "--sensitive", "rrt", *SLD], 2,
     "Error: formula ('rrt ~ age +') does not parse: '+' at column 11 needs a term after it; "
     "add one or remove the '+'"),
    (["--formula", "rrt ~ age", "--sensitive", "rrt", "--design", "sld", "--param",
      "p=0.2,0.8"], 2,
     "Error: design 'sld' has 2 groups: give the group column (--group COLUMN), which says "
     "which group each respondent was in"),
    (["--formula", "leftRight ~ age", "--sensitive", "leftRight", *SLD], 2,
     "Error: column 'leftRight' holds '-1', which is not an answer of design 'sld'; its "
     "answers are yes, no, dont_know"),
    (["--formula", "rrt ~ age", "--sensitive", "rrt", "--design", "sld", "--param", "q=0.2"], 2,
     "Error: design 'sld' has no parameter 'q'; its parameters are p, dont_know, groups"),
    (["--formula", "rrt ~ age + age.c", "--sensitive", "rrt", *SLD], 2,
     "Error: formula 'rrt ~ age + age.c': term 'age.c' is a linear combination of "
     "'(Intercept)', 'age' (collinear), so the data cannot tell their effects apart; drop one "
     "of them"),
])
def test_bad_input_is_one_line_naming_the_problem(args, code, message):
    result = run(MINARETS, *args)
    assert result.exit_code == code
    assert result.output == message + "\n"


def test_perfect_separation_exits_1_naming_the_term(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    path = tmp_path / "separated.csv"
    pd.DataFrame({"x": x, "y": np.where(x > 0, "yes", "no")}).to_csv(path, index=False)
    result = run(str(path), "--formula", "y ~ x", "--sensitive", "y", "--design", "direct")
    assert result.exit_code == 1
    assert result.output.startswith("Error: perfect separation: the term 'x' separates")
    assert result.output.count("\n") == 1


def test_a_fit_that_did_not_converge_exits_1_unless_asked_to_report(rr_only):
    args = [rr_only, "--formula", "rrt ~ age.c * leftRight.c", "--sensitive", "rrt", *SLD,
            "--max-iterations", "2"]
    refused = run(*args)
    assert refused.exit_code == 1
    assert refused.output == ("Error: the fit did not converge in 2 iterations; the estimates "
                              "may be off (rerun with --allow-unconverged to print them "
                              "anyway)\n")
    reported = run(*args, "--allow-unconverged")
    assert reported.exit_code == 0
    assert "NOT CONVERGED after 2 iterations" in reported.output


def test_regress_has_help():
    result = CliRunner().invoke(main, ["regress", "--help"])
    assert result.exit_code == 0
    assert "--sensitive-formula" in result.output


def test_one_newton_step_is_one_iteration_in_the_summary(tmp_path):
    # an intercept-only model of a one-group yes/no design starts at its closed-form MLE and
    # converges in one step; the summary used to say "Converged after 1 iterations."
    path = tmp_path / "answers.csv"
    path.write_text("a\n" + "yes\n" * 30 + "no\n" * 50 + "dont_know\n" * 20, encoding="utf-8")
    result = run(str(path), "--formula", "a ~ 1", "--sensitive", "a", "--design",
                 "generalized_warner", "--param", "p=0.6", "--param", "q=0.2")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "Converged after 1 iteration."


def test_a_terminal_sees_the_likelihood_ratio_refits_progress(rr_only):
    """One refit per term takes seconds on a million rows: a terminal gets a progress bar,
    a pipe gets none, and stdout holds only the summary."""
    completed, shown = run_on_a_terminal(
        "regress", rr_only, "--formula", "rrt ~ age.c", "--sensitive", "rrt", *SLD, "--lr", "all")
    assert completed.returncode == 0
    assert b"Likelihood-ratio tests" in shown and b"100%" in shown
    assert completed.stdout.startswith("Logistic regression")
    piped = run(rr_only, "--formula", "rrt ~ age.c", "--sensitive", "rrt", *SLD, "--lr", "all")
    assert "Likelihood-ratio" not in piped.stderr


def test_likelihood_ratio_refits_run_once_with_or_without_progress(rr_only):
    from surveykit.designs.registry import make_design
    from surveykit.estimation.regression import regress

    frame = pd.read_csv(rr_only)
    design = make_design("sld", p=[1 / 6, 5 / 6])
    lazy = regress(frame, "rrt ~ age.c", sensitive="rrt", design=design, group="condition")
    eager = regress(frame, "rrt ~ age.c", sensitive="rrt", design=design, group="condition")
    steps = []
    eager.run_lr_tests(steps.append)
    assert steps == [1] * len(eager.parameters)
    assert eager.lr_tests == lazy.lr_tests
    eager.run_lr_tests(steps.append)  # already run: no second round of refits
    assert len(steps) == len(eager.parameters)
