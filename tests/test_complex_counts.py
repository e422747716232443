"""Counts stay the interface under a complex sample (issue 21 item 5): the store sums the
answers' weights per (question, stratum, PSU at each stage, fpc, domain, group, response) in
one SQL GROUP BY, and the report estimates from those cells.

On a real SQLite file and on PostgreSQL, for survey's three api designs (apistrat: strata and
fpc; apiclus1: one stage of clusters; apiclus2: two stages whose weights come from the fpc),
the report made from the store's cells equals, to 1e-9, the library's estimate from every
respondent's row (:func:`surveykit.sampling.weighted_counts`), and R's svymean/svytotal/svyby
(tests/reference/survey_api/, made by tools/r_reference/) to 1e-6. A store whose values were
changed outside surveykit (a weight deleted; ``check --repair`` rebuilds the kept cells from
it) is read row by row, and the error names the respondent as before.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from migrated import migrated_sqlite
from sampling_support import DESIGNS, reference, sample
from sqlalchemy import text
from store_support import run_cli

from surveykit.definition.survey import parse_survey
from surveykit.sampling import SamplingDesign, survey_estimate, weighted_counts
from surveykit.sampling.counts import WeightedCounts
from surveykit.sampling.rows import cell_counts
from surveykit.store import engine_for
from surveykit.store.design_values import weighted_cells

TOLERANCE = 1e-6
RR = reference("rr_designs")["results"]
COMPLEX = reference("complex_designs")

#: id -> (design in the survey file, column of the sample)
QUESTIONS = {
    "awards": ('{ model = "direct" }', "awards_yes"),
    "warner": ('{ model = "warner", p = 0.7 }', "answer_warner"),
    "mangat": ('{ model = "mangat", p = 0.8 }', "answer_mangat"),
    "gw": ('{ model = "generalized_warner", p = 0.6, q = 0.2 }', "answer_gw"),
}
#: design name -> its [sampling] section, and the columns the answers file carries
SAMPLING = {
    "dstrat": ('weight = "pw"\nstrata = "stype"\nfpc = "fpc"\n', ("pw", "stype", "fpc")),
    "dclus1": ('weight = "pw"\nclusters = ["dnum"]\nfpc = "fpc"\n', ("pw", "dnum", "fpc", "stype")),
    "dclus2": ('clusters = ["dnum", "snum"]\nfpc = ["fpc1", "fpc2"]\n',
               ("dnum", "snum", "fpc1", "fpc2", "stype")),
}


def survey_text(design: str) -> str:
    questions = "".join(f'\n[[questions]]\nid = "{q}"\ntext = "Award ({q})?"\ndesign = {d}\n'
                        for q, (d, _) in QUESTIONS.items())
    covariates = '\n[covariates]\nstype = "category"\n' if design != "dstrat" else ""
    return (f'name = "api"\ntitle = "Awards"\n{questions}{covariates}\n[sampling]\n'
            + SAMPLING[design][0])


def answers(design: str) -> pd.DataFrame:
    """The api sample of ``design`` as a wide answers file, one row per school."""
    data = sample(DESIGNS[design][0])
    out = pd.DataFrame({"respondent_id": "s" + data["snum"].astype(str)})
    for question, (_, column) in QUESTIONS.items():
        out[question] = data[column].map({"1": "yes", "0": "no"}).fillna(data[column])
    for column in SAMPLING[design][1]:
        out[column] = data[column]
    return out


def load(url: str, tmp_path: Path, design: str) -> None:
    """Write the survey and answers files of ``design`` to tmp_path, add the survey to the
    database at ``url`` (migrated to head) and import the answers."""
    survey_file, answers_file = tmp_path / "api.toml", tmp_path / f"{design}.csv"
    survey_file.write_text(survey_text(design), encoding="utf-8")
    answers(design).to_csv(answers_file, index=False)
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    result = run_cli("import", str(answers_file), "--survey", "api", "--db", url)
    assert result.exit_code == 0, result.output


@functools.cache
def _loaded_sqlite(design: str) -> Path:
    """An SQLite database with ``design`` loaded by the CLI (load), made once per process."""
    folder = Path(tempfile.mkdtemp(prefix="surveykit-complex-counts-"))
    atexit.register(shutil.rmtree, folder, True)
    load(migrated_sqlite(folder / "api.db"), folder, design)
    return folder / "api.db"


def loaded_sqlite(tmp_path: Path, design: str) -> str:
    """The URL of a copy, in tmp_path, of the database _loaded_sqlite made (and the survey
    and answers files that load writes)."""
    shutil.copyfile(_loaded_sqlite(design), tmp_path / "api.db")
    (tmp_path / "api.toml").write_text(survey_text(design), encoding="utf-8")
    answers(design).to_csv(tmp_path / f"{design}.csv", index=False)
    return f"sqlite:///{tmp_path / 'api.db'}"


@functools.cache
def stored_counts(design: str) -> str:
    """``counts --format csv`` of the database _loaded_sqlite made (run once per process)."""
    made = run_cli("counts", "--survey", "api", "--format", "csv", "--db",
                   f"sqlite:///{_loaded_sqlite(design)}")
    assert made.exit_code == 0, made.output
    return made.output


def report(url: str, *options: str) -> dict:
    result = run_cli("report", "--survey", "api", "--db", url, "--format", "json", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@functools.cache
def from_rows(design: str, question: str):
    """The estimate from every respondent's row, without the store."""
    data = sample(DESIGNS[design][0])
    _, column = QUESTIONS[question]
    data[column] = data[column].map({"1": "yes", "0": "no"}).fillna(data[column])
    definition = parse_survey(survey_text(design), "t.toml").question(question).design
    counts = weighted_counts(data, DESIGNS[design][1], design=definition, answer=column,
                             domain="stype")
    return survey_estimate(definition, counts)


def close(value, expected, tolerance=TOLERANCE):
    return value == pytest.approx(expected, rel=tolerance, abs=tolerance * 1e-3)


@pytest.mark.parametrize("design", ["dstrat", "dclus1", "dclus2"])
def test_report_from_the_stores_cells_equals_the_rows_and_r(engine, tmp_path, design):
    url = engine.url.render_as_string(hide_password=False)
    load(url, tmp_path, design)
    survey, table = weighted_cells(engine, "api", "stype")
    # one row per cell, not per respondent (apiclus2's last stage is the school: one each)
    respondents = len(sample(DESIGNS[design][0]))
    assert len(table) < respondents * len(QUESTIONS) or design == "dclus2"
    assert table.groupby("question")["n"].sum().tolist() == [respondents] * len(QUESTIONS)
    data = report(url, "--by", "stype")
    questions = {q["id"]: q for q in data["questions"]}
    for question in QUESTIONS:
        got, expected = questions[question], from_rows(design, question).to_dict(0.95, "logit")
        for key in ("estimate", "se", "ci_low", "ci_high", "deff", "n_effective", "total",
                    "total_se", "df"):
            assert got[key] == pytest.approx(expected[key], rel=1e-9), (question, key)
        by_domain = {e["domain"]: e for e in expected["domains"]}
        for d in got["domains"]:
            for key in ("estimate", "se", "total", "total_se"):
                assert d[key] == pytest.approx(by_domain[d["domain"]][key], rel=1e-9)
    for question, r_name in (("awards", "direct"), ("warner", "warner"), ("mangat", "mangat")):
        r, got = RR[design][r_name], questions[question]
        assert close(got["estimate"], r["mean"]) and close(got["se"], r["mean_se"])
        assert close(got["total"], r["total"]) and close(got["total_se"], r["total_se"])
        assert close(got["deff"], r["deff"]) and got["df"] == r["degf"]
    gw, r = questions["gw"], COMPLEX["dont_know"][design]
    assert close(gw["estimate"], r["estimate"]) and close(gw["se"], r["se"])
    assert close(gw["total"], r["total"]) and close(gw["total_se"], r["total_se"])
    summary = reference(design)["summary"]
    assert close(data["sampling"]["sum_weights"], summary["sum_weights"])
    assert data["sampling"]["respondents"] == respondents


def test_a_weight_deleted_outside_surveykit_is_named_as_before(tmp_path):
    sqlite_url = loaded_sqlite(tmp_path, "dclus1")
    with engine_for(sqlite_url) as engine:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM covariates WHERE name = 'pw' AND respondent_id = "
                              "(SELECT MIN(respondent_id) FROM covariates)"))
        assert weighted_cells(engine, "api") is None   # not a clean design: rows say why
    # the kept cells do not see a change made outside surveykit; check --repair rebuilds them
    assert run_cli("check", "--survey", "api", "--db", sqlite_url, "--repair").exit_code == 0
    result = run_cli("report", "--survey", "api", "--db", sqlite_url)
    assert result.exit_code == 2
    assert result.output == ("Error: column 'pw', row 1: is empty; every respondent needs a "
                             "weight above 0\n")


def test_sld_from_a_warehouse_group_by_equals_r():
    """Two groups (the SLD), cells summed by pandas as a warehouse's GROUP BY would."""
    data = sample("apiclus1")
    data["group"] = data["group_sld"]
    table = data.groupby(["dnum", "fpc", "group", "answer_sld"], as_index=False).agg(
        weight=("pw", "sum"), n=("pw", "size")).rename(
        columns={"dnum": "psu", "answer_sld": "response"})
    from surveykit.designs import make_design

    design = make_design("sld", p=[0.2, 0.8])
    counts = cell_counts(table, DESIGNS["dclus1"][1], design=design, grouped=True)
    assert isinstance(counts, WeightedCounts) and counts.n == len(data)
    e = survey_estimate(design, counts)
    r = COMPLEX["sld"]["dclus1"]
    assert close(e.estimate, r["estimate"]["pi"]) and close(e.se, r["se"]["pi"])


MODELS = ('\n[covariates]\napi00 = "number"\nell = "number"\n\n[[models]]\n'
          'formula = "awards ~ api00 + ell"\n\n[[models]]\nformula = "warner ~ api00"\n\n'
          '[[models]]\nformula = "api00 ~ mangat"\n')


def test_declared_models_in_a_sampled_report_are_the_design_based_fits(tmp_path, sqlite_url):
    """[[models]] on a survey with [sampling]: every report format shows the fit that
    'surveykit regress' gives on that survey (svyglm's, sandwich SEs and Wald t tests)."""
    survey_file, answers_file = tmp_path / "api.toml", tmp_path / "dstrat.csv"
    survey_file.write_text(survey_text("dstrat").replace("\n[sampling]", MODELS + "\n[sampling]"),
                           encoding="utf-8")
    data = answers("dstrat")
    data[["api00", "ell"]] = sample("apistrat")[["api00", "ell"]]
    data.to_csv(answers_file, index=False)
    migrated_sqlite(tmp_path / "surveykit.db")
    for command in (("survey", "add", str(survey_file)),
                    ("import", str(answers_file), "--survey", "api")):
        result = run_cli(*command, "--db", sqlite_url)
        assert result.exit_code == 0, result.output
    models = report(sqlite_url)["models"]
    assert [m["formula"] for m in models] == ["awards ~ api00 + ell", "warner ~ api00",
                                              "api00 ~ mangat"]
    for model in models:
        regressed = run_cli("regress", "--survey", "api", "--formula", model["formula"],
                            "--format", "json", "--db", sqlite_url)
        assert regressed.exit_code == 0, regressed.output
        assert model["fit"] == json.loads(regressed.output) and model["error"] is None
        assert model["fit"]["variance_method"] == "linearization"
    # and svyglm(awards_yes ~ api00 + ell, design = dstrat, family = quasibinomial)
    r = COMPLEX["svyglm"]["dstrat"]
    for row in models[0]["fit"]["coefficients"]:
        assert close(row["estimate"], r["coefficients"][row["term"]])
        assert close(row["se"], r["se"][row["term"]])
    fit = models[1]["fit"]["coefficients"][1]
    assert fit["term"] == "api00"
    shown = (f"{fit['estimate']:.4f}", f"{fit['se']:.4f}")
    text_report = run_cli("report", "--survey", "api", "--db", sqlite_url).output
    part = text_report[text_report.index("Model: warner ~ api00"):]
    row = next(line for line in part.splitlines() if " api00 " in line)
    assert [float(v) for v in row.split()[2:4]] == pytest.approx(
        [fit["estimate"], fit["se"]], rel=1e-5)
    markdown = run_cli("report", "--survey", "api", "--db", sqlite_url, "--format",
                       "markdown").output
    assert f"| coefficients | api00 | {shown[0]} | {shown[1]} |" in markdown
    html = run_cli("report", "--survey", "api", "--db", sqlite_url, "--format", "html").output
    assert f"<td>api00</td><td>{shown[0]}</td><td>{shown[1]}</td>" in html
    assert "Model: api00 ~ mangat" in html and "nuisance" in html


def assert_same_table(got: str, expected: str) -> None:
    """Two weighted counts tables (CSV text) with the same header and cells; sums of weights
    equal to 1e-12 (engines add the same doubles in another order)."""
    got_lines, expected_lines = got.splitlines(), expected.splitlines()
    assert got_lines[0] == expected_lines[0]
    header = got_lines[0].split(",")
    sums = [i for i, column in enumerate(header) if column in ("weight", "weight2")]

    def cells(lines):
        out = {}
        for line in lines[1:]:
            fields = line.split(",")
            out[tuple(f for i, f in enumerate(fields) if i not in sums)] = [
                float(fields[i]) for i in sums]
        assert len(out) == len(lines) - 1
        return out

    mine, theirs = cells(got_lines), cells(expected_lines)
    assert mine.keys() == theirs.keys()
    for key, values in theirs.items():
        assert mine[key] == pytest.approx(values, rel=1e-12), key


@pytest.mark.parametrize("design", ["dstrat", "dclus1"])
def test_a_weighted_counts_file_reports_as_the_store_does(engine, tmp_path, design):
    """counts --format csv on a sampled survey writes the cells; report --counts-file reads
    them back to the store's report; counts --data makes the same table from the answers file
    without importing it, and report --data the same report."""
    url = engine.url.render_as_string(hide_password=False)
    load(url, tmp_path, design)
    made = run_cli("counts", "--survey", "api", "--format", "csv", "--db", url)
    assert made.exit_code == 0, made.output
    header = made.output.splitlines()[0].split(",")
    keys = {"dstrat": ["stratum", "fpc"], "dclus1": ["psu", "fpc"]}[design]
    assert header == ["survey", "question", *keys, "group", "response", "weight", "n",
                      *(["weight2"] if design == "dstrat" else [])]
    counts_file = tmp_path / "weighted.csv"
    counts_file.write_text(made.output, encoding="utf-8")
    from_file = report(url, "--counts-file", str(counts_file))
    from_store = report(url)
    assert from_file["sampling"]["psus"] == from_store["sampling"]["psus"]
    assert from_file["sampling"]["df"] == from_store["sampling"]["df"]
    assert from_file["sampling"]["sum_weights"] == pytest.approx(
        from_store["sampling"]["sum_weights"], rel=1e-12)
    for got, expected in zip(from_file["questions"], from_store["questions"], strict=True):
        assert got["counts"] == expected["counts"] and got["missing"] == expected["missing"]
        for key in ("estimate", "se", "deff", "total", "total_se", "df", "pi_hat"):
            assert got[key] == pytest.approx(expected[key], rel=1e-9), (got["id"], key)
    r = RR[design]["warner"]
    warner = next(q for q in from_file["questions"] if q["id"] == "warner")
    assert close(warner["estimate"], r["mean"]) and close(warner["se"], r["mean_se"])
    # the answers file, counted where it lies (a fresh database: the survey only)
    fresh = migrated_sqlite(tmp_path / "fresh.db")
    assert run_cli("survey", "add", str(tmp_path / "api.toml"), "--db", fresh).exit_code == 0
    counted = run_cli("counts", "--survey", "api", "--data", str(tmp_path / f"{design}.csv"),
                      "--format", "csv", "--db", fresh)
    assert counted.exit_code == 0, counted.output
    assert_same_table(counted.output, made.output)
    nothing_imported = run_cli("counts", "--survey", "api", "--db", fresh).output
    assert all(set(line.split()[1:]) == {"0"} for line in nothing_imported.splitlines()[1:])
    from_files = json.loads(run_cli("report", "--survey", "api", "--data",
                                    str(tmp_path / f"{design}.csv"), "--format", "json",
                                    "--db", fresh).output)
    for got, expected in zip(from_files["questions"], from_store["questions"], strict=True):
        assert got["counts"] == expected["counts"]
        for key in ("estimate", "se", "deff", "total", "total_se", "df"):
            assert got[key] == pytest.approx(expected[key], rel=1e-9), (got["id"], key)


#: name -> (row to change: line number in the file, column, new value), words of the error
BAD_CELLS = {
    "weight not a number": ((3, "weight", "abc"), ["line 3, column 'weight': 'abc'",
                                                   "is not a number"]),
    "negative weight": ((4, "weight", "-2"), ["line 4, column 'weight': '-2'", "above 0"]),
    "n not whole": ((2, "n", "1.5"), ["line 2, column 'n': '1.5'", "whole number"]),
    "no PSU": ((5, "psu", ""), ["line 5, column 'psu': ''", "is empty"]),
    "unknown question": ((2, "question", "warnr"), ["line 2, column 'question': 'warnr'"]),
    "bad response": ((3, "response", "maybe"), ["line 3, column 'response': 'maybe'",
                                                "not a response"]),
    "fpc not a number": ((6, "fpc", "many"), ["line 6, column 'fpc': 'many'"]),
    "other survey": ((5, "survey", "other"), ["line 5, column 'survey': 'other'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CELLS))
def test_a_bad_weighted_counts_file_is_a_one_line_error(tmp_path, case):
    sqlite_url = loaded_sqlite(tmp_path, "dclus1")
    made = stored_counts("dclus1")  # counts --format csv of the database at sqlite_url
    (line, column, value), words = BAD_CELLS[case]
    rows = [row.split(",") for row in made.splitlines()]
    rows[line - 1][rows[0].index(column)] = value
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(",".join(row) for row in rows) + "\n", encoding="utf-8")
    result = run_cli("report", "--counts-file", str(bad), "--db", sqlite_url)
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith(f"Error: {bad}, ")
    for word in words:
        assert word in result.output


def test_a_weighted_counts_file_with_a_psu_in_two_strata_is_refused(tmp_path):
    sqlite_url = loaded_sqlite(tmp_path, "dstrat")
    made = run_cli("counts", "--survey", "api", "--format", "csv", "--db", sqlite_url).output
    lines = made.splitlines()
    lines[0] = lines[0].replace("stratum,fpc,", "stratum,_fpc,")  # no fpc: one less check
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli("report", "--counts-file", str(bad), "--db", sqlite_url)
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1
    assert "missing: fpc" in result.output and f"{bad}, line 1" in result.output


def test_counting_a_file_with_a_bad_weight_names_its_line(tmp_path):
    sqlite_url = loaded_sqlite(tmp_path, "dclus1")
    frame = answers("dclus1")
    frame.loc[6, "pw"] = -3.5
    bad = tmp_path / "bad_answers.csv"
    frame.to_csv(bad, index=False)
    result = run_cli("counts", "--survey", "api", "--data", str(bad), "--format", "csv",
                     "--db", sqlite_url)
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1
    assert "column 'pw', line 8" in result.output and "-3.5" in result.output


@pytest.mark.parametrize("sampling", [
    SamplingDesign(strata="stype", population=6194),   # N / n each
    SamplingDesign(strata="stype"),                    # 1 each
    SamplingDesign(clusters=("dnum",), fpc=("fpc",)),  # population / sampled PSUs
])
def test_cells_without_a_weight_column_weigh_as_rows_do(sampling):
    """Without a weight column the cells count respondents and cell_counts gives them the
    weights weighted_counts gives each respondent."""
    data = sample("apiclus1" if sampling.clusters else "apistrat")
    data["answer"] = data["answer_warner"].map({"1": "yes", "0": "no"})
    keys = {"stype": "stratum", "dnum": "psu", "fpc": "fpc"}
    used = [c for c in ("stype", "dnum", "fpc") if c in sampling.columns]
    table = data.assign(one=1.0).groupby([*used, "answer"], as_index=False).agg(
        n=("one", "size"), weight2=("one", "sum")).rename(columns={**keys, "answer": "response"})
    table["weight"] = table["n"].astype(float)
    design = parse_survey(survey_text("dstrat"), "t.toml").question("warner").design
    by_cells = survey_estimate(design, cell_counts(table, sampling, design=design))
    by_rows = survey_estimate(design, weighted_counts(data, sampling, design=design,
                                                      answer="answer"))
    assert by_cells.estimate == pytest.approx(by_rows.estimate, rel=1e-12)
    assert by_cells.se == pytest.approx(by_rows.se, rel=1e-9)
    assert by_cells.total() == pytest.approx(by_rows.total(), rel=1e-12)
    assert by_cells.total_se() == pytest.approx(by_rows.total_se(), rel=1e-9)
