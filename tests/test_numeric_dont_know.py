"""One rule for "don't know" on a numeric question, on every field path (issue 23).

A numeric question takes "don't know" exactly when its design has the "don't know" branch
(``dont_know > 0``): the web page and the server, the paper sheet, the XLSForm, ``surveykit
import`` (a CSV file, a KoboToolbox export of the XLSForm) and ``surveykit counts --data``
all apply it. The survey below has one numeric question with the branch (``income``) and
one without (``hours``); each path is asked what it offers or takes for each, and every
answer must equal the design's. Imports without the branch are refused in one line naming
the file, line, column and value and saying that the design has no such branch; nothing is
stored. Before this rule, import and counts --data took "dont_know" for any numeric question.
"""

from __future__ import annotations

import re
from pathlib import Path

import migrated
import pytest
from sqlalchemy import Engine, select

from surveykit import store
from surveykit.collection.xlsform import build_xlsform
from surveykit.definition.survey import parse_survey
from surveykit.store import database
from tests.numeric_support import choice_question, hours_question, income_question, numeric_survey
from tests.store_support import add_survey_text, run_cli
from tests.test_numeric_store import dump
from tests.test_web_app import page_token, post
from tests.test_web_numeric import client

SURVEY = numeric_survey(choice_question(), income_question(), hours_question())
NUMERIC = ("income", "hours")
# What each design says: the rule every path must follow.
RULE = {"income": True, "hours": False}
SPELLINGS = ["dont_know", "don't know", "DK", "I don\u2019t know"]


def _survey():
    return parse_survey(SURVEY, "tax.toml")


def test_the_rule_is_the_designs_branch():
    survey = _survey()
    assert {q: survey.question(q).design.designed_dont_know > 0 for q in NUMERIC} == RULE


def add_tax(url: str) -> None:
    """Add the tax survey to the migrated database at ``url`` through the CLI."""
    add_survey_text(url, SURVEY, "tax.toml")


@pytest.fixture(params=migrated.DATABASES)
def stored(request, tmp_path):
    """A copy of a database with the tax survey added once per test process
    (tests/migrated.py), on SQLite and PostgreSQL; tax.toml is in tmp_path too."""
    (tmp_path / "tax.toml").write_text(SURVEY, encoding="utf-8")
    with migrated.filled_database(request.param, add_tax, tmp_path) as url:
        yield url


def _stored_answers(url: str) -> dict[tuple[str, str], str]:
    engine = store.open_engine(url)
    try:
        responses, questions = database.responses, database.questions
        query = select(responses.c.respondent_id, questions.c.name, responses.c.answer).join(
            questions, questions.c.id == responses.c.question_id)
        with engine.connect() as conn:
            return {(rid, name): answer for rid, name, answer in conn.execute(query)}
    finally:
        engine.dispose()


def _wide(path: Path, question: str, cell: str) -> Path:
    other = "income" if question == "hours" else "hours"
    path.write_text(f'respondent_id,cheat,{question},{other}\nr1,yes,5,5\n'
                    f'r2,no,"{cell}",7\n', encoding="utf-8")
    return path


def _refusal_line(output: str, path: Path, column: str, cell: str) -> str:
    """The one line naming the refused cell, checked for file, line, column, value, fix."""
    assert f"1 bad row in {path} (1 no don't know branch)" in output
    line = next(line for line in output.splitlines() if "line 3" in line)
    assert (f"line 3, column {column}, value {cell!r}: question 'hours' takes a number: "
            "\"don't know\" is not an answer to this question: its design has no" in line)
    assert "its design has no \"don't know\" branch (dont_know = 0" in line
    assert "leave the cell empty if the answer is missing" in line
    assert "Traceback" not in output
    return line


# -- import of a CSV file, on SQLite and PostgreSQL ------------------------------------------


@pytest.mark.parametrize("cell", SPELLINGS)
def test_import_takes_dont_know_only_for_the_question_whose_design_has_the_branch(
        stored, tmp_path, cell):
    taken = {}
    for question in NUMERIC:
        path = _wide(tmp_path / f"{question}.csv", question, cell)
        before = dump(stored)
        result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
        taken[question] = result.exit_code == 0
        if taken[question]:
            assert _stored_answers(stored)[("r2", question)] == "dont_know"
        else:
            assert result.exit_code == 1
            _refusal_line(result.output, path, question, cell)
            assert dump(stored) == before
    assert taken == RULE


def test_text_in_a_numeric_cell_offers_dont_know_only_with_the_branch(stored, tmp_path):
    """Only the "don't know" spellings are refused as such: text is still "not a number",
    and its fix no longer offers "don't know" where the design has no branch."""
    path = _wide(tmp_path / "text.csv", "hours", "many")
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if "line 3" in line)
    assert "many is not a number: write the reported number (digits, with a dot for " \
           "decimals) or leave the cell empty" in line
    path = _wide(tmp_path / "text2.csv", "income", "many")
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    line = next(line for line in result.output.splitlines() if "line 3" in line)
    assert "decimals), \"don't know\", or leave the cell empty" in line


# -- a KoboToolbox export of the XLSForm -----------------------------------------------------


KOBO_HEADER = ("start;end;today;deviceid;tax/respondent_id;tax/cheat;tax/income_value;"
               "tax/income_dk;tax/income;tax/hours;_id;_uuid;_submission_time;_index")


def _kobo_row(index: int, income: tuple[str, str, str], hours: str) -> str:
    return (f"2026-11-02T10:1{index}:00.000+01:00;2026-11-02T10:2{index}:00.000+01:00;"
            f"2026-11-02;collect:Xb7{index};KB-00{index};yes;{';'.join(income)};{hours};"
            f"4821300{index};3f2b8c1e-9d4a-4c7e-8b1a-00000000000{index};"
            f"2026-11-02T09:3{index}:12;{index}")


def test_a_kobotoolbox_export_of_the_form_follows_the_same_rule(stored, tmp_path):
    """The export's field named after a numeric question holds "dont_know" (the form's
    calculate) where the respondent chose it; the typed number and the choice beside it are
    form fields the import ignores. A "dont_know" in the question without the branch (an
    edited form, a hand-corrected export) is refused naming its line and column."""
    good = tmp_path / "kobo.csv"
    good.write_text("\ufeff" + "\n".join([
        KOBO_HEADER,
        _kobo_row(1, ("5000", "", "5000"), "12.5"),
        _kobo_row(2, ("", "I don't know", "dont_know"), "3"),
    ]) + "\n", encoding="utf-8")
    result = run_cli("import", str(good), "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output
    assert _stored_answers(stored)[("KB-002", "income")] == "dont_know"

    bad = tmp_path / "kobo-bad.csv"
    bad.write_text("\ufeff" + "\n".join([
        KOBO_HEADER,
        _kobo_row(3, ("20000", "", "20000"), "1"),
        _kobo_row(4, ("0", "", "0"), "dont_know"),
    ]) + "\n", encoding="utf-8")
    before = dump(stored)
    result = run_cli("import", str(bad), "--survey", "tax", "--db", stored)
    assert result.exit_code == 1
    _refusal_line(result.output, bad, "tax/hours", "dont_know")
    assert dump(stored) == before


# -- counts --data: file counting reads cells by the same rules ------------------------------


def test_counts_of_a_file_follow_the_same_rule(stored, tmp_path):
    taken = {}
    for question in NUMERIC:
        path = _wide(tmp_path / f"{question}.csv", question, "dont_know")
        result = run_cli("counts", "--survey", "tax", "--data", str(path), "--db", stored)
        taken[question] = result.exit_code == 0
        if not taken[question]:
            assert "line 3, column hours, value 'dont_know': question 'hours' takes a " \
                   "number:" in result.output
            assert "no \"don't know\" branch" in result.output
    assert taken == RULE


# -- the web server, over HTTP, on SQLite and PostgreSQL ---------------------------------------


def test_the_web_page_offers_and_the_server_takes_dont_know_by_the_same_rule(engine: Engine):
    store.add_survey(engine, _survey())
    with client(engine) as http:
        token = page_token(http)
        served = {q["id"]: q for q in http.get("/survey.json").json()["questions"]}
        offered = {q: any(a[0] == "dont_know" if isinstance(a, list) else
                          a.get("label") == "dont_know" for a in served[q].get("answers", []))
                   for q in NUMERIC}
        taken = {}
        for n, question in enumerate(NUMERIC):
            other = {"income": "5", "hours": "5"}
            reply = post(http, "/submit", {"respondent_id": f"web-{n}", "answers": {
                **other, question: "dont_know"}}, token)
            taken[question] = reply.status_code == 201
            if not taken[question]:
                assert reply.status_code == 422
                assert "question 'hours' must be a number, as a text" in reply.json()["error"]
    assert offered == RULE
    assert taken == RULE


# -- the XLSForm ------------------------------------------------------------------------------


@pytest.mark.parametrize("randomize", ["self", "device"])
def test_the_xlsform_offers_a_dont_know_choice_only_with_the_branch(randomize):
    form = build_xlsform(_survey(), randomize=randomize)
    rows = {str(row["name"]): row for row in form.survey}
    lists_with_dont_know = {str(choice["list_name"]) for choice in form.choices
                            if choice["name"] == "dont_know"}
    offered = {}
    for question in NUMERIC:
        selects = [row for name, row in rows.items() if name.startswith(question)
                   and str(row["type"]).startswith("select_one ")]
        offered[question] = any(str(row["type"]).split()[1] in lists_with_dont_know
                                for row in selects)
    assert offered == RULE
    assert "hours_dk" not in rows and rows["hours"]["required"] == "yes"
    assert rows["income"]["type"] == "calculate" and "'dont_know'" in rows["income"][
        "calculation"]


# -- the paper sheet --------------------------------------------------------------------------


def test_the_paper_sheet_has_a_dont_know_box_only_with_the_branch(tmp_path):
    path = tmp_path / "tax.db"
    engine = store.open_engine(str(path))
    try:
        store.init_database(engine)
        store.add_survey(engine, _survey())
    finally:
        engine.dispose()
    out = tmp_path / "out"
    result = run_cli("generate", "--survey", "tax", "--respondents", "2", "--out", str(out),
                     "--db", str(path), "--seed", "3", "--key-file",
                     str(tmp_path / "key.csv"))
    assert result.exit_code == 0, result.output
    sheet = re.search(r'<section class="page sheet">(.*?)</section>',
                      (out / "sheets-00001.html").read_text(encoding="utf-8"), flags=re.S)
    assert sheet is not None
    items = dict(zip(("cheat", *NUMERIC), re.findall(r"<li>(.*?)</li>", sheet.group(1),
                                                     flags=re.S), strict=True))
    offered = {q: "Don&#39;t know" in items[q] for q in NUMERIC}
    assert all('class="number-box"' in items[q] for q in NUMERIC)
    assert offered == RULE
