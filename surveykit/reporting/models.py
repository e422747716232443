"""A survey's declared models as the report shows them: the model's spec and its fit.

:func:`model_spec` checks a formula against a survey as ``[[models]]`` is
checked; the fits themselves are made on stored answers by
:mod:`surveykit.workflows.regress`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveykit.definition.covariates import ModelSpec, parse_models
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError

if TYPE_CHECKING:
    from surveykit.estimation.regression_results import RegressionResult

__all__ = ["ModelFit", "model_spec"]

# Where parse_models names a key, the command line names an option.
_OPTIONS = {"formula": "formula", "family": "family", "sensitive_formula": "sensitive formula"}


@dataclass(frozen=True)
class ModelFit:
    """One declared model of a survey and its fit, or why there is none (``error``)."""

    spec: ModelSpec
    result: RegressionResult | None
    error: str | None = None


def model_spec(survey: Survey, formula: str, *, family: str | None = None,
               sensitive_formula: str = "~ 1") -> ModelSpec:
    """Check ``formula`` against the survey's questions and covariates, as ``[[models]]`` is.

    Raises ParameterError naming the option: an unknown column, no question
    or two questions in the formula.

    >>> # model_spec(survey, "exam_cheating ~ age + C(faculty)").question
    >>> # 'exam_cheating'
    """
    def fail(where: str, message: str) -> ParameterError:
        option = _OPTIONS.get(where.rpartition(".")[2], where)
        if message.startswith(option):
            return ParameterError(message)
        return ParameterError(f"{option} {message}" if message.startswith("'")
                              else f"{option}: {message}")

    entry: dict[str, object] = {"formula": formula}
    if family is not None:
        entry["family"] = family
    if sensitive_formula.strip() not in ("~ 1", "~1"):
        entry["sensitive_formula"] = sensitive_formula
    return parse_models([entry], [q.id for q in survey.questions], survey.covariates, fail,
                        numeric=[q.id for q in survey.questions if q.numeric])[0]
