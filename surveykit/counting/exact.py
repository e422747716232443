"""Counting files exactly, row by row: the importer's reader, then SQL over staged answers.

This is the path that every fast path (DuckDB, Dask) must agree with, and the
one taken when a fast path cannot vouch for its counts: a bad cell, a
respondent who may answer twice, issued ids to check. Each file is read by
the importer's :class:`~surveykit.definition.responses.ResponseFile` (its
rules, its problems with line, column, value and reason); the accepted
answers are staged in DuckDB (which spills to disk), where SQL finds every
respondent answering a question twice in a file, or in two files, and counts.

Files count as successive imports would: a (respondent, question) that an
earlier file answered is a conflict, unless ``replace``, when the later file's
answer (and group) wins, as ``surveykit import --replace`` does.
"""

from __future__ import annotations

import gc
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from surveykit.counting.sources import (
    ResponseSource,
    counted_instead,
    parquet_to_csv,
    response_file,
)
from surveykit.counts import Counts
from surveykit.definition.cells import duplicate_reason
from surveykit.definition.responses import MAX_PROBLEMS_KEPT, inspect_file
from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, CsvProblem
from surveykit.store.database import QuestionCounts

__all__ = ["count_exactly"]

IssuedCheck = Callable[[set[str]], Mapping[str, int | None]]

_STAGED = """CREATE TABLE staged (f INTEGER, line BIGINT, qi INTEGER, r VARCHAR, label VARCHAR,
                                  grp INTEGER)"""


def count_exactly(con, sources: Sequence[ResponseSource], survey: Survey, *,
                  replace: bool = False, check_respondents: IssuedCheck | None = None
                  ) -> list[QuestionCounts]:
    """Counts per question of ``sources``, or a CsvImportError naming the file and lines.

    ``con`` is a DuckDB connection (:func:`surveykit.counting.duckdb_engine.connect`);
    ``check_respondents(ids)`` returns the issued ids among ``ids`` with their
    groups, as for an import.
    """
    import pyarrow as pa

    con.execute(_STAGED)
    was_enabled = gc.isenabled()
    gc.disable()  # as the importer does: millions of short-lived tuples, no cycles
    try:
        with tempfile.TemporaryDirectory(prefix="surveykit-exact-") as scratch:
            for source in sources:
                table = source.table
                if source.kind == "parquet":
                    table = Path(scratch) / f"{source.index}.csv"
                    parquet_to_csv(source.path, table)
                _stage_file(con, source, table, survey, check_respondents, pa)
    finally:
        if was_enabled:
            gc.enable()
    names = [question.id for question in survey.questions]
    _refuse_duplicates(con, sources, names)
    if not replace:
        _refuse_conflicts(con, sources, names)
    latest = ("SELECT * FROM staged QUALIFY row_number() OVER "
              "(PARTITION BY qi, r ORDER BY f DESC) = 1") if replace else "SELECT * FROM staged"
    tables: list[dict[str, dict[str, int]]] = [{} for _ in survey.questions]
    for question, group, label, n in con.execute(
            f"SELECT qi, grp, label, count(*) FROM ({latest}) GROUP BY ALL").fetchall():
        tables[question].setdefault(str(group), {})[label] = int(n)
    respondents = con.execute("SELECT count(DISTINCT r) FROM staged").fetchone()[0]
    return [QuestionCounts(question_id=question.id, counts=Counts.from_mapping(table),
                           missing=respondents - sum(sum(g.values()) for g in table.values()))
            for question, table in zip(survey.questions, tables, strict=True)]


def _stage_file(con, source: ResponseSource, table: Path, survey: Survey,
                check: IssuedCheck | None, pa) -> None:
    shown: list[CsvProblem] = []
    problem_count = bad_rows = rows = 0
    try:
        if source.kind == "csv":
            inspect_file(source.path)  # empty, or bytes that are not UTF-8: said with lines
        with response_file(source.path, table, survey) as reader:
            for chunk in reader.chunks(check_respondents=check):
                rows += chunk.rows
                for _, problems in chunk.rejected:
                    bad_rows += 1
                    problem_count += len(problems)
                    shown.extend(problems[:max(0, MAX_PROBLEMS_KEPT - len(shown))])
                if chunk.answers and not bad_rows:
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
    if bad_rows:
        raise CsvImportError(str(source.path), shown, problem_count=problem_count, summary=(
            f"{bad_rows} bad row{'s' if bad_rows != 1 else ''} in {source.path}; nothing was "
            "counted (fix them and count again, or import the other rows with "
            "'surveykit import --skip-invalid --rejects FILE')"))
    if rows == 0:
        raise CsvImportError(str(source.path), [], summary=(
            f"{source.path} has a header but no data rows; nothing was counted"))


def _refuse(sources: Sequence[ResponseSource], by_file: dict[int, list[CsvProblem]],
            count: dict[int, int], what: str, hint: str) -> None:
    if not by_file:
        return
    first = min(by_file)
    problems = sorted(by_file[first], key=lambda problem: problem.line)
    bad = count[first]
    path = sources[first].path
    raise CsvImportError(str(path), problems[:MAX_PROBLEMS_KEPT], problem_count=len(problems),
                         summary=(f"{bad} {what}{'s' if bad != 1 else ''} in {path}; nothing "
                                  f"was counted ({hint})"))


def _refuse_duplicates(con, sources: Sequence[ResponseSource], names: Sequence[str]) -> None:
    """Every row of a respondent answering one question twice in one file, with its lines."""
    by_file: dict[int, list[CsvProblem]] = {}
    count: dict[int, int] = {}
    # find the repeated pairs first: lists only for them, not for every answer
    for f, qi, r, lines in con.execute(
            "WITH repeated AS (SELECT f, qi, r FROM staged GROUP BY f, qi, r "
            "HAVING count(*) > 1) "
            "SELECT f, qi, r, list(line ORDER BY line) FROM staged JOIN repeated "
            "USING (f, qi, r) GROUP BY f, qi, r ORDER BY f, min(line)").fetchall():
        for line in lines:
            by_file.setdefault(f, []).append(
                CsvProblem(line, "respondent_id", r, duplicate_reason(names[qi], lines)))
        count[f] = count.get(f, 0) + len(lines)
    _refuse(sources, by_file, count, "bad row", "fix them and count again")


def _refuse_conflicts(con, sources: Sequence[ResponseSource], names: Sequence[str]) -> None:
    """Rows answering what an earlier file answered (successive imports would refuse them)."""
    if len(sources) < 2:
        return
    by_file: dict[int, list[CsvProblem]] = {}
    count: dict[int, int] = {}
    for qi, r, answers in con.execute(
            "WITH shared AS (SELECT qi, r FROM staged GROUP BY qi, r "
            "HAVING min(f) < max(f)) "
            "SELECT qi, r, list((f, line, label) ORDER BY f, line) FROM staged "
            "JOIN shared USING (qi, r) GROUP BY qi, r").fetchall():
        first_file, first_line, first_label = _fields(answers[0])
        for answer in answers[1:]:
            f, line, label = _fields(answer)
            if f == first_file:
                continue
            same = ("the same answer" if label == first_label
                    else f"{first_label!r} (this file says {label!r})")
            by_file.setdefault(f, []).append(CsvProblem(line, "respondent_id", r, (
                f"this respondent already answered question {names[qi]!r} with {same} in "
                f"{sources[first_file].path} (line {first_line})")))
            count[f] = count.get(f, 0) + 1
    _refuse(sources, by_file, count, "conflicting row",
            "each respondent answers each question in one file; to count the later file's "
            "answers instead, as 'surveykit import --replace' would, use --replace")


def _fields(value) -> tuple:
    return tuple(value.values()) if isinstance(value, dict) else tuple(value)
