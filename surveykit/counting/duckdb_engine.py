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
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from surveykit.counting.sources import ResponseSource, quote_name, quote_text
from surveykit.counting.tally import BITS_PER_WORD, RawTally, question_codes, word_count
from surveykit.definition.cells import PYTHON_WHITESPACE
from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey

__all__ = ["MEMORY_LIMIT", "connect", "fast_tally", "load_issued", "strip_macro"]

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


def _reader(sources: Sequence[ResponseSource]) -> tuple[str, list[str]]:
    """The table function reading files of one shape, and the SQL of each column as text."""
    first = sources[0]
    tables = (quote_text(first.table) if len(sources) == 1
              else "[" + ", ".join(quote_text(source.table) for source in sources) + "]")
    named = ", filename = true" if len(sources) > 1 else ""
    if first.table_kind == "parquet":
        return (f"read_parquet({tables}{named})",
                [f"CAST({quote_name(name)} AS VARCHAR)" for name in first.header])
    names = [f"c{i}" for i in range(len(first.header))]
    columns = ", ".join(f"'{name}': 'VARCHAR'" for name in names)
    return (f"read_csv({tables}, header = true, auto_detect = false, "
            f"columns = {{{columns}}}, delim = {quote_text(first.delimiter)}, quote = '\"', "
            f"escape = '\"', strict_mode = true, null_padding = false{named})", names)


def rows_sql(sources: Sequence[ResponseSource], survey: Survey) -> str:
    """SELECT f, r, q, g, a: one row per answer cell of files of one shape (the same kind,
    header and delimiter), blank rows out; several files are read by one table function.

    A row is blank when every cell is empty; only rows without a respondent id
    are looked at closely (the others cannot be blank), which keeps string work
    off the hot path.
    """
    source = sources[0]
    reader, cells = _reader(sources)
    if len(sources) > 1:  # the file's index, by its name
        names = ", ".join(f"({quote_text(one.table)}, {one.index})" for one in sources)
        reader += f" JOIN (VALUES {names}) AS files(name, f) ON files.name = filename"
        index = "files.f"
    else:
        index = str(source.index)
    respondent = cells[source.respondent]
    blank = " AND ".join(f"sk_strip({cell}) = ''" for cell in cells)
    group = cells[source.group] if source.group is not None else "NULL::VARCHAR"
    head = f"{index} AS f, {respondent} AS r, {group} AS g"
    keep = (f"WHERE CASE WHEN {respondent} IS NULL OR {respondent} = '' THEN NOT ({blank}) "
            "ELSE true END")
    if source.layout == "long":
        return (f"SELECT {head}, {cells[source.question]} AS q, {cells[source.answer]} AS a "
                f"FROM {reader} {keep}")
    ids = [survey.questions[question].id for _, question in source.wide]
    answers = ", ".join(f"{cells[at]} AS {quote_name(qid)}"
                        for (at, _), qid in zip(source.wide, ids, strict=True))
    return (f"SELECT f, r, q, g, a FROM (UNPIVOT INCLUDE NULLS "
            f"(SELECT {head}, {answers} FROM {reader} {keep}) "
            f"ON {', '.join(quote_name(qid) for qid in ids)} INTO NAME q VALUE a)")


def _shapes(sources: Sequence[ResponseSource]) -> list[list[ResponseSource]]:
    """Sources grouped by what one table function can read together."""
    shapes: dict[tuple, list[ResponseSource]] = {}
    for source in sources:
        shapes.setdefault((source.table_kind, source.header, source.delimiter), []).append(source)
    return list(shapes.values())


def load_issued(con, batches: Iterable[Sequence[tuple[str, int | None]]]) -> None:
    """Table ``issued(id, grp)``: the survey's issued ids and groups, loaded in batches."""
    import pyarrow as pa

    con.execute("CREATE TABLE issued (id VARCHAR PRIMARY KEY, grp INTEGER)")
    for batch in batches:
        if not batch:
            continue
        ids, groups = zip(*batch, strict=True)
        con.register("issued_batch", pa.table({"id": pa.array(ids, pa.string()),
                                               "grp": pa.array(groups, pa.int32())}))
        con.execute("INSERT INTO issued SELECT * FROM issued_batch")
        con.unregister("issued_batch")


def tally_sql(sources: Sequence[ResponseSource], survey: Survey, issued: bool = False) -> str:
    """The one query: cells and respondents (see :mod:`surveykit.counting.tally`).

    Per row only cheap work: the question cell coded by an exact match (then by
    ASCII case), the answer cell compared with ''. Respondent ids are grouped
    as typed; each distinct id is then checked once: one with surrounding
    spaces, empty or too long makes its respondent suspicious (a cheap byte
    test picks the few ids that need the exact check). With ``issued``, rows
    join table ``issued`` (:func:`load_issued`): the id's group is one more
    cell key, and an id typed otherwise than issued makes its respondent
    suspicious (the exact path reads it the importer's way, or refuses it).
    """
    exact = " ".join(f"WHEN {quote_text(question.id)} THEN {index}"
                     for index, question in enumerate(survey.questions))
    folded = " ".join(f"WHEN {quote_text(name)} THEN {index}"
                      for name, index in question_codes(survey).items())
    words = word_count(survey)
    sums = ", ".join(
        f"sum(CASE WHEN qi >= 0 AND qi // {BITS_PER_WORD} = {w} "
        f"THEN 1::BIGINT << (qi % {BITS_PER_WORD}) ELSE 0 END) "
        f"FILTER (WHERE answered)::BIGINT AS w{w}" for w in range(words))
    distinct_bits = " + ".join(f"bit_count(w{w})" for w in range(words))
    union = "\nUNION ALL\n".join(rows_sql(shape, survey) for shape in _shapes(sources))
    # Ids starting or ending with a byte below '!' or a non-ASCII character may
    # need trimming; only they pay for the exact test.
    near_space = ("r < '!' OR r >= '\u0080' OR right(r, 1) < '!' OR right(r, 1) >= '\u0080' "
                  f"OR strlen(r) > {RESPONDENT_ID_LENGTH}")
    issued_columns = ("issued.grp AS ig, issued.id IS NOT NULL AS known" if issued
                      else "NULL::INTEGER AS ig, true AS known")
    issued_join = "LEFT JOIN issued ON issued.id = rows.r" if issued else ""
    return f"""
WITH rows AS ({union}),
coded AS (
    SELECT f, r, q, g, a, a IS NOT NULL AND a <> '' AS answered,
           CASE q {exact} ELSE CASE lower(trim(q)) {folded} ELSE -1 END END AS qi,
           {issued_columns}
    FROM rows {issued_join}),
agg AS (
    SELECT GROUPING(r) AS by_cell, f, q, g, a, ig, r, count(*) AS n,
           count(*) FILTER (WHERE answered) AS answered,
           count(*) FILTER (WHERE (answered AND qi < 0) OR NOT known) AS uncoded, {sums}
    FROM coded GROUP BY GROUPING SETS ((f, q, g, a, ig), (r)))
SELECT by_cell, f, q, g, a, ig, sum(n) AS n,
       count(*) FILTER (WHERE by_cell = 0 AND answered > 0) AS respondents,
       count(*) FILTER (WHERE by_cell = 0 AND (
           answered <> {distinct_bits} OR uncoded > 0 OR r IS NULL
           OR CASE WHEN {near_space}
                   THEN sk_strip(r) <> r OR r = '' OR length(r) > {RESPONDENT_ID_LENGTH}
                   ELSE false END)) AS suspicious
FROM agg GROUP BY by_cell, f, q, g, a, ig
"""


def fast_tally(con, sources: Sequence[ResponseSource], survey: Survey, *,
               issued: bool = False) -> RawTally | None:
    """Run the query; None when DuckDB refuses a file (bad field counts, bytes, ...)."""
    import duckdb

    try:
        result = con.execute(tally_sql(sources, survey, issued)).fetchall()
    except duckdb.Error:
        return None  # the exact path reads the file row by row and says where
    cells = [(f, q, g, a, int(n), ig) for by_cell, f, q, g, a, ig, n, *_ in result if by_cell]
    respondents, suspicious = next(((int(r), int(s)) for by_cell, *_, r, s in result
                                    if not by_cell), (0, 0))
    return RawTally(cells=cells, respondents=respondents, suspicious=suspicious)
