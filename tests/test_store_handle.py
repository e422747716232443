"""``Database(url)``: one handle that owns its engine, checks the schema once, and reads a survey
in one snapshot. Real SQLite files and the real PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from surveykit import store
from surveykit.errors import StoreError
from surveykit.store import Database
from surveykit.store.importer import import_responses


def test_a_reading_equals_the_separate_reads(survey_engine, sample_survey, sample_survey_path):
    import_responses(survey_engine, sample_survey_path.parent / "responses_long.csv",
                     sample_survey.name)
    ids = [f"AI-{n:04d}" for n in range(40)]
    store.record_generation(survey_engine, sample_survey.name, ids, {})
    reading = Database(survey_engine).survey(sample_survey.name).read()
    assert reading.definition.source == sample_survey.source
    assert list(reading.counts) == store.count_responses(survey_engine, sample_survey.name)
    assert reading.issued == store.issued_respondent_count(survey_engine, sample_survey.name) == 40
    assert reading.code_tallies == store.code_tallies(survey_engine, sample_survey.name)
    assert sum(c.counts.total for c in reading.counts) > 0


def test_the_schema_is_checked_once_per_handle(survey_engine, sample_survey):
    checks = []

    @event.listens_for(survey_engine, "before_cursor_execute")
    def count(conn, cursor, statement, parameters, context, executemany):
        if "FROM alembic_version" in statement:
            checks.append(statement)

    database = Database(survey_engine)
    survey = database.survey(sample_survey.name)
    survey.read()
    survey.read()
    survey.definition()
    assert len(checks) == 1
    store.count_responses(survey_engine, sample_survey.name)
    store.count_responses(survey_engine, sample_survey.name)
    event.remove(survey_engine, "before_cursor_execute", count)
    assert len(checks) == 3  # the loose functions check on every call


def test_a_reading_is_one_snapshot_while_another_writer_commits(database_url, sample_survey):
    """Ids issued by another connection between the reading's first and later statements
    show in none of them; the next reading sees them all."""
    with Database(database_url) as database:
        database.init()
        database.add_survey(sample_survey)
        survey = database.survey(sample_survey.name)
        fired = []

        @event.listens_for(database.engine, "after_cursor_execute")
        def write_meanwhile(conn, cursor, statement, parameters, context, executemany):
            if not fired and "FROM surveys" in statement:
                fired.append(statement)
                with Database(database_url) as other:
                    other.survey(sample_survey.name).record_generation(
                        [f"AI-{n:04d}" for n in range(30)], {})

        reading = survey.read()
        event.remove(database.engine, "after_cursor_execute", write_meanwhile)
        assert fired, "the write ran inside the reading"
        assert reading.issued == 0 and reading.code_tallies is None
        assert survey.read().issued == 30


def test_the_handle_closes_the_engine_it_opened_and_leaves_a_given_one(tmp_path, sample_survey):
    path = tmp_path / "handle.db"
    with Database(str(path)) as database:
        database.init()
        database.add_survey(sample_survey)
        assert database.url == f"sqlite:///{path}"
        engine = database.engine
        with engine.connect():
            pass
        assert engine.pool.checkedin() == 1
    assert engine.pool.checkedin() == 0  # disposed: no connection left to the collector
    given = store.open_engine(str(path))
    try:
        with Database(given) as database:
            assert [s.name for s in database.surveys()] == [sample_survey.name]
        with given.connect():  # still the caller's, still open
            assert given.pool.checkedin() == 0
    finally:
        given.dispose()


def test_an_unknown_survey_is_refused_in_one_line(survey_engine):
    with pytest.raises(StoreError, match="^no survey named 'nope' in the database; known "
                                         "surveys: academic_integrity$"):
        Database(survey_engine).survey("nope").read()
