"""A database changed behind surveykit's back (issue 19, item 6): ``check``, ``check
--repair``, ``counts`` and ``report`` never crash. ``check`` lists every kept row that cannot
be one of the survey's and every stored answer it cannot count, one line each, escaped;
``--repair`` rebuilds the kept counts from the answers (they are derived data) and says, in
one line, what the answers cannot rebuild; ``counts`` and ``report`` refuse kept counts that
do not fit the survey in one line that says what to run. Real SQLite files (whose columns take
any type, and whose foreign keys are off in other programs) and the real PostgreSQL (with the
constraints a hand edit would drop)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import migrated
import pytest
from sqlalchemy import text

from surveykit.resources import locate_resource
from surveykit.store import database as store
from tests.store_support import add_sample_survey_and_answers, run_cli

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data")
REPAIR = "rebuild them from the answers with 'surveykit check --survey academic_integrity --repair'"
RESTORE = "restore"
# the first question's key, and one of its stored answers
FIRST = "(SELECT min(id) FROM questions)"
ONE_ANSWER = (f"question_id = {FIRST} AND respondent_id = (SELECT min(respondent_id) FROM "
              f"responses WHERE question_id = {FIRST})")
# an SQLite table rebuilt without its constraints, as a careless hand edit leaves it
LOOSE_COUNTS = ("CREATE TABLE loose AS SELECT * FROM answer_counts", "DROP TABLE answer_counts",
                "ALTER TABLE loose RENAME TO answer_counts")


@dataclass(frozen=True)
class Tamper:
    """A hand edit: its statements on SQLite and on PostgreSQL (None: PostgreSQL's types
    refuse it), what ``check`` shows for it (a regex on one of its lines), whether the
    answers can rebuild what it broke, and what ``counts`` says about it (a substring)."""

    name: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...] | None
    shown: str
    repairable: bool = True
    counts_says: str = REPAIR


def esc(column: str, dialect: str) -> str:
    return f"{'char' if dialect == 'sqlite' else 'chr'}(27) || '[2J' || {column}"


def both(*statements: str) -> tuple[str, ...]:
    return statements


TAMPERS = [
    Tamper("a kept row for a question the survey does not have",
           both("INSERT INTO answer_counts VALUES (1, 9999, 1, 'yes', 5)"),
           ("ALTER TABLE answer_counts DROP CONSTRAINT fk_answer_counts_survey_id_questions",
            "INSERT INTO answer_counts VALUES (1, 9999, 1, 'yes', 5)"),
           r"^question key 9999 +1 +yes +5 +0 +kept row: question key 9999 is not a question "
           r"of the survey$"),
    Tamper("a count stored as text",
           both(f"UPDATE answer_counts SET count = 'abc' WHERE question_id = {FIRST} "
                "AND answer = 'yes'"), None,
           r"^exam_cheating +1 +yes +\? +92 +kept count 'abc' is not a whole number >= 0$"),
    Tamper("a negative count",
           ("PRAGMA ignore_check_constraints = 1",
            f"UPDATE answer_counts SET count = -3 WHERE question_id = {FIRST} AND answer = 'yes'"),
           ("ALTER TABLE answer_counts DROP CONSTRAINT ck_answer_counts_count",
            f"UPDATE answer_counts SET count = -3 WHERE question_id = {FIRST} AND answer = 'yes'"),
           r"^exam_cheating +1 +yes +-3 +92 +kept count -3 is not a whole number >= 0$"),
    Tamper("a NULL count",
           (*LOOSE_COUNTS, f"UPDATE answer_counts SET count = NULL WHERE question_id = {FIRST} "
                           "AND answer = 'no'"),
           ("ALTER TABLE answer_counts ALTER COLUMN count DROP NOT NULL",
            f"UPDATE answer_counts SET count = NULL WHERE question_id = {FIRST} AND answer = 'no'"),
           r"^exam_cheating +1 +no +\? +116 +kept count NULL is not a whole number >= 0$"),
    Tamper("a kept answer label with an escape sequence",
           both(f"UPDATE answer_counts SET answer = {esc('answer', 'sqlite')} WHERE "
                f"question_id = {FIRST} AND answer = 'yes'"),
           (f"UPDATE answer_counts SET answer = {esc('answer', 'postgresql')} WHERE "
            f"question_id = {FIRST} AND answer = 'yes'",),
           r"^exam_cheating +1 +\\x1b\[2Jyes +92 +0 +kept row: '\\x1b\[2Jyes' is not an answer "
           r"of question exam_cheating \(yes, no, dont_know\)$"),
    Tamper("a kept group number out of range",
           both(f"UPDATE answer_counts SET group_number = 7 WHERE question_id = {FIRST} "
                "AND answer = 'yes'"),
           (f"UPDATE answer_counts SET group_number = 7 WHERE question_id = {FIRST} "
            "AND answer = 'yes'",),
           r"^exam_cheating +7 +yes +92 +0 +kept row: group 7 is not a group of the survey "
           r"\(it has 1\)$"),
    Tamper("a kept response label the design does not have",
           both(f"UPDATE answer_counts SET answer = 'maybe' WHERE question_id = {FIRST} "
                "AND answer = 'yes'"),
           (f"UPDATE answer_counts SET answer = 'maybe' WHERE question_id = {FIRST} "
            "AND answer = 'yes'",),
           r"^exam_cheating +1 +maybe +92 +0 +kept row: 'maybe' is not an answer of question "
           r"exam_cheating \(yes, no, dont_know\)$"),
    Tamper("a kept row twice",
           (*LOOSE_COUNTS, f"INSERT INTO answer_counts SELECT * FROM answer_counts WHERE "
                           f"question_id = {FIRST} AND answer = 'no'"),
           ("ALTER TABLE answer_counts DROP CONSTRAINT pk_answer_counts",
            f"INSERT INTO answer_counts SELECT * FROM answer_counts WHERE question_id = {FIRST} "
            "AND answer = 'no'"),
           r"^exam_cheating +1 +no +232 +116 +kept in 2 rows$"),
    Tamper("a kept row missing",
           both(f"DELETE FROM answer_counts WHERE question_id = {FIRST} AND answer = 'no'"),
           (f"DELETE FROM answer_counts WHERE question_id = {FIRST} AND answer = 'no'",),
           r"^exam_cheating +1 +no +0 +116$", counts_says=""),
    Tamper("the number of respondents stored as text",
           both("UPDATE surveys SET known_respondents = 'lots'"), None,
           r"^respondents +\? +300$"),
    Tamper("a negative number of respondents",
           ("PRAGMA ignore_check_constraints = 1", "UPDATE surveys SET known_respondents = -1"),
           ("ALTER TABLE surveys DROP CONSTRAINT ck_surveys_known_respondents",
            "UPDATE surveys SET known_respondents = -1"),
           r"^respondents +-1 +300$"),
    Tamper("an answer with an escape sequence",
           both(f"UPDATE responses SET answer = {esc('answer', 'sqlite')} WHERE {ONE_ANSWER}"),
           (f"UPDATE responses SET answer = {esc('answer', 'postgresql')} WHERE {ONE_ANSWER}",),
           r"^exam_cheating +1 +\\x1b\[2J\w+ +- +1 +not counted: '\\x1b\[2J\w+' is not an "
           r"answer of question exam_cheating \(yes, no, dont_know\)$",
           repairable=False, counts_says=""),
    Tamper("an answer in a group the survey does not have",
           both(f"UPDATE responses SET group_number = 3 WHERE {ONE_ANSWER}"),
           (f"UPDATE responses SET group_number = 3 WHERE {ONE_ANSWER}",),
           r"^exam_cheating +3 +\w+ +- +1 +not counted: group 3 is not a group of the survey "
           r"\(it has 1\)$", repairable=False, counts_says=""),
    Tamper("a question id with control characters",
           both("UPDATE questions SET name = char(27) || ']0;owned' || char(7) || name "
                f"WHERE id = {FIRST}"),
           (f"UPDATE questions SET name = chr(27) || ']0;owned' || chr(7) || name "
            f"WHERE id = {FIRST}",),
           "", repairable=False, counts_says=(
               "the questions stored for survey 'academic_integrity' differ from its definition "
               "(question 1 is stored as '\\x1b]0;owned\\x07exam_cheating' but defined as "
               "'exam_cheating'): the database was changed outside surveykit; restore it from a "
               "backup")),
    Tamper("a stored definition that no longer parses",
           both("UPDATE survey_versions SET source = 'name = ['"),
           ("UPDATE survey_versions SET source = 'name = ['",),
           "", repairable=False, counts_says=(
               "not valid TOML: Invalid value (at end of document); the stored definition was "
               "changed outside surveykit: restore the database from a backup")),
    Tamper("a survey without a stored definition",
           both("DELETE FROM survey_versions"), None,
           "", repairable=False, counts_says=(
               "has no stored definition (its rows of survey_versions were deleted or emptied "
               "outside surveykit): restore the database from a backup")),
]


def cli(*args: str):
    result = run_cli(*args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def assert_one_line_error(result, *fragments: str) -> str:
    """Status 1, one escaped ``Error:`` line holding ``fragments``, no crash, no raw ESC."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "failed unexpectedly" not in lines[0], lines[0]
    assert "\x1b" not in result.stdout + result.stderr and "\x07" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def counts_json(url: str) -> dict:
    result = cli("counts", "--survey", SURVEY, "--db", url, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def tamper(url: str, statements: tuple[str, ...]) -> None:
    if url.startswith("sqlite"):
        # the sqlite3 shell's defaults: foreign keys off, any type in any column
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            for statement in statements:
                conn.execute(statement)
        finally:
            conn.close()
        return
    engine = store.open_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


@pytest.fixture(params=migrated.DATABASES)
def filled(request, tmp_path) -> Iterator[str]:
    """A database holding the sample survey and its long file, on SQLite and PostgreSQL: a
    copy of one filled once per test process (tests/migrated.py)."""
    with migrated.filled_database(request.param, add_sample_survey_and_answers,
                                  tmp_path) as url:
        yield url


@pytest.mark.parametrize("case", TAMPERS, ids=lambda case: case.name)
def test_a_tampered_database_is_checked_repaired_and_refused_in_one_line(filled, case):
    statements = case.sqlite if filled.startswith("sqlite") else case.postgresql
    if statements is None:
        pytest.skip("PostgreSQL's column types refuse this edit")
    before = counts_json(filled)
    tamper(filled, statements)

    # check lists it, escaped, and exits 1 with one line
    check = cli("check", "--survey", SURVEY, "--db", filled)
    line = assert_one_line_error(check)
    if case.shown:
        assert any(re.search(case.shown, row) for row in check.stdout.splitlines()), (
            case.shown, check.stdout)
        assert "--repair" in line
    else:
        assert case.counts_says in line
    data = json.loads(cli("check", "--survey", SURVEY, "--db", filled, "--format",
                          "json").stdout)
    assert data["ok"] is False

    # counts and report refuse kept counts that do not fit the survey; kept counts that fit
    # it are read as they are (a missing cell, answers changed after they were counted)
    for command in ("counts", "report"):
        result = cli(command, "--survey", SURVEY, "--db", filled)
        if case.counts_says:
            assert_one_line_error(result, case.counts_says)
        else:
            assert result.exit_code == 0, result.stderr

    # --repair rebuilds what the answers hold, never crashes
    repair = cli("check", "--survey", SURVEY, "--db", filled, "--repair")
    if case.repairable:
        assert repair.exit_code == 0, repair.stderr
        assert repair.stdout.splitlines()[-1] == (
            "Rebuilt the kept counts of survey 'academic_integrity' from its answers: 12 cells, "
            "1,172 answers, 300 respondents.")
        assert cli("check", "--survey", SURVEY, "--db", filled).exit_code == 0
        assert counts_json(filled) == before
        return
    assert_one_line_error(repair, RESTORE)
    assert_one_line_error(cli("check", "--survey", SURVEY, "--db", filled), RESTORE)
    if case.shown:  # an answer that cannot be counted is left out; the others count
        answered = [(q["id"], sum(q["answers"].values())) for q in counts_json(filled)["questions"]]
        assert answered == [(q["id"], sum(q["answers"].values()) - (q["id"] == "exam_cheating"))
                            for q in before["questions"]]
        assert cli("report", "--survey", SURVEY, "--db", filled).exit_code == 0


def test_check_shows_every_stored_value_escaped_in_text_and_json(filled):
    # a kept label and a stored answer that would clear the screen and retitle the terminal
    dialect = "sqlite" if filled.startswith("sqlite") else "postgresql"
    tamper(filled, (
        f"UPDATE answer_counts SET answer = {esc('answer', dialect)} WHERE question_id = "
        f"{FIRST} AND answer = 'no'",
        f"UPDATE responses SET answer = 'x' || {esc('answer', dialect)} WHERE {ONE_ANSWER}"))
    for args in ((), ("--repair",), ("--format", "json")):
        result = cli("check", "--survey", SURVEY, "--db", filled, *args)
        assert "\x1b" not in result.stdout + result.stderr, args
    data = json.loads(cli("check", "--survey", SURVEY, "--db", filled, "--format", "json").stdout)
    assert [u["answer"][:5] for u in data["uncountable"]] == ["x\x1b[2J"]
