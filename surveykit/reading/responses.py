"""Reading and validating response files (CSV, Excel, zipped exports, Parquet), in chunks, with
errors that say where: the reader of ``surveykit import`` and of file counting alike.

Two layouts are accepted and told apart by their header:

* long: ``respondent_id, question_id, answer`` (one answer per row);
* wide: ``respondent_id`` and one column per question (one respondent per row),
  which is what field tools export.

Either layout may add a ``group`` column: the respondent's group (its number
1, 2, ... or the name the survey gives it) for surveys with multi-group
designs, and columns of the covariates the survey declares (``[covariates]``:
age, faculty, ...), read and checked by their declared type. Without a group
column the group comes from the issued id; a one-group survey needs none.
Which column is which is decided by
:func:`surveykit.reading.columns.map_columns`: column names, paths such as
``group/question``, question texts, the tool's metadata columns, and the
survey's ``[import]`` profile.

A file's kind is told by its content (:func:`inspect_file`). CSV files are
UTF-8 with or without a byte-order mark, separated by commas, semicolons or
tabs (whichever splits the header into the most columns), every row with as
many fields as the header. Excel workbooks (.xlsx, and .xls) are read from
their first sheet; a zip of CSV files (ODK Central's download) from its main
file, the repeat-group files being set aside with a note; Parquet cells as
:mod:`surveykit.reading.parquet` turns them into text. Answers are normalized
(:func:`surveykit.definition.survey.canonical_spelling`, built-in spellings,
the survey's aliases and ``[import.labels]``). An empty cell, or a label the
tool or the profile uses for "no answer", is *missing*: it is counted, never
stored, never taken for "don't know".

Problems carry the line as an editor shows it (the header is line 1; in a
workbook, the sheet's row number), the column, the value and the reason.
Nothing here touches the database: a caller may pass ``check_respondents``
to refuse ids it does not know.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey, canonical_spelling
from surveykit.errors import CsvImportError, CsvProblem, ParameterError
from surveykit.reading.cells import (
    bad_answer_reason,
    group_lookup,
    no_group_reason,
    not_a_group_reason,
    question_lookup,
)
from surveykit.reading.columns import ColumnMapping, QuestionResolver, map_columns
from surveykit.reading.numbers import number_reader
from surveykit.reading.parquet import open_parquet
from surveykit.reading.spreadsheets import (
    SNIFF_BYTES,
    not_a_response_file,
    open_sheet,
    sniff,
    zip_kind,
)
from surveykit.respondent_ids import (
    IdDiagnosis,
    diagnose_unknown_id,
    normalize_respondent_id,
)

__all__ = [
    "FORMATS",
    "check_decimal_comma",
    "Chunk",
    "FileFacts",
    "ResponseFile",
    "inspect_file",
    "neutralize_formula",
    "open_responses",
]

FORMATS = ("auto", "long", "wide")
LONG_COLUMNS = ("respondent_id", "question_id", "answer")
# Rows per chunk: big enough for fast bulk inserts, small enough to keep memory flat.
CHUNK_ROWS = 20_000
_BLOCK = 1 << 20
# Problems kept in memory for the error message; all are counted.
MAX_PROBLEMS_KEPT = 1000
# The longest CSV field read (Python's default, 128 KiB, is shorter than some
# free-text notes in real exports); a longer one is almost always a quote
# that was opened and never closed.
FIELD_LIMIT = 16 * 1024 * 1024
# Cells that a spreadsheet program would run as a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_DELIMITERS = (",", ";", "\t")


def neutralize_formula(cell: str) -> str:
    """A cell made safe to open in a spreadsheet: a leading ' before = + - @ tab CR.

    Files surveykit writes (rejects files) use it; reading a file that has
    ``_reason`` (a rejects file), :class:`ResponseFile` removes the quote
    again, so such a file imports as it is.

    >>> neutralize_formula("=1+2"), neutralize_formula("@SUM(A1)"), neutralize_formula("yes")
    ("'=1+2", "'@SUM(A1)", 'yes')
    """
    return "'" + cell if cell.startswith(FORMULA_START) else cell


def _restore_formula(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell


def canonical_respondent_id(typed: str) -> str:
    """An issued id as typed (any case, spaces, O for 0, I or L for 1) in its printed form.

    Text that cannot be an issued id is returned as it is, so the issued-id
    check can name it.

    >>> canonical_respondent_id("7kq2 m9xd 4frt 8b"), canonical_respondent_id("r-17")
    ('7KQ2-M9XD-4FRT-8B', 'r-17')
    """
    try:
        return normalize_respondent_id(typed)
    except ParameterError:
        return typed


@dataclass(frozen=True)
class FileFacts:
    """What one binary pass over the file found: its sha256, size in bytes and kind
    (csv, xlsx, xls, zip or parquet; see :func:`surveykit.reading.spreadsheets.sniff`)."""

    sha256: str
    size: int
    kind: str = "csv"


def inspect_file(path: str | Path) -> FileFacts:
    """Hash the file and tell its kind; a CSV must be non-empty UTF-8. One streaming pass.

    Raises CsvImportError for an empty file, a binary file no import reads
    (one line saying what it is), or bytes that are not UTF-8 (listing every
    line that has them).
    """
    path = Path(path)
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    size = 0
    bad_utf8 = False
    has_text = False
    kind, description = "csv", None
    try:
        with path.open("rb") as binary:
            while block := binary.read(_BLOCK):
                if size == 0:
                    kind, description = sniff(block[:SNIFF_BYTES])
                digest.update(block)
                size += len(block)
                if kind == "csv" and not bad_utf8:
                    try:
                        text = decoder.decode(block)
                    except UnicodeDecodeError:
                        bad_utf8 = True
                    else:
                        has_text = has_text or bool(text.strip("\ufeff \t\r\n"))
            if kind == "csv" and not bad_utf8:
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    bad_utf8 = True
    except OSError as exc:
        raise CsvImportError(str(path), [], summary=f"cannot read {path}: {exc.strerror}") from None
    if kind == "zip":
        kind, description = zip_kind(path)
    if kind == "binary":
        raise not_a_response_file(path, description)
    if bad_utf8:
        problems, count = _locate_bad_utf8(path)
        raise CsvImportError(
            str(path), problems, problem_count=count,
            summary=(f"{path} is not UTF-8 ({count} line{'s' if count != 1 else ''} with other "
                     "bytes); save it as UTF-8 (Excel: 'CSV UTF-8'; LibreOffice: character set "
                     "Unicode (UTF-8)); nothing was imported"),
        )
    if kind == "csv" and not has_text:
        raise CsvImportError(str(path), [], summary=(
            f"{path} is empty: a response file needs a header line (respondent_id, ...) and "
            "at least one row; nothing was imported"))
    return FileFacts(sha256=digest.hexdigest(), size=size, kind=kind)


def _locate_bad_utf8(path: Path) -> tuple[list[CsvProblem], int]:
    """Every line with non-UTF-8 bytes, naming the CSV column where the header allows."""
    problems: list[CsvProblem] = []
    count = 0
    delimiter, header = ",", None
    with path.open("rb") as binary:
        for number, raw in enumerate(binary, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                count += 1
                if len(problems) < MAX_PROBLEMS_KEPT:
                    problems.append(_bad_utf8_problem(number, raw, exc, delimiter, header))
                continue
            if number == 1:
                delimiter, header = _split_header(text)
    return problems, count


def _bad_utf8_problem(number: int, raw: bytes, exc: UnicodeDecodeError, delimiter: str,
                      header: list[str] | None) -> CsvProblem:
    # Show the value as Windows-1252 reads it: usually what the author typed.
    line = raw.decode("cp1252", errors="replace").rstrip("\r\n")
    reason = (f"byte 0x{raw[exc.start]:02x} is not UTF-8 (the file looks like Windows-1252 "
              "or Latin-1)")
    if header is None:
        return CsvProblem(number, None, line, reason, kind="not UTF-8")
    try:
        fields = next(csv.reader([line], delimiter=delimiter), [])
        before = raw[:exc.start].decode("utf-8", errors="replace")
        index = len(next(csv.reader([before + "x"], delimiter=delimiter), [""])) - 1
    except csv.Error:  # a stray carriage return or quote: name the line, not a column
        return CsvProblem(number, None, line, reason, kind="not UTF-8")
    if 0 <= index < min(len(header), len(fields)):
        return CsvProblem(number, header[index], fields[index], reason, kind="not UTF-8")
    return CsvProblem(number, None, line, reason, kind="not UTF-8")


def _split_header(line: str) -> tuple[str, list[str]]:
    """The delimiter and the column names of a header line.

    The delimiter is the one of , ; and tab that splits the header into the
    most columns (a comma on a tie): KoboToolbox writes ';', Excel in many
    locales too.

    >>> _split_header("start;end;grp/q1;_uuid")
    (';', ['start', 'end', 'grp/q1', '_uuid'])
    """
    line = line.lstrip("\ufeff").rstrip("\r\n")
    best = (",", [])
    for delimiter in _DELIMITERS:
        names = [name.strip() for name in next(csv.reader([line], delimiter=delimiter), [])]
        if len(names) > len(best[1]):
            best = (delimiter, names)
    return best


@dataclass
class Chunk:
    """Up to CHUNK_ROWS data rows, split into answers to store and rows to reject.

    ``answers`` holds (line, respondent_id, question_index, answer, group)
    tuples (group: 1, 2, ..., filled in from the issued id or 1 for a
    one-group survey by the time a chunk is yielded);
    ``rejected`` holds (fields, problems) for each refused row (a wide row is
    refused whole, listing each bad cell); ``bytes_read`` is the position in
    the file after the chunk; ``missing`` counts empty answer cells of kept rows.
    ``covariates`` holds (line, respondent_id, ((name, value), ...)) for kept
    rows with covariate values (missing values left out).
    """

    answers: list[tuple[int, str, int, str, int | None]] = field(default_factory=list)
    covariates: list[tuple[int, str, tuple[tuple[str, str], ...]]] = field(
        default_factory=list)
    rejected: list[tuple[list[str], list[CsvProblem]]] = field(default_factory=list)
    rows: int = 0
    missing: int = 0
    bytes_read: int = 0


class ResponseFile:
    """An open response file: its kind, layout (``file_format``), header, mapping and chunks.

    Use as a context manager; :meth:`chunks` streams the data rows once.
    ``name`` names the file in messages (a zipped export adds the member
    read); ``unit`` is "line" for CSV and "row" for workbooks; ``notes`` says
    what was set aside (other sheets, repeat-group files).
    """

    def __init__(self, path: Path, survey: Survey, file_format: str, kind: str = "csv",
                 size: int | None = None, *, decimal_comma: bool = False) -> None:
        if file_format not in FORMATS:
            raise ParameterError(f"format {file_format!r} must be one of {', '.join(FORMATS)}")
        if decimal_comma:
            check_decimal_comma(path, kind)
        self.path = path
        self.survey = survey
        self.kind = kind
        self.name = str(path)
        self.unit = "row" if kind in ("xlsx", "xls", "parquet") else "line"
        self.delimiter = ","
        # a CSV file's first line as read; a Parquet file's column names as written, and
        # the kind of each (surveykit.reading.parquet.text_kind)
        self.header_line = ""
        self.column_names: tuple[str, ...] = ()
        self.column_kinds: tuple[str, ...] = ()
        self.notes: list[str] = []
        # unknown ids of this file for which the nearest issued id is looked up
        self._suggestions_left = 100
        self._closers: list[Callable[[], object]] = []
        self._size = path.stat().st_size if size is None else size
        self._position: Callable[[], int] = lambda: 0
        self._spellings = [question.answer_spellings() for question in survey.questions]
        # numeric questions: their cells are numbers (surveykit.reading.numbers)
        self._numbers = [number_reader(question, decimal_comma=decimal_comma)
                         if question.numeric else None for question in survey.questions]
        self._questions = question_lookup(survey)
        self._resolver = QuestionResolver(survey)
        # group cell -> group number; an empty cell means "take it from the issued id"
        self._groups = group_lookup(survey)
        try:
            header, self._rows = self._open()
            self.header = header
            self.mapping: ColumnMapping = map_columns(header, survey, file_format, self.name,
                                                      self.unit)
            self.file_format = self.mapping.layout
            self._missing = self.mapping.missing_labels
            self._columns = {column.role: column.index for column in self.mapping.columns
                             if column.role in ("respondent_id", "question_id", "answer",
                                                "group")}
            self._group_at = self._columns.get("group")
            ids = {question.id: index for index, question in enumerate(survey.questions)}
            self._wide = [(column.index, ids[column.question], column.header)
                          for column in self.mapping.questions()]
            self._covariates = [(column.index, survey.covariate(column.covariate),
                                 column.header) for column in self.mapping.covariates()]
            # a rejects file: its cells were written with neutralize_formula
            self.restores_formulas = any(name.casefold() == "_reason" for name in header)
            if self.restores_formulas:
                rows = self._rows
                self._rows = ((line, [_restore_formula(cell) for cell in fields])
                              for line, fields in rows)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> ResponseFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        while self._closers:
            self._closers.pop()()

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """The data rows as read, (line, cells), before any check: what :meth:`chunks`
        checks, for a reader that checks them elsewhere (counting gives workbooks to DuckDB
        as CSV). The rows are streamed once, by this or by :meth:`chunks`."""
        return self._rows

    # -- opening each kind of file ------------------------------------------------------

    def _open(self) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        csv.field_size_limit(max(csv.field_size_limit(), FIELD_LIMIT))
        if self.kind in ("xlsx", "xls"):
            return self._open_sheet()
        if self.kind == "zip":
            return self._open_zip()
        if self.kind == "parquet":
            return self._open_parquet()
        binary = self.path.open("rb")
        self._closers.append(binary.close)
        # kept open here: a wrapper freed with its exhausted reader would close the file
        self._text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
        self._position = binary.tell
        return self._open_text(self._text)

    def _open_text(self, text: io.TextIOWrapper
                   ) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        try:
            self.header_line = text.readline()
        except UnicodeDecodeError:
            raise self._not_utf8(1) from None
        self.delimiter, header = _split_header(self.header_line)
        return header, self._csv_rows(text)

    def _csv_rows(self, text: io.TextIOWrapper) -> Iterator[tuple[int, list[str]]]:
        reader = csv.reader(text, delimiter=self.delimiter)
        end = 1  # the header is line 1
        try:
            for fields in reader:
                line = end + 1
                end = reader.line_num + 1
                yield line, fields
        except csv.Error as exc:
            line = end + 1
            if "field larger than field limit" in str(exc):
                reason = (f"a field longer than {FIELD_LIMIT // (1024 * 1024)} MiB starts on "
                          "this line: a quote (\") opened here is probably never closed; "
                          "close it or remove it")
            else:
                reason = f"the CSV cannot be read here ({exc})"
            raise CsvImportError(self.name, [CsvProblem(line, None, None, reason,
                                                        kind="unreadable CSV")],
                                 summary=f"{self.name}, line {line}: {reason}; "
                                         "nothing was imported") from None
        except UnicodeDecodeError:
            raise self._not_utf8(end + 1) from None

    def _not_utf8(self, line: int) -> CsvImportError:
        return CsvImportError(self.name, [], summary=(
            f"{self.name} is not UTF-8 (near line {line}); save it as UTF-8; "
            "nothing was imported"))

    def _open_zip(self) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        archive = zipfile.ZipFile(self.path)
        self._closers.append(archive.close)
        main, repeats = [], []
        for info in archive.infolist():
            if info.is_dir() or not info.filename.lower().endswith(".csv"):
                continue
            with archive.open(info) as raw:
                first = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace",
                                         newline="").readline()
            names = {name.casefold() for name in _split_header(first)[1]}
            (repeats if "parent_key" in names else main).append(info)
        if len(main) != 1:
            listed = ", ".join(info.filename for info in main) or "none"
            raise CsvImportError(str(self.path), [], summary=(
                f"{self.path} holds {len(main)} main CSV files ({listed}); a zipped export "
                "is read from its one file without PARENT_KEY: unzip it and import the "
                "file you mean; nothing was imported"))
        info = main[0]
        self.name = f"{self.path} ({info.filename})"
        if repeats:
            self.notes.append("repeat-group files set aside (their rows are repeats, not "
                              "respondents): " + ", ".join(i.filename for i in repeats))
        raw = archive.open(info)
        self._closers.append(raw.close)
        total = max(info.file_size, 1)
        self._position = lambda: self._size * raw.tell() // total
        self._text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        return self._open_text(self._text)

    def _open_parquet(self) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        table = open_parquet(self.path, self.name)
        self._closers.append(table.close)
        self.column_names = table.names
        self.column_kinds = table.kinds
        total = max(table.total + 1, 1)
        self._position = lambda: self._size * table.reached() // total
        return [name.strip() for name in table.names], table.rows

    def _open_sheet(self) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        sheet = open_sheet(self.path, self.kind)
        self._closers.append(sheet.close)
        self.name = f"{self.path} (sheet {sheet.sheet!r})"
        if sheet.others:
            self.notes.append("sheets not read (repeat groups or other tables): "
                              + ", ".join(repr(name) for name in sheet.others))
        first = next(sheet.rows, None)
        header = [cell.strip() for cell in first[1]] if first else []
        while header and not header[-1]:
            header.pop()  # a sheet's used range often runs past the last named column
        if not header:
            raise CsvImportError(self.name, [], summary=(
                f"{self.name} is empty: its first row must be a header (respondent_id, ...) "
                "with at least one row below; nothing was imported"))
        width = len(header)
        total = max(sheet.total, 1)
        reached = [1]
        self._position = lambda: self._size * reached[0] // total

        def rows() -> Iterator[tuple[int, list[str]]]:
            for number, cells in sheet.rows:
                reached[0] = number
                if len(cells) > width and not any(cell.strip() for cell in cells[width:]):
                    cells = cells[:width]
                elif len(cells) < width:
                    cells = cells + [""] * (width - len(cells))
                yield number, cells

        return header, rows()

    # -- rows -----------------------------------------------------------------------

    def chunks(self, *, chunk_rows: int = CHUNK_ROWS,
               check_respondents: Callable[[set[str]], Mapping[str, int | None]] | None = None,
               excluded: Mapping[int, tuple[str, str | None]] | None = None
               ) -> Iterator[Chunk]:
        """Stream the data rows in chunks.

        ``check_respondents(ids)`` returns the ids of a chunk that were issued,
        each with its group (None when issued without one); the other ids are
        refused. ``excluded`` maps lines to (reason, kind) for rows refused by
        an earlier pass (duplicates, conflicts).
        """
        parse = self._parse_long if self.file_format == "long" else self._parse_wide
        excluded = excluded or {}
        # Long rows that are plainly fine take a short path (a few dict lookups):
        # this loop runs once per row of million-row files.
        fast = self.file_format == "long" and not self._covariates
        width = len(self.header)
        if fast:
            at_respondent, at_question, at_answer = (self._columns[name] for name in LONG_COLUMNS)
        questions, spellings, groups = self._questions, self._spellings, self._groups
        at_group = self._group_at
        # one-group surveys without a group column: every answer is in group 1
        default_group = 1 if len(self.survey.groups) == 1 else None
        keep_rows = check_respondents is not None or len(self.survey.groups) > 1
        kept: dict[int, list[str]] | None = {} if keep_rows else None
        chunk = Chunk()
        answers = chunk.answers
        for line, fields in self._rows:
            if not fields:
                continue  # an empty line is not a row
            chunk.rows += 1
            if excluded and line in excluded:
                reason, kind = excluded[line]
                chunk.rejected.append((fields, [self._problem(line, None, None, reason,
                                                              kind)]))
            elif fast and len(fields) == width and (
                    (respondent := fields[at_respondent].strip())
                    and len(respondent) <= RESPONDENT_ID_LENGTH
                    and (question := questions.get(fields[at_question])) is not None
                    and (answer := spellings[question].get(fields[at_answer])) is not None
                    and (at_group is None
                         or (group := groups.get(fields[at_group], False)) is not False)):
                answers.append((line, respondent, question, answer,
                                default_group if at_group is None else group))
                if kept is not None:
                    kept[line] = fields
            elif not any(cell.strip() for cell in fields):
                chunk.rows -= 1  # a row of empty cells is a blank line too
            else:
                parsed, problems = parse(line, fields, chunk)
                if problems:
                    chunk.rejected.append((fields, problems))
                else:
                    answers.extend(parsed)
                    if kept is not None and (parsed or (chunk.covariates and
                                                        chunk.covariates[-1][0] == line)):
                        kept[line] = fields
            if chunk.rows >= chunk_rows:
                yield self._finish(chunk, check_respondents, kept)
                chunk = Chunk()
                answers = chunk.answers
                kept = {} if kept is not None else None
        if chunk.rows:
            yield self._finish(chunk, check_respondents, kept)

    def _problem(self, line: int, column: str | None, value: str | None, reason: str,
                 kind: str | None) -> CsvProblem:
        return CsvProblem(line, column, value, reason, kind=kind, unit=self.unit)

    def _finish(self, chunk: Chunk,
                check: Callable[[set[str]], Mapping[str, int | None]] | None,
                kept: dict[int, list[str]] | None) -> Chunk:
        issued: Mapping[str, int | None] | None = None
        if check is not None and kept and (chunk.answers or chunk.covariates):
            # Issued ids come back typed by hand: read them as the id they stand for.
            canonical = {typed: canonical_respondent_id(typed)
                         for typed in {answer[1] for answer in chunk.answers}
                         | {row[1] for row in chunk.covariates}}
            if any(typed != id_ for typed, id_ in canonical.items()):
                chunk.answers[:] = [(line, canonical[respondent], question, answer, group)
                                    for line, respondent, question, answer, group
                                    in chunk.answers]
                chunk.covariates[:] = [(line, canonical[respondent], values)
                                       for line, respondent, values in chunk.covariates]
            issued = check(set(canonical.values()))
            refused = set(canonical.values()) - set(issued)
            # a typo the check symbol catches is told apart from an id never issued; the
            # nearest issued id is looked up for the first ids only (each is ~1,000 lookups)
            reasons: dict[IdDiagnosis, set[str]] = {}
            for respondent in sorted(refused):
                suggest = self._suggestions_left > 0
                self._suggestions_left -= suggest
                diagnosis = diagnose_unknown_id(respondent, lambda ids: set(check(ids)),
                                                survey=self.survey.name, suggest=suggest)
                reasons.setdefault(diagnosis, set()).add(respondent)
            for diagnosis, ids in reasons.items():
                self._reject(chunk, kept, {line for line, respondent, *_ in
                                           [*chunk.answers, *chunk.covariates]
                                           if respondent in ids},
                             "respondent_id", lambda fields: fields[
                                 self._columns["respondent_id"]].strip(),
                             diagnosis.reason, diagnosis.kind)
        self._assign_groups(chunk, issued, kept)
        chunk.bytes_read = self._position()
        return chunk

    def _assign_groups(self, chunk: Chunk, issued: Mapping[str, int | None] | None,
                       kept: dict[int, list[str]] | None) -> None:
        """Every answer's group: the file's, the issued id's (they must agree), or 1."""
        single = len(self.survey.groups) == 1
        if single and self._group_at is None:
            return  # the rows were read with group 1
        conflicting: dict[int, str] = {}
        missing: set[int] = set()
        resolved = []
        for line, respondent, question, answer, group in chunk.answers:
            from_id = issued.get(respondent) if issued is not None else None
            if group is not None and from_id is not None and group != from_id:
                conflicting[line] = (f"group {self.survey.groups[group - 1]!r} differs from "
                                     f"group {self.survey.groups[from_id - 1]!r}, the group "
                                     "this respondent id was issued with")
                continue
            chosen = group if group is not None else from_id
            if chosen is None:
                if single:
                    chosen = 1
                else:
                    missing.add(line)
                    continue
            resolved.append((line, respondent, question, answer, chosen))
        chunk.answers[:] = resolved
        if kept is None:
            return
        value = (lambda fields: fields[self._group_at].strip()) if self._group_at is not None \
            else (lambda fields: "")
        for line, reason in conflicting.items():
            self._reject(chunk, kept, {line}, "group", value, reason,
                         "group differs from the issued id's")
        if missing:
            self._reject(chunk, kept, missing, "group", value, no_group_reason(self.survey),
                         "no group")

    def _reject(self, chunk: Chunk, kept: dict[int, list[str]] | None, lines: set[int],
                column: str, value: Callable[[list[str]], str], reason: str,
                kind: str) -> None:
        """Move whole rows (every answer of their lines) to the rejected rows."""
        if not lines:
            return
        chunk.answers[:] = [a for a in chunk.answers if a[0] not in lines]
        chunk.covariates[:] = [c for c in chunk.covariates if c[0] not in lines]
        for line in sorted(lines):
            fields = kept[line] if kept is not None else []
            chunk.rejected.append((fields, [self._problem(line, self._header_of(column),
                                                          value(fields), reason, kind)]))
        chunk.rejected.sort(key=lambda rejected: rejected[1][0].line)

    def _header_of(self, role: str) -> str:
        """The file's name for a role's column (the profile may call respondent_id otherwise)."""
        index = self._columns.get(role)
        return self.header[index] if index is not None else role

    def _check_row(self, line: int, fields: list[str]) -> tuple[str, list[CsvProblem]]:
        """The respondent id of a row, and the problems of its shape and id."""
        if len(fields) != len(self.header):
            return "", [self._problem(
                line, None, None,
                f"the row has {len(fields)} fields but the header has {len(self.header)}; "
                f"look for a stray or missing {self.delimiter!r} or an unclosed quote",
                "wrong number of fields")]
        column = self._header_of("respondent_id")
        value = fields[self._columns["respondent_id"]].strip()
        if not value:
            return value, [self._problem(line, column, value, "the respondent id is empty",
                                         "empty respondent id")]
        if len(value) > RESPONDENT_ID_LENGTH:
            return value, [self._problem(line, column, value, (
                f"the respondent id is longer than {RESPONDENT_ID_LENGTH} characters"),
                "respondent id too long")]
        return value, []

    def _answer(self, question: int, raw: str) -> str | None:
        spellings = self._spellings[question]
        return spellings.get(raw) or spellings.get(canonical_spelling(raw))

    def _is_missing(self, raw: str) -> bool:
        """An empty cell, or a label the tool or the profile uses for "no answer"."""
        return not raw.strip() or (bool(self._missing)
                                   and canonical_spelling(raw) in self._missing)

    def _number(self, line: int, column: str, question: int, raw: str,
                problems: list[CsvProblem]) -> str | None:
        """A numeric question's cell in its stored form, or None with a problem added (for a
        choice question: the cell is not one of its answers)."""
        reader = self._numbers[question]
        if reader is None:
            problems.append(self._bad_answer(line, column, question, raw))
            return None
        value, problem = reader.read(raw)
        if problem is not None:
            kind, reason = problem
            problems.append(self._problem(
                line, column, raw, f"question {self.survey.questions[question].id!r} takes a "
                f"number: {reason}", kind))
        return value

    def _bad_answer(self, line: int, column: str, question: int, raw: str) -> CsvProblem:
        return self._problem(line, column, raw,
                             bad_answer_reason(self.survey.questions[question], raw),
                             "not an answer")

    def _group(self, line: int, fields: list[str], problems: list[CsvProblem]) -> int | None:
        """The group a row names (None: none given), adding a problem if it is not a group."""
        if self._group_at is None:
            return None
        raw = fields[self._group_at].strip()
        group = self._groups.get(raw, self._groups.get(raw.casefold(), False))
        if group is False:
            problems.append(self._problem(line, self._header_of("group"), raw,
                                          not_a_group_reason(self.survey), "not a group"))
            return None
        return group

    def _parse_long(self, line: int, fields: list[str], chunk: Chunk):
        respondent, problems = self._check_row(line, fields)
        if len(fields) != len(self.header):
            return [], problems
        raw_question = fields[self._columns["question_id"]].strip()
        question = self._questions.get(raw_question)
        if question is None:
            question = self._questions.get(raw_question.casefold())
        if question is None and raw_question:
            found = self._resolver.resolve(raw_question)
            question = found[0] if found is not None else None
        if question is None:
            if raw_question:
                known = ", ".join(q.id for q in self.survey.questions)
                problems.append(self._problem(
                    line, "question_id", raw_question,
                    f"unknown question id: survey {self.survey.name!r} has {known}",
                    "unknown question"))
            else:
                problems.append(self._problem(line, "question_id", raw_question,
                                              "the question id is empty", "empty question id"))
            return [], problems
        group = self._group(line, fields, problems)
        covariates = self._read_covariates(line, fields, problems)
        raw = fields[self._columns["answer"]]
        if self._is_missing(raw):
            if not problems:
                chunk.missing += 1
                self._keep_covariates(chunk, line, respondent, covariates)
            return [], problems
        answer = self._answer(question, raw)
        if answer is None:
            answer = self._number(line, "answer", question, raw, problems)
        if problems:
            return [], problems
        if group is None and self._group_at is None and len(self.survey.groups) == 1:
            group = 1
        self._keep_covariates(chunk, line, respondent, covariates)
        return [(line, respondent, question, answer, group)], problems

    def _parse_wide(self, line: int, fields: list[str], chunk: Chunk):
        respondent, problems = self._check_row(line, fields)
        if len(fields) != len(self.header):
            return [], problems
        answers = []
        blank = 0
        group = self._group(line, fields, problems)
        if group is None and self._group_at is None and len(self.survey.groups) == 1:
            group = 1
        for index, question, name in self._wide:
            raw = fields[index]
            if self._is_missing(raw):
                blank += 1
                continue
            answer = self._answer(question, raw)
            if answer is None:
                answer = self._number(line, name, question, raw, problems)
            if answer is not None:
                answers.append((line, respondent, question, answer, group))
        covariates = self._read_covariates(line, fields, problems)
        if problems:
            return [], problems
        chunk.missing += blank
        self._keep_covariates(chunk, line, respondent, covariates)
        return answers, problems

    def _read_covariates(self, line: int, fields: list[str], problems: list[CsvProblem]
                         ) -> tuple[tuple[str, str], ...]:
        """(name, value) for the row's covariate cells that are not missing; a problem for
        each cell that does not read as its declared type."""
        values = []
        for index, covariate, header in self._covariates:
            raw = fields[index]
            if self._is_missing(raw):
                continue
            value, problem = covariate.read(raw)
            if problem is not None:
                kind, reason = problem
                problems.append(self._problem(line, header, raw, f"{kind}: {reason}", kind))
            else:
                values.append((covariate.name, value))
        return tuple(values)

    @staticmethod
    def _keep_covariates(chunk: Chunk, line: int, respondent: str,
                         values: tuple[tuple[str, str], ...]) -> None:
        if values:
            chunk.covariates.append((line, respondent, values))


def check_decimal_comma(path: str | Path, kind: str) -> None:
    """Refuse ``--decimal-comma`` for a file whose numbers are not text (a workbook, Parquet)."""
    if kind in ("xlsx", "xls", "parquet"):
        raise ParameterError(
            f"--decimal-comma reads the numbers of CSV files; {path} is a {kind} file, "
            "whose number cells are numbers already: import it without --decimal-comma")


def open_responses(path: str | Path, survey: Survey, file_format: str = "auto", *,
                   kind: str = "csv", size: int | None = None,
                   decimal_comma: bool = False) -> ResponseFile:
    """Open a response file (already checked by :func:`inspect_file`, which gives ``kind``)
    and map its header to the survey. ``decimal_comma``: the numeric answers of a CSV file
    are written with a decimal comma (1234,5; :mod:`surveykit.reading.numbers`)."""
    return ResponseFile(Path(path), survey, file_format, kind, size,
                        decimal_comma=decimal_comma)
