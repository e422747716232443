"""``surveykit report --by`` and ``--variance`` on numeric questions, end to end (survey add,
import, report through the CLI) on a real SQLite file and on PostgreSQL.

With ``[sampling]``: apiclus1's one-stage clusters without fpc and the Eriksson answers of
tools/r_reference/survey_api_numeric_regression.R, "don't know" included; the domains
``band`` (meals >= 50: "high", else "low") equal R's svyby on the unbiased transform
(tests/reference/survey_api/numeric_domains.json, 1e-6), with the linearization and with
the jackknife (as.svrepdesign). (mix_unknown is checked against R in
test_sampling_numeric_domains.py: 'survey add' of a mix_unknown question stops today at
the web page's -Infinity bound.) Without ``[sampling]``: the domain means of a
one-group design and their standard errors written out (svyby on an
``svydesign(ids = ~1)``: n / (n - 1) sum u_i^2 with u_i = (r_i - rbar_d) / n_d inside the
domain, 0 outside).
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

ROOT = Path(__file__).resolve().parent / "reference" / "survey_api"
REFERENCE = json.loads((ROOT / "numeric_domains.json").read_text(encoding="utf-8"))
R = next(c for c in REFERENCE["eriksson"]["cases"]
         if c["sample"] == "apiclus1" and not c["fpc"])
SURVEY = '''name = "api_domains"
title = "School scores"

[[questions]]
id = "score"
text = "What was the school's API score in 2000, divided by 100?"
type = "number"
range = [0, 10]
[questions.design]
{design}

[covariates]
band = "category"
meals = "number"

[sampling]
weight = "pw"
clusters = ["dnum"]
'''
ERIKSSON = 'model = "eriksson"\np = 0.6\nscrambler = [0, 1, 3, 5, 8]\ndont_know = 0.1'


def add_and_import(url: str, tmp_path: Path, survey: str, frame: pd.DataFrame) -> None:
    (tmp_path / "survey.toml").write_text(survey, encoding="utf-8")
    frame.to_csv(tmp_path / "answers.csv", index=False)
    result = run_cli("survey", "add", str(tmp_path / "survey.toml"), "--db", url)
    assert result.exit_code == 0, result.output
    result = run_cli("import", str(tmp_path / "answers.csv"), "--survey", "api_domains",
                     "--db", url)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module", params=DATABASES)
def url(request, tmp_path_factory) -> Iterator[str]:
    """A database (SQLite, PostgreSQL) with apiclus1's answers added and imported by the CLI
    once for the module: its tests only read it (report, regress)."""
    folder = tmp_path_factory.mktemp("api_domains")
    frame = pd.read_csv(ROOT / "numeric_answers_apiclus1.csv", dtype={"answer": str})
    frame.insert(0, "respondent_id", [f"s{i}" for i in range(len(frame))])
    frame["band"] = np.where(frame["meals"] >= 50, "high", "low")
    with migrated_database(request.param, folder) as url:
        add_and_import(url, folder, SURVEY.format(design=ERIKSSON),
                       frame[["respondent_id", "dnum", "pw", "band", "meals", "answer"]].rename(
                           columns={"answer": "score"}))
        yield url


def report_json(url: str, *options: str) -> dict:
    result = run_cli("report", "--survey", "api_domains", "--db", url, "--format", "json",
                     *options)
    assert result.exit_code == 0, result.output
    (question,) = [q for q in json.loads(result.output)["questions"] if q["id"] == "score"]
    return question


def assert_domains_equal(domains: list[dict], mean: dict, total: dict | None) -> None:
    assert [d["domain"] for d in domains] == mean["domains"]
    for i, domain in enumerate(domains):
        assert set(domain) >= {"domain", "estimate", "se", "ci_low", "ci_high", "total",
                               "total_se"}
        assert (domain["estimate"], domain["se"]) == pytest.approx(
            (mean["estimate"][i], mean["se"][i]), rel=1e-6)
        if total is not None:
            assert (domain["total"], domain["total_se"]) == pytest.approx(
                (total["estimate"][i], total["se"][i]), rel=1e-6)
        low, high = domain["ci_low"], domain["ci_high"]
        assert low < domain["estimate"] < high
        assert (high - low) / 2 == pytest.approx(1.959964 * domain["se"], rel=1e-6)


def test_report_by_a_covariate_gives_svyby_of_the_transform(url):
    question = report_json(url, "--by", "band")
    lin = R["linearization"]
    assert (question["mean"], question["se"]) == pytest.approx(
        (lin["mean"]["estimate"], lin["mean"]["se"]), rel=1e-6)
    assert (question["total"], question["total_se"]) == pytest.approx(
        (lin["total"]["estimate"], lin["total"]["se"]), rel=1e-6)
    assert question["by"] == "band" and question["variance_method"] == "linearization"
    assert_domains_equal(question["domains"], lin["by_mean"], lin["by_total"])


def test_report_by_with_the_jackknife_gives_svrepdesign_values(url):
    question = report_json(url, "--by", "band", "--variance", "jackknife")
    jk = R["jackknife"]
    assert question["variance_method"] == R["replicate_type"] == "JK1"
    assert (question["mean"], question["se"]) == pytest.approx(
        (jk["mean"]["estimate"], jk["mean"]["se"]), rel=1e-6)
    assert_domains_equal(question["domains"], jk["by_mean"], jk["by_total"])


def test_regress_with_the_numeric_question_as_a_predictor_is_the_corrected_fit(url):
    from surveykit.designs.quantitative import Eriksson
    from surveykit.sampling import SamplingDesign, survey_linear_regress

    result = run_cli("regress", "--survey", "api_domains", "--formula", "meals ~ score",
                     "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    got = {c["term"]: c for c in json.loads(result.output)["coefficients"]}
    frame = pd.read_csv(ROOT / "numeric_answers_apiclus1.csv", dtype={"answer": str})
    frame["answer"] = [a if a == "dont_know" else float(a) for a in frame["answer"]]
    library = survey_linear_regress(
        frame, "meals ~ answer", scrambled="answer",
        design=Eriksson(p=0.6, scrambler=[0, 1, 3, 5, 8], dont_know=0.1),
        sampling=SamplingDesign(weight="pw", clusters=("dnum",)))
    assert [got["(Intercept)"]["estimate"], got["score"]["estimate"]] == pytest.approx(
        library.params.to_numpy(), rel=1e-9)
    assert [got["(Intercept)"]["se"], got["score"]["se"]] == pytest.approx(
        library.bse.to_numpy(), rel=1e-9)


def test_without_by_there_are_no_domains(url):
    question = report_json(url)
    assert question["domains"] == [] and question["by"] is None


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_each_domain(url, fmt):
    result = run_cli("report", "--survey", "api_domains", "--db", url, "--format", fmt,
                     "--by", "band")
    assert result.exit_code == 0, result.output
    lin = R["linearization"]["by_mean"]
    for label, mean in zip(lin["domains"], lin["estimate"], strict=True):
        assert f"band = {label}: mean {mean:,.4g}" in result.output


SRS_SURVEY = '''name = "srs_domains"
title = "Simple random sample"

[[questions]]
id = "days"
text = "On how many days did you use the drug?"
type = "number"
range = [0, 30]
[questions.design]
model = "eriksson"
p = 0.7
scrambler = [0, 5, 10, 20]

[covariates]
faculty = "category"
'''


def test_report_by_without_sampling_gives_domain_means_and_their_se(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    z = np.array([3.0, 8.0, 1.5, 20.0, 12.0, 7.0, 9.0, 30.0, 2.0])
    faculty = ["arts", "law", "arts", "law", "arts", "arts", "law", "law", "arts"]
    (tmp_path / "survey.toml").write_text(SRS_SURVEY, encoding="utf-8")
    pd.DataFrame({"respondent_id": [f"r{i}" for i in range(z.size)], "faculty": faculty,
                  "days": z}).to_csv(tmp_path / "answers.csv", index=False)
    assert run_cli("survey", "add", str(tmp_path / "survey.toml"), "--db", url).exit_code == 0
    assert run_cli("import", str(tmp_path / "answers.csv"), "--survey", "srs_domains",
                   "--db", url).exit_code == 0
    result = run_cli("report", "--survey", "srs_domains", "--db", url, "--format", "json",
                     "--by", "faculty")
    assert result.exit_code == 0, result.output
    (question,) = json.loads(result.output)["questions"]
    r = (z - 0.3 * 8.75) / 0.7     # Eriksson's unbiased transform (z - (1 - p) mean(deck)) / p
    n = z.size
    labels = np.array(faculty)
    assert [d["domain"] for d in question["domains"]] == ["arts", "law"]
    for domain in question["domains"]:
        inside = labels == domain["domain"]
        mean = r[inside].mean()
        u = np.where(inside, (r - mean) / inside.sum(), 0.0)
        assert domain["estimate"] == pytest.approx(mean, rel=1e-12)
        assert domain["se"] == pytest.approx(np.sqrt(n / (n - 1) * np.sum(u ** 2)), rel=1e-12)
        assert domain["total"] is None and domain["n"] == inside.sum()
    text = run_cli("report", "--survey", "srs_domains", "--db", url, "--by", "faculty")
    assert text.exit_code == 0, text.output
    assert f"faculty = arts: mean {r[labels == 'arts'].mean():,.4g}" in text.output


def test_report_by_an_unknown_column_is_one_line(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    (tmp_path / "survey.toml").write_text(SRS_SURVEY, encoding="utf-8")
    assert run_cli("survey", "add", str(tmp_path / "survey.toml"), "--db", url).exit_code == 0
    result = run_cli("report", "--survey", "srs_domains", "--db", url, "--by", "region")
    assert result.exit_code != 0
    assert "--by ('region') must be a covariate of survey 'srs_domains' (it has: faculty)" \
        in result.output
    assert "Traceback" not in result.output


def test_report_by_an_unknown_column_of_a_sampled_survey_is_one_line(url):
    """Under [sampling] --by may also name a design column; the message says so."""
    result = run_cli("report", "--survey", "api_domains", "--db", url, "--by", "region")
    assert result.exit_code != 0
    assert "--by ('region') must be a design column or covariate of survey 'api_domains' " \
        "(it has: " in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
