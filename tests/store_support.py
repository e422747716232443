"""Store helpers for tests: counts read only after the kept counts were checked, and CLI runs
that leave no database connection behind."""

from __future__ import annotations

import tempfile
import weakref
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import Engine, event

from surveykit.cli import main
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.answer_counts import check_counts


def checked_counts(engine, survey: str) -> list[store.QuestionCounts]:
    """``count_responses`` of ``survey``, after asserting that the kept counts equal the
    counts recomputed from the stored answers (``surveykit check``)."""
    check = check_counts(engine, survey)
    assert check.ok, check.to_dict()
    return store.count_responses(engine, survey)


def run_cli(*args: str):
    """Run ``surveykit ARGS`` in this process (Click's runner) as on a terminal, then close the
    connections of every engine the command opened.

    ``color=True``: Click strips escape sequences from what it prints to a pipe, so only a
    terminal shows whether a value read from the database reaches it raw. A real run ends
    its process, which closes its connections; here an engine kept alive (alembic's context,
    a failed command's traceback) would leave a PostgreSQL connection to warn when collected,
    in whatever test runs then.
    """
    opened: weakref.WeakSet[Engine] = weakref.WeakSet()

    def remember(connection) -> None:
        opened.add(connection.engine)

    event.listen(Engine, "engine_connect", remember)
    try:
        result = CliRunner().invoke(main, list(args), prog_name="surveykit", color=True)
    finally:
        event.remove(Engine, "engine_connect", remember)
    for engine in list(opened):
        engine.dispose()
    return result


def add_survey_text(url: str, source: str, file_name: str = "survey.toml") -> None:
    """``surveykit survey add`` of the survey file text ``source`` (written to a temporary
    folder as ``file_name``) into the migrated database at ``url``."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / file_name
        path.write_text(source, encoding="utf-8")
        result = run_cli("survey", "add", str(path), "--db", url)
        assert result.exit_code == 0, result.output


def add_sample_survey(url: str) -> None:
    """``surveykit survey add`` of sample_data/academic_integrity.toml into the migrated
    database at ``url``: the set-up of many CLI tests, made once per process with
    ``migrated.copy_filled(url, add_sample_survey)``."""
    survey = locate_resource("sample_data") / "academic_integrity.toml"
    result = run_cli("survey", "add", str(survey), "--db", url)
    assert result.exit_code == 0, result.output


def add_sample_survey_and_answers(url: str) -> None:
    """``add_sample_survey``, then ``surveykit import`` of sample_data/responses_long.csv
    (1,172 answers of 300 respondents): a fill for ``migrated.copy_filled``."""
    add_sample_survey(url)
    answers = locate_resource("sample_data") / "responses_long.csv"
    result = run_cli("import", str(answers), "--survey", "academic_integrity", "--db", url)
    assert result.exit_code == 0, result.output
