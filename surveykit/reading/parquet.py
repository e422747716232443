"""Parquet response files as rows of text, with the one rule that turns a typed cell into text.

A Parquet column has a type; a response file's cells are text. Every reader
(the importer row by row, DuckDB and Dask when counting) turns a cell into
the same text, by the kind of its column (:func:`text_kind`):

* ``text`` (string, large_string, string_view): as it is;
* ``bytes`` (binary, large_binary, binary_view, fixed_size_binary): decoded as
  UTF-8, as a string column would hold it (``don't know``, never
  ``don\\x27t know``); bytes that are not UTF-8 are refused in one line;
* ``integer``: in decimal (``1``); ``boolean``: ``true`` or ``false``;
* ``float`` (float32, float64): NaN is an empty cell; a whole number below
  :data:`WHOLE_LIMIT` in magnitude is written without a decimal point
  (``1.0`` reads ``1``, as a spreadsheet's number does); any other number in
  its shortest round-trip form (Python's ``repr``; float32 at its own
  precision);
* ``other`` (dates, times, decimals, nested values): as a spreadsheet cell of
  that value reads (:func:`surveykit.reading.spreadsheets.cell_as_text`);
  counting engines leave files whose read columns are of this kind to the
  row-by-row path.

A null cell is an empty cell (a missing answer). Rows keep their number in
the file, plus one: the header, the column names, is row 1, as in a
workbook.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from surveykit.errors import CsvImportError, MissingExtraError, clip, printable
from surveykit.reading.spreadsheets import cell_as_text

__all__ = ["KINDS", "WHOLE_LIMIT", "ParquetRows", "float_text", "open_parquet", "text_kind"]

KINDS = ("text", "bytes", "integer", "boolean", "float", "other")
# Whole numbers smaller than this in magnitude read as integers (a 64-bit integer holds them).
WHOLE_LIMIT = 9.2e18
# Rows converted at a time: memory stays flat whatever the file's size.
BATCH_ROWS = 20_000


def text_kind(arrow_type) -> str:
    """Which of :data:`KINDS` a column of this pyarrow type is (dictionaries: their values').

    >>> import pyarrow as pa
    >>> text_kind(pa.string()), text_kind(pa.binary()), text_kind(pa.dictionary(pa.int8(),
    ...     pa.string())), text_kind(pa.float32()), text_kind(pa.date32())
    ('text', 'bytes', 'text', 'float', 'other')
    """
    import pyarrow as pa

    types = pa.types
    if types.is_dictionary(arrow_type):
        return text_kind(arrow_type.value_type)
    if types.is_string(arrow_type) or types.is_large_string(arrow_type) or (
            hasattr(types, "is_string_view") and types.is_string_view(arrow_type)):
        return "text"
    if types.is_binary(arrow_type) or types.is_large_binary(arrow_type) or \
            types.is_fixed_size_binary(arrow_type) or (
            hasattr(types, "is_binary_view") and types.is_binary_view(arrow_type)):
        return "bytes"
    if types.is_integer(arrow_type):
        return "integer"
    if types.is_boolean(arrow_type):
        return "boolean"
    if types.is_float32(arrow_type) or types.is_float64(arrow_type):
        return "float"
    if types.is_null(arrow_type):
        return "text"  # every cell is null: empty
    return "other"


def float_text(value: float, *, single: bool = False) -> str:
    """A float cell as text (``single``: a float32 column's value).

    >>> float_text(1.0), float_text(float("nan")), float_text(0.25), float_text(1e20)
    ('1', '', '0.25', '1e+20')
    >>> float_text(0.10000000149011612, single=True)
    '0.1'
    """
    if math.isnan(value):
        return ""
    if value.is_integer() and abs(value) < WHOLE_LIMIT:
        return str(int(value))
    if single:
        import numpy as np

        return str(np.float32(value))
    return repr(value)


@dataclass
class ParquetRows:
    """A Parquet file's column names (as in the file), their kinds, its rows as text.

    ``rows`` yields (row number, cells), the first data row being row 2;
    ``total`` is the number of data rows; ``reached()`` the last row read.
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    total: int
    rows: Iterator[tuple[int, list[str]]]
    reached: Callable[[], int]
    close: Callable[[], None]


def open_parquet(path: Path, name: str) -> ParquetRows:
    """The rows of a Parquet file as text (see the module docstring); ``name`` names the file
    in messages.

    Raises MissingExtraError when pyarrow is not installed, CsvImportError (one line)
    for a file pyarrow cannot read or a binary cell that is not UTF-8.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(f"{name} is a Parquet file: reading it needs pyarrow: pip install "
                         "'surveykit[duckdb]'") from None
    try:
        handle = pq.ParquetFile(path)
        schema = handle.schema_arrow
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise CsvImportError(name, [], summary=(
            f"{name} looks like a Parquet file but cannot be read ({type(exc).__name__}: "
            f"{printable(clip(str(exc), 200))}); write it again, or export the responses as "
            "CSV; nothing was imported")) from None
    names = tuple(schema.names)
    kinds = tuple(text_kind(schema.field(i).type) for i in range(len(names)))
    reached = [1]

    def rows() -> Iterator[tuple[int, list[str]]]:
        number = 1
        for batch in handle.iter_batches(batch_size=BATCH_ROWS):
            columns = [_texts(batch.column(i), kinds[i], name, names[i], number)
                       for i in range(len(names))]
            for cells in zip(*columns, strict=True):
                number += 1
                reached[0] = number
                yield number, list(cells)

    return ParquetRows(names=names, kinds=kinds, total=handle.metadata.num_rows, rows=rows(),
                       reached=lambda: reached[0], close=handle.close)


def _texts(column, kind: str, name: str, header: str, before: int) -> list[str]:
    """One batch of one column as text; ``before`` is the row number before the batch."""
    import pyarrow as pa

    values = column.to_pylist()
    if kind == "text":
        return [value if value is not None else "" for value in values]
    if kind == "bytes":
        texts = []
        for offset, value in enumerate(values, start=1):
            if value is None:
                texts.append("")
                continue
            try:
                texts.append(value.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise CsvImportError(name, [], summary=(
                    f"{name}, row {before + offset}, column {printable(repr(clip(header)))}: "
                    f"byte 0x{value[exc.start]:02x} is not UTF-8; Parquet text must be UTF-8 "
                    "(a string column, or binary holding UTF-8): write the file again with "
                    "text as UTF-8; nothing was imported")) from None
        return texts
    if kind == "integer":
        return [str(value) if value is not None else "" for value in values]
    if kind == "boolean":
        return [("true" if value else "false") if value is not None else "" for value in values]
    if kind == "float":
        single = pa.types.is_float32(column.type.value_type if pa.types.is_dictionary(
            column.type) else column.type)
        return [float_text(value, single=single) if value is not None else ""
                for value in values]
    return [cell_as_text(value) for value in values]
