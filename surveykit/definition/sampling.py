"""A survey file's ``[sampling]`` section: the sampling design, checked at the door.

The section declares, in R ``survey``'s vocabulary, how the respondents were
sampled (docs/complex-samples.md)::

    [sampling]
    weight = "pw"                 # each respondent's sampling weight
    strata = "stype"              # optional
    clusters = ["dnum", "snum"]   # optional; first-stage PSU first
    fpc = ["fpc1", "fpc2"]        # optional; population size or sampling fraction per stage

:func:`read_sampling` turns it into a
:class:`~surveykit.sampling.design.SamplingDesign` (which checks names,
options and numbers) and names the columns it reads as covariates of the
respondent (weights, fpc and replicate weights numbers, strata and clusters
categories), so an import keeps them one value per respondent exactly as it
keeps ``[covariates]``. A column also declared under ``[covariates]`` keeps
that declaration, which must then be of the same type. Replicate weights
given by a pattern (``replicate_weights = "repw*"``) name no column here: each
import (and a sample frame) matches the pattern against its header, keeps the
matching columns as numbers, and must match the same columns as the survey
already stores (:func:`surveykit.store.design_values.check_replicate_columns`).

>>> design, columns = read_sampling({"weight": "pw", "strata": "stype"}, {}, None)
>>> design.describe(), columns
('weights pw, strata stype, lonely PSUs fail', {'pw': 'number', 'stype': 'category'})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from surveykit.errors import ParameterError, SurveyDefinitionError
from surveykit.sampling.design import SamplingDesign

__all__ = ["design_column_kinds", "read_sampling"]


def design_column_kinds(design: SamplingDesign) -> dict[str, str]:
    """The covariate type of every column ``design`` reads: numbers for weights, fpc and
    replicate weights, categories for strata and clusters."""
    kinds = {column: "number" for column in (design.weight, *design.fpc) if column}
    if design.replicate_weights is not None:
        kinds.update({column: "number" for column in design.replicate_weights.columns})
    kinds.update({column: "category" for column in (design.strata, *design.clusters)
                  if column})
    return kinds


def read_sampling(section: object, declared: Mapping[str, object],
                  fail: Callable[[str, str], SurveyDefinitionError] | None
                  ) -> tuple[SamplingDesign, dict[str, str]]:
    """The design of a ``[sampling]`` table and the design columns that ``[covariates]``
    (``declared``, as written) does not declare, with their types.

    ``fail(where, message)`` makes the error (the survey reader's, which names the file);
    without it a SurveyDefinitionError names the section only.
    """
    fail = fail or (lambda where, message: SurveyDefinitionError(f"{where}: {message}"))
    if not isinstance(section, Mapping):
        raise fail("sampling", f"must be a table of keys (weight = \"pw\", strata = ...), "
                               f"not {section!r}")
    try:
        design = SamplingDesign.from_mapping(section)
    except ParameterError as exc:
        raise fail("sampling", str(exc)) from None
    replicates = design.replicate_weights
    if replicates is not None and replicates.pattern is not None:
        # a matched column must be a replicate weight and nothing else
        taken = [*(c for c in design.columns), *(str(name) for name in declared)]
        clash = next((name for name in taken if replicates.matches(name)), None)
        if clash is not None:
            raise fail("sampling.replicate_weights",
                       f"{replicates.pattern!r} also matches column {clash!r}, which is "
                       "declared as another design column or covariate; make the pattern "
                       "match the replicate columns only (e.g. \"repw*\")")
    folded = {str(name).casefold(): value for name, value in declared.items()}
    implicit: dict[str, str] = {}
    for column, kind in design_column_kinds(design).items():
        given = folded.get(column.casefold())
        if given is None:
            implicit[column] = kind
            continue
        given_kind = given.get("type") if isinstance(given, Mapping) else given
        if given_kind != kind:
            raise fail(f"covariates.{column}", f"{given_kind!r}: column {column!r} is a "
                                               f"design column of [sampling] and must be a "
                                               f"{kind}")
    return design, implicit
