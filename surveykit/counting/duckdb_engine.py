"""Counting files with DuckDB, the embedded engine: one scan, two GROUP BYs, bounded memory.

The query reads every file as text (CSV with the importer's dialect: the
delimiter its header uses, double quotes, strict field counts; Parquet cast
to text), drops blank rows, and groups at once by (file, question cell, group
cell, answer cell) and by respondent id (GROUPING SETS), as
:mod:`surveykit.counting.tally` describes. DuckDB spills to a temporary
directory beyond ``MEMORY_LIMIT``, so memory stays flat whatever the files'
size. Only DuckDB's built-in readers are used (its sqlite, postgres and excel
extensions are downloaded at run time, which a locked-down machine cannot do).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from surveykit.counting.sources import ResponseSource, quote_name, quote_text
from surveykit.counting.tally import BITS_PER_WORD, RawTally, question_codes, word_count
from surveykit.definition.cells import PYTHON_WHITESPACE
from surveykit.definition.survey import Survey
from surveykit.store.models import RESPONDENT_ID_LENGTH

__all__ = ["MEMORY_LIMIT", "connect", "fast_tally", "strip_macro"]

# DuckDB keeps at most this much in memory and spills the rest to disk.
MEMORY_LIMIT = "1GB"


@contextmanager
def connect() -> Iterator:
    """An in-memory DuckDB with a memory limit, a spill directory and ``sk_strip(x)``."""
    import duckdb

    with tempfile.TemporaryDirectory(prefix="surveykit-duckdb-") as spill:
        con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": spill,
                                     "preserve_insertion_order": False})
        try:
            con.execute(strip_macro())
            yield con
        finally:
            con.close()


def strip_macro() -> str:
    """``sk_strip(x)``: Python's ``(x or "").strip()`` in SQL (the same whitespace)."""
    return f"CREATE MACRO sk_strip(x) AS trim(coalesce(x, ''), {quote_text(PYTHON_WHITESPACE)})"


def _reader(source: ResponseSource) -> tuple[str, list[str]]:
    """The table function reading a file, and the SQL of each of its columns as text."""
    if source.table_kind == "parquet":
        return (f"read_parquet({quote_text(source.table)})",
                [f"CAST({quote_name(name)} AS VARCHAR)" for name in source.header])
    names = [f"c{i}" for i in range(len(source.header))]
    columns = ", ".join(f"'{name}': 'VARCHAR'" for name in names)
    return (f"read_csv({quote_text(source.table)}, header = true, auto_detect = false, "
            f"columns = {{{columns}}}, delim = {quote_text(source.delimiter)}, quote = '\"', "
            "escape = '\"', strict_mode = true, null_padding = false)", names)


def rows_sql(source: ResponseSource, survey: Survey) -> str:
    """SELECT f, r, blank, q, g, a: one row per answer cell of a file (long or wide)."""
    reader, cells = _reader(source)
    blank = " AND ".join(f"sk_strip({cell}) = ''" for cell in cells)
    group = cells[source.group] if source.group is not None else "NULL::VARCHAR"
    head = (f"{source.index} AS f, {cells[source.respondent]} AS r, ({blank}) AS blank, "
            f"{group} AS g")
    if source.layout == "long":
        return (f"SELECT {head}, {cells[source.question]} AS q, {cells[source.answer]} AS a "
                f"FROM {reader}")
    ids = [survey.questions[question].id for _, question in source.wide]
    answers = ", ".join(f"{cells[at]} AS {quote_name(qid)}"
                        for (at, _), qid in zip(source.wide, ids, strict=True))
    return (f"SELECT f, r, blank, g, q, a FROM (UNPIVOT INCLUDE NULLS "
            f"(SELECT {head}, {answers} FROM {reader}) "
            f"ON {', '.join(quote_name(qid) for qid in ids)} INTO NAME q VALUE a)")


def tally_sql(sources: Sequence[ResponseSource], survey: Survey) -> str:
    """The one query: cells and respondents (see :mod:`surveykit.counting.tally`)."""
    codes = " ".join(f"WHEN {quote_text(name)} THEN {index}"
                     for name, index in question_codes(survey).items())
    words = word_count(survey)
    sums = ", ".join(
        f"sum(CASE WHEN qi >= 0 AND qi // {BITS_PER_WORD} = {w} "
        f"THEN 1::BIGINT << (qi % {BITS_PER_WORD}) ELSE 0 END) "
        f"FILTER (WHERE answered)::BIGINT AS w{w}" for w in range(words))
    distinct_bits = " + ".join(f"bit_count(w{w})" for w in range(words))
    union = "\nUNION ALL\n".join(rows_sql(source, survey) for source in sources)
    return f"""
WITH rows AS ({union}),
coded AS (
    SELECT f, sk_strip(r) AS r, q, g, a, sk_strip(a) <> '' AS answered,
           CASE lower(sk_strip(q)) {codes} ELSE -1 END AS qi
    FROM rows WHERE NOT blank),
agg AS MATERIALIZED (
    SELECT GROUPING(r) AS by_cell, f, q, g, a, count(*) AS n,
           count(*) FILTER (WHERE r = '' OR length(r) > {RESPONDENT_ID_LENGTH}) AS bad,
           count(*) FILTER (WHERE answered) AS answered,
           count(*) FILTER (WHERE answered AND qi < 0) AS uncoded, {sums}
    FROM coded GROUP BY GROUPING SETS ((f, q, g, a), (r)))
SELECT 0 AS kind, f, q, g, a, n, bad FROM agg WHERE by_cell = 1
UNION ALL
SELECT 1, NULL, NULL, NULL, NULL, count(*) FILTER (WHERE answered > 0),
       count(*) FILTER (WHERE answered <> {distinct_bits} OR uncoded > 0)
FROM agg WHERE by_cell = 0
"""


def fast_tally(con, sources: Sequence[ResponseSource], survey: Survey) -> RawTally | None:
    """Run the query; None when DuckDB refuses a file (bad field counts, bytes, ...)."""
    import duckdb

    try:
        result = con.execute(tally_sql(sources, survey)).fetchall()
    except duckdb.Error:
        return None  # the exact path reads the file row by row and says where
    cells = [(f, q, g, a, n, bad) for kind, f, q, g, a, n, bad in result if kind == 0]
    respondents, suspicious = next((n, bad) for kind, *_, n, bad in result if kind == 1)
    return RawTally(cells=cells, respondents=int(respondents or 0),
                    suspicious=int(suspicious or 0))
