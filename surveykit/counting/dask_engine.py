"""Counting files with Dask: the same two GROUP BYs as DuckDB, run by a cluster's workers.

Each worker reads its blocks of the CSV or Parquet files (Arrow's CSV reader:
the importer's dialect, strict field counts; Parquet cells as the importer
reads them, :mod:`surveykit.reading.parquet`), codes them as
:mod:`surveykit.counting.tally` describes, and Dask combines the partial
aggregations; only the distinct cells and two numbers come back. With a
``scheduler`` address the work goes to that ``dask.distributed`` cluster
(whose workers must see the files at the same paths); without one, Dask's
threads on this machine do it. Dask splits CSV files at line ends, so a
quoted cell that spans lines makes the fast path give way to the exact one
(:mod:`surveykit.counting.exact`), which runs here; so do workbooks and
zipped exports (:func:`surveykit.counting.count_files` sends them there: the
workers could not see the CSV made of them on this machine).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from surveykit.counting.sources import ResponseSource
from surveykit.counting.tally import BITS_PER_WORD, RawTally, question_codes, word_count
from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.errors import MissingExtraError
from surveykit.reading.cells import PYTHON_WHITESPACE
from surveykit.reading.parquet import float_text

__all__ = ["BLOCKSIZE", "PARQUET_BLOCKSIZE", "fast_tally"]

# Bytes of CSV per partition (Dask's task size), and of uncompressed Parquet: about a
# million rows of a long file each, so that a worker holds a few hundred MB at a time.
BLOCKSIZE = "64MB"
PARQUET_BLOCKSIZE = "16MB"
_DASK_PARQUET_WARNING = r"The inplace keyword in DataFrame\.reset_index is deprecated"


def _frame(source: ResponseSource):
    """The file as a Dask frame of text columns c0, c1, ... (empty cells as "")."""
    import dask.dataframe as dd

    names = [f"c{i}" for i in range(len(source.header))]
    if source.table_kind == "parquet":
        frame = dd.read_parquet(str(source.table), dtype_backend="pyarrow",
                                split_row_groups="infer", blocksize=PARQUET_BLOCKSIZE)
        frame = frame[list(source.header)]
        frame.columns = names
        return frame.map_partitions(_as_text, source.column_kinds,
                                    meta=dict.fromkeys(names, object))
    return dd.read_csv(str(source.table), sep=source.delimiter, header=0, names=names,
                       dtype=str, keep_default_na=False, engine="pyarrow",
                       blocksize=BLOCKSIZE, encoding="utf-8")


def _as_text(frame, kinds: Sequence[str]):
    """Parquet cells as the importer reads them (:mod:`surveykit.reading.parquet`: binary
    decoded as UTF-8, 1.0 as "1", NaN empty; a column of another kind only as empty or not,
    all that is read of it: its files' read columns are never of that kind)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    columns = {}
    for name, kind in zip(frame.columns, kinds, strict=True):
        column = frame[name]
        if kind == "bytes":
            text = column.map(lambda v: "" if v is None or v is pd.NA else v.decode("utf-8"))
        elif kind == "float":
            arrow = getattr(column.dtype, "pyarrow_dtype", None)
            single = arrow is not None and pa.types.is_float32(arrow)
            text = column.map(lambda v, single=single: "" if pd.isna(v)
                              else float_text(float(v), single=single))
        elif kind == "boolean":
            text = column.map(lambda v: "" if pd.isna(v) else ("true" if v else "false"))
        elif kind == "other":
            text = pd.Series(np.where(column.isna(), "", "x"), index=frame.index)
        else:  # text, integer
            text = column.astype("string").fillna("")
        columns[name] = text.astype(object)
    return pd.DataFrame(columns, index=frame.index)


def _coded(frame, *, index: int, respondent: int, group: int | None, question: int | None,
           answer: int | None, wide: Sequence[tuple[int, str]], codes: dict[str, int],
           words: int):
    """One partition as rows f, r, g, q, a, bad, answered, qi, w0, w1, ... (Arrow kernels:
    Python's whitespace, trimmed in C++; string work on every row is what costs here)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    def text(at: int):
        return pc.fill_null(pa.array(frame[f"c{at}"], type=pa.string(), from_pandas=True), "")

    def stripped(values):
        return pc.utf8_trim(values, PYTHON_WHITESPACE)

    r = stripped(text(respondent))
    no_id = pc.equal(r, "")
    if pc.any(no_id).as_py():  # only rows without an id can be blank rows
        blank = no_id
        for at in range(len(frame.columns)):
            blank = pc.and_(blank, pc.equal(stripped(text(at)), ""))
        keep = pc.invert(blank)
    else:
        keep = None
    g = text(group) if group is not None else pa.array([""] * len(r), pa.string())
    if question is not None:
        columns = {"r": r, "g": g, "q": text(question), "a": text(answer)}
        if keep is not None:
            columns = {name: pc.filter(values, keep) for name, values in columns.items()}
    else:
        pieces = []
        for at, qid in wide:
            piece = {"r": r, "g": g, "q": pa.array([qid] * len(r), pa.string()), "a": text(at)}
            if keep is not None:
                piece = {name: pc.filter(values, keep) for name, values in piece.items()}
            pieces.append(piece)
        columns = {name: pa.concat_arrays([piece[name] for piece in pieces])
                   for name in ("r", "g", "q", "a")}
    rows = pa.table(columns).to_pandas(types_mapper=pd.ArrowDtype)
    rows.insert(0, "f", np.full(len(rows), index, dtype=np.int64))
    r_length = pc.utf8_length(columns["r"]).to_numpy(zero_copy_only=False)
    rows["bad"] = ((r_length == 0) | (r_length > RESPONDENT_ID_LENGTH)).astype(np.int64)
    answered = pc.not_equal(stripped(columns["a"]), "").to_numpy(zero_copy_only=False)
    rows["answered"] = answered
    names = list(codes)
    found = pc.index_in(pc.utf8_lower(stripped(columns["q"])), value_set=pa.array(names))
    at = pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    qi = np.where(at >= 0, np.array([codes[name] for name in names] + [-1])[at], -1)
    rows["qi"] = qi
    for w in range(words):
        bit = np.left_shift(np.int64(1), np.clip(qi % BITS_PER_WORD, 0, None))
        rows[f"w{w}"] = np.where((qi >= 0) & (qi // BITS_PER_WORD == w) & answered,
                                 bit, 0).astype(np.int64)
    return rows


def _suspicious(per_respondent, words: int):
    import numpy as np

    distinct = sum(np.bitwise_count(per_respondent[f"w{w}"].to_numpy().astype(np.uint64))
                   for w in range(words))
    return int((per_respondent["n"].to_numpy() != distinct).sum())


def fast_tally(sources: Sequence[ResponseSource], survey: Survey,
               scheduler: str | None = None) -> RawTally | None:
    """Cells and respondents of the files, computed by Dask; None when a file is refused."""
    try:
        import dask
        import dask.dataframe as dd
        import pandas as pd
        import pyarrow as pa
    except ImportError:
        raise MissingExtraError("--engine dask needs Dask: pip install 'surveykit[dask]'"
                                ) from None
    codes = question_codes(survey)
    words = word_count(survey)
    ids = [question.id for question in survey.questions]
    if any(source.table_kind == "parquet" and ("" in source.header or len(
            set(source.header)) < len(source.header)) for source in sources):
        return None  # Dask selects Parquet columns by name: one unnamed or named twice
    parts = []
    for source in sources:
        frame = _refused_as_none(lambda source=source: _frame(source))
        if frame is None:
            return None  # Dask reads a CSV file's first block at once: it may refuse it here
        text = pd.ArrowDtype(pa.string())
        meta = {"f": "int64", "r": text, "g": text, "q": text, "a": text,
                "bad": "int64", "answered": bool, "qi": "int64",
                **{f"w{w}": "int64" for w in range(words)}}
        parts.append(frame.map_partitions(
            _coded, index=source.index, respondent=source.respondent, group=source.group,
            question=source.question, answer=source.answer,
            wide=[(at, ids[question]) for at, question in source.wide], codes=codes,
            words=words, meta=meta))
    rows = dd.concat(parts) if len(parts) > 1 else parts[0]
    cells = rows.groupby(["f", "q", "g", "a"])["bad"].count()
    bad_ids = rows["bad"].sum()
    answered = rows[rows["answered"]]
    per_respondent = answered.groupby("r").agg(
        {"f": "count", **{f"w{w}": "sum" for w in range(words)}}).rename(columns={"f": "n"})
    respondents = per_respondent["n"].count()
    suspicious = per_respondent.map_partitions(_suspicious, words, meta=(None, "int64")).sum()
    uncoded = (answered["qi"] < 0).sum()
    if scheduler is not None:
        from distributed import Client

        with Client(scheduler) as client:
            computed = _compute(client.compute, cells, respondents, suspicious, uncoded,
                                bad_ids)
    else:
        computed = _compute(lambda values: dask.compute(*values), cells, respondents,
                            suspicious, uncoded, bad_ids)
    if computed is None:
        return None
    cells_series, n_respondents, *doubts = computed
    return RawTally(cells=[(int(f), q, g, a, int(n), None)
                           for (f, q, g, a), n in cells_series.items()],
                    respondents=int(n_respondents), suspicious=sum(int(d) for d in doubts))


def _compute(compute, *values):
    """The values computed together (one read of the files), or None when a file is refused."""

    def run():
        result = compute(list(values))
        if hasattr(result[0], "result"):  # distributed futures
            result = [future.result() for future in result]
        return result

    return _refused_as_none(run)


def _refused_as_none(read):
    """What ``read()`` returns, or None when a file is refused by Dask's readers (the exact
    path reads the file row by row and says where)."""
    import pandas as pd
    import pyarrow as pa

    try:
        with warnings.catch_warnings():
            # Dask's Parquet reader calls reset_index(inplace=True), which pandas 3.1
            # deprecates: the user can do nothing about it (threads share this filter)
            warnings.filterwarnings("ignore", message=_DASK_PARQUET_WARNING)
            return read()
    except (pd.errors.ParserError, pa.ArrowInvalid, UnicodeDecodeError, ValueError):
        return None
