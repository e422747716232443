"""Counting files with DuckDB, the embedded engine: one scan, two GROUP BYs, bounded memory.

The query reads every file as text, as the importer's reader reads it
(:mod:`surveykit.reading`): CSV with the dialect its header uses (the
delimiter, double quotes, strict field counts), Parquet cells by the kind of
their column (:mod:`surveykit.reading.parquet`: binary decoded as UTF-8,
``1.0`` as ``1``, NaN empty); it drops blank rows and groups the same rows at
once by (file, question cell, group cell, answer cell) and by respondent id
(a CTE streamed to both GROUP BYs, or GROUPING SETS on DuckDB before 2.0), as
:mod:`surveykit.counting.tally` describes. Valid files, the common case, cost
that one scan; only when it finds something off are the files read again,
row by row, to say what and where (:mod:`surveykit.counting.exact`). DuckDB
spills to a temporary directory beyond ``MEMORY_LIMIT``, so memory stays flat
whatever the files' size. Only DuckDB's built-in readers are used (its sqlite, postgres and excel
extensions are downloaded at run time, which a locked-down machine cannot do).

Where DuckDB's CSV reader is laxer than the importer's, the scan makes the
difference visible instead of counting it:

* a row with more fields than the header whose extra fields are empty
  (``a,b,c,`` under a three-column header) DuckDB reads as a whole row when
  an empty field reads as NULL; so an empty field reads as '' and only a text
  no file holds (:data:`NULL_TEXT`) as NULL, and then DuckDB refuses such a
  row as it refuses every row of another length (and the exact path says
  where);
* a quote after a delimiter and a space (``a, "b"``) opens a quoted field
  for DuckDB, and one after a closing quote and spaces (``"a" "b"``) opens it
  again; both are text for the importer: files with either are counted row
  by row (:func:`space_before_quote`, a scan for quotes at memchr speed).
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from surveykit.counting.sources import ResponseSource, quote_name, quote_text
from surveykit.counting.tally import BITS_PER_WORD, RawTally, question_codes, word_count
from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.reading.cells import PYTHON_WHITESPACE
from surveykit.reading.parquet import WHOLE_LIMIT

__all__ = ["MEMORY_LIMIT", "NULL_TEXT", "connect", "dictionary_questions", "fast_tally",
           "load_issued", "parquet_cell", "space_before_quote", "strip_macro"]

# DuckDB keeps at most this much in memory and spills the rest to disk.
MEMORY_LIMIT = "1GB"
# What DuckDB reads as NULL in a CSV file: a text no file holds by chance, so that an empty
# field reads '' (a cell holding this text reads NULL, which sends its file to the exact
# path, where it reads as the text it is).
NULL_TEXT = "\x01surveykit:null\x01"
# Bytes looked at per step when a CSV file has quotes.
_SCAN_BYTES = 1 << 22


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


def parquet_cell(column: str, kind: str) -> str:
    """The SQL of a Parquet cell as text, from the SQL of its ``column`` and the kind of the
    column (:func:`surveykit.reading.parquet.text_kind`; the same text as
    :mod:`surveykit.reading.parquet` gives).

    >>> parquet_cell("#2", "bytes")
    'decode(#2)'
    """
    if kind == "text":
        return f"CAST({column} AS VARCHAR)"
    if kind == "bytes":
        return f"decode({column})"  # an error for bytes that are not UTF-8
    if kind == "float":
        return (f"CASE WHEN isnan({column}) THEN '' WHEN {column} = trunc({column}) AND "
                f"abs({column}) < {WHOLE_LIMIT!r} THEN CAST(CAST({column} AS BIGINT) AS "
                f"VARCHAR) ELSE CAST({column} AS VARCHAR) END")
    return f"CAST({column} AS VARCHAR)"


def _reader(sources: Sequence[ResponseSource]) -> tuple[str, list[str]]:
    """The table function reading files of one shape, and the SQL of each column as text."""
    first = sources[0]
    tables = (quote_text(first.table) if len(sources) == 1
              else "[" + ", ".join(quote_text(source.table) for source in sources) + "]")
    named = ", filename = true" if len(sources) > 1 else ""
    if first.table_kind == "parquet":
        # columns by position (#1, #2, ...): a name may be empty or repeated
        cells = ", ".join(f"{parquet_cell(f'#{at + 1}', kind)} AS c{at}"
                          for at, kind in enumerate(first.column_kinds))
        filename = ", filename" if named else ""
        return (f"(SELECT {cells}{filename} FROM read_parquet({tables}{named}))",
                [f"c{at}" for at in range(len(first.header))])
    names = [f"c{i}" for i in range(len(first.header))]
    columns = ", ".join(f"'{name}': 'VARCHAR'" for name in names)
    # empty fields read as '', not NULL: else DuckDB drops a row's extra empty fields
    return (f"read_csv({tables}, header = true, auto_detect = false, "
            f"columns = {{{columns}}}, delim = {quote_text(first.delimiter)}, quote = '\"', "
            f"escape = '\"', strict_mode = true, null_padding = false, "
            f"nullstr = {quote_text(NULL_TEXT)}, allow_quoted_nulls = false{named})", names)


def rows_sql(sources: Sequence[ResponseSource], survey: Survey, lookup: bool = False) -> str:
    """SELECT f, r, g, q, a, b0, b1, ... (in this order for every shape: shapes are joined by
    UNION ALL): one row per answer cell of files of one shape (the same kind, header and
    delimiter), blank rows out; several files are read by one table function. ``b{w}`` is
    the row's bit in its respondent's word w (:func:`_bits_sql`; ``lookup``: by
    :func:`_lookup_sql`).

    A row is blank when every cell is empty; only rows without a respondent id
    are looked at closely (the others cannot be blank), which keeps string work
    off the hot path. A NULL cell of a CSV file (it held :data:`NULL_TEXT`) is
    not blank; as a respondent id it makes its respondent suspicious, as a
    question, group or answer cell the tally sends it to the exact path.
    """
    coding = _lookup_sql if lookup else _bits_sql
    bits = ", ".join(f"CASE WHEN a IS NOT NULL AND a <> '' THEN {coding(survey, w)} ELSE 0 END "
                     f"AS b{w}" for w in range(word_count(survey)))
    source = sources[0]
    reader, cells = _reader(sources)
    if len(sources) > 1:  # the file's index, by its name
        names = ", ".join(f"({quote_text(one.table)}, {one.index})" for one in sources)
        reader += f" JOIN (VALUES {names}) AS files(name, f) ON files.name = filename"
        index = "files.f"
    else:
        index = str(source.index)
    respondent = cells[source.respondent]
    if source.table_kind == "parquet":  # a null cell is an empty cell
        blank = " AND ".join(f"sk_strip({cell}) = ''" for cell in cells)
        # (a NULL id: NULL OR x keeps the row when x holds.) With the column's statistics
        # DuckDB drops this filter when no id is NULL or empty; the CASE below it keeps
        keep = f"WHERE {respondent} <> '' OR NOT ({blank})"
    else:  # a NULL cell held NULL_TEXT: not blank
        blank = " AND ".join(f"sk_strip(coalesce({cell}, 'x')) = ''" for cell in cells)
        # on CSV rows the CASE costs less than the OR above
        keep = (f"WHERE CASE WHEN {respondent} IS NULL OR {respondent} = '' THEN NOT ({blank}) "
                "ELSE true END")
    group = cells[source.group] if source.group is not None else "NULL::VARCHAR"
    head = f"{index} AS f, {respondent} AS r, {group} AS g"
    if source.layout == "long":
        return (f"SELECT *, {bits} FROM (SELECT {head}, {cells[source.question]} AS q, "
                f"{cells[source.answer]} AS a FROM {reader} {keep})")
    ids = [survey.questions[question].id for _, question in source.wide]
    answers = ", ".join(f"{cells[at]} AS {quote_name(qid)}"
                        for (at, _), qid in zip(source.wide, ids, strict=True))
    # the SQL standard's UNPIVOT: DuckDB 2 no longer parses its own form with a subquery
    return (f"SELECT f, r, g, q, a, {bits} FROM (SELECT {head}, {answers} FROM {reader} {keep}) "
            f"UNPIVOT INCLUDE NULLS (a FOR q IN ({', '.join(quote_name(qid) for qid in ids)}))")


def streams_shared_rows() -> bool:
    """Whether this DuckDB streams a MATERIALIZED CTE to its readers as it runs (2.0 and
    later, duckdb/duckdb#23750) instead of storing all of it first."""
    import duckdb

    return int(duckdb.__version__.split(".")[0]) >= 2


def _shapes(sources: Sequence[ResponseSource],
            lookup: Collection[int] = ()) -> list[list[ResponseSource]]:
    """Sources grouped by what one table function can read together (and codes questions
    alike: ``lookup``, see :func:`tally_sql`)."""
    shapes: dict[tuple, list[ResponseSource]] = {}
    for source in sources:
        shapes.setdefault((source.table_kind, source.header, source.delimiter,
                           source.column_kinds, source.index in lookup), []).append(source)
    return list(shapes.values())


def dictionary_questions(source: ResponseSource, ids: Collection[str]) -> bool:
    """Whether to code a file's question cells by :func:`_lookup_sql`: a long Parquet file
    that holds them as text in a dictionary-encoded column (every row group has a
    dictionary page: DuckDB then runs the lookup once per distinct value), whose
    statistics show question ``ids`` as the least and greatest cell of every row group.

    Files from DuckDB, pandas and pyarrow have dictionaries unless written without
    them (then the lookup would cost each row more than the CASE). A file whose
    cells are typed otherwise than the ids ('Q1', ' q1') would be counted twice
    (fast_tally); its statistics usually show one such cell and keep it off the
    lookup, and either way it counts exactly. A top-level column's position is its
    leaf column's only when no column is nested.
    """
    import pyarrow.parquet as pq

    if (source.table_kind != "parquet" or source.layout != "long"
            or source.column_kinds[source.question] != "text"):
        return False
    try:
        metadata = pq.read_metadata(source.table)
        if metadata.num_columns != len(source.header):
            return False
        for group in range(metadata.num_row_groups):
            column = metadata.row_group(group).column(source.question)
            statistics = column.statistics
            if not (column.has_dictionary_page and statistics is not None
                    and statistics.has_min_max and statistics.min in ids
                    and statistics.max in ids):
                return False
    except Exception:  # pyarrow raises several types; the CASE codes any file
        return False
    return True


def space_before_quote(path: Path, delimiter: str) -> bool:
    """Whether a quote follows spaces that follow a delimiter, a line end or another quote
    somewhere in the file (``a, "b"``; ``"a" "b"``): DuckDB reads quoted text there, the
    importer plain text (``a,"b"`` and ``"a"`` are read alike by both).

    A file without quotes costs one memchr over its bytes; one with quotes a
    look at the byte before each quote (numpy, a few MB at a time), and a walk
    back over the spaces before the few quotes that follow one.
    """
    import mmap

    import numpy as np

    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        if size < 2:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            start = data.find(b'"')
            if start < 0:
                return False
            octets = np.frombuffer(data, dtype=np.uint8)
            openers = frozenset((ord(delimiter), ord("\n"), ord("\r"), ord('"')))
            try:
                for begin in range(max(start, 1), size, _SCAN_BYTES):
                    quotes = np.flatnonzero(octets[begin:begin + _SCAN_BYTES] == ord('"'))
                    for at in (quotes[octets[quotes + begin - 1] == ord(" ")] + begin).tolist():
                        before = at - 1
                        while before >= 0 and data[before] == ord(" "):
                            before -= 1
                        if before < 0 or data[before] in openers:
                            return True
                return False
            finally:
                del octets  # the mmap closes only when no array holds its buffer


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


def tally_sql(sources: Sequence[ResponseSource], survey: Survey, issued: bool = False,
              fanout: bool | None = None, lookup: Collection[int] = ()) -> str:
    """The one query: cells and respondents (see :mod:`surveykit.counting.tally`).

    Per row only cheap work: the answer cell compared with '', the question
    cell of an answered row coded to its bit by an exact match (then by ASCII
    case; files whose index is in ``lookup``, long Parquet files with a
    dictionary-encoded question column, by exact match only,
    :func:`_lookup_sql`). Per respondent the GROUP BY keeps two machine integers: the rows
    that count (answered, or with an id that was not issued) and the OR of
    their bits (:func:`_bits_sql`). Each distinct id is then checked once: one
    with surrounding spaces, empty or too long makes its respondent suspicious
    (a cheap byte test picks the few ids that need the exact check). With
    ``issued``, rows join table ``issued`` (:func:`load_issued`): the id's
    group is one more cell key, and an id typed otherwise than issued makes its
    respondent suspicious (the exact path reads it the importer's way, or
    refuses it).

    ``fanout`` (default: :func:`streams_shared_rows`): the rows, read once, are
    streamed to two plain GROUP BYs (a MATERIALIZED CTE, which DuckDB 2 streams
    to its readers); else GROUPING SETS, which older DuckDB also runs in one
    scan, a little slower (each grouping keeps every aggregate, and the
    respondents' rows are grouped once more).
    """
    if fanout is None:
        fanout = streams_shared_rows()
    words = word_count(survey)
    union = "\nUNION ALL\n".join(rows_sql(shape, survey, shape[0].index in lookup)
                                 for shape in _shapes(sources, lookup))
    # Ids starting or ending with a character below '!' or beyond ASCII may need
    # trimming; only they pay for the exact test (r[-1]: the last code point, and
    # ord of it is cheaper than comparing right(r, 1) as text).
    near_space = ("r < '!' OR r >= '\u0080' OR NOT (ord(r[-1]) BETWEEN 33 AND 127) "
                  f"OR strlen(r) > {RESPONDENT_ID_LENGTH}")
    issued_columns = ("issued.grp AS ig, issued.id IS NULL AS unknown" if issued
                      else "NULL::INTEGER AS ig, false AS unknown")
    issued_join = "LEFT JOIN issued ON issued.id = rows.r" if issued else ""
    answered = ", a IS NOT NULL AND a <> '' AS answered" if issued else ""
    coded = f"SELECT rows.*, {issued_columns}{answered} FROM rows {issued_join}"
    # a row's bit b{w} (rows_sql), none for a row whose id was not issued; without issued
    # ids the bits go to bit_or as they are, where a dictionary's codes stay cheap
    bits = ", ".join(f"bit_or(CASE WHEN unknown THEN 0 ELSE b{w} END) AS w{w}" if issued
                     else f"bit_or(b{w}) AS w{w}" for w in range(words))
    # a word is NULL when each of its respondent's answered rows has a question cell
    # that no MAP key matches (_lookup_sql): no one-bits, as for a cell that does not code
    one_bits = " + ".join(f"bit_count(coalesce(w{w}, 0))::BIGINT" for w in range(words))
    odd_id = (f"r IS NULL OR CASE WHEN {near_space} THEN sk_strip(r) <> r OR r = '' "
              f"OR length(r) > {RESPONDENT_ID_LENGTH} ELSE false END")
    if issued:
        # a row whose id was not issued counts without a bit: its respondent is suspicious
        per_respondent = f"count(*) FILTER (WHERE answered OR unknown) AS counted, {bits}"
        answering, suspicious = "counted > 0", f"counted <> {one_bits} OR {odd_id}"
        ones = grouped_ones = "NULL::HUGEINT"
    else:
        # No count per respondent (a second aggregate costs every row as much as the bits):
        # the one-bits of all respondents are compared with the answered rows of the cells
        # instead (fast_tally), which they equal exactly when every respondent's do.
        per_respondent = bits
        answering = " OR ".join(f"w{w} <> 0" for w in range(words))
        suspicious, ones = odd_id, f"sum({one_bits})"
        grouped_ones = f"{ones} FILTER (WHERE by_cell = 0)"
    if fanout:
        # cells are grouped only by the keys that vary: every key costs each row
        several_files = len(sources) > 1
        group_column = any(source.group is not None for source in sources)
        cell = {"f": "f" if several_files else f"{sources[0].index} AS f", "q": "q",
                "g": "g" if group_column else "NULL::VARCHAR AS g", "a": "a",
                "ig": "ig" if issued else "NULL::INTEGER AS ig"}
        keys = ", ".join(key for key, column in cell.items() if column == key)
        return f"""
WITH rows AS ({union}),
coded AS MATERIALIZED ({coded}),
ids AS (SELECT r, {per_respondent} FROM coded GROUP BY r)
SELECT 1 AS by_cell, {", ".join(cell.values())}, count(*) AS n,
       NULL::BIGINT AS respondents, NULL::BIGINT AS suspicious, NULL::HUGEINT AS ones
FROM coded GROUP BY {keys}
UNION ALL
SELECT 0, NULL, NULL, NULL, NULL, NULL, NULL, count(*) FILTER (WHERE {answering}),
       count(*) FILTER (WHERE {suspicious}), {ones}
FROM ids
"""
    return f"""
WITH rows AS ({union}),
agg AS (
    SELECT GROUPING(r) AS by_cell, f, q, g, a, ig, r, count(*) AS n, {per_respondent}
    FROM ({coded})
    GROUP BY GROUPING SETS ((f, q, g, a, ig), (r)))
SELECT by_cell, f, q, g, a, ig, sum(n) AS n,
       count(*) FILTER (WHERE by_cell = 0 AND ({answering})) AS respondents,
       count(*) FILTER (WHERE by_cell = 0 AND ({suspicious})) AS suspicious,
       {grouped_ones} AS ones
FROM agg GROUP BY by_cell, f, q, g, a, ig
"""


def _bits_sql(survey: Survey, word: int) -> str:
    """The bit of question cell ``q`` in its respondent's word ``word`` (rows_sql gives it
    to answered rows only): bit i % 32 for question i, when ``word * 32 <= i < word * 32 +
    32``, else 0; 0 for a cell that does not code.

    A respondent's counted rows (answered, or with an id not issued) then show as
    many one-bits in the OR of their bits as there are rows exactly when every
    one codes and no question is answered twice: anything else leaves fewer
    one-bits than rows, and the respondent suspicious.
    """
    questions = list(enumerate(survey.questions))[word * BITS_PER_WORD:
                                                  (word + 1) * BITS_PER_WORD]
    exact = " ".join(f"WHEN {quote_text(question.id)} THEN {_bit(index, word)}"
                     for index, question in questions)
    folded = " ".join(f"WHEN {quote_text(name)} THEN {_bit(index, word)}"
                      for name, index in question_codes(survey).items()
                      if _bit(index, word))
    return f"(CASE q {exact} ELSE CASE lower(trim(q)) {folded} ELSE 0 END END)::BIGINT"


def _bit(index: int, word: int) -> int:
    """Question ``index``'s bit in its respondent's word ``word``: bit index % 32 of word
    index // 32, 0 in the other words."""
    return 1 << (index % BITS_PER_WORD) if index // BITS_PER_WORD == word else 0


def _lookup_sql(survey: Survey, word: int) -> str:
    """:func:`_bits_sql` for a question cell that is exactly a question id, by a MAP of every
    id (0 for the questions of other words); NULL for any other cell, so it sets no bit.

    One function of the cell alone: on a dictionary-encoded Parquet column DuckDB
    runs it once per distinct value of each dictionary, not once per row (a CASE,
    or a function of the cell's lower case, runs per row). A cell that is not
    exactly an id leaves its respondent short of one-bits, as one that does not
    code; :func:`fast_tally` then counts again with :func:`_bits_sql`.

    >>> from surveykit.definition.survey import parse_survey
    >>> _lookup_sql(parse_survey('name = "s"\\ntitle = "S"\\n[mechanism]\\np = 0.6\\nq = 0.2\\n'
    ...     '[[questions]]\\nid = "a"\\ntext = "A?"\\n', "s"), 0)
    "MAP {'a': CAST(1 AS BIGINT)}[q]"
    """
    entries = ", ".join(
        f"{quote_text(question.id)}: CAST({_bit(index, word)} AS BIGINT)"
        for index, question in enumerate(survey.questions))
    return f"MAP {{{entries}}}[q]"


def fast_tally(con, sources: Sequence[ResponseSource], survey: Survey, *,
               issued: bool = False, fanout: bool | None = None) -> RawTally | None:
    """Run the query (:func:`tally_sql`); None when DuckDB refuses a file (bad field
    counts, bytes, ...) or would read one otherwise than the importer
    (:func:`space_before_quote`)."""
    import duckdb

    if any(source.table_kind == "csv" and not source.written_here
           and space_before_quote(source.table, source.delimiter) for source in sources):
        return None
    ids = {question.id for question in survey.questions}
    lookup = {source.index for source in sources if dictionary_questions(source, ids)}
    try:
        result = con.execute(tally_sql(sources, survey, issued, fanout, lookup)).fetchall()
        tally = _tally(result)
        if tally.suspicious and any(f in lookup and a and q not in ids
                                    for f, q, _, a, _, _ in tally.cells):
            # a question cell not typed as its id (' Q1', 'q1') set no bit in a file coded
            # by _lookup_sql: count again coding every cell as the other files are
            tally = _tally(con.execute(tally_sql(sources, survey, issued, fanout)).fetchall())
    except duckdb.Error:
        return None  # the exact path reads the file row by row and says where
    return tally


def _tally(result: Sequence[tuple]) -> RawTally:
    """The tally from the rows of :func:`tally_sql`."""
    cells = [(f, q, g, a, int(n), ig) for by_cell, f, q, g, a, ig, n, *_ in result if by_cell]
    respondents, suspicious, ones = next(((int(r), int(s), o) for by_cell, *_, r, s, o in result
                                          if not by_cell), (0, 0, None))
    if ones is not None:
        # answered rows that set no bit of their own: a repeated or uncoded question
        suspicious += sum(n for _, _, _, a, n, _ in cells if a) - int(ones)
    return RawTally(cells=cells, respondents=respondents, suspicious=suspicious)
