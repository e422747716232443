"""Counting files exactly, row by row: the importer's reader, then SQL over staged answers.

This is the path that every fast path (DuckDB, Dask) must agree with, and the
one taken when a fast path cannot vouch for its counts: a bad cell, a
respondent who may answer twice, issued ids to check. Each file is read as it
is (CSV, workbook, zip, Parquet) by the importer's
:class:`~surveykit.reading.responses.ResponseFile` (its rules, its problems
with line, column, value and reason); the accepted answers are staged in
DuckDB (which spills to disk), where SQL finds every respondent answering a
question twice in a file, or in two files, and counts.

Files count as successive imports would: a (respondent, question) that an
earlier file answered is a conflict, unless ``replace``, when the later file's
answer (and group) wins, as ``surveykit import --replace`` does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from surveykit.counting.sources import ResponseSource, counted_instead
from surveykit.counting.tally import question_counts
from surveykit.counts import QuestionCounts
from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, CsvProblem
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.reading.cells import duplicate_reason
from surveykit.reading.responses import MAX_PROBLEMS_KEPT, ResponseFile, inspect_file

__all__ = ["count_exactly"]

IssuedCheck = Callable[[set[str]], Mapping[str, int | None]]

_STAGED = """CREATE TABLE staged (f INTEGER, line BIGINT, qi INTEGER, r VARCHAR, label VARCHAR,
                                  grp INTEGER)"""


def count_exactly(con, sources: Sequence[ResponseSource], survey: Survey, *,
                  replace: bool = False, check_respondents: IssuedCheck | None = None,
                  decimal_comma: bool = False) -> list[QuestionCounts | NumericQuestionCounts]:
    """Counts per question of ``sources``, or a CsvImportError naming the file and lines.

    ``con`` is a DuckDB connection (:func:`surveykit.counting.duckdb_engine.connect`);
    ``check_respondents(ids)`` returns the issued ids among ``ids`` with their
    groups, as for an import. The first file with problems is refused with
    all of them, as its import would be: bad rows, repeated answers and (unless
    ``replace``) answers an earlier file gave, in line order.
    """
    import pyarrow as pa

    con.execute(_STAGED)
    names = [question.id for question in survey.questions]
    was_enabled = gc.isenabled()
    gc.disable()  # as the importer does: millions of short-lived tuples, no cycles
    try:
        for source in sources:
            rejected = _stage_file(con, source, survey, check_respondents, pa, decimal_comma)
            if rejected.bad_rows:  # no need to read on: this file is refused
                _refuse(source, rejected, *_database_problems(
                    con, sources, names, replace, only=source.index))
    finally:
        if was_enabled:
            gc.enable()
    found, conflicts = _database_problems(con, sources, names, replace)
    for source in sources:
        if source.index in found:
            _refuse(source, _Rejected(), {source.index: found[source.index]}, conflicts)
    latest = ("SELECT * FROM staged QUALIFY row_number() OVER "
              "(PARTITION BY qi, r ORDER BY f DESC) = 1") if replace else "SELECT * FROM staged"
    tables: list[dict[str, dict[str, int]]] = [{} for _ in survey.questions]
    for question, group, label, n in con.execute(
            f"SELECT qi, grp, label, count(*) FROM ({latest}) GROUP BY ALL").fetchall():
        tables[question].setdefault(str(group), {})[label] = int(n)
    respondents = con.execute("SELECT count(DISTINCT r) FROM staged").fetchone()[0]
    return question_counts(survey, tables, respondents)


@dataclass
class _Rejected:
    """The rows of one file that its reader refused: problems kept, counted, rows."""

    shown: list[CsvProblem] = field(default_factory=list)
    problem_count: int = 0
    bad_rows: int = 0


def _stage_file(con, source: ResponseSource, survey: Survey, check: IssuedCheck | None,
                pa, decimal_comma: bool = False) -> _Rejected:
    """Read a file with the importer's reader; stage its answers; return its refused rows."""
    rejected = _Rejected()
    rows = 0
    try:
        if source.kind == "csv":
            inspect_file(source.path)  # empty, or bytes that are not UTF-8: said with lines
        with ResponseFile(source.path, survey, "auto", source.kind,
                          decimal_comma=decimal_comma) as reader:
            for chunk in reader.chunks(check_respondents=check):
                rows += chunk.rows
                for _, problems in chunk.rejected:
                    rejected.bad_rows += 1
                    rejected.problem_count += len(problems)
                    rejected.shown.extend(
                        problems[:max(0, MAX_PROBLEMS_KEPT - len(rejected.shown))])
                if chunk.answers:
                    lines, respondents, questions, labels, groups = zip(*chunk.answers,
                                                                        strict=True)
                    batch = pa.table({
                        "f": pa.array([source.index] * len(lines), pa.int32()),
                        "line": pa.array(lines, pa.int64()),
                        "qi": pa.array(questions, pa.int32()),
                        "r": pa.array(respondents, pa.string()),
                        "label": pa.array(labels, pa.string()),
                        "grp": pa.array(groups, pa.int32()),
                    })
                    con.register("staged_batch", batch)
                    con.execute("INSERT INTO staged SELECT * FROM staged_batch")
                    con.unregister("staged_batch")
    except CsvImportError as error:
        raise counted_instead(error) from None
    if rows == 0:
        raise CsvImportError(str(source.path), [], summary=(
            f"{source.name} has a header but no data rows; nothing was counted"))
    return rejected


def _refuse(source: ResponseSource, rejected: _Rejected,
            found: dict[int, list[CsvProblem]], conflicts: set[int]) -> None:
    """Raise the file's problems as its import would list them (the importer's diagnosis)."""
    database = sorted(found.get(source.index, []), key=lambda problem: problem.line)
    if not rejected.bad_rows and not database:
        return
    shown = list(rejected.shown)
    shown.extend(database[:max(0, MAX_PROBLEMS_KEPT - len(shown))])
    shown.sort(key=lambda problem: problem.line)
    bad = rejected.bad_rows + len({problem.line for problem in database})
    hint = ("fix them and count again, or import the other rows with "
            "'surveykit import --skip-invalid --rejects FILE'")
    if source.index in conflicts:
        hint += ("; each respondent answers each question in one file: to count the later "
                 "file's answers instead, as 'surveykit import --replace' would, use --replace")
    raise CsvImportError(str(source.path), shown,
                         problem_count=rejected.problem_count + len(database),
                         summary=(f"{bad} bad row{'s' if bad != 1 else ''} in {source.path}; "
                                  f"nothing was counted ({hint})"))


def _database_problems(con, sources: Sequence[ResponseSource], names: Sequence[str],
                       replace: bool, only: int | None = None
                       ) -> tuple[dict[int, list[CsvProblem]], set[int]]:
    """Repeated answers in a file and (unless ``replace``) answers an earlier file gave:
    problems per file (``only``: that file's), and the files with conflicts."""
    found: dict[int, list[CsvProblem]] = {}
    for f, qi, r, lines in con.execute(
            # the repeated pairs first: lists only for them, not for every answer
            "WITH repeated AS (SELECT f, qi, r FROM staged "
            f"{'' if only is None else f'WHERE f = {int(only)} '}"
            "GROUP BY f, qi, r HAVING count(*) > 1) "
            "SELECT f, qi, r, list(line ORDER BY line) FROM staged JOIN repeated "
            "USING (f, qi, r) GROUP BY f, qi, r").fetchall():
        unit = sources[f].unit
        for line in lines:
            found.setdefault(f, []).append(CsvProblem(
                line, "respondent_id", r, duplicate_reason(names[qi], lines, unit),
                kind="duplicate in this file", unit=unit))
    conflicts: set[int] = set()
    if replace or len(sources) < 2:
        return found, conflicts
    for qi, r, answers in con.execute(
            "WITH shared AS (SELECT qi, r FROM staged GROUP BY qi, r "
            "HAVING min(f) < max(f)) "
            "SELECT qi, r, list((f, line, label) ORDER BY f, line) FROM staged "
            "JOIN shared USING (qi, r) GROUP BY qi, r").fetchall():
        first_file, first_line, first_label = _fields(answers[0])
        for answer in answers[1:]:
            f, line, label = _fields(answer)
            if f == first_file or (only is not None and f != only):
                continue
            same = ("the same answer" if label == first_label
                    else f"{first_label!r} (this file says {label!r})")
            conflicts.add(f)
            first = sources[first_file]
            found.setdefault(f, []).append(CsvProblem(line, "respondent_id", r, (
                f"this respondent already answered question {names[qi]!r} with {same} in "
                f"{first.path} ({first.unit} {first_line})"),
                kind="answered in an earlier file", unit=sources[f].unit))
    return found, conflicts


def _fields(value) -> tuple:
    return tuple(value.values()) if isinstance(value, dict) else tuple(value)
