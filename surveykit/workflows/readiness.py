"""Is a survey ready for every command? Checked once, when it is added.

The survey file's own checks (:mod:`surveykit.definition.survey`) name the
key path of every mistake they know. This module is the backstop that keeps
the promise of ``surveykit survey add``: a survey that is stored works with
``generate``, ``serve``, ``report`` and ``export``. It runs each of them on
the survey without a database: renders one questionnaire per group in both
formats, builds the web page's data, builds a report from zero and from a
few answers, and builds the XLSForm in each randomization mode the survey's
designs allow. Whatever they refuse is refused now, naming the question.

Limits of one mode (a design that no die realizes, a design the device
cannot draw) are not refusals: the survey works in the other mode, and the
command that chooses the mode explains them.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass

from surveykit.collection.generation import write_questionnaires
from surveykit.collection.randomizer import seeded_source
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.webform import build_web_form
from surveykit.collection.xlsform import RANDOMIZE, FieldNameError, build_xlsform
from surveykit.counts import Counts
from surveykit.errors import ParameterError, SurveyDefinitionError, SurveykitError
from surveykit.numeric_counts import NumericCounts
from surveykit.reporting.numeric_section import numeric_section
from surveykit.reporting.report import build_report, render_report

__all__ = ["check_survey"]

_QUESTION = re.compile(r"^question(?: id)? '([^']+)'(?: wording)?: ")


@dataclass(frozen=True)
class _Stage:
    what: str
    run: object


def check_survey(survey, source_name: str = "<survey>") -> None:
    """Raise a SurveyDefinitionError if ``generate``, ``serve``, ``report`` or ``export``
    would refuse ``survey`` (a parsed :class:`surveykit.definition.survey.Survey`).

    >>> from surveykit.definition.survey import load_survey_file
    >>> from surveykit.resources import locate_resource
    >>> check_survey(load_survey_file(locate_resource("sample_data")
    ...                               / "academic_integrity.toml"))
    """
    defaults = load_wording_defaults(make_environment())
    stages = (
        _Stage("the printed questionnaires (generate)", lambda: _questionnaires(survey)),
        _Stage("the web page (serve)", lambda: _web_form(survey, defaults)),
        _Stage("the report (report)", lambda: _report(survey)),
        _Stage("the XLSForm (export xlsform)", lambda: _xlsform(survey, defaults)),
    )
    for stage in stages:
        try:
            stage.run()
        except SurveykitError as exc:
            raise SurveyDefinitionError(
                f"{source_name}: {_where(survey, str(exc))}; found when building "
                f"{stage.what}") from None


def _where(survey, message: str) -> str:
    """``questions[i] (id): reason`` when the message names a question, else the message."""
    found = _QUESTION.match(message)
    if found is None:
        return message
    ids = [q.id for q in survey.questions]
    if found.group(1) not in ids:
        return message
    index = ids.index(found.group(1))
    return f"questions[{index}] ({found.group(1)}): {message[found.end():]}"


def _questionnaires(survey) -> None:
    # one respondent per group, so that every group's slips and sheets are rendered
    with tempfile.TemporaryDirectory(prefix="surveykit-check-") as folder:
        for fmt in ("html", "markdown"):
            write_questionnaires(survey, respondents=len(survey.groups),
                                 out_dir=f"{folder}/{fmt}", fmt=fmt, rng=seeded_source(0))


def _web_form(survey, defaults) -> None:
    build_web_form(survey, wording_defaults=defaults)


def _report(survey) -> None:
    @dataclass(frozen=True)
    class _Answers:
        question_id: str
        counts: Counts
        missing: int = 0

    few = [_Answers(q.id, Counts.from_mapping({
        group: dict.fromkeys(q.design.response_labels, 10) for group in q.design.group_names}))
        for q in survey.questions if not q.numeric]
    numbers = [numeric_section(q, _few_numbers(q)) for q in survey.questions if q.numeric]
    for counts, numeric in (([], ()), (few, numbers)):
        report = build_report(survey, counts, numeric=numeric)
        for fmt in ("text", "json"):
            render_report(report, fmt)


def _few_numbers(question) -> NumericCounts:
    """Ten answers per group around the middle of the question's range (or 1)."""
    middle = sum(question.range) / 2 if question.range is not None else 1.0
    return NumericCounts.from_mapping({
        group: {"n": 10, "sum": 10 * middle, "sum_squares": 10 * (middle ** 2 + 1)}
        for group in question.design.group_names})


def _xlsform(survey, defaults) -> None:
    for randomize in RANDOMIZE:
        try:
            build_xlsform(survey, randomize=randomize, wording_defaults=defaults)
        except FieldNameError:
            raise
        except ParameterError:
            continue  # a limit of this mode (no die table, not drawable on the device)
