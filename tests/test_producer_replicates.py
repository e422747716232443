"""Producer replicate weights end to end (issue 21, item 1): a public-use file's BRR and Fay
replicate columns matched by ``replicate_weights = "repw*"``, imported, reported by the CLI, and
equal to R's ``svrepdesign`` + ``svymean`` / ``svytotal`` to 1e-6.

The file is apistrat with survey's own BRR (and Fay, rho 0.3) weights for its half-sample pairs,
written out as a producer ships them (tests/reference/survey_api/producer_<type>_apistrat.csv,
made by tools/r_reference/survey_api_producer_brr.R, whose reference reads the file alone:
``svrepdesign(data = producer, repweights = "repw[0-9]+", weights = ~pw, type = "BRR")``).
For the randomized answers (Warner, forced response, Mangat; rr_answers_apistrat.csv) R's value
is svymean of the design's unbiased transform r = (answer - a) / b, which the weighted
pseudo-MLE equals where it lies inside (0, 1).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from migrated import migrated_sqlite
from sampling_support import REFERENCE, reference
from store_support import run_cli

TOLERANCE = 1e-6
PRODUCER = reference("producer_replicates")
#: question id -> (design as the survey file writes it, the reference's name, the file's column)
QUESTIONS = {
    "awards": ('{ model = "direct" }', "direct", "awards_yes"),
    "warner": ('{ model = "warner", p = 0.7 }', "warner", "answer_warner"),
    "fr": ('{ model = "fr", p = [0.16666666666666666, 0.16666666666666666] }', "fr",
           "answer_fr"),
    "mangat": ('{ model = "mangat", p = 0.8 }', "mangat", "answer_mangat"),
}
SAMPLING = {
    "BRR": '[sampling]\nweight = "pw"\nreplicate_weights = "repw*"\nreplicate_type = "BRR"\n',
    "Fay": '[sampling]\nweight = "pw"\nreplicate_weights = "repw*"\nreplicate_type = "Fay"\n'
           'replicate_rho = 0.3\n',
}


def survey_text(kind: str) -> str:
    questions = "".join(f'\n[[questions]]\nid = "{q}"\ntext = "Did the school get an award '
                        f'({q})?"\ndesign = {design}\n'
                        for q, (design, _, _) in QUESTIONS.items())
    return f'name = "public_use"\ntitle = "A public-use file"\n{questions}\n' + SAMPLING[kind]


def producer_file(kind: str) -> pd.DataFrame:
    """The producer's file as a wide response file: yes/no answers, pw, repw1..repwR (written
    in reverse: the pattern reads them in natural order whatever the file's)."""
    data = pd.read_csv(REFERENCE / PRODUCER["results"][kind]["file"])
    out = pd.DataFrame({"respondent_id": "s" + data["snum"].astype(str)})
    for question, (_, _, column) in QUESTIONS.items():
        out[question] = data[column].map({1: "yes", 0: "no"})
    replicates = [c for c in data.columns if c.startswith("repw")]
    return pd.concat([out, data[["pw"]], data[replicates[::-1]]], axis=1)


def load(url: str, tmp_path: Path, kind: str, frame: pd.DataFrame | None = None) -> Path:
    survey_file = tmp_path / "public_use.toml"
    survey_file.write_text(survey_text(kind), encoding="utf-8")
    answers = tmp_path / f"public_use_{kind}.csv"
    (producer_file(kind) if frame is None else frame).to_csv(answers, index=False)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        migrated_sqlite(Path(url.removeprefix("sqlite:///")))  # the engine's are migrated
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    result = run_cli("import", str(answers), "--survey", "public_use", "--db", url)
    assert result.exit_code == 0, result.output
    return answers


def report(url: str) -> dict:
    result = run_cli("report", "--survey", "public_use", "--db", url, "--format", "json",
                     "--variance", "replicates")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def close(value, expected):
    return value == pytest.approx(expected, rel=TOLERANCE, abs=TOLERANCE * 1e-3)


def check_against_r(data: dict, kind: str) -> None:
    expected = PRODUCER["results"][kind]
    questions = {q["id"]: q for q in data["questions"]}
    for question, (_, name, _) in QUESTIONS.items():
        got, r = questions[question], expected["results"][name]
        assert r["interior"], name  # where R's transform mean is the pseudo-MLE
        assert got["variance_method"] == f"replicates ({kind})"
        for key, r_key in (("estimate", "mean"), ("se", "mean_se"), ("total", "total"),
                           ("total_se", "total_se")):
            assert close(got[key], r[r_key]), (kind, question, key, got[key], r[r_key])
        assert got["df"] == expected["degf"]  # survey's degf: rank of the weights - 1


def test_brr_producer_weights_equal_svrepdesign(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    load(url, tmp_path, "BRR")
    data = report(url)
    assert close(data["sampling"]["sum_weights"], PRODUCER["results"]["BRR"]["sum_weights"])
    check_against_r(data, "BRR")


def test_fay_producer_weights_equal_svrepdesign(tmp_path, sqlite_url):
    load(sqlite_url, tmp_path, "Fay")
    check_against_r(report(sqlite_url), "Fay")


def test_replicate_columns_are_stored_as_numbers_per_respondent(tmp_path, sqlite_url):
    load(sqlite_url, tmp_path, "BRR")
    replicates = PRODUCER["results"]["BRR"]["replicates"]
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        names = conn.execute("SELECT name, count(*) FROM covariates WHERE name LIKE 'repw%' "
                             "GROUP BY name").fetchall()
    assert len(names) == replicates and {n for _, n in names} == {200}


def test_an_import_with_other_replicate_columns_is_refused_and_stores_nothing(tmp_path,
                                                                             sqlite_url):
    frame = producer_file("BRR")
    first, later = frame.iloc[:150], frame.iloc[150:].drop(columns=["repw7"])
    load(sqlite_url, tmp_path, "BRR", first)
    path = tmp_path / "later.csv"
    later.to_csv(path, index=False)
    result = run_cli("import", str(path), "--survey", "public_use", "--db", sqlite_url)
    message = result.output.strip()
    assert result.exit_code != 0 and "\n" not in message
    assert message.startswith(f"Error: {path}: the columns matching replicate_weights "
                              "'repw*' are 'repw1', 'repw2', ..., 'repw104' (103), but the "
                              "survey stores 'repw1', 'repw2', ..., 'repw104' (104)")
    assert "lacks 'repw7'" in message and message.endswith("nothing was imported")
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        assert conn.execute("SELECT count(DISTINCT respondent_id) FROM covariates").fetchone() \
            == (150,)
        assert conn.execute("SELECT count(*) FROM imports").fetchone() == (1,)
