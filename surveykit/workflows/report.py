"""A stored survey's report: its definition, counts, issued ids and code tallies read from the
store, the report built by :func:`surveykit.reporting.report.build_report` (which does no I/O).

>>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from __future__ import annotations

from surveykit import store
from surveykit.reporting.report import Report, build_report

__all__ = ["report_for_survey"]


def report_for_survey(database, survey_name: str, *, level: float = 0.95,
                      method: str | None = None) -> Report:
    """Read a stored survey's counts (one SQL aggregation) and build its report.

    ``database`` is an engine, an SQLite path or any SQLAlchemy URL, as the
    CLI's ``--db`` takes it.

    >>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
    """
    with store.engine_for(database) as engine:
        survey = store.load_survey(engine, survey_name)
        counts = store.count_responses(engine, survey_name, survey=survey)
        issued = store.issued_respondent_count(engine, survey_name)
        tallies = store.code_tallies(engine, survey_name) if issued else None
        models = ()
        if survey.models:
            # a lazy loader: regressions bring pandas (about 0.4 s), loaded only for a survey
            # that declares models
            from surveykit.workflows.regress import fit_declared_models

            models = fit_declared_models(engine, survey)
    return build_report(survey, counts, code_tallies=tallies, issued=issued, level=level,
                        method=method, models=models)
