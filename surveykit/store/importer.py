"""Importing a response CSV into the database: atomic, idempotent, streamed, concurrent-safe.

How the guarantees are kept:

* **Atomic**: the whole file goes in one transaction; any problem (or a
  killed process) rolls it back, so the database is exactly as before.
* **Idempotent**: a file is identified by its sha256; (survey, sha256) is
  unique in ``imports``, so the same file never goes in twice.
* **Nothing counted twice**: the primary key of ``responses`` is (survey,
  question, respondent). Rows are inserted with ON CONFLICT DO NOTHING (or,
  with ``replace``, DO UPDATE of rows from *earlier* imports only), so a
  repeated pair inserts nothing and the affected-row count falls short of the
  rows sent. A shortfall sends the import to a diagnosis pass, which stages
  the file in a temporary table and finds, in SQL, every duplicate inside the
  file and every conflict with earlier imports, with their lines.
* **Fast and lean**: rows are parsed and inserted in chunks (Core
  executemany); memory does not grow with the file.
* **Concurrent**: on SQLite the transaction starts with BEGIN IMMEDIATE, so a
  second import waits (busy timeout) for the first instead of failing; on
  PostgreSQL the primary key and ON CONFLICT serialize the writers.
"""

from __future__ import annotations

import csv
import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Column, Connection, Engine, Integer, MetaData, String, Table, func, select
from sqlalchemy import exc as sa_exc

from surveykit.definition.responses import (
    FORMATS,
    MAX_PROBLEMS_KEPT,
    inspect_file,
    open_responses,
)
from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, CsvProblem, ParameterError, StoreError
from surveykit.store import database as store
from surveykit.store.models import ANSWER_LENGTH, RESPONDENT_ID_LENGTH

__all__ = ["ImportResult", "import_responses"]

# Another writer can slip in between a diagnosis and the retry; give up after this.
_ATTEMPTS = 4


@dataclass(frozen=True)
class ImportResult:
    """What an import did.

    rows_read: data rows in the file (blank lines excluded);
    imported: new answers stored; replaced: answers from earlier imports
    overwritten (``replace=True``); rejected: rows written to the rejects file
    (``skip_invalid=True``); missing: empty answer cells (counted, not stored);
    already_imported: the same file (sha256) was imported before and nothing
    changed (``import_id`` and ``imported_at`` then describe that import).
    """

    survey: str
    file_name: str
    sha256: str
    file_format: str
    rows_read: int
    imported: int
    replaced: int
    rejected: int
    missing: int
    already_imported: bool
    import_id: int
    imported_at: datetime
    rejects_path: str | None = None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["imported_at"] = self.imported_at.isoformat()
        return data


class _Shortfall(Exception):
    """The fast pass met a problem it cannot explain by itself: diagnose, then retry."""


def import_responses(engine: Engine, path: str | Path, survey_name: str, *,
                     fmt: str = "auto", skip_invalid: bool = False,
                     rejects_path: str | Path | None = None, replace: bool = False,
                     progress: Callable[[int, int], None] | None = None) -> ImportResult:
    """Import a long or wide response CSV into survey ``survey_name``, all or nothing.

    ``fmt`` is "auto" (decided by the header), "long" or "wide". Any bad row
    makes the whole file fail with a CsvImportError listing every bad row
    (line, column, value, reason), unless ``skip_invalid``: then bad rows go
    to ``rejects_path`` (the file's columns plus ``_line`` and ``_reason``) and
    the rest is imported. An answer for a (respondent, question) that an
    earlier file gave is a conflict unless ``replace``. ``progress(done,
    total)`` is called with bytes read after each chunk.

    >>> # import_responses(open_engine(), "wave1.csv", "academic_integrity")
    """
    if fmt not in FORMATS:
        raise ParameterError(f"format {fmt!r} must be one of {', '.join(FORMATS)}")
    if skip_invalid and rejects_path is None:
        raise ParameterError("skip_invalid needs rejects_path: rejected rows must go somewhere")
    if rejects_path is not None and not skip_invalid:
        raise ParameterError("rejects_path is only used with skip_invalid")
    path = Path(path)
    survey = store.load_survey(engine, survey_name)
    facts = inspect_file(path)
    rejects = Path(rejects_path) if rejects_path is not None else None
    if rejects is not None and rejects.resolve() == path.resolve():
        raise ParameterError(f"the rejects file {rejects} would overwrite the file imported")
    excluded: dict[int, str] = {}
    for _ in range(_ATTEMPTS):
        try:
            return _load(engine, path, survey, facts.sha256, facts.size, fmt, replace,
                         excluded, rejects, progress)
        except _Shortfall:
            pass
        except sa_exc.IntegrityError:
            continue  # a concurrent import of the same file won (PostgreSQL): look again
        problems, problem_count, bad_rows, database_lines, conflicts = _diagnose(
            engine, path, survey, fmt, replace, excluded)
        if not skip_invalid:
            hint = ("fix them and import again, or import the other rows with "
                    "--skip-invalid --rejects FILE")
            if conflicts:
                hint += ("; to overwrite answers that earlier imports gave, use --replace")
            raise CsvImportError(
                str(path), problems, problem_count=problem_count,
                summary=(f"{bad_rows} bad row{'s' if bad_rows != 1 else ''} in {path}; "
                         f"nothing was imported ({hint})"))
        excluded.update(database_lines)
    raise StoreError(f"{path}: other imports kept changing the same answers; try again")


def _load(engine: Engine, path: Path, survey: Survey, sha256: str, size: int, fmt: str,
          replace_answers: bool, excluded: dict[int, str], rejects: Path | None,
          progress: Callable[[int, int], None] | None) -> ImportResult:
    """The fast pass: one transaction; raises _Shortfall when a diagnosis is needed."""
    partial = rejects.with_name(rejects.name + ".part") if rejects is not None else None
    try:
        with store.write_transaction(engine) as conn:
            key = store.survey_id(conn, survey.name)
            earlier = conn.execute(
                select(store.imports).where(store.imports.c.survey_id == key,
                                            store.imports.c.sha256 == sha256)).first()
            if earlier is not None:
                return ImportResult(
                    survey=survey.name, file_name=path.name, sha256=sha256,
                    file_format=earlier.file_format, rows_read=0, imported=0, replaced=0,
                    rejected=0, missing=0, already_imported=True, import_id=earlier.id,
                    imported_at=store.as_utc(earlier.imported_at))
            with open_responses(path, survey, fmt) as source, _collector_paused():
                result = _insert_rows(conn, key, source, sha256, size, replace_answers,
                                      excluded, partial, progress)
        if partial is not None:
            os.replace(partial, rejects)
            result = replace(result, rejects_path=str(rejects))
        return result
    finally:
        if partial is not None and partial.exists():
            partial.unlink()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during a bulk load.

    Parsing allocates millions of short-lived tuples and lists but no
    reference cycles; with the collector on, its full collections repeatedly
    walk every live object and make parsing about 3x slower.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _insert_rows(conn: Connection, key: int, source, sha256: str, size: int,
                 replace_answers: bool, excluded: dict[int, str], partial: Path | None,
                 progress: Callable[[int, int], None] | None) -> ImportResult:
    now = datetime.now(UTC)
    import_id = conn.execute(store.imports.insert().values(
        survey_id=key, file_name=source.path.name, sha256=sha256,
        file_format=source.file_format, rows_read=0, imported=0, replaced=0, rejected=0,
        missing=0, imported_at=now)).inserted_primary_key[0]
    question_keys = _question_keys(conn, key, source.survey)
    columns = ("survey_id", "question_id", "respondent_id", "answer", "group_number",
               "import_id")
    if conn.dialect.name == "postgresql" and not replace_answers:
        statement = store.CopyInsert(conn, store.responses, columns)
    else:
        statement = store.BulkStatement(conn, _insert_statement(conn, replace_answers), columns)
    before = _answer_count(conn, key) if replace_answers else 0
    check = _issued_check(conn, key)
    rows_read = rejected = missing = sent = affected = 0
    writer, handle = _rejects_writer(partial, source)
    try:
        for chunk in source.chunks(check_respondents=check, excluded=excluded):
            rows_read += chunk.rows
            missing += chunk.missing
            if chunk.rejected:
                if writer is None:
                    raise _Shortfall
                rejected += len(chunk.rejected)
                for fields, problems in chunk.rejected:
                    writer.writerow([*fields, problems[0].line,
                                     "; ".join(_reason(p) for p in problems)])
            if chunk.answers:
                rows = [(key, question_keys[question], respondent, answer, group, import_id)
                        for _, respondent, question, answer, group in chunk.answers]
                sent += len(rows)
                affected += statement.execute(conn, rows)
            if progress is not None:
                progress(chunk.bytes_read, size)
    finally:
        if handle is not None:
            handle.close()
    if rows_read == 0:
        raise CsvImportError(str(source.path), [], summary=(
            f"{source.path} has a header but no data rows; nothing was imported"))
    if affected != sent:
        raise _Shortfall
    imported = affected
    if replace_answers:
        imported = _answer_count(conn, key) - before
    conn.execute(store.imports.update().where(store.imports.c.id == import_id).values(
        rows_read=rows_read, imported=imported, replaced=affected - imported,
        rejected=rejected, missing=missing))
    return ImportResult(
        survey=source.survey.name, file_name=source.path.name, sha256=sha256,
        file_format=source.file_format, rows_read=rows_read, imported=imported,
        replaced=affected - imported, rejected=rejected, missing=missing,
        already_imported=False, import_id=import_id, imported_at=now)


def _reason(problem: CsvProblem) -> str:
    return f"{problem.column}: {problem.reason}" if problem.column else problem.reason


def _rejects_writer(partial: Path | None, source):
    if partial is None:
        return None, None
    handle = partial.open("w", encoding="utf-8", newline="")
    writer = csv.writer(handle, delimiter=source.delimiter)
    writer.writerow([*source.header, "_line", "_reason"])
    return writer, handle


def _question_keys(conn: Connection, key: int, survey: Survey) -> list[int]:
    by_name = store.question_ids(conn, key)
    return [by_name[question.id] for question in survey.questions]


def _insert_statement(conn: Connection, replace_answers: bool):
    responses = store.responses
    statement = store.dialect_insert(conn, responses)
    pk = [responses.c.survey_id, responses.c.question_id, responses.c.respondent_id]
    if not replace_answers:
        return statement.on_conflict_do_nothing(index_elements=pk)
    # Only answers of *earlier* imports are replaced: a pair repeated inside
    # this file matches a row of this import, changes nothing and so shows up
    # as a shortfall (a duplicate), as it must.
    return statement.on_conflict_do_update(
        index_elements=pk,
        set_={"answer": statement.excluded.answer,
              "group_number": statement.excluded.group_number,
              "import_id": statement.excluded.import_id},
        where=responses.c.import_id != statement.excluded.import_id,
    )


def _answer_count(conn: Connection, key: int) -> int:
    return conn.execute(select(func.count()).select_from(store.responses)
                        .where(store.responses.c.survey_id == key)).scalar_one()


def _issued_check(conn: Connection, key: int
                  ) -> Callable[[set[str]], dict[str, int | None]] | None:
    """When the survey has issued ids, a lookup of the issued ones and their groups."""
    if store.issued_count(conn, key) == 0:
        return None
    return lambda ids: store.issued_groups(conn, key, ids)


# -- diagnosis ------------------------------------------------------------------------


def _staging_table() -> Table:
    return Table(
        "surveykit_staging", MetaData(),
        Column("line", Integer, nullable=False),
        Column("question_id", Integer, nullable=False),
        Column("respondent_id", String(RESPONDENT_ID_LENGTH), nullable=False),
        Column("answer", String(ANSWER_LENGTH), nullable=False),
        prefixes=["TEMPORARY"],
    )


def _diagnose(engine: Engine, path: Path, survey: Survey, fmt: str, replace_answers: bool,
              excluded: dict[int, str]):
    """Every problem of the file, in one read-only pass plus SQL over a temporary table.

    Returns (problems to show, number of problems, number of bad rows,
    {line: reason} for rows refused by the database checks, whether there
    were conflicts with earlier imports).
    """
    staging = _staging_table()
    shown: list[CsvProblem] = []
    problem_count = bad_rows = 0
    database_lines: dict[int, list[CsvProblem]] = {}
    conflicts = False
    with engine.connect() as conn, conn.begin() as transaction:
        key = store.survey_id(conn, survey.name)
        question_keys = _question_keys(conn, key, survey)
        names = {k: q.id for k, q in zip(question_keys, survey.questions, strict=True)}
        staging.create(conn)
        stage = store.BulkStatement(conn, staging.insert(),
                                    ("line", "question_id", "respondent_id", "answer"))
        with open_responses(path, survey, fmt) as source, _collector_paused():
            for chunk in source.chunks(check_respondents=_issued_check(conn, key),
                                       excluded=excluded):
                for _, problems in chunk.rejected:
                    bad_rows += 1
                    problem_count += len(problems)
                    shown.extend(problems[:max(0, MAX_PROBLEMS_KEPT - len(shown))])
                if chunk.answers:
                    stage.execute(conn, [
                        (line, question_keys[question], respondent, answer)
                        for line, respondent, question, answer, _ in chunk.answers])
        for problem in _duplicates(conn, staging, names):
            database_lines.setdefault(problem.line, []).append(problem)
        if not replace_answers:
            for problem in _conflicts(conn, staging, key, names):
                conflicts = True
                database_lines.setdefault(problem.line, []).append(problem)
        transaction.rollback()
    for _, problems in sorted(database_lines.items()):
        problem_count += len(problems)
        bad_rows += 1
        shown.extend(problems[:max(0, MAX_PROBLEMS_KEPT - len(shown))])
    shown.sort(key=lambda problem: problem.line)
    joined = {line: "; ".join(problem.reason for problem in problems)
              for line, problems in database_lines.items()}
    return shown, problem_count, bad_rows, joined, conflicts


def _duplicates(conn: Connection, staging: Table, names: dict[int, str]):
    """A problem for every row whose (question, respondent) the file repeats."""
    repeated = (select(staging.c.question_id, staging.c.respondent_id)
                .group_by(staging.c.question_id, staging.c.respondent_id)
                .having(func.count() > 1).subquery())
    rows = conn.execute(
        select(staging.c.line, staging.c.question_id, staging.c.respondent_id)
        .join(repeated, (repeated.c.question_id == staging.c.question_id)
              & (repeated.c.respondent_id == staging.c.respondent_id))
        .order_by(staging.c.question_id, staging.c.respondent_id, staging.c.line))
    group: list[int] = []
    current = None
    for line, question, respondent in rows:
        if (question, respondent) != current and group:
            yield from _duplicate_reasons(group, current, names)
            group = []
        current = (question, respondent)
        group.append(line)
    if group:
        yield from _duplicate_reasons(group, current, names)


def _duplicate_reasons(lines: list[int], pair, names: dict[int, str]):
    question, respondent = pair
    others = ", ".join(str(line) for line in lines)
    for line in lines:
        yield CsvProblem(line, "respondent_id", respondent, (
            f"this respondent answers question {names[question]!r} {len(lines)} times in "
            f"this file (lines {others}); keep one row"))


def _conflicts(conn: Connection, staging: Table, key: int, names: dict[int, str]):
    """A problem for every row answering a pair that an earlier import answered."""
    responses, imports = store.responses, store.imports
    rows = conn.execute(
        select(staging.c.line, staging.c.question_id, staging.c.respondent_id,
               staging.c.answer, responses.c.answer, imports.c.id, imports.c.file_name)
        .join(responses, (responses.c.survey_id == key)
              & (responses.c.question_id == staging.c.question_id)
              & (responses.c.respondent_id == staging.c.respondent_id))
        .join(imports, imports.c.id == responses.c.import_id)
        .order_by(staging.c.line))
    for line, question, respondent, new, old, import_id, file_name in rows:
        same = "the same answer" if new == old else f"{old!r} (this file says {new!r})"
        yield CsvProblem(line, "respondent_id", respondent, (
            f"this respondent already answered question {names[question]!r} with {same} "
            f"in import #{import_id} ({file_name})"))
