"""Weighted counts from respondent rows: the design variables checked, the cells summed.

:func:`weighted_counts` reads a data frame with one row per sampled
respondent (the answer, its group, the design variables of a
:class:`~surveykit.sampling.design.SamplingDesign`, a domain column) and
returns the :class:`~surveykit.sampling.counts.WeightedCounts` estimation
needs. Every value is checked on the way, and an error names the column, the
row (1-based, in the frame's order) and the value: a missing or non-positive
weight, a missing stratum or cluster, an fpc that is not a number, a PSU that
changes stratum, a stratum with one PSU under ``lonely_psu = "fail"``.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from surveykit.designs.base import Design
from surveykit.errors import ParameterError
from surveykit.estimation.answers import code_answers, value_text
from surveykit.sampling.counts import (
    UNANSWERED,
    WeightedCounts,
    first_moved,
    first_parent,
    population_sizes,
    units_within,
)
from surveykit.sampling.design import SamplingDesign

__all__ = ["DesignRows", "cell_counts", "design_rows", "weighted_counts", "weights_from_design"]


@dataclass(frozen=True, eq=False)
class DesignRows:
    """The design values of every row, checked: weights, strata, units of each stage,
    population sizes per stage, replicate weights (analysis weights)."""

    sampling: SamplingDesign
    weight: np.ndarray
    strata: list[str]
    stratum: np.ndarray
    units: np.ndarray | None
    unit_labels: tuple[tuple[str, ...], ...] | None
    population: np.ndarray
    replicates: np.ndarray | None

    @property
    def counts(self) -> WeightedCounts:
        """One cell per row (no answers): the design's structure for values given per row,
        as regression's influence values are."""
        n = self.weight.size
        return WeightedCounts(
            sampling=self.sampling, responses=("answer",), groups=("1",),
            strata=tuple(self.strata), domains=None, stratum=self.stratum, units=self.units,
            population=self.population, domain=None, group=np.zeros(n, dtype=np.intp),
            response=np.full(n, UNANSWERED, dtype=np.intp), weight=self.weight,
            count=np.ones(n, dtype=np.int64),
            weight_squares=None if self.units is not None else self.weight ** 2,
            replicates=self.replicates, unit_labels=self.unit_labels,
            replicate_rank=None if self.replicates is None else int(
                np.linalg.matrix_rank(self.replicates, tol=1e-5)))


def design_rows(data: pd.DataFrame, sampling: SamplingDesign, *,
                keep_respondents: bool = False,
                row_names: Callable[[int], str] | None = None) -> DesignRows:
    """The design columns of ``data`` read and checked, one value per row (see
    :func:`weighted_counts` for the rules); ``keep_respondents`` makes every respondent a
    unit when the design has no clusters. ``row_names(i)`` says where row i came from in
    error messages (an import names its line; default "row i+1")."""
    where = row_names or _row
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    if not isinstance(sampling, SamplingDesign):
        raise ParameterError("sampling must be a SamplingDesign")
    columns = [str(c) for c in data.columns]
    replicate_columns: tuple[str, ...] = ()
    if sampling.replicate_weights is not None:
        replicate_columns = sampling.replicate_weights.resolve(columns)
    for name, column in [("weight", sampling.weight), ("strata", sampling.strata),
                         *[("clusters", c) for c in sampling.clusters],
                         *[("fpc", c) for c in sampling.fpc]]:
        if column is not None and column not in columns:
            raise ParameterError(f"{name} column {column!r} is not in the data; the columns "
                                 f"are {', '.join(columns[:30])}")
    n = len(data)
    if n == 0:
        raise ParameterError("the data have no rows")
    weight = np.ones(n) if sampling.weight is None else _numbers(data[sampling.weight],
                                                                 sampling.weight, where=where)
    if sampling.weight is None and sampling.population is not None:
        weight = np.full(n, sampling.population / n)
    stratum_labels, stratum = ((["1"], np.zeros(n, dtype=np.intp)) if sampling.strata is None
                               else _labels(data[sampling.strata], sampling.strata,
                                           where=where))
    units = unit_labels = None
    if sampling.clusters or keep_respondents:
        stage_columns = sampling.clusters or (None,)
        codes, labels = [], []
        parent = stratum
        parent_name = sampling.strata
        for column in stage_columns:
            if column is None:
                values, code = [str(i + 1) for i in range(n)], np.arange(n, dtype=np.intp)
            else:
                values, code = _labels(data[column], column, parent if sampling.nest else None,
                                       where=where)
                _check_nested(code, parent, column, parent_name, values, sampling.nest,
                              where=where)
            codes.append(code)
            labels.append(tuple(values))
            parent, parent_name = code, column
        units = np.stack(codes, axis=1)
        unit_labels = tuple(labels)
    population = np.full((n, sampling.stages), math.inf)
    # without a weight column the fpc gives the weights, as survey's svydesign: the product over
    # the stages of population / sampled
    from_fpc = np.ones(n)
    for k, column in enumerate(sampling.fpc):
        values = _numbers(data[column], column, where=where)
        parent = stratum if k == 0 else units[:, k - 1]
        sampled = np.bincount(parent).astype(float) if units is None else \
            units_within(units[:, k], parent)
        population[:, k] = population_sizes(values, sampled[parent], column)
        _check_constant(population[:, k], parent, column, values, where=where)
        from_fpc *= population[:, k] / sampled[parent]
    if sampling.weight is None and sampling.fpc:
        weight = from_fpc
    replicates = None
    if replicate_columns:
        replicates = np.stack([_numbers(data[c], c, positive=False, where=where)
                               for c in replicate_columns],
                              axis=1)
        if not sampling.replicate_weights.combined:
            replicates = replicates * weight[:, None]
    return DesignRows(sampling=sampling, weight=weight, strata=stratum_labels, stratum=stratum,
                      units=units, unit_labels=unit_labels, population=population,
                      replicates=replicates)


def weighted_counts(data: pd.DataFrame, sampling: SamplingDesign, *, design: Design,
                    answer: str, group: str | None = None, domain: str | None = None,
                    keep_respondents: bool = False) -> WeightedCounts:
    """The weighted counts of column ``answer`` under ``design``, from one row per respondent.

    Empty answers keep their respondent's PSU in the design (survey's subsets
    do the same). Without a weight column every respondent weighs 1, or the
    product over the stages of population / sampled when the design has an
    fpc (survey's ``svydesign`` does the same), or N/n with ``population``.
    Without clusters every respondent is a PSU and the cells are per stratum
    with sums of squared weights, unless ``keep_respondents`` (replicates made
    from the PSUs, jackknife or bootstrap, need the respondents' cells).

    >>> from surveykit.designs import Warner
    >>> frame = pd.DataFrame({"answer": ["yes", "no", "yes", None], "w": [2.0, 1.0, 1.0, 3.0],
    ...                       "stratum": ["a", "a", "b", "b"]})
    >>> counts = weighted_counts(frame, SamplingDesign(weight="w", strata="stratum"),
    ...                          design=Warner(p=0.7), answer="answer")
    >>> counts.table().tolist(), counts.n
    ([[3.0, 1.0, 0.0]], 3)
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    columns = [str(c) for c in data.columns]
    for name, column in (("answer", answer), ("group", group), ("domain", domain)):
        if column is not None and column not in columns:
            raise ParameterError(f"{name} column {column!r} is not in the data; the columns "
                                 f"are {', '.join(columns[:30])}")
    rows_design = design_rows(data, sampling, keep_respondents=keep_respondents)
    n = len(data)
    domain_labels = domain_codes = None
    if domain is not None:
        domain_labels, domain_codes = _labels(data[domain], domain)
    answers = data[answer]
    present = answers.notna().to_numpy() & ~answers.map(
        lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    group_values = None if group is None else data[group]
    if group_values is not None:
        missing = present & group_values.isna().to_numpy()
        if np.any(missing):
            i = int(np.argmax(missing))
            raise ParameterError(f"group column {group!r}, row {i + 1}: the respondent "
                                 "answered but has no group")
    rows = code_answers(design, answers[present],
                        None if group_values is None else group_values[present],
                        column=answer, group_column=group or "group")
    response = np.full(n, UNANSWERED, dtype=np.intp)
    group_codes = np.zeros(n, dtype=np.intp)
    answered = np.flatnonzero(present)[rows.kept]
    response[answered] = rows.responses
    group_codes[answered] = rows.groups
    r = rows_design
    counts = _cells(sampling, design.response_labels, rows.group_labels, r.strata, r.stratum,
                    r.units, r.unit_labels, r.population, domain_labels, domain_codes,
                    group_codes, response, r.weight, r.replicates)
    if r.replicates is None:
        return counts
    # survey's degf: the rank of the respondents' replicate weights (qr with tol 1e-5) - 1
    rank = int(np.linalg.matrix_rank(r.replicates, tol=1e-5))
    return dataclasses.replace(counts, replicate_rank=rank)


def cell_counts(table: pd.DataFrame, sampling: SamplingDesign, *, design: Design,
                grouped: bool = False, name: str = "counts table") -> WeightedCounts:
    """The weighted counts of one question from its cells: a table in the warehouse format of
    :meth:`WeightedCounts.from_table` (``response`` may use any spelling of an answer, and
    ``group`` the group numbers or names; both empty for respondents without an answer),
    as :func:`surveykit.store.design_values.weighted_cells` or a warehouse's GROUP BY makes
    it. The answers are read as :func:`weighted_counts` reads a respondent's: an answer the
    design never gives is an error, except "don't know" where the design has no such branch
    (the respondent keeps their PSU, without an answer). ``grouped``: the design has
    several groups and ``group`` says which. Without a weight column ``weight`` counts the
    respondents, and the weights are those of :func:`weighted_counts` (N / n with
    ``population``, population / sampled per stage with an fpc).

    >>> from surveykit.designs import Warner
    >>> table = pd.DataFrame({"stratum": ["a", "a", "b", "b"], "response": ["yes", "no", "1", None],
    ...                       "weight": [2.0, 1.0, 1.0, 3.0], "n": [1, 1, 1, 1],
    ...                       "weight2": [4.0, 1.0, 1.0, 9.0]})
    >>> counts = cell_counts(table, SamplingDesign(weight="w", strata="stratum"),
    ...                      design=Warner(p=0.7))
    >>> counts.table().tolist(), counts.n
    ([[3.0, 1.0, 0.0]], 3)
    """
    if "response" not in table.columns:
        raise ParameterError(f"{name}: column 'response' is missing")
    table = table.reset_index(drop=True)
    answers = table["response"]
    present = answers.notna().to_numpy() & ~answers.map(
        lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    groups = None
    if grouped:
        if "group" not in table.columns:
            raise ParameterError(f"{name}: design {design.model!r} has several groups: give "
                                 "the column 'group'")
        groups = table["group"][present]
        if groups.isna().any():
            raise ParameterError(f"{name}: a cell with an answer has no group")
    rows = code_answers(design, answers[present], groups, column="response",
                        group_column="group")
    labels = design.response_labels
    response = np.full(len(table), None, dtype=object)
    group = np.full(len(table), rows.group_labels[0], dtype=object)
    answered = np.flatnonzero(present)[rows.kept]
    response[answered] = [labels[code] for code in rows.responses]
    group[answered] = [rows.group_labels[code] for code in rows.groups]
    cells = table.assign(response=response, group=group)
    if sampling.weight is None:
        cells = weights_from_design(cells, sampling)
    return WeightedCounts.from_table(cells, sampling, responses=labels,
                                     groups=rows.group_labels)


def weights_from_design(cells: pd.DataFrame, sampling: SamplingDesign) -> pd.DataFrame:
    """Cells whose ``weight`` counts respondents, weighted as :func:`design_rows` weighs a
    respondent without a weight column: 1, N / n with ``population``, or the product over
    the stages of population / sampled with an fpc."""
    count = pd.to_numeric(cells["n"]).to_numpy(dtype=float)
    each = np.ones(len(cells))
    if sampling.population is not None:
        each = np.full(len(cells), sampling.population / count.sum())
    if sampling.fpc:
        shape = WeightedCounts.from_table(cells.assign(response=None, weight=count,
                                                       weight2=count),
                                          sampling)
        each = np.ones(len(cells))
        for stage in range(sampling.stages):
            parent = shape.stratum if stage == 0 else shape.units[:, stage - 1]
            each *= shape.population[:, stage] / shape.sampled_units(stage)[parent]
    out = cells.assign(weight=count * each)
    if "weight2" in cells.columns or not sampling.clusters:
        out["weight2"] = count * each * each
    return out


def _cells(sampling, responses, groups, strata, stratum, units, unit_labels, population,
           domains, domain, group, response, weight, replicates) -> WeightedCounts:
    """Sum the rows into cells (one per distinct key)."""
    keys = [stratum[:, None]]
    if units is not None:
        keys.append(units)
    if domain is not None:
        keys.append(domain[:, None])
    keys += [group[:, None], response[:, None]]
    key = np.concatenate(keys, axis=1)
    unique, index = np.unique(key, axis=0, return_inverse=True)
    index = index.ravel()
    cells = unique.shape[0]
    first = np.full(cells, -1, dtype=np.intp)
    first[index[::-1]] = np.arange(index.size)[::-1]

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(index, weights=values, minlength=cells)

    replicate_sums = None
    if replicates is not None:
        replicate_sums = np.stack([total(replicates[:, r]) for r in range(replicates.shape[1])],
                                  axis=1)
    return WeightedCounts(
        sampling=sampling, responses=tuple(responses), groups=tuple(groups),
        strata=tuple(strata), domains=None if domains is None else tuple(domains),
        stratum=stratum[first], units=None if units is None else units[first],
        population=population[first], domain=None if domain is None else domain[first],
        group=group[first], response=response[first], weight=total(weight),
        count=np.bincount(index, minlength=cells).astype(np.int64),
        weight_squares=total(weight * weight) if units is None else None,
        replicates=replicate_sums, unit_labels=unit_labels)


def _row(i: int) -> str:
    return f"row {i + 1}"


def _numbers(series: pd.Series, column: str, positive: bool = True,
             where: Callable[[int], str] = _row) -> np.ndarray:
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numbers) | ((numbers <= 0) if positive else (numbers < 0))
    if np.any(bad):
        i = int(np.argmax(bad))
        raw = series.iloc[i]
        text = "" if raw is None or (isinstance(raw, float) and math.isnan(raw)) \
            else value_text(raw)
        if not text.strip():
            problem = "is empty"
        elif not math.isfinite(numbers[i]):
            problem = f"holds {text!r}, not a number"
        else:
            problem = f"holds {text}, which is not " + ("positive" if positive else ">= 0")
        what = "a weight" if positive else "a replicate weight"
        raise ParameterError(f"column {column!r}, {where(i)}: {problem}; every respondent "
                             f"needs {what} " + ("above 0" if positive else "of 0 or more"))
    return numbers


def _labels(series: pd.Series, column: str, parent: np.ndarray | None = None,
            where: Callable[[int], str] = _row) -> tuple[list[str], np.ndarray]:
    """Text labels and codes of a design column (codes within ``parent`` when nested)."""
    missing = series.isna().to_numpy() | series.map(
        lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    if np.any(missing):
        i = int(np.argmax(missing))
        raise ParameterError(f"column {column!r}, {where(i)} is empty; every respondent needs "
                             "a value of each design column")
    texts = [value_text(v).strip() for v in series]
    keys = texts if parent is None else list(zip(parent.tolist(), texts, strict=True))
    index: dict[object, int] = {}
    codes = np.empty(len(keys), dtype=np.intp)
    for i, key in enumerate(keys):
        codes[i] = index.setdefault(key, len(index))
    labels = [key if parent is None else key[1] for key in index]
    return labels, codes


def _check_nested(code: np.ndarray, parent: np.ndarray, column: str, parent_column: str | None,
                  labels: list[str], nest: bool, where: Callable[[int], str] = _row) -> None:
    """A cluster lies in one stratum (or one cluster of the stage above)."""
    if nest or parent_column is None:
        return
    i, _ = first_moved(code, parent)
    if i is not None:
        first_row = first_parent(code, np.arange(code.size))
        raise ParameterError(
            f"column {column!r}, {where(i)}: cluster {labels[code[i]]!r} is in a second "
            f"{'stratum' if parent_column else 'cluster'} (column {parent_column!r}; "
            f"{where(int(first_row[code[i]]))} has another): a cluster lies within one, or set "
            "nest = true if identifiers repeat across them")


def _check_constant(population: np.ndarray, parent: np.ndarray, column: str,
                    values: np.ndarray, where: Callable[[int], str] = _row) -> None:
    """One fpc per stratum (or cluster of the stage above): the first row that differs from
    its parent's first row is named, with both values."""
    reference = first_parent(parent, np.arange(parent.size))[parent]
    differs = ~np.isclose(population, population[reference], rtol=1e-12)
    if np.any(differs):
        i = int(np.argmax(differs))
        raise ParameterError(
            f"column {column!r}, {where(i)}: the fpc ({values[i]:g}) differs from "
            f"{where(int(reference[i]))}'s ({values[reference[i]]:g}) of the same stratum (or "
            "cluster); it is one value for all units drawn together")
