"""One handle on a surveykit database: ``Database(url)`` and its surveys (sqlite-utils' shape).

A :class:`Database` owns its engine (close it, or use it as a context manager),
checks the schema once, and hands out :class:`StoredSurvey` handles.
``StoredSurvey.read()`` reads everything a report needs (the definition, the
kept counts, the number of issued ids, the instruction totals) in one
snapshot, so an import committed meanwhile shows in all of them or in none;
each write (``record_generation``) is one transaction.

>>> from surveykit.resources import locate_resource
>>> from surveykit.definition.survey import load_survey_file
>>> survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
>>> with Database("sqlite://") as database:
...     _ = database.init()
...     database.add_survey(survey)
...     reading = database.survey(survey.name).read()
True
>>> reading.issued, [c.question_id for c in reading.counts][:2]
(0, ['exam_cheating', 'plagiarism'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from types import TracebackType
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.survey import Survey
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.store.answer_counts import read_kept
from surveykit.store.engines import display_url, open_engine, read_snapshot
from surveykit.store.frames import respondent_frame
from surveykit.store.issued import code_tallies_in, issued_count, record_generation
from surveykit.store.numeric_answers import (
    NumericAnswerRows,
    read_numeric_answers,
    read_numeric_counts,
)
from surveykit.store.schema import init_database, require_schema
from surveykit.store.surveys import (
    SurveySummary,
    SurveyUpdate,
    add_survey,
    list_surveys,
    stored_definition,
    survey_id,
    update_survey,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Database", "StoredSurvey", "SurveyReading"]


class Database:
    """A surveykit database at ``url`` (an SQLite path, any SQLAlchemy URL, None for
    $SURVEYKIT_DB or ``surveykit.db``), or on an ``Engine`` the caller owns.

    The handle opens (and :meth:`close` disposes of) its own engine; an engine
    handed in stays the caller's. The schema is checked on first use and not
    again.
    """

    def __init__(self, url: str | PathLike | Engine | None = None) -> None:
        self._owned = not isinstance(url, Engine)
        self.engine: Engine = open_engine(None if url is None else str(url)) \
            if self._owned else url
        self._checked = False

    def __enter__(self) -> Database:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the engine's connections (an engine handed in is left open)."""
        if self._owned:
            self.engine.dispose()

    def __repr__(self) -> str:
        return f"<Database {self.url}>"

    @property
    def url(self) -> str:
        """The database URL, with any password hidden."""
        return display_url(self.engine)

    def require_schema(self) -> None:
        """Raise a StoreError with the fix unless the schema is the newest; checked once."""
        if not self._checked:
            require_schema(self.engine)
            self._checked = True

    def init(self) -> str:
        """Create or upgrade the schema (the migrations); returns the revision."""
        revision = init_database(self.engine)
        self._checked = True
        return revision

    def add_survey(self, survey: Survey) -> bool:
        """Store ``survey`` (see :func:`surveykit.store.surveys.add_survey`)."""
        return add_survey(self.engine, survey)

    def update_survey(self, survey: Survey) -> SurveyUpdate:
        """Store ``survey`` as its next version (:func:`surveykit.store.surveys.update_survey`)."""
        return update_survey(self.engine, survey)

    def surveys(self) -> list[SurveySummary]:
        """Every stored survey with its numbers of questions, ids, respondents and answers."""
        return list_surveys(self.engine)

    def survey(self, name: str) -> StoredSurvey:
        """The stored survey ``name`` (nothing is read until asked)."""
        return StoredSurvey(database=self, name=name)


@dataclass(frozen=True)
class SurveyReading:
    """What one snapshot of a stored survey holds: its current definition, the kept counts
    per choice question (survey order), the number of issued ids and, when ids were issued,
    the instruction totals (question -> group -> code -> count; None otherwise), and the
    sums of each numeric question's answers (``numeric``, survey order)."""

    definition: Survey
    counts: tuple[QuestionCounts, ...]
    issued: int
    code_tallies: Mapping[str, Mapping[int, Mapping[str, int]]] | None
    numeric: tuple[NumericQuestionCounts, ...] = ()
    #: The numeric questions' answers (question id -> rows), when asked for.
    numeric_answers: Mapping[str, NumericAnswerRows] | None = None

    def all_counts(self) -> list[QuestionCounts | NumericQuestionCounts]:
        """The counts of every question, choice and numeric, in survey order."""
        by_id = {c.question_id: c for c in (*self.counts, *self.numeric)}
        return [by_id[q.id] for q in self.definition.questions if q.id in by_id]


@dataclass(frozen=True)
class StoredSurvey:
    """One survey of a :class:`Database`: reads in one snapshot, writes in one transaction."""

    database: Database
    name: str

    def read(self, *, survey: Survey | None = None, numeric_answers: int = 0
             ) -> SurveyReading:
        """The definition, counts, issued ids and instruction totals, from one snapshot.

        ``survey``, a definition the caller already parsed, spares parsing the
        stored one again when it is still the current one. ``numeric_answers``: read,
        in the same snapshot, the answers of each numeric question that has at most this
        many (for quantiles and plots; the counts alone give the mean).
        """
        self.database.require_schema()
        with read_snapshot(self.database.engine) as conn:
            key = survey_id(conn, self.name)
            definition = stored_definition(conn, key, self.name, survey)
            kept = read_kept(conn, key, definition)
            issued = issued_count(conn, key)
            tallies = code_tallies_in(conn, key) if issued else None
            numeric = tuple(read_numeric_counts(conn, key, definition))
            answers = {c.question_id: read_numeric_answers(conn, key, definition,
                                                           c.question_id)
                       for c in numeric if c.answered() <= numeric_answers
                       } if numeric_answers else None
        counts = tuple(
            QuestionCounts(question_id=name, counts=Counts.from_mapping(table),
                           missing=kept.respondents - sum(sum(g.values())
                                                          for g in table.values()))
            for name, table in kept.tables.items())
        return SurveyReading(definition=definition, counts=counts, issued=issued,
                             code_tallies=tallies, numeric=numeric,
                             numeric_answers=answers)

    def numeric_counts(self, questions: Sequence[str] | None = None
                       ) -> list[NumericQuestionCounts]:
        """n, sum, sum of squares and "don't know" per group of each numeric question (or of
        ``questions``), by one SQL aggregate
        (:func:`surveykit.store.numeric_answers.read_numeric_counts`)."""
        self.database.require_schema()
        with read_snapshot(self.database.engine) as conn:
            key = survey_id(conn, self.name)
            return read_numeric_counts(conn, key, stored_definition(conn, key, self.name),
                                       questions)

    def numeric_answers(self, question: str) -> NumericAnswerRows:
        """The stored answers to the numeric ``question`` (respondent ids, groups, values),
        for maximum likelihood, quantiles, regression and complex samples."""
        self.database.require_schema()
        with read_snapshot(self.database.engine) as conn:
            key = survey_id(conn, self.name)
            return read_numeric_answers(conn, key, stored_definition(conn, key, self.name),
                                        question)

    def definition(self) -> Survey:
        """The survey's current definition."""
        self.database.require_schema()
        with self.database.engine.connect() as conn:
            return stored_definition(conn, survey_id(conn, self.name), self.name)

    def respondent_frame(self, question: str, covariates: Sequence[str] = ()) -> pd.DataFrame:
        """The respondents who answered ``question``, with their group and ``covariates``
        (:func:`surveykit.store.frames.respondent_frame`; needs pandas)."""
        return respondent_frame(self.database.engine, self.name, question, covariates)

    def record_generation(self, respondent_ids: Sequence[str],
                          code_tallies: Mapping[str, Mapping[int, Mapping[str, int]]], *,
                          groups: Sequence[int] | None = None) -> None:
        """Register issued questionnaires and their instruction totals, in one transaction
        (:func:`surveykit.store.issued.record_generation`)."""
        record_generation(self.database.engine, self.name, respondent_ids, code_tallies,
                          groups=groups)

