"""One line, always (issue 19, item 8): the catch-all message of a failure nobody foresaw is
the exception's type and the first line of its message, never SQL, parameters or a driver's
DETAIL lines; and a design whose answers carry no information about pi is refused by
``survey add`` in one line, never a ZeroDivisionError. Real commands on real databases
(SQLite files and the PostgreSQL of SURVEYKIT_TEST_POSTGRES_URL)."""

from __future__ import annotations

import sqlite3

import migrated
import pytest
from sqlalchemy import text

from surveykit.designs import ForcedResponse, GeneralizedWarner, Warner, make_design
from surveykit.designs.base import check_identifiable
from surveykit.errors import ParameterError
from surveykit.resources import locate_resource
from surveykit.store import database as store
from tests.store_support import add_sample_survey, add_sample_survey_and_answers, run_cli

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data")


def cli(*args: str):
    return run_cli(*args)


def assert_one_line(result, status: int = 1) -> str:
    """Exit ``status``, nothing on stdout, one ``Error:`` line on stderr without SQL, its
    parameters or a traceback; returns the line."""
    assert result.exit_code == status, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for leak in ("[SQL", "[parameters", "SELECT", "INSERT", "LINE 1", "DETAIL", "HINT",
                 "Traceback", "sqlalche.me"):
        assert leak not in result.stderr, (leak, result.stderr)
    return lines[0]


@pytest.fixture
def filled(database_url: str) -> str:
    """A database with the example survey and its 1,172 long-format answers."""
    return migrated.copy_filled(database_url, add_sample_survey_and_answers)


def tamper(url: str, *statements: str) -> None:
    """Change the database behind surveykit's back, as a hand edit would."""
    engine = store.open_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


# -- the catch-all ----------------------------------------------------------------------------


def test_a_table_dropped_behind_surveykits_back_fails_in_one_line_without_sql(filled):
    # PostgreSQL's message goes on with 'LINE 2: FROM answer_counts' and a caret; SQLAlchemy
    # adds [SQL: SELECT ...] and the link to its docs: eight lines before, one now
    tamper(filled, "DROP TABLE answer_counts")
    line = assert_one_line(cli("counts", "--survey", SURVEY, "--db", filled))
    assert line.startswith("Error: surveykit failed unexpectedly (ProgrammingError: "
                           'relation "answer_counts" does not exist)' if "postgresql" in filled
                           else "Error: surveykit failed unexpectedly (OperationalError: no "
                                "such table: answer_counts)")
    assert line.endswith("set SURVEYKIT_DEBUG=1 to see where it happened")


def test_a_failing_insert_shows_neither_its_statement_nor_its_parameters(tmp_path):
    # a trigger left by another program that cannot run: the import's INSERT INTO imports
    # fails, and SQLAlchemy's message carried the file's name and sha256 as parameters
    url = migrated.copy_filled(f"sqlite:///{tmp_path / 't.db'}", add_sample_survey)
    with sqlite3.connect(tmp_path / "t.db") as conn:
        conn.execute("CREATE TRIGGER audit AFTER INSERT ON imports BEGIN "
                     "INSERT INTO audit_log VALUES (new.sha256); END")
    result = cli("import", str(SAMPLE / "responses_long.csv"), "--survey", SURVEY, "--db", url)
    line = assert_one_line(result)
    assert "(OperationalError: no such table: main.audit_log)" in line
    assert "responses_long.csv" not in line and "sha256" not in line


def test_an_escape_sequence_in_an_unexpected_error_is_shown_escaped(tmp_path):
    url = migrated.migrated_sqlite(tmp_path / "t.db")
    with sqlite3.connect(tmp_path / "t.db") as conn:
        conn.execute("CREATE TRIGGER evil BEFORE INSERT ON surveys BEGIN SELECT "
                     "no_such_function('\x1b[2J'); END")
    result = cli("survey", "add", str(SAMPLE / "academic_integrity.toml"), "--db", url)
    line = assert_one_line(result)
    assert "no such function: no_such_function" in line and "\x1b" not in result.stderr


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_refused_postgresql_connection_is_one_line(database_url):
    result = cli("counts", "--survey", SURVEY, "--db",
                 "postgresql://surveykit@127.0.0.1:9/nowhere")
    line = assert_one_line(result)
    assert line.startswith("Error: cannot connect to postgresql+psycopg://surveykit@127.0.0.1:9/"
                           "nowhere (")


# -- designs whose answers carry no information -------------------------------------------------


DEGENERATE = """\
name = "degenerate"
title = "Degenerate"

[design]
model = "generalized_warner"
p = 0.1
q = 0.09999999999999999

[[questions]]
id = "q1"
text = "Have you ever?"
"""


def test_survey_add_refuses_a_design_whose_answers_carry_no_information(tmp_path):
    # p and q one unit in the last place apart: accepted (p > q), then the readiness check's
    # report divided by P(yes | yes) - P(yes | no) read as decimals, 0: ZeroDivisionError
    url = migrated.migrated_sqlite(tmp_path / "t.db")
    survey = tmp_path / "degenerate.toml"
    survey.write_text(DEGENERATE, encoding="utf-8")
    line = assert_one_line(cli("survey", "add", str(survey), "--db", url))
    assert line == (
        f"Error: {survey}: design: design 'generalized_warner' (p = 0.1, "
        "q = 0.09999999999999999): the answers carry no information about pi: different true "
        "states give the same answers with the same probabilities (to 10 decimals); choose "
        "parameters further apart")
    assert "degenerate" not in cli("survey", "list", "--db", url).stdout


@pytest.mark.parametrize("build, shown", [
    (lambda: GeneralizedWarner(p=0.1, q=0.09999999999999999), "p = 0.1, q = 0.09999999999999999"),
    (lambda: Warner(p=0.5000000000000001), "p = 0.5000000000000001, dont_know = 0.0"),
    (lambda: ForcedResponse(p=[0.5, 0.49999999999999994]),
     "p = [0.5, 0.49999999999999994], dont_know = 0.0"),
])
def test_every_design_whose_states_answer_alike_is_refused_naming_its_parameters(build, shown):
    design = build()  # the presets' own checks (p > q, p != 0.5, sum < 1) pass by one ulp
    with pytest.raises(ParameterError) as error:
        check_identifiable(design)
    assert f"({shown}): the answers carry no information about pi: " in str(error.value)
    name, parameters = design.model, design.parameters()
    with pytest.raises(ParameterError, match="carry no information about pi"):
        make_design(name, **parameters)


def test_estimate_refuses_a_design_whose_answers_carry_no_information_in_one_line():
    # on main: ZeroDivisionError: Fraction(-1, 0) in the exact pi_hat
    result = cli("estimate", "--yes", "3", "--no", "4", "--dont-know-count", "1", "--p",
                 "0.1", "--q", "0.09999999999999999")
    line = assert_one_line(result, status=2)
    assert line == ("Error: P(first answer | yes) (0.1) and P(first answer | no) "
                    "(0.09999999999999999) differ only by round-off: the answers carry no "
                    "information about pi; choose design parameters further apart")
