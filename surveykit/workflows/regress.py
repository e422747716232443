"""Regression on a stored survey: its design, groups and covariates, one library call.

``surveykit regress --survey NAME --formula ...`` and the report's regression
section (the survey's ``[[models]]``) both come here: the formula names one
question (whose randomized answers the model is about) and declared
covariates; the question's design and the respondents' groups come from the
store, the data from :func:`surveykit.store.frames.respondent_frame`, the fit
from :func:`surveykit.estimation.regression.regress`. Nothing here computes
anything of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import TYPE_CHECKING

from surveykit import store
from surveykit.definition.covariates import ModelSpec
from surveykit.definition.survey import Survey
from surveykit.errors import EstimationError, ParameterError, SurveykitError
from surveykit.estimation.formulas import parse_formula
from surveykit.estimation.quantitative_regression import LinearFit, fit_linear
from surveykit.estimation.regression import regress
from surveykit.reporting.models import ModelFit, model_spec
from surveykit.store.frames import GROUP_COLUMN, respondent_frame

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Engine

    from surveykit.estimation.regression_results import RegressionResult

__all__ = ["fit_declared_models", "fit_model", "numeric_model_frame", "regress_survey",
           "survey_regression"]


def survey_regression(survey: Survey, frame: pd.DataFrame, spec: ModelSpec, *,
                      fixed: Mapping[str, float] | None = None,
                      max_iterations: int = 200) -> RegressionResult:
    """Fit ``spec`` on ``frame`` (from :func:`~surveykit.store.frames.respondent_frame`)
    with the design of the spec's question and, for multi-group designs, the ``group``
    column."""
    design = survey.question(spec.question).design
    group = GROUP_COLUMN if len(design.group_names) > 1 else None
    return regress(frame, spec.formula, sensitive=spec.question, design=design, group=group,
                   family=spec.family, sensitive_formula=spec.sensitive_formula,
                   fixed=fixed, max_iterations=max_iterations)


def regress_survey(database: Engine | str | PathLike, survey_name: str, formula: str, *,
                   sensitive: str | None = None, family: str | None = None,
                   sensitive_formula: str = "~ 1", fixed: Mapping[str, float] | None = None,
                   max_iterations: int = 200) -> RegressionResult:
    """Fit a regression on a stored survey: ``formula`` names one of its questions and
    declared covariates (``"exam_cheating ~ age + C(faculty)"``).

    ``database`` is an engine, an SQLite path or a SQLAlchemy URL. The design
    is the question's, the groups are the respondents' stored groups;
    ``sensitive``, if given, must be that question. Respondents without a
    value in a used covariate are dropped and counted, as R's ``na.omit`` does.

    >>> # regress_survey("surveykit.db", "academic_integrity", "exam_cheating ~ age").summary()
    """
    with store.engine_for(database) as engine:
        survey = store.load_survey(engine, survey_name)
        spec = model_spec(survey, formula, family=family, sensitive_formula=sensitive_formula)
        if sensitive is not None and sensitive.casefold() != spec.question.casefold():
            raise ParameterError(f"sensitive ({sensitive!r}): the formula's randomized answers "
                                 f"are those of question {spec.question!r}; leave it out or name "
                                 "that question")
        return fit_model(engine, survey, spec, fixed=fixed, max_iterations=max_iterations)


def fit_declared_models(engine: Engine, survey: Survey) -> tuple[ModelFit, ...]:
    """Every ``[[models]]`` entry of ``survey`` fitted on its stored answers; a model that
    cannot be fitted (too few answers, separation, ...) carries the reason instead."""
    fits = []
    for spec in survey.models:
        try:
            fits.append(ModelFit(spec=spec, result=fit_model(engine, survey, spec)))
        except SurveykitError as exc:
            fits.append(ModelFit(spec=spec, result=None, error=str(exc)))
    return tuple(fits)


def fit_model(engine: Engine, survey: Survey, spec: ModelSpec, *,
              fixed: Mapping[str, float] | None = None,
              max_iterations: int = 200) -> RegressionResult:
    """Read the respondents ``spec`` needs from the store and fit it."""
    used = {c.name for c in survey.covariates} & _columns(spec, survey)
    frame = respondent_frame(engine, survey.name, spec.question,
                             [c.name for c in survey.covariates if c.name in used])
    if frame.empty:
        raise EstimationError(f"question {spec.question!r} has no stored answers yet")
    question = survey.question(spec.question)
    if question.numeric:
        return _numeric_regression(survey, frame, spec)
    return survey_regression(survey, frame, spec, fixed=fixed, max_iterations=max_iterations)


def _numeric_regression(survey: Survey, frame: pd.DataFrame, spec: ModelSpec) -> LinearFit:
    """Least squares with the numeric question's scrambled answers (outcome or term),
    :func:`surveykit.estimation.quantitative_regression.fit_linear`; its stored answers are
    text ("1234.5", "dont_know")."""
    design = survey.question(spec.question).design
    frame = numeric_model_frame(frame, spec.question, family=spec.family,
                                sensitive_formula=spec.sensitive_formula)
    group = GROUP_COLUMN if len(design.group_names) > 1 else None
    return fit_linear(frame, spec.formula, design=design, scrambled=spec.question,
                      group=group)


def numeric_model_frame(frame: pd.DataFrame, question: str, *, family: str | None,
                        sensitive_formula: str) -> pd.DataFrame:
    """``frame`` with numeric question ``question``'s stored answers ("1234.5", "dont_know",
    missing) as numbers and "dont_know", for a least-squares fit; a family or sensitive
    formula (the likelihood models' options) is refused."""
    if family is not None or sensitive_formula.replace(" ", "") != "~1":
        raise ParameterError(
            f"question {question!r} is numeric: its model is linear least squares on "
            "the design's unbiased transform; leave out family and sensitive_formula")
    frame = frame.copy()
    frame[question] = [value if value == "dont_know" or not isinstance(value, str)
                       else float(value) for value in frame[question]]
    return frame


def _columns(spec: ModelSpec, survey: Survey) -> set[str]:
    """The survey columns a model's formulas use."""
    names = [*(q.id for q in survey.questions), *(c.name for c in survey.covariates)]
    parsed = parse_formula(spec.formula, names)
    used = {*parsed.columns, parsed.response}
    if parsed.response != spec.question:
        used |= set(parse_formula(spec.sensitive_formula, names, response=False).columns)
    return used
