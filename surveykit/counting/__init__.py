"""Counting response files where they lie: CSV, XLSX and Parquet, with DuckDB or Dask.

Estimation needs only counts per (question, group, response), so files need
not be imported to be analyzed: :func:`count_files` counts them with the
importer's rules (the same errors, with file and line) and returns what
:func:`surveykit.store.count_responses` returns for the same answers imported.
Counts tables made anywhere (a warehouse, Spark, BigQuery) are read and
written by :mod:`surveykit.counting.table`. See docs/scale.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from surveykit.errors import ParameterError

if TYPE_CHECKING:  # the CLI imports ENGINES at start-up: keep this module light
    from surveykit.definition.survey import Survey
    from surveykit.store.database import QuestionCounts

__all__ = ["ENGINES", "count_files"]

ENGINES = ("duckdb", "dask")


def count_files(survey: Survey, data: Sequence[str | Path], *, engine: str = "duckdb",
                scheduler: str | None = None, replace: bool = False,
                check_respondents: Callable[[set[str]], Mapping[str, int | None]] | None = None
                ) -> list[QuestionCounts]:
    """Counts per question (in survey order) of the answers in ``data``, without importing.

    ``data``: files, globs and directories of CSV, XLSX and Parquet response
    files (long or wide, as for ``surveykit import``). The files count as if
    imported one after the other into an empty survey: a bad row raises
    :class:`~surveykit.errors.CsvImportError` naming the file and its lines, a
    respondent answering a question in two files is a conflict unless
    ``replace`` (the later file wins). ``missing`` counts respondents who
    answered some question but not this one, as the store does.
    ``check_respondents(ids)`` returns the issued ids among ``ids`` with their
    groups, for surveys that issued questionnaires (their files are counted
    row by row). ``engine`` "dask" runs the counting on the cluster at
    ``scheduler`` (an address such as ``tcp://10.0.0.5:8786``), or on local
    threads without one.

    >>> # count_files(survey, ["exports/*.parquet"], engine="dask",
    >>> #             scheduler="tcp://scheduler:8786")
    """
    from surveykit.counting import duckdb_engine
    from surveykit.counting.exact import count_exactly
    from surveykit.counting.sources import expand_paths, open_sources
    from surveykit.counting.tally import counts_from_tally

    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r} must be one of {', '.join(ENGINES)}")
    if scheduler is not None and engine != "dask":
        raise ParameterError(f"scheduler ({scheduler!r}) is only used with engine 'dask'")
    paths = expand_paths(data)
    _require("duckdb", "duckdb")
    with open_sources(paths, survey) as sources, duckdb_engine.connect() as con:
        counts = None
        if check_respondents is None:
            if engine == "dask":
                from surveykit.counting import dask_engine

                tally = dask_engine.fast_tally(sources, survey, scheduler)
            else:
                tally = duckdb_engine.fast_tally(con, sources, survey)
            if tally is not None:
                counts = counts_from_tally(survey, len(sources), tally,
                                           [source.group is not None for source in sources])
        if counts is None:
            counts = count_exactly(con, sources, survey, replace=replace,
                                   check_respondents=check_respondents)
    return counts


def _require(module: str, extra: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise ParameterError(f"counting files needs {module}: pip install "
                             f"'surveykit[{extra}]'") from None
