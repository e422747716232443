"""Design-based variance of a total by Taylor linearization, as ``survey::svyrecvar``.

Given per-cell totals x_c (cells x p) of influence values (the weighted
scores of an estimating equation, already multiplied by the weights), the
variance of sum_c x_c under a stratified multistage design is (Lumley 2010,
*Complex Surveys*, Sec. 2.2 and Appendix C; survey's ``onestrat``,
``onestage`` and ``multistage``)

    V = sum_h (1 - f_h) n_h / (n_h - 1) sum_{j in h} (X_hj - Xbar_h)(X_hj - Xbar_h)'
        + sum_h sum_{j in h} (n_h / N_h) V_hj

with X_hj the total of PSU j in stratum h, Xbar_h their mean, n_h the PSUs
sampled of N_h (f_h = n_h / N_h; f_h = 0 without an fpc, sampling with
replacement), and V_hj the same formula one stage down inside PSU j (its
units are that stage's "PSUs" and the PSU is their only stratum), added only
when every stage has its fpc (survey's rule: without fpc the first stage's
"ultimate cluster" variance is the whole variance). A stratum whose fpc equals
its number of PSUs (f_h = 1, a census) adds nothing at that stage.

A stratum with a single PSU (``lonely_psu``): ``fail`` stops; ``certainty``
and ``remove`` add its centred total, 0; ``adjust`` adds its total's deviation
from 0 (the influence values are centred at the grand mean, so this is the
deviation from the grand mean); ``average`` leaves it out and multiplies the
stage's sum by (strata) / (strata with more than one PSU).

When respondents are the PSUs and cells carry the sums of squared weights
(:class:`~surveykit.sampling.counts.WeightedCounts` without units), the PSU
totals are w_i z_c for respondent i in cell c, and the sum of squares is
sum_c z_c z_c' sum_{i in c} w_i^2: the same formula without the respondents.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import numpy as np

from surveykit.errors import EstimationError
from surveykit.sampling.counts import WeightedCounts

__all__ = ["linearized_variance", "per_unit_values"]

# survey's onestrat: a stage with every sampling fraction this close to 1 adds nothing.
_CENSUS = 1e-7


def linearized_variance(counts: WeightedCounts, x: np.ndarray, *,
                        x_squares: np.ndarray | None = None) -> np.ndarray:
    """The design-based covariance matrix of sum_c x[c] (x: cells x p, weights included).

    ``x_squares`` (cells, p, p) is needed when ``counts`` has no units
    (respondents as PSUs): sum over the cell's respondents of x_i x_i'.

    >>> import numpy as np
    >>> from surveykit.sampling.design import SamplingDesign
    >>> counts = WeightedCounts.from_table(
    ...     {"psu": [1, 2, 3, 4], "response": ["yes", "no", "yes", "no"],
    ...      "weight": [1.0, 1.0, 1.0, 1.0], "n": [1, 1, 1, 1]},
    ...     SamplingDesign(clusters=("psu",)))
    >>> x = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    >>> float(linearized_variance(counts, x)[0, 0])  # 4/3 * sum of squares
    5.333333333333333
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if counts.units is None:
        if x_squares is None:
            raise EstimationError("respondent-level sums of squares are needed when the "
                                  "counts have no PSUs")
        return _element_variance(counts, x, x_squares)
    stages = counts.stages
    population = counts.population
    multistage = stages > 1 and bool(counts.sampling.fpc) and bool(
        np.all(np.isfinite(population)))
    total = np.zeros((x.shape[1], x.shape[1]))
    # factor[c]: the product of the sampling fractions n/N of the stages above the cell's unit
    # at this stage (survey multiplies each later stage's variance, not its values, by them)
    factor = np.ones(x.shape[0])
    for stage in range(stages if multistage else 1):
        parent = counts.stratum if stage == 0 else counts.units[:, stage - 1]
        total += _stage(counts, x, parent, counts.units[:, stage], population[:, stage],
                        factor, stage)
        sampled = counts.sampled_units(stage)[parent]
        factor = factor * sampled / population[:, stage]
    return total


def _stage(counts: WeightedCounts, x: np.ndarray, parent: np.ndarray, unit: np.ndarray,
           population: np.ndarray, factor: np.ndarray, stage: int) -> np.ndarray:
    """One stage: the within-parent variance of unit totals (survey's onestage/onestrat),
    each parent's part multiplied by ``factor`` (per cell, constant within a parent)."""
    units, unit_index = np.unique(unit, return_inverse=True)
    totals = np.zeros((units.size, x.shape[1]))
    np.add.at(totals, unit_index, x)
    unit_parent = np.empty(units.size, dtype=np.intp)
    unit_parent[unit_index] = parent
    unit_population = np.empty(units.size)
    unit_population[unit_index] = population
    parents, parent_index = np.unique(unit_parent, return_inverse=True)
    n = np.bincount(parent_index).astype(float)
    N = np.full(parents.size, np.inf)
    N[parent_index] = unit_population
    multiplier = np.ones(parents.size)
    multiplier[parent_index[unit_index]] = factor
    f = np.where(np.isinf(N), 1.0, (N - n) / np.where(np.isinf(N), 1.0, N))
    return _strata_sum(totals, parent_index, n, f, counts.sampling.lonely_psu, stage,
                       lambda p: counts._parent_name(stage, parents[p]), multiplier)


def _strata_sum(totals: np.ndarray, parent_index: np.ndarray, n: np.ndarray, f: np.ndarray,
                lonely_option: str, stage: int, name, multiplier: np.ndarray) -> np.ndarray:
    """sum over strata of multiplier_h scale_h sum_j (X_hj - Xbar_h)(X_hj - Xbar_h)', with
    survey's lonely-PSU rules and its 'average' rescaling."""
    strata = n.size
    sums = np.zeros((strata, totals.shape[1]))
    np.add.at(sums, parent_index, totals)
    means = sums / n[:, None]
    lonely = n == 1
    census = f < _CENSUS
    if lonely_option == "fail" and np.any(lonely & ~census):
        p = int(np.argmax(lonely & ~census))
        raise EstimationError(
            f"{name(p)} has only one {'PSU' if stage == 0 else 'sampled unit'}"
            + (f" at stage {stage + 1}" if stage else "")
            + "; set lonely_psu to certainty, adjust, average or remove")
    centre = ~(lonely & (lonely_option == "adjust"))
    deviations = totals - np.where(centre[parent_index, None], means[parent_index], 0.0)
    scale = np.where(lonely, f, f * n / np.where(lonely, 1.0, n - 1))
    left_out = lonely & ~census & (lonely_option == "average")
    if stage and np.any(left_out):
        # survey averages over the strata of one call of onestage, which below the first
        # stage is a single cluster: the variance is undefined (NaN) there
        p = int(np.argmax(left_out))
        raise EstimationError(f"{name(p)} has only one sampled unit at stage {stage + 1}; "
                              "lonely_psu = average applies to the first stage only: use "
                              "certainty, adjust or remove")
    scale = np.where(census | left_out, 0.0, scale) * multiplier
    weighted = deviations * np.sqrt(scale[parent_index])[:, None]
    variance = weighted.T @ weighted
    ok = strata - int(left_out.sum())
    if ok == 0:
        raise EstimationError("every stratum has a single PSU: with lonely_psu = average no "
                              "variance can be estimated")
    return variance * strata / ok


def _element_variance(counts: WeightedCounts, x: np.ndarray, x_squares: np.ndarray
                      ) -> np.ndarray:
    """Respondents as PSUs: per stratum, n_h/(n_h - 1) (sum x_i x_i' - n_h xbar xbar') f_h."""
    stratum = counts.stratum
    strata, index = np.unique(stratum, return_inverse=True)
    n = np.bincount(index, weights=counts.count).astype(float)
    population = np.full(strata.size, np.inf)
    population[index] = counts.population[:, 0]
    f = np.where(np.isinf(population), 1.0,
                 (population - n) / np.where(np.isinf(population), 1.0, population))
    p = x.shape[1]
    sums = np.zeros((strata.size, p))
    np.add.at(sums, index, x)
    squares = np.zeros((strata.size, p, p))
    np.add.at(squares, index, x_squares)
    lonely = n == 1
    census = f < _CENSUS
    option = counts.sampling.lonely_psu
    if option == "fail" and np.any(lonely & ~census):
        h = int(np.argmax(lonely & ~census))
        raise EstimationError(f"{counts._parent_name(0, strata[h])} has only one respondent; "
                              "set lonely_psu to certainty, adjust, average or remove")
    # sum_j (X_j - Xbar)(X_j - Xbar)' = sum_j X_j X_j' - n Xbar Xbar'; a lonely stratum under
    # adjust is not centred
    centred = squares - np.einsum("hi,hj->hij", sums, sums) / n[:, None, None]
    adjust = lonely & (option == "adjust")
    centred[adjust] = squares[adjust]
    scale = np.where(lonely, f, f * n / np.where(lonely, 1.0, n - 1))
    left_out = lonely & ~census & (option == "average")
    scale = np.where(census | left_out, 0.0, scale)
    ok = strata.size - int(left_out.sum())
    if ok == 0:
        raise EstimationError("every stratum has a single respondent: with lonely_psu = "
                              "average no variance can be estimated")
    return np.einsum("h,hij->ij", scale, centred) * strata.size / ok


def per_unit_values(counts: WeightedCounts, values: np.ndarray) -> np.ndarray:
    """Cell values summed per first-stage unit: (PSUs, p), PSUs in code order."""
    units, index = np.unique(counts.units[:, 0], return_inverse=True)
    out = np.zeros((units.size,) + values.shape[1:])
    np.add.at(out, index, values)
    return out
