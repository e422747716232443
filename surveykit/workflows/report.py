"""A stored survey's report: its definition, counts, issued ids and code tallies read from the
store in one snapshot (:meth:`surveykit.store.handle.StoredSurvey.read`), the report built by
:func:`surveykit.reporting.report.build_report` (which does no I/O).

>>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import surveykit
from surveykit.definition.survey import Survey
from surveykit.errors import EstimationError, ParameterError, SurveykitError, printable
from surveykit.estimation.answers import value_text
from surveykit.estimation.quantitative import NumericEstimate, estimate_domains
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.reporting.joint_section import JointSection
from surveykit.reporting.numeric_section import NumericSection, numeric_section
from surveykit.reporting.report import Report, build_report
from surveykit.store import Database
from surveykit.store import database as store
from surveykit.store.frames import GROUP_COLUMN, respondent_frame
from surveykit.store.numeric_answers import NumericAnswerRows
from surveykit.vocabulary import domain_order

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["PLOTTED_ANSWERS", "numeric_domains", "numeric_sections", "report_for_survey",
           "sampling_declared"]

#: A numeric question with at most this many stored answers has its answers read for the
#: report's quantiles and plot; one with more is reported from its sums alone (the mean,
#: total and interval need nothing else), so a report stays quick whatever the survey's size.
PLOTTED_ANSWERS = 100_000


def report_for_survey(database, survey_name: str, *, level: float = 0.95,
                      method: str | None = None, by: str | None = None) -> Report:
    """Read a stored survey (definition, kept counts, issued ids, instruction totals: one
    snapshot) and build its report.

    ``database`` is an engine, an SQLite path or any SQLAlchemy URL, as the
    CLI's ``--db`` takes it. ``by``, a covariate: every numeric question's mean per value
    of it too (:func:`numeric_domains`).

    >>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
    """
    with Database(database) as opened:
        # one snapshot: an import committed meanwhile shows in every number or in none
        reading = opened.survey(survey_name).read(numeric_answers=PLOTTED_ANSWERS)
        survey = reading.definition
        models = ()
        if survey.models:  # regression loads pandas: through the package's lazy names
            models = surveykit.fit_declared_models(opened.engine, survey)
        joint = tuple(_declared_joint(opened.engine, survey))
        by_name = by_covariate(survey, by)
        domains = {} if by_name is None else {
            q.id: numeric_domains(opened.engine, survey, q.id, by_name)
            for q in survey.questions if q.numeric}
    numeric = numeric_sections(survey, reading.numeric, reading.numeric_answers or {},
                               level=level)
    if by_name is not None:
        numeric = [_with_domains(section, by_name, domains[section.id]) for section in numeric]
    return build_report(survey, list(reading.counts), code_tallies=reading.code_tallies,
                        issued=reading.issued, level=level, method=method, models=models,
                        joint=joint, numeric=numeric)


def sampling_declared(engine: Engine, survey_name: str) -> bool:
    """Whether the stored survey ``survey_name`` declares ``[sampling]``."""
    return store.load_survey(engine, survey_name).sampling is not None


def numeric_sections(survey: Survey, counts: Sequence[NumericQuestionCounts],
                     answers: Mapping[str, NumericAnswerRows] | None = None, *,
                     level: float = 0.95) -> list[NumericSection]:
    """The report sections of the numeric questions of ``survey`` from their ``counts``
    (the store's, or counted in files) and, where given, their ``answers`` (for the
    quantiles and the plot)."""
    sections = []
    for found in counts:
        question = survey.question(found.question_id)
        rows = (answers or {}).get(found.question_id)
        numbers = groups = None
        if rows is not None:
            kept = ~rows.dont_know
            numbers, groups = rows.values[kept], rows.groups[kept]
            if len(question.design.group_names) == 1:
                groups = None
        sections.append(numeric_section(question, found.counts, answers=numbers,
                                        groups=groups, missing=found.missing, level=level))
    return sections


def numeric_domains(engine, survey: Survey, question_id: str, by: str
                    ) -> Mapping[str, NumericEstimate] | str:
    """Numeric question ``question_id``'s mean per value of covariate ``by`` under simple
    random sampling (:func:`surveykit.estimation.quantitative.estimate_domains`: the Hajek
    mean of each domain's answers, its variance linearized over the whole sample as svyby
    on ``svydesign(ids = ~1)``), in the values' order; a respondent without a value is in no
    domain. Where the domains cannot be estimated (a domain or group with fewer than two
    answers), the reason instead."""

    question = survey.question(question_id)
    frame = respondent_frame(engine, survey.name, question.id, [by])
    if frame.empty:
        return {}
    dont_know = (frame[question.id] == "dont_know").to_numpy()
    values = [math.nan if dk or value is None else float(value)
              for value, dk in zip(frame[question.id], dont_know, strict=True)]
    labels = [None if value is None or (isinstance(value, float) and math.isnan(value))
              else value_text(value).strip() for value in frame[by]]
    groups = (frame[GROUP_COLUMN].tolist() if len(question.design.group_names) > 1
              else None)
    try:
        found = estimate_domains(question.design, values, labels, groups=groups,
                                 dont_know=dont_know)
    except (EstimationError, ParameterError) as exc:
        return str(exc)
    return {label: found[label] for label in sorted(found, key=domain_order)}


def _with_domains(section: NumericSection, by: str,
                  domains: Mapping[str, NumericEstimate] | str) -> NumericSection:
    if isinstance(domains, str):
        return replace(section, by=by, warnings=(
            *section.warnings, f"no estimates by {by} ({domains})"))
    return replace(section, by=by, domains=MappingProxyType(dict(domains)))


def by_covariate(survey: Survey, by: str | None, *, described: str = "a covariate"
                 ) -> str | None:
    """The covariate ``--by`` names (its declared spelling), None without ``--by``; a
    ParameterError naming the survey's covariates where it names none (``described``: what
    the report accepts, e.g. "a design column or covariate" under ``[sampling]``)."""
    if by is None:
        return None
    try:
        return survey.covariate(by).name
    except Exception:
        columns = ", ".join(c.name for c in survey.covariates) or "none"
        raise ParameterError(f"--by ({printable(repr(by))}) must be {described} of survey "
                             f"{survey.name!r} (it has: {columns})") from None


def _declared_joint(engine, survey: Survey) -> list[JointSection]:
    """Every ``[[joint]]`` entry of ``survey`` estimated on its stored answers, as ``surveykit
    joint`` estimates it; one that cannot be (too few answers, no respondent who answered
    every question) carries the reason, which the report shows as a warning."""
    if not survey.joint:
        return []
    sections = []
    for spec in survey.joint:
        try:
            result = surveykit.joint_for_survey(engine, survey.name, spec.questions)
        except SurveykitError as exc:
            sections.append(JointSection(spec=spec, estimate=None, error=str(exc)))
        else:
            sections.append(JointSection(spec=spec, estimate=result.estimate,
                                         together=result.composed))
    return sections
