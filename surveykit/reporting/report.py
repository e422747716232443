"""The estimation report: per-question estimates, privacy accounting and compliance checks.

:func:`build_report` turns a survey definition and its answer counts (from one
SQL aggregation, :func:`surveykit.store.count_responses`) into a
:class:`Report` of plain numbers and plain-language warnings, for any design
(:mod:`surveykit.designs`); :func:`render_report` formats it as text (80
columns), Markdown, HTML (one self-contained file with inline SVG plots) or JSON.

Privacy accounting: a respondent who answers every question releases the
product of the question mechanisms, whose loss is at most the sum of the
questions' losses in either semantics (Lemmas 3.3 and 3.15). Designs with
nuisance parameters count their worst case over the parameter's range.

Checks (a warning is raised at the 1% level, ``ALPHA``):

* don't-know compliance: the number of "don't know" answers against
  Binomial(answered, designed share), two-sided exact binomial test;
* randomizer audit (when questionnaires were issued): the instructions issued
  per group against the design's protocol, chi-square goodness of fit; the
  store keeps instruction totals only of ``generate`` runs with at least
  ``AUDIT_MINIMUM_PER_GROUP`` respondents per group, so the audit covers
  those and the report says how many respondents that is. Holm's correction
  over the audited questions keeps the chance that a correct randomizer raises
  any audit warning in the report at 1% (:func:`audit_codes`);
* the design's goodness of fit (G2) where the design is over-identified beyond
  its don't-know share (several groups);
* pi_hat outside [0, 1], fewer than ``MIN_YES_NO`` informative answers, no answers,
  and what the estimator reports (a nuisance parameter it cannot identify).

When the survey declares ``[[models]]``, the report adds a regression section:
each model fitted on the stored answers and covariates
(:mod:`surveykit.workflows.regress`), or the reason it could not be. When it declares
``[[joint]]``, a joint analysis section (:mod:`surveykit.reporting.joint_section`): the
questions' joint shares, estimated as ``surveykit joint`` does, or the reason they could
not be.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from surveykit.counts import AnswerTotals, Counts
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import Survey
from surveykit.designs.base import DONT_KNOW, Design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import ConfidenceInterval, Estimate, estimate
from surveykit.estimation.binomial import binomial_map
from surveykit.estimation.compliance import ALPHA, dont_know_check
from surveykit.estimation.distributions import chi2_upper_tail
from surveykit.estimation.estimate import CI_METHODS, GENERAL_METHODS, default_interval_method
from surveykit.numeric_counts import NumericCounts
from surveykit.reporting.joint_section import JointSection, joint_context, joint_svg, joint_text
from surveykit.reporting.models import ModelFit
from surveykit.reporting.numeric_section import (
    NumericSection,
    numeric_context,
    numeric_section,
    numeric_svg,
    numeric_text,
)
from surveykit.reporting.plots import forest_plot_svg, privacy_accuracy_svg
from surveykit.vocabulary import level_text, loss_fields, p_value_text
from surveykit.vocabulary import number_text as _num
from surveykit.vocabulary import percent_text as _percent

__all__ = [
    "ALPHA",
    "MIN_YES_NO",
    "REPORT_FORMATS",
    "QuestionReport",
    "Report",
    "build_report",
    "render_report",
]

#: Significance level of the compliance and randomizer checks.
#: Below this many informative answers the interval rests on too little data.
MIN_YES_NO = 30
REPORT_FORMATS = ("text", "markdown", "html", "json")


@dataclass(frozen=True, kw_only=True)
class QuestionReport(AnswerTotals):
    """One question's line of the report: counts, estimate, privacy, checks."""

    id: str
    text: str
    design: Design
    counts: Counts
    missing: int
    estimate: Estimate | None
    interval: ConfidenceInterval | None
    method: str
    dont_know_designed: float
    dont_know_pvalue: float | None
    codes_issued: Mapping[int, Mapping[str, int]] | None
    codes_pvalue: float | None
    warnings: tuple[str, ...] = field(default=())
    #: The audit's p-value after Holm's correction over every audited question (None when
    #: no question, or only this one, was audited).
    codes_pvalue_holm: float | None = None
    level: float = 0.95

    @property
    def informative(self) -> int:
        """Answers other than "don't know"."""
        return self.answered - self.dont_know

    @property
    def dont_know_observed(self) -> float | None:
        """The observed share of "don't know" among the answers."""
        return self.dont_know / self.answered if self.answered else None

    @property
    def mechanism(self) -> Design:
        """The question's design (surveykit 0.1's name for it)."""
        return self.design

    @property
    def p(self) -> float | None:
        """The generalized Warner's p (truthful), None for other designs."""
        return self.design.parameters().get("p") if self.design.flat_parameters else None

    @property
    def q(self) -> float | None:
        """The generalized Warner's q (opposite), None for other designs."""
        return self.design.parameters().get("q") if self.design.flat_parameters else None

    @property
    def epsilon_shafer(self) -> float:
        """Shafer loss (Def. 3.1), worst case over nuisance ranges."""
        return self.design.epsilon_shafer

    @property
    def epsilon_walley(self) -> float:
        """Walley loss (Def. 3.13), worst case over nuisance ranges."""
        return self.design.epsilon_walley

    def to_dict(self) -> dict:
        """The JSON object of this question (the keys of ``surveykit report --format json``).

        The keys of surveykit 0.1 keep their names and meaning for yes/no
        designs; the estimate's own keys (design, counts, estimates,
        parameters, loglik, fit) are added.
        """
        e = self.estimate
        data: dict = {}
        if e is not None:
            data.update(e.to_dict(level=self.level, method=self.method))
        data.update({
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
            "ci_method": self.method,
            **loss_fields("epsilon_shafer", self.epsilon_shafer),
            **loss_fields("epsilon_walley", self.epsilon_walley),
            "design": self.design.spec(),
            "counts": self.counts.to_dict(),
            "dont_know_designed": self.dont_know_designed,
            "dont_know_observed": self.dont_know_observed,
            "dont_know_pvalue": self.dont_know_pvalue,
            "codes_issued": ({str(g): dict(c) for g, c in self.codes_issued.items()}
                             if self.codes_issued is not None else None),
            "codes_pvalue": self.codes_pvalue,
            "codes_pvalue_holm": self.codes_pvalue_holm,
            "warnings": list(self.warnings),
        })
        return data


@dataclass(frozen=True, kw_only=True)
class Report:
    """The whole survey's report."""

    survey: str
    title: str
    level: float
    method: str
    issued: int
    questions: tuple[QuestionReport, ...]
    models: tuple[ModelFit, ...] = ()
    #: The survey's declared joint analyses (``[[joint]]``), already estimated.
    joint: tuple[JointSection, ...] = ()
    #: Its numeric questions (``type = "number"``), in survey order.
    numeric: tuple[NumericSection, ...] = ()
    #: Every question id in survey order (choice and numeric questions interleaved).
    order: tuple[str, ...] = ()
    #: Respondents whose instructions the randomizer audit covers: those of the runs whose
    #: instruction totals the store keeps (AUDIT_MINIMUM_PER_GROUP and more per group).
    audited: int = 0

    @property
    def audit_coverage(self) -> str:
        """A sentence on whom the randomizer audit covers, and why not the others
        (empty when no questionnaires were issued)."""
        if not self.issued:
            return ""
        if self.audited >= self.issued:
            return "The randomizer audit covers all of them."
        why = (f"issued in die mode or in runs of fewer than {AUDIT_MINIMUM_PER_GROUP} "
               "respondents per form version, whose instruction totals are not kept (they "
               "would reveal the runs' instructions)")
        if not self.audited:
            return f"The randomizer audit covers none of them: they were {why}."
        return (f"The randomizer audit covers {self.audited:,} of them; the other "
                f"{self.issued - self.audited:,} were {why}.")

    @property
    def epsilon_total_shafer(self) -> float | None:
        """Loss of a respondent who answered every question: the sum (Lemma 3.3); None when
        a numeric question states no range (its loss is not stated)."""
        return self._total("shafer")

    @property
    def epsilon_total_walley(self) -> float | None:
        """The same in Walley's semantics (Lemma 3.15)."""
        return self._total("walley")

    def _total(self, semantics: str) -> float | None:
        numeric = [section.loss(semantics) for section in self.numeric]
        if any(loss is None for loss in numeric):
            return None
        return math.fsum([*(getattr(q, f"epsilon_{semantics}") for q in self.questions),
                          *numeric])

    @property
    def all_questions(self) -> str:
        """``"all 4 questions"``, or ``"the 1 question"``: what a respondent answered."""
        count = len(self.questions) + len(self.numeric)
        return f"all {count} questions" if count != 1 else "the 1 question"

    def in_order(self) -> list[QuestionReport | NumericSection]:
        """Every question's part of the report, choice and numeric, in survey order."""
        parts = {part.id: part for part in (*self.questions, *self.numeric)}
        order = self.order or tuple(parts)
        return [parts[name] for name in order if name in parts]

    @property
    def audit_rule(self) -> str:
        """How the randomizer audit controls its false alarms (empty without an audit)."""
        audited = sum(q.codes_pvalue is not None for q in self.questions)
        if audited <= 1:
            return ""
        return (f"The randomizer audit tests {audited} questions with Holm's correction: a "
                f"correct randomizer raises an audit warning in at most {ALPHA:.0%} of "
                "reports.")

    @property
    def interval_methods(self) -> str:
        """The interval methods the questions use: one name when they share it, else each
        method with its questions (``"wilson-cc (tax), likelihood-ratio (doping, cheat)"``)."""
        by_method: dict[str, list[str]] = {}
        for q in self.questions:
            by_method.setdefault(q.method, []).append(q.id)
        if len(by_method) <= 1:
            return next(iter(by_method), self.method)
        return ", ".join(f"{method} ({', '.join(ids)})" for method, ids in by_method.items())

    @property
    def method_note(self) -> str:
        """One sentence naming the questions whose design lacks the interval method asked
        for (they use their design's default); empty when every question has it."""
        others = [q for q in self.questions
                  if self.method in CI_METHODS and q.method != self.method]
        if not others:
            return ""
        used = sorted({q.method for q in others})
        where = ", ".join(f"{q.id} ({q.design.model})" for q in others)
        return (f"The interval method {self.method} needs a one-group yes/no design, so "
                f"{where} {'uses' if len(others) == 1 else 'use'} "
                f"{' or '.join(used)}, the design's default.")

    @property
    def warning_count(self) -> int:
        """How many warnings the questions carry."""
        return (sum(len(q.warnings) for q in self.questions)
                + sum(len(n.warnings) + (n.error is not None) for n in self.numeric))

    def to_frame(self):
        """One row per question (indexed by id) with the JSON keys, for pandas and notebooks.

        >>> # report_for_survey(open_engine("surveykit.db"), "academic_integrity").to_frame()
        """
        import pandas as pd

        rows = []
        for q in self.questions:
            row = q.to_dict()
            row["warnings"] = len(row["warnings"])
            row["design"] = q.design.describe()
            # numbers in the frame: inf, not JSON's "inf"
            row["epsilon_shafer"], row["epsilon_walley"] = q.epsilon_shafer, q.epsilon_walley
            for key in ("codes_issued", "counts", "estimates", "parameters", "fit"):
                row.pop(key, None)
            rows.append(row)
        for section in self.numeric:
            row = section.to_dict()
            row["warnings"] = len(row["warnings"])
            row["design"] = section.question.design.describe()
            row["epsilon_shafer"] = section.loss("shafer")
            row["epsilon_walley"] = section.loss("walley")
            for key in ("privacy", "quantiles", "alternatives", "groups", "range"):
                row.pop(key, None)
            rows.append(row)
        by_id = {row["id"]: row for row in rows}
        ordered = [by_id[name] for name in self.order if name in by_id] or rows
        return pd.DataFrame(ordered).set_index("id")

    def _repr_html_(self) -> str:
        """A table of the estimates, for Jupyter (every user text escaped)."""
        from markupsafe import escape

        rows = []
        for q in self.questions:
            e = q.estimate
            binary = e is not None and q.design.is_binary
            ci = (f"[{_num(q.interval.low, 3)}, {_num(q.interval.high, 3)}]"
                  if q.interval is not None and binary else "-")
            answers = f"{q.answered:,}"
            if e is not None and len(q.design.group_names) > 1:
                # a multi-group design is estimated from its groups' answers, not the pool
                answers += " (" + ", ".join(f"group {g}: {int(row.sum()):,}" for g, row
                                            in enumerate(e.counts, start=1)) + ")"
            parameters = "; ".join(
                f"{escape(name)} {_num(value['estimate'], 3)} (se {_num(value['se'], 3)})"
                for name, value in (e.parameters if e is not None else {}).items()) or "-"
            rows.append(
                f"<tr><td>{escape(q.id)}</td><td>{escape(q.design.describe())}</td>"
                f"<td>{_num(e.pi_mle if binary else None, 3)}</td><td>{ci}</td>"
                f"<td>{_num(e.se if binary else None, 3)}</td><td>{parameters}</td>"
                f"<td>{answers}</td><td>{len(q.warnings)}</td></tr>")
        return (f"<p><b>{escape(self.title)}</b> ({escape(self.survey)}): "
                f"{self.level:.0%} intervals</p><table><thead><tr><th>question</th>"
                "<th>design</th><th>pi_mle</th><th>interval</th><th>se</th>"
                "<th>other parameters</th><th>answers</th><th>warnings</th></tr></thead>"
                "<tbody>" + "".join(rows) + "</tbody></table>")

    def to_dict(self) -> dict:
        """Plain data for JSON; an infinite loss (no protection) is ``"inf"`` with
        ``..._finite`` false (:func:`surveykit.vocabulary.loss_fields`)."""
        return {
            "survey": self.survey,
            "title": self.title,
            "level": self.level,
            "ci_method": self.method,
            "ci_method_note": self.method_note or None,
            "respondents_issued": self.issued,
            "respondents_audited": self.audited,
            **loss_fields("epsilon_total_shafer", self.epsilon_total_shafer),
            **loss_fields("epsilon_total_walley", self.epsilon_total_walley),
            "questions": [{"type": "choice", **part.to_dict()}
                          if isinstance(part, QuestionReport) else part.to_dict()
                          for part in self.in_order()],
            "models": [_model_dict(m, self.level) for m in self.models],
            "joint": [section.to_dict(level=self.level) for section in self.joint],
        }


def _model_dict(model: ModelFit, level: float) -> dict:
    """A declared model in the JSON report: its formula and question, and the fit's
    ``to_dict()`` (the keys of ``surveykit regress --format json``) or the error."""
    return {"formula": model.spec.formula, "question": model.spec.question,
            "fit": model.result.to_dict(level=level) if model.result is not None else None,
            "error": model.error}


def holm_adjusted(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (Holm 1979): rejecting where the adjusted p-value is
    below alpha keeps the chance of any false rejection among all the tests at most alpha,
    whatever their dependence.

    The i-th smallest of m p-values becomes max over j <= i of min(1, (m - j + 1) p_(j)).

    >>> holm_adjusted({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'c': 0.06, 'b': 0.06}
    """
    ordered = sorted(pvalues.items(), key=lambda item: item[1])
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, (key, pvalue) in enumerate(ordered):
        running = max(running, min(1.0, (len(ordered) - rank) * pvalue))
        adjusted[key] = running
    return adjusted


def audit_codes(tallies: Mapping[str, Mapping[int, Mapping[str, int]]],
                designs: Mapping[str, Design]) -> dict[str, tuple[float, float | None, str]]:
    """The randomizer audit of every question: (p-value, Holm-adjusted p-value or None with
    a single question, warning or ""), by question id.

    A warning is raised where the Holm-adjusted p-value is below ``ALPHA``, so the chance
    that a correct randomizer raises any warning in the whole report is at most ``ALPHA``
    (an audit at ALPHA per question would raise one in about 1 - (1 - ALPHA)^m reports).
    """
    checks = {qid: _codes_check(issued, designs[qid]) for qid, issued in tallies.items()}
    pvalues = {qid: check[0] for qid, check in checks.items() if check[0] is not None}
    adjusted = holm_adjusted(pvalues)
    out: dict[str, tuple[float, float | None, str]] = {}
    for qid, pvalue in pvalues.items():
        holm = adjusted[qid] if len(pvalues) > 1 else None
        flagged = (holm if holm is not None else pvalue) < ALPHA
        shares_text = checks[qid][1]
        where = (f"chi-square p = {pvalue:.2g}" if holm is None else
                 f"chi-square p = {pvalue:.2g}, {holm:.2g} after Holm's correction over the "
                 f"{len(pvalues)} questions audited")
        out[qid] = (pvalue, holm, "" if not flagged else (
            f"The issued instructions ({shares_text}) differ from the design ({where}). A "
            "secure randomizer almost never does this: check how the questionnaires were "
            "generated before trusting the estimate."))
    return out


def _codes_check(issued: Mapping[int, Mapping[str, int]], design: Design
                 ) -> tuple[float | None, str]:
    """Chi-square test of the instructions issued per group against the design's protocol:
    its p-value and the issued and designed shares as text.

    The statistics of the groups add up, and so do their degrees of freedom: Pearson's
    sum of (observed - expected)^2 / expected, and its chi-square tail from
    :func:`~surveykit.estimation.distributions.chi2_upper_tail` (``scipy.stats`` would
    cost a text report most of its CPU to import).
    """
    statistic, df, impossible = 0.0, 0, False
    shares_text: list[str] = []
    if len(design.group_names) == 1 and len(issued) > 1:
        # a one-group question in a multi-group survey: tallies are kept per form version,
        # and every version draws from the same protocol
        pooled: dict[str, int] = {}
        for counts in issued.values():
            for code, n in counts.items():
                pooled[code] = pooled.get(code, 0) + n
        issued = {1: pooled}
    for group, counts in sorted(issued.items()):
        total = sum(counts.values())
        if total == 0 or not 1 <= group <= len(design.group_names):
            continue
        expected_shares: dict[str, float] = {}
        for instruction in design.protocol.for_group(group - 1):
            expected_shares[instruction.code] = (expected_shares.get(instruction.code, 0.0)
                                                 + float(instruction.probability))
        # the protocol's order (truthful, opposite, dont_know, ...), then anything unexpected
        codes = list(expected_shares) + sorted(c for c in counts if c not in expected_shares)
        if any(expected_shares.get(c, 0.0) == 0 and counts.get(c, 0) > 0 for c in codes):
            impossible = True
        used = [c for c in codes if expected_shares.get(c, 0.0) > 0]
        if len(used) > 1:
            observed = [counts.get(c, 0) for c in used]
            expected = [expected_shares[c] * total for c in used]
            statistic += sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))
            df += len(used) - 1
        realized = ", ".join(f"{c} {_percent(counts.get(c, 0) / total)}" for c in codes)
        wanted = ", ".join(f"{c} {_percent(expected_shares.get(c, 0.0))}" for c in codes)
        where = f"group {design.group_names[group - 1]}: " if len(design.group_names) > 1 else ""
        shares_text.append(f"{where}{realized}; design {wanted}")
    if not shares_text or (df == 0 and not impossible):
        return None, ""  # nothing to test: every group's protocol has one instruction
    pvalue = 0.0 if impossible else chi2_upper_tail(statistic, df)
    return pvalue, "; ".join(shares_text)


def _question_counts(design: Design, counts: Counts) -> dict:
    """Counts keyed for the design: one-group designs pool the survey's groups."""
    if len(design.group_names) == 1:
        pooled: dict[str, int] = {}
        for _, label, n in counts:
            pooled[label] = pooled.get(label, 0) + n
        return {"1": pooled}
    return counts.to_dict()


def _as_counts(row) -> Counts:
    """A store row (QuestionCounts) or any object with yes/no/dont_know as Counts."""
    if isinstance(getattr(row, "counts", None), Counts):
        return row.counts
    return Counts.single({"yes": row.yes, "no": row.no, "dont_know": row.dont_know})


def build_report(
    survey: Survey,
    counts: Sequence,
    *,
    code_tallies: Mapping[str, Mapping[int, Mapping[str, int]]] | None = None,
    issued: int = 0,
    level: float = 0.95,
    method: str | None = None,
    models: Sequence[ModelFit] = (),
    joint: Sequence[JointSection] = (),
    numeric: Sequence[NumericSection] = (),
) -> Report:
    """Estimates and checks for every question of ``survey``.

    ``counts`` holds, per question, objects with ``question_id``, ``counts``
    (a :class:`~surveykit.counts.Counts` per group; or ``yes``, ``no``,
    ``dont_know``) and ``missing``, as :func:`surveykit.store.count_responses`
    returns them; ``code_tallies`` maps question ids to group number to
    instruction code to count. ``method`` None uses each design's default
    interval (Wilson-cc for one-group yes/no designs, likelihood-ratio otherwise).
    ``models`` are the survey's declared models, already fitted
    (:func:`surveykit.workflows.regress.fit_declared_models`); ``joint`` its declared joint
    analyses, already estimated (:func:`surveykit.workflows.report.report_for_survey`).
    ``numeric`` holds the sections of its numeric questions
    (:func:`surveykit.reporting.numeric_section.numeric_section`); a numeric question
    without one is reported as having no answers.
    """
    by_id = {c.question_id: c for c in counts}
    choice = [q for q in survey.questions if not q.numeric]
    audits = audit_codes({q.id: code_tallies[q.id] for q in choice
                          if code_tallies and q.id in code_tallies} if issued else {},
                         {q.id: q.design for q in choice})
    given = {section.id: section for section in numeric}
    sections = tuple(given.get(q.id) or numeric_section(q, NumericCounts.from_mapping({}),
                                                        level=level)
                     for q in survey.questions if q.numeric)
    rows = []
    for question in choice:
        design = question.design
        row = by_id.get(question.id)
        question_counts = _as_counts(row) if row is not None else Counts.from_mapping({})
        missing = row.missing if row is not None else 0
        keyed = Counts.from_mapping(_question_counts(design, question_counts))
        warnings: list[str] = []
        result = interval = None
        used_method = method
        answered = keyed.total
        dont_know = sum(n for _, label, n in keyed if label == DONT_KNOW)
        informative = answered - dont_know
        if answered == 0:
            warnings.append("No answers to this question: there is nothing to estimate.")
        elif informative == 0:
            what = "yes/no answers" if design.is_binary else "other answers"
            warnings.append(
                f"Only \"don't know\" answers: pi cannot be estimated without {what}.")
        else:
            try:
                result = estimate(design=design, counts=keyed.to_dict())
            except EstimationError as exc:
                warnings.append(f"No estimate: {exc}.")
        used_method = _interval_method(design, method)
        if result is not None:
            category = None if design.is_binary else design.category_labels[0]
            interval = result.confidence_interval(level, used_method, category)
            warnings.extend(result.warnings)
            pi_hat = result.pi_hat
            if pi_hat is not None and (pi_hat < 0 or pi_hat > 1):
                side, bound = ("below 0", "0") if pi_hat < 0 else ("above 1", "1")
                warnings.append(
                    f"pi_hat = {pi_hat:.4f} is {side}: there are "
                    f"{'fewer' if pi_hat < 0 else 'more'} \"yes\" answers than even "
                    f"pi = {bound} predicts. The report shows the maximum-likelihood estimate "
                    f"on [0, 1], pi_mle = {bound}; this happens by chance when the true "
                    "share is near the edge, or when respondents did not follow the design."
                )
            if informative < MIN_YES_NO:
                what = "yes/no answers" if design.is_binary else "answers other than don't know"
                warnings.append(
                    f"Only {informative} {what} (fewer than {MIN_YES_NO}): the standard "
                    "error and the interval rest on very little data; collect more answers "
                    "before relying on them."
                )
            warnings.extend(_fit_warning(result))
        designed = float(design.designed_dont_know)
        check = dont_know_check(dont_know, answered, design.designed_dont_know, alpha=ALPHA)
        pvalue = check.pvalue
        if check.warning:
            warnings.append(check.warning)
        codes = code_tallies.get(question.id) if code_tallies else None
        codes_pvalue, codes_holm, warning = audits.get(question.id, (None, None, ""))
        if warning:
            warnings.append(warning)
        report = QuestionReport(
            id=question.id, text=question.text, design=design, counts=question_counts,
            missing=missing, estimate=result, interval=interval, method=used_method,
            dont_know_designed=designed, dont_know_pvalue=pvalue,
            codes_issued=({g: dict(c) for g, c in codes.items()}
                          if codes is not None and issued else None),
            codes_pvalue=codes_pvalue, codes_pvalue_holm=codes_holm, warnings=tuple(warnings),
            level=level)
        rows.append(report)
    audited = max((sum(n for counts in groups.values() for n in counts.values())
                   for groups in code_tallies.values()), default=0) if code_tallies else 0
    return Report(survey=survey.name, title=survey.title, level=level,
                  method=method if method is not None else "design default",
                  issued=issued, questions=tuple(rows), models=tuple(models),
                  joint=tuple(joint), audited=audited if issued else 0, numeric=sections,
                  order=tuple(q.id for q in survey.questions))


def _interval_method(design: Design, method: str | None) -> str:
    """The method asked for, where the design has it; else the design's default.

    Every design has the general methods (likelihood-ratio, wald); the binomial ones
    (wilson-cc, wilson, clopper-pearson) only one-group yes/no designs.

    >>> from surveykit.designs import make_design
    >>> _interval_method(make_design("sld", p=[0.2, 0.8]), "wilson-cc")
    'likelihood-ratio'
    >>> _interval_method(make_design("warner", p=0.7), "clopper-pearson")
    'clopper-pearson'
    """
    if method is None or (method not in GENERAL_METHODS and binomial_map(design) is None):
        return default_interval_method(design)
    return method


def _fit_is_the_dont_know_test(result: Estimate) -> bool:
    """Whether the fit's G2 tests nothing but the don't-know share, which the don't-know
    check tests already (a one-group design with a don't-know branch: df 1)."""
    groups = int((result.counts.sum(axis=1) > 0).sum())
    dont_know_df = groups if result.design.designed_dont_know > 0 else 0
    return result.df <= dont_know_df


def _fit_warning(result: Estimate) -> list[str]:
    """A warning when the answers do not fit the design beyond its don't-know share."""
    if result.g2 is None or result.fit_pvalue is None or result.fit_pvalue >= ALPHA:
        return []
    if _fit_is_the_dont_know_test(result):
        return []  # only the don't-know share is over-identified: its own test speaks
    return [f"The answers do not fit the design (G2 = {result.g2:.2f}, df = {result.df}, "
            f"p = {result.fit_pvalue:.2g}): the groups disagree more than chance allows; check "
            "the design's parameters and whether respondents followed their instructions."]


# -- rendering ---------------------------------------------------------------------------------

WIDTH = 80


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _share_text(value: float | None, se: float | None, interval, level: str) -> str:
    ci = f", {level} CI [{_num(interval[0], 4)}, {_num(interval[1], 4)}]" if interval else ""
    return f"{_num(value, 4)} (se {_num(se, 4)}{ci})"


def _label(label: str) -> str:
    return "don't know" if label == DONT_KNOW else label


def question_facts(q: QuestionReport) -> list[tuple[str, str]]:
    """(label, text) lines describing one question: what the text, Markdown and HTML reports
    show under it (plain text; templates escape it)."""
    level = level_text(q.level)
    design = q.design
    facts: list[tuple[str, str]] = []
    groups = q.counts.to_dict()
    parts = []
    for group, row in groups.items():
        shown = ", ".join(f"{_label(label)} {n:,}" for label, n in row.items())
        parts.append(f"group {group}: {shown}" if len(groups) > 1 else shown)
    answers = "; ".join(parts) if parts else "none"
    if not groups or (len(groups) == 1 and design.is_binary
                      and set(design.response_labels) == {"yes", "no", DONT_KNOW}):
        answers = f"yes {q.yes:,}, no {q.no:,}, don't know {q.dont_know:,}"
    facts.append(("answers", f"{answers}, missing {q.missing:,}"))
    if design.flat_parameters:
        shown = ", ".join(f"{key} = {value:g}" for key, value in design.parameters().items())
        facts.append(("mechanism", f"{shown}, don't know {_percent(q.dont_know_designed)}"))
    else:
        facts.append(("design", design.describe()))
    privacy = f"epsilon Shafer {_num(q.epsilon_shafer)}, Walley {_num(q.epsilon_walley)}"
    e = q.estimate
    if design.nuisance:
        privacy += " (worst case)"
        if e is not None:
            values = {p.name: float(v) for p, v in zip(design.nuisance, e.nuisance, strict=True)}
            privacy += (f"; at the estimate {_num(design.privacy_loss('shafer', values))}, "
                        f"{_num(design.privacy_loss('walley', values))}")
    facts.append(("privacy", privacy))
    if e is not None:
        if design.is_binary:
            facts.append(("estimate", f"pi_hat {_num(e.pi_hat, 4)}, pi_mle {_num(e.pi_mle, 4)},"
                                      f" se {_num(e.se, 4)}, {level} CI "
                                      f"[{_num(q.interval.low, 4)}, {_num(q.interval.high, 4)}]"))
        else:
            for category in design.category_labels:
                interval = e.confidence_interval(q.level, q.method, category)
                facts.append(("estimate", f"{category}: " + _share_text(
                    e.share(category), e.share_se(category), interval, level)))
        for name, value in e.parameters.items():
            facts.append((name, f"{_num(value['estimate'], 4)} (se {_num(value['se'], 4)})"))
        if e.g2 is not None and not _fit_is_the_dont_know_test(e):
            facts.append(("fit", f"G2 {e.g2:.2f}, df {e.df}, p = {p_value_text(e.fit_pvalue)}"))
    # a design without a don't-know branch has no line for it (its warnings say when
    # respondents answered "don't know" all the same)
    if q.dont_know_observed is not None and q.dont_know_designed > 0:
        facts.append(("don't know", f"{_percent(q.dont_know_observed)} observed, "
                                    f"{_percent(q.dont_know_designed)} designed "
                                    f"(p = {p_value_text(q.dont_know_pvalue)})"))
    if q.codes_issued:
        shown = []
        for group, counts in sorted(q.codes_issued.items()):
            total = sum(counts.values()) or 1
            shares = ", ".join(f"{code} {_percent(n / total)}" for code, n in
                               sorted(counts.items(), key=lambda item: -item[1]))
            shown.append(f"group {group}: {shares}" if len(q.codes_issued) > 1 else shares)
        holm = (f", Holm {p_value_text(q.codes_pvalue_holm)}" if q.codes_pvalue_holm is not None
                else "")
        facts.append(("codes", f"issued {'; '.join(shown)} (p = {p_value_text(q.codes_pvalue)}"
                               f"{holm})"))
    return facts


def format_text(report: Report) -> str:
    """The report for an 80-column terminal."""
    level = level_text(report.level)
    lines = _wrap(f"{report.title} ({report.survey})", "")
    lines += _wrap(
        f"Privacy loss of a respondent who answered {report.all_questions}: "
        f"Shafer {_num(report.epsilon_total_shafer)}, Walley {_num(report.epsilon_total_walley)} "
        "(losses add up, Lemmas 3.3 and 3.15).", "")
    if report.issued:
        lines += _wrap(f"Questionnaires issued: {report.issued:,}. {report.audit_coverage}",
                       "")
    lines.append("")
    header = f"{'question':<22}{'pi_mle':>8}{level + ' CI':>20}{'se':>8}{'yes/no':>9}{'dk':>7}"
    lines += [header, "-" * len(header)]
    for q in report.questions:
        ci = f"[{_num(q.interval.low)}, {_num(q.interval.high)}]" if q.interval else "-"
        name = q.id if len(q.id) <= 21 else q.id[:20] + "~"
        binary = q.estimate is not None and q.design.is_binary
        lines.append(
            f"{name:<22}{_num(q.estimate.pi_mle if binary else None):>8}"
            f"{ci if binary else '-':>20}{_num(q.estimate.se if binary else None):>8}"
            f"{q.informative:>9,}{q.dont_know:>7,}"
        )
    lines.append("")
    for q in report.questions:
        lines += _wrap(f"{q.id}: {q.text}", "")
        for label, value in question_facts(q):
            lines += textwrap.wrap(value, WIDTH, initial_indent=f"  {label:<10} ",
                                   subsequent_indent=" " * 13)
        for warning in q.warnings:
            lines += _wrap("! " + warning, "  ")
        lines.append("")
    if report.numeric:
        lines += _wrap("Numeric questions (mean and total of the true values):", "")
        lines.append("")
    for section in report.numeric:
        lines += numeric_text(section) + [""]
    for model in report.models:
        lines += _wrap(f"Model: {model.spec.formula}", "")
        if model.result is None:
            lines += _wrap(f"! No fit: {model.error}", "  ")
        else:
            lines += model.result.summary(level=report.level).splitlines()
        lines.append("")
    for section in report.joint:
        lines += joint_text(section, report.level) + [""]
    lines += _wrap(f"Intervals: {report.interval_methods}; checks at the {ALPHA:.0%} level. "
                   f"{report.warning_count} warning(s).", "")
    if report.audit_rule:
        lines += _wrap(report.audit_rule, "")
    if report.method_note:
        lines += _wrap(report.method_note, "")
    return "\n".join(lines) + "\n"


def render_report(report: Report, fmt: str = "text", *, templates_dir=None) -> str:
    """The report as text, markdown, html (self-contained, with inline SVG plots) or json."""
    if fmt == "text":
        return format_text(report)
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n"
    if fmt in ("markdown", "html"):
        # a lazy loader (docs/architecture.md): the CLI imports this module for --help
        # (REPORT_FORMATS); Jinja loads only for a Markdown or HTML report
        from surveykit.templating import get_template, make_environment

        environment = make_environment(templates_dir)
        context = {"report": report_context(report)}
        if fmt == "html":
            context["forest_svg"] = forest_plot_svg(report)
            context["curves"] = {q.id: privacy_accuracy_svg(q) for q in report.questions}
            context["joint_plots"] = [joint_svg(section, report.level)
                                      for section in report.joint]
            context["numeric_plots"] = [numeric_svg(section) for section in report.numeric]
        return get_template(environment, "report", fmt).render(**context)
    raise ParameterError(f"format ({fmt!r}) must be one of {', '.join(REPORT_FORMATS)}")


def report_context(report: Report) -> dict:
    """Plain, pre-formatted data for the report templates (they do no arithmetic).

    Numbers formatted here are marked safe (``Markup``): they hold only digits
    and punctuation of our own. Everything a user typed (titles, ids, question
    text, labels and group names in the facts) stays a plain string and is
    escaped by the template environment.
    """
    level = Markup(f"{report.level:.0%}")
    questions = []
    for position, q in enumerate(report.questions, start=1):
        e = q.estimate
        binary = e is not None and q.design.is_binary
        questions.append({
            "id": q.id,
            # the HTML anchor the warnings at the top link to: a number, never the typed id
            "anchor": f"question-{position}",
            "text": q.text,
            "design": q.design.describe(),
            "yes": Markup(f"{q.yes:,}"),
            "no": Markup(f"{q.no:,}"),
            "dont_know": Markup(f"{q.dont_know:,}"),
            "missing": Markup(f"{q.missing:,}"),
            "answered": Markup(f"{q.answered:,}"),
            "dont_know_designed": Markup(_percent(q.dont_know_designed)),
            "dont_know_observed": Markup(_percent(q.dont_know_observed)
            if q.dont_know_observed is not None else "-"),
            "dont_know_pvalue": Markup(p_value_text(q.dont_know_pvalue)),
            "pi_hat": Markup(_num(e.pi_hat, 4) if binary else "-"),
            "pi_mle": Markup(_num(e.pi_mle, 4) if binary else "-"),
            "se": Markup(_num(e.se, 4) if binary else "-"),
            "ci": Markup(f"[{_num(q.interval.low, 4)}, {_num(q.interval.high, 4)}]"
            if q.interval and binary else "-"),
            "epsilon_shafer": Markup(_num(q.epsilon_shafer)),
            "epsilon_walley": Markup(_num(q.epsilon_walley)),
            "facts": question_facts(q),
            "warnings": list(q.warnings),
        })
    return {
        "survey": report.survey,
        "title": report.title,
        "level": level,
        "method": report.interval_methods,
        "method_note": report.method_note,
        "all_questions": report.all_questions,
        "audit_rule": report.audit_rule,
        "issued": Markup(f"{report.issued:,}"),
        "audit_coverage": report.audit_coverage,
        "epsilon_total_shafer": Markup(_num(report.epsilon_total_shafer)),
        "epsilon_total_walley": Markup(_num(report.epsilon_total_walley)),
        "warning_count": report.warning_count,
        "alpha": Markup(f"{ALPHA:.0%}"),
        "questions": questions,
        "models": [_model_context(model, report.level) for model in report.models],
        "joint": [joint_context(section, report.level) for section in report.joint],
        # the anchor the warnings at the top link to: a number, never the typed id
        "numeric": [{**numeric_context(section), "anchor": f"numeric-{position}"}
                    for position, section in enumerate(report.numeric, start=1)],
    }


def _linear_context(context: dict, data: dict, model: ModelFit) -> dict:
    """A numeric question's least squares (:class:`~surveykit.estimation.
    quantitative_regression.LinearFit`): its coefficients and sandwich standard errors."""
    role = "outcome" if data["mode"] == "outcome" else "predictor"
    context["title"] = (f"Linear regression with the scrambled {role} "
                        f"{model.spec.question}")
    context["rows"] = Markup(f"{data['n']:,}")
    context["dropped"] = Markup(f"{data['n_dropped']:,}")
    context["tables"].append({
        "title": f"Coefficients (sandwich standard errors, {data['cov_type']})",
        "header": ("term", "estimate", "std. error", "z", "p"),
        "body": [(record["term"], Markup(_num(record["estimate"], 4)),
                  Markup(_num(record["se"], 4)), Markup(_num(record["z"], 2)),
                  Markup(p_value_text(record["p_value"])))
                 for record in data["coefficients"]]})
    if data.get("dont_know"):
        context["notes"].append(f"{data['dont_know']:,} \"don't know\" answers left out")
    return context


def _model_context(model: ModelFit, level: float) -> dict:
    """A declared model for the templates: its tables as pre-formatted text (the
    coefficients, the sensitive answer's own model, nuisance parameters)."""
    context: dict = {"formula": model.spec.formula, "question": model.spec.question,
                     "error": model.error, "tables": [], "notes": []}
    result = model.result
    if result is None:
        return context
    data = result.to_dict(level=level)
    if "mode" in data:
        return _linear_context(context, data, model)
    kind = ("Logistic regression of the true answer" if data["model"] == "logistic" else
            f"{'Logistic' if result.family == 'binomial' else 'Linear'} regression with the "
            "true answer as a predictor")
    context["title"] = f"{kind} to {model.spec.question}"
    context["rows"] = Markup(f"{data['n']:,}")
    context["dropped"] = Markup(f"{data['n_dropped']:,}")
    header = ("term", "estimate", "std. error", "z", "p", "deltaG2", "p (deltaG2)")

    def table(title: str, records: list[dict]) -> dict:
        body = [(record["term"] if "category" not in record
                 else f"{record['category']}: {record['term']}",
                 Markup(_num(record["estimate"], 4)), Markup(_num(record["se"], 4)),
                 Markup(_num(record["z"], 2)), Markup(p_value_text(record["p_value"])),
                 Markup(_num(record["lr_chi2"], 2)), Markup(p_value_text(record["lr_p_value"])))
                for record in records]
        return {"title": title, "header": header, "body": body}

    outcome = "log-odds of a true 'yes'" if result.design.is_binary else "log-odds"
    if data["model"] == "logistic":
        context["tables"].append(table(f"Coefficients ({outcome})", data["coefficients"]))
    else:
        context["tables"].append(table("Coefficients (outcome model)", data["coefficients"]))
        context["tables"].append(table(f"The true answer's model ({outcome})",
                                       data["sensitive_coefficients"]))
    nuisance = [{"term": name, **values} for name, values in data["parameters"].items()]
    if nuisance:
        context["tables"].append(table("Nuisance parameters", nuisance))
    for category, values in data["prevalence"].items():
        if result.design.is_binary and category != "yes":
            continue
        context["notes"].append(
            f"Average prevalence of {category!r}: {_num(values['estimate'], 4)} (se "
            f"{_num(values['se'], 4)}; {level_text(level)} CI {_num(values['ci_low'], 4)}, "
            f"{_num(values['ci_high'], 4)})")
    context["notes"].append(f"Log-likelihood {_num(data['loglik'], 3)} (df {data['df']}), "
                            f"AIC {_num(data['aic'], 2)}, BIC {_num(data['bic'], 2)}; "
                            + ("converged" if data["converged"] else "NOT CONVERGED")
                            + f" after {data['iterations']} iterations")
    context["notes"] += list(data["warnings"])
    return context
