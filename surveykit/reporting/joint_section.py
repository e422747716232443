"""A survey's declared joint analyses as the report shows them (``[[joint]]``): their
numbers as plain, pre-formatted data for the text, Markdown and HTML report, the JSON
record, and the HTML plot.

The numbers are :func:`surveykit.workflows.joint.joint_for_survey`'s, estimated
before the report is built (:func:`surveykit.workflows.report.report_for_survey`);
an analysis that cannot be estimated (too few answers, no respondent who answered
every question) carries the reason and the report shows it as a warning line, as
it does for a ``[[models]]`` fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markupsafe import Markup

from surveykit.definition.joint import JointSpec
from surveykit.errors import printable
from surveykit.reporting.plots import MIN_TEXT_PT, figure_svg, label_axes, new_figure
from surveykit.vocabulary import level_text, loss_fields, p_value_text
from surveykit.vocabulary import number_text as _num

if TYPE_CHECKING:
    from surveykit.estimation.joint import JointEstimate, PairSummary

__all__ = ["PAIR_LINES", "JointSection", "joint_context", "joint_figure", "joint_svg",
           "joint_text"]

#: The named quantities of a yes/no pair, in the order they are shown, with their labels.
PAIR_LINES = (
    ("both", "{a} and {b}"),
    ("a_not_b", "{a}, not {b}"),
    ("b_not_a", "{b}, not {a}"),
    ("neither", "neither"),
    ("b_given_a", "{b} among {a}"),
    ("a_given_b", "{a} among {b}"),
    ("b_given_not_a", "{b} among not {a}"),
    ("odds_ratio", "odds ratio"),
    ("phi", "correlation (phi)"),
)
# the shares the plot shows per yes/no pair: the 2x2 cells, then "b among a" beside
# "b among not a" (the contrast a reader looks for)
_PLOTTED = ("both", "a_not_b", "b_not_a", "neither", "b_given_a", "b_given_not_a")


@dataclass(frozen=True, kw_only=True)
class JointSection:
    """One declared joint analysis: its spec, the estimate (None when it could not be
    made: ``error`` says why) and, per semantics, the privacy loss of answering all its
    questions (the sum of theirs: losses compose)."""

    spec: JointSpec
    estimate: JointEstimate | None
    together: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self, *, level: float = 0.95) -> dict[str, object]:
        """The JSON record: ``fit`` holds the keys of ``surveykit joint --format json``'s
        estimate (``joint``, ``pairs``, ``independence``, ...), or null with ``error``."""
        privacy: dict[str, object] = {}
        for semantics, value in self.together.items():
            privacy.update(loss_fields(f"epsilon_{semantics}", value))
        return {"title": self.spec.title, "questions": list(self.spec.questions),
                "fit": (self.estimate.to_dict(level=level) if self.estimate is not None
                        else None),
                "privacy_together": privacy if self.estimate is not None else None,
                "error": self.error}


def _pair_rows(pair: PairSummary) -> list[tuple[str, str, str, str]]:
    """(label, estimate, se, interval) per named quantity (yes/no pairs) or per cell."""
    if pair.quantities:
        named = [(label.format(a=pair.a, b=pair.b), pair[key]) for key, label in PAIR_LINES]
    else:
        named = [(f"{pair.a} {sa}, {pair.b} {sb}", q) for (sa, sb), q in pair.cells.items()]
    # numbers are marked safe (digits and punctuation of our own); labels hold question ids,
    # user text the templates escape
    return [(label, Markup(_num(q.estimate, 4)), Markup(_num(q.se, 4)),
             Markup("-" if q.low is None or q.high is None
                    else f"[{_num(q.low, 4)}, {_num(q.high, 4)}]")) for label, q in named]


def _test_text(test) -> str:
    return Markup(f"LR = {test.lr:.2f}, df = {test.df}, p = {p_value_text(test.p_value)}")


def joint_context(section: JointSection, level: float) -> dict:
    """Plain, pre-formatted data for the report's templates and text: the heading, the
    respondents, one table per pair of questions, the independence tests, the privacy
    line, the estimator's warnings, or the error. Question ids are user text: the
    templates escape them."""
    estimate = section.estimate
    context: dict = {"heading": section.spec.heading, "questions": list(section.spec.questions),
                     "error": section.error, "pairs": [], "notes": [], "warnings": []}
    if estimate is None:
        return context
    names = estimate.questions
    context["respondents"] = Markup(
        f"{estimate.n:,} respondent{'s' if estimate.n != 1 else ''} answered "
        f"{'both questions' if len(names) == 2 else 'all ' + str(len(names)) + ' questions'}"
        + "".join(f"; {count:,} left out ({reason})"
                  for reason, count in estimate.left_out.items()) + ".")
    context["header"] = ("", "estimate", "se", Markup(f"{level_text(level)} interval"))
    for pair in estimate.pairs(level=level):
        context["pairs"].append({"title": f"{pair.a} and {pair.b}",
                                 "rows": _pair_rows(pair),
                                 "independence": Markup("Independence: ")
                                                 + _test_text(pair.independence)})
    if len(names) > 2:
        context["notes"].append(Markup(f"Independence of all {len(names)}: ")
                                + _test_text(estimate.independence))
    if estimate.nuisance:
        context["notes"].append("Estimated with them: " + ", ".join(
            f"{name} = {value:.4f}" for name, value in estimate.nuisance.items()))
    context["notes"].append(Markup(
        "Privacy: answering all of them costs each respondent at most "
        + ", ".join(f"{semantics} epsilon {_num(value, 3)}"
                    for semantics, value in section.together.items())
        + " (the sum of the questions' losses: losses compose)."))
    context["warnings"] = list(estimate.warnings)
    return context


def joint_text(section: JointSection, level: float) -> list[str]:
    """The section for an 80-column terminal (user text escaped for the terminal)."""
    import textwrap

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, 80, initial_indent=indent, subsequent_indent=indent + "  ",
                             break_on_hyphens=False)

    context = joint_context(section, level)
    lines = wrap(f"Joint analysis: {printable(context['heading'])}", "")
    if context["error"] is not None:
        return lines + wrap(f"! No joint analysis: {printable(context['error'])}", "  ")
    lines += wrap(printable(context["respondents"]), "  ")
    for pair in context["pairs"]:
        rows = [(printable(label), *numbers) for label, *numbers in pair["rows"]]
        width = max(len(label) for label, *_ in rows) + 2
        lines.append(f"  {printable(pair['title'])}:")
        header = context["header"]
        lines.append(f"    {'':<{width}}{header[1]:>9}{header[2]:>9}  {header[3]}")
        lines += [f"    {label:<{width}}{value:>9}{se:>9}  {interval}"
                  for label, value, se, interval in rows]
        lines += wrap(pair["independence"], "    ")
    for note in context["notes"]:
        lines += wrap(printable(note), "  ")
    for warning in context["warnings"]:
        lines += wrap("! " + printable(warning), "  ")
    return lines


def joint_svg(section: JointSection, level: float) -> str | None:
    """The section's plot as inline SVG, or None when there is no estimate."""
    if section.estimate is None:
        return None
    return figure_svg(joint_figure(section, level))


def _plot_rows(estimate: JointEstimate, level: float) -> list[tuple[str, object, bool]]:
    """(label, quantity, whether it is a share among a group) per plotted row."""
    rows: list[tuple[str, object, bool]] = []
    labels = dict(PAIR_LINES)
    for pair in estimate.pairs(level=level):
        if pair.quantities:
            rows += [(labels[key].format(a=pair.a, b=pair.b), pair[key], "_given_" in key)
                     for key in _PLOTTED]
        else:
            rows += [(f"{pair.a} {sa}, {pair.b} {sb}", q, False)
                     for (sa, sb), q in pair.cells.items()]
    return rows


def joint_figure(section: JointSection, level: float):
    """Each pair's estimated shares with their intervals: the 2x2 joint shares, then "b
    among a" beside "b among not a" (the cells for k-category questions)."""
    import numpy as np

    assert section.estimate is not None, "no estimate, no plot"
    rows = _plot_rows(section.estimate, level)
    fig, ax = new_figure(7.0, 1.1 + 0.4 * len(rows))
    positions = np.arange(len(rows))[::-1]
    for position, (_, q, conditional) in zip(positions, rows, strict=True):
        color = "#b0572b" if conditional else "#1f5f8b"
        if q.estimate is None:
            ax.text(0.5, position, "no estimate", ha="center", va="center", color="0.5",
                    fontsize=MIN_TEXT_PT)
            continue
        if q.low is not None and q.high is not None:
            ax.plot([q.low, q.high], [position, position], color=color, lw=2)
        ax.plot(q.estimate, position, "o", color=color, ms=7)
    ax.set_yticks(positions, [label for label, _, _ in rows])
    ax.set_xlim(0, 1)
    ax.grid(axis="x", color="0.9")
    label_axes(ax, x=f"estimated share and its {level_text(level)} interval\n"
                     "blue: joint shares; orange: shares among a group",
               title=section.spec.heading)
    return fig
