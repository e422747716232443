"""From survey file to report on a complex sample (issue 21, second phase), on a real SQLite file
and on PostgreSQL.

survey's api data (tests/reference/survey_api/, R's values made by tools/r_reference/) with the
randomized answers simulated there: a survey file with ``[sampling]`` declares apistrat's
stratified design (svydesign(id = ~1, strata = ~stype, weights = ~pw, fpc = ~fpc)); the
answers and design values are imported from one wide CSV; ``surveykit report --format json``
then equals the library's :func:`surveykit.sampling.survey_estimate` on the same rows (1e-9)
and R's svymean, svytotal and svyby (1e-6). ``regress`` equals svyglm. Equal weights without
strata leave today's report as it was. Every bad design value is a one-line error naming the
file, line, column and value, and the database is as before.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from migrated import migrated_sqlite
from sampling_support import DESIGNS, reference, sample
from sqlalchemy import text
from store_support import run_cli

from surveykit.definition.survey import parse_survey
from surveykit.errors import SurveyDefinitionError
from surveykit.sampling import survey_estimate, weighted_counts

TOLERANCE = 1e-6
RR = reference("rr_designs")["results"]
COMPLEX = reference("complex_designs")

#: The survey's questions: id -> (design as the survey file writes it, the sample's column).
QUESTIONS = {
    "awards": ('{ model = "direct" }', "awards_yes"),
    "warner": ('{ model = "warner", p = 0.7 }', "answer_warner"),
    "fr": ('{ model = "fr", p = [0.16666666666666666, 0.16666666666666666] }', "answer_fr"),
    "mangat": ('{ model = "mangat", p = 0.8 }', "answer_mangat"),
    "gw": ('{ model = "generalized_warner", p = 0.6, q = 0.2 }', "answer_gw"),
}
SAMPLING = '[sampling]\nweight = "pw"\nstrata = "stype"\nfpc = "fpc"\n'


def survey_text(sampling: str = SAMPLING, name: str = "api_strat") -> str:
    questions = "".join(f'\n[[questions]]\nid = "{q}"\ntext = "Did the school get an award '
                        f'({q})?"\ndesign = {design}\n'
                        for q, (design, _) in QUESTIONS.items())
    return (f'name = "{name}"\ntitle = "Awards in California schools"\n{questions}\n'
            '[covariates]\napi00 = "number"\nell = "number"\n\n' + sampling)


def answers_frame() -> pd.DataFrame:
    """apistrat as a wide response file: one row per school, yes/no answers."""
    data = sample("apistrat")
    out = pd.DataFrame({"respondent_id": "s" + data["snum"].astype(str)})
    for question, (_, column) in QUESTIONS.items():
        out[question] = data[column].map({"1": "yes", "0": "no"}).fillna(data[column])
    for column in ("pw", "stype", "fpc", "api00", "ell"):
        out[column] = data[column]
    return out


def write(tmp_path: Path, frame: pd.DataFrame, survey: str = "") -> tuple[Path, Path]:
    survey_file = tmp_path / "api_strat.toml"
    survey_file.write_text(survey or survey_text(), encoding="utf-8")
    answers = tmp_path / "apistrat.csv"
    frame.to_csv(answers, index=False)
    return survey_file, answers


def load(url: str, survey_file: Path, answers: Path) -> None:
    """Add the survey to the database at ``url`` (migrated to head) and import the answers."""
    assert run_cli("survey", "add", str(survey_file), "--db", url).exit_code == 0
    result = run_cli("import", str(answers), "--survey", "api_strat", "--db", url)
    assert result.exit_code == 0, result.output


def report(url: str, *options: str) -> dict:
    result = run_cli("report", "--survey", "api_strat", "--db", url, "--format", "json",
                     *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def close(value, expected, tolerance=TOLERANCE):
    return value == pytest.approx(expected, rel=tolerance, abs=tolerance * 1e-3)


@functools.cache
def _loaded_sqlite() -> Path:
    """An SQLite database with apistrat loaded by the CLI (load), made once per process."""
    folder = Path(tempfile.mkdtemp(prefix="surveykit-complex-flow-"))
    atexit.register(shutil.rmtree, folder, True)
    url = migrated_sqlite(folder / "loaded.db")
    load(url, *write(folder, answers_frame()))
    return folder / "loaded.db"


def loaded_sqlite(tmp_path: Path) -> str:
    """The URL of a copy, in tmp_path, of the database _loaded_sqlite made."""
    shutil.copyfile(_loaded_sqlite(), tmp_path / "loaded.db")
    return f"sqlite:///{tmp_path / 'loaded.db'}"


@functools.cache
def library(question: str, variance: str = "linearization"):
    """survey_estimate on the sample's own rows (no store): what the report must show."""
    _, column = QUESTIONS[question]
    design = parse_survey(survey_text(), "t.toml").question(question).design
    data = sample("apistrat")
    data[column] = data[column].map({"1": "yes", "0": "no"}).fillna(data[column])
    counts = weighted_counts(data, DESIGNS["dstrat"][1], design=design, answer=column,
                             domain="stype", keep_respondents=variance != "linearization")
    return survey_estimate(design, counts, variance=variance)


def test_report_json_equals_survey_estimate_and_r(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    load(url, *write(tmp_path, answers_frame()))
    data = report(url, "--by", "stype")
    design = data["sampling"]
    assert design["strata"] == 3 and design["psus"] == 200 and design["df"] == 197
    assert design["variance_method"] == "linearization" and design["respondents"] == 200
    assert close(design["sum_weights"], reference("dstrat")["summary"]["sum_weights"])
    assert "does not change privacy" in design["privacy"]
    questions = {q["id"]: q for q in data["questions"]}
    for question in QUESTIONS:
        got, expected = questions[question], library(question).to_dict(0.95, "logit")
        for key in ("estimate", "pi_mle", "se", "ci_low", "ci_high", "deff", "n_effective",
                    "total", "total_se", "df", "variance_method"):
            assert got[key] == pytest.approx(expected[key], rel=1e-9), (question, key)
        assert [d["domain"] for d in got["domains"]] == ["E", "H", "M"]  # sorted, as svyby
        by_domain = {e["domain"]: e for e in expected["domains"]}
        for d in got["domains"]:
            e = by_domain[d["domain"]]
            for key in ("estimate", "se", "ci_low", "ci_high", "total", "total_se"):
                assert d[key] == pytest.approx(e[key], rel=1e-9), (question, d["domain"], key)
    # and R's survey: svymean/svytotal of the unbiased transform, svyby(~stype)
    for question, r_name in (("awards", "direct"), ("warner", "warner"), ("fr", "fr"),
                             ("mangat", "mangat")):
        r, got = RR["dstrat"][r_name], questions[question]
        assert r["interior"]
        assert close(got["estimate"], r["mean"]) and close(got["se"], r["mean_se"])
        assert close(got["total"], r["total"]) and close(got["total_se"], r["total_se"])
        assert close(got["deff"], r["deff"]) and got["df"] == r["degf"]
        for d in got["domains"]:
            if 0 < d["estimate"] < 1:
                assert close(d["estimate"], r["by_stype"]["estimate"][d["domain"]])
                assert close(d["se"], r["by_stype"]["se"][d["domain"]])
    gw, r = questions["gw"], COMPLEX["dont_know"]["dstrat"]
    assert close(gw["estimate"], r["estimate"]) and close(gw["se"], r["se"])
    assert close(gw["total"], r["total"]) and close(gw["total_se"], r["total_se"])


def test_jackknife_report_equals_r_jkn(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    load(url, *write(tmp_path, answers_frame()))
    questions = {q["id"]: q for q in report(url, "--variance", "jackknife")["questions"]}
    r = RR["dstrat_jkn"]["warner"]
    got = questions["warner"]
    assert got["variance_method"] == library("warner", "jackknife").variance_method
    assert close(got["estimate"], r["mean"]) and close(got["se"], r["mean_se"])
    assert close(got["se"], library("warner", "jackknife").se, 1e-9)


def test_text_and_html_reports_show_the_design(tmp_path):
    sqlite_url = loaded_sqlite(tmp_path)
    text_report = run_cli("report", "--survey", "api_strat", "--db", sqlite_url).output
    assert "Design: weights pw, strata stype, fpc fpc, lonely PSUs fail." in text_report
    assert "strata 3, PSUs 200, sum of weights 6,194.00; variance linearization, 197 " \
           "degrees of freedom" in text_report
    assert "Sampling does not change privacy" in text_report
    part = text_report[text_report.index("Complex sample"):]
    row = next(line for line in part.splitlines() if line.startswith("warner "))
    e = library("warner")
    assert row.split()[1:3] == [f"{e.estimate:.4f}", f"{e.se:.4f}"]
    assert row.split()[5] == f"{e.deff():.3f}"
    html = run_cli("report", "--survey", "api_strat", "--db", sqlite_url, "--format",
                   "html").output
    assert '<section id="complex-sample">' in html and f"<td>{e.se:.4f}</td>" in html


def test_equal_weights_without_strata_leave_todays_report_as_it_was(tmp_path):
    """The same answers in a survey without [sampling] and in one whose every weight is 3:
    today's report is printed unchanged above the design-based part, and the estimate is
    today's maximum-likelihood estimate bit for bit."""
    frame = answers_frame().drop(columns=["pw", "stype", "fpc"]).assign(w=3)
    plain_url, weighted_url = (migrated_sqlite(tmp_path / name) for name in ("a.db", "b.db"))
    plain = tmp_path / "plain"
    weighted = tmp_path / "weighted"
    plain.mkdir()
    weighted.mkdir()
    load(plain_url, *write(plain, frame.drop(columns="w"), survey_text(sampling="")))
    load(weighted_url, *write(weighted, frame, survey_text(
        sampling='[sampling]\nweight = "w"\n').replace('ell = "number"',
                                                        'ell = "number"\nw = "number"')))
    before = run_cli("report", "--survey", "api_strat", "--db", plain_url).output
    after = run_cli("report", "--survey", "api_strat", "--db", weighted_url).output
    assert after.startswith(before) and "Complex sample" in after[len(before):]
    today = {q["id"]: q for q in report(plain_url)["questions"]}
    for question in report(weighted_url)["questions"]:
        srs = today[question["id"]]
        assert question["estimate"] == srs["pi_mle"]          # bit for bit
        assert question["srs"] == {k: srs[k] for k in question["srs"]}
        assert question["counts"] == srs["counts"]
        assert question["epsilon_shafer"] == srs["epsilon_shafer"]
        n = question["n"]
        # every respondent a PSU sampled with replacement: the linearized variance is
        # n/(n-1) times the inverse information (tests/test_sampling_srs.py); today's
        # yes/no SE is the exact conditional variance, equal to O(1/n^2)
        assert question["se"] == pytest.approx(srs["se"] * (n / (n - 1)) ** 0.5, rel=2e-2)
        # svymean's deff compares with sampling n of N_hat = 3n without replacement
        assert question["deff"] == pytest.approx(1 / (1 - 1 / 3), rel=0.03)


def test_regress_equals_svyglm(tmp_path):
    sqlite_url = loaded_sqlite(tmp_path)
    result = run_cli("regress", "--survey", "api_strat", "--formula", "awards ~ api00 + ell",
                     "--format", "json", "--db", sqlite_url)
    assert result.exit_code == 0, result.output
    fit = json.loads(result.output)
    r = COMPLEX["svyglm"]["dstrat"]  # glm converged tightly (test_sampling_regression.py)
    assert r["call"].startswith("svyglm(awards_yes ~ api00 + ell, design = dstrat")
    for row in fit["coefficients"]:
        assert close(row["estimate"], r["coefficients"][row["term"]])
        assert close(row["se"], r["se"][row["term"]])
    assert fit["variance_method"] == "linearization" and "lr_tests" not in fit
    text_fit = run_cli("regress", "--survey", "api_strat", "--formula", "warner ~ api00",
                       "--db", sqlite_url).output
    assert "sandwich" in text_fit and "no likelihood-ratio test" in text_fit
    refused = run_cli("regress", "--survey", "api_strat", "--formula", "warner ~ api00",
                      "--lr", "all", "--db", sqlite_url)
    assert refused.exit_code != 0 and "pseudo-likelihood" in refused.output


def _clustered(frame: pd.DataFrame) -> pd.DataFrame:
    """apistrat with districts as PSUs inside made-up regions (one region per district)."""
    out = frame.copy()
    out["dnum"] = sample("apistrat")["dnum"].to_numpy()
    out["region"] = (out["dnum"] % 2).map({0: "even", 1: "odd"})
    return out


CLUSTERED = '[sampling]\nweight = "pw"\nstrata = "region"\nclusters = "dnum"\n'
#: name -> (survey's [sampling], change to the file's rows, words the error says)
BAD = {
    "empty weight": (SAMPLING, lambda f: f.assign(pw=f["pw"].mask(f.index == 6)),
                     ["column 'pw'", "line 8", "is empty"]),
    "negative weight": (SAMPLING, lambda f: f.assign(pw=f["pw"].mask(f.index == 6, -3.5)),
                        ["column 'pw'", "line 8", "holds -3.5", "not positive"]),
    "zero weight": (SAMPLING, lambda f: f.assign(pw=f["pw"].mask(f.index == 11, 0)),
                    ["column 'pw'", "line 13", "holds 0"]),
    "lonely PSU": (SAMPLING, lambda f: f.assign(stype=f["stype"].mask(f.index == 6, "K")),
                   ["stratum stype = 'K' has only one PSU", "line 8", "lonely_psu"]),
    # row 6 (line 8) is the second school of district 689 (row 5, line 7, is the first)
    "PSU changes stratum": (CLUSTERED, lambda f: f.assign(
        region=f["region"].mask(f.index == 6, "elsewhere")),
        ["column 'dnum'", "line 8", "cluster '689' is in a second stratum",
         "column 'region'", "line 7 (respondent"]),
}


def _tables(engine) -> dict:
    with engine.connect() as conn:
        return {table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
                for table in ("responses", "covariates", "imports", "answer_counts")}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_design_values_are_one_line_errors_and_store_nothing(engine, tmp_path, case):
    sampling, change, words = BAD[case]
    url = engine.url.render_as_string(hide_password=False)
    frame = answers_frame()
    if sampling is CLUSTERED:
        frame = _clustered(frame).drop(columns=["stype", "fpc"])
    survey_file = tmp_path / "api_strat.toml"
    survey_file.write_text(survey_text(sampling), encoding="utf-8")
    assert run_cli("survey", "add", str(survey_file), "--db", url).exit_code == 0
    # an earlier import (the last 100 schools) stays as it was
    first = tmp_path / "first.csv"
    frame.iloc[100:].to_csv(first, index=False)
    imported = run_cli("import", str(first), "--survey", "api_strat", "--db", url)
    assert imported.exit_code == 0, imported.output
    before = _tables(engine)
    bad = tmp_path / "bad.csv"
    change(frame).iloc[:100].to_csv(bad, index=False)
    result = run_cli("import", str(bad), "--survey", "api_strat", "--db", url)
    assert result.exit_code != 0
    message = result.output.strip()
    assert message.startswith(f"Error: {bad}: ") and "\n" not in message, message
    assert "nothing was imported" in message and "Traceback" not in message
    for word in words:
        assert word in message, (word, message)
    assert _tables(engine) == before
    # the same file, fixed, goes in
    fixed = tmp_path / "fixed.csv"
    frame.iloc[:100].to_csv(fixed, index=False)
    assert run_cli("import", str(fixed), "--survey", "api_strat", "--db", url).exit_code == 0


def test_a_respondent_of_an_earlier_import_without_a_weight_is_named(tmp_path, sqlite_url):
    """Design values may come from several files; every respondent with an answer needs
    them, and one without (from an earlier import) is named by id."""
    frame = answers_frame()
    survey_file, first = write(tmp_path, frame.iloc[:150])
    load(migrated_sqlite(tmp_path / "surveykit.db"), survey_file, first)
    later = tmp_path / "later.csv"
    rest = frame.iloc[150:].copy()
    rest.loc[rest.index[:1], "pw"] = None
    rest.to_csv(later, index=False)
    result = run_cli("import", str(later), "--survey", "api_strat", "--db", sqlite_url)
    assert "column 'pw', line 2 (respondent 's" in result.output
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(DISTINCT respondent_id) FROM responses").fetchone() \
            == (150,)


@pytest.mark.parametrize(("sampling", "words"), [
    ('[sampling]\nweight = 3\n', ["sampling", "weight (3)", "column name"]),
    ('[sampling]\nweight = "pw"\nlonely_psu = "drop"\n', ["lonely_psu ('drop')"]),
    ('[sampling]\nwieght = "pw"\n', ["no key 'wieght'"]),
    # a replicate pattern may not match another design column or a covariate
    ('[sampling]\nweight = "pw"\nreplicate_weights = "p*"\nreplicate_type = "JK1"\n',
     ["sampling.replicate_weights", "'p*' also matches column 'pw'"]),
    ('[sampling]\nweight = "pw"\nreplicate_weights = "*0*"\nreplicate_type = "JK1"\n',
     ["sampling.replicate_weights", "also matches column 'api00'"]),
    ('[sampling]\nweight = "pw"\nreplicate_weights = "repw*"\nreplicate_type = "JK1"\n', []),
    ('[sampling]\nweight = "api00"\n', []),  # a declared number covariate may be the weight
])
def test_survey_add_checks_sampling_at_the_door(tmp_path, sqlite_url, sampling, words):
    survey_file = tmp_path / "s.toml"
    survey_file.write_text(survey_text(sampling), encoding="utf-8")
    migrated_sqlite(tmp_path / "surveykit.db")
    result = run_cli("survey", "add", str(survey_file), "--db", sqlite_url)
    if not words:
        assert result.exit_code == 0, result.output
        return
    message = result.output.strip()
    assert result.exit_code != 0 and "\n" not in message
    assert message.startswith(f"Error: {survey_file}: ")
    for word in words:
        assert word in message, (word, message)


def test_a_design_column_declared_as_another_type_is_refused():
    with pytest.raises(SurveyDefinitionError, match=r"covariates\.stype: 'number'.*category"):
        parse_survey(survey_text().replace('ell = "number"', 'ell = "number"\nstype = '
                                           '"number"'), "t.toml")


def test_bootstrap_report_is_near_linearization_and_names_its_seed(tmp_path):
    """500 bootstrap replicates: the SE of a bootstrap SE is about 1/sqrt(2 * 500) = 3% of it,
    so 15% is five of those."""
    sqlite_url = loaded_sqlite(tmp_path)
    questions = {q["id"]: q for q in report(sqlite_url, "--variance", "bootstrap")["questions"]}
    for question in ("awards", "warner"):
        got = questions[question]
        assert got["variance_method"] == "bootstrap" and isinstance(got["bootstrap_seed"], int)
        assert got["estimate"] == pytest.approx(library(question).estimate, rel=1e-12)
        assert got["se"] == pytest.approx(library(question).se, rel=0.15)


def test_the_survey_file_reference_declares_every_sampling_key_and_no_other():
    from surveykit.definition.survey_schema import table_keys

    with pytest.raises(SurveyDefinitionError) as refused:
        parse_survey(survey_text('[sampling]\nzz_undeclared = 1\n'), "t.toml")
    listed = str(refused.value).split("its keys are ")[1]
    assert {name.strip() for name in listed.split(",")} == set(table_keys("sampling"))
