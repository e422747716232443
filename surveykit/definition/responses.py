"""Reading and validating response CSV files, in chunks, with errors that say where.

Two layouts are accepted and told apart by their header:

* long: ``respondent_id, question_id, answer`` (one answer per row);
* wide: ``respondent_id`` and one column per question id (one respondent per row).

Either layout may add a ``group`` column: the respondent's group (its number
1, 2, ... or the name the survey gives it) for surveys with multi-group
designs. Without it the group comes from the issued id; a one-group survey
needs none.

Files are UTF-8 with or without a byte-order mark, separated by commas or
semicolons (whichever the header uses). Answers are normalized
(:func:`surveykit.definition.survey.canonical_spelling`, built-in spellings and the
survey's aliases). An empty cell is *missing*: it is counted, never stored,
never taken for "don't know". Columns whose name starts with ``_`` (Kobo/ODK
metadata such as ``_uuid``, and the ``_line`` and ``_reason`` columns of a
rejects file) and columns without a name are ignored.

Problems carry the line as an editor shows it (the header is line 1), the
column, the value and the reason. Nothing here touches the database: a
caller may pass ``check_respondents`` to refuse ids it does not know.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from surveykit.collection.respondent_ids import normalize_respondent_id
from surveykit.definition.survey import Survey, canonical_spelling
from surveykit.errors import CsvImportError, CsvProblem, ParameterError
from surveykit.store.models import RESPONDENT_ID_LENGTH

__all__ = [
    "FORMATS",
    "Chunk",
    "FileFacts",
    "ResponseFile",
    "inspect_file",
    "open_responses",
]

FORMATS = ("auto", "long", "wide")
LONG_COLUMNS = ("respondent_id", "question_id", "answer")
# Rows per chunk: big enough for fast bulk inserts, small enough to keep memory flat.
CHUNK_ROWS = 20_000
_BLOCK = 1 << 20
# Problems kept in memory for the error message; all are counted.
MAX_PROBLEMS_KEPT = 1000



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
    """What one binary pass over the file found: its sha256 and size in bytes."""

    sha256: str
    size: int


def inspect_file(path: str | Path) -> FileFacts:
    """Hash the file and check that it is non-empty UTF-8, in one streaming pass.

    Raises CsvImportError for an empty file or for bytes that are not UTF-8,
    listing every line that has them.
    """
    path = Path(path)
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    size = 0
    bad_utf8 = False
    has_text = False
    try:
        with path.open("rb") as binary:
            while block := binary.read(_BLOCK):
                digest.update(block)
                size += len(block)
                if not bad_utf8:
                    try:
                        text = decoder.decode(block)
                    except UnicodeDecodeError:
                        bad_utf8 = True
                    else:
                        has_text = has_text or bool(text.strip("\ufeff \t\r\n"))
            if not bad_utf8:
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    bad_utf8 = True
    except OSError as exc:
        raise CsvImportError(str(path), [], summary=f"cannot read {path}: {exc.strerror}") from None
    if bad_utf8:
        problems, count = _locate_bad_utf8(path)
        raise CsvImportError(
            str(path), problems, problem_count=count,
            summary=(f"{path} is not UTF-8 ({count} line{'s' if count != 1 else ''} with other "
                     "bytes); save it as UTF-8 (Excel: 'CSV UTF-8'; LibreOffice: character set "
                     "Unicode (UTF-8)); nothing was imported"),
        )
    if not has_text:
        raise CsvImportError(str(path), [], summary=(
            f"{path} is empty: a response file needs a header line (respondent_id, ...) and "
            "at least one row; nothing was imported"))
    return FileFacts(sha256=digest.hexdigest(), size=size)


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
        return CsvProblem(number, None, line, reason)
    fields = next(csv.reader([line], delimiter=delimiter), [])
    before = raw[:exc.start].decode("utf-8", errors="replace")
    index = len(next(csv.reader([before + "x"], delimiter=delimiter), [""])) - 1
    if 0 <= index < min(len(header), len(fields)):
        return CsvProblem(number, header[index], fields[index], reason)
    return CsvProblem(number, None, line, reason)


def _split_header(line: str) -> tuple[str, list[str]]:
    """The delimiter and the column names of a header line: ';' if it names respondent_id."""
    line = line.lstrip("\ufeff").rstrip("\r\n")
    for delimiter in (",", ";"):
        names = [name.strip() for name in next(csv.reader([line], delimiter=delimiter), [])]
        if "respondent_id" in (name.casefold() for name in names):
            return delimiter, names
    return ",", [name.strip() for name in next(csv.reader([line]), [])]


@dataclass
class Chunk:
    """Up to CHUNK_ROWS data rows, split into answers to store and rows to reject.

    ``answers`` holds (line, respondent_id, question_index, answer, group)
    tuples (group: 1, 2, ..., filled in from the issued id or 1 for a
    one-group survey by the time a chunk is yielded);
    ``rejected`` holds (fields, problems) for each refused row (a wide row is
    refused whole, listing each bad cell); ``bytes_read`` is the position in
    the file after the chunk; ``missing`` counts empty answer cells of kept rows.
    """

    answers: list[tuple[int, str, int, str, int | None]] = field(default_factory=list)
    rejected: list[tuple[list[str], list[CsvProblem]]] = field(default_factory=list)
    rows: int = 0
    missing: int = 0
    bytes_read: int = 0


class ResponseFile:
    """An open response file: its layout (``file_format``), header and chunks.

    Use as a context manager; :meth:`chunks` streams the data rows once.
    """

    def __init__(self, path: Path, survey: Survey, file_format: str) -> None:
        self.path = path
        self.survey = survey
        self._binary = path.open("rb")
        self._text = io.TextIOWrapper(self._binary, encoding="utf-8-sig", newline="")
        self._spellings = [question.answer_spellings() for question in survey.questions]
        self._questions = {q.id.casefold(): index for index, q in enumerate(survey.questions)}
        for index, question in enumerate(survey.questions):
            self._questions[question.id] = index
        # group cell -> group number; an empty cell means "take it from the issued id"
        self._groups: dict[str, int | None] = {"": None}
        for number, name in enumerate(survey.groups, start=1):
            for spelling in (str(number), name, name.casefold(), name.upper()):
                self._groups[spelling] = number
        self._group_at: int | None = None
        try:
            self.delimiter, self.header = _split_header(self._text.readline())
            self.file_format = self._layout(file_format)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> ResponseFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._text.close()

    # -- header -------------------------------------------------------------------

    def _fail(self, problems: list[CsvProblem], summary: str) -> CsvImportError:
        return CsvImportError(str(self.path), problems, summary=summary)

    def _layout(self, requested: str) -> str:
        if requested not in FORMATS:
            raise ParameterError(f"format {requested!r} must be one of {', '.join(FORMATS)}")
        used = [(i, name) for i, name in enumerate(self.header)
                if name and not name.startswith("_")]
        folded = [name.casefold() for _, name in used]
        repeated = sorted({name for name in folded if folded.count(name) > 1})
        if repeated:
            raise self._fail([CsvProblem(1, name, None, "this column appears more than once")
                              for name in repeated],
                             f"{self.path}: the header repeats columns; nothing was imported")
        self._columns = {name.casefold(): i for i, name in used}
        if "respondent_id" not in self._columns:
            found = ", ".join(name for _, name in used) or "none"
            raise self._fail([CsvProblem(1, None, None,
                                         f"no respondent_id column (found: {found})")], (
                f"{self.path}: wrong header: a response file starts with a header line naming "
                "respondent_id and either question_id, answer (long layout) or one column per "
                f"question (wide layout: {', '.join(q.id for q in self.survey.questions)}); "
                "nothing was imported"))
        self._group_at = self._columns.get("group")
        is_long = "question_id" in self._columns or "answer" in self._columns
        layout = "long" if is_long else "wide"
        if requested != "auto" and requested != layout:
            raise self._fail([CsvProblem(1, None, None, f"the header is a {layout} header")], (
                f"{self.path}: --format {requested} was given but the header "
                f"({', '.join(name for _, name in used)}) is the {layout} layout; "
                "nothing was imported"))
        problems = []
        if layout == "long":
            for name in LONG_COLUMNS:
                if name not in self._columns:
                    problems.append(CsvProblem(1, None, None,
                                               f"the long layout needs the column {name}"))
            for _, name in used:
                if name.casefold() not in LONG_COLUMNS and name.casefold() != "group":
                    problems.append(CsvProblem(1, name, None, (
                        "unexpected column in the long layout (respondent_id, question_id, "
                        "answer, and group for multi-group designs); remove it or rename it "
                        "to start with '_'")))
        else:
            self._wide = []
            for index, name in used:
                if name.casefold() in ("respondent_id", "group"):
                    continue
                question = self._questions.get(name, self._questions.get(name.casefold()))
                if question is None:
                    problems.append(CsvProblem(1, name, None, self._unknown_question(name)))
                else:
                    self._wide.append((index, question, name))
            if not self._wide and not problems:
                problems.append(CsvProblem(1, None, None, "no question columns"))
        if problems:
            raise self._fail(problems, f"{self.path}: wrong header; nothing was imported")
        return layout

    def _unknown_question(self, name: str) -> str:
        known = ", ".join(q.id for q in self.survey.questions)
        return (f"unknown question id: survey {self.survey.name!r} has {known}")

    # -- rows -----------------------------------------------------------------------

    def chunks(self, *, chunk_rows: int = CHUNK_ROWS,
               check_respondents: Callable[[set[str]], Mapping[str, int | None]] | None = None,
               excluded: Mapping[int, str] | None = None) -> Iterator[Chunk]:
        """Stream the data rows in chunks.

        ``check_respondents(ids)`` returns the ids of a chunk that were issued,
        each with its group (None when issued without one); the other ids are
        refused. ``excluded`` maps lines to reasons for rows refused by an
        earlier pass (duplicates, conflicts).
        """
        reader = csv.reader(self._text, delimiter=self.delimiter)
        parse = self._parse_long if self.file_format == "long" else self._parse_wide
        excluded = excluded or {}
        # Long rows that are plainly fine take a short path (a few dict lookups):
        # this loop runs once per row of million-row files.
        fast = self.file_format == "long"
        width = len(self.header)
        if fast:
            at_respondent, at_question, at_answer = (self._columns[name] for name in LONG_COLUMNS)
        questions, spellings, groups = self._questions, self._spellings, self._groups
        at_group = self._group_at
        # one-group surveys without a group column: every answer is in group 1
        default_group = 1 if len(self.survey.groups) == 1 else None
        keep_rows = check_respondents is not None or len(self.survey.groups) > 1
        kept: dict[int, list[str]] | None = {} if keep_rows else None
        end = 1  # the header is line 1
        chunk = Chunk()
        answers = chunk.answers
        for fields in reader:
            line = end + 1
            end = reader.line_num + 1
            if not fields:
                continue  # an empty line is not a row
            chunk.rows += 1
            if excluded and line in excluded:
                chunk.rejected.append((fields, [CsvProblem(line, None, None, excluded[line])]))
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
                    if kept is not None and parsed:
                        kept[line] = fields
            if chunk.rows >= chunk_rows:
                yield self._finish(chunk, check_respondents, kept)
                chunk = Chunk()
                answers = chunk.answers
                kept = {} if kept is not None else None
        if chunk.rows:
            yield self._finish(chunk, check_respondents, kept)

    def _finish(self, chunk: Chunk,
                check: Callable[[set[str]], Mapping[str, int | None]] | None,
                kept: dict[int, list[str]] | None) -> Chunk:
        issued: Mapping[str, int | None] | None = None
        if check is not None and kept and chunk.answers:
            # Issued ids come back typed by hand: read them as the id they stand for.
            canonical = {typed: canonical_respondent_id(typed)
                         for typed in {answer[1] for answer in chunk.answers}}
            if any(typed != id_ for typed, id_ in canonical.items()):
                chunk.answers[:] = [(line, canonical[respondent], question, answer, group)
                                    for line, respondent, question, answer, group
                                    in chunk.answers]
            issued = check(set(canonical.values()))
            refused = set(canonical.values()) - set(issued)
            if refused:
                self._reject(chunk, kept, {line for line, respondent, *_ in chunk.answers
                                           if respondent in refused},
                             "respondent_id", lambda fields: fields[
                                 self._columns["respondent_id"]].strip(),
                             f"this respondent id was not issued for survey "
                             f"{self.survey.name!r} (only issued questionnaire ids are accepted)")
        self._assign_groups(chunk, issued, kept)
        chunk.bytes_read = self._binary.tell()
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
            self._reject(chunk, kept, {line}, "group", value, reason)
        if missing:
            names = ", ".join(f"{i} ({n})" if n != str(i) else str(i)
                              for i, n in enumerate(self.survey.groups, start=1))
            self._reject(chunk, kept, missing, "group", value, (
                f"no group: survey {self.survey.name!r} has multi-group designs (groups "
                f"{names}); add a group column, or import answers of ids issued with a group"))

    def _reject(self, chunk: Chunk, kept: dict[int, list[str]] | None, lines: set[int],
                column: str, value: Callable[[list[str]], str], reason: str) -> None:
        """Move whole rows (every answer of their lines) to the rejected rows."""
        if not lines:
            return
        chunk.answers[:] = [a for a in chunk.answers if a[0] not in lines]
        for line in sorted(lines):
            fields = kept[line] if kept is not None else []
            chunk.rejected.append((fields, [CsvProblem(line, column, value(fields), reason)]))
        chunk.rejected.sort(key=lambda rejected: rejected[1][0].line)

    def _check_row(self, line: int, fields: list[str]) -> tuple[str, list[CsvProblem]]:
        """The respondent id of a row, and the problems of its shape and id."""
        if len(fields) != len(self.header):
            return "", [CsvProblem(
                line, None, None,
                f"the row has {len(fields)} fields but the header has {len(self.header)}; "
                f"look for a stray or missing {self.delimiter!r} or an unclosed quote")]
        value = fields[self._columns["respondent_id"]].strip()
        if not value:
            return value, [CsvProblem(line, "respondent_id", value, "the respondent id is empty")]
        if len(value) > RESPONDENT_ID_LENGTH:
            return value, [CsvProblem(line, "respondent_id", value, (
                f"the respondent id is longer than {RESPONDENT_ID_LENGTH} characters"))]
        return value, []

    def _answer(self, question: int, raw: str) -> str | None:
        spellings = self._spellings[question]
        return spellings.get(raw) or spellings.get(canonical_spelling(raw))

    def _bad_answer(self, line: int, column: str, question: int, raw: str) -> CsvProblem:
        asked = self.survey.questions[question]
        aliases = sorted(asked.aliases)
        extra = f", or an alias of this question ({', '.join(aliases)})" if aliases else ""
        if asked.design.is_binary and len(asked.design.response_labels) == 3:
            allowed = "yes/y/1/true, no/n/0/false or dont_know/don't know/dk"
        else:
            allowed = (", ".join(asked.design.answer_labels)
                       + " or dont_know/don't know/dk")
        return CsvProblem(line, column, raw, (
            f"not an answer: use {allowed}{extra}; "
            "leave the cell empty if the answer is missing"))

    def _group(self, line: int, fields: list[str], problems: list[CsvProblem]) -> int | None:
        """The group a row names (None: none given), adding a problem if it is not a group."""
        if self._group_at is None:
            return None
        raw = fields[self._group_at].strip()
        group = self._groups.get(raw, self._groups.get(raw.casefold(), False))
        if group is False:
            names = ", ".join(f"{i} ({n})" if n != str(i) else str(i)
                              for i, n in enumerate(self.survey.groups, start=1))
            problems.append(CsvProblem(line, "group", raw, (
                f"not a group of survey {self.survey.name!r}; its groups are {names}")))
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
        if question is None:
            reason = (self._unknown_question(raw_question) if raw_question
                      else "the question id is empty")
            problems.append(CsvProblem(line, "question_id", raw_question, reason))
            return [], problems
        group = self._group(line, fields, problems)
        raw = fields[self._columns["answer"]]
        if not raw.strip():
            if not problems:
                chunk.missing += 1
            return [], problems
        answer = self._answer(question, raw)
        if answer is None:
            problems.append(self._bad_answer(line, "answer", question, raw))
        if problems:
            return [], problems
        if group is None and self._group_at is None and len(self.survey.groups) == 1:
            group = 1
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
            if not raw.strip():
                blank += 1
                continue
            answer = self._answer(question, raw)
            if answer is None:
                problems.append(self._bad_answer(line, name, question, raw))
            else:
                answers.append((line, respondent, question, answer, group))
        if problems:
            return [], problems
        chunk.missing += blank
        return answers, problems


def open_responses(path: str | Path, survey: Survey, file_format: str = "auto") -> ResponseFile:
    """Open a response file (already checked by :func:`inspect_file`) and read its header."""
    return ResponseFile(Path(path), survey, file_format)
