"""A stored survey's report: its definition, counts, issued ids and code tallies read from the
store in one snapshot (:meth:`surveykit.store.handle.StoredSurvey.read`), the report built by
:func:`surveykit.reporting.report.build_report` (which does no I/O).

>>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from __future__ import annotations

from surveykit.definition.survey import Survey
from surveykit.errors import SurveykitError
from surveykit.reporting.joint_section import JointSection
from surveykit.reporting.report import Report, build_report
from surveykit.store import Database

__all__ = ["report_for_survey"]


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
        reading = opened.survey(survey_name).read()
        survey = reading.definition
        models = ()
        if survey.models:
            # a lazy loader: regressions bring pandas (about 0.4 s), loaded only for a survey
            # that declares models
            from surveykit.workflows.regress import fit_declared_models

            models = fit_declared_models(opened.engine, survey)
        joint = tuple(_declared_joint(opened.engine, survey))
    return build_report(survey, list(reading.counts), code_tallies=reading.code_tallies,
                        issued=reading.issued, level=level, method=method, models=models,
                        joint=joint)


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
