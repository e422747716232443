"""Response files to count where they lie: find them (paths, globs, directories), read their
headers with the importer's rules, and give every engine the same description of each.

CSV files are read as they are. An XLSX file is turned into a CSV once (its first
sheet, one line per spreadsheet row, so line numbers are Excel's row numbers);
a Parquet file is read natively by the engines, and turned into a CSV only to
locate bad rows (line = row number + 1, the header being line 1).
"""

from __future__ import annotations

import csv
import glob
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, InputError, ParameterError
from surveykit.reading.cells import question_lookup, read_question
from surveykit.reading.responses import ResponseFile, inspect_file
from surveykit.reading.spreadsheets import cell_as_text

__all__ = ["KINDS", "ResponseSource", "expand_paths", "open_sources", "response_file"]

# File name endings -> kind of file.
KINDS = {".csv": "csv", ".txt": "csv", ".xlsx": "xlsx", ".parquet": "parquet", ".pq": "parquet"}
_GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True)
class ResponseSource:
    """One response file as every engine reads it.

    ``path``: as the user named it (messages say it); ``kind``: csv, xlsx or
    parquet; ``table``: the file an engine reads (a CSV made from an XLSX
    file, else ``path``); ``header``: column names as in the file;
    ``delimiter``; ``layout``: long or wide; ``respondent``, ``question``,
    ``answer``, ``group``: column positions (None when absent); ``wide``:
    (position, question index) of each question column of a wide file;
    ``covariates``: the file has columns of the survey's declared covariates
    (checked only by the row-by-row path, as ``import`` checks them).
    """

    index: int
    path: Path
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
    covariates: bool = False

    @property
    def table_kind(self) -> str:
        """What an engine reads: csv or parquet."""
        return "parquet" if self.kind == "parquet" else "csv"


def expand_paths(patterns: Sequence[str | Path]) -> list[Path]:
    """Files named by paths, globs (``exports/*.csv``, ``**`` too) and directories (their
    CSV, XLSX and Parquet files), in the order given, each once.

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
                             if p.is_file() and p.suffix.lower() in KINDS)
            if not matches:
                raise ParameterError(f"--data {text!r} is a directory without CSV, XLSX or "
                                     "Parquet files")
        elif Path(text).is_file():
            matches = [Path(text)]
        else:
            raise InputError(f"--data {text!r}: no such file or directory")
        found += matches
    unique: dict[Path, Path] = {}
    for path in found:
        if path.suffix.lower() not in KINDS:
            raise ParameterError(f"--data {str(path)!r}: {path.suffix or 'no ending'} is not a "
                                 "response file ending; use .csv, .xlsx or .parquet")
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def response_file(shown: Path, actual: Path, survey: Survey) -> ResponseFile:
    """The importer's reader on ``actual``, naming ``shown`` in its messages.

    Until :class:`~surveykit.reading.responses.ResponseFile` takes an open
    stream and a display name, a path whose ``open`` opens another file does it.
    """

    class _Shown(type(Path())):  # type: ignore[misc, valid-type]
        def open(self, *args, **kwargs):  # noqa: D102 - redirects reads only
            return actual.open(*args, **kwargs)

    return ResponseFile(_Shown(shown) if actual != shown else shown, survey, "auto")


def counted_instead(error: CsvImportError) -> CsvImportError:
    """The importer's error, saying that nothing was counted (nothing is ever imported here)."""
    summary = error.summary.replace("nothing was imported", "nothing was counted")
    return CsvImportError(error.path, error.problems, problem_count=error.problem_count,
                          summary=summary)


@contextmanager
def open_sources(paths: Sequence[Path], survey: Survey) -> Iterator[list[ResponseSource]]:
    """Read every file's header (the importer's checks and messages); XLSX made into CSV.

    The CSV files made from XLSX files live until the block ends.
    """
    lookup = question_lookup(survey)
    with tempfile.TemporaryDirectory(prefix="surveykit-count-") as scratch:
        sources = []
        for index, path in enumerate(paths):
            kind = KINDS[path.suffix.lower()]
            table = path
            try:
                if kind == "csv":
                    header_file = path
                elif kind == "xlsx":
                    table = header_file = Path(scratch) / f"{index}.csv"
                    xlsx_to_csv(path, table)
                else:
                    header_file = Path(scratch) / f"{index}-header.csv"
                    _write_parquet_header(path, header_file)
                with response_file(path, header_file, survey) as reader:
                    header, delimiter, layout = (tuple(reader.header), reader.delimiter,
                                                 reader.file_format)
                    covariates = {column.index for column in reader.mapping.covariates()}
            except (CsvImportError, UnicodeDecodeError) as error:
                if kind == "csv":
                    # an empty or non-UTF-8 file is the more basic problem: say that first
                    # (inspect_file hashes the whole file, so only when the header fails)
                    try:
                        inspect_file(path)
                    except CsvImportError as basic:
                        raise counted_instead(basic) from None
                if isinstance(error, UnicodeDecodeError):
                    raise
                raise counted_instead(error) from None
            columns = {name.casefold(): i for i, name in enumerate(header)
                       if name and not name.startswith("_")}
            wide = ()
            if layout == "wide":
                wide = tuple((i, read_question(lookup, name)) for i, name in enumerate(header)
                             if name and not name.startswith("_") and i not in covariates
                             and name.casefold() not in ("respondent_id", "group"))
            sources.append(ResponseSource(
                index=index, path=path, kind=kind, table=table, header=header,
                delimiter=delimiter, layout=layout, respondent=columns["respondent_id"],
                question=columns.get("question_id"), answer=columns.get("answer"),
                group=columns.get("group"), wide=wide, covariates=bool(covariates)))
        yield sources


def _write_parquet_header(path: Path, out: Path) -> None:
    names = _parquet_names(path)
    with out.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerow(names)


def cell_text(value: object) -> str:
    """A spreadsheet or Parquet cell as the text a CSV export would hold.

    >>> cell_text(1.0), cell_text(True), cell_text(None), cell_text("a\\nb")
    ('1', 'true', '', 'a b')
    """
    # one spreadsheet row stays one line, so line numbers stay row numbers
    return cell_as_text(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def xlsx_to_csv(path: Path, out: Path) -> None:
    """The first sheet of an XLSX file as a CSV, one line per row (empty rows too), streamed."""
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise ParameterError(f"{path} is XLSX: reading it needs openpyxl: pip install "
                             "'surveykit[duckdb]'") from None
    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises many kinds for files that are not XLSX
        raise CsvImportError(str(path), [], summary=f"cannot read {path} as XLSX: {error}; "
                             "nothing was counted") from None
    try:
        sheet = book.worksheets[0]
        with out.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            width = None
            for row in sheet.iter_rows(values_only=True):
                cells = [cell_text(value) for value in row]
                if width is None:
                    while cells and not cells[-1]:
                        cells.pop()
                    width = len(cells)
                while len(cells) > width and not cells[-1]:
                    cells.pop()  # Excel keeps cells formatted but empty past the header
                if not any(cells):
                    handle.write("\n")
                    continue
                writer.writerow(cells + [""] * (width - len(cells)))
    finally:
        book.close()


def parquet_to_csv(path: Path, out: Path) -> None:
    """A Parquet file as a CSV, to locate bad rows: cells as DuckDB casts them to text (as the
    counting query reads them), line ends inside cells made spaces (one row, one line)."""
    import duckdb

    names = _parquet_names(path)
    cells = ", ".join(
        f"regexp_replace(CAST({quote_name(name)} AS VARCHAR), '\\r\\n|\\n|\\r', ' ', 'g') "
        f"AS {quote_name(name)}" for name in names)
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT {cells} FROM read_parquet({quote_text(path)})) "
                    f"TO {quote_text(out)} (FORMAT csv, HEADER true, DELIMITER ',')")


def quote_name(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_text(value: object) -> str:
    """A path or text as an SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def _parquet_names(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path).names
    except (OSError, ValueError) as error:
        raise CsvImportError(str(path), [], summary=f"cannot read {path} as Parquet: {error}; "
                             "nothing was counted") from None
