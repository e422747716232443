"""Weighted counts of response files where they lie: one GROUP BY over the files, no import.

A survey with ``[sampling]`` is estimated from sums of weights per (question,
stratum, PSU at each stage, fpc, group, response) (:mod:`surveykit.sampling.counts`),
the table :func:`surveykit.store.design_values.weighted_cells` makes from the store
and :mod:`surveykit.counting.weighted_table` writes. This module makes the same
table from CSV and Parquet files, read as the importer reads them
(:mod:`surveykit.counting.sources`), by an engine's aggregations:

* **respondents**: per respondent id, its design values (weight, strata,
  clusters, fpc, replicate weights: the ``[sampling]`` columns, kept like
  covariates) and its group cell, with counts that show a problem (values that
  differ between a respondent's rows, an id in two files or on two rows of a
  wide file, an empty or untrimmed id, a design value that is empty, a number
  cell that is not plain digits, a weight not above 0, a replicate weight below 0);
* **answers**: per (respondent, question), the answer cell and how many rows
  give one;
* **cells**: every respondent of the design joined to every question and its
  answer (none: the respondent keeps its PSU), grouped by (question, design
  keys, group cell, answer cell, file), with the sums of weights, squared
  weights and each replicate weight, the number of respondents and the least weight.

The distinct cells are few, so each answer and group cell is read here with
the importer's own rules (:mod:`surveykit.reading.cells`), as
:mod:`surveykit.counting.tally` reads plain counts, and the design is checked
on the cells (a PSU in two strata, a stratum with one PSU, an fpc that
changes within a stratum: :class:`~surveykit.sampling.counts.WeightedCounts`
checks its cells as the import checks respondents). When anything is off,
:func:`weighted_file_cells` returns None and the caller imports the files into a
scratch database (:func:`surveykit.workflows.counting.weighted_cells_of_files`),
whose messages name the file, line, column and value: valid files, the common
case, cost the aggregations; only files with a problem are read row by row.

DuckDB runs the aggregations as SQL (:func:`duckdb_raw_cells`), Dask as
groupbys on a cluster's workers (:mod:`surveykit.counting.dask_engine`); both
return the same raw cells, read by :func:`cells_from_raw`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from surveykit.counting import dask_engine, duckdb_engine
from surveykit.counting.duckdb_engine import _reader, _shapes, space_before_quote
from surveykit.counting.sources import (
    COVARIATES_EXACT_ONLY,
    ResponseSource,
    open_sources,
    quote_name,
    quote_text,
)
from surveykit.counting.tally import NUMBER_PATTERN, RawCells, question_codes
from surveykit.definition.covariates import COVARIATE_VALUE_LENGTH
from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError
from surveykit.reading.cells import (
    NOT_A_GROUP,
    group_lookup,
    read_answer,
    read_group,
)
from surveykit.reading.numbers import number_reader
from surveykit.sampling.counts import WeightedCounts, design_keys, gram_rank
from surveykit.sampling.design import natural_order
from surveykit.vocabulary import canonical_spelling

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NUMBER_PATTERN", "DesignColumns", "RawCells", "cells_from_raw", "design_columns",
           "duckdb_raw_cells", "weighted_file_cells"]

@dataclass(frozen=True, kw_only=True)
class DesignColumns:
    """The design columns the files carry, by covariate name: ``weight`` (None: every
    respondent weighs 1), ``keys`` (strata, clusters of each stage, fpc of each stage, in
    the order of :func:`surveykit.sampling.counts.design_keys`), which of them are numbers
    (``numeric``), ``replicates`` (the producer's replicate columns, in natural order),
    ``others`` the files' other declared covariates (checked as import checks them, then
    left out) and whether each is a number, and per source the position of every one of
    them (``positions[i][name]``)."""

    weight: str | None
    keys: tuple[str, ...]
    numeric: tuple[bool, ...]
    replicates: tuple[str, ...]
    others: tuple[tuple[str, bool], ...]
    positions: tuple[dict[str, int], ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Every design column: the weight, the keys, the replicates."""
        return (*([self.weight] if self.weight else []), *self.keys, *self.replicates)

    @property
    def checked(self) -> tuple[str, ...]:
        """The design columns, then the other covariates."""
        return (*self.names, *(name for name, _ in self.others))

    @property
    def number_columns(self) -> tuple[str, ...]:
        return (*([self.weight] if self.weight else []),
                *(k for k, numeric in zip(self.keys, self.numeric, strict=True) if numeric),
                *self.replicates, *(name for name, numeric in self.others if numeric))


def design_columns(survey: Survey, sources: Sequence[ResponseSource]) -> DesignColumns | None:
    """Where each source holds the design columns, or None when the fast path cannot read
    the sources as the import would (a reason other than covariates to read them row by
    row, a declared covariate whose cells import checks against levels or bounds, a
    source without every design column, with other covariates or other replicate
    columns than the first)."""
    sampling = survey.sampling
    names = [name for name in (sampling.strata, *sampling.clusters, *sampling.fpc)
             if name is not None]
    numeric = [name in sampling.fpc for name in names]
    replicates: tuple[str, ...] | None = None
    others: list[str] | None = None
    positions = []
    for source in sources:
        if source.exact_only not in (None, COVARIATES_EXACT_ONLY):
            return None
        found = {name.casefold(): at for at, name in source.covariates}
        if len(found) != len(source.covariates):
            return None  # a covariate given twice: import says which
        mine: tuple[str, ...] = ()
        if sampling.replicate_weights is not None:
            by_name = {name: name for _, name in source.covariates}
            matched = [name for name in by_name if sampling.replicate_weights.matches(name)]
            if sampling.replicate_weights.pattern is None:
                matched = [name for name in sampling.replicate_weights.columns
                           if name.casefold() in found]
            mine = tuple(natural_order(matched)) if sampling.replicate_weights.pattern \
                else tuple(matched)
        if replicates is None:
            replicates = mine
        elif mine != replicates:
            return None
        wanted = [*([sampling.weight] if sampling.weight else []), *names, *mine]
        if any(name.casefold() not in found for name in wanted):
            return None
        design = {name.casefold() for name in wanted}
        mine_others = sorted(name for _, name in source.covariates
                             if name.casefold() not in design)
        if others is None:
            others = mine_others
        elif others != mine_others:
            return None
        wanted += mine_others
        for name in wanted:
            covariate = survey.covariate(name)
            if covariate.levels is not None or covariate.low is not None \
                    or covariate.high is not None:
                return None
        positions.append({name: found[name.casefold()] for name in wanted})
    if sampling.replicate_weights is not None and not replicates:
        return None
    if not sampling.columns and not replicates:
        return None  # no design value tells a respondent of the sample: import does
    return DesignColumns(weight=sampling.weight, keys=tuple(names), numeric=tuple(numeric),
                         replicates=replicates or (),
                         others=tuple((name, survey.covariate(name).kind == "number")
                                      for name in others or ()),
                         positions=tuple(positions))


# -- DuckDB ---------------------------------------------------------------------------------

def _cell(source: ResponseSource, cells: Sequence[str], at: int) -> str:
    """A cell's SQL: a Parquet null is an empty cell, a CSV NULL held the null text (and is
    flagged)."""
    return f"coalesce({cells[at]}, '')" if source.table_kind == "parquet" else cells[at]


def _shape_sql(shape: Sequence[ResponseSource], survey: Survey, columns: DesignColumns
               ) -> tuple[str, str]:
    """(respondent rows, answer rows) of files of one shape, as two SELECTs."""
    source = shape[0]
    reader, cells = _reader(shape)
    if len(shape) > 1:
        names = ", ".join(f"({quote_text(one.table)}, {one.index})" for one in shape)
        reader += f" JOIN (VALUES {names}) AS files(name, f) ON files.name = filename"
        index = "files.f"
    else:
        index = str(source.index)
    respondent = _cell(source, cells, source.respondent)
    if source.table_kind == "parquet":
        blank = " AND ".join(f"sk_strip({cell}) = ''" for cell in cells)
    else:
        blank = " AND ".join(f"sk_strip(coalesce({cell}, 'x')) = ''" for cell in cells)
    keep = f"WHERE CASE WHEN {cells[source.respondent]} IS NULL OR " \
           f"{cells[source.respondent]} = '' THEN NOT ({blank}) ELSE true END"
    group = _cell(source, cells, source.group) if source.group is not None else "''"
    positions = columns.positions[source.index]
    design = [_cell(source, cells, positions[name]) for name in columns.checked]
    nulls = " OR ".join(f"({cell}) IS NULL" for cell in (respondent, group, *design))
    values = ", ".join(f"{cell} AS d{k}" for k, cell in enumerate(design))
    wide = "true" if source.layout == "wide" else "false"
    respondents = (f"SELECT {index} AS f, {respondent} AS r, {group} AS g, {values}, "
                   f"{wide} AS wide, ({nulls}) AS has_null FROM {reader} {keep}")
    if source.layout == "long":
        code = _question_code_sql(survey, _cell(source, cells, source.question))
        answer = _cell(source, cells, source.answer)
        answers = (f"SELECT {index} AS f, {respondent} AS r, {code} AS qi, {answer} AS a "
                   f"FROM {reader} {keep}")
    else:
        named = ", ".join(f"{_cell(source, cells, at)} AS {quote_name(f'q{question}')}"
                          for at, question in source.wide)
        listed = ", ".join(quote_name(f"q{question}") for _, question in source.wide)
        answers = (f"SELECT f, r, CAST(substr(q, 2) AS INTEGER) AS qi, a FROM ("
                   f"SELECT {index} AS f, {respondent} AS r, {named} FROM {reader} {keep}) "
                   f"UNPIVOT INCLUDE NULLS (a FOR q IN ({listed}))")
    return respondents, answers


def _question_code_sql(survey: Survey, cell: str) -> str:
    """A long file's question cell coded to the question's index: as typed, then trimmed and
    lower-cased; -1 for a cell that codes to none (the importer then says which)."""
    exact = " ".join(f"WHEN {quote_text(q.id)} THEN {i}" for i, q in enumerate(survey.questions))
    folded = " ".join(f"WHEN {quote_text(name)} THEN {i}"
                      for name, i in question_codes(survey).items())
    return (f"CASE {cell} {exact} ELSE CASE lower(sk_strip({cell})) {folded} ELSE -1 END END")


def duckdb_raw_cells(con, sources: Sequence[ResponseSource], survey: Survey,
                     columns: DesignColumns) -> RawCells | None:
    """The raw cells of the files (see the module docstring), computed by DuckDB, or None
    when a check finds something the importer must say (or DuckDB refuses a file)."""
    import duckdb

    if any(source.table_kind == "csv" and not source.written_here
           and space_before_quote(source.table, source.delimiter) for source in sources):
        return None
    pieces = [_shape_sql(shape, survey, columns) for shape in _shapes(sources)]
    respondent_rows = "\nUNION ALL\n".join(p[0] for p in pieces)
    answer_rows = "\nUNION ALL\n".join(p[1] for p in pieces)
    names = columns.names
    checked = columns.checked
    numbers = set(columns.number_columns)
    strip = {k: f"sk_strip(d{k})" for k in range(len(checked))}
    # a value that differs between a respondent's rows: its least and greatest differ (as
    # Dask's groupby checks it; 100 replicate columns made 100 count(DISTINCT)s, each a hash)
    per_value = ", ".join(f"min({strip[k]}) AS lo{k}, max({strip[k]}) AS d{k}"
                          for k in range(len(checked)))
    def all_given(table: str = "") -> str:
        return " AND ".join(f"{table}d{k} <> ''" for k in range(len(names)))

    full = all_given()
    none = " AND ".join(f"d{k} = ''" for k in range(len(names)))
    several = " OR ".join(f"lo{k} <> d{k}" for k in range(len(checked)))
    bad_values = []
    # number cells: as the importer's float() reads them; others: what a covariate holds
    for k, name in enumerate(checked):
        if name in numbers:
            number = f"TRY_CAST(d{k} AS DOUBLE)"
            bad_values.append(f"d{k} <> '' AND (NOT regexp_full_match(d{k}, "
                              f"{quote_text(NUMBER_PATTERN)}) OR "
                              f"{number} IS NULL OR NOT isfinite({number}))")
            if name == columns.weight:
                bad_values.append(f"{number} <= 0")
            elif name in columns.replicates:
                bad_values.append(f"{number} < 0")
        else:
            bad_values.append(f"length(d{k}) > {COVARIATE_VALUE_LENGTH}")
    bad = " OR ".join(f"({b})" for b in bad_values)
    weight = (f"CAST(d{names.index(columns.weight)} AS DOUBLE)" if columns.weight
              else "1.0::DOUBLE")
    keys = []
    for key, name in zip(design_keys(survey.sampling), columns.keys, strict=True):
        k = names.index(name)
        keys.append(f"CAST(d{k} AS DOUBLE) AS {quote_name(key)}" if name in numbers
                    else f"d{k} AS {quote_name(key)}")
    # the replicates' analysis weights: the columns, or factors times the weight
    factor = "" if survey.sampling.replicate_weights is None or \
        survey.sampling.replicate_weights.combined else " * w"
    replicates = "".join(f", CAST(d{names.index(name)} AS DOUBLE){factor} AS x{j}"
                         for j, name in enumerate(columns.replicates))
    replicate_sums = "".join(f", fsum(x{j}) AS rep{j + 1}"
                             for j in range(len(columns.replicates)))
    count = len(columns.replicates)
    # the respondents' replicate weights, for their Gram matrix (summed in numpy by
    # batches: R (R + 1) / 2 products as SQL aggregates cost seconds to plan at R = 104)
    gram = ("SELECT " + ", ".join(f"x{j}" for j in range(count))
            + f" FROM (SELECT * {replicates} FROM (SELECT *, {weight} AS w FROM sk_resp "
            f"WHERE {full}))") if count else None
    key_names = ", ".join(quote_name(key) for key in design_keys(survey.sampling))
    statements = [
        f"CREATE TEMP TABLE sk_resp AS SELECT r, count(DISTINCT f) AS files, "
        f"count(*) FILTER (WHERE wide) AS wide_rows, count(DISTINCT g) AS groups, "
        f"any_value(g) AS g, bool_or(has_null) AS has_null, {per_value} "
        f"FROM ({respondent_rows}) GROUP BY r",
        f"CREATE TEMP TABLE sk_ans AS SELECT r, qi, count(*) AS k, any_value(a) AS a, "
        f"any_value(f) AS f FROM ({answer_rows}) "
        f"WHERE a IS NULL OR qi < 0 OR sk_strip(a) <> '' GROUP BY r, qi",
    ]
    checks = f"""
SELECT
  (SELECT count(*) FROM sk_resp WHERE has_null OR r IS NULL OR r = '' OR sk_strip(r) <> r
      OR length(r) > {RESPONDENT_ID_LENGTH} OR files > 1 OR wide_rows > 1 OR groups > 1
      OR {several} OR NOT (({full}) OR ({none})) OR {bad}),
  (SELECT count(*) FROM sk_ans LEFT JOIN sk_resp USING (r)
      WHERE sk_ans.a IS NULL OR sk_ans.qi < 0 OR sk_ans.k > 1 OR sk_resp.r IS NULL
      OR NOT ({all_given('sk_resp.')})),
  (SELECT count(*) FROM sk_resp WHERE {full})
"""
    cells = f"""
SELECT qs.qi, sk_ans.f, {', '.join(keys) + ', ' if keys else ''}resp.g, sk_ans.a,
       fsum(w) AS weight, count(*) AS n, fsum(w * w) AS weight2, min(w) AS min_weight
       {replicate_sums}
FROM (SELECT * {replicates} FROM (SELECT *, {weight} AS w FROM sk_resp WHERE {full}))
     AS resp
CROSS JOIN (SELECT unnest(range({len(survey.questions)})) AS qi) AS qs
LEFT JOIN sk_ans ON sk_ans.r = resp.r AND sk_ans.qi = qs.qi
GROUP BY qs.qi, sk_ans.f, {key_names + ', ' if keys else ''}resp.g, sk_ans.a
"""
    try:
        for statement in statements:
            con.execute(statement)
        bad_respondents, bad_answers, respondents = con.execute(checks).fetchone()
        if bad_respondents or bad_answers or not respondents:
            return None
        files = {f for (f,) in con.execute("SELECT DISTINCT f FROM (SELECT f FROM ("
                                           f"{respondent_rows}))").fetchall()}
        if len(files) != len(sources):
            return None  # a file without data rows: an error the importer says
        table = con.execute(cells).df()
        products = _gram(con.execute(gram), count) if gram else None
    except duckdb.Error:
        return None  # the importer reads the file row by row and says where
    finally:
        con.execute("DROP TABLE IF EXISTS sk_resp")
        con.execute("DROP TABLE IF EXISTS sk_ans")
    return RawCells(cells=table, gram=products)


#: DuckDB vectors (2,048 rows each) per batch of the Gram matrix's sum (memory: about
#: 100,000 respondents times R doubles).
_GRAM_BATCH = 50


def _gram(result, size: int):
    """sum over the rows of ``result`` (``size`` numbers each) of x x', by batches of rows
    (X'X of each batch, as Dask's ``matrix.T @ matrix``), so memory stays bounded."""
    import numpy as np

    gram = np.zeros((size, size))
    while len(batch := result.fetch_df_chunk(_GRAM_BATCH)):
        rows = batch.to_numpy(dtype=float)
        gram += rows.T @ rows
    return gram


# -- from raw cells to the weighted table ---------------------------------------------------

def cells_from_raw(survey: Survey, sources: Sequence[ResponseSource], found: RawCells,
                   columns: DesignColumns) -> pd.DataFrame | None:
    """The weighted table of :func:`surveykit.store.design_values.weighted_cells` (plus,
    with the producer's replicate weights, ``rep1`` ... ``repR``, the sums of their analysis
    weights, and ``replicate_df``, survey's degrees of freedom: the rank of the
    respondents' replicate weights - 1) from an engine's raw cells, each cell read by the
    importer's rules; None when a cell does not read, or the cells make no sampling design
    (the importer then says where)."""
    import pandas as pd

    raw = found.cells

    sampling = survey.sampling
    keys = design_keys(sampling)
    lookup = group_lookup(survey)
    one_group = len(survey.groups) == 1
    spellings = [question.answer_spellings() for question in survey.questions]
    readers = [number_reader(question) if question.numeric else None
               for question in survey.questions]
    responses, groups = [], []
    for qi, f, g, a in zip(raw["qi"], raw["f"], raw["g"], raw["a"], strict=True):
        label = group = None
        if a is not None and not (isinstance(a, float) and math.isnan(a)):
            missing = sources[int(f)].missing_labels
            if missing and canonical_spelling(a) in missing:
                return None  # "no answer": the importer keeps the respondent's other cells
            label = read_answer(spellings[int(qi)], a)
            if label is None and readers[int(qi)] is not None:
                label, _ = readers[int(qi)].read(a)
            if label is None:
                return None
            group = read_group(lookup, g)
            if group is NOT_A_GROUP:
                return None
            if group is None:
                if not one_group:
                    return None
                group = 1
        responses.append(label)
        groups.append(group)
    replicate_columns = [f"rep{j + 1}" for j in range(len(columns.replicates))]
    sums = ["weight", "n", *([] if sampling.clusters else ["weight2"]), *replicate_columns]
    table = pd.DataFrame({
        "question": [survey.questions[int(qi)].id for qi in raw["qi"]],
        **{key: raw[key].tolist() for key in keys},
        "group": pd.Series(groups, dtype=object), "response": pd.Series(responses, dtype=object),
        **{column: raw[column].to_numpy() for column in sums}})
    if (raw["min_weight"] <= 0).any():
        return None
    table = table.groupby(["question", *keys, "group", "response"], sort=True, dropna=False,
                          as_index=False)[sums].sum()
    table["n"] = table["n"].astype("int64")
    table["group"] = pd.Series([None if pd.isna(g) else int(g) for g in table["group"]],
                               dtype=object)
    table["response"] = pd.Series([None if pd.isna(r) else r for r in table["response"]],
                                  dtype=object)
    first = table[table["question"] == survey.questions[0].id]
    try:  # the design over the respondents: every respondent is a cell of every question
        WeightedCounts.from_table(first.drop(columns="question").assign(response=None),
                                  sampling)
    except ParameterError:
        return None  # a PSU in two strata, a lonely PSU, an fpc: the importer says where
    if found.gram is not None:
        table["replicate_df"] = gram_rank(found.gram) - 1
    return table


def weighted_file_cells(survey: Survey, paths: Sequence[Path], *, engine: str = "duckdb",
                        scheduler: str | None = None) -> pd.DataFrame | None:
    """The weighted table of the files at ``paths`` (read as ``surveykit import`` reads
    them) for survey ``survey`` (with ``[sampling]``), by one GROUP BY of ``engine``
    (duckdb, or dask on the cluster at ``scheduler``); None when the files must be read
    row by row (see the module docstring). The files' own errors (a file that is not a
    response file, a header without a respondent id) are raised as on import."""
    with open_sources(paths, survey) as sources:
        columns = design_columns(survey, sources)
        if columns is None:
            return None
        if engine == "dask":
            if any(source.written_here for source in sources):
                return None  # the workers could not see the CSV written here
            raw = dask_engine.weighted_raw_cells(sources, survey, columns, scheduler)
        else:
            with duckdb_engine.connect() as con:
                raw = duckdb_raw_cells(con, sources, survey, columns)
        if raw is None:
            return None
        return cells_from_raw(survey, sources, raw, columns)
