"""Web submissions: all answers of one respondent in one transaction, idempotent, checked.

``surveykit serve`` stores what a respondent's browser sends (an id and one
answer per question) under the rules imports follow
(:mod:`surveykit.store.importer`):

* **atomic**: every answer of the respondent is stored, or none: a refused
  submission changes nothing (one transaction per submission, or a SAVEPOINT
  of its own inside a group commit: :meth:`Submissions.record_batch`);
* **idempotent**: a respondent who already has answers in the survey (from
  the web or from any import) may send the *same* answers again, which
  changes nothing (:attr:`SubmissionResult.already_recorded`); different
  answers are a :class:`SubmissionConflict` (HTTP 409);
* **only issued ids** once the survey has issued ids, and the respondent's
  group is the one its id was issued with (multi-group surveys need issued
  ids: the group decides which instructions the page draws);
* **labels checked** against each question's design (``response_labels``):
  the page sends labels, never spellings, so nothing is normalized but the id;
* **numbers checked** for numeric questions (issue 23): the reported number as
  a JSON text of digits with an optional '-' and '.' (at most
  :data:`NUMBER_DIGITS` digits on either side of the point), with at most the
  question's ``decimals``, within the answers its design can give for its
  ``range`` (:func:`surveykit.designs.quantitative_privacy.answer_bounds`,
  widened by half a unit of the last decimal for the respondent's rounding, as
  the page checks them) when that is bounded; or ``"dont_know"`` when the design has that branch.
  Stored as canonical text (:func:`surveykit.vocabulary.decimal_text`:
  "1234.5", "0", "-3").

How web answers are recorded: ``responses`` rows like any import's, whose
``import_id`` points to one ``imports`` row per survey and UTC day, named
``web YYYY-MM-DD`` with ``file_format = "web"``. Its ``sha256`` is the
SHA-256 of the text ``surveykit web YYYY-MM-DD`` (no file has that content),
so (survey, sha256) stays unique and concurrent first submissions of a day
create it once (INSERT ... ON CONFLICT DO NOTHING). Each submission adds 1
to its ``rows_read`` (one respondent, like a wide row), the answers stored to
``imported`` and the questions left out to ``missing``; its ``imported_at``
is the day's midnight UTC, so no stored time dates any respondent's answers.
Each submission adds its answers to choice questions to the kept counts
(:mod:`surveykit.store.answer_counts`; numeric answers are not tallied per
value) in the same transaction, so
``counts`` and ``report`` see web answers exactly like imported ones;
``survey list`` counts one import per day of web collection.

How a submission runs (issue 25: the server's CPU per submission): on driver
connections kept for the survey (:class:`_Connections`), not through SQLAlchemy's
per-statement machinery; one SELECT reads the id's group and whether ids were
issued; then the answers are inserted without reading earlier ones: the
primary key of ``responses`` finds a respondent who has answers, and only then
are they read and compared (a repeat or a conflict; nothing was written). On
SQLite the writes are statements of one transaction (BEGIN IMMEDIATE). On
PostgreSQL, once the day's import record exists, they are one statement in
autocommit (atomic like a transaction: :data:`_POSTGRES_WRITES`); the first
submission of a day, and every submission of a survey with ``[sampling]``, use
the transaction.

Group commit (:meth:`Submissions.record_batch`, what ``surveykit serve``
uses): the submissions that arrived while the last batch was written go into
one transaction, checked in order, so that a copy later in the batch is a
repeat of the earlier one (or a conflict) and a refused one touches no other.
The batch is checked as a set (:meth:`Submissions._write_batch_checked`): one
statement reads every id's group and whether it has answers
(:data:`_STATUSES`); ids with answers are compared with them; the new
respondents' answers and known ids are written with one statement per table.
The kept counts, the number of known respondents and the day's import record
change once, by the batch's sums. On PostgreSQL a batch of respondents without
answers, each sent once (the common case), is two statements whatever its size:
the statuses, then every write in one (:data:`_POSTGRES_WRITES`). Should a
write fail (on PostgreSQL another writer stored one of the ids between the
check and the insert; on SQLite nobody can, the batch holds the write lock from
its check to its commit), nothing of it was written and the batch runs again
with a SAVEPOINT per submission (:meth:`Submissions._write_batch`, also what a
survey with ``[sampling]`` uses), each getting its own outcome. No submission
of a batch is final before its commit: the caller answers none before
:meth:`Submissions.record_batch` returns.

Concurrency: on SQLite, writers queue on the database lock (BEGIN IMMEDIATE)
and, inside one process, on a lock of their own, so that waiting threads do
not poll SQLite's busy handler. On PostgreSQL the primary key of
``responses`` serializes two submissions of one respondent: the later one
fails its INSERT, rolls back and looks again (then it is a repeat or a
conflict).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from operator import itemgetter

from sqlalchemy import Engine, bindparam, event, exists, func, literal_column, select
from sqlalchemy import exc as sa_exc

from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Question, Survey
from surveykit.designs.quantitative_privacy import answer_bounds
from surveykit.errors import ParameterError, StoreError
from surveykit.reading.responses import canonical_respondent_id
from surveykit.respondent_ids import diagnose_unknown_id
from surveykit.store import answer_counts, kept_cells
from surveykit.store import database as store
from surveykit.vocabulary import decimal_text

__all__ = [
    "NUMBER_DIGITS",
    "NotIssuedError",
    "NumberAnswers",
    "RespondentStatus",
    "SubmissionConflict",
    "SubmissionError",
    "SubmissionResult",
    "Submissions",
    "WEB_FORMAT",
    "open_submissions",
    "record_submission",
    "web_import_name",
]

#: ``imports.file_format`` of the daily web import records.
WEB_FORMAT = "web"
# Ids a browser may send: letters, digits and a few separators (issued ids, e-mail-like
# codes); nothing that means something in HTML, SQL, CSV or a terminal.
_WEB_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:@+-]{{0,{RESPONDENT_ID_LENGTH - 1}}}\Z")
#: Most digits a numeric answer from the web may have before, and after, the decimal point.
NUMBER_DIGITS = 15
_NUMBER = re.compile(rf"-?[0-9]{{1,{NUMBER_DIGITS}}}(\.[0-9]{{1,{NUMBER_DIGITS}}})?\Z")
# A submission that keeps meeting concurrent ones for the same respondent gives up.
_ATTEMPTS = 3


class SubmissionError(ParameterError):
    """A submission is malformed (bad id, unknown question, wrong label); nothing was stored.

    Messages never repeat what the client sent: they are shown to anybody.
    """


class NotIssuedError(StoreError):
    """The respondent id was not issued for the survey (or has no group where one is needed)."""


class SubmissionConflict(StoreError):
    """Different answers are already recorded for this respondent; nothing was changed."""


@dataclass(frozen=True)
class SubmissionResult:
    """What a submission did: ``answers`` stored now (0 when ``already_recorded``)."""

    survey: str
    respondent_id: str
    group: int
    answers: int
    already_recorded: bool
    import_id: int


@dataclass(frozen=True)
class RespondentStatus:
    """An id as the survey knows it: its canonical form, its group, whether it has answers."""

    respondent_id: str
    group: int
    answered: bool


@dataclass(frozen=True)
class NumberAnswers:
    """What a numeric question accepts from the web: a reported number with at most
    ``decimals`` decimals (None: up to :data:`NUMBER_DIGITS`), within [``low``, ``high``]
    (infinite ends: no bound), or "don't know" when ``dont_know`` (see the module docstring).

    >>> from surveykit.designs.quantitative import Eriksson
    >>> from surveykit.definition.survey import Question
    >>> rule = NumberAnswers.of(Question("income", "Income?", Eriksson(
    ...     p=0.6, scrambler=[0, 1000, 5000], dont_know=0.1), type="number",
    ...     range=(0, 100000), decimals=0))
    >>> rule.low, rule.high, rule.canonical("income", "01200.00")
    (-0.5, 100000.5, '1200')
    """

    decimals: int | None
    low: float
    high: float
    dont_know: bool

    @classmethod
    def of(cls, question: Question) -> NumberAnswers:
        """The rule of numeric ``question``: its decimals, its design's answer bounds for its
        range (none without a range), its design's "don't know" branch."""
        design = question.design
        low, high = -math.inf, math.inf
        if question.range is not None:
            low, high = answer_bounds(design, *question.range, decimals=question.decimals)
        return cls(decimals=question.decimals, low=low, high=high,
                   dont_know=design.designed_dont_know > 0)

    def canonical(self, name: str, answer: object) -> str:
        """The stored text of ``answer`` to question ``name``, or SubmissionError."""
        if self.dont_know and answer == "dont_know":
            return "dont_know"
        allowed = "a number" + (' or "dont_know"' if self.dont_know else "")
        if not isinstance(answer, str) or not _NUMBER.match(answer):
            raise SubmissionError(
                f"the answer to question {name!r} must be {allowed}, as a text of digits with "
                f"an optional '-' and '.' (at most {NUMBER_DIGITS} digits before and after "
                "the point)")
        value = Decimal(answer)
        text = decimal_text(value)
        decimals = len(text.partition(".")[2])
        if self.decimals is not None and decimals > self.decimals:
            raise SubmissionError(
                f"the answer to question {name!r} must have at most {self.decimals} "
                f"decimal{'s' if self.decimals != 1 else ''}")
        if not self.low <= float(value) <= self.high:
            raise SubmissionError(
                f"the answer to question {name!r} must be between {self.low:g} and "
                f"{self.high:g}: no respondent following its design can report a number "
                "outside")
        return text


def web_import_name(moment: datetime, version: int = 1) -> tuple[str, str]:
    """The ``(file_name, sha256)`` of the web import record of ``moment``'s UTC day and the
    survey version the server reads answers with (an update starts a new record).

    >>> web_import_name(datetime(2026, 11, 23, 23, 30, tzinfo=UTC))[0]
    'web 2026-11-23'
    """
    return _day_record_name(moment.astimezone(UTC).date(), version)


@lru_cache(maxsize=16)
def _day_record_name(day: date, version: int) -> tuple[str, str]:
    # a SHA-256 per submission cost more than every check of its answers
    text = day.isoformat()
    return f"web {text}", hashlib.sha256(f"surveykit web {text} v{version}".encode()).hexdigest()


def canonical_web_id(value: object) -> str:
    """The id a browser sent, trimmed and (if it reads as an issued id) in printed form.

    Raises SubmissionError unless it then is 1 to 200 letters, digits and ``. _ : @ + -``.

    >>> canonical_web_id(" 7kq2 m9xd 4frt 8bt "), canonical_web_id("class3-017")
    ('7KQ2-M9XD-4FRT-8BT', 'class3-017')
    """
    if not isinstance(value, str):
        raise SubmissionError("respondent_id must be a text")
    text = canonical_respondent_id(value.strip())
    if not _WEB_ID.match(text):
        raise SubmissionError(
            f"respondent_id must be 1 to {RESPONDENT_ID_LENGTH} letters, digits and . _ : @ + - "
            "(starting with a letter or digit)")
    return text


class _Prepared:
    """One statement compiled once into the driver's SQL, run on the driver's cursor.

    A submission runs seven small statements; through SQLAlchemy each costs
    more Python time (compiling a multi-row INSERT, building parameters, the
    execution context) than the database spends on it. Compiled here once
    (constants such as the survey's question keys rendered in), each run is
    one ``cursor.execute`` with a tuple (qmark drivers) or a dict (psycopg);
    the transaction stays SQLAlchemy's (:func:`surveykit.store.database.write_transaction`).
    """

    def __init__(self, dialect, statement) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self._defaults = dict(compiled.params)
        self._order = tuple(compiled.positiontup) if compiled.positional else None
        # the values in the statement's order, in C (itemgetter of one name gives no tuple)
        self._pick = (None if self._order is None
                      else itemgetter(*self._order) if len(self._order) > 1
                      else (lambda merged, name=self._order[0]: (merged[name],)))

    @classmethod
    def text(cls, sql: str) -> _Prepared:
        """A statement already in the driver's SQL, with named parameters in the driver's
        style (``%(name)s`` for psycopg, ``:name`` for sqlite3)."""
        prepared = cls.__new__(cls)
        prepared.sql, prepared._defaults, prepared._order, prepared._pick = sql, {}, None, None
        return prepared

    def parameters(self, values: Mapping[str, object]) -> tuple | dict:
        merged = self._defaults | values
        return merged if self._pick is None else self._pick(merged)


class _Cursor:
    """A cursor of one driver connection; driver errors become SQLAlchemy's (an
    IntegrityError stays one, which :meth:`Submissions.record` relies on), with the
    statement's parameters hidden."""

    def __init__(self, connection, dialect) -> None:
        self._cursor = connection.cursor()
        self._dialect = dialect
        self._error = dialect.loaded_dbapi.Error

    def run(self, prepared: _Prepared, values: Mapping[str, object]):
        return self._call(prepared.sql, self._cursor.execute, prepared.parameters(values))

    def run_many(self, prepared: _Prepared, rows: list[Mapping[str, object]]):
        """``prepared`` once per row; the cursor (its ``rowcount``: the rows changed in all)."""
        return self._call(prepared.sql, self._cursor.executemany,
                          [prepared.parameters(row) for row in rows])

    def run_sql(self, sql: str, parameters: tuple | Mapping[str, object] = ()) -> None:
        """A statement in the driver's own SQL (BEGIN IMMEDIATE on SQLite; statements
        compiled elsewhere, as a sampled survey's kept cells)."""
        self._call(sql, self._cursor.execute, parameters)

    def _call(self, sql: str, method, parameters):
        try:
            method(sql, parameters)
        except self._error as exc:
            # the driver's message only in the exception's cause: parameters never shown
            raise sa_exc.DBAPIError.instance(sql, None, exc, self._error,
                                             hide_parameters=True,
                                             dialect=self._dialect) from exc
        return self._cursor


class _Connections:
    """Driver connections kept open for one survey's submissions, one per concurrent writer.

    Through SQLAlchemy a transaction of a few small statements costs more Python time
    (a pooled connection's checkout and reset, ``begin``/``commit`` events, execution
    contexts) than the database spends on it: a submission took 1.05 ms of CPU on
    SQLite, 0.45 ms of which the same statements on the bare driver cost. These
    connections come from the engine (its connect events ran: foreign keys, WAL and the
    busy timeout on SQLite), are detached from its pool, and are closed when the engine
    is disposed (or by :meth:`close`). A connection whose rollback fails (the server
    went away) is dropped; the next transaction opens a new one.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._dialect = engine.dialect
        self._sqlite = engine.dialect.name == "sqlite"
        self._error = engine.dialect.loaded_dbapi.Error
        self._idle: list = []
        self._every: list = []
        self._guard = threading.Lock()
        event.listen(engine, "engine_disposed", self._disposed)

    @property
    def engine(self) -> Engine:
        """The engine the connections come from (its dialect compiles statements)."""
        return self._engine

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[_Cursor]:
        """One transaction on a kept connection: committed at the end, rolled back on any
        error. On SQLite a writing one begins IMMEDIATE (it queues for the write lock)."""
        with self._held() as connection:
            cursor = _Cursor(connection, self._dialect)
            cursor.run_sql("BEGIN IMMEDIATE" if write and self._sqlite else "BEGIN")
            yield cursor
            try:
                connection.commit()
            except self._error as exc:
                raise sa_exc.DBAPIError.instance("COMMIT", None, exc, self._error,
                                                 hide_parameters=True,
                                                 dialect=self._dialect) from exc

    @contextmanager
    def statement(self) -> Iterator[_Cursor]:
        """A kept PostgreSQL connection in autocommit: each statement is its own
        transaction (one statement that writes everything is atomic by itself)."""
        with self._held() as connection:
            yield _Cursor(connection, self._dialect)

    @contextmanager
    def _held(self) -> Iterator[object]:
        try:
            connection = self._idle.pop()  # atomic: no two threads get one connection
        except IndexError:
            connection = self._open()
        try:
            yield connection
        except BaseException:
            try:
                connection.rollback()  # nothing to roll back (autocommit): nothing sent
            except Exception:
                self._drop(connection)
                raise
            self._idle.append(connection)
            raise
        self._idle.append(connection)

    def close(self) -> None:
        """Close every kept connection (a later transaction opens a new one)."""
        with self._guard:
            every, self._every, self._idle = self._every, [], []
        for connection in every:
            try:
                connection.close()
            except Exception:  # already broken: nothing left to close
                pass

    def _open(self):
        fairy = self._engine.raw_connection()
        fairy.detach()  # ours from now on: the pool neither resets nor closes it
        connection = fairy.dbapi_connection
        if not self._sqlite:
            connection.autocommit = True  # transactions say BEGIN (see statement())
        with self._guard:
            self._every.append(connection)
        return connection

    def _drop(self, connection) -> None:
        with self._guard:
            if connection in self._every:
                self._every.remove(connection)
        try:
            connection.close()
        except Exception:
            pass

    def _disposed(self, engine: Engine) -> None:
        self.close()


@dataclass(frozen=True)
class _Statements:
    """The statements of one submission for one survey, compiled for the engine's dialect."""

    group: _Prepared
    existing: _Prepared
    insert_answers: _Prepared
    add_respondent: _Prepared
    add_counts: _Prepared
    add_respondents: _Prepared
    count_import: _Prepared
    find_import: _Prepared
    add_import: _Prepared
    # the groups of many ids, whether they have answers, in one statement (_STATUSES)
    statuses: _Prepared
    # PostgreSQL: every write of new submissions in one statement (see _POSTGRES_WRITES)
    write_all: _Prepared | None

    @classmethod
    def compile(cls, engine: Engine, survey_key: int,
                question_keys: Mapping[str, int]) -> _Statements:
        dialect = engine.dialect
        respondents, responses, imports = store.respondents, store.responses, store.imports
        key = bindparam("b_survey", survey_key)
        respondent = bindparam("b_respondent")
        # one round trip: the id's group (0: issued without one, NULL: not issued) and
        # whether the survey has issued any id
        group_of = select(func.coalesce(respondents.c.group_number, 0)).where(
            respondents.c.survey_id == key,
            respondents.c.respondent_id == respondent).scalar_subquery()
        group = select(group_of, exists().where(respondents.c.survey_id == key))
        # question_id IN (...) keeps the lookup on the primary key (survey, question,
        # respondent); the survey's question keys are constants of the statement
        existing = select(responses.c.question_id, responses.c.answer,
                          responses.c.import_id).where(
            responses.c.survey_id == key,
            responses.c.question_id.in_([literal_column(str(int(question)))
                                         for question in question_keys.values()]),
            responses.c.respondent_id == respondent)
        columns = ("question_id", "respondent_id", "answer", "group_number", "import_id")
        insert_answers = responses.insert().values(
            survey_id=key, **{name: bindparam(f"b_{name}") for name in columns})
        # (the statement builders read only the dialect, which the engine has)
        add_respondent = answer_counts.known_respondent_insert_statement(engine).values(
            survey_id=key, respondent_id=respondent)
        cell = ("question_id", "group_number", "answer", "count")
        add_counts = answer_counts.count_upsert_statement(engine).values(
            survey_id=key, **{name: bindparam(f"b_{name}") for name in cell})
        count_import = imports.update().where(imports.c.id == bindparam("b_import")).values(
            rows_read=imports.c.rows_read + bindparam("b_rows"),
            imported=imports.c.imported + bindparam("b_imported"),
            missing=imports.c.missing + bindparam("b_missing"))
        find_import = select(imports.c.id).where(imports.c.survey_id == key,
                                                 imports.c.sha256 == bindparam("b_sha256"))
        record = ("file_name", "sha256", "file_format", "imported_at", "survey_version")
        add_import = store.dialect_insert(engine, imports).values(
            survey_id=key, rows_read=0, imported=0, replaced=0, rejected=0, missing=0,
            **{name: bindparam(f"b_{name}") for name in record},
        ).on_conflict_do_nothing(index_elements=[imports.c.survey_id, imports.c.sha256])
        return cls(*(_Prepared(dialect, statement) for statement in (
            group, existing, insert_answers, add_respondent, add_counts,
            answer_counts.known_respondents_update_statement(), count_import, find_import,
            add_import)), write_all=(_Prepared.text(_POSTGRES_WRITES)
                                     if dialect.name == "postgresql" else None),
            statuses=_Prepared.text(_STATUSES[dialect.name == "postgresql"].format(
                questions=", ".join(str(int(question))
                                    for question in question_keys.values()))))


# PostgreSQL: the writes of one or more new respondents' submissions as one statement, run
# in autocommit (a statement is atomic: all of it or nothing), so a submission is two round
# trips (the ids' groups, then this) where seven statements between BEGIN and COMMIT took
# nine, and a group commit of any size is the same two. The same writes as
# Submissions._write's, in the same order: the answers (the primary key finds a repeat),
# the known respondents, the kept counts (one row per cell, with the batch's count), the
# survey's number of known respondents (by the ones that are new) and the day's import
# record. The order is forced: each part reads the one before (PostgreSQL otherwise runs the
# parts the final SELECT does not read last, and two writers locking the kept counts and
# the day's record in opposite orders deadlock).
_POSTGRES_WRITES = """\
WITH answers AS (
  INSERT INTO responses (survey_id, question_id, respondent_id, answer, group_number,
                         import_id)
  SELECT %(b_survey)s, question, respondent, answer, grp, %(b_import)s
  FROM unnest(%(b_questions)s::integer[], %(b_respondents)s::varchar[],
              %(b_answers)s::varchar[], %(b_groups)s::integer[])
       AS cell(question, respondent, answer, grp)
  RETURNING 1
), known AS (
  INSERT INTO known_respondents (survey_id, respondent_id)
  SELECT %(b_survey)s, respondent FROM unnest(%(b_new)s::varchar[]) AS new(respondent)
  WHERE EXISTS (SELECT FROM answers)
  ON CONFLICT (survey_id, respondent_id) DO NOTHING
  RETURNING 1
), cells AS (
  INSERT INTO answer_counts (survey_id, question_id, group_number, answer, count)
  SELECT %(b_survey)s, question, grp, answer, n
  FROM unnest(%(b_counted)s::integer[], %(b_counted_groups)s::integer[],
              %(b_counted_answers)s::varchar[], %(b_counts)s::bigint[])
       AS cell(question, grp, answer, n)
  WHERE (SELECT count(*) FROM known) >= 0
  ON CONFLICT (survey_id, question_id, group_number, answer)
  DO UPDATE SET count = answer_counts.count + excluded.count
  RETURNING 1
), respondents_known AS (
  UPDATE surveys SET known_respondents = known_respondents + (SELECT count(*) FROM known)
  WHERE id = %(b_survey)s AND EXISTS (SELECT FROM known)
    AND (SELECT count(*) FROM cells) >= 0
  RETURNING 1
), day AS (
  UPDATE imports SET rows_read = rows_read + %(b_rows)s, imported = imported + %(b_imported)s,
                     missing = missing + %(b_missing)s
  WHERE id = %(b_import)s AND (SELECT count(*) FROM respondents_known) >= 0
  RETURNING 1
)
SELECT (SELECT count(*) FROM answers), (SELECT count(*) FROM day)"""

# For each id of a group commit, its group (NULL: not issued; 0: issued without one),
# whether it has answers already, and whether the survey has issued any id: the statement
# Submissions._statements.group asks for one id, for many at once. The question keys are
# the survey's (constants of the statement: {questions}). The ids: a PostgreSQL array, or
# on SQLite a JSON array (json_each), so that one statement takes a batch of any size.
# Indexed by "is PostgreSQL".
_STATUSES = ("""\
SELECT ids.value,
  (SELECT coalesce(issued.group_number, 0) FROM respondents AS issued
   WHERE issued.survey_id = :b_survey AND issued.respondent_id = ids.value),
  EXISTS (SELECT 1 FROM responses
          WHERE responses.survey_id = :b_survey AND responses.question_id IN ({questions})
            AND responses.respondent_id = ids.value),
  EXISTS (SELECT 1 FROM respondents WHERE respondents.survey_id = :b_survey)
FROM json_each(:b_respondents) AS ids""", """\
SELECT ids.respondent_id,
  (SELECT coalesce(issued.group_number, 0) FROM respondents AS issued
   WHERE issued.survey_id = %(b_survey)s AND issued.respondent_id = ids.respondent_id),
  EXISTS (SELECT FROM responses
          WHERE responses.survey_id = %(b_survey)s AND responses.question_id IN ({questions})
            AND responses.respondent_id = ids.respondent_id),
  EXISTS (SELECT FROM respondents WHERE respondents.survey_id = %(b_survey)s)
FROM unnest(%(b_respondents)s::varchar[]) AS ids(respondent_id)""")


class _Unexpected(Exception):
    """A checked group commit met what its check ruled out; raised inside the transaction
    so that it rolls back (the batch is then written a submission at a time)."""


class _Answered(Exception):
    """The answers' INSERT met the primary key: the respondent has answers (or a concurrent
    submission is storing them); raised inside the transaction so that it rolls back."""

    def __init__(self, group: int) -> None:
        super().__init__(group)
        self.group = group


@dataclass(frozen=True)
class Submissions:
    """One survey's web submissions on one database (open with :func:`open_submissions`).

    The survey, its database id and its questions' ids are read once; every
    :meth:`record` is one transaction on a kept driver connection
    (:class:`_Connections`; :meth:`close` closes them, as disposing the engine does).
    """

    engine: Engine
    survey: Survey
    survey_key: int
    question_keys: Mapping[str, int]
    _labels: Mapping[str, frozenset[str] | NumberAnswers] = field(repr=False)
    _lock: threading.Lock | None = field(repr=False, compare=False)
    _statements: _Statements = field(repr=False, compare=False)
    _connections: _Connections = field(repr=False, compare=False)
    survey_version: int = 1
    # database ids of the numeric questions: their answers are not tallied in answer_counts
    _numeric: frozenset[int] = field(default=frozenset(), repr=False)
    # The web import record of each day, once committed (it is never deleted while the
    # server runs; if it were, the next submission's insert fails and looks it up again).
    _known: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def check(self, respondent_id: object) -> RespondentStatus:
        """The canonical id, its group and whether it has answers; NotIssuedError if refused."""
        canonical = canonical_web_id(respondent_id)
        with self._connections.transaction(write=False) as cursor:
            group = self._group(cursor, canonical)
            answered = bool(self._existing(cursor, canonical))
        return RespondentStatus(respondent_id=canonical, group=group, answered=answered)

    def close(self) -> None:
        """Close the driver connections kept for submissions (the next one opens anew)."""
        self._connections.close()

    def record(self, respondent_id: object, answers: object, *,
               now: datetime | None = None) -> SubmissionResult:
        """Store every answer of one respondent at once (see the module docstring).

        ``answers`` maps question ids to response labels (at least one
        question). Raises SubmissionError (malformed), NotIssuedError (id not
        issued) or SubmissionConflict (different answers already recorded).
        """
        canonical = canonical_web_id(respondent_id)
        wanted = self._checked_answers(answers)
        moment = now or datetime.now(UTC)
        for _ in range(_ATTEMPTS):
            try:
                return self._record(canonical, wanted, moment)
            except _Answered as answered:
                result = self._repeat(canonical, wanted, answered.group)
            except sa_exc.IntegrityError:
                result = None
            if result is not None:
                return result
            # a concurrent submission for this respondent was rolled back, or the day's
            # import record is gone: look everything up again
            self._known.clear()
        raise StoreError(f"other submissions for this respondent kept arriving at the same "
                         f"time; nothing was stored for it in survey {self.survey.name!r}: "
                         "send the answers again")

    def _record(self, respondent_id: str, wanted: dict[str, str],
                moment: datetime) -> SubmissionResult:
        """Store the answers of a respondent who has none. The answers' INSERT is what
        finds out otherwise (the primary key of ``responses``: :class:`_Answered`), so a
        new respondent costs no read of earlier answers."""
        file_name, digest = web_import_name(moment, self.survey_version)
        # question order: the same order of row locks in every writer
        cells = sorted((self.question_keys[name], answer) for name, answer in wanted.items())
        counted = [(question, answer) for question, answer in cells
                   if question not in self._numeric]
        # the first submission of a day creates the day's import record, in a transaction
        # that a repeat rolls back
        if (self._statements.write_all is not None and self.survey.sampling is None
                and digest in self._known):
            import_id, group = self._write_at_once(respondent_id, wanted, cells, counted,
                                                   self._known[digest])
        else:
            import_id, group = self._write(respondent_id, wanted, moment, cells, counted)
        self._known[digest] = import_id  # committed: it exists from now on
        return self._recorded(respondent_id, group, len(wanted), import_id)

    def _write_at_once(self, respondent_id: str, wanted: dict[str, str],
                       cells: list[tuple[int, str]], counted: list[tuple[int, str]],
                       import_id: int) -> tuple[int, int]:
        """PostgreSQL: the id's group, then every write in one statement (_POSTGRES_WRITES).

        Reading the group outside the writing statement changes nothing: an id once
        issued keeps its group, and one issued between the two is as if issued after."""
        with self._connections.statement() as cursor:
            group = self._group(cursor, respondent_id)
            try:
                self._insert_new(cursor, [(respondent_id, wanted, group)], import_id)
            except sa_exc.IntegrityError:
                raise _Answered(group) from None
        return import_id, group

    def _insert_new(self, cursor: _Cursor, new: list[tuple[str, dict[str, str], int]],
                    import_id: int) -> None:
        """PostgreSQL: the submissions of respondents without answers, ``(id, answers,
        group)``, with the kept counts, known respondents and the day's record, in one
        statement (_POSTGRES_WRITES); IntegrityError when one of them has answers."""
        columns: tuple[list, list, list, list] = ([], [], [], [])
        added: Counter[tuple[int, int, str]] = Counter()
        imported = 0
        for respondent_id, wanted, group in new:
            # question order: the same order of row locks in every writer
            for question, answer in sorted((self.question_keys[name], answer)
                                           for name, answer in wanted.items()):
                for column, value in zip(columns, (question, respondent_id, answer, group),
                                         strict=True):
                    column.append(value)
                if question not in self._numeric:
                    added[question, group, answer] += 1
            imported += len(wanted)
        cells = sorted(added.items())
        stored, _ = cursor.run(self._statements.write_all, {
            "b_survey": self.survey_key, "b_import": import_id,
            "b_questions": columns[0], "b_respondents": columns[1],
            "b_answers": columns[2], "b_groups": columns[3],
            "b_new": [respondent_id for respondent_id, _, _ in new],
            "b_counted": [question for (question, _, _), _ in cells],
            "b_counted_groups": [group for (_, group, _), _ in cells],
            "b_counted_answers": [answer for (_, _, answer), _ in cells],
            "b_counts": [count for _, count in cells],
            "b_rows": len(new), "b_imported": imported,
            "b_missing": len(new) * len(self.question_keys) - imported}).fetchone()
        if stored != len(columns[0]):  # cannot happen: the statement inserts a row per cell
            raise StoreError(f"web submissions stored {stored} of {len(columns[0])} answers")

    def _write(self, respondent_id: str, wanted: dict[str, str], moment: datetime,
               cells: list[tuple[int, str]], counted: list[tuple[int, str]]
               ) -> tuple[int, int]:
        """The writes as statements of one transaction (SQLite; a survey with [sampling])."""
        statements = self._statements
        file_name, digest = web_import_name(moment, self.survey_version)
        with self._writing(), self._connections.transaction(write=True) as cursor:
            group = self._group(cursor, respondent_id)
            import_id = self._known.get(digest) or self._web_import(cursor, file_name, digest,
                                                                     moment)
            try:
                cursor.run_many(statements.insert_answers, [
                    {"b_question_id": question, "b_respondent_id": respondent_id,
                     "b_answer": answer, "b_group_number": group, "b_import_id": import_id}
                    for question, answer in cells])
            except sa_exc.IntegrityError:
                raise _Answered(group) from None
            # the kept counts change with the answers (surveykit.store.answer_counts)
            new = cursor.run(statements.add_respondent, {"b_respondent": respondent_id}).rowcount
            if counted:
                cursor.run_many(statements.add_counts, [
                    {"b_question_id": question, "b_group_number": group, "b_answer": answer,
                     "b_count": 1} for question, answer in counted])
            # Other kept tallies of the answers (a [sampling] survey's weighted cells) are
            # added here, in this transaction: such surveys always take this path.
            if new:
                cursor.run(statements.add_respondents, {"b_survey": self.survey_key,
                                                        "b_new": new})
            if self.survey.sampling is not None:  # its kept weighted cells too
                kept_cells.add_first_answers(self._connections.engine, self.survey_key,
                                             self.survey, [respondent_id], run=cursor.run_sql)
            # Last statement of the transaction: on PostgreSQL this row's lock is held
            # only until the commit that follows.
            cursor.run(statements.count_import, {
                "b_import": import_id, "b_rows": 1, "b_imported": len(wanted),
                "b_missing": len(self.question_keys) - len(wanted)})
        return import_id, group

    def record_batch(self, submissions: Sequence[tuple[object, object]], *,
                     now: datetime | None = None) -> list[SubmissionResult | Exception]:
        """Store several respondents' answers in one transaction (a group commit): for each
        ``(respondent_id, answers)``, what :meth:`record` would return or raise.

        The batch is checked as a set and written a table at a time (or, should that meet
        another writer's row, under a SAVEPOINT per submission), so one that is refused (an
        id not issued, a repeat, a conflict, a statement that fails) leaves the others as
        they were; a submission whose id appears earlier in the batch is compared with that
        one's answers (a repeat or a conflict), as if sent after it. The kept counts, the
        survey's number of known respondents and the day's import record change once for
        the batch, by the sums of its new submissions. Nothing is final before the commit:
        if the transaction fails, every submission that reached it gets the error (a
        malformed one keeps its SubmissionError); the caller answers none of them before
        this returns.
        """
        moment = now or datetime.now(UTC)
        outcomes: list[SubmissionResult | Exception | None] = [None] * len(submissions)
        checked: list[tuple[int, str, dict[str, str]]] = []
        for index, (respondent_id, answers) in enumerate(submissions):
            try:
                checked.append((index, canonical_web_id(respondent_id),
                                self._checked_answers(answers)))
            except SubmissionError as exc:
                outcomes[index] = exc
        if not checked:
            return outcomes
        retry: list[int] = []
        try:
            if not (self._write_batch_at_once(checked, moment, outcomes)
                    or self._write_batch_checked(checked, moment, outcomes)):
                self._write_batch(checked, moment, outcomes, retry)
        except (StoreError, sa_exc.SQLAlchemyError) as exc:
            for index, _, _ in checked:
                outcomes[index] = exc
            return outcomes
        for index in retry:  # a concurrent writer of the id rolled back: on its own, again
            respondent_id, answers = submissions[index]
            try:
                outcomes[index] = self.record(respondent_id, answers, now=moment)
            except (StoreError, sa_exc.SQLAlchemyError) as exc:
                outcomes[index] = exc
        return outcomes

    def _write_batch_at_once(self, checked: list[tuple[int, str, dict[str, str]]],
                             moment: datetime, outcomes: list) -> bool:
        """PostgreSQL, once the day's import record exists, a survey without [sampling]:
        the ids' groups in one statement (_POSTGRES_STATUSES), then every write of the new
        respondents in one (_POSTGRES_WRITES), in autocommit. False (nothing written) when
        the batch needs :meth:`_write_batch`: an id twice, an id with answers (a repeat or a
        conflict to compare), or a concurrent writer that stored answers for one of them
        meanwhile (the writing statement fails as a whole)."""
        statements = self._statements
        import_id = self._known.get(web_import_name(moment, self.survey_version)[1])
        ids = [respondent_id for _, respondent_id, _ in checked]
        if (statements.write_all is None or self.survey.sampling is not None
                or import_id is None or len(set(ids)) != len(ids)):
            return False
        with self._connections.statement() as cursor:
            statuses = self._statuses(cursor, ids)
            new: list[tuple[int, str, dict[str, str], int]] = []
            for index, respondent_id, wanted in checked:
                group, answered = self._status_of(statuses, index, respondent_id, outcomes)
                if group is None:
                    continue
                if answered:
                    return False
                new.append((index, respondent_id, wanted, group))
            if new:
                try:
                    self._insert_new(cursor, [(respondent_id, wanted, group)
                                              for _, respondent_id, wanted, group in new],
                                     import_id)
                except sa_exc.IntegrityError:
                    return False
        for index, respondent_id, wanted, group in new:
            outcomes[index] = self._recorded(respondent_id, group, len(wanted), import_id)
        return True

    def _statuses(self, cursor: _Cursor, ids: list[str]) -> dict[str, tuple[int | None, bool,
                                                                            bool]]:
        """Each of ``ids`` (no two alike): its stored group (None: not issued, 0: issued
        without one), whether it has answers, whether the survey issued ids (_STATUSES)."""
        listed = ids if self._statements.write_all is not None else json.dumps(ids)
        return {respondent_id: (group, bool(answered), bool(issued))
                for respondent_id, group, answered, issued in cursor.run(
                    self._statements.statuses, {"b_survey": self.survey_key,
                                                "b_respondents": listed}).fetchall()}

    def _status_of(self, statuses: Mapping[str, tuple[int | None, bool, bool]], index: int,
                   respondent_id: str, outcomes: list) -> tuple[int | None, bool]:
        """The group of ``respondent_id`` (:meth:`_resolved_group` of its :meth:`_statuses`)
        and whether it has answers; (None, False) with outcome ``index`` set to the
        NotIssuedError when its id is refused."""
        group, answered, issued = statuses[respondent_id]
        try:
            return self._resolved_group(respondent_id, group, issued), answered
        except NotIssuedError as exc:
            outcomes[index] = exc
            return None, False

    def _write_batch_checked(self, checked: list[tuple[int, str, dict[str, str]]],
                             moment: datetime, outcomes: list) -> bool:
        """The writes of :meth:`record_batch` checked as a set, in one transaction: one
        statement reads every id's group and whether it has answers (_STATUSES); a
        submission whose id has answers is compared with them (a repeat or a conflict),
        one whose id came earlier in the batch with that one's answers; the new ones are
        written with one statement per table (each run for all their rows), no savepoint.

        The outcomes are those of :meth:`_write_batch` (which writes each submission under
        a savepoint of its own) for the same batch. False, with nothing written and the
        outcomes to be set again, when a statement fails: another writer (a PostgreSQL
        server process, ``surveykit import``) stored answers for one of the ids between
        the check and the insert; the batch then goes to :meth:`_write_batch`, which gives
        each submission its own outcome. Not for a survey with [sampling] (its kept
        weighted cells need each new respondent's id: :meth:`_write_batch`)."""
        if self.survey.sampling is not None:
            return False
        file_name, digest = web_import_name(moment, self.survey_version)
        # the first submission of each id without answers: (index, answers, group)
        new: dict[str, tuple[int, dict[str, str], int]] = {}
        copies: list[tuple[int, str, dict[str, str], int]] = []  # their later copies
        try:
            with self._writing(), self._connections.transaction(write=True) as cursor:
                statuses = self._statuses(cursor, list(dict.fromkeys(
                    respondent_id for _, respondent_id, _ in checked)))
                for index, respondent_id, wanted in checked:
                    group, answered = self._status_of(statuses, index, respondent_id,
                                                      outcomes)
                    if group is None:
                        continue
                    if respondent_id in new:
                        copies.append((index, respondent_id, wanted, group))
                    elif not answered:
                        new[respondent_id] = (index, wanted, group)
                    else:  # answers stored before this batch
                        try:
                            outcomes[index] = self._compared(cursor, respondent_id, wanted,
                                                             group)
                        except SubmissionConflict as conflict:
                            outcomes[index] = conflict
                        if outcomes[index] is None:  # gone meanwhile: not under our lock
                            raise _Unexpected
                if not new:
                    return True
                import_id = (self._known.get(digest)
                             or self._web_import(cursor, file_name, digest, moment))
                self._insert_checked(cursor, new, import_id)
        except (sa_exc.OperationalError, sa_exc.InterfaceError):
            raise  # the database is away or locked: a savepoint each would meet it too
        except (_Unexpected, sa_exc.DBAPIError):
            for index, _, _ in checked:
                outcomes[index] = None
            return False
        self._known[digest] = import_id  # committed: it exists from now on
        for respondent_id, (index, wanted, group) in new.items():
            outcomes[index] = self._recorded(respondent_id, group, len(wanted), import_id)
        for index, respondent_id, wanted, group in copies:  # as if sent after the first
            first = new[respondent_id][1]
            outcomes[index] = (self._conflict() if wanted != first else
                               self._recorded(respondent_id, group, 0, import_id, repeat=True))
        return True

    def _insert_checked(self, cursor: _Cursor, new: Mapping[str, tuple[int, dict[str, str],
                                                                        int]],
                        import_id: int) -> None:
        """The submissions of respondents without answers (id: (index, answers, group))
        with the kept counts, known respondents and the day's record, a statement per
        table; the same writes as :meth:`_write_batch`'s. Rows in the order of their keys
        (answers by question, then id), so that two writers of overlapping ids take their
        row locks in one order and never deadlock; then cells, survey, day's record, as
        every writer."""
        statements = self._statements
        answers: list[tuple[int, str, str, int]] = []
        imported = 0
        for respondent_id, (_, wanted, group) in new.items():
            answers += ((self.question_keys[name], respondent_id, answer, group)
                        for name, answer in wanted.items())
            imported += len(wanted)
        answers.sort()
        added = Counter((question, group, answer) for question, _, answer, group in answers
                        if question not in self._numeric)
        cursor.run_many(statements.insert_answers, [
            {"b_question_id": question, "b_respondent_id": respondent_id, "b_answer": answer,
             "b_group_number": group, "b_import_id": import_id}
            for question, respondent_id, answer, group in answers])
        known = cursor.run_many(statements.add_respondent, [
            {"b_respondent": respondent_id} for respondent_id in sorted(new)]).rowcount
        self._add_counts(cursor, added)
        if known:
            cursor.run(statements.add_respondents, {"b_survey": self.survey_key,
                                                    "b_new": known})
        cursor.run(statements.count_import, {
            "b_import": import_id, "b_rows": len(new), "b_imported": imported,
            "b_missing": len(new) * len(self.question_keys) - imported})

    def _write_batch(self, checked: list[tuple[int, str, dict[str, str]]], moment: datetime,
                     outcomes: list, retry: list[int]) -> None:
        """The writes of :meth:`record_batch`: one transaction, a SAVEPOINT per submission."""
        statements = self._statements
        file_name, digest = web_import_name(moment, self.survey_version)
        added: Counter[tuple[int, int, str]] = Counter()  # kept count cells of new answers
        new_respondents: list[str] = []
        rows = imported = missing = 0
        with self._writing(), self._connections.transaction(write=True) as cursor:
            import_id = self._known.get(digest)
            for index, respondent_id, wanted in checked:
                try:
                    group = self._group(cursor, respondent_id)
                except NotIssuedError as exc:
                    outcomes[index] = exc
                    continue
                if import_id is None:  # a refused batch leaves no day's record behind
                    import_id = self._web_import(cursor, file_name, digest, moment)
                cells = sorted((self.question_keys[name], answer)
                               for name, answer in wanted.items())
                cursor.run_sql("SAVEPOINT submission")
                try:
                    cursor.run_many(statements.insert_answers, [
                        {"b_question_id": question, "b_respondent_id": respondent_id,
                         "b_answer": answer, "b_group_number": group, "b_import_id": import_id}
                        for question, answer in cells])
                    new = cursor.run(statements.add_respondent,
                                     {"b_respondent": respondent_id}).rowcount
                except sa_exc.DBAPIError as exc:
                    cursor.run_sql("ROLLBACK TO SAVEPOINT submission")
                    cursor.run_sql("RELEASE SAVEPOINT submission")
                    if not isinstance(exc, sa_exc.IntegrityError):
                        outcomes[index] = exc
                        continue
                    try:  # the primary key of responses: the respondent has answers
                        outcomes[index] = self._compared(cursor, respondent_id, wanted, group)
                    except SubmissionConflict as conflict:
                        outcomes[index] = conflict
                    if outcomes[index] is None:
                        retry.append(index)
                    continue
                cursor.run_sql("RELEASE SAVEPOINT submission")
                if new:
                    new_respondents.append(respondent_id)
                added.update((question, group, answer) for question, answer in cells
                             if question not in self._numeric)
                rows += 1
                imported += len(wanted)
                missing += len(self.question_keys) - len(wanted)
                outcomes[index] = self._recorded(respondent_id, group, len(wanted), import_id)
            # the same order of row locks as every other writer: cells, survey, day's record
            self._add_counts(cursor, added)
            if new_respondents:
                cursor.run(statements.add_respondents, {"b_survey": self.survey_key,
                                                        "b_new": len(new_respondents)})
            if self.survey.sampling is not None:  # its kept weighted cells too
                kept_cells.add_first_answers(self._connections.engine, self.survey_key,
                                             self.survey, new_respondents, run=cursor.run_sql)
            if rows:
                cursor.run(statements.count_import, {
                    "b_import": import_id, "b_rows": rows, "b_imported": imported,
                    "b_missing": missing})
        if import_id is not None:
            self._known[digest] = import_id  # committed: it exists from now on

    def _add_counts(self, cursor: _Cursor, added: Counter) -> None:
        """Add ``added`` ((question key, group, answer): new answers) to the kept counts, in
        key order (the order of row locks every writer keeps)."""
        if added:
            cursor.run_many(self._statements.add_counts, [
                {"b_question_id": question, "b_group_number": group, "b_answer": answer,
                 "b_count": count} for (question, group, answer), count in sorted(
                    added.items())])

    def _compared(self, cursor: _Cursor, respondent_id: str, wanted: dict[str, str],
                  group: int) -> SubmissionResult | None:
        """The answers ``cursor`` sees for ``respondent_id``: the same as ``wanted`` (a
        repeat), or SubmissionConflict; None when there are none."""
        existing = self._existing(cursor, respondent_id)
        if not existing:
            return None
        if {name: answer for name, (answer, _) in existing.items()} != wanted:
            raise self._conflict()
        return self._recorded(respondent_id, group, 0,
                              min(key for _, key in existing.values()), repeat=True)

    def _recorded(self, respondent_id: str, group: int, answers: int, import_id: int, *,
                  repeat: bool = False) -> SubmissionResult:
        """What recording ``answers`` new answers of ``respondent_id`` gave; ``repeat``: the
        same submission again (``already_recorded``, no new answers)."""
        return SubmissionResult(survey=self.survey.name, respondent_id=respondent_id,
                                group=group, answers=0 if repeat else answers,
                                already_recorded=repeat, import_id=import_id)

    def _conflict(self) -> SubmissionConflict:
        return SubmissionConflict(f"different answers are already recorded for this "
                                  f"respondent in survey {self.survey.name!r}; nothing was "
                                  "changed")

    def _repeat(self, respondent_id: str, wanted: dict[str, str],
                group: int) -> SubmissionResult | None:
        """The answers already recorded for ``respondent_id``: the same as ``wanted`` (a
        repeat), or SubmissionConflict; None when there are none (try again)."""
        with self._connections.transaction(write=False) as cursor:
            return self._compared(cursor, respondent_id, wanted, group)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._lock if self._lock is not None else nullcontext():
            yield

    def _checked_answers(self, answers: object) -> dict[str, str]:
        if not isinstance(answers, Mapping) or not answers:
            raise SubmissionError("answers must map question ids to answers, one question or "
                                  "more")
        checked = {}
        for name, answer in answers.items():
            labels = self._labels.get(name) if isinstance(name, str) else None
            if labels is None:
                raise SubmissionError(
                    f"answers name a question that survey {self.survey.name!r} does not have; "
                    f"its questions are {', '.join(self.question_keys)}")
            if isinstance(labels, NumberAnswers):
                checked[name] = labels.canonical(name, answer)
                continue
            if not isinstance(answer, str) or answer not in labels:
                raise SubmissionError(
                    f"the answer to question {name!r} must be one of its design's labels "
                    f"({', '.join(self.survey.question(name).design.response_labels)})")
            checked[name] = answer
        return checked

    def _group(self, cursor: _Cursor, respondent_id: str) -> int:
        group, issued = cursor.run(self._statements.group,
                                   {"b_respondent": respondent_id}).fetchone()
        return self._resolved_group(respondent_id, group, issued)

    def _resolved_group(self, respondent_id: str, group: int | None, issued: bool) -> int:
        """The group of ``respondent_id`` from its stored one (None: not issued, 0: issued
        without one) and whether the survey issued ids; NotIssuedError when refused."""
        several = len(self.survey.groups) > 1
        if group is not None:  # an issued id
            if group:
                return group
            if several:
                raise NotIssuedError(
                    f"this respondent id was issued without a group, but survey "
                    f"{self.survey.name!r} has multi-group designs; issue ids with groups")
            return 1
        if issued:
            # a typo the check symbol catches is said as such; no nearest id is suggested
            # (it would let anyone find issued ids by trying ids near a guess)
            raise NotIssuedError(diagnose_unknown_id(
                respondent_id, lambda _ids: (), survey=self.survey.name, suggest=False).reason)
        if several:
            raise NotIssuedError(
                f"survey {self.survey.name!r} has multi-group designs and no issued ids: "
                "issue ids (surveykit generate) so that each respondent has a group")
        return 1

    def _existing(self, cursor: _Cursor, respondent_id: str) -> dict[str, tuple[str, int]]:
        names = {key: name for name, key in self.question_keys.items()}
        rows = cursor.run(self._statements.existing, {"b_respondent": respondent_id})
        return {names[question]: (answer, import_id)
                for question, answer, import_id in rows.fetchall()}

    def _web_import(self, cursor: _Cursor, file_name: str, digest: str,
                    moment: datetime) -> int:
        statements = self._statements
        found = cursor.run(statements.find_import, {"b_sha256": digest}).fetchone()
        if found is not None:
            return found[0]
        # the day's midnight (UTC), not the first submission's time: no answer is dated
        day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        stored = store.imports.c.imported_at.type.dialect_impl(self.engine.dialect)
        as_bound = stored.bind_processor(self.engine.dialect)
        cursor.run(statements.add_import, {
            "b_file_name": file_name, "b_sha256": digest, "b_file_format": WEB_FORMAT,
            "b_imported_at": as_bound(day) if as_bound is not None else day,
            "b_survey_version": self.survey_version})
        return cursor.run(statements.find_import, {"b_sha256": digest}).fetchone()[0]


def open_submissions(engine: Engine, survey_name: str) -> Submissions:
    """The handle :meth:`Submissions.record` works through, for survey ``survey_name``.

    >>> # submissions = open_submissions(open_engine(), "academic_integrity")
    >>> # submissions.record("7KQ2-M9XD-4FRT-8B", {"exam_cheating": "no"})
    """
    survey = store.load_survey(engine, survey_name)
    with engine.connect() as conn:
        key = store.survey_id(conn, survey_name)
        by_name = store.question_ids(conn, key)
        version, _ = store.current_survey_version(conn, key, survey)
    ordered = {question.id: by_name[question.id] for question in survey.questions}
    labels = {question.id: NumberAnswers.of(question) if question.numeric
              else frozenset(question.design.response_labels)
              for question in survey.questions}
    lock = threading.Lock() if engine.dialect.name == "sqlite" else None
    return Submissions(engine=engine, survey=survey, survey_key=key, question_keys=ordered,
                       _labels=labels, _lock=lock,
                       _statements=_Statements.compile(engine, key, ordered),
                       _connections=_Connections(engine), survey_version=version,
                       _numeric=frozenset(ordered[q.id] for q in survey.questions if q.numeric))


def record_submission(engine: Engine, survey_name: str, respondent_id: object,
                      answers: object, *, now: datetime | None = None) -> SubmissionResult:
    """Store one respondent's answers to survey ``survey_name`` (see the module docstring).

    >>> # record_submission(open_engine(), "academic_integrity", "7KQ2-M9XD-4FRT-8B",
    >>> #                   {"exam_cheating": "no", "plagiarism": "dont_know"})
    """
    submissions = open_submissions(engine, survey_name)
    try:
        return submissions.record(respondent_id, answers, now=now)
    finally:
        submissions.close()
