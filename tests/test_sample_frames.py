"""``surveykit generate --frame``: one respondent id per sampled unit, its design values stored
for the id (issue 21, item 2), on a real SQLite file and on PostgreSQL.

The frame is survey's apistrat (one row per sampled school: snum, stype, pw, fpc; or the
producer file of tests/test_producer_replicates.py with its BRR weights repw1..repw104). The
answers are then imported without a design column, and ``report --format json`` equals R's
svymean / svrepdesign values (tests/reference/survey_api/, tools/r_reference/), which only the
frame's values can give. Every bad frame is a one-line error naming the file, line (row),
column and value, and nothing is stored or written; a second frame run is refused; a later
import that disagrees with the frame is refused; no questionnaire prints a design value.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from migrated import migrated_sqlite
from sampling_support import REFERENCE, reference, sample
from sqlalchemy import create_engine, text
from store_support import run_cli

TOLERANCE = 1e-6
SURVEY = '''name = "schools"
title = "Awards in California schools"

[[questions]]
id = "awards"
text = "Did the school get an award?"
design = { model = "direct" }

[[questions]]
id = "warner"
text = "Did the school get an award (Warner)?"
design = { model = "warner", p = 0.7 }

'''
STRATIFIED = '[sampling]\nweight = "pw"\nstrata = "stype"\nfpc = "fpc"\n'
CLUSTERED = '[sampling]\nweight = "pw"\nstrata = "stype"\nclusters = "dnum"\n'
PRODUCER_BRR = '[sampling]\nweight = "pw"\nreplicate_weights = "repw*"\nreplicate_type = "BRR"\n'


def close(value, expected):
    return value == pytest.approx(expected, rel=TOLERANCE, abs=TOLERANCE * 1e-3)


def migrated(url: str) -> None:
    """Migrate the database at ``url`` to head unless it is: an SQLite file not yet made gets
    a copy of one migrated once (tests/migrated.py); the engine fixture's are migrated."""
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        migrated_sqlite(Path(url.removeprefix("sqlite:///")))


def setup(url: str, tmp_path: Path, sampling: str = STRATIFIED) -> None:
    survey_file = tmp_path / "schools.toml"
    survey_file.write_text(SURVEY + sampling, encoding="utf-8")
    migrated(url)
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output


def api_frame() -> pd.DataFrame:
    """apistrat's sampled schools as a frame: the school's own id and the design columns."""
    data = sample("apistrat")
    return pd.DataFrame({"school": data["snum"], "stype": data["stype"], "pw": data["pw"],
                         "fpc": data["fpc"]})


def generate(url: str, frame_path: Path, out: Path):
    return run_cli("generate", "--survey", "schools", "--frame", str(frame_path),
                   "--out", str(out), "--db", url)


def answers_for(ids: pd.DataFrame, unit_column: str, answers: pd.DataFrame,
                answer_key: str) -> pd.DataFrame:
    """The answer file a field team types in: respondent id (from frame-ids.csv) and answers;
    no design column."""
    merged = ids[["respondent_id", unit_column]].merge(answers, left_on=unit_column,
                                                       right_on=answer_key)
    out = pd.DataFrame({"respondent_id": merged["respondent_id"]})
    out["awards"] = merged["awards_yes"]
    out["warner"] = merged["answer_warner"]
    return out


def report(url: str, *options: str) -> dict:
    result = run_cli("report", "--survey", "schools", "--db", url, "--format", "json",
                     *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def counts(url: str) -> tuple[int, int, int]:
    """(respondents issued, design values stored, imports recorded)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return tuple(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                         for table in ("respondents", "covariates", "imports"))
    finally:
        engine.dispose()


def test_frame_values_give_the_report_r_s_numbers(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    setup(url, tmp_path)
    frame_path = tmp_path / "frame.csv"
    api_frame().to_csv(frame_path, index=False)
    result = generate(url, frame_path, tmp_path / "forms")
    assert result.exit_code == 0, result.output
    assert "stored the design values of the 200 units of frame.csv" in result.output
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv")
    assert list(ids.columns) == ["respondent_id", "school", "stype", "pw", "fpc"]
    assert ids["respondent_id"].is_unique and len(ids) == 200
    assert (ids.drop(columns="respondent_id") == api_frame()).all().all()
    assert counts(url) == (200, 600, 1)

    data = sample("apistrat")
    answers = answers_for(ids, "school", data.assign(
        answer_warner=data["answer_warner"].map({"1": "yes", "0": "no"})), "snum")
    answer_file = tmp_path / "answers.csv"
    answers.to_csv(answer_file, index=False)
    result = run_cli("import", str(answer_file), "--survey", "schools", "--db", url)
    assert result.exit_code == 0, result.output
    got = {q["id"]: q for q in report(url)["questions"]}
    expected = reference("rr_designs")["results"]["dstrat"]
    for question, name in (("awards", "direct"), ("warner", "warner")):
        r = expected[name]
        # svymean(~awards_yes, dstrat) and of the Warner transform r_warner
        assert close(got[question]["estimate"], r["mean"]), question
        assert close(got[question]["se"], r["mean_se"]), question
        assert close(got[question]["total"], r["total"]), question


def test_a_producer_frame_with_replicate_weights_by_pattern_equals_svrepdesign(tmp_path,
                                                                              sqlite_url):
    setup(sqlite_url, tmp_path, PRODUCER_BRR)
    producer = pd.read_csv(REFERENCE / "producer_brr_apistrat.csv")
    replicates = [c for c in producer.columns if c.startswith("repw")]
    frame_path = tmp_path / "frame.csv"
    producer[["snum", "pw", *replicates]].to_csv(frame_path, index=False)
    result = generate(sqlite_url, frame_path, tmp_path / "forms")
    assert result.exit_code == 0, result.output
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv")
    answers = producer.assign(awards_yes=producer["awards_yes"].map({1: "yes", 0: "no"}),
                              answer_warner=producer["answer_warner"].map({1: "yes", 0: "no"}))
    answer_file = tmp_path / "answers.csv"
    answers_for(ids, "snum", answers, "snum").to_csv(answer_file, index=False)
    assert run_cli("import", str(answer_file), "--survey", "schools", "--db",
                   sqlite_url).exit_code == 0
    got = {q["id"]: q for q in report(sqlite_url, "--variance", "replicates")["questions"]}
    expected = reference("producer_replicates")["results"]["BRR"]
    for question, name in (("awards", "direct"), ("warner", "warner")):
        r = expected["results"][name]
        assert close(got[question]["estimate"], r["mean"]), question
        assert close(got[question]["se"], r["mean_se"]), question
        assert got[question]["df"] == expected["degf"]


def test_a_second_frame_run_is_refused_and_issues_nothing(tmp_path, sqlite_url):
    setup(sqlite_url, tmp_path)
    frame_path = tmp_path / "frame.csv"
    api_frame().iloc[:60].to_csv(frame_path, index=False)
    assert generate(sqlite_url, frame_path, tmp_path / "forms").exit_code == 0
    before = counts(sqlite_url)
    result = generate(sqlite_url, frame_path, tmp_path / "again")
    message = result.output.strip()
    assert result.exit_code != 0 and "\n" not in message
    assert message.startswith("Error: frame.csv: this sample frame already issued 60 "
                              "respondent ids for survey 'schools' on ")
    assert message.endswith("nothing was issued")
    # an edited frame (one unit more) would give the first 60 units a second id
    api_frame().iloc[:61].to_csv(tmp_path / "frame2.csv", index=False)
    result = generate(sqlite_url, tmp_path / "frame2.csv", tmp_path / "again")
    assert result.exit_code != 0
    assert "already has its sample frame 'frame.csv' (60 units" in result.output
    assert counts(sqlite_url) == before and not (tmp_path / "again").exists()


def bad(frame: pd.DataFrame, row: int, column: str, value: object) -> pd.DataFrame:
    frame = frame.copy().astype(object)
    frame.loc[row, column] = value
    return frame


def clustered_frame() -> pd.DataFrame:
    """Two strata of two clusters of two units each."""
    return pd.DataFrame({"unit": range(1, 9), "stype": list("EEEEHHHH"),
                         "dnum": [1, 1, 2, 2, 3, 3, 4, 4], "pw": [10.0] * 8})


@pytest.mark.parametrize(("sampling", "frame", "words"), [
    (STRATIFIED, bad(api_frame(), 3, "pw", None),
     ["column 'pw', line 5: is empty", "every respondent needs a weight above 0"]),
    (STRATIFIED, bad(api_frame(), 3, "pw", 0),
     ["column 'pw', line 5: holds 0, which is not positive"]),
    (STRATIFIED, bad(api_frame(), 6, "pw", -2.5),
     ["column 'pw', line 8: holds -2.5, which is not positive"]),
    (STRATIFIED, bad(api_frame(), 3, "pw", "heavy"),
     ["line 5, column 'pw': 'heavy' is not a number"]),
    (STRATIFIED, bad(api_frame(), 4, "stype", ""),
     ["column 'stype', line 6 is empty"]),
    (STRATIFIED, bad(api_frame(), 2, "fpc", 9999),
     ["column 'fpc', line 4: the fpc (9999) differs from line 2's (4421)"]),
    (STRATIFIED, api_frame().drop(columns="fpc"),
     ["the design column 'fpc' of [sampling] is not in the frame"]),
    (CLUSTERED, bad(clustered_frame(), 5, "dnum", 2),
     ["column 'dnum', line 7: cluster '2' is in a second stratum"]),
    (CLUSTERED, clustered_frame().iloc[:6],
     ["stratum stype = 'H' has only one PSU", "(it is at line 6)"]),
])
def test_a_bad_frame_is_a_one_line_error_and_stores_nothing(tmp_path, sqlite_url, sampling,
                                                            frame, words):
    setup(sqlite_url, tmp_path, sampling)
    frame_path = tmp_path / "frame.csv"
    frame.to_csv(frame_path, index=False)
    result = generate(sqlite_url, frame_path, tmp_path / "forms")
    message = result.output.strip()
    assert result.exit_code != 0 and "\n" not in message and "Traceback" not in message
    assert message.startswith("Error: frame.csv")
    assert message.endswith("nothing was issued")
    for word in words:
        assert word in message, (word, message)
    assert counts(sqlite_url) == (0, 0, 0)
    assert not (tmp_path / "forms").exists()


def test_an_xlsx_frame_names_the_sheet_row(tmp_path, sqlite_url):
    setup(sqlite_url, tmp_path)
    frame_path = tmp_path / "frame.xlsx"
    bad(api_frame(), 9, "pw", 0).to_excel(frame_path, index=False)
    result = generate(sqlite_url, frame_path, tmp_path / "forms")
    assert result.exit_code != 0
    assert "frame.xlsx: column 'pw', row 11: holds 0" in result.output
    api_frame().to_excel(frame_path, index=False)
    result = generate(sqlite_url, frame_path, tmp_path / "forms")
    assert result.exit_code == 0, result.output
    assert counts(sqlite_url) == (200, 600, 1)


def test_a_later_import_that_disagrees_with_the_frame_is_refused(tmp_path, sqlite_url):
    setup(sqlite_url, tmp_path)
    frame_path = tmp_path / "frame.csv"
    api_frame().iloc[:60].to_csv(frame_path, index=False)
    assert generate(sqlite_url, frame_path, tmp_path / "forms").exit_code == 0
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv")
    answers = pd.DataFrame({"respondent_id": ids["respondent_id"], "awards": "yes",
                            "pw": ids["pw"], "stype": ids["stype"]})
    agreeing = tmp_path / "agreeing.csv"
    answers.to_csv(agreeing, index=False)
    result = run_cli("import", str(agreeing), "--survey", "schools", "--db", sqlite_url)
    assert result.exit_code == 0, result.output
    assert "120 unchanged" in result.output or "0 replaced" in result.output
    answers.loc[4, "pw"] = 99
    differing = tmp_path / "differing.csv"
    answers.to_csv(differing, index=False)
    before = counts(sqlite_url)
    result = run_cli("import", str(differing), "--survey", "schools", "--db", sqlite_url)
    assert result.exit_code != 0
    assert (f"line 6, column pw, value '99': this respondent's pw is "
            f"'{float(ids['pw'][4])!r}' since import #1 (frame.csv)") in result.output
    assert counts(sqlite_url) == before


def test_no_questionnaire_prints_a_design_value(tmp_path, sqlite_url):
    setup(sqlite_url, tmp_path, CLUSTERED)
    frame = pd.DataFrame({"unit": range(1, 61), "stype": ["STRATUM_NORTH"] * 30
                          + ["STRATUM_SOUTH"] * 30,
                          "dnum": [f"CLUSTER_{i // 5}" for i in range(60)],
                          "pw": [123.456] * 60})
    frame_path = tmp_path / "frame.csv"
    frame.to_csv(frame_path, index=False)
    assert generate(sqlite_url, frame_path, tmp_path / "forms").exit_code == 0
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv")
    printed = {path.name: path.read_text(encoding="utf-8")
               for path in (tmp_path / "forms").iterdir() if path.suffix == ".html"}
    assert {name.split("-")[0] for name in printed} == {"sheets", "slips"}
    for name, page in printed.items():
        for value in ("STRATUM_", "CLUSTER_", "123.456"):
            assert value not in page, (name, value)
        if name.startswith("slips"):  # instructions: never next to an id
            assert not any(respondent in page for respondent in ids["respondent_id"])
    # the list of ids holds the frame's columns and the ids, no instruction
    assert list(ids.columns) == ["respondent_id", "unit", "stype", "dnum", "pw"]
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        stored = {name for (name,) in conn.execute("SELECT DISTINCT name FROM covariates")}
    assert stored == {"stype", "dnum", "pw"}  # the unit column is not kept


def test_a_frame_that_contradicts_stored_design_values_is_refused_in_the_store(engine,
                                                                              tmp_path):
    """On its own the frame is a design; with the values an earlier import stored, cluster 1
    lies in two strata: the check in the transaction that issues the ids refuses it."""
    url = engine.url.render_as_string(hide_password=False)
    setup(url, tmp_path, CLUSTERED)
    earlier = pd.DataFrame({"respondent_id": ["w1", "w2", "w3", "w4"], "awards": "yes",
                            "stype": "H", "dnum": [1, 1, 2, 2], "pw": 5.0})
    earlier.to_csv(tmp_path / "earlier.csv", index=False)
    result = run_cli("import", str(tmp_path / "earlier.csv"), "--survey", "schools", "--db",
                     url)
    assert result.exit_code == 0, result.output
    before = counts(url)
    frame = clustered_frame().assign(stype=list("EEEEMMMM"))  # its cluster 1 is in E
    frame.to_csv(tmp_path / "frame.csv", index=False)
    result = generate(url, tmp_path / "frame.csv", tmp_path / "forms")
    message = result.output.strip()
    assert result.exit_code != 0 and "\n" not in message
    assert message.startswith("Error: frame.csv: column 'dnum', respondent 'w1' (from an "
                              "earlier import): cluster '1' is in a second stratum")
    assert "line 2 (respondent '" in message  # the frame's unit with cluster 1 in E
    assert message.endswith("nothing was issued")
    assert counts(url) == before and not (tmp_path / "forms").exists()


def test_a_multi_group_frame_lists_each_id_s_form_version(tmp_path, sqlite_url):
    survey_file = tmp_path / "sld.toml"
    survey_file.write_text('name = "schools"\ntitle = "T"\n[design]\nmodel = "sld"\n'
                           'p = [0.2, 0.8]\ngroups = ["short", "long"]\n[[questions]]\n'
                           'id = "q"\ntext = "Ever?"\n\n' + STRATIFIED, encoding="utf-8")
    migrated(sqlite_url)
    assert run_cli("survey", "add", str(survey_file), "--db", sqlite_url).exit_code == 0
    api_frame().iloc[:80].to_csv(tmp_path / "frame.csv", index=False)
    result = generate(sqlite_url, tmp_path / "frame.csv", tmp_path / "forms")
    assert result.exit_code == 0, result.output
    ids = pd.read_csv(tmp_path / "forms" / "frame-ids.csv")
    assert list(ids.columns[:2]) == ["respondent_id", "group"]
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        stored = dict(conn.execute("SELECT respondent_id, group_number FROM respondents"))
    names = {1: "short", 2: "long"}
    assert {r: names[g] for r, g in stored.items()} == dict(zip(ids["respondent_id"],
                                                                ids["group"], strict=True))
    assert sorted(ids["group"].value_counts().tolist()) == [40, 40]  # balanced
