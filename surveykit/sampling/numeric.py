"""A numeric question's mean and total under a complex sample, overall and per domain, with
the linearization or a replicate variance.

The estimators are :mod:`surveykit.estimation.quantitative`'s weighted ones: the Hajek mean
of the answers (solved through the design's group system, so ``mix_unknown``'s two groups
too: mu = sum_g c_g (m_g - a_g), m_g the group's weighted mean) and the total
sum_i w_i r'_i of the design's unbiased transform (N_hat mu_hat where the design has no
per-answer transform). This module supplies their design-based variance:

* **linearization** (default): the influence values (Woodruff's linearization of the
  ratio means; the delta method, here exact because mu is linear in the m_g) totalled per
  PSU within strata, with fpc and lonely-PSU rules
  (:func:`~surveykit.sampling.variance.linearized_variance`, as ``survey::svyrecvar``);
  with an fpc (without replacement) plus the randomization term sum w v'
  (:class:`~surveykit.estimation.quantitative.SamplingVariance`). A design without a
  per-answer randomization variance (``mix_unknown``: it depends on the unrelated
  question's unknown distribution) is given the with-replacement variance (the fpc left
  out), which contains the scrambling's variance and is conservative; a note says so.
* **replicates** (``jackknife``, ``brr``, ``bootstrap``, the producer's ``replicates``):
  the same replicate weights the categorical estimates and the regressions use
  (:func:`~surveykit.sampling.replicates.replicate_weights_for`), the mean and total
  refitted with each, and survey's ``svrVar``
  (:func:`~surveykit.sampling.replicates.replicate_variance`). A replicate's weighted
  answers contain the scrambling too, so no randomization term is added (as svrVar).

**Domains** as ``survey::svyby(~r, ~by, design, svymean)``: the full design is kept and a
respondent outside the domain weighs 0
(:func:`~surveykit.estimation.quantitative.estimate_domains`).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.errors import ParameterError
from surveykit.estimation.quantitative import (
    NumericEstimate,
    SamplingVariance,
    estimate_domains,
    estimate_mean_from_answers,
    numeric_answers,
    weighted_point,
)
from surveykit.sampling.design import VARIANCE_METHODS
from surveykit.sampling.replicates import replicate_variance, replicate_weights_for
from surveykit.sampling.rows import DesignRows
from surveykit.sampling.variance import linearized_variance

__all__ = ["SurveyNumericEstimate", "survey_numeric_estimate"]

#: What the report says when mix_unknown's variance leaves the fpc out.
NO_FPC_NOTE = ("the {model} design's randomization variance depends on the unrelated "
               "question's unknown distribution, so the variance leaves the fpc out "
               "(with replacement): it contains the scrambling's variance and is conservative")


@dataclass(frozen=True, kw_only=True)
class SurveyNumericEstimate:
    """``estimate`` over the whole sample and one estimate per domain (``domains``, by label,
    in the order the labels first appear), with the ``variance_method``
    and the design's degrees of freedom ``df``."""

    estimate: NumericEstimate
    domains: Mapping[str, NumericEstimate] = field(default_factory=dict)
    variance_method: str
    df: int


def survey_numeric_estimate(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray,
                            *, rows: DesignRows,
                            groups: Sequence[object] | np.ndarray | None = None,
                            dont_know: Sequence[bool] | np.ndarray | None = None,
                            domains: Sequence[object] | np.ndarray | None = None,
                            variance: str = "linearization", replicates: int = 500,
                            rng: np.random.Generator | int | None = None,
                            rho: float = 0.0) -> SurveyNumericEstimate:
    """The mean and total of a numeric question under the complex sample ``rows`` (one row
    per respondent: :func:`~surveykit.sampling.rows.design_rows` with
    ``keep_respondents=True``), overall and per value of ``domains`` (None: in no domain),
    with the ``variance`` of :data:`~surveykit.sampling.design.VARIANCE_METHODS`
    (module docstring).

    >>> import pandas as pd
    >>> from surveykit.designs.quantitative import MixNorm
    >>> from surveykit.sampling.design import SamplingDesign
    >>> from surveykit.sampling.rows import design_rows
    >>> frame = pd.DataFrame({"psu": [1, 1, 2, 2, 3, 3], "w": [2.0, 2, 1, 1, 3, 3]})
    >>> rows = design_rows(frame, SamplingDesign(weight="w", clusters=("psu",)),
    ...                    keep_respondents=True)
    >>> out = survey_numeric_estimate(MixNorm(p=1.0, mu=0, sigma=1), [1.0, 3, 2, 4, 5, 7],
    ...                               rows=rows, domains=list("aabbab"))
    >>> round(out.estimate.mean, 4), {k: round(e.mean, 4) for k, e in out.domains.items()}
    (4.1667, {'a': 3.2857, 'b': 5.4})
    """
    if variance not in VARIANCE_METHODS:
        raise ParameterError(f"variance ({variance!r}) must be one of "
                             f"{', '.join(VARIANCE_METHODS)}")
    if not isinstance(rows, DesignRows):
        raise ParameterError("rows must be DesignRows (design_rows(..., keep_respondents=True))")
    structure = rows.counts
    n = rows.weight.size
    if structure.units is None:
        raise ParameterError("rows must keep every respondent as a unit: "
                             "design_rows(..., keep_respondents=True)")
    notes: list[str] = []
    with_replacement = bool(np.all(np.isinf(structure.population)))
    if not with_replacement and not design.has_transform:
        structure = dataclasses.replace(structure,
                                        population=np.full_like(structure.population, math.inf))
        with_replacement = True
        notes.append(NO_FPC_NOTE.format(model=design.model))

    def of_sum(values: np.ndarray, weights: np.ndarray) -> float:
        return float(linearized_variance(structure, (weights * values)[:, None])[0, 0])

    plan = SamplingVariance(of_sum=of_sum, with_replacement=with_replacement)
    common = dict(groups=groups, dont_know=dont_know, weights=rows.weight,
                  sampling_variance=plan)
    whole = estimate_mean_from_answers(design, answers, **common)
    parts: dict[str, NumericEstimate] = {}
    if domains is not None:
        labels = list(domains) if not isinstance(domains, np.ndarray) else domains.tolist()
        if len(labels) != n:
            raise ParameterError(f"domains has {len(labels)} entries for {n} respondents")
        found = estimate_domains(design, answers, labels, **common)
        parts = dict(found)
    method = "linearization"
    df = structure.degrees_of_freedom
    if variance != "linearization":
        matrix, scale, rscales, mse, method, df = replicate_weights_for(
            rows.counts, variance, replicates, rng, rho)
        checked = numeric_answers(design, answers, groups=groups, dont_know=dont_know,
                                  weights=rows.weight)
        replicate_rows = matrix[checked.kept]
        whole = _with_replicates(design, checked, whole, replicate_rows, None,
                                 scale, rscales, mse)
        if parts:
            kept_labels = [None if label is None else str(label)
                           for label, keep in zip(labels, checked.kept, strict=True) if keep]
            inside_of = np.array(kept_labels, dtype=object)
            parts = {label: _with_replicates(design, checked, estimate, replicate_rows,
                                             inside_of == label, scale, rscales, mse)
                     for label, estimate in parts.items()}
    extra = tuple(notes)
    whole = dataclasses.replace(whole, variance_method=method, notes=(*whole.notes, *extra))
    parts = {label: dataclasses.replace(e, variance_method=method, notes=(*e.notes, *extra))
             for label, e in parts.items()}
    return SurveyNumericEstimate(estimate=whole, domains=MappingProxyType(parts),
                                 variance_method=method, df=int(df))


def _with_replicates(design: QuantitativeDesign, answers, estimate: NumericEstimate,
                     replicate_weights: np.ndarray, inside: np.ndarray | None, scale: float,
                     rscales: np.ndarray, mse: bool) -> NumericEstimate:
    """``estimate`` with the replicate variances of its mean and total: both refitted with
    every replicate's weights (zero outside the domain ``inside``), survey's svrVar."""
    mask = np.ones(answers.weights.size) if inside is None else inside.astype(float)
    thetas = np.array([weighted_point(design, answers, replicate_weights[:, r] * mask)
                       for r in range(replicate_weights.shape[1])])
    centre = np.array([estimate.mean, estimate.total if estimate.total is not None
                       else math.nan])
    covariance = replicate_variance(thetas, centre, scale, rscales, mse)
    return dataclasses.replace(
        estimate, variance=float(covariance[0, 0]), alternatives=MappingProxyType({}),
        total_variance=None if estimate.total is None else float(covariance[1, 1]))

