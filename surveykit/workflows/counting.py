"""Counting joined to the store: the survey's definition and issued ids come from the database,
the counts from files or a counts table, and reports from both.

>>> # survey, counts = count_survey_files(open_engine(), "academic_integrity", ["wave*.csv"])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Engine, select

from surveykit.counting import ENGINES, IssuedIds, count_files
from surveykit.counting.sources import expand_paths
from surveykit.counting.table import read_counts_file, survey_of_counts_file
from surveykit.counting.weighted_files import weighted_file_cells
from surveykit.counting.weighted_table import replicate_column
from surveykit.counts import QuestionCounts
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError, printable
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.reporting.report import build_report
from surveykit.sampling.counts import design_keys
from surveykit.sampling.rows import design_rows, weights_from_design
from surveykit.store import database as store
from surveykit.store.design_values import sampling_frame, weighted_cells
from surveykit.store.importer import import_responses
from surveykit.store.schema import scratch_sqlite
from surveykit.workflows.report import numeric_sections

__all__ = ["count_survey_files", "counts_file_survey", "report_for_counts_file",
           "report_for_files", "weighted_cells_of_files", "weighted_cells_of_store"]

# Issued ids are read from the store this many at a time.
_BATCH = 50_000


def count_survey_files(engine: Engine, survey_name: str, data: Sequence[str | Path], *,
                       engine_name: str = "duckdb", scheduler: str | None = None,
                       replace: bool = False, decimal_comma: bool = False
                       ) -> tuple[Survey, list[QuestionCounts]]:
    """The stored survey and the counts of its answers in ``data`` (nothing is imported).

    When the survey has issued questionnaires, ids are checked against them
    (and give answers their group) as an import would.
    """
    survey = store.load_survey(engine, survey_name)
    with engine.connect() as conn:
        key = store.survey_id(conn, survey.name)
        issued = None
        if store.issued_count(conn, key):
            def check(ids: set[str]) -> dict[str, int | None]:
                return store.issued_groups(conn, key, list(ids))

            def batches():
                with engine.connect() as reader:
                    result = reader.execution_options(yield_per=_BATCH).execute(
                        select(store.respondents.c.respondent_id,
                               store.respondents.c.group_number)
                        .where(store.respondents.c.survey_id == key))
                    for partition in result.partitions():
                        yield [tuple(row) for row in partition]

            issued = IssuedIds(check=check, batches=batches)
        counts = count_files(survey, data, engine=engine_name, scheduler=scheduler,
                             replace=replace, issued=issued, decimal_comma=decimal_comma)
    return survey, counts


def counts_file_survey(engine: Engine, path: str | Path,
                       survey_name: str | None = None) -> tuple[Survey, list[QuestionCounts]]:
    """The stored survey a counts file names (or ``survey_name``) and the file's counts."""
    survey = store.load_survey(engine, survey_name or survey_of_counts_file(path))
    return survey, read_counts_file(path, survey)


def _report(engine: Engine, survey: Survey, counts, level: float, method: str | None):
    issued = store.issued_respondent_count(engine, survey.name)
    tallies = store.code_tallies(engine, survey.name) if issued else None
    # numeric questions: their sums (files and counts tables carry no answers to plot)
    numeric = numeric_sections(survey, [c for c in counts if isinstance(c, NumericQuestionCounts)],
                               level=level)
    return build_report(survey, [c for c in counts if not isinstance(c, NumericQuestionCounts)],
                        code_tallies=tallies, issued=issued, level=level, method=method,
                        numeric=numeric)


def report_for_files(engine: Engine, survey_name: str, data: Sequence[str | Path], *,
                     engine_name: str = "duckdb", scheduler: str | None = None,
                     replace: bool = False, level: float = 0.95, method: str | None = None,
                     decimal_comma: bool = False):
    """The report of a stored survey from the answers in ``data``, counted without importing."""
    survey, counts = count_survey_files(engine, survey_name, data, engine_name=engine_name,
                                        scheduler=scheduler, replace=replace,
                                        decimal_comma=decimal_comma)
    return _report(engine, survey, counts, level, method)


def report_for_counts_file(engine: Engine, path: str | Path, survey_name: str | None = None, *,
                           level: float = 0.95, method: str | None = None):
    """The report of a stored survey from a counts table made anywhere."""
    survey, counts = counts_file_survey(engine, path, survey_name)
    return _report(engine, survey, counts, level, method)


def weighted_cells_of_store(engine: Engine, survey_name: str):
    """Survey ``survey_name`` (with ``[sampling]``) and its weighted cells from the store
    (:func:`surveykit.store.design_values.weighted_cells`: one GROUP BY), for a weighted
    counts table; with the producer's replicate weights, their sums per cell (``rep1`` ...)
    and ``replicate_df``, as ``counts --data`` gives them, so that ``report --counts-file
    --variance replicates`` can use them. Stored values that are no clean design are
    refused as the report refuses them, naming the respondent."""
    read = weighted_cells(engine, survey_name)
    if read is None:
        survey, frame = sampling_frame(engine, survey_name)
        ids = frame["respondent_id"]
        rows = design_rows(frame, survey.sampling,
                           row_names=lambda i: f"respondent {printable(repr(ids.iloc[i]))}")
        rows.counts  # noqa: B018 -- names the respondent
        raise ParameterError(f"survey {survey_name!r}: the stored design values are not a "
                             "sampling design; 'surveykit check' lists what was changed")
    survey, table = read
    return survey, _replicate_factors_weighted(survey, table)


def _replicate_factors_weighted(survey: Survey, table):
    """The cells with replicate factors (``replicate_combined = false``) and no weight
    column: a respondent's replicate analysis weights are its factors times the weight the
    design gives it (N / n with ``population``, the product over the stages of population /
    sampled with an fpc: :func:`surveykit.sampling.rows.design_rows`), where the GROUP BYs
    over the store and the files sum the factors times 1. That weight is one per cell (the
    cell's keys are its stratum, units and fpc), so each cell's sums are multiplied by it
    (:func:`surveykit.sampling.rows.weights_from_design`, as the report weighs the cells).
    Other tables are returned as they are."""
    sampling = survey.sampling
    replicates = sampling.replicate_weights
    if replicates is None or replicates.combined or sampling.weight is not None \
            or "rep1" not in table.columns:
        return table
    sums = [column for column in table.columns if replicate_column(column)]
    keys = [*design_keys(sampling), "n"]
    out = table.copy()
    for question in survey.questions:
        mine = (table["question"] == question.id).to_numpy()
        cells = table.loc[mine, keys]
        each = weights_from_design(cells.assign(weight=cells["n"]), sampling)["weight"] \
            .to_numpy(dtype=float) / cells["n"].to_numpy(dtype=float)
        out.loc[mine, sums] = table.loc[mine, sums].to_numpy(dtype=float) * each[:, None]
    return out


def weighted_cells_of_files(engine: Engine, survey_name: str, data: Sequence[str | Path], *,
                            replace: bool = False, engine_name: str = "duckdb",
                            scheduler: str | None = None):
    """Survey ``survey_name`` (with ``[sampling]``) and the weighted cells of the answers and
    design columns in ``data``, nothing imported into the database.

    The cells are one GROUP BY of ``engine_name`` over the files where they lie
    (:func:`surveykit.counting.weighted_files.weighted_file_cells`: DuckDB, or Dask on
    the cluster at ``scheduler``), with the sums of the producer's replicate weights
    (``rep1`` ...). When that finds something off (a bad weight, a PSU that changes
    stratum, a lonely PSU, a bad answer, ...), and when the survey has issued ids, the
    files are imported, one after the other, into a temporary SQLite file (every check and
    message of ``surveykit import``, the design's included, each named by file, line,
    column and value), with the survey's issued ids, and the cells summed there by the
    store's one GROUP BY (:func:`weighted_cells_of_store`, replicate sums included)."""
    import tempfile

    if engine_name not in ENGINES:
        raise ParameterError(f"engine {engine_name!r} must be one of {', '.join(ENGINES)}")
    if scheduler is not None and engine_name != "dask":
        raise ParameterError(f"scheduler ({scheduler!r}) is only used with engine 'dask'")
    survey = store.load_survey(engine, survey_name)
    if survey.sampling is None:
        raise ParameterError(f"survey {survey.name!r} has no [sampling] section")
    paths = expand_paths(data)
    if not store.issued_respondent_count(engine, survey.name):
        table = weighted_file_cells(survey, paths, engine=engine_name, scheduler=scheduler)
        if table is not None:
            return survey, _replicate_factors_weighted(survey, table)
    with tempfile.TemporaryDirectory(prefix="surveykit-weighted-") as folder, \
            store.engine_for(scratch_sqlite(Path(folder) / "counts.db")) as scratch:
        store.add_survey(scratch, survey)
        _copy_issued(engine, scratch, survey.name)
        for path in paths:
            import_responses(scratch, path, survey.name, replace=replace)
        return weighted_cells_of_store(scratch, survey.name)


def _copy_issued(source: Engine, target: Engine, survey_name: str) -> None:
    """The survey's issued ids and groups, so that the files' ids are checked (and get their
    groups) as on import."""
    respondents = store.respondents
    with source.connect() as conn:
        key = store.survey_id(conn, survey_name)
        rows = conn.execute(select(respondents.c.respondent_id, respondents.c.issued_at,
                                   respondents.c.group_number)
                            .where(respondents.c.survey_id == key)).all()
    if not rows:
        return
    with target.begin() as conn:
        key = store.survey_id(conn, survey_name)
        conn.execute(respondents.insert(), [
            {"survey_id": key, "respondent_id": r, "issued_at": at, "group_number": g}
            for r, at, g in rows])
