"""What kind of file an import was given, and the rows of spreadsheets and zipped exports.

:func:`sniff` tells a file's kind from its first bytes (its "magic number"),
never from its name: ``csv`` (text), ``xlsx`` (Excel 2007+, read with
openpyxl), ``xls`` (Excel 97-2003, read with xlrd), ``zip`` (ODK Central's
"all data" download: one CSV per form and per repeat group), ``parquet``
(:mod:`surveykit.reading.parquet`), or a binary kind that no import reads
(PDF, images, archives, databases, UTF-16 text), refused in one line that
says what to export instead (:func:`file_kind` reads the first bytes of a
file and looks inside a zip).

Spreadsheet cells come back as the text a CSV export would hold: numbers
without a spurious ".0", TRUE/FALSE as true/false, dates in ISO 8601, and
an empty cell as "". Rows keep the sheet's row numbers, so an error points
at the row a spreadsheet program shows.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from surveykit.errors import CsvImportError

__all__ = ["SNIFF_BYTES", "SheetRows", "cell_as_text", "file_kind", "not_a_response_file",
           "open_sheet", "sniff", "zip_members"]

# The first bytes that tell a file's kind.
SNIFF_BYTES = 8192
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_PARQUET = b"PAR1"
# Other formats people pick by mistake: magic number -> what it is.
_BINARY = (
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh", "a bzip2 archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"SQLite format 3\x00", "an SQLite database (pass it as --db, not as a file to import)"),
    (b"{\\rtf", "an RTF document"),
)


def sniff(head: bytes) -> tuple[str, str | None]:
    """(kind, description) of a file from its first bytes (a few KB).

    kind is "csv", "xlsx", "xls", "zip", "parquet" or "binary" (description
    then says what it looks like).

    >>> sniff(b"respondent_id,q1\\r\\nr1,yes\\r\\n")
    ('csv', None)
    >>> sniff(b"%PDF-1.7 ...")
    ('binary', 'a PDF document')
    """
    if head.startswith(b"PK\x03\x04"):
        return "zip", None  # refined by zip_kind once the whole file can be opened
    if head.startswith(_OLE2):
        return "xls", None
    if head.startswith(_PARQUET):
        return "parquet", None
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary", ("UTF-16 text (save it as UTF-8: Excel 'CSV UTF-8', LibreOffice "
                          "character set 'Unicode (UTF-8)')")
    for magic, description in _BINARY:
        if head.startswith(magic):
            return "binary", description
    if b"\x00" in head:
        return "binary", "a binary file (it contains NUL bytes)"
    return "csv", None


def file_kind(path: Path) -> tuple[str, str | None]:
    """(kind, description) of the file at ``path`` from its first bytes (:func:`sniff`), a zip
    told apart by what it holds (:func:`zip_kind`). Raises OSError when it cannot be read."""
    with path.open("rb") as binary:
        kind, description = sniff(binary.read(SNIFF_BYTES))
    return zip_kind(path) if kind == "zip" else (kind, description)


def not_a_response_file(path: Path | str, description: str | None) -> CsvImportError:
    """The one-line refusal of a file of a kind no reader reads (``description`` says what)."""
    return CsvImportError(str(path), [], summary=(
        f"{path} is {description}, not a response file: export the responses as CSV "
        "(UTF-8), as an Excel workbook (.xlsx) or as Parquet; nothing was imported"))


def zip_kind(path: Path) -> tuple[str, str | None]:
    """An Excel workbook ("xlsx"), a zip of CSV files ("zip"), or another zip ("binary")."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return "binary", "a damaged zip archive"
    if "xl/workbook.xml" in names:
        return "xlsx", None
    if "content.xml" in names and "mimetype" in names:
        return "binary", "an OpenDocument file (save the sheet as .xlsx or .csv)"
    if "word/document.xml" in names:
        return "binary", "a Word document"
    if any(name.lower().endswith(".csv") for name in names):
        return "zip", None
    return "binary", "a zip archive without CSV files"


@dataclass
class SheetRows:
    """The first sheet of a workbook as rows of text, with the sheet's row numbers.

    ``rows`` yields (row number, cells); ``sheet`` is the sheet's name,
    ``others`` the names of the sheets not read, ``total`` the number of rows.
    """

    sheet: str
    others: tuple[str, ...]
    total: int
    rows: Iterator[tuple[int, list[str]]]
    _close: object = None

    def close(self) -> None:
        if callable(self._close):
            self._close()


def cell_as_text(value: object) -> str:
    """A cell value as a CSV export would write it.

    >>> cell_as_text(2.0), cell_as_text(False), cell_as_text(None)
    ('2', 'false', '')
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def open_sheet(path: Path, kind: str) -> SheetRows:
    """The rows of the first sheet of an .xlsx (openpyxl) or .xls (xlrd) workbook.

    Raises CsvImportError (one line) for a workbook the reader cannot open.
    """
    try:
        if kind == "xlsx":
            return _open_xlsx(path)
        return _open_xls(path)
    except CsvImportError:
        raise
    except Exception as exc:  # the readers raise many types for damaged files
        what = "Excel workbook (.xlsx)" if kind == "xlsx" else "Excel 97-2003 workbook (.xls)"
        raise CsvImportError(str(path), [], summary=(
            f"{path} looks like an {what} but cannot be read ({type(exc).__name__}: "
            f"{str(exc)[:200]}); open it in a spreadsheet program and save it again, or "
            "export the responses as CSV; nothing was imported")) from None


def _open_xlsx(path: Path) -> SheetRows:
    import openpyxl

    # read_only streams the sheet; data_only gives formulas' stored values. The workbook is
    # given as an open file: given a name, openpyxl refuses one that does not end in .xlsx
    stream = path.open("rb")
    try:
        book = openpyxl.load_workbook(stream, read_only=True, data_only=True)
    except BaseException:
        stream.close()
        raise
    sheet = book.worksheets[0]
    if sheet.max_row == 1 and sheet.max_column == 1:
        sheet.reset_dimensions()  # some writers store a wrong size ("A1"): read every cell
    total = sheet.max_row or 0

    def rows() -> Iterator[tuple[int, list[str]]]:
        for number, values in enumerate(sheet.iter_rows(min_row=1, values_only=True),
                                        start=1):
            yield number, [cell_as_text(value) for value in values]

    def close() -> None:
        book.close()
        stream.close()

    return SheetRows(sheet=sheet.title, others=tuple(s.title for s in book.worksheets[1:]),
                     total=total, rows=rows(), _close=close)


def _open_xls(path: Path) -> SheetRows:
    import xlrd

    book = xlrd.open_workbook(str(path), on_demand=True)
    sheet = book.sheet_by_index(0)

    def cell(value: object, kind: int) -> str:
        if kind == xlrd.XL_CELL_DATE:
            moment = xlrd.xldate_as_datetime(value, book.datemode)
            return (moment.date().isoformat() if moment.time() == dt.time()
                    else moment.isoformat())
        if kind == xlrd.XL_CELL_BOOLEAN:
            return "true" if value else "false"
        if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK, xlrd.XL_CELL_ERROR):
            return ""
        return cell_as_text(value)

    def rows() -> Iterator[tuple[int, list[str]]]:
        for index in range(sheet.nrows):
            yield index + 1, [cell(value, kind) for value, kind in
                              zip(sheet.row_values(index), sheet.row_types(index), strict=True)]

    return SheetRows(sheet=sheet.name, others=tuple(book.sheet_names()[1:]),
                     total=sheet.nrows, rows=rows(), _close=book.release_resources)


def zip_members(path: Path) -> list[str]:
    """The CSV files in a zipped export, in archive order."""
    with zipfile.ZipFile(path) as archive:
        return [info.filename for info in archive.infolist()
                if info.filename.lower().endswith(".csv") and not info.is_dir()]
