"""``surveykit regress`` and the report's ``[[models]]`` on a survey with ``[sampling]`` whose
outcome is a numeric question, end to end on a real SQLite file and on PostgreSQL.

apiclus2's two-stage design (svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2)) with the
Eriksson answers of tools/r_reference/survey_api_numeric_regression.R, "don't know"
included: survey add -> import -> regress --format json equals the library call
(:func:`surveykit.sampling.survey_linear_regress` on the same file), R's svyglm(gaussian)
(numeric_regression.json, 1e-6) and a closed form computed here with numpy from the file:
weighted least squares of r = (z - a) / b and the with-replacement-free two-stage sandwich
written out (first stage: PSU totals of the influence values within the one stratum, times
(1 - n/N) n/(n-1); second stage: within each PSU, its schools' values, times n/N of the
first stage). The report's ``models`` carries the same fit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from migrated import DATABASES, migrated_database
from store_support import run_cli

from surveykit.designs.quantitative import Eriksson
from surveykit.sampling import SamplingDesign, survey_linear_regress
from tests.numeric_support import api_score_question

ROOT = Path(__file__).resolve().parent / "reference" / "survey_api"
REFERENCE = json.loads((ROOT / "numeric_regression.json").read_text(encoding="utf-8"))
R = {case["sample"]: case for case in REFERENCE["cases"]}["apiclus2"]
TERMS = ["(Intercept)", "ell", "meals"]
SURVEY = ('name = "api_numeric"\ntitle = "School scores"\n\n' + api_score_question()
          + '''
[covariates]
ell = "number"
meals = "number"

[[models]]
formula = "score ~ ell + meals"

[sampling]
weight = "pw"
clusters = ["dnum", "snum"]
fpc = ["fpc1", "fpc2"]
''')


def answers() -> pd.DataFrame:
    frame = pd.read_csv(ROOT / "numeric_answers_apiclus2.csv", dtype={"answer": str})
    frame.insert(0, "respondent_id", "s" + frame["snum"].astype(str))
    return frame.rename(columns={"answer": "score"})


@pytest.fixture(scope="module", params=DATABASES)
def url(request, tmp_path_factory) -> Iterator[str]:
    """A database (SQLite, PostgreSQL) with apiclus2's answers added and imported by the CLI
    once for the module: its tests only read it (regress, report)."""
    folder = tmp_path_factory.mktemp("api_numeric")
    with migrated_database(request.param, folder) as url:
        (folder / "api_numeric.toml").write_text(SURVEY, encoding="utf-8")
        answers().to_csv(folder / "answers.csv", index=False)
        result = run_cli("survey", "add", str(folder / "api_numeric.toml"), "--db", url)
        assert result.exit_code == 0, result.output
        result = run_cli("import", str(folder / "answers.csv"), "--survey", "api_numeric",
                         "--db", url)
        assert result.exit_code == 0, result.output
        yield url


def closed_form(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """WLS of r on (1, ell, meals) and the two-stage linearization of its influence values."""
    answered = frame[frame["score"] != "dont_know"]
    z = answered["score"].astype(float).to_numpy()
    p, deck = 0.6, np.array([0, 1, 3, 5, 8])
    r = (z - (1 - p) * deck.mean()) / p
    X = np.column_stack([np.ones(len(answered)), answered["ell"], answered["meals"]])
    w = answered["pw"].to_numpy()
    A = X.T @ (w[:, None] * X)
    beta = np.linalg.solve(A, X.T @ (w * r))
    influence = np.zeros((len(frame), 3))
    influence[(frame["score"] != "dont_know").to_numpy()] = \
        (w * (r - X @ beta))[:, None] * X @ np.linalg.inv(A)
    psu = frame["dnum"].to_numpy()
    N1 = frame["fpc1"].iloc[0]
    psus = np.unique(psu)
    n1 = psus.size
    totals = np.array([influence[psu == j].sum(axis=0) for j in psus])
    centred = totals - totals.mean(axis=0)
    V = (1 - n1 / N1) * n1 / (n1 - 1) * centred.T @ centred
    for j in psus:
        inside = influence[psu == j]
        n2, N2 = len(inside), frame.loc[psu == j, "fpc2"].iloc[0]
        if n2 > 1:
            c = inside - inside.mean(axis=0)
            V += n1 / N1 * (1 - n2 / N2) * n2 / (n2 - 1) * c.T @ c
    return beta, V


def test_regress_json_equals_the_library_r_and_the_closed_form(url):
    result = run_cli("regress", "--survey", "api_numeric", "--formula", "score ~ ell + meals",
                     "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    coefficients = {c["term"]: c for c in got["coefficients"]}
    assert list(coefficients) == TERMS
    estimate = np.array([coefficients[t]["estimate"] for t in TERMS])
    se = np.array([coefficients[t]["se"] for t in TERMS])

    frame = answers()
    library_frame = frame.assign(score=[a if a == "dont_know" else float(a)
                                        for a in frame["score"]])
    library = survey_linear_regress(
        library_frame, "score ~ ell + meals", scrambled="score",
        design=Eriksson(p=0.6, scrambler=[0, 1, 3, 5, 8], dont_know=0.1),
        sampling=SamplingDesign(weight="pw", clusters=("dnum", "snum"),
                                fpc=("fpc1", "fpc2")))
    assert estimate == pytest.approx(library.params.to_numpy(), rel=1e-12)
    assert se == pytest.approx(library.bse.to_numpy(), rel=1e-12)

    beta, V = closed_form(frame)
    assert estimate == pytest.approx(beta, rel=1e-9)
    assert se == pytest.approx(np.sqrt(np.diag(V)), rel=1e-9)

    assert estimate == pytest.approx([R["coefficients"][t] for t in TERMS], rel=1e-6)
    assert se == pytest.approx([R["se"][t] for t in TERMS], rel=1e-6)
    assert got["df_residual"] == R["df_residual"]
    assert (got["n"], got["dont_know"]) == (R["n"], R["dont_know"])
    assert got["notes"] == [f"{R['dont_know']} \"don't know\" answer(s) left out: they carry "
                            "no value"]
    assert got["variance_method"] == "linearization"


def test_regress_text_says_the_dont_know_answers_were_left_out(url):
    result = run_cli("regress", "--survey", "api_numeric", "--formula", "score ~ ell + meals",
                     "--db", url)
    assert result.exit_code == 0, result.output
    assert f"Note: {R['dont_know']} \"don't know\" answer(s) left out" in result.output


def test_the_declared_model_is_in_the_report(url):
    result = run_cli("report", "--survey", "api_numeric", "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    (model,) = json.loads(result.output)["models"]
    assert model["question"] == "score" and model["error"] is None
    fit = {c["term"]: c for c in model["fit"]["coefficients"]}
    assert [fit[t]["estimate"] for t in TERMS] == pytest.approx(
        [R["coefficients"][t] for t in TERMS], rel=1e-6)
    assert [fit[t]["se"] for t in TERMS] == pytest.approx([R["se"][t] for t in TERMS],
                                                          rel=1e-6)
    text = run_cli("report", "--survey", "api_numeric", "--db", url)
    assert text.exit_code == 0, text.output
    assert "Model: score ~ ell + meals" in text.output and "No fit" not in text.output


def test_a_family_is_refused_in_one_line(url):
    result = run_cli("regress", "--survey", "api_numeric", "--formula", "score ~ ell",
                     "--family", "binomial", "--db", url)
    assert result.exit_code != 0
    assert "is numeric: its model is linear least squares" in result.output
    assert "Traceback" not in result.output
