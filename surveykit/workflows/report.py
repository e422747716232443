"""A stored survey's report: its definition, counts, issued ids and code tallies read from the
store in one snapshot (:meth:`surveykit.store.handle.StoredSurvey.read`), the report built by
:func:`surveykit.reporting.report.build_report` (which does no I/O).

>>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from surveykit.definition.survey import Survey
from surveykit.errors import SurveykitError
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.reporting.joint_section import JointSection
from surveykit.reporting.numeric_section import NumericSection, numeric_section
from surveykit.reporting.report import Report, build_report
from surveykit.store import Database
from surveykit.store.numeric_answers import NumericAnswerRows

__all__ = ["PLOTTED_ANSWERS", "numeric_sections", "report_for_survey"]

#: A numeric question with at most this many stored answers has its answers read for the
#: report's quantiles and plot; one with more is reported from its sums alone (the mean,
#: total and interval need nothing else), so a report stays quick whatever the survey's size.
PLOTTED_ANSWERS = 100_000


def report_for_survey(database, survey_name: str, *, level: float = 0.95,
                      method: str | None = None) -> Report:
    """Read a stored survey (definition, kept counts, issued ids, instruction totals: one
    snapshot) and build its report.

    ``database`` is an engine, an SQLite path or any SQLAlchemy URL, as the
    CLI's ``--db`` takes it.

    >>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
    """
    with Database(database) as opened:
        # one snapshot: an import committed meanwhile shows in every number or in none
        reading = opened.survey(survey_name).read(numeric_answers=PLOTTED_ANSWERS)
        survey = reading.definition
        models = ()
        if survey.models:
            # a lazy loader: regressions bring pandas (about 0.4 s), loaded only for a survey
            # that declares models
            from surveykit.workflows.regress import fit_declared_models

            models = fit_declared_models(opened.engine, survey)
        joint = tuple(_declared_joint(opened.engine, survey))
    numeric = numeric_sections(survey, reading.numeric, reading.numeric_answers or {},
                               level=level)
    return build_report(survey, list(reading.counts), code_tallies=reading.code_tallies,
                        issued=reading.issued, level=level, method=method, models=models,
                        joint=joint, numeric=numeric)


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


def _declared_joint(engine, survey: Survey) -> list[JointSection]:
    """Every ``[[joint]]`` entry of ``survey`` estimated on its stored answers, as ``surveykit
    joint`` estimates it; one that cannot be (too few answers, no respondent who answered
    every question) carries the reason, which the report shows as a warning."""
    if not survey.joint:
        return []
    # lazy: the joint estimator brings pandas, loaded only for a survey that declares one
    from surveykit.workflows.joint import joint_for_survey

    sections = []
    for spec in survey.joint:
        try:
            result = joint_for_survey(engine, survey.name, spec.questions)
        except SurveykitError as exc:
            sections.append(JointSection(spec=spec, estimate=None, error=str(exc)))
        else:
            sections.append(JointSection(spec=spec, estimate=result.estimate,
                                         together=result.composed))
    return sections
