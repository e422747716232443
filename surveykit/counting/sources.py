"""Response files to count where they lie: find them (paths, globs, directories), open each with
the reader ``surveykit import`` uses (:mod:`surveykit.reading`), and describe it to every engine
the same way.

A file's kind is told by its content, never its name, as on import. CSV and
Parquet files are read by the engines where they lie; a workbook (.xlsx,
.xls) or a zipped export is written once as a CSV of the rows the reader
reads, so that the engines see exactly what an import sees. Which column is
the respondent id, the group, each question (or question_id and answer) is
the reader's column mapping (:mod:`surveykit.reading.columns`): the survey's
``[import]`` profile, group paths, question texts, the tool's metadata
columns, all as on import.

Some files the fast engines cannot vouch for cheaply; ``exact_only`` then
says why, and they are counted row by row (:mod:`surveykit.counting.exact`):
columns of declared covariates (whose cells import checks by type), a
rejects file (whose cells import un-neutralizes), a Parquet file whose read
columns hold dates, decimals or nested values, a CSV header with a quote left
open.
"""

from __future__ import annotations

import csv
import glob
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, MissingInputError, ParameterError
from surveykit.reading.responses import ResponseFile, inspect_file
from surveykit.reading.spreadsheets import file_kind, not_a_response_file

__all__ = ["COVARIATES_EXACT_ONLY", "ENDINGS", "ResponseSource", "counted_instead",
           "expand_paths", "open_sources", "quote_name", "quote_text"]

# The file name endings a directory's response files have (a file named on its own, or by a
# glob, is read whatever its name: its content tells its kind).
ENDINGS = (".csv", ".txt", ".tsv", ".xlsx", ".xls", ".zip", ".parquet", ".pq")
_GLOB_CHARACTERS = frozenset("*?[")
#: ``exact_only`` of a file whose only reason is its covariate columns.
COVARIATES_EXACT_ONLY = "columns of declared covariates (import checks their cells by type)"


@dataclass(frozen=True)
class ResponseSource:
    """One response file as every engine reads it.

    ``path``: as the user named it; ``name``: as messages name it (a zipped
    export adds its member, a workbook its sheet); ``kind``: csv, xlsx, xls,
    zip or parquet, from the content; ``table``: the file an engine reads
    (``path``, or a CSV written from a workbook's or zip's rows), of kind
    ``table_kind`` (csv or parquet); ``header``: the column names as the
    engine reads them (Parquet: as written); ``column_kinds``: a Parquet
    column's kind of cells (:func:`surveykit.reading.parquet.text_kind`);
    ``delimiter``; ``unit``: what the reader numbers, "line" (CSV) or "row"
    (workbooks and Parquet, whose first row is the header); ``layout``: long
    or wide; ``respondent``, ``question``, ``answer``, ``group``: column
    positions (None when absent); ``wide``:
    (position, question index) of each question column of a wide file;
    ``missing_labels``: the canonical spellings that mean "no answer" here
    (the profile's, the tool's); ``exact_only``: why only the row-by-row path
    can count this file (None: any engine can); ``written_here``: ``table``
    was written by surveykit (its dialect is known); ``covariates``: (position,
    covariate name) of each column of a declared covariate (design columns of
    ``[sampling]`` among them), in file order.
    """

    index: int
    path: Path
    name: str
    kind: str
    table: Path
    header: tuple[str, ...]
    delimiter: str
    layout: str
    respondent: int
    question: int | None
    answer: int | None
    group: int | None
    wide: tuple[tuple[int, int], ...]
    column_kinds: tuple[str, ...] = ()
    unit: str = "line"
    missing_labels: frozenset[str] = frozenset()
    exact_only: str | None = None
    written_here: bool = False
    covariates: tuple[tuple[int, str], ...] = ()

    @property
    def table_kind(self) -> str:
        """What an engine reads: csv or parquet."""
        return "parquet" if self.kind == "parquet" else "csv"

    @property
    def read_columns(self) -> tuple[int, ...]:
        """The positions of the columns whose cells are counted (id, group, questions)."""
        return tuple(at for at in (self.respondent, self.question, self.answer, self.group)
                     if at is not None) + tuple(at for at, _ in self.wide)


def expand_paths(patterns: Sequence[str | Path]) -> list[Path]:
    """Files named by paths, globs (``exports/*.csv``, ``**`` too) and directories (their
    files with a response file's ending, :data:`ENDINGS`), in the order given, each once.

    >>> expand_paths([])
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: --data names no file: give one or more CSV, XLSX or \
Parquet files, globs (exports/*.csv) or directories
    """
    if not patterns:
        raise ParameterError("--data names no file: give one or more CSV, XLSX or Parquet "
                             "files, globs (exports/*.csv) or directories")
    found: list[Path] = []
    for pattern in patterns:
        text = str(pattern)
        if _GLOB_CHARACTERS & set(text):
            matches = [Path(m) for m in sorted(glob.glob(text, recursive=True))
                       if Path(m).is_file()]
            if not matches:
                raise ParameterError(f"--data {text!r} matches no file; check the pattern "
                                     "(quote it so that the shell does not expand it)")
        elif Path(text).is_dir():
            matches = sorted(p for p in Path(text).iterdir()
                             if p.is_file() and p.suffix.lower() in ENDINGS)
            if not matches:
                raise ParameterError(f"--data {text!r} is a directory without response files "
                                     f"({', '.join(ENDINGS)})")
        elif Path(text).is_file():
            matches = [Path(text)]
        else:
            raise MissingInputError(f"--data {text!r}: no such file or directory; check the "
                                    "path")
        found += matches
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def counted_instead(error: CsvImportError) -> CsvImportError:
    """The reader's error, saying that nothing was counted (nothing is ever imported here)."""
    summary = error.summary.replace("nothing was imported", "nothing was counted")
    return CsvImportError(error.path, error.problems, problem_count=error.problem_count,
                          summary=summary, kinds=error.kinds)


@contextmanager
def open_sources(paths: Sequence[Path], survey: Survey) -> Iterator[list[ResponseSource]]:
    """Open every file with the importer's reader (its checks and messages, naming the file):
    its kind, header and column mapping; workbooks and zips written as CSV.

    The CSV files written here live until the block ends.
    """
    with tempfile.TemporaryDirectory(prefix="surveykit-count-") as scratch:
        yield [_open_source(index, path, survey, Path(scratch))
               for index, path in enumerate(paths)]


def _open_source(index: int, path: Path, survey: Survey, scratch: Path) -> ResponseSource:
    try:
        kind, description = file_kind(path)
    except OSError as exc:
        raise CsvImportError(str(path), [], summary=f"cannot read {path}: {exc.strerror}; "
                                                    "nothing was counted") from None
    if kind == "binary":
        raise counted_instead(not_a_response_file(path, description))
    try:
        with ResponseFile(path, survey, "auto", kind) as reader:
            source = _describe(index, path, kind, reader)
            if kind in ("xlsx", "xls", "zip"):
                table = scratch / f"{index}.csv"
                _write_rows(reader, table)
                source = replace(source, table=table, written_here=True)
    except CsvImportError as error:
        if kind == "csv":
            # an empty or non-UTF-8 file is the more basic problem: say that first
            # (inspect_file reads the whole file, so only when the header fails)
            try:
                inspect_file(path)
            except CsvImportError as basic:
                raise counted_instead(basic) from None
        raise counted_instead(error) from None
    return source


def _describe(index: int, path: Path, kind: str, reader: ResponseFile) -> ResponseSource:
    """What an engine needs to know of an open file, from the reader's mapping."""
    mapping = reader.mapping
    order = {question.id: number for number, question in enumerate(reader.survey.questions)}
    wide = tuple((column.index, order[column.question]) for column in mapping.questions())
    header = tuple(reader.column_names) if kind == "parquet" else tuple(reader.header)
    source = ResponseSource(
        index=index, path=path, name=reader.name, kind=kind, table=path, header=header,
        delimiter=reader.delimiter, layout=reader.file_format,
        respondent=mapping.index("respondent_id"), question=mapping.index("question_id"),
        answer=mapping.index("answer"), group=mapping.index("group"), wide=wide,
        column_kinds=tuple(reader.column_kinds), unit=reader.unit,
        missing_labels=mapping.missing_labels,
        covariates=tuple((column.index, column.covariate) for column in mapping.covariates()))
    return replace(source, exact_only=_exact_only(source, reader))


def _exact_only(source: ResponseSource, reader: ResponseFile) -> str | None:
    """Why only the row-by-row path can count this file, or None."""
    if reader.restores_formulas:
        return "a rejects file (its cells are read without their leading quote)"
    if any(source.column_kinds[at] == "other" for at in source.read_columns
           if source.column_kinds):
        return "Parquet columns of dates, decimals or nested values among those read"
    if reader.header_line.count('"') % 2:
        return "a quote in the header line that is not closed on it"
    # last: the weighted counts of a sampled survey read its design columns fast, when no
    # other reason holds (surveykit.counting.weighted_files)
    if reader.mapping.covariates():
        return COVARIATES_EXACT_ONLY
    return None


def _write_rows(reader: ResponseFile, out: Path) -> None:
    """The reader's header and rows as a CSV an engine reads as the reader does (every cell
    quoted; the header's line is skipped by the engines)."""
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(reader.header)
        for _, fields in reader.rows():
            if fields:
                writer.writerow(fields)
            else:
                handle.write("\n")


def quote_name(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_text(value: object) -> str:
    """A path or text as an SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"
