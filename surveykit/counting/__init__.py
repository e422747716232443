"""Counting response files where they lie: CSV, workbooks and Parquet, with DuckDB or Dask.

Estimation needs only counts per (question, group, response), so files need
not be imported to be analyzed: :func:`count_files` reads them through the
importer's reader (:mod:`surveykit.reading`: the same kinds, mapping, rules
and errors, with file and line) and returns what
:func:`surveykit.store.count_responses` returns for the same answers imported.
Counts tables made anywhere (a warehouse, Spark, BigQuery) are read and
written by :mod:`surveykit.counting.table`. See docs/scale.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from surveykit.errors import MissingExtraError, ParameterError

if TYPE_CHECKING:  # the CLI imports ENGINES at start-up: keep this module light
    from surveykit.counts import QuestionCounts
    from surveykit.definition.survey import Survey
    from surveykit.numeric_counts import NumericQuestionCounts

__all__ = ["ENGINES", "IssuedIds", "count_files"]

ENGINES = ("duckdb", "dask")


@dataclass(frozen=True)
class IssuedIds:
    """A survey's issued questionnaire ids, as counting needs them.

    ``check(ids)`` returns the issued ids among ``ids`` with their group
    numbers (None when issued without one): the importer's check, for the
    row-by-row path. ``batches()`` yields every issued (id, group) in lists,
    for DuckDB to join (None: only ``check``, so files are counted row by row).
    """

    check: Callable[[set[str]], Mapping[str, int | None]]
    batches: Callable[[], Iterator[Sequence[tuple[str, int | None]]]] | None = None


def count_files(survey: Survey, data: Sequence[str | Path], *, engine: str = "duckdb",
                scheduler: str | None = None, replace: bool = False,
                issued: IssuedIds | None = None, decimal_comma: bool = False
                ) -> list[QuestionCounts | NumericQuestionCounts]:
    """Counts per question (in survey order) of the answers in ``data``, without importing.

    ``data``: files, globs and directories of response files, read as
    ``surveykit import`` reads them (CSV, workbooks, zipped exports and
    Parquet, told by their content; long or wide; the survey's ``[import]``
    profile, group paths and tools' metadata columns). The files count as if
    imported one after the other into an empty survey: a bad row raises
    :class:`~surveykit.errors.CsvImportError` naming the file and its lines, a
    respondent answering a question in two files is a conflict unless
    ``replace`` (the later file wins). ``missing`` counts respondents who
    answered some question but not this one, as the store does.
    ``issued``: the survey's issued ids, when it issued questionnaires: only
    they are accepted, and they give answers their group, as on import (Dask
    leaves such files, and workbooks and zips, to the row-by-row path).
    ``engine`` "dask" runs the counting on the cluster at ``scheduler`` (an
    address such as ``tcp://10.0.0.5:8786``), or on local threads without one.
    ``decimal_comma``: the CSV files write numeric answers with a decimal comma (as
    ``import --decimal-comma``). Numeric questions get
    :class:`~surveykit.numeric_counts.NumericQuestionCounts`.

    >>> # count_files(survey, ["exports/*.parquet"], engine="dask",
    >>> #             scheduler="tcp://scheduler:8786")
    """
    # a lazy loader (docs/architecture.md): the CLI imports this package at start-up
    # (ENGINES); the readers and the engines (DuckDB's, Dask's) load only when files are counted
    from surveykit.counting import duckdb_engine
    from surveykit.counting.exact import count_exactly
    from surveykit.counting.sources import expand_paths, open_sources
    from surveykit.counting.tally import counts_from_tally

    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r} must be one of {', '.join(ENGINES)}")
    if scheduler is not None and engine != "dask":
        raise ParameterError(f"scheduler ({scheduler!r}) is only used with engine 'dask'")
    paths = expand_paths(data)
    if decimal_comma:
        from surveykit.reading.responses import check_decimal_comma
        from surveykit.reading.spreadsheets import SNIFF_BYTES, sniff

        for path in paths:
            with open(path, "rb") as head:
                check_decimal_comma(path, sniff(head.read(SNIFF_BYTES))[0])
    _require("duckdb", "duckdb")
    _require("pyarrow", "duckdb")
    with open_sources(paths, survey) as sources, duckdb_engine.connect() as con:
        tally = None
        if any(source.exact_only for source in sources):
            pass  # what only the row-by-row path reads as import does (sources.py says what)
        elif engine == "dask" and issued is None and not any(source.written_here
                                                             for source in sources):
            from surveykit.counting import dask_engine

            tally = dask_engine.fast_tally(sources, survey, scheduler)
        elif engine == "duckdb" and (issued is None or issued.batches is not None):
            if issued is not None:
                duckdb_engine.load_issued(con, issued.batches())
            tally = duckdb_engine.fast_tally(con, sources, survey,
                                             issued=issued is not None)
        counts = None
        if tally is not None:
            counts = counts_from_tally(survey, sources, tally, decimal_comma=decimal_comma)
        if counts is None:
            counts = count_exactly(con, sources, survey, replace=replace,
                                   check_respondents=issued.check if issued else None,
                                   decimal_comma=decimal_comma)
    return counts


def _require(module: str, extra: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise MissingExtraError(f"counting files needs {module}: pip install "
                             f"'surveykit[{extra}]'") from None
