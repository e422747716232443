"""The estimation report: per-question estimates, privacy accounting and compliance checks.

:func:`build_report` turns a survey definition and its answer counts (from one
SQL aggregation, :func:`surveykit.store.count_responses`) into a
:class:`Report` of plain numbers and plain-language warnings;
:func:`render_report` formats it as text (80 columns), Markdown, HTML (one
self-contained file with inline SVG plots) or JSON.

Privacy accounting: a respondent who answers every question releases the
product of the question mechanisms, whose loss is at most the sum of the
questions' losses in either semantics (Lemmas 3.3 and 3.15).

Checks (a warning is raised at the 1% level, ``ALPHA``):

* don't-know compliance: the number of "don't know" answers against
  Binomial(answered, 1 - p - q), two-sided exact binomial test;
* randomizer audit (when questionnaires were issued): codes T/L/D issued
  against (p, q, 1 - p - q), chi-square goodness of fit;
* pi_hat outside [0, 1], fewer than ``MIN_YES_NO`` yes/no answers, no answers.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from surveykit.definition.survey import Survey
from surveykit.designs.warner import GeneralizedWarner
from surveykit.estimation import DEFAULT_CI_METHOD, ConfidenceInterval, Estimate, estimate

__all__ = [
    "ALPHA",
    "MIN_YES_NO",
    "REPORT_FORMATS",
    "QuestionReport",
    "Report",
    "build_report",
    "render_report",
    "report_for_survey",
]

#: Significance level of the compliance and randomizer checks.
ALPHA = 0.01
#: Below this many yes/no answers the interval rests on too little data.
MIN_YES_NO = 30
REPORT_FORMATS = ("text", "markdown", "html", "json")
CODES = ("T", "L", "D")


@dataclass(frozen=True, kw_only=True)
class QuestionReport:
    """One question's line of the report: counts, estimate, privacy, checks."""

    id: str
    text: str
    yes: int
    no: int
    dont_know: int
    missing: int
    p: float
    q: float
    estimate: Estimate | None
    interval: ConfidenceInterval | None
    dont_know_designed: float
    dont_know_pvalue: float | None
    codes_issued: Mapping[str, int] | None
    codes_pvalue: float | None
    warnings: tuple[str, ...] = field(default=())

    @property
    def answered(self) -> int:
        """yes + no + don't know."""
        return self.yes + self.no + self.dont_know

    @property
    def dont_know_observed(self) -> float | None:
        """The observed share of "don't know" among the answers."""
        return self.dont_know / self.answered if self.answered else None

    @property
    def mechanism(self) -> GeneralizedWarner:
        """The question's mechanism (p, q)."""
        return GeneralizedWarner(p=self.p, q=self.q)

    @property
    def epsilon_shafer(self) -> float:
        """ln(p/q) (Def. 3.1)."""
        return self.mechanism.epsilon_shafer

    @property
    def epsilon_walley(self) -> float:
        """ln((1 - q)/q) (Def. 3.13)."""
        return self.mechanism.epsilon_walley

    def to_dict(self) -> dict:
        """The JSON object of this question (the keys of ``surveykit report --format json``)."""
        e = self.estimate
        return {
            "id": self.id,
            "text": self.text,
            "yes": self.yes,
            "no": self.no,
            "dont_know": self.dont_know,
            "missing": self.missing,
            "n": self.answered,
            "p": self.p,
            "q": self.q,
            "pi_hat": e.pi_hat if e else None,
            "pi_mle": e.pi_mle if e else None,
            "se": e.se if e else None,
            "ci_low": self.interval.low if self.interval else None,
            "ci_high": self.interval.high if self.interval else None,
            "epsilon_shafer": _finite(self.epsilon_shafer),
            "epsilon_walley": _finite(self.epsilon_walley),
            "dont_know_designed": self.dont_know_designed,
            "dont_know_observed": self.dont_know_observed,
            "dont_know_pvalue": self.dont_know_pvalue,
            "codes_issued": dict(self.codes_issued) if self.codes_issued is not None else None,
            "codes_pvalue": self.codes_pvalue,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, kw_only=True)
class Report:
    """The whole survey's report."""

    survey: str
    title: str
    level: float
    method: str
    issued: int
    questions: tuple[QuestionReport, ...]

    @property
    def epsilon_total_shafer(self) -> float:
        """Loss of a respondent who answered every question: the sum (Lemma 3.3)."""
        return math.fsum(q.epsilon_shafer for q in self.questions)

    @property
    def epsilon_total_walley(self) -> float:
        """The same in Walley's semantics (Lemma 3.15)."""
        return math.fsum(q.epsilon_walley for q in self.questions)

    @property
    def warning_count(self) -> int:
        """How many warnings the questions carry."""
        return sum(len(q.warnings) for q in self.questions)

    def to_frame(self):
        """One row per question (indexed by id) with the JSON keys, for pandas and notebooks.

        >>> # report_for_survey(open_engine("surveykit.db"), "academic_integrity").to_frame()
        """
        import pandas as pd

        rows = [q.to_dict() for q in self.questions]
        for row in rows:
            row["warnings"] = len(row["warnings"])
            row.pop("codes_issued")
        return pd.DataFrame(rows).set_index("id")

    def to_dict(self) -> dict:
        """Plain data for JSON; infinite losses (q = 0, no protection) become null."""
        return {
            "survey": self.survey,
            "title": self.title,
            "level": self.level,
            "ci_method": self.method,
            "respondents_issued": self.issued,
            "epsilon_total_shafer": _finite(self.epsilon_total_shafer),
            "epsilon_total_walley": _finite(self.epsilon_total_walley),
            "questions": [q.to_dict() for q in self.questions],
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _dont_know_check(dont_know: int, answered: int, designed: float) -> tuple[float | None, str]:
    """Exact binomial test of the don't-know count; returns (p-value, warning or '')."""
    # scipy.stats costs ~1 s to import; only the commands that compute pay for it
    from scipy import stats

    if answered == 0:
        return None, ""
    observed = dont_know / answered
    if designed == 0:
        pvalue = 1.0 if dont_know == 0 else 0.0
    elif designed == 1:
        pvalue = 1.0 if dont_know == answered else 0.0
    else:
        pvalue = float(stats.binomtest(dont_know, answered, designed).pvalue)
    if pvalue >= ALPHA:
        return pvalue, ""
    shares = (f"{_percent(observed)} answered \"don't know\" where the design expects "
              f"{_percent(designed)} (exact binomial test, p = {pvalue:.2g})")
    if observed > designed:
        return pvalue, (
            f"More \"don't know\" than designed: {shares}. Some respondents seem to have "
            "opted out instead of following their code. The estimate uses only yes/no "
            "answers, so it stays unbiased only if opting out is unrelated to the truth; "
            "if people with the trait opt out more often, pi is underestimated."
        )
    return pvalue, (
        f"Fewer \"don't know\" than designed: {shares}. Some respondents seem to have "
        "answered yes or no when their code said \"don't know\"; those answers do not "
        "follow the mechanism, so the estimate may be biased."
    )


def _codes_check(codes: Mapping[str, int], p: float, q: float) -> tuple[float | None, str]:
    """Chi-square test of the issued code counts against (p, q, 1 - p - q)."""
    from scipy import stats

    total = sum(codes.values())
    if total == 0:
        return None, ""
    design = {"T": p, "L": q, "D": max(0.0, 1 - p - q)}
    impossible = [c for c in CODES if design[c] == 0 and codes.get(c, 0) > 0]
    if impossible:
        pvalue = 0.0
    else:
        used = [c for c in CODES if design[c] > 0]
        observed = [codes.get(c, 0) for c in used]
        expected = [design[c] * total for c in used]
        pvalue = float(stats.chisquare(observed, expected).pvalue) if len(used) > 1 else 1.0
    if pvalue >= ALPHA:
        return pvalue, ""
    realized = ", ".join(f"{c} {_percent(codes.get(c, 0) / total)}" for c in CODES)
    wanted = ", ".join(f"{c} {_percent(design[c])}" for c in CODES)
    return pvalue, (
        f"The issued codes ({realized}) differ from the design ({wanted}; chi-square "
        f"p = {pvalue:.2g}). A secure randomizer almost never does this: check how the "
        "questionnaires were generated before trusting the estimate."
    )


def build_report(
    survey: Survey,
    counts: Sequence,
    *,
    code_tallies: Mapping[str, Mapping[str, int]] | None = None,
    issued: int = 0,
    level: float = 0.95,
    method: str = DEFAULT_CI_METHOD,
) -> Report:
    """Estimates and checks for every question of ``survey``.

    ``counts`` holds objects with ``question_id, yes, no, dont_know, missing``
    (as :func:`surveykit.store.count_responses` returns); ``code_tallies``
    maps question ids to issued code counts {"T": n, "L": n, "D": n}.
    """
    by_id = {c.question_id: c for c in counts}
    rows = []
    for question in survey.questions:
        c = by_id.get(question.id)
        yes, no, dont_know, missing = (c.yes, c.no, c.dont_know, c.missing) if c else (0, 0, 0, 0)
        mechanism = question.mechanism
        warnings: list[str] = []
        result = interval = None
        answered = yes + no + dont_know
        if answered == 0:
            warnings.append("No answers to this question: there is nothing to estimate.")
        elif yes + no == 0:
            warnings.append(
                "Only \"don't know\" answers: pi cannot be estimated without yes/no answers."
            )
        else:
            result = estimate(yes=yes, no=no, dont_know=dont_know, mechanism=mechanism)
            interval = result.confidence_interval(level, method)
            if result.pi_hat < 0 or result.pi_hat > 1:
                side, bound = ("below 0", "0") if result.pi_hat < 0 else ("above 1", "1")
                warnings.append(
                    f"pi_hat = {result.pi_hat:.4f} is {side}: there are "
                    f"{'fewer' if result.pi_hat < 0 else 'more'} \"yes\" answers than even "
                    f"pi = {bound} predicts. The report shows the maximum-likelihood estimate "
                    f"on [0, 1], pi_mle = {bound}; this happens by chance when the true "
                    "share is near the edge, or when respondents did not follow the design."
                )
            if yes + no < MIN_YES_NO:
                warnings.append(
                    f"Only {yes + no} yes/no answers (fewer than {MIN_YES_NO}): the standard "
                    "error and the interval rest on very little data; collect more answers "
                    "before relying on them."
                )
        pvalue, warning = _dont_know_check(dont_know, answered, mechanism.dont_know)
        if warning:
            warnings.append(warning)
        codes = code_tallies.get(question.id) if code_tallies else None
        codes_pvalue = None
        if codes is not None and issued:
            codes_pvalue, warning = _codes_check(codes, mechanism.p, mechanism.q)
            if warning:
                warnings.append(warning)
        rows.append(QuestionReport(
            id=question.id, text=question.text, yes=yes, no=no, dont_know=dont_know,
            missing=missing, p=mechanism.p, q=mechanism.q, estimate=result, interval=interval,
            dont_know_designed=mechanism.dont_know, dont_know_pvalue=pvalue,
            codes_issued=dict(codes) if codes is not None and issued else None,
            codes_pvalue=codes_pvalue, warnings=tuple(warnings),
        ))
    return Report(survey=survey.name, title=survey.title, level=level, method=method,
                  issued=issued, questions=tuple(rows))


def report_for_survey(engine, survey_name: str, *, level: float = 0.95,
                      method: str = DEFAULT_CI_METHOD) -> Report:
    """Read a stored survey's counts (one SQL aggregation) and build its report."""
    from surveykit import store

    survey = store.load_survey(engine, survey_name)
    counts = store.count_responses(engine, survey_name)
    issued = store.issued_respondent_count(engine, survey_name)
    tallies = store.code_tallies(engine, survey_name) if issued else None
    return build_report(survey, counts, code_tallies=tallies, issued=issued, level=level,
                        method=method)


# -- rendering ---------------------------------------------------------------------------------

WIDTH = 80


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def format_text(report: Report) -> str:
    """The report for an 80-column terminal."""
    level = f"{report.level:.0%}" if report.level * 100 == round(report.level * 100) \
        else f"{report.level:.1%}"
    lines = _wrap(f"{report.title} ({report.survey})", "")
    lines += _wrap(
        f"Privacy loss of a respondent who answered all {len(report.questions)} questions: "
        f"Shafer {_num(report.epsilon_total_shafer)}, Walley {_num(report.epsilon_total_walley)} "
        "(losses add up, Lemmas 3.3 and 3.15).", "")
    if report.issued:
        lines += _wrap(f"Questionnaires issued: {report.issued:,}.", "")
    lines.append("")
    header = f"{'question':<22}{'pi_mle':>8}{level + ' CI':>20}{'se':>8}{'yes/no':>9}{'dk':>7}"
    lines += [header, "-" * len(header)]
    for q in report.questions:
        ci = f"[{_num(q.interval.low)}, {_num(q.interval.high)}]" if q.interval else "-"
        name = q.id if len(q.id) <= 21 else q.id[:20] + "~"
        lines.append(
            f"{name:<22}{_num(q.estimate.pi_mle if q.estimate else None):>8}{ci:>20}"
            f"{_num(q.estimate.se if q.estimate else None):>8}{q.yes + q.no:>9,}"
            f"{q.dont_know:>7,}"
        )
    lines.append("")
    for q in report.questions:
        lines += _wrap(f"{q.id}: {q.text}", "")
        lines.append(f"  answers    yes {q.yes:,}, no {q.no:,}, don't know {q.dont_know:,}, "
                     f"missing {q.missing:,}")
        lines.append(f"  mechanism  p = {q.p:g}, q = {q.q:g}, don't know "
                     f"{_percent(q.dont_know_designed)}")
        lines.append(f"  privacy    epsilon Shafer {_num(q.epsilon_shafer)}, "
                     f"Walley {_num(q.epsilon_walley)}")
        if q.estimate:
            e = q.estimate
            lines.append(f"  estimate   pi_hat {_num(e.pi_hat, 4)}, pi_mle {_num(e.pi_mle, 4)},"
                         f" se {_num(e.se, 4)}, {level} CI [{_num(q.interval.low, 4)}, "
                         f"{_num(q.interval.high, 4)}]")
        if q.dont_know_observed is not None:
            lines.append(f"  don't know {_percent(q.dont_know_observed)} observed, "
                         f"{_percent(q.dont_know_designed)} designed "
                         f"(p = {q.dont_know_pvalue:.3g})")
        if q.codes_issued is not None:
            total = sum(q.codes_issued.values()) or 1
            shares = ", ".join(f"{c} {_percent(q.codes_issued.get(c, 0) / total)}"
                               for c in CODES)
            lines.append(f"  codes      issued {shares} (p = {_num(q.codes_pvalue, 3)})")
        for warning in q.warnings:
            lines += _wrap("! " + warning, "  ")
        lines.append("")
    lines.append(f"Intervals: {report.method}; checks at the {ALPHA:.0%} level. "
                 f"{report.warning_count} warning(s).")
    return "\n".join(lines) + "\n"


def render_report(report: Report, fmt: str = "text", *, templates_dir=None) -> str:
    """The report as text, markdown, html (self-contained, with inline SVG plots) or json."""
    from surveykit.errors import ParameterError

    if fmt == "text":
        return format_text(report)
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n"
    if fmt in ("markdown", "html"):
        from surveykit.collection.render import get_template, make_environment

        environment = make_environment(templates_dir)
        context = {"report": report_context(report)}
        if fmt == "html":
            from surveykit.reporting.plots import forest_plot_svg, privacy_accuracy_svg

            context["forest_svg"] = forest_plot_svg(report)
            context["curves"] = {q.id: privacy_accuracy_svg(q) for q in report.questions}
        return get_template(environment, "report", fmt).render(**context)
    raise ParameterError(f"format ({fmt!r}) must be one of {', '.join(REPORT_FORMATS)}")


def report_context(report: Report) -> dict:
    """Plain, pre-formatted data for the report templates (they do no arithmetic).

    Numbers formatted here are marked safe (``Markup``): they hold only digits
    and punctuation of our own. Everything a user typed (titles, ids, question
    text) stays a plain string and is escaped by the template environment.
    """
    level = Markup(f"{report.level:.0%}")
    questions = []
    for q in report.questions:
        e = q.estimate
        total = sum(q.codes_issued.values()) if q.codes_issued else 0
        questions.append({
            "id": q.id,
            "text": q.text,
            "yes": Markup(f"{q.yes:,}"),
            "no": Markup(f"{q.no:,}"),
            "dont_know": Markup(f"{q.dont_know:,}"),
            "missing": Markup(f"{q.missing:,}"),
            "p": Markup(f"{q.p:g}"),
            "q": Markup(f"{q.q:g}"),
            "dont_know_designed": Markup(_percent(q.dont_know_designed)),
            "dont_know_observed": Markup(_percent(q.dont_know_observed)
            if q.dont_know_observed is not None else "-"),
            "dont_know_pvalue": Markup(f"{q.dont_know_pvalue:.3g}"
            if q.dont_know_pvalue is not None else "-"),
            "pi_hat": Markup(_num(e.pi_hat, 4) if e else "-"),
            "pi_mle": Markup(_num(e.pi_mle, 4) if e else "-"),
            "se": Markup(_num(e.se, 4) if e else "-"),
            "ci": Markup(f"[{_num(q.interval.low, 4)}, {_num(q.interval.high, 4)}]"
            if q.interval else "-"),
            "epsilon_shafer": Markup(_num(q.epsilon_shafer)),
            "epsilon_walley": Markup(_num(q.epsilon_walley)),
            "codes": Markup(", ".join(f"{c} {_percent(q.codes_issued.get(c, 0) / total)}"
                               for c in CODES) if total else ""),
            "codes_pvalue": Markup(_num(q.codes_pvalue, 3) if q.codes_pvalue is not None else ""),
            "warnings": list(q.warnings),
        })
    return {
        "survey": report.survey,
        "title": report.title,
        "level": level,
        "method": report.method,
        "issued": Markup(f"{report.issued:,}"),
        "epsilon_total_shafer": Markup(_num(report.epsilon_total_shafer)),
        "epsilon_total_walley": Markup(_num(report.epsilon_total_walley)),
        "warning_count": report.warning_count,
        "alpha": Markup(f"{ALPHA:.0%}"),
        "questions": questions,
    }
