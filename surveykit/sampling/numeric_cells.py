"""A numeric question's design-based estimate from weighted sums per PSU cell, not from rows.

Under a complex sample the weighted estimators of a numeric question
(:func:`surveykit.estimation.quantitative.estimate_mean_from_answers`: the Hajek
mean, the Horvitz-Thompson total of the design's unbiased transform, their
linearized variance and the randomization term) need, for a design whose
per-answer transform r = (z - a) / b is affine in the answer z
(``has_transform``), only sums over the answers of each cell (stratum, unit at
each stage, fpc, response): the unit totals of w (alpha + beta z) are
alpha sum w + beta sum w z, and where respondents are the PSUs (no clusters)
the sum of their squares is alpha^2 sum w^2 + 2 alpha beta sum w^2 z + beta^2
sum w^2 z^2. The cells are a table with the design's key columns
(:func:`surveykit.sampling.counts.design_keys`), ``response`` (:data:`NUMBER`
for numbers, "dont_know", empty without an answer), ``n``, ``weight``,
``weight2`` (without clusters) and the sums ``wy``, ``wy2``, ``w2y``,
``w2y2`` (of w z, w z^2, w^2 z, w^2 z^2), as the store keeps them
(:mod:`surveykit.store.kept_cells`) and a warehouse's GROUP BY makes them.

The design's structure is that of the respondents who answered (numbers and
"don't know"), as the rows give it (:func:`surveykit.sampling.rows.design_rows`
over the answered rows): respondents without an answer are left out, weights
made from the fpc count the answering units.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.errors import EstimationError
from surveykit.estimation.quantitative import NumericEstimate, estimate_mean_from_sums
from surveykit.numeric_counts import NumericCounts, NumericSums
from surveykit.sampling.counts import NUMBER, WeightedCounts, design_keys
from surveykit.sampling.design import SamplingDesign
from surveykit.sampling.rows import weights_from_design
from surveykit.sampling.variance import linearized_variance

__all__ = ["DONT_KNOW", "estimate_from_numeric_cells", "numeric_counts_of_cells"]

#: The response of a cell of "don't know" answers.
DONT_KNOW = "dont_know"


def estimate_from_numeric_cells(table: pd.DataFrame, sampling: SamplingDesign,
                                design: QuantitativeDesign, *,
                                randomization_variance: str = "unbiased") -> NumericEstimate:
    """The weighted estimate of one numeric question from its cells (module docstring):
    equal to :func:`~surveykit.estimation.quantitative.estimate_mean_from_answers` with the
    linearized sampling variance over the same respondents' rows.

    >>> from surveykit.designs.quantitative import Eriksson
    >>> cells = pd.DataFrame({  # a: (w 2, z 3), (w 2, z 5) | (w 3, z 8); b: (1, 0) x 2 | dk
    ...     "stratum": ["a", "a", "b", "b"], "response": ["#", "#", "#", "dont_know"],
    ...     "n": [2, 1, 2, 1], "weight": [4.0, 3.0, 2.0, 1.0], "weight2": [8.0, 9.0, 2.0, 1.0],
    ...     "wy": [16.0, 24.0, 0.0, 0.0], "wy2": [68.0, 192.0, 0.0, 0.0],
    ...     "w2y": [32.0, 72.0, 0.0, 0.0], "w2y2": [136.0, 576.0, 0.0, 0.0]})
    >>> e = estimate_from_numeric_cells(cells, SamplingDesign(weight="w", strata="stratum"),
    ...                                 Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8]))
    >>> round(e.mean, 6), e.n, e.dont_know   # (40 / 9 - 1.7) / 0.5
    (5.488889, 5, 1)
    """
    answered = table[table["response"].notna() & (table["response"] != "")].reset_index(
        drop=True)
    if answered.empty:
        raise EstimationError("no numeric answers")
    count = answered["n"].to_numpy(dtype=float)
    each = np.ones(len(answered))
    if sampling.weight is None:  # weights made from the design, over the answering units
        made = weights_from_design(answered.assign(weight=count), sampling)
        each = made["weight"].to_numpy(dtype=float) / count
    weight = answered["weight"].to_numpy(dtype=float) * each
    wy = answered["wy"].to_numpy(dtype=float) * each
    wy2 = answered["wy2"].to_numpy(dtype=float) * each
    number = (answered["response"] == NUMBER).to_numpy()
    keys = {name: answered[name].tolist() for name in design_keys(sampling)}
    structure_table = {**keys, "response": answered["response"].tolist(),
                       "weight": weight.tolist(), "n": answered["n"].tolist()}
    squares = None
    if not sampling.clusters:  # respondents are the PSUs: the sums of squares
        weight2 = answered["weight2"].to_numpy(dtype=float) * each ** 2
        w2y = answered["w2y"].to_numpy(dtype=float) * each ** 2
        w2y2 = answered["w2y2"].to_numpy(dtype=float) * each ** 2
        structure_table["weight2"] = weight2.tolist()
        squares = (weight2, w2y, w2y2)
    structure = WeightedCounts.from_table(structure_table, sampling,
                                          responses=(NUMBER, DONT_KNOW))

    def variance_of(alpha: float, beta: float) -> float:
        """The linearized variance of sum_i w_i (alpha + beta z_i) over the number answers."""
        x = np.where(number, alpha * weight + beta * wy, 0.0)[:, None]
        x_squares = None
        if squares is not None:
            w2, w2z, w2z2 = squares
            x_squares = np.where(number, alpha * alpha * w2 + 2 * alpha * beta * w2z
                                 + beta * beta * w2z2, 0.0)[:, None, None]
        return float(linearized_variance(structure, x, x_squares=x_squares)[0, 0])

    return estimate_mean_from_sums(
        design, answers=int(count[number].sum()), dont_know=int(count[~number].sum()),
        weight=float(weight[number].sum()), weighted_sum=float(wy[number].sum()),
        weighted_squares=float(wy2[number].sum()), variance_of=variance_of,
        with_replacement=not sampling.fpc, randomization_variance=randomization_variance)


def numeric_counts_of_cells(cells: pd.DataFrame) -> NumericCounts:
    """The unweighted counts of one numeric question from its answered cells (``group``,
    ``response`` :data:`NUMBER` or :data:`DONT_KNOW`, ``n``, ``y``, ``y2``): per group the
    numbers, their sum and sum of squares and the "don't know" answers, as the store's
    numeric counts give them from the answers."""
    groups: dict[str, NumericSums] = {}
    for group, mine in cells.groupby("group", sort=True):
        numbers = mine[mine["response"] == NUMBER]
        groups[str(int(group))] = NumericSums(
            int(numbers["n"].sum()), float(numbers["y"].sum()), float(numbers["y2"].sum()),
            int(mine.loc[mine["response"] == DONT_KNOW, "n"].sum()))
    return NumericCounts.from_mapping(groups)
