"""Kept weighted cells (issue 21 item 5, issue 23 item 3): a sampled survey's sums of weights per
(question, stratum, PSU at each stage, fpc, group, response), and its numeric answers' weighted
sums per such cell, kept by every write so that its report reads cells, not respondents.

On a real SQLite file and on PostgreSQL:

* after a sample frame, imports (a re-import of the same file, a cumulative export, a refused
  file, --replace of answers and of a design value, a dry run) and web submissions, the kept
  cells equal the cells made afresh from the stored rows, both by the store's GROUP BY
  (:func:`surveykit.store.kept_cells.contributions_statement` over every respondent) and, for
  the weights, by the independent one of
  :func:`surveykit.store.design_values.weighted_cells`; a refused import leaves them exactly
  as they were;
* the numeric section of the report made from the kept cells equals, to 1e-9, the one made
  from every respondent's row (:func:`surveykit.workflows.complex_samples._numeric_section`,
  the report's previous way), for five sampling designs (strata with and without fpc, strata
  and nested clusters, one and two stages of clusters with fpc, weights made from the fpc),
  with "don't know" answers and a question left blank by some;
* migration 0007 backfills the cells of an existing database, and its downgrade drops them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sampling_support import REFERENCE, sample
from sqlalchemy import inspect, select
from store_support import run_cli

from surveykit.sampling import survey_estimate, weighted_counts
from surveykit.store import Database, migrate
from surveykit.store import database as store
from surveykit.store.design_values import sampling_frame, weighted_cells
from surveykit.store.kept_cells import SUMS, contributions_statement, read_sample
from surveykit.store.submissions import record_submission
from surveykit.store.tables import weighted_cells as kept_table
from surveykit.workflows.complex_samples import _numeric_section, _numeric_section_from_cells
from tests.numeric_support import api_score_question

QUESTIONS = ('''name = "api"
title = "School scores"

[[questions]]
id = "warner"
text = "Award (Warner)?"
design = { model = "warner", p = 0.7 }

'''
             + api_score_question("The school's API score in 2000, divided by 100?")
             + '''
[[questions]]
id = "scaled"
text = "The same, scrambled by a factor?"
type = "number"
range = [0, 10]
decimals = 2
[questions.design]
model = "eichhorn_hayre"
scrambler = [0.5, 1, 1.5]

''')
#: name -> (api sample, [sampling] section, the design columns the answers file carries)
DESIGNS = {
    "strata_fpc": ("apistrat", 'weight = "pw"\nstrata = "stype"\nfpc = "fpc"\n',
                   ("pw", "stype", "fpc")),
    "strata": ("apistrat", 'weight = "pw"\nstrata = "stype"\n', ("pw", "stype")),
    "strata_clusters": ("apistrat", 'weight = "pw"\nstrata = "stype"\nclusters = ["dnum"]\n'
                        'nest = true\n', ("pw", "stype", "dnum")),
    "clusters_fpc": ("apiclus1", 'weight = "pw"\nclusters = ["dnum"]\nfpc = "fpc"\n',
                     ("pw", "dnum", "fpc")),
    # a district where one school answers is a lonely unit at stage 2 for the blank question
    "two_stages_fpc": ("apiclus2", 'clusters = ["dnum", "snum"]\nfpc = ["fpc1", "fpc2"]\n'
                       'lonely_psu = "adjust"\n',
                       ("dnum", "snum", "fpc1", "fpc2")),
}
#: the sequence's design: strata, nested clusters and an fpc
SEQUENCE = ('weight = "pw"\nstrata = "stype"\nclusters = ["dnum"]\nnest = true\n'
            'fpc = "fpc"\n')
RELATIVE = 1e-9


def url_of(engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def answers(name: str, columns) -> pd.DataFrame:
    """The api sample ``name`` as a wide answers file: the Warner answer, the Eriksson answers
    (with "don't know") of tests/reference/survey_api/numeric_answers_*.csv, the same numbers
    as the Eichhorn-Hayre question (left blank where "don't know"), and ``columns``."""
    data = sample(name)
    numeric = pd.read_csv(REFERENCE / f"numeric_answers_{name}.csv", dtype={"answer": str})
    assert np.allclose(numeric["pw"], data["pw"])  # the same schools in the same order
    out = pd.DataFrame({"respondent_id": "s" + data["snum"].astype(str)})
    out["warner"] = data["answer_warner"].map({"1": "yes", "0": "no"})
    out["score"] = numeric["answer"].to_numpy()
    out["scaled"] = out["score"].where(out["score"] != "dont_know", "")
    for column in columns:
        out[column] = data[column]
    return out


def add_survey(url: str, tmp_path: Path, sampling: str) -> None:
    path = tmp_path / "api.toml"
    path.write_text(QUESTIONS + "[sampling]\n" + sampling, encoding="utf-8")
    result = run_cli("survey", "add", str(path), "--db", url)
    assert result.exit_code == 0, result.output


def import_file(url: str, frame: pd.DataFrame, path: Path, *options: str):
    frame.to_csv(path, index=False)
    return run_cli("import", str(path), "--survey", "api", "--db", url, *options)


def kept_rows(engine) -> dict[tuple, tuple]:
    """The kept cells (n > 0) by key: (question, design key, group, response) -> sums."""
    c = kept_table.c
    with engine.connect() as conn:
        rows = conn.execute(select(c.question_id, c.design_key, c.group_number, c.response,
                                   *[c[name] for name in SUMS]).where(c.n > 0)).all()
    return {tuple(row[:4]): tuple(row[4:]) for row in rows}


def fresh_rows(engine) -> dict[tuple, tuple]:
    """The same cells made afresh from every stored respondent."""
    survey = store.load_survey(engine, "api")
    with engine.connect() as conn:
        key = store.survey_id(conn, survey.name)
        rows = conn.execute(contributions_statement(conn, key, survey)).all()
    return {tuple(row[1:5]): tuple(row[5:]) for row in rows if row.n > 0}


def assert_fresh(engine) -> None:
    """The kept cells equal the cells made afresh: every sum by the store's GROUP BY, and the
    weights, counts and respondents by design_values.weighted_cells' independent one."""
    kept, fresh = kept_rows(engine), fresh_rows(engine)
    assert kept.keys() == fresh.keys()
    for cell, sums in fresh.items():
        assert kept[cell][:2] == sums[:2], cell                      # n, invalid
        assert kept[cell][2:] == pytest.approx(sums[2:], rel=RELATIVE, abs=1e-9), cell
    survey, grouped = weighted_cells(engine, "api")
    table = read_sample(engine, survey).table
    order = [c for c in grouped.columns if c not in ("weight", "n", "weight2")]
    grouped = grouped.sort_values(order, key=lambda c: c.astype(str)).reset_index(drop=True)
    table = table[grouped.columns].sort_values(order, key=lambda c: c.astype(str)
                                                ).reset_index(drop=True)
    # numeric answers: one kept cell for their numbers, one row per value in the GROUP BY
    plain = table[table["question"] == "warner"].reset_index(drop=True)
    choice = grouped[grouped["question"] == "warner"].reset_index(drop=True)
    assert plain[order].astype(str).equals(choice[order].astype(str))
    assert plain["n"].tolist() == choice["n"].tolist()
    assert plain["weight"].to_numpy() == pytest.approx(choice["weight"].to_numpy(),
                                                       rel=RELATIVE)
    for question in ("score", "scaled"):
        mine = table[table["question"] == question]
        theirs = grouped[grouped["question"] == question]
        assert mine["n"].sum() == theirs["n"].sum()
        assert mine["weight"].sum() == pytest.approx(theirs["weight"].sum(), rel=RELATIVE)


# -- the report's numeric section: from the kept cells as from the rows --------------------


@pytest.mark.parametrize("design", list(DESIGNS))
def test_numeric_sections_from_the_kept_cells_equal_the_rows(engine, tmp_path, design):
    name, sampling, columns = DESIGNS[design]
    url = url_of(engine)
    add_survey(url, tmp_path, sampling)
    result = import_file(url, answers(name, columns), tmp_path / "answers.csv")
    assert result.exit_code == 0, result.output
    assert_fresh(engine)
    survey = store.load_survey(engine, "api")
    kept = read_sample(engine, survey)
    with Database(engine) as database:
        counted = database.survey("api").numeric_counts()
    # the unweighted sums of the numeric section, from the cells as from the answers
    for mine, theirs in zip(kept.numeric_counts(survey), counted, strict=True):
        assert mine.missing == theirs.missing
        for group, sums in theirs.counts.table.items():
            got = mine.counts.table[group]
            assert (got.n, got.dont_know) == (sums.n, sums.dont_know)
            assert got.total == pytest.approx(sums.total, rel=RELATIVE)
            assert got.sum_squares == pytest.approx(sums.sum_squares, rel=RELATIVE)
    _, frame = sampling_frame(engine, "api")
    report = json.loads(run_cli("report", "--survey", "api", "--db", url, "--format",
                                "json").output)
    reported = {q["id"]: q for q in report["questions"]}
    for question, found in zip([q for q in survey.questions if q.numeric], counted,
                               strict=True):
        from_rows = _numeric_section(question, frame, survey.sampling, found, 0.95)
        from_cells = _numeric_section_from_cells(question, kept.table, survey.sampling,
                                                 found, 0.95)
        assert from_rows.warnings == from_cells.warnings
        a, b = from_rows.estimate, from_cells.estimate
        assert (a.n, a.dont_know, a.group_sizes) == (b.n, b.dont_know, b.group_sizes)
        for key in ("mean", "variance", "total", "total_variance"):
            assert getattr(b, key) == pytest.approx(getattr(a, key), rel=RELATIVE), key
        assert a.alternatives.keys() == b.alternatives.keys()
        for key, value in a.alternatives.items():
            assert b.alternatives[key] == pytest.approx(value, rel=RELATIVE)
        # the report shows the cells' numbers
        assert reported[question.id]["mean"] == pytest.approx(a.mean, rel=RELATIVE)
        assert reported[question.id]["se"] == pytest.approx(math.sqrt(a.variance),
                                                            rel=RELATIVE)
        assert reported[question.id]["total_se"] == pytest.approx(
            math.sqrt(a.total_variance), rel=RELATIVE)
    # and the choice question's design-based estimate, from the cells as from the rows
    warner = survey.question("warner")
    expected = survey_estimate(warner.design, weighted_counts(
        frame, survey.sampling, design=warner.design, answer="warner"))
    assert reported["warner"]["estimate"] == pytest.approx(expected.estimate, rel=RELATIVE)
    assert reported["warner"]["se"] == pytest.approx(expected.se, rel=RELATIVE)


# -- every write keeps the cells -----------------------------------------------------------


def test_every_write_keeps_the_cells_equal_to_a_fresh_group_by(engine, tmp_path):
    url = url_of(engine)
    add_survey(url, tmp_path, SEQUENCE)
    schools = answers("apistrat", ("pw", "stype", "dnum", "fpc"))
    schools["school"] = schools["respondent_id"]
    # a sample frame for the first 160 schools: their design values, no answers yet
    frame_path = tmp_path / "frame.csv"
    schools[["school", "stype", "dnum", "pw", "fpc"]].iloc[:160].to_csv(frame_path,
                                                                        index=False)
    result = run_cli("generate", "--survey", "api", "--frame", str(frame_path), "--out",
                     str(tmp_path / "forms"), "--db", url)
    assert result.exit_code == 0, result.output
    assert_fresh(engine)
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv", dtype=str)
    framed = schools.iloc[:160].assign(respondent_id=ids["respondent_id"].to_numpy())
    questions = ["respondent_id", "warner", "score", "scaled"]

    wave1 = framed[questions].iloc[:60]
    result = import_file(url, wave1, tmp_path / "wave1.csv")
    assert result.exit_code == 0, result.output
    assert_fresh(engine)
    before = kept_rows(engine)
    again = import_file(url, wave1, tmp_path / "wave1.csv")   # the same file: nothing new
    assert again.exit_code == 0 and "already imported" in again.output
    assert kept_rows(engine) == before
    # a cumulative export: wave 1 again (unchanged) and 30 more
    assert import_file(url, framed[questions].iloc[:90], tmp_path / "wave2.csv").exit_code == 0
    assert_fresh(engine)

    # answers that repeat the frame's design values; a file with a weight below 0 is refused
    later = framed.iloc[120:160].drop(columns="school").copy()
    bad = later.copy()
    bad.loc[bad.index[-1], "pw"] = -5
    before = kept_rows(engine)
    refused = import_file(url, bad, tmp_path / "bad.csv")
    assert refused.exit_code != 0 and "nothing was imported" in refused.output
    assert kept_rows(engine) == before                          # exactly as it was
    conflict = framed[questions].iloc[:5].copy()   # changed answers, without --replace
    conflict["warner"] = conflict["warner"].map({"yes": "no", "no": "yes"})
    assert import_file(url, conflict, tmp_path / "conflict.csv").exit_code != 0
    assert kept_rows(engine) == before
    dry = import_file(url, later, tmp_path / "later.csv", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert kept_rows(engine) == before
    assert import_file(url, later, tmp_path / "later.csv").exit_code == 0
    assert_fresh(engine)

    # --replace: changed answers, and a changed weight, move the respondents' cells
    changed = later.iloc[:10].copy()
    changed["warner"] = changed["warner"].map({"yes": "no", "no": "yes"})
    changed.loc[changed.index[0], "pw"] = 99.5
    changed.loc[changed.index[1], "score"] = "dont_know"
    result = import_file(url, changed, tmp_path / "replace.csv", "--replace")
    assert result.exit_code == 0, result.output
    assert_fresh(engine)

    # web submissions for framed ids that have no answer yet, and one sent twice
    for respondent, row in framed.iloc[90:100].set_index("respondent_id").iterrows():
        answered = {"warner": row["warner"], "score": row["score"]}
        record_submission(engine, "api", respondent, answered)
    respondent = framed["respondent_id"].iloc[100]
    record_submission(engine, "api", respondent, {"warner": "yes", "score": "dont_know"})
    before = kept_rows(engine)
    assert record_submission(engine, "api", respondent,
                             {"warner": "yes", "score": "dont_know"}).already_recorded
    assert kept_rows(engine) == before
    assert_fresh(engine)
    # and the report reads them: respondents of the frame without answers keep their PSU
    report = json.loads(run_cli("report", "--survey", "api", "--db", url, "--format",
                                "json").output)
    assert report["sampling"]["respondents"] == 160


# -- migration 0007 ------------------------------------------------------------------------


def test_0007_backfills_the_cells_of_an_existing_database_and_its_downgrade_drops_them(
        engine, tmp_path):
    url = url_of(engine)
    name, sampling, columns = DESIGNS["clusters_fpc"]
    add_survey(url, tmp_path, sampling)
    assert import_file(url, answers(name, columns), tmp_path / "a.csv").exit_code == 0
    kept = kept_rows(engine)
    assert kept
    migrate.downgrade(engine, "0006")
    assert "weighted_cells" not in inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == "0007"
    migrate.check(engine)
    backfilled = kept_rows(engine)
    assert backfilled.keys() == kept.keys()
    for cell, sums in kept.items():
        assert backfilled[cell] == pytest.approx(sums, rel=RELATIVE)
    assert_fresh(engine)
