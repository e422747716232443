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
from surveykit.counting.tally import (
    BITS_PER_WORD,
    NUMBER_PATTERN,
    RawCells,
    RawTally,
    question_codes,
    word_count,
)
from surveykit.definition.covariates import COVARIATE_VALUE_LENGTH
from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.errors import MissingExtraError
from surveykit.reading.cells import PYTHON_WHITESPACE
from surveykit.reading.parquet import float_text
from surveykit.sampling.counts import design_keys

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


# -- weighted counts of a sampled survey (surveykit.counting.weighted_files) ----------------

def _strip(values):
    return values.astype(str).str.strip(PYTHON_WHITESPACE)


def _weighted_rows(frame, *, index: int, source, survey: Survey, checked: Sequence[str]):
    """One partition as (respondent rows, answer rows): respondent rows f, r, g, wide, d0, ...
    (design cells trimmed), answer rows f, r, qi, a (answers that are not blank, and rows
    whose question cell codes to no question), blank rows out."""
    import numpy as np
    import pandas as pd

    frame = frame.fillna("")
    cells = {at: frame[f"c{at}"].astype(str) for at in range(len(frame.columns))}
    r = cells[source.respondent]
    no_id = _strip(r) == ""
    if no_id.any():  # only rows without an id can be blank rows
        blank = no_id.copy()
        for column in cells.values():
            blank &= _strip(column) == ""
        keep = ~blank.to_numpy()
        cells = {at: column[keep] for at, column in cells.items()}
        r = r[keep]
    positions = {name: at for at, name in source.covariates}
    folded = {name.casefold(): at for name, at in positions.items()}
    respondents = pd.DataFrame({
        "f": np.full(len(r), index, dtype=np.int64), "r": r.to_numpy(dtype=object),
        "g": (cells[source.group].to_numpy(dtype=object) if source.group is not None
              else np.full(len(r), "", dtype=object)),
        "wide": np.full(len(r), source.layout == "wide"),
        **{f"d{k}": _strip(cells[folded[name.casefold()]]).to_numpy(dtype=object)
           for k, name in enumerate(checked)}})
    if source.layout == "long":
        q = cells[source.question]
        exact = {question.id: i for i, question in enumerate(survey.questions)}
        coded = q.map(exact)
        coded = coded.fillna(_strip(q).str.lower().map(question_codes(survey))).fillna(-1)
        answers = pd.DataFrame({"f": index, "r": r.to_numpy(dtype=object),
                                "qi": coded.astype(np.int64).to_numpy(),
                                "a": cells[source.answer].to_numpy(dtype=object)})
    else:
        answers = pd.concat([pd.DataFrame({"f": index, "r": r.to_numpy(dtype=object),
                                           "qi": question,
                                           "a": cells[at].to_numpy(dtype=object)})
                             for at, question in source.wide], ignore_index=True)
    answers = answers.astype({"f": np.int64, "qi": np.int64, "r": pd.StringDtype(),
                              "a": pd.StringDtype()})
    respondents = respondents.astype({name: pd.StringDtype() for name in respondents.columns
                                      if name not in ("f", "wide")})
    answers = answers[(_strip(answers["a"]) != "").to_numpy() | (answers["qi"] < 0).to_numpy()]
    return respondents, answers


def _respondent_flags(per_respondent, *, checked: Sequence[str], design: int,
                      numbers: frozenset[str], weight: str | None, replicates: Sequence[str],
                      keys: Sequence[tuple], combined: bool = True):
    """Per respondent (the min and max of each cell over its rows): whether it is bad (see
    :mod:`surveykit.counting.weighted_files`), has every design value (``full``), and its
    weight, squared weight, design keys and replicate weights as numbers; the first
    ``design`` of the ``checked`` columns are the design's; the replicates are analysis
    weights (``combined``) or factors of the weight."""
    import numpy as np
    import pandas as pd


    p = per_respondent
    r = p["r"].astype(str)
    bad = (r == "") | (_strip(r) != r) | (r.str.len() > RESPONDENT_ID_LENGTH)
    bad |= (p["f_min"] != p["f_max"]) | (p["wide_sum"] > 1) | (p["g_min"] != p["g_max"])
    full = pd.Series(True, index=p.index)
    none = pd.Series(True, index=p.index)
    numbers_of = {}
    for k, name in enumerate(checked):
        low, high = p[f"d{k}_min"].astype(str), p[f"d{k}_max"].astype(str)
        bad |= low != high
        if k < design:
            full &= low != ""
            none &= low == ""
        if name in numbers:
            given = low != ""
            plain = low.str.fullmatch(NUMBER_PATTERN).fillna(False).astype(bool)
            value = pd.to_numeric(low.where(plain & given, "nan"), errors="coerce")
            bad |= given & (~plain | ~np.isfinite(value))
            if name == weight:
                bad |= given & (value <= 0)
            elif name in replicates:
                bad |= given & (value < 0)
            numbers_of[name] = value
        else:
            bad |= low.str.len() > COVARIATE_VALUE_LENGTH
    bad |= ~(full | none)
    w = numbers_of[weight] if weight else pd.Series(1.0, index=p.index)
    out = pd.DataFrame({"r": p["r"].astype(pd.StringDtype()), "bad": bad, "full": full,
                        "g": p["g_min"].astype(pd.StringDtype()), "w": w, "w2": w * w})
    for key, name in keys:
        k = list(checked).index(name)
        out[key] = numbers_of[name] if name in numbers else p[f"d{k}_min"].astype(
            pd.StringDtype())
    for j, name in enumerate(replicates):
        out[f"rep{j + 1}"] = numbers_of[name] if combined else numbers_of[name] * w
    return out


def weighted_raw_cells(sources: Sequence[ResponseSource], survey: Survey, columns,
                       scheduler: str | None = None):
    """The raw weighted cells of :mod:`surveykit.counting.weighted_files` (``columns`` its
    :class:`~surveykit.counting.weighted_files.DesignColumns`), computed by Dask (on the
    cluster at ``scheduler``, or local threads): the same respondents, answers and cells
    as DuckDB's query, as groupbys and joins; None when a check finds something the
    importer must say, or a file is refused."""
    try:
        import dask
        import dask.dataframe as dd
        import pandas as pd
    except ImportError:
        raise MissingExtraError("--engine dask needs Dask: pip install 'surveykit[dask]'"
                                ) from None
    if any(source.table_kind == "parquet" and ("" in source.header or len(
            set(source.header)) < len(source.header)) for source in sources):
        return None  # Dask selects Parquet columns by name: one unnamed or named twice
    checked = columns.checked
    text = pd.StringDtype()
    respondent_meta = {"f": "int64", "r": text, "g": text, "wide": bool,
                       **{f"d{k}": text for k in range(len(checked))}}
    answer_meta = {"f": "int64", "r": text, "qi": "int64", "a": text}
    respondent_parts, answer_parts = [], []
    for source in sources:
        frame = _refused_as_none(lambda source=source: _frame(source))
        if frame is None:
            return None
        both = dict(index=source.index, source=source, survey=survey, checked=checked)
        respondent_parts.append(frame.map_partitions(
            lambda part, **kw: _weighted_rows(part, **kw)[0], **both, meta=respondent_meta))
        answer_parts.append(frame.map_partitions(
            lambda part, **kw: _weighted_rows(part, **kw)[1], **both, meta=answer_meta))
    rows = dd.concat(respondent_parts) if len(respondent_parts) > 1 else respondent_parts[0]
    answers = dd.concat(answer_parts) if len(answer_parts) > 1 else answer_parts[0]
    spread = {"f": ["min", "max"], "g": ["min", "max"], "wide": "sum",
              **{f"d{k}": ["min", "max"] for k in range(len(checked))}}
    per_respondent = rows.groupby("r").agg(spread)
    per_respondent.columns = ["_".join(c) for c in per_respondent.columns]
    per_respondent = per_respondent.reset_index()
    keys = list(zip(design_keys(survey.sampling), columns.keys, strict=True))
    replicates = list(columns.replicates)
    flag_meta = {"r": text, "bad": bool, "full": bool, "g": text, "w": "float64",
                 "w2": "float64",
                 **{key: ("float64" if name in columns.number_columns else text)
                    for key, name in keys},
                 **{f"rep{j + 1}": "float64" for j in range(len(replicates))}}
    flags = per_respondent.map_partitions(
        _respondent_flags, checked=checked, design=len(columns.names),
        numbers=frozenset(columns.number_columns),
        weight=columns.weight, replicates=replicates, keys=keys,
        combined=survey.sampling.replicate_weights is None
        or survey.sampling.replicate_weights.combined, meta=flag_meta)
    per_answer = answers.groupby(["r", "qi"]).agg({"a": ["first", "count"], "f": "first"})
    per_answer.columns = ["a", "k", "f"]
    per_answer = per_answer.reset_index()
    checked_answers = per_answer.merge(flags[["r", "full"]], on="r", how="left")
    bad_answers = ((checked_answers["qi"] < 0) | (checked_answers["k"] > 1)
                   | ~checked_answers["full"].fillna(False).astype(bool)).sum()
    full = flags[flags["full"]]
    questions = pd.DataFrame({"qi": range(len(survey.questions))})
    every = full.map_partitions(lambda part: part.merge(questions, how="cross"),
                                meta={**flag_meta, "qi": "int64"})
    joined = every.merge(per_answer[["r", "qi", "a", "f"]], on=["r", "qi"], how="left")
    by = ["qi", "f", *[key for key, _ in keys], "g", "a"]
    sums = {"w": ["sum", "count", "min"], "w2": "sum",
            **{f"rep{j + 1}": "sum" for j in range(len(replicates))}}
    cells = joined.groupby(by, dropna=False).agg(sums)
    computed = [flags["bad"].sum(), bad_answers, flags["full"].sum(), rows["f"].unique(),
                cells]
    if replicates:  # sum over the respondents of the products of their replicate weights
        matrix = full[[f"rep{j + 1}" for j in range(len(replicates))]].to_dask_array(
            lengths=True)
        computed.append(matrix.T @ matrix)
    if scheduler is not None:
        from distributed import Client

        with Client(scheduler) as client:
            result = _compute(client.compute, *computed)
    else:
        result = _compute(lambda values: dask.compute(*values), *computed)
    if result is None:
        return None
    bad_respondents, bad, respondents, files, table, *gram = result
    if int(bad_respondents) or int(bad) or not int(respondents) or len(set(files)) != len(
            sources):
        return None
    table.columns = ["weight", "n", "min_weight", "weight2",
                     *[f"rep{j + 1}" for j in range(len(replicates))]]
    table = table.reset_index()
    table["a"] = table["a"].astype(object).where(table["a"].notna(), None)

    return RawCells(cells=table, gram=gram[0] if gram else None)
