"""``surveykit survey list`` counts every stored answer, numeric ones too (issue 23).

Two surveys on one database (SQLite and PostgreSQL): one mixing a yes/no question, a numeric
question with answers and a choice question nobody answered; one with yes/no questions only.
Answers arrive by import and by web submission, and some are replaced. The oracle is the
``responses`` table itself (one row per stored answer), counted here with its own query, and
the file's non-empty cells; ``survey list``, as text and as JSON, must agree with both.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import migrated
import pytest
from sqlalchemy import func, select

from surveykit import store
from surveykit.store import database
from surveykit.store.submissions import record_submission
from tests.numeric_support import choice_question, income_question, numeric_survey
from tests.store_support import run_cli

MIXED = numeric_survey(choice_question(), income_question(unit=None, decimals=2),
                       choice_question("skipped", "Ever skipped a payment?", 0.75))
CHOICE = numeric_survey(choice_question("a", "A?"), choice_question("b", "B?"),
                        name="yesno", title="Yes/no")


def add_both(url: str) -> None:
    """Add the mixed tax survey and the yes/no one to the migrated database at ``url``."""
    with tempfile.TemporaryDirectory() as folder:
        for name, text in (("tax.toml", MIXED), ("yesno.toml", CHOICE)):
            (Path(folder) / name).write_text(text, encoding="utf-8")
            result = run_cli("survey", "add", str(Path(folder) / name), "--db", url)
            assert result.exit_code == 0, result.output


@pytest.fixture
def stored(database_url, tmp_path):
    """A copy of a database holding both surveys, made once per test process
    (tests/migrated.py); their files are in tmp_path too."""
    for name, text in (("tax.toml", MIXED), ("yesno.toml", CHOICE)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return migrated.copy_filled(database_url, add_both)


def _stored_rows(url: str) -> dict[str, int]:
    """Survey name -> rows of ``responses``: the answers the database holds."""
    engine = store.open_engine(url)
    try:
        query = (select(database.surveys.c.name, func.count(database.responses.c.answer))
                 .join(database.responses,
                       database.responses.c.survey_id == database.surveys.c.id)
                 .group_by(database.surveys.c.name))
        with engine.connect() as conn:
            return dict(conn.execute(query).all())
    finally:
        engine.dispose()


def _listed(url: str) -> tuple[dict[str, int], dict[str, int]]:
    """Survey name -> answers, as ``survey list`` prints them in JSON and as text."""
    result = run_cli("survey", "list", "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    as_json = {s["name"]: s["answers"] for s in json.loads(result.output)["surveys"]}
    result = run_cli("survey", "list", "--db", url)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    column = lines[0].split().index("answers")
    as_text = {line.split()[0]: int(line.split()[column]) for line in lines[1:]}
    return as_json, as_text


def test_survey_list_counts_numeric_answers_with_the_choice_answers(stored, tmp_path):
    cells = [("yes", "1000.50"), ("no", "dont_know"), ("", "0"), ("yes", ""),
             ("no", "20000"), ("", "")]
    mixed = tmp_path / "tax.csv"
    mixed.write_text("respondent_id,cheat,income\n" + "".join(
        f"r{i},{cheat},{income}\n" for i, (cheat, income) in enumerate(cells)),
        encoding="utf-8")
    assert run_cli("import", str(mixed), "--survey", "tax", "--db", stored).exit_code == 0
    choice = tmp_path / "yesno.csv"
    choice.write_text("respondent_id,a,b\nx1,yes,no\nx2,no,\n", encoding="utf-8")
    assert run_cli("import", str(choice), "--survey", "yesno", "--db", stored).exit_code == 0
    given = sum(bool(cell) for row in cells for cell in row)
    assert given == 8   # 4 yes/no, 4 numeric ("0" and "dont_know" are answers), 0 skipped
    expected = {"tax": given, "yesno": 3}
    assert _stored_rows(stored) == expected
    assert _listed(stored) == (expected, expected)

    # a web respondent answers both; a replacement changes answers, not their number
    engine = store.open_engine(stored)
    try:
        record_submission(engine, "tax", "web-1", {"cheat": "no", "income": "5000"})
    finally:
        engine.dispose()
    replaced = tmp_path / "tax-again.csv"
    replaced.write_text("respondent_id,cheat,income\nr0,no,999\nr3,yes,12\n",
                        encoding="utf-8")
    result = run_cli("import", str(replaced), "--survey", "tax", "--replace", "--db", stored)
    assert result.exit_code == 0, result.output
    expected = {"tax": given + 2 + 1, "yesno": 3}   # web-1: 2; r3's income: new
    assert _stored_rows(stored) == expected
    assert _listed(stored) == (expected, expected)


def test_a_survey_of_numeric_answers_only_lists_them(stored, tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("respondent_id,question_id,answer\nn1,income,5\nn2,income,dont_know\n",
                    encoding="utf-8")
    assert run_cli("import", str(path), "--survey", "tax", "--db", stored).exit_code == 0
    assert _listed(stored) == ({"tax": 2, "yesno": 0}, {"tax": 2, "yesno": 0})
