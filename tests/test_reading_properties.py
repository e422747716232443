"""Property: the same response file, imported and counted where it lies, gives the same counts,
or is refused by both for the same reason (the same problems, lines and values; the same
one-line summary).

Hypothesis writes response files as people and tools do: CSV in any of the dialects import
reads (comma, semicolon or tab; quoted minimally or everywhere; LF or CRLF; with or without a
byte-order mark) and some it refuses (Windows-1252, UTF-16), with trailing commas, missing and
extra fields, blank lines, rows of empty cells, quotes after spaces, line ends and delimiters
inside quoted cells; workbooks (.xlsx); Parquet files with string, binary, dictionary and
numeric columns; long and wide layouts; three surveys (the sample, the sample with an [import]
profile that renames the id column, maps a header and labels and ignores a column, and a
five-design two-group survey); any file name (the kind is told by the content). Each file is
imported into a fresh SQLite database (its kept counts read back, after checking them against
the stored answers) and counted by DuckDB's one scan, by the row-by-row path alone, and, for a
share of the files, by Dask on local threads.

The default run checks a fixed set of examples (derandomized); ``-m slow`` runs a larger
random search.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from surveykit.definition.survey import Survey, parse_survey
from surveykit.resources import locate_resource
from tests.reading_support import counted, imported

hypothesis = pytest.importorskip("hypothesis")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
st = hypothesis.strategies

SAMPLE_TOML = (locate_resource("sample_data") / "academic_integrity.toml").read_text("utf-8")
PROFILE = """
[import]
respondent_id = "Numéro"
ignore = ["Consent"]

[import.columns]
"Q one" = "exam_cheating"

[import.labels]
"Oui" = "yes"
"Non" = "no"
"Sans réponse" = "missing"
"""
MIXED_TOML = (Path(__file__).parent / "surveys" / "mixed.toml").read_text("utf-8")
SURVEYS = {
    "sample": parse_survey(SAMPLE_TOML, "sample.toml"),
    "profile": parse_survey(SAMPLE_TOML + PROFILE, "profile.toml"),
    "mixed": parse_survey(MIXED_TOML, "mixed.toml"),
}
# Cells that are never an answer, a group or an id, and shapes of rows import refuses: drawn
# only for "messy" files, so that most files are read whole and their counts compared.
BAD_ANSWERS = ["maybe", "No answer", 'say "yes"', "a;b", "n\ta", "yes\n", "7"]
MISSING = ["", " ", "\u00a0"]
GOOD_IDS = [f"AI-{n}" for n in range(1, 10)] + ["ai-12", "R\u00e9-13", "AI,14", 'AI "15"']
SPACED_IDS = [" AI-10", "AI-11\u00a0"]  # read trimmed: the exact path's, in untidy files
BAD_IDS = ["", "x" * 201, "AI-1"]  # empty, too long, and a repeat
DELIMITERS = [",", ";", "\t"]


def answer_cells(survey: Survey, question, profile: bool, tidy: bool) -> list[str]:
    """A question's answers as people type them: any spelling import knows, in other cases;
    the profile's labels; empty cells; and unless ``tidy`` (cells DuckDB's one scan counts
    by itself) spaces around them, a "no answer" label, cells of spaces."""
    spellings = sorted(question.answer_spellings())
    cells = spellings + [s.upper() for s in spellings[:4]] + ["", ""]
    cells += ["Don\u2019t know"] if "don't know" in spellings else []
    cells += ["Oui", "Non"] if profile else []
    if not tidy:
        cells += [f" {spellings[0]} ", " ", "\u00a0"] + (["Sans réponse"] if profile else [])
    return cells


def group_cells(survey: Survey) -> list[str]:
    if len(survey.groups) == 1:
        return ["1", ""]
    return ["1", "2", "short", "LONG", " long "]


@dataclass
class ResponseTable:
    """A response file before it is written: its header and rows of cells."""

    survey: str
    header: list[str]
    mess: int = 0
    rows: list[list[str]] = field(default_factory=list)


@st.composite
def tables(draw, mess: int | None = None) -> ResponseTable:
    """A header (long or wide; named by ids, paths, texts, the profile) and rows of cells:
    tidy (mess 0: what DuckDB's one scan counts by itself), untidy but readable (1: spaces
    around ids and answers, paths as question ids, "no answer" labels, blank lines, rows of
    empty cells), or anything (2: bad cells, repeated ids, ragged rows, unknown columns)."""
    name = draw(st.sampled_from(list(SURVEYS)))
    survey = SURVEYS[name]
    profile = name == "profile"
    mess = draw(st.sampled_from([0, 1, 2])) if mess is None else mess
    id_column = draw(st.sampled_from(
        ["Numéro", "respondent_id"] if profile
        else ["respondent_id", "Respondent ID", "grp/respondent_id"]))
    extras = draw(st.lists(st.sampled_from(
        ["_uuid", "_index", ""] + (["Consent"] if profile else [])
        + (["notes", "start"] if mess == 2 else [])), max_size=2, unique=True))
    if draw(st.booleans()):  # KoboToolbox's metadata, recognized by two of its columns
        extras += [name for name in ("start", "_submission_time", "_uuid") if name not in extras]
    # a multi-group survey needs the group column (no ids were issued): only messy files
    # may lack it
    group = draw(st.booleans()) if len(survey.groups) == 1 or mess == 2 else True
    long = draw(st.integers(0, 2)) == 0
    if long:
        header = [id_column, "question_id", "answer"] + (["group"] if group else []) + extras
    else:
        questions = draw(st.lists(st.sampled_from(survey.questions), min_size=1, max_size=4,
                                  unique_by=lambda q: q.id))
        if profile and mess < 2 and survey.questions[0] not in questions:
            questions.append(survey.questions[0])  # else its [import.columns] entry is an error
        names = {q.id: draw(st.sampled_from(
            [q.id, f"integrity/{q.id}", f"grp-{q.id}", q.text]
            + (["Q one"] if profile and q.id == "exam_cheating" else [])))
            for q in questions}
        header = [id_column, *names.values()] + (["Group"] if group else []) + extras
        by_name = {column: q for q in questions for qid, column in names.items() if qid == q.id}
    table = ResponseTable(survey=name, header=list(draw(st.permutations(header))), mess=mess)
    ids = draw(st.lists(st.sampled_from(GOOD_IDS + (SPACED_IDS if mess else [])), unique=True,
                        min_size=mess < 2, max_size=6))
    for respondent in ids:
        asked = [q for q in survey.questions if draw(st.booleans())] if long else [None]
        for question in asked:
            row = []
            for column in table.header:
                bad = mess == 2 and draw(st.integers(0, 5)) == 0
                if column == id_column:
                    row.append(draw(st.sampled_from(BAD_IDS)) if bad else respondent)
                elif column.casefold() == "group":
                    row.append(draw(st.sampled_from(["3", ""] if bad else group_cells(survey))))
                elif column == "question_id":
                    spellings = [question.id, question.id.upper()]
                    if mess:
                        spellings += [f" {question.id} ", f"grp/{question.id}"] + (
                            ["Q one"] if profile and question.id == "exam_cheating" else [])
                    row.append("nope" if bad else draw(st.sampled_from(spellings)))
                elif column == "answer" or (not long and column in by_name):
                    target = question if long else by_name[column]
                    row.append(draw(st.sampled_from(
                        BAD_ANSWERS if bad else answer_cells(survey, target, profile,
                                                             mess == 0))))
                else:
                    row.append(draw(st.sampled_from(["", "x", "2024-05-01"] + [" "] * (mess > 0))))
            table.rows.append(_shaped(draw, row, table.header, mess))
    return table


def _shaped(draw, row: list[str], header: list[str], mess: int) -> list[str]:
    """The row, or (untidy files) a blank line or a row of empty cells before it, or (messy
    files) the row with a trailing comma, a field too many or one too few."""
    if mess == 1 and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from([[], [""] * len(header)]))
    if mess == 2:
        shape = draw(st.integers(0, 9))
        if shape == 0:
            return [*row, ""]  # a trailing comma
        if shape == 1:
            return [*row, "extra"]
        if shape == 2:
            return row[:-1]
    return row


@dataclass(frozen=True)
class Written:
    """How a table goes to disk: kind, and for CSV the dialect and encoding."""

    kind: str
    suffix: str
    delimiter: str = ","
    quoting: int = csv.QUOTE_MINIMAL
    line_end: str = "\n"
    bom: bool = False
    encoding: str = "utf-8"
    hand_quoted: bool = False  # cells after a delimiter written as ' "cell"' by hand
    column_types: tuple[str, ...] = ()


@st.composite
def writings(draw, table: ResponseTable) -> Written:
    kind = draw(st.sampled_from(["csv", "csv", "csv", "xlsx", "parquet"]))
    suffix = draw(st.sampled_from([".csv", ".xlsx", ".parquet", ".txt", ""]))
    if kind == "csv":
        return Written(kind=kind, suffix=suffix, delimiter=draw(st.sampled_from(DELIMITERS)),
                       quoting=draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])),
                       line_end=draw(st.sampled_from(["\n", "\r\n"])), bom=draw(st.booleans()),
                       encoding=draw(st.sampled_from(["utf-8"] * 12 + ["cp1252", "utf-16"])),
                       hand_quoted=draw(st.integers(0, 9)) == 0)
    types = ["string", "binary", "large_string", "large_binary", "dictionary", "number"]
    return Written(kind=kind, suffix=suffix, column_types=tuple(
        draw(st.sampled_from(types)) for _ in table.header))


def write(table: ResponseTable, how: Written, path: Path) -> Path:
    if how.kind == "csv":
        text = io.StringIO()
        writer = csv.writer(text, delimiter=how.delimiter, quoting=how.quoting,
                            lineterminator=how.line_end)
        writer.writerow(table.header)
        for row in table.rows:
            if how.hand_quoted and len(row) > 1:
                text.write(row[0] + "".join(f'{how.delimiter} "{cell}"' for cell in row[1:])
                           + how.line_end)
            else:
                writer.writerow(row)
        data = ("\ufeff" if how.bom else "") + text.getvalue()
        path.write_bytes(data.encode(how.encoding, errors="replace"))
    elif how.kind == "xlsx":
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        sheet.append(table.header)
        for row in table.rows:
            # a spreadsheet takes numbers and text; control characters it cannot hold
            sheet.append([int(cell) if cell in ("0", "1") else
                          (cell.replace("\n", " ").replace("\t", " ") or None) for cell in row])
        saved = io.BytesIO()  # openpyxl saves only to names ending in .xlsx
        book.save(saved)
        path.write_bytes(saved.getvalue())
    else:
        width = len(table.header)
        rows = [row for row in table.rows if len(row) == width]  # a Parquet row has them all
        columns = {}
        for at, (name, kind) in enumerate(zip(table.header, how.column_types, strict=True)):
            values = [row[at] or None for row in rows]
            columns[f"{name}" if name not in columns else f"{name} ({at})"] = \
                _parquet_column(values, kind)
        pq.write_table(pa.table(columns), path)
    return path


def _parquet_column(values: list[str | None], kind: str):
    if kind == "number" and all(v is None or v in ("0", "1") for v in values):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if kind in ("binary", "large_binary"):
        return pa.array([None if v is None else v.encode() for v in values],
                        getattr(pa, kind)())
    if kind == "dictionary":
        return pa.array(values, pa.string()).dictionary_encode()
    return pa.array(values, pa.large_string() if kind == "large_string" else pa.string())


def check_one_file(table: ResponseTable, how: Written, folder: Path, dask: bool) -> None:
    survey: Survey = SURVEYS[table.survey]
    path = write(table, how, folder / f"responses{how.suffix}")
    reference = imported(survey, path, folder)
    engines = ["duckdb", "exact"] + (["dask"] if dask and how.kind != "xlsx" else [])
    for engine in engines:
        assert counted(survey, path, engine) == reference, engine
    if reference.refused:
        hypothesis.event(f"{how.kind}: refused by both")
    else:  # how many files DuckDB's one scan counts by itself, without the exact path
        hypothesis.event(f"{how.kind}, {('tidy', 'untidy', 'messy')[table.mess]}: counted, "
                         + ("in one scan" if one_scan(survey, path) else "row by row"))


def one_scan(survey: Survey, path: Path) -> bool:
    from surveykit.counting import duckdb_engine
    from surveykit.counting.sources import open_sources
    from surveykit.counting.tally import counts_from_tally

    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        tally = None if sources[0].exact_only else duckdb_engine.fast_tally(con, sources,
                                                                             survey)
        return tally is not None and counts_from_tally(survey, sources, tally) is not None


@st.composite
def cases(draw, mess: int | None = None):
    table = draw(tables(mess))
    return table, draw(writings(table)), draw(st.integers(0, 4)) == 0


@pytest.mark.parametrize("mess", [0, 1, 2], ids=["tidy", "untidy", "messy"])
def test_a_file_counts_as_it_imports_or_both_refuse_it_alike(tmp_path_factory, mess):
    """Tidy files are what DuckDB's one scan counts by itself; untidy ones what it leaves
    to the row-by-row path; messy ones what both refuse."""
    # max_examples: the conftest's "suite" profile (a short search); the long search is the
    # slow test below, and each difference the search found is a test of test_one_reader.py
    @hypothesis.settings(deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(case=cases(mess))
    def check(case):
        table, how, dask = case
        check_one_file(table, how, tmp_path_factory.mktemp("file"), dask)

    check()


@pytest.mark.slow
@hypothesis.settings(max_examples=600, deadline=None, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(case=cases())
def test_a_file_counts_as_it_imports_or_both_refuse_it_alike_in_a_long_search(
        tmp_path_factory, case):
    table, how, dask = case
    check_one_file(table, how, tmp_path_factory.mktemp("file"), dask)
