"""Importing a response CSV into the database: atomic, idempotent, streamed, concurrent-safe.

How the guarantees are kept:

* **Atomic**: the whole file goes in one transaction; any problem (or a
  killed process) rolls it back, so the database is exactly as before.
* **Idempotent**: a file is identified by its sha256; (survey, sha256) is
  unique in ``imports``, so the same file never goes in twice. A *cumulative*
  export (KoboToolbox and ODK Central downloads hold every submission so far)
  goes in again and again: an answer already stored for the same respondent
  and question, with the same answer and group, is *unchanged* (counted, not
  written); only a changed answer is a conflict, refused with its line unless
  ``replace``. Covariates follow the same rule (:class:`_CovariateWriter`).
* **Nothing counted twice**: the primary key of ``responses`` is (survey,
  question, respondent). On SQLite, a file that meets no stored answer goes
  straight into ``responses`` (ON CONFLICT DO NOTHING); a shortfall in the
  affected-row count means the file repeats a pair or meets stored answers,
  and the import starts over on the staged path. The staged path (always on
  PostgreSQL) copies the file into a temporary table, counts in SQL the pairs
  stored with the same answer (unchanged) and with another (a conflict, or
  with ``replace`` a replacement), and inserts the rest. Anything it cannot
  explain sends the import to a diagnosis pass, which stages the file again
  and finds every duplicate inside the file and every changed answer, with
  their lines.
* **Fast and lean**: rows are parsed and inserted in chunks (Core
  executemany); memory does not grow with the file.
* **Concurrent**: on SQLite the transaction starts with BEGIN IMMEDIATE, so a
  second import waits (busy timeout) for the first instead of failing. On
  PostgreSQL the transaction starts by taking a transaction-level advisory
  lock on the survey (``pg_advisory_xact_lock``), so imports into one survey
  queue there as they do on SQLite: two imports of overlapping answers
  inserted in their files' orders each held a row the other waited for, and
  PostgreSQL broke the deadlock by failing one of them. The later import
  then meets the earlier one's committed answers and gets the conflict
  refusal. Should another writer (a web submission) still deadlock with an
  import or fail its serialization, the import is run again, a bounded
  number of times.
"""

from __future__ import annotations

import csv
import gc
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    func,
    select,
    text,
)
from sqlalchemy import exc as sa_exc

from surveykit.definition.covariates import COVARIATE_NAME_LENGTH, COVARIATE_VALUE_LENGTH
from surveykit.definition.limits import ANSWER_LENGTH, RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.errors import (
    CsvImportError,
    CsvProblem,
    ParameterError,
    StoreError,
    printable,
    summarize_kinds,
)
from surveykit.files import output_file
from surveykit.reading.cells import duplicate_reason
from surveykit.reading.responses import (
    FORMATS,
    MAX_PROBLEMS_KEPT,
    ResponseFile,
    check_decimal_comma,
    inspect_file,
    neutralize_formula,
    open_responses,
)
from surveykit.store import answer_counts, kept_cells
from surveykit.store import database as store
from surveykit.store.design_values import check_design, check_replicate_columns
from surveykit.store.numeric_answers import DONT_KNOW

__all__ = ["ImportResult", "describe_columns", "import_responses"]

# Another writer can slip in between a diagnosis and the retry; give up after this (one
# attempt may go to the switch from the direct to the staged writer).
_ATTEMPTS = 5
# The first key of the PostgreSQL advisory locks imports take (the second is the survey's
# id): "sk" in ASCII, so that other applications' locks in the same database are apart.
_LOCK_SPACE = 0x736B
# SQLSTATEs of a transaction PostgreSQL rolled back to let another writer go on
# (serialization_failure, deadlock_detected): running it again is the documented remedy.
_RETRYABLE = ("40001", "40P01")
# (question key, group number, answer label) -> change in the number of stored answers
Delta = Counter
# The kinds of rows that change what an earlier import (or the web) stored: refused unless
# ``replace``; with ``skip_invalid`` they are the rows an import reports as *refused*.
CHANGED_ANSWER = "changes an earlier answer"
CHANGED_COVARIATE = "covariate differing from an earlier import"
_CHANGES = frozenset({CHANGED_ANSWER, CHANGED_COVARIATE})


@dataclass(frozen=True)
class ImportResult:
    """What an import did (or, with ``dry_run``, would do).

    rows_read: data rows in the file (blank lines excluded);
    imported: new answers stored (*added*); unchanged: answers the survey
    already had, the same answer of the same respondent to the same question
    in the same group (a cumulative export's earlier submissions: counted, not
    written again); replaced: answers from earlier imports changed to the
    file's (``replace=True``; without it a changed answer is refused);
    rejected: rows written to the rejects file (``skip_invalid=True``),
    ``rejected_by_reason`` counts them by reason, and ``refused`` counts
    those among them that would change a stored answer or covariate (the
    conflicts ``replace`` overwrites); missing: empty answer cells
    and "no answer" labels (counted, not stored; an empty cell never removes
    a stored answer); already_imported: the same file (sha256) was imported
    before and nothing changed (``import_id`` and ``imported_at`` then
    describe that import). ``answer_changes`` maps question id -> group ->
    answer -> change in the stored count; ``mapping`` and ``notes`` say how
    the file's columns were read; ``survey_version`` is the version of the
    survey definition the answers were read with. ``covariates`` counts the
    covariate values stored (new, or changed with ``replace=True``: of these,
    ``covariates_replaced``), None when the file has no covariate columns;
    ``covariates_unchanged`` counts the values stored identically before.

    >>> result = ImportResult(survey="s", file_name="day2.csv", sha256="0" * 64,
    ...     file_format="wide", rows_read=40, imported=20, replaced=0, rejected=0,
    ...     missing=0, already_imported=False, import_id=2,
    ...     imported_at=datetime(2026, 11, 27, tzinfo=UTC), unchanged=20)
    >>> (result.imported, result.unchanged, result.replaced, result.refused)
    (20, 20, 0, 0)
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
    import_id: int | None
    imported_at: datetime
    rejects_path: str | None = None
    unchanged: int = 0
    refused: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    answer_changes: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    mapping: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    dry_run: bool = False
    survey_version: int | None = None
    covariates: int | None = None
    covariates_unchanged: int = 0
    covariates_replaced: int = 0

    @property
    def added(self) -> int:
        """New answers stored: ``imported`` under the name the summary line gives it."""
        return self.imported

    def to_dict(self) -> dict:
        data = asdict(self)
        data["added"] = self.imported
        data["imported_at"] = self.imported_at.isoformat()
        data["mapping"] = list(self.mapping)
        data["notes"] = list(self.notes)
        return data


class _Shortfall(Exception):
    """The fast pass met a problem it cannot explain by itself: diagnose, then retry."""


class _Overlap(Exception):
    """The direct writer met stored answers (or a pair twice): run again on the staged one."""


class _DryRun(Exception):
    """Raised inside the transaction of a dry run so that it rolls back; carries the result."""

    def __init__(self, result: ImportResult) -> None:
        super().__init__("dry run")
        self.result = result


@dataclass(frozen=True)
class _Options:
    fmt: str
    replace: bool
    skip_invalid: bool
    dry_run: bool
    rejects: Path | None
    progress: Callable[[int, int], None] | None
    # numeric answers written with a decimal comma (1234,5)
    decimal_comma: bool = False
    # the staged writer even where the direct one would do (after an _Overlap)
    staged_only: bool = False

    def staged(self) -> _Options:
        return replace(self, staged_only=True)


def import_responses(engine: Engine, path: str | Path, survey_name: str, *,
                     fmt: str = "auto", skip_invalid: bool = False,
                     rejects_path: str | Path | None = None, replace: bool = False,
                     dry_run: bool = False,
                     progress: Callable[[int, int], None] | None = None,
                     decimal_comma: bool = False) -> ImportResult:
    """Import a response file (CSV, .xlsx, .xls, zipped CSV export) into a survey, all or nothing.

    ``fmt`` is "auto" (decided by the header), "long" or "wide". Any bad row
    makes the whole file fail with a CsvImportError listing every bad row
    (line, column, value, reason) after a one-line summary by reason, unless
    ``skip_invalid``: then bad rows go to ``rejects_path`` (the file's columns
    plus ``_line`` and ``_reason``, formula-leading cells neutralized) and the
    rest is imported; if that leaves nothing to store, it fails all the same
    and the file is not recorded as imported. An answer that an earlier
    import (or the web) stored identically is unchanged, so a cumulative
    export imports again and again; a *changed* answer (or group) for a
    (respondent, question) is a conflict unless ``replace``. ``dry_run``
    does everything but commit (and writes no rejects file).
    ``progress(done, total)`` is called with bytes read after each chunk.
    ``decimal_comma``: the numeric answers of this CSV file are written with a decimal comma
    (1234,5); without it, a dot (:mod:`surveykit.reading.numbers`).

    >>> # import_responses(open_engine(), "wave1.csv", "academic_integrity")
    """
    if fmt not in FORMATS:
        raise ParameterError(f"format {fmt!r} must be one of {', '.join(FORMATS)}")
    if skip_invalid and rejects_path is None and not dry_run:
        raise ParameterError("skip_invalid needs rejects_path: rejected rows must go somewhere")
    if rejects_path is not None and not skip_invalid:
        raise ParameterError("rejects_path is only used with skip_invalid")
    path = Path(path)
    survey = store.load_survey(engine, survey_name)
    facts = inspect_file(path)
    if decimal_comma:
        check_decimal_comma(path, facts.kind)
    rejects = output_file(rejects_path, "--rejects") if rejects_path is not None and not dry_run \
        else None
    if rejects is not None and rejects.resolve() == path.resolve():
        raise ParameterError(f"the rejects file {rejects} would overwrite the file imported")
    options = _Options(fmt=fmt, replace=replace, skip_invalid=skip_invalid, dry_run=dry_run,
                       rejects=rejects, progress=progress, decimal_comma=decimal_comma)
    excluded: dict[int, tuple[str, str | None]] = {}
    for attempt in range(_ATTEMPTS):
        try:
            return _load(engine, path, survey, facts, options, excluded)
        except _Overlap:
            options = options.staged()  # the file meets stored answers: compare them in SQL
            continue
        except _Shortfall:
            pass
        except sa_exc.IntegrityError:
            continue  # a concurrent import of the same file won (PostgreSQL): look again
        except sa_exc.OperationalError as exc:
            if _sqlstate(exc) not in _RETRYABLE:
                raise
            # rolled back for another writer's sake (PostgreSQL): wait a little, run again
            time.sleep(0.05 * 2**attempt)
            continue
        diagnosis = _diagnose(engine, path, survey, facts, options, excluded)
        if not diagnosis.bad_rows:
            # another writer stored some of these answers in the meantime, identical ones
            # (they are unchanged now) or since rolled back: run again
            continue
        if not skip_invalid:
            hint = ("fix them and import again, or import the other rows with "
                    "--skip-invalid --rejects FILE")
            if diagnosis.conflicts:
                hint += ("; to overwrite the answers (or covariates) that earlier imports gave "
                         "differently, use --replace")
            raise _refusal(path, diagnosis.problems, diagnosis.problem_count,
                           diagnosis.bad_rows, diagnosis.kinds, diagnosis.labels, hint)
        excluded.update(diagnosis.database_lines)
    raise StoreError(f"{path}: other imports kept changing the same answers; try again")


def _sqlstate(error: sa_exc.DBAPIError) -> str | None:
    """The SQLSTATE of a driver error (psycopg), or None (SQLite has none)."""
    return getattr(error.orig, "sqlstate", None)


def _queue_behind_other_imports(conn: Connection, key: int) -> None:
    """On PostgreSQL, wait until no other import into survey ``key`` runs, and keep others
    waiting until this transaction ends (SQLite's BEGIN IMMEDIATE does the same)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(CAST(:space AS integer), "
                          "CAST(:key AS integer))"), {"space": _LOCK_SPACE, "key": key})


def describe_columns(engine: Engine, path: str | Path, survey_name: str, *,
                     fmt: str = "auto") -> list[str]:
    """How a file's columns map to the survey, one line each (what ``import --dry-run`` shows).

    Raises the same one-line errors as an import for a header that does not map.

    >>> # describe_columns(open_engine(), "kobo.csv", "academic_integrity")
    >>> # ['layout wide, written by KoboToolbox', "respondent_id <- column 5 ...", ...]
    """
    survey = store.load_survey(engine, survey_name)
    facts = inspect_file(path)
    with open_responses(path, survey, fmt, kind=facts.kind, size=facts.size) as source:
        return source.mapping.describe()


def _refusal(path: Path, problems: list[CsvProblem], problem_count: int, bad_rows: int,
             kinds: Counter, labels: Counter, hint: str) -> CsvImportError:
    """The error for a refused file: one line with the count, the reasons and the fix."""
    return CsvImportError(
        str(path), problems, problem_count=problem_count, kinds=dict(kinds),
        summary=(f"{bad_rows} bad row{'s' if bad_rows != 1 else ''} in {path} "
                 f"({_reasons(kinds, labels)}); nothing was imported ({hint})"))


def _reasons(kinds: Counter, labels: Counter) -> str:
    """Rows by reason, naming the commonest labels no rule maps and the key that maps them."""
    text = summarize_kinds(dict(kinds))
    if labels:
        top = labels.most_common(3)
        shown = ", ".join(f"{printable(repr(label))} {n}" for label, n in top)
        more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
        text += (f"; labels no rule maps: {shown}{more} (map each with [import.labels] "
                 "\"LABEL\" = an answer or \"missing\")")
    return text


def _row_kinds(problems: list[CsvProblem]) -> set[str]:
    return {problem.kind or "other" for problem in problems}


def _bad_labels(problems: list[CsvProblem]) -> Iterator[str]:
    for problem in problems:
        if problem.kind == "not an answer" and problem.value is not None:
            yield problem.value.strip()


def _load(engine: Engine, path: Path, survey: Survey, facts, options: _Options,
          excluded: dict[int, tuple[str, str | None]]) -> ImportResult:
    """The fast pass: one transaction; raises _Shortfall when a diagnosis is needed."""
    rejects = options.rejects
    partial = rejects.with_name(rejects.name + ".part") if rejects is not None else None
    try:
        with store.write_transaction(engine) as conn:
            key = store.survey_id(conn, survey.name)
            _queue_behind_other_imports(conn, key)
            earlier = conn.execute(
                select(store.imports).where(store.imports.c.survey_id == key,
                                            store.imports.c.sha256 == facts.sha256)).first()
            if earlier is not None:
                return ImportResult(
                    survey=survey.name, file_name=path.name, sha256=facts.sha256,
                    file_format=earlier.file_format, rows_read=0, imported=0, replaced=0,
                    rejected=0, missing=0, already_imported=True, import_id=earlier.id,
                    imported_at=store.as_utc(earlier.imported_at), dry_run=options.dry_run,
                    survey_version=earlier.survey_version)
            version, survey = store.current_survey_version(conn, key, survey)
            with open_responses(path, survey, options.fmt, kind=facts.kind,
                                size=facts.size, decimal_comma=options.decimal_comma
                                ) as source, _collector_paused():
                result = _insert_rows(conn, key, version, source, facts, options, excluded,
                                      partial)
            if options.dry_run:
                raise _DryRun(result)
        if partial is not None:
            os.replace(partial, rejects)
            result = replace(result, rejects_path=str(rejects))
        return result
    except _DryRun as dry:
        return replace(dry.result, import_id=None)
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


def _insert_rows(conn: Connection, key: int, version: int, source: ResponseFile, facts,
                 options: _Options, excluded: dict[int, tuple[str, str | None]],
                 partial: Path | None) -> ImportResult:
    now = datetime.now(UTC)
    import_id = conn.execute(store.imports.insert().values(
        survey_id=key, survey_version=version, file_name=source.path.name,
        sha256=facts.sha256, file_format=source.file_format, rows_read=0, imported=0,
        replaced=0, rejected=0, missing=0, imported_at=now)).inserted_primary_key[0]
    question_keys = _question_keys(conn, key, source.survey)
    sampled = source.survey.sampling is not None
    # a sampled survey's kept cells change by the respondents the file touches, which the
    # staged writer lists before it writes (surveykit.store.kept_cells)
    writer = _writer(conn, key, import_id, options.staged() if sampled else options)
    covariate_writer = (_CovariateWriter(conn, key, import_id, options.replace)
                        if source.mapping.covariates() else None)
    check = _issued_check(conn, key)
    # with [sampling]: each respondent's first line, to name it when the design is refused
    first_lines: dict[str, int] | None = {} if source.survey.sampling is not None else None
    if first_lines is not None:
        check_replicate_columns(conn, key, source.survey, source.name,
                                [c.covariate for c in source.mapping.covariates()])
    rows_read = rejected = refused = missing = problem_count = 0
    kinds: Counter = Counter()
    labels: Counter = Counter()
    shown: list[CsvProblem] = []
    rejects, handle = _rejects_writer(partial, source)
    try:
        for chunk in source.chunks(check_respondents=check, excluded=excluded):
            rows_read += chunk.rows
            missing += chunk.missing
            if chunk.rejected:
                if not options.skip_invalid:
                    raise _Shortfall
                rejected += len(chunk.rejected)
                for fields, problems in chunk.rejected:
                    refused += problems[0].kind in _CHANGES
                    kinds.update(_row_kinds(problems))
                    labels.update(_bad_labels(problems))
                    problem_count += len(problems)
                    shown.extend(problems[:max(0, MAX_PROBLEMS_KEPT - len(shown))])
                    if rejects is not None:
                        rejects.writerow([*(neutralize_formula(cell) for cell in fields),
                                          problems[0].line,
                                          neutralize_formula("; ".join(_reason(p)
                                                                       for p in problems))])
            if chunk.answers:
                writer.send(conn, [(question_keys[question], respondent, answer, group)
                                   for _, respondent, question, answer, group in chunk.answers])
            if first_lines is not None:
                for line, respondent, *_ in (*chunk.answers, *chunk.covariates):
                    first_lines.setdefault(respondent, line)
            if chunk.covariates and covariate_writer is not None:
                covariate_writer.send(conn, [(respondent, name, value)
                                             for _, respondent, values in chunk.covariates
                                             for name, value in values])
            if options.progress is not None:
                options.progress(chunk.bytes_read, facts.size)
    finally:
        if handle is not None:
            handle.close()
    if rows_read == 0:
        raise CsvImportError(source.name, [], summary=(
            f"{source.name} has a header but no data rows; nothing was imported"))
    touched = kept_cells.Touched(conn, key, source.survey) if sampled else None
    if touched is not None:
        touched.before(tables=[_StagedWriter.TABLE, *(
            [_CovariateWriter.TABLE] if covariate_writer is not None else [])])
    outcome = writer.finish(conn)
    if outcome.affected != outcome.sent - outcome.unchanged:
        raise _Shortfall
    covariates = (covariate_writer.finish(conn) if covariate_writer is not None
                  else _CovariateOutcome())
    if first_lines is not None:
        check_design(conn, key, source.survey, source.name, first_lines, source.unit)
    if touched is not None:
        touched.after()
    imported = outcome.affected - outcome.replaced
    if rejected and not imported and not outcome.replaced and not covariates.stored:
        # Recording the file would make a corrected re-import a no-op ("already imported").
        raise _refusal(source.path, shown, problem_count, rejected, kinds, labels,
                       "every row was rejected, so the file is not recorded as imported; fix "
                       "the rows (or the survey's [import] profile) and import it again")
    # outcome.delta: how this import changes the stored counts per (question, group, answer),
    # final and checked; the kept counts change with it, in this transaction
    # (numeric answers are not counted per value: the delta leaves them out)
    numeric = {question_keys[i] for i, q in enumerate(source.survey.questions) if q.numeric}
    answer_counts.apply_changes(conn, key, {cell: n for cell, n in outcome.delta.items()
                                            if cell[0] not in numeric},
                                outcome.new_respondents)
    conn.execute(store.imports.update().where(store.imports.c.id == import_id).values(
        rows_read=rows_read, imported=imported, replaced=outcome.replaced,
        rejected=rejected, missing=missing))
    return ImportResult(
        survey=source.survey.name, file_name=source.path.name, sha256=facts.sha256,
        file_format=source.file_format, rows_read=rows_read, imported=imported,
        replaced=outcome.replaced, rejected=rejected, missing=missing,
        already_imported=False, import_id=import_id, imported_at=now,
        unchanged=outcome.unchanged, refused=refused, rejected_by_reason=dict(kinds),
        answer_changes=_nested(outcome.delta, source.survey, question_keys),
        mapping=tuple(source.mapping.describe()),
        notes=tuple(source.notes), dry_run=options.dry_run, survey_version=version,
        covariates=covariates.stored if covariate_writer is not None else None,
        covariates_unchanged=covariates.unchanged, covariates_replaced=covariates.replaced)


def _nested(delta: Delta, survey: Survey, question_keys: list[int]
            ) -> dict[str, dict[str, dict[str, int]]]:
    """Question id -> group -> answer -> change, in survey and design order; a numeric
    question's numbers are not counted per value: its changes are ``n`` (numbers) and
    ``dont_know``."""
    nested: dict[str, dict[str, dict[str, int]]] = {}
    groups = sorted({group for _, group, _ in delta})
    for key, question in zip(question_keys, survey.questions, strict=True):
        if question.numeric:
            for group in groups:
                changes = {"n": sum(n for (k, g, answer), n in delta.items()
                                    if k == key and g == group and answer != DONT_KNOW),
                           "dont_know": delta.get((key, group, DONT_KNOW), 0)}
                if any(changes.values()):
                    nested.setdefault(question.id, {})[str(group)] = changes
            continue
        for group in groups:
            for answer in question.design.response_labels:
                n = delta.get((key, group, answer), 0)
                if n:
                    nested.setdefault(question.id, {}).setdefault(str(group), {})[answer] = n
    return nested


def _reason(problem: CsvProblem) -> str:
    return f"{problem.column}: {problem.reason}" if problem.column else problem.reason


def _rejects_writer(partial: Path | None, source: ResponseFile):
    if partial is None:
        return None, None
    handle = partial.open("w", encoding="utf-8", newline="")
    writer = csv.writer(handle, delimiter=source.delimiter)
    writer.writerow([*(neutralize_formula(name) for name in source.header), "_line", "_reason"])
    return writer, handle


def _question_keys(conn: Connection, key: int, survey: Survey) -> list[int]:
    by_name = store.question_ids(conn, key)
    return [by_name[question.id] for question in survey.questions]


# -- writing answers ------------------------------------------------------------------


@dataclass
class _Outcome:
    """What a writer did: rows sent and changed in the database, answers stored before
    exactly as the file gives them (``unchanged``), answers of earlier imports changed to
    the file's (``replaced``), the change of the counts (``delta``) and the respondents
    new to the survey."""

    sent: int = 0
    affected: int = 0
    unchanged: int = 0
    replaced: int = 0
    delta: Delta = field(default_factory=Counter)
    new_respondents: int = 0


_COLUMNS = ("survey_id", "question_id", "respondent_id", "answer", "group_number", "import_id")


def _writer(conn: Connection, key: int, import_id: int, options: _Options):
    """The fastest correct way to write answers on this database.

    SQLite without --replace, for a file that meets no stored answer: one
    executemany per chunk straight into ``responses`` (ON CONFLICT DO
    NOTHING; a shortfall in the changed-row count means the file meets stored
    answers or repeats a pair, and the import starts over staged). Otherwise
    the chunks are staged in a temporary table, compared in SQL with the
    stored answers and written by one set-based INSERT ... SELECT: on
    PostgreSQL because COPY plus one statement is far faster than row-by-row
    inserts, with --replace or a cumulative export because the stored answers
    must be read first.
    """
    if conn.dialect.name == "sqlite" and not options.replace and not options.staged_only:
        return _DirectWriter(conn, key, import_id)
    return _StagedWriter(conn, key, import_id, options.replace)


class _DirectWriter:
    def __init__(self, conn: Connection, key: int, import_id: int) -> None:
        statement = store.dialect_insert(conn, store.responses).on_conflict_do_nothing(
            index_elements=_primary_key())
        self._statement = store.BulkStatement(conn, statement, _COLUMNS)
        self._key, self._import_id = key, import_id
        self._outcome = _Outcome()

    def send(self, conn: Connection, rows: list[tuple]) -> None:
        key, import_id = self._key, self._import_id
        changed = self._statement.execute(conn, [
            (key, question, respondent, answer, group, import_id)
            for question, respondent, answer, group in rows])
        if changed != len(rows):
            # the file meets stored answers (a cumulative export) or repeats a pair: the
            # staged writer tells unchanged answers from changed ones and duplicates
            raise _Overlap
        self._outcome.sent += len(rows)
        self._outcome.affected += changed
        self._outcome.delta.update((question, group, answer)
                                   for question, _, answer, group in rows)
        self._outcome.new_respondents += answer_counts.add_known_respondents(
            conn, key, {respondent for _, respondent, _, _ in rows})

    def finish(self, conn: Connection) -> _Outcome:
        return self._outcome


class _StagingTable:
    """A temporary table an import stages its chunks in: COPYed on PostgreSQL (dropped at
    commit or rollback), one executemany INSERT on SQLite (dropped by :meth:`drop`)."""

    def __init__(self, conn: Connection, name: str, columns: tuple[tuple[str, str], ...]):
        self.name = name
        self.postgres = conn.dialect.name == "postgresql"
        names = ", ".join(column for column, _ in columns)
        definition = ", ".join(f"{column} {kind} NOT NULL" for column, kind in columns)
        if self.postgres:
            # ON COMMIT DROP: a finished or rolled-back import leaves nothing behind
            conn.exec_driver_sql(f"CREATE TEMPORARY TABLE {name} ({definition}) ON COMMIT DROP")
            self._copy = f"COPY {name} ({names}) FROM STDIN"
        else:
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{name}")
            conn.exec_driver_sql(f"CREATE TEMPORARY TABLE {name} ({definition})")
            self._insert = (f"INSERT INTO {name} ({names}) "
                            f"VALUES ({', '.join('?' for _ in columns)})")

    def send(self, conn: Connection, rows: list[tuple]) -> None:
        if not self.postgres:
            conn.exec_driver_sql(self._insert, rows)
            return
        _copy_rows(conn, self._copy, rows)

    def drop(self, conn: Connection) -> None:
        """Drop the table on SQLite (PostgreSQL drops it at the end of the transaction)."""
        if not self.postgres:
            conn.exec_driver_sql(f"DROP TABLE temp.{self.name}")


def _copy_rows(conn: Connection, copy_sql: str, rows: list[tuple]) -> None:
    """Run PostgreSQL's ``COPY ... FROM STDIN`` statement ``copy_sql`` with ``rows``: one
    statement per chunk, where an executemany pays the driver's cost per row."""
    # the driver's own connection, inside the transaction SQLAlchemy began
    with conn.connection.dbapi_connection.cursor() as cursor:
        with cursor.copy(copy_sql) as copy:
            for row in rows:
                copy.write_row(row)


class _TableStage:
    """Rows for an existing temporary ``table``'s ``columns``: COPYed on PostgreSQL, one
    executemany INSERT elsewhere."""

    def __init__(self, conn: Connection, table: Table, columns: tuple[str, ...]) -> None:
        if conn.dialect.name == "postgresql":
            self._copy: str | None = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
        else:
            self._copy, self._insert = None, store.BulkStatement(conn, table.insert(), columns)

    def execute(self, conn: Connection, rows: list[tuple]) -> None:
        if self._copy is not None:
            _copy_rows(conn, self._copy, rows)
        else:
            self._insert.execute(conn, rows)


class _StagedWriter:
    """Chunks COPYed (PostgreSQL) or inserted (SQLite) into a temporary table, compared
    with the stored answers, then one set-based INSERT ... SELECT into ``responses``.

    A staged answer stored before with the same answer and group is unchanged
    (not written); one stored with another answer or group is a conflict
    (the diagnosis names its line) or, with ``replace``, a replacement.
    """

    TABLE = "surveykit_incoming"

    def __init__(self, conn: Connection, key: int, import_id: int, replace_answers: bool):
        self._key, self._import_id, self._replace = key, import_id, replace_answers
        self._outcome = _Outcome()
        self._staging = _StagingTable(conn, self.TABLE, (
            ("question_id", "INTEGER"), ("respondent_id", f"VARCHAR({RESPONDENT_ID_LENGTH})"),
            ("answer", f"VARCHAR({ANSWER_LENGTH})"), ("group_number", "INTEGER")))

    def send(self, conn: Connection, rows: list[tuple]) -> None:
        self._outcome.sent += len(rows)
        self._staging.send(conn, rows)

    def finish(self, conn: Connection) -> _Outcome:
        outcome, table = self._outcome, self.TABLE
        parameters = {"key": self._key, "import_id": self._import_id}
        # the stored answers the file meets, by their cell: they leave it (and the file's
        # come in below), so an unchanged answer leaves the counts as they were
        for question, group, answer, n, same in conn.execute(text(
                f"SELECT r.question_id, r.group_number, r.answer, count(*), "
                f"sum(CASE WHEN r.answer = i.answer AND r.group_number = i.group_number "
                # CROSS JOIN: SQLite then scans the staged rows and looks each up by the
                # primary key; with a plain JOIN it chose the unindexed temporary table as
                # the inner loop (a scan of it per stored answer: minutes for 10^5 rows)
                f"THEN 1 ELSE 0 END) FROM {table} i CROSS JOIN responses r "
                "WHERE r.survey_id = :key AND r.question_id = i.question_id "
                "AND r.respondent_id = i.respondent_id "
                "GROUP BY r.question_id, r.group_number, r.answer"), parameters):
            outcome.delta[question, group, answer] -= n
            outcome.unchanged += same
            outcome.replaced += n - same
        if outcome.replaced and not self._replace:
            raise _Shortfall  # changed answers: refused, with their lines
        if self._replace or outcome.unchanged:
            # A pair repeated inside the file is a duplicate, for the diagnosis to name, even
            # when it repeats a stored answer (which the insert below skips); and DO UPDATE
            # may not touch a key twice in one statement (PostgreSQL). Otherwise the plain
            # INSERT fails the primary key on such a pair.
            repeated = conn.execute(text(
                f"SELECT 1 FROM {table} GROUP BY question_id, respondent_id "
                "HAVING count(*) > 1 LIMIT 1")).first()
            if repeated is not None:
                raise _Shortfall
        for question, group, answer, n in conn.execute(text(
                f"SELECT question_id, group_number, answer, count(*) FROM {table} "
                "GROUP BY question_id, group_number, answer")):
            outcome.delta[question, group, answer] += n
        outcome.delta = Counter({k: n for k, n in outcome.delta.items() if n})
        insert = (f"INSERT INTO responses ({', '.join(_COLUMNS)}) "
                  f"SELECT :key, question_id, respondent_id, answer, group_number, :import_id "
                  f"FROM {table} i")
        if self._replace:
            # "WHERE true": SQLite's parser needs it between a SELECT and ON CONFLICT
            insert += (" WHERE true ON CONFLICT (survey_id, question_id, respondent_id) "
                       "DO UPDATE SET answer = excluded.answer, group_number = "
                       "excluded.group_number, import_id = excluded.import_id "
                       "WHERE responses.answer <> excluded.answer "
                       "OR responses.group_number <> excluded.group_number")
        else:
            insert += (" WHERE NOT EXISTS (SELECT 1 FROM responses r WHERE r.survey_id = :key "
                       "AND r.question_id = i.question_id AND r.respondent_id = i.respondent_id)")
        try:
            # the insert writes the new and changed answers: sent - unchanged, or the
            # caller's check sends the import to the diagnosis
            outcome.affected = conn.execute(text(insert), parameters).rowcount
        except sa_exc.IntegrityError:
            # Without --replace a plain INSERT: faster on PostgreSQL than ON CONFLICT DO
            # NOTHING, and a pair answered twice (in the file, or by a concurrent writer)
            # fails the primary key: the transaction is lost anyway, and the diagnosis
            # finds every such pair.
            raise _Shortfall from None
        outcome.new_respondents = answer_counts.add_known_respondents_from(conn, self._key,
                                                                           table)
        self._staging.drop(conn)
        return outcome


@dataclass(frozen=True)
class _CovariateOutcome:
    """Covariate values an import stored (new, or changed with ``replace``), of these the
    ``replaced`` ones, and the values stored identically before (``unchanged``)."""

    stored: int = 0
    replaced: int = 0
    unchanged: int = 0


class _CovariateWriter:
    """Covariate values staged in a temporary table, checked and written at the end.

    A respondent repeats its covariates on every row of a long file and in
    later files (a cumulative export): the same value again is unchanged. Two
    values in one file, or a value that differs from an earlier import's
    (without ``replace``), send the import to the diagnosis, which names the
    lines.
    """

    TABLE = "surveykit_covariates_incoming"

    def __init__(self, conn: Connection, key: int, import_id: int, replace_values: bool):
        self._key, self._import_id, self._replace = key, import_id, replace_values
        self._staging = _StagingTable(conn, self.TABLE, (
            ("respondent_id", f"VARCHAR({RESPONDENT_ID_LENGTH})"),
            ("name", f"VARCHAR({COVARIATE_NAME_LENGTH})"),
            ("value", f"VARCHAR({COVARIATE_VALUE_LENGTH})")))

    def send(self, conn: Connection, rows: list[tuple[str, str, str]]) -> None:
        self._staging.send(conn, rows)

    def finish(self, conn: Connection) -> _CovariateOutcome:
        """Write the staged values; say how many were stored, replaced and unchanged."""
        table, parameters = self.TABLE, {"key": self._key, "import_id": self._import_id}
        if conn.execute(text(f"SELECT 1 FROM {table} GROUP BY respondent_id, name "
                             "HAVING count(DISTINCT value) > 1 LIMIT 1")).first() is not None:
            raise _Shortfall
        met, same = conn.execute(text(
            "SELECT count(*), coalesce(sum(CASE WHEN c.value = i.value THEN 1 ELSE 0 END), 0) "
            f"FROM (SELECT DISTINCT respondent_id, name, value FROM {table}) i "
            "CROSS JOIN covariates c WHERE c.survey_id = :key "
            "AND c.respondent_id = i.respondent_id AND c.name = i.name"), parameters).one()
        insert = (f"INSERT INTO covariates (survey_id, respondent_id, name, value, import_id) "
                  f"SELECT DISTINCT :key, respondent_id, name, value, :import_id FROM {table} "
                  "WHERE true ON CONFLICT (survey_id, respondent_id, name) ")
        if self._replace:
            insert += ("DO UPDATE SET value = excluded.value, import_id = excluded.import_id "
                       "WHERE covariates.value <> excluded.value")
        else:
            insert += "DO NOTHING"
        stored = conn.execute(text(insert), parameters).rowcount
        if not self._replace and conn.execute(text(
                f"SELECT 1 FROM {table} i JOIN covariates c ON c.survey_id = :key "
                "AND c.respondent_id = i.respondent_id AND c.name = i.name "
                "WHERE c.value <> i.value LIMIT 1"), parameters).first() is not None:
            # checked after the insert: on PostgreSQL a concurrent import's value is
            # visible once DO NOTHING has waited for its commit
            raise _Shortfall
        self._staging.drop(conn)
        return _CovariateOutcome(stored=stored, replaced=met - same, unchanged=same)


def _primary_key():
    responses = store.responses
    return [responses.c.survey_id, responses.c.question_id, responses.c.respondent_id]


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
        Column("group_number", Integer, nullable=False),
        prefixes=["TEMPORARY"],
    )


def _covariate_staging_table() -> Table:
    return Table(
        "surveykit_covariate_staging", MetaData(),
        Column("line", Integer, nullable=False),
        Column("respondent_id", String(RESPONDENT_ID_LENGTH), nullable=False),
        Column("name", String(COVARIATE_NAME_LENGTH), nullable=False),
        Column("value", String(COVARIATE_VALUE_LENGTH), nullable=False),
        prefixes=["TEMPORARY"],
    )


@dataclass
class _Diagnosis:
    """Every problem of a file: those to show, how many, the bad rows by reason, and the
    rows refused by the database checks ({line: (reason, kind)})."""

    problems: list[CsvProblem] = field(default_factory=list)
    problem_count: int = 0
    bad_rows: int = 0
    kinds: Counter = field(default_factory=Counter)
    labels: Counter = field(default_factory=Counter)
    database_lines: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    conflicts: bool = False

    def add_row(self, problems: list[CsvProblem]) -> None:
        self.bad_rows += 1
        self.problem_count += len(problems)
        self.kinds.update(_row_kinds(problems))
        self.labels.update(_bad_labels(problems))
        self.problems.extend(problems[:max(0, MAX_PROBLEMS_KEPT - len(self.problems))])


def _diagnose(engine: Engine, path: Path, survey: Survey, facts, options: _Options,
              excluded: dict[int, tuple[str, str | None]]) -> _Diagnosis:
    """Every problem of the file, in one read-only pass plus SQL over a temporary table."""
    staging = _staging_table()
    diagnosis = _Diagnosis()
    database_lines: dict[int, list[CsvProblem]] = {}
    with engine.connect() as conn, conn.begin() as transaction:
        key = store.survey_id(conn, survey.name)
        _, survey = store.current_survey_version(conn, key, survey)
        question_keys = _question_keys(conn, key, survey)
        names = {k: q.id for k, q in zip(question_keys, survey.questions, strict=True)}
        staging.create(conn)
        stage = _TableStage(conn, staging, ("line", "question_id", "respondent_id", "answer",
                                            "group_number"))
        covariate_staging = _covariate_staging_table()
        covariate_staging.create(conn)
        stage_covariates = _TableStage(conn, covariate_staging,
                                       ("line", "respondent_id", "name", "value"))
        with open_responses(path, survey, options.fmt, kind=facts.kind,
                            size=facts.size, decimal_comma=options.decimal_comma
                            ) as source, _collector_paused():
            unit = source.unit
            headers = {column.covariate: column.header
                       for column in source.mapping.covariates()}
            for chunk in source.chunks(check_respondents=_issued_check(conn, key),
                                       excluded=excluded):
                for _, problems in chunk.rejected:
                    diagnosis.add_row(problems)
                if chunk.answers:
                    stage.execute(conn, [
                        (line, question_keys[question], respondent, answer, group)
                        for line, respondent, question, answer, group in chunk.answers])
                if chunk.covariates:
                    stage_covariates.execute(conn, [
                        (line, respondent, name, value)
                        for line, respondent, values in chunk.covariates
                        for name, value in values])
        # the joins below look staged rows up by their pair, whichever side the planner
        # puts outside (SQLite has no statistics on a temporary table)
        conn.exec_driver_sql("CREATE INDEX surveykit_staging_pair "
                             "ON surveykit_staging (question_id, respondent_id)")
        for problem in _duplicates(conn, staging, names, unit):
            database_lines.setdefault(problem.line, []).append(problem)
        if not options.replace:
            for problem in _conflicts(conn, staging, key, names, unit):
                diagnosis.conflicts = True
                database_lines.setdefault(problem.line, []).append(problem)
        if headers:
            for problem in _covariate_disagreements(conn, covariate_staging, headers, unit):
                database_lines.setdefault(problem.line, []).append(problem)
            if not options.replace:
                for problem in _covariate_conflicts(conn, covariate_staging, key, headers,
                                                    unit):
                    diagnosis.conflicts = True
                    database_lines.setdefault(problem.line, []).append(problem)
        transaction.rollback()
    for _, problems in sorted(database_lines.items()):
        diagnosis.add_row(problems)
    diagnosis.problems.sort(key=lambda problem: problem.line)
    diagnosis.database_lines = {
        line: ("; ".join(problem.reason for problem in problems), problems[0].kind)
        for line, problems in database_lines.items()}
    return diagnosis


def _duplicates(conn: Connection, staging: Table, names: dict[int, str], unit: str):
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
            yield from _duplicate_reasons(group, current, names, unit)
            group = []
        current = (question, respondent)
        group.append(line)
    if group:
        yield from _duplicate_reasons(group, current, names, unit)


def _duplicate_reasons(lines: list[int], pair, names: dict[int, str], unit: str):
    question, respondent = pair
    for line in lines:
        yield CsvProblem(line, "respondent_id", respondent,
                         duplicate_reason(names[question], lines, unit),
                         kind="duplicate in this file", unit=unit)


def _conflicts(conn: Connection, staging: Table, key: int, names: dict[int, str], unit: str):
    """A problem for every row changing the answer (or group) an earlier import stored for
    its pair; the same answer again is unchanged, not a problem (a cumulative export)."""
    responses, imports = store.responses, store.imports
    rows = conn.execute(
        select(staging.c.line, staging.c.question_id, staging.c.respondent_id,
               staging.c.answer, staging.c.group_number, responses.c.answer,
               responses.c.group_number, imports.c.id, imports.c.file_name)
        .join(responses, (responses.c.survey_id == key)
              & (responses.c.question_id == staging.c.question_id)
              & (responses.c.respondent_id == staging.c.respondent_id))
        .join(imports, imports.c.id == responses.c.import_id)
        .where((responses.c.answer != staging.c.answer)
               | (responses.c.group_number != staging.c.group_number))
        .order_by(staging.c.line))
    for line, question, respondent, new, group, old, old_group, import_id, file_name in rows:
        if new != old:
            change = f"with {old!r} (this file says {new!r})"
        else:
            change = f"in group {old_group} (this file says group {group})"
        yield CsvProblem(line, "respondent_id", respondent, (
            f"this respondent already answered question {names[question]!r} {change} "
            f"in import #{import_id} ({file_name})"), kind=CHANGED_ANSWER, unit=unit)


def _covariate_disagreements(conn: Connection, staging: Table, headers: dict[str, str],
                             unit: str):
    """A problem for every row giving a respondent another value of a covariate than
    another row of the same file."""
    differing = (select(staging.c.respondent_id, staging.c.name)
                 .group_by(staging.c.respondent_id, staging.c.name)
                 .having(func.count(staging.c.value.distinct()) > 1).subquery())
    rows = conn.execute(
        select(staging.c.line, staging.c.respondent_id, staging.c.name, staging.c.value)
        .join(differing, (differing.c.respondent_id == staging.c.respondent_id)
              & (differing.c.name == staging.c.name))
        .order_by(staging.c.respondent_id, staging.c.name, staging.c.line)).all()
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for line, respondent, name, value in rows:
        groups.setdefault((respondent, name), []).append((line, value))
    for (_respondent, name), found in groups.items():
        shown = ", ".join(f"{value!r} ({unit} {line})" for line, value in found[:6])
        more = f" and {len(found) - 6} more" if len(found) > 6 else ""
        for line, value in found:
            yield CsvProblem(line, headers[name], value, (
                f"this respondent's {name} differs between rows of this file: {shown}{more}; "
                "a respondent has one value"), kind="covariate differing within this file",
                unit=unit)


def _covariate_conflicts(conn: Connection, staging: Table, key: int, headers: dict[str, str],
                         unit: str):
    """A problem for every row whose covariate value differs from an earlier import's."""
    covariates, imports = store.covariates, store.imports
    rows = conn.execute(
        select(staging.c.line, staging.c.respondent_id, staging.c.name, staging.c.value,
               covariates.c.value, imports.c.id, imports.c.file_name)
        .join(covariates, (covariates.c.survey_id == key)
              & (covariates.c.respondent_id == staging.c.respondent_id)
              & (covariates.c.name == staging.c.name))
        .join(imports, imports.c.id == covariates.c.import_id)
        .where(covariates.c.value != staging.c.value)
        .order_by(staging.c.line))
    for line, _respondent, name, new, old, import_id, file_name in rows:
        yield CsvProblem(line, headers[name], new, (
            f"this respondent's {name} is {old!r} since import #{import_id} ({file_name}); "
            f"this file says {new!r}"), kind=CHANGED_COVARIATE,
            unit=unit)
