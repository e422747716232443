"""A stored survey's report: its definition, counts, issued ids and code tallies read from the
store in one snapshot (:meth:`surveykit.store.handle.StoredSurvey.read`), the report built by
:func:`surveykit.reporting.report.build_report` (which does no I/O).

>>> # report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from __future__ import annotations

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
    return build_report(survey, list(reading.counts), code_tallies=reading.code_tallies,
                        issued=reading.issued, level=level, method=method, models=models)
