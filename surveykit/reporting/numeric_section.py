"""A numeric question (``type = "number"``) as the report shows it: the estimated mean and
total of the true values with their standard errors and interval, the answers behind
them, the privacy loss for the question's range, the quantiles where the design
identifies the distribution, and a plot of the reported answers' distribution beside
the estimated true one.

The section is built from what the store keeps, with no I/O:
:func:`numeric_section` takes the question, its :class:`~surveykit.numeric_counts.NumericCounts`
(n, sum and sum of squares per group: enough for the mean, whatever the number of
answers) and, where the caller has them, the reported answers themselves (for the
quantiles and the plot). A weighted or complex-sample estimate made elsewhere
(:mod:`surveykit.estimation.quantitative`) may be handed in as ``estimate``.

>>> from surveykit.definition.survey import Question
>>> from surveykit.designs.quantitative import MixNorm
>>> from surveykit.numeric_counts import NumericCounts
>>> q = Question("income", "Income?", MixNorm(p=0.5, mu=0, sigma=1), type="number",
...              range=(0.0, 10.0))
>>> section = numeric_section(q, NumericCounts.from_answers([1.0, 2.0, 3.0, 4.0]))
>>> section.to_dict()["mean"], section.to_dict()["epsilon_shafer"]
(5.0, 'inf')
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from markupsafe import Markup

from surveykit.definition.survey import Question
from surveykit.designs.quantitative_privacy import QuantitativePrivacy
from surveykit.errors import EstimationError, ParameterError, printable
from surveykit.estimation.distributions import normal_quantile
from surveykit.estimation.quantitative import NumericEstimate, estimate_mean
from surveykit.estimation.quantitative_distribution import (
    EstimatedDistribution,
    estimate_distribution,
)
from surveykit.numeric_counts import NumericCounts
from surveykit.reporting.plots import LABEL_PT, MIN_TEXT_PT, figure_svg, label_axes, new_figure
from surveykit.vocabulary import amount_text, level_text, loss_fields, percent_text
from surveykit.vocabulary import number_text as _num

__all__ = ["QUANTILES", "NumericSection", "numeric_context", "numeric_figure",
           "numeric_section", "numeric_svg", "numeric_text"]

#: The quantiles the report shows where the design identifies the distribution.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Fewer numeric answers than this: the report warns that the interval rests on little.
MIN_ANSWERS = 30
_WIDTH = 80


@dataclass(frozen=True, kw_only=True)
class NumericSection:
    """One numeric question's part of the report.

    ``estimate`` is None when no mean could be estimated (``error`` says why);
    ``privacy`` is None when the question declares no range (the loss is stated for a
    range of true values) or when it cannot be computed for it (``privacy_error`` says why:
    a range and decimals too fine to enumerate); ``distribution`` is the estimated
    distribution of the true values where the design identifies it and the answers were
    given; ``answers`` the reported numbers (for the plot), ``missing`` the respondents who
    left it blank; ``domains`` the estimate per value of the column ``by`` (``report --by``),
    in the order shown.
    """

    question: Question
    counts: NumericCounts
    estimate: NumericEstimate | None
    privacy: QuantitativePrivacy | None
    level: float = 0.95
    missing: int = 0
    distribution: EstimatedDistribution | None = None
    answers: np.ndarray | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    privacy_error: str | None = None
    by: str | None = None
    domains: Mapping[str, NumericEstimate] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def answered(self) -> int:
        """Numeric answers and "don't know" answers."""
        return self.counts.total.n + self.counts.dont_know

    def loss(self, semantics: str) -> float | None:
        """The privacy loss in ``semantics`` for the question's range (None: not stated)."""
        return None if self.privacy is None else self.privacy.loss(semantics)

    @property
    def privacy_text(self) -> str:
        """Where the privacy loss comes from, in plain words."""
        if self.privacy_error is not None:
            return f"not computed: {self.privacy_error}"
        if self.privacy is None:
            return ("not stated: the question declares no range of true values; add range = "
                    "[low, high] to the question (an unbounded answer with a truthful branch "
                    "reveals itself)")
        where = f"for true values in [{self.privacy.low:g}, {self.privacy.high:g}]"
        return (f"Shafer epsilon {_num(self.privacy.shafer)}, Walley epsilon "
                f"{_num(self.privacy.walley)} {where}: {self.privacy.explanation}")

    def to_dict(self) -> dict[str, object]:
        """The JSON record: ``mean``, ``se``, ``ci_low``, ``ci_high``, ``total``, ``total_se``
        (null where not defined; ``estimate`` is ``mean`` under the name every estimate of
        the report has), the answers, the privacy loss and the quantiles."""
        q = self.question
        record: dict[str, object] = {
            "id": q.id, "text": q.text, "type": "number", "unit": q.unit,
            "range": list(q.range) if q.range is not None else None, "decimals": q.decimals,
            "design": q.design.spec(), "n": self.counts.total.n, "dont_know": self.counts.dont_know,
            "missing": self.missing, "level": self.level,
            "groups": {g: s.n for g, s in self.counts},
        }
        fit = self.estimate.to_dict(self.level) if self.estimate is not None else {}
        for key in ("mean", "se", "ci_low", "ci_high", "total", "total_se", "total_ci_low",
                    "total_ci_high", "sampling", "population_size", "weighted",
                    "alternatives", "unrelated_mean", "unrelated_se",
                    "dont_know_observed", "dont_know_designed", "dont_know_pvalue"):
            record[key] = fit.get(key)
        record["estimate"] = record["mean"]
        record.update(loss_fields("epsilon_shafer", self.loss("shafer")))
        record.update(loss_fields("epsilon_walley", self.loss("walley")))
        record["privacy"] = self.privacy.to_dict() if self.privacy is not None else None
        record["privacy_text"] = self.privacy_text
        record["quantiles"] = (
            {"method": self.distribution.method,
             "values": [x.to_dict() for x in self.distribution.quantiles(QUANTILES,
                                                                        self.level)]}
            if self.distribution is not None else None)
        record["variance_method"] = fit.get("variance_method")
        record["by"] = self.by
        record["domains"] = [domain_record(label, e, self.level)
                             for label, e in self.domains.items()]
        record["error"] = self.error
        record["warnings"] = list(self.warnings)
        return record


def domain_record(label: str, estimate: NumericEstimate, level: float) -> dict[str, object]:
    """One domain of a numeric question for JSON, with the keys of a categorical domain
    (``domain``, ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``total``, ``total_se``) and
    the answers behind it (``n``, ``dont_know``)."""
    fit = estimate.to_dict(level)
    return {"domain": label, "estimate": fit["mean"], "se": fit["se"],
            "ci_low": fit["ci_low"], "ci_high": fit["ci_high"], "total": fit["total"],
            "total_se": fit["total_se"], "n": fit["n"], "dont_know": fit["dont_know"]}


def numeric_section(question: Question, counts: NumericCounts, *,
                    answers: Sequence[float] | np.ndarray | None = None,
                    groups: Sequence[object] | np.ndarray | None = None,
                    missing: int = 0, population_size: float | None = None,
                    level: float = 0.95, estimate: NumericEstimate | None = None,
                    by: str | None = None,
                    domains: Mapping[str, NumericEstimate] | None = None) -> NumericSection:
    """The section of numeric ``question`` from its ``counts``.

    ``answers`` (with ``groups`` for a two-group design) are the reported numbers, "don't
    know" left out: with them the section has the quantiles and a plot. ``estimate``, when
    given, is used as it is (a weighted or complex-sample estimate); otherwise the mean is
    estimated from ``counts`` under simple random sampling, with the total when
    ``population_size`` is known. ``domains`` (estimates by value of the column ``by``)
    are shown as they are given.
    """
    if not question.numeric:
        raise ParameterError(f"question {question.id!r} is not a numeric question")
    design = question.design
    warnings: list[str] = []
    error = None
    if estimate is None:
        if counts.total.n == 0:
            error = ("no numeric answers to this question: there is nothing to estimate"
                     if counts.dont_know == 0 else
                     "only \"don't know\" answers: the mean cannot be estimated without numbers")
        else:
            try:
                estimate = estimate_mean(design, counts, population_size=population_size)
            except (EstimationError, ParameterError) as exc:
                error = str(exc)
    if estimate is not None:
        warnings.extend(estimate.notes)
        check = estimate.dont_know_check()
        if check.warning:
            warnings.append(check.warning)
        if counts.total.n < MIN_ANSWERS:
            warnings.append(
                f"Only {counts.total.n} numeric answers (fewer than {MIN_ANSWERS}): the standard "
                "error and the interval rest on very little data; collect more answers "
                "before relying on them.")
        if question.range is not None and not (
                question.range[0] <= estimate.mean <= question.range[1]):
            warnings.append(
                f"The estimated mean ({estimate.mean:.6g}) lies outside the question's range "
                f"[{question.range[0]:g}, {question.range[1]:g}]: this happens by chance "
                "with few answers, or when respondents did not follow the design.")
    privacy = privacy_error = None
    if question.range is not None:
        try:
            privacy = design.privacy_loss(question.range[0], question.range[1],
                                          question.decimals)
        except ParameterError as exc:  # too many true values to enumerate: say so, go on
            privacy_error = str(exc)
    values = None
    distribution = None
    if answers is not None:
        values = np.asarray(answers, dtype=float).reshape(-1)
        try:
            distribution = estimate_distribution(design, values, groups=groups)
        except (EstimationError, ParameterError):
            distribution = None  # the design does not identify it: mean and total only
    return NumericSection(question=question, counts=counts, estimate=estimate,
                          privacy=privacy, level=level, missing=missing,
                          distribution=distribution, answers=values, error=error,
                          warnings=tuple(warnings), privacy_error=privacy_error, by=by,
                          domains=MappingProxyType(dict(domains or {})))


def _mean_text(e: NumericEstimate, unit: str | None, level: float) -> str:
    low, high = e.confidence_interval(level)
    return (f"{amount_text(e.mean, unit=unit)} (se {amount_text(e.se)}; {level_text(level)} "
            f"interval [{amount_text(low)}, {amount_text(high)}])")


def _total_text(e: NumericEstimate, unit: str | None, level: float) -> str:
    total = e.total_interval(level)
    return (f"{amount_text(e.total, unit=unit)} (se {amount_text(e.total_se)}; interval "
            f"[{amount_text(total.low)}, {amount_text(total.high)}])")


def numeric_facts(section: NumericSection) -> list[tuple[str, str]]:
    """(label, value) lines of the section, as the text and the templates show them.

    Values hold the unit, which the author typed: templates escape them."""
    q, e = section.question, section.estimate
    facts: list[tuple[str, str]] = []
    if e is not None:
        facts.append(("mean", _mean_text(e, q.unit, section.level)))
        if e.total is not None and e.total_interval(section.level) is not None:
            facts.append(("total", _total_text(e, q.unit, section.level)))
        for name, variance in e.alternatives.items():
            facts.append(("also", f"se {amount_text(math.sqrt(variance))} under {name}"))
        if e.variance_method is not None:
            facts.append(("variance", e.variance_method))
    for label, domain in section.domains.items():
        # the user's column and values: the templates and printable() escape them
        text = f"{section.by} = {label}: mean {_mean_text(domain, q.unit, section.level)}"
        if domain.total is not None and domain.total_interval(section.level) is not None:
            text += f"; total {_total_text(domain, q.unit, section.level)}"
        facts.append(("domain", f"{text}; {domain.n:,} numbers"))
    answered = section.answered
    dk = section.counts.dont_know
    designed = float(q.design.designed_dont_know)
    dk_text = (f"{dk:,} \"don't know\" ({percent_text(dk / answered)} observed, "
               f"{percent_text(designed)} designed)" if answered else "0 \"don't know\"")
    facts.append(("answers", f"{section.counts.total.n:,} numbers, {dk_text}, "
                             f"{section.missing:,} missing"))
    if q.range is not None:
        facts.append(("range", f"{q.range[0]:g} to {q.range[1]:g}"
                               + (f" {q.unit}" if q.unit else "")
                               + (f", {q.decimals} decimals" if q.decimals is not None
                                  else "")))
    facts.append(("design", q.design.describe()))
    facts.append(("privacy", section.privacy_text))
    if section.distribution is not None:
        quantiles = section.distribution.quantiles(QUANTILES, section.level)
        facts.append(("quantiles", ", ".join(f"{x.q:.0%}: {amount_text(x.estimate)}"
                                             for x in quantiles)
                      + f" ({section.distribution.method})"))
    return facts


def numeric_context(section: NumericSection) -> dict:
    """Plain, pre-formatted data for the report templates: numbers of our own are
    ``Markup``; the question's text, id, unit and design description stay plain strings,
    which the templates escape."""
    e = section.estimate
    fit = e.to_dict(section.level) if e is not None else {}
    return {
        "id": section.id, "text": section.question.text, "unit": section.question.unit,
        "mean": Markup(amount_text(fit.get("mean"))),
        "se": Markup(amount_text(fit.get("se"))),
        "ci": Markup("-" if e is None else
                     f"[{amount_text(fit['ci_low'])}, {amount_text(fit['ci_high'])}]"),
        "total": Markup(amount_text(fit.get("total"))),
        "n": Markup(f"{section.counts.total.n:,}"),
        "dont_know": Markup(f"{section.counts.dont_know:,}"),
        "missing": Markup(f"{section.missing:,}"),
        "epsilon_shafer": Markup(_num(section.loss("shafer"))),
        "epsilon_walley": Markup(_num(section.loss("walley"))),
        "facts": numeric_facts(section), "error": section.error,
        "warnings": list(section.warnings),
    }


def numeric_text(section: NumericSection) -> list[str]:
    """The section for an 80-column terminal (user text escaped for the terminal)."""
    q = section.question
    lines = textwrap.wrap(f"{printable(q.id)}: {printable(q.text)}", _WIDTH,
                          subsequent_indent="  ")
    if section.error is not None:
        lines += textwrap.wrap(f"! No estimate: {printable(section.error)}", _WIDTH,
                               initial_indent="  ", subsequent_indent="    ")
    for label, value in numeric_facts(section):
        lines += textwrap.wrap(printable(value), _WIDTH, initial_indent=f"  {label:<10} ",
                               subsequent_indent=" " * 13)
    for warning in section.warnings:
        lines += textwrap.wrap("! " + printable(warning), _WIDTH, initial_indent="  ",
                               subsequent_indent="    ")
    return lines


def numeric_svg(section: NumericSection) -> str | None:
    """The section's plot as inline SVG, or None without reported answers to draw."""
    if section.answers is None or section.answers.size == 0:
        return None
    return figure_svg(numeric_figure(section))


def numeric_figure(section: NumericSection):
    """The distribution function of the reported answers beside the estimated one of the
    true values (with its pointwise interval where it has one), or the reported answers
    alone with the estimated mean where the design identifies only the mean."""
    assert section.answers is not None, "no answers, no plot"
    z = np.sort(section.answers)
    fig, ax = new_figure(7.0, 3.6)
    ax.step(z, np.arange(1, z.size + 1) / z.size, where="post", color="0.55", lw=1.5,
            label="reported answers")
    d = section.distribution
    if d is not None:
        ax.step(d.points, d.cdf, where="post", color="#1f5f8b", lw=2,
                label="true values (estimated)")
        if d.cdf_se is not None:
            half = normal_quantile(0.5 + section.level / 2) * d.cdf_se
            ax.fill_between(d.points, np.clip(d.cdf - half, 0, 1), np.clip(d.cdf + half, 0, 1),
                            step="post", color="#1f5f8b", alpha=0.15,
                            label=f"{level_text(section.level)} pointwise interval")
    if section.estimate is not None and math.isfinite(section.estimate.mean):
        ax.axvline(section.estimate.mean, color="#b0572b", lw=1.5, ls="--",
                   label="estimated mean of the true values")
    unit = f" ({section.question.unit})" if section.question.unit else ""
    ax.set_ylim(0, 1)
    ax.grid(color="0.9")
    ax.legend(fontsize=MIN_TEXT_PT, loc="lower right", framealpha=0.85)
    label_axes(ax, x=f"value{unit}", y="share at or below", title=section.question.id)
    ax.title.set_fontsize(LABEL_PT)
    return fig
