"""Pictures for the HTML report, as inline SVG made with matplotlib, and for ``--plot``.

Text in the SVG is drawn as paths (matplotlib's default ``svg.fonttype``),
so a question id typed by a user can never become markup in the page.

Every text is at least :data:`MIN_TEXT_PT` points: an SVG is shown at its
natural size (1 pt = 4/3 CSS px), a PNG at 120 dpi, so legends and labels
are at least 12 px tall on a 1280 px screen. The ``*_figure`` functions
build the figures; the others render them (tests read the figures' texts).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from surveykit.designs.warner import GeneralizedWarner, generalized_warner_equivalent
from surveykit.errors import ParameterError
from surveykit.estimation.binomial import conditional_variance
from surveykit.files import output_file
from surveykit.planning import (
    free_parameter,
    nuisance_values,
    plan_design,
    precision,
    trade_off_curve,
    trade_off_curves,
)
from surveykit.vocabulary import check_semantics

#: The picture formats --plot writes.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: The smallest text (tick labels, legends) in points: 12 CSS px in an SVG shown as is.
MIN_TEXT_PT = 9.0
#: Axis labels and titles.
LABEL_PT = 10.0

__all__ = [
    "MIN_TEXT_PT",
    "add_legend",
    "design_figure",
    "design_trade_off_figure",
    "figure_svg",
    "fit_layout",
    "forest_figure",
    "forest_plot_svg",
    "frontier",
    "label_axes",
    "new_figure",
    "plan_figure",
    "privacy_accuracy_figure",
    "plot_privacy_accuracy",
    "privacy_accuracy_curve",
    "privacy_accuracy_svg",
    "save_design_plot",
    "save_figure",
    "save_plan_plot",
]

_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)


def new_figure(width: float, height: float):
    """An empty figure ``width`` x ``height`` inches (matplotlib, Agg) and its axes, with tick
    labels at :data:`MIN_TEXT_PT`: every plot of the reports and ``--plot`` starts here."""
    # lazy loader: matplotlib loads only when a plot is drawn
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "surveykit"  # stable ids: the same report, the same bytes
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.tick_params(labelsize=MIN_TEXT_PT)
    return fig, ax


def add_legend(ax) -> None:
    """A legend readable at the figure's size, outside the curves when they fill the plot."""
    ax.legend(fontsize=MIN_TEXT_PT, frameon=True, framealpha=0.85, edgecolor="0.85",
              loc="best")


def label_axes(ax, *, x: str, y: str | None = None, title: str | None = None) -> None:
    """The axis labels and title at the plots' label size."""
    ax.set_xlabel(x, fontsize=LABEL_PT)
    if y is not None:
        ax.set_ylabel(y, fontsize=LABEL_PT)
    if title is not None:
        ax.set_title(title, fontsize=LABEL_PT)


def fit_layout(fig) -> None:
    """Place a one-axes figure's axes as its constrained layout would, measured once, and
    turn the layout engine off.

    With a layout engine, ``savefig`` draws the figure twice (once to lay it
    out, and the constrained layout measures every tick label twice more on
    the way) before it draws it for the file: most of an HTML report's time.
    For one axes the constrained layout is simple: the axes' decorations
    (tick labels, axis labels, title; measured as the layout measures them,
    ``for_layout_only``) plus the engine's pads fill the margins. Figures with
    more than one axes, or without the constrained layout, are left alone.
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    engine = fig.get_layout_engine()
    if not isinstance(engine, ConstrainedLayoutEngine) or len(fig.axes) != 1:
        return
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    tight = ax.get_tightbbox(renderer, for_layout_only=True)
    box = ax.get_window_extent(renderer)
    width, height = fig.bbox.width, fig.bbox.height
    pads = engine.get()
    w_pad, h_pad = pads["w_pad"] * fig.dpi, pads["h_pad"] * fig.dpi  # inches to pixels
    left, right = box.x0 - tight.x0 + w_pad, tight.x1 - box.x1 + w_pad
    bottom, top = box.y0 - tight.y0 + h_pad, tight.y1 - box.y1 + h_pad
    import matplotlib

    # no engine at all ("none" leaves a placeholder, and savefig lays out again for any engine)
    with matplotlib.rc_context({"figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
    ax.set_position([left / width, bottom / height, 1 - (left + right) / width,
                     1 - (bottom + top) / height])


def figure_svg(fig) -> str:
    """``fig`` as an SVG element to put inside an HTML page (no prologue, no date: the same
    report gives the same bytes); the figure is closed."""
    import matplotlib.pyplot as plt

    fit_layout(fig)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    # drop the XML prologue and doctype: the SVG goes inside an HTML page
    return _XML_PROLOGUE.sub("", buffer.getvalue(), count=1)


def _forest_rows(report) -> list[tuple[str, float | None, tuple[float, float] | None]]:
    """(label, estimate, interval) rows: one per yes/no question, one per category otherwise."""
    rows = []
    for q in report.questions:
        e = q.estimate
        if e is None:
            rows.append((q.id, None, None))
        elif q.design.is_binary:
            rows.append((q.id, e.pi_mle, tuple(q.interval)))
        else:
            for category in q.design.category_labels:
                interval = e.confidence_interval(report.level, q.method, category)
                rows.append((f"{q.id}: {category}", e.share(category), tuple(interval)))
    return rows


def forest_plot_svg(report) -> str:
    """Each question's estimate with its confidence interval, one row per question (one per
    category for k-category designs)."""
    return figure_svg(forest_figure(report))


def forest_figure(report):
    """The figure of :func:`forest_plot_svg`."""
    rows = _forest_rows(report)
    fig, ax = new_figure(7.0, 1.1 + 0.45 * max(1, len(rows)))
    positions = np.arange(len(rows))[::-1]
    for position, (_, value, interval) in zip(positions, rows, strict=True):
        if value is None:
            ax.text(0.5, position, "no estimate", ha="center", va="center", color="0.5",
                    fontsize=MIN_TEXT_PT)
            continue
        ax.plot(list(interval), [position, position], color="#1f5f8b", lw=2)
        ax.plot(value, position, "o", color="#1f5f8b", ms=7)
    ax.set_yticks(positions, [label for label, _, _ in rows])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(axis="x", color="0.9")
    estimated = sum(q.estimate is not None for q in report.questions)
    label_axes(ax, x=f"estimated share (maximum likelihood, {report.level:.0%} interval)",
               title=f"Estimates for {estimated} of {len(report.questions)} question"
                     f"{'' if len(report.questions) == 1 else 's'}")
    return fig


def privacy_accuracy_curve(*, dont_know: float, n: int, pi: float = 0.5,
                           epsilons: np.ndarray | None = None,
                           semantics: str = "shafer") -> tuple[np.ndarray, np.ndarray]:
    """(privacy loss, exact standard error) along the optimal designs at one don't-know rate.

    Every generalized Warner mechanism with don't-know rate d is the
    Corollary 3.12 design for eps = ln(p/q) at c = 1 - d, so a survey's
    design lies on the curve of its own d. ``epsilons`` are Shafer losses
    along the family; with ``semantics="walley"`` the curve's x values are
    the same designs' Walley losses, ln((1 - q)/q).
    """
    check_semantics(semantics)
    if epsilons is None:
        epsilons = np.linspace(0.1, 4.0, 60)
    designs = _family(float(dont_know), tuple(float(e) for e in epsilons))
    se = np.array([np.sqrt(conditional_variance(d, pi=pi, n=n)) for d in designs])
    losses = np.asarray(epsilons, dtype=float) if semantics == "shafer" else np.array(
        [d.epsilon_walley for d in designs])
    return losses, se


@lru_cache(maxsize=64)
def _family(dont_know: float, epsilons: tuple[float, ...]) -> tuple[GeneralizedWarner, ...]:
    """The optimal designs at one don't-know rate for each Shafer loss, kept: a report draws
    the same family for every question with that rate (Warner's, d = 0, for all of them), and
    each design's exact structure (in fractions) costs about half a millisecond to build."""
    return tuple(GeneralizedWarner.optimal(epsilon=e, dont_know=dont_know) for e in epsilons)


def plot_privacy_accuracy(design: GeneralizedWarner, *, n: int, pi: float, title: str,
                          warner: GeneralizedWarner | None = None,
                          target_se: float | None = None, size=(5.6, 3.8),
                          semantics: str = "shafer"):
    """A figure: standard error against the privacy loss in ``semantics`` (Shafer or
    Walley) for the design's family and Warner's.

    The family is every design with the design's don't-know rate; the
    design itself is marked, and so is ``warner`` (Warner's design at the
    same budget) and a ``target_se`` line, when given.
    """
    def loss(shown: GeneralizedWarner) -> float:
        return shown.epsilon_shafer if semantics == "shafer" else shown.epsilon_walley

    top = max(4.0, 1.25 * loss(design)) if np.isfinite(loss(design)) else 4.0
    # Shafer losses along the family; a design's Walley loss is never below its Shafer loss
    epsilons = np.linspace(0.1, top, 60)
    fig, ax = new_figure(*size)
    e, se = privacy_accuracy_curve(dont_know=design.dont_know, n=n, pi=pi, epsilons=epsilons,
                                   semantics=semantics)
    ax.plot(e, se, color="#1f5f8b", lw=2,
            label=f"don't know {design.dont_know:.0%} (this design's family)")
    e, se = privacy_accuracy_curve(dont_know=0.0, n=n, pi=pi, epsilons=epsilons,
                                   semantics=semantics)
    ax.plot(e, se, color="#b55d1a", lw=1.5, ls="--", label="Warner (no don't know)")
    if np.isfinite(loss(design)):
        ax.plot(loss(design), np.sqrt(conditional_variance(design, pi=pi, n=n)),
                "o", color="black", ms=7, label="chosen design")
    if warner is not None:
        ax.plot(loss(warner), np.sqrt(conditional_variance(warner, pi=pi, n=n)), "s",
                color="#b55d1a", ms=6, label="Warner at the same budget")
    ax.set_xlim(0, top)
    if target_se is not None:
        ax.axhline(target_se, color="0.4", lw=1, ls=":", label=f"target se {target_se:g}")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator

    # plain numbers (0.02, 0.05, 0.1) read better than 2x10^-2 on a log axis
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(subs=()))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    label_axes(ax, x=f"privacy loss epsilon ({semantics.capitalize()}, nats)",
               y="standard error of pi", title=title)
    ax.grid(color="0.92")
    add_legend(ax)
    return fig


def privacy_accuracy_svg(question, *, pi: float = 0.5) -> str:
    """The privacy-accuracy trade-off of a question's design, as inline SVG (empty for a
    question without answers): :func:`privacy_accuracy_figure`."""
    fig = privacy_accuracy_figure(question, pi=pi)
    return "" if fig is None else figure_svg(fig)


def privacy_accuracy_figure(question, *, pi: float = 0.5):
    """The figure of :func:`privacy_accuracy_svg`, or None when the question has no answers
    yet (nothing to size the curve by).

    Generalized Warner designs get their family's curve
    (:func:`plot_privacy_accuracy`); every other design its own trade-off
    along its main parameter (:func:`design_trade_off_figure`).
    """
    if question.answered == 0:
        return None
    n = question.answered
    design = generalized_warner_equivalent(question.design)
    if design is None:
        return design_trade_off_figure(question.design, n=n, title=f"{question.id}: n = {n:,}")
    return plot_privacy_accuracy(design, n=n, pi=pi,
                                 title=f"{question.id}: n = {n:,}, pi = {pi:g}")


def _main_parameter(design):
    """The design's main parameter as a free family through the design itself: its ``p``
    (the last entry when ``p`` is a list: the other entries keep their values); None when
    the design has no ``p`` or no family through it."""
    parameters = dict(design.parameters())
    p = parameters.get("p")
    if p is None:
        return None, parameters
    if "epsilon" in parameters:  # the k-RR's epsilon and p say the same thing: keep p
        del parameters["epsilon"]
    marked = dict(parameters, p=[*p[:-1], None] if isinstance(p, list | tuple) else None)
    try:
        return free_parameter(design.model, marked), parameters
    except ParameterError:
        return None, parameters


def frontier(losses: np.ndarray, ses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of a trade-off curve that no other point of it beats: ordered by privacy
    loss, each with a standard error below every point of smaller or equal loss.

    Along a design's parameter the loss can turn back (the SLD's loss is a
    maximum over groups and states: it stays put or retreats while the
    standard error still falls), and a polyline through the points in
    parameter order then crosses itself. The frontier is what a budget buys:
    its losses increase and its standard errors decrease.

    >>> frontier(np.array([0.5, 0.4, 0.4, 0.6]), np.array([1.0, 3.0, 2.0, 0.5]))
    (array([0.4, 0.5, 0.6]), array([2. , 1. , 0.5]))
    """
    order = np.lexsort((ses, losses))
    x, y = np.asarray(losses, dtype=float)[order], np.asarray(ses, dtype=float)[order]
    best_before = np.minimum.accumulate(np.concatenate([[np.inf], y[:-1]]))
    keep = y < best_before
    return x[keep], y[keep]


_SEMANTICS_STYLE = {"shafer": ("#1f5f8b", "-", "o"), "walley": ("#b55d1a", "--", "s")}


def design_trade_off_figure(design, *, n: int, title: str):
    """Standard error at ``n`` against the design's own privacy loss, in both semantics, as
    its main parameter varies (:func:`surveykit.planning.trade_off_curve`, drawn as its
    :func:`frontier`), the design marked; for a design without such a path (no parameter
    ``p``, or a loss infinite all along it) its own point, with a one-line caption that
    says so. Nuisance parameters sit at the middle of their range
    (:func:`surveykit.planning.nuisance_values`).
    """
    from dataclasses import replace

    values = nuisance_values(design)
    at = {p.name: values[p.name] for p in design.nuisance} or None
    se = precision(design, n=n, nuisance=values).se
    free, parameters = _main_parameter(design)
    curves: dict[str, list] = {}
    if free is not None:
        try:
            base = plan_design(design.model, parameters, n=n, nuisance=values)
            for semantics, branches in trade_off_curves(
                    replace(base, free=free), n=n, semantics=tuple(_SEMANTICS_STYLE)).items():
                curves[semantics] = [frontier(x, y) for x, y in branches if len(x)]
        except ParameterError:
            curves = {}
    losses = {semantics: design.privacy_loss(semantics, at) for semantics in _SEMANTICS_STYLE}
    finite = [v for v in losses.values() if np.isfinite(v)]
    drawn = [x for branches in curves.values() for x, _ in branches]
    fig, ax = new_figure(5.6, 3.8)
    for semantics, (color, style, _) in _SEMANTICS_STYLE.items():
        for i, (x, y) in enumerate(curves.get(semantics, [])):
            ax.plot(x, y, color=color, lw=2 if semantics == "shafer" else 1.5, ls=style,
                    label=f"{semantics.capitalize()}, every {free.label}" if i == 0 else None)
    top = max([4.0, *(1.25 * v for v in finite)])
    for semantics, (color, _, marker) in _SEMANTICS_STYLE.items():
        if np.isfinite(losses[semantics]):
            ax.plot(losses[semantics], se, marker, color=color, mec="black", ms=7,
                    label=f"this design ({semantics.capitalize()})")
    if not finite:
        # an infinite loss has no place on the axis: the design sits at its right edge
        ax.plot(top, se, ">", color="black", ms=8, clip_on=False,
                label="this design (loss infinite)")
    if not drawn:
        caption = ("loss infinite along " + free.label if free is not None and curves
                   else "no parameter path") + ": the design's own point"
    else:
        shown = ", ".join(f"{p.name} = {values[p.name]:g}" for p in design.nuisance)
        caption = f"at {shown}" if shown else ""
    ax.set_xlim(0, top)
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(subs=()))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    if drawn:
        lowest = min(float(np.min(y)) for branches in curves.values() for _, y in branches)
        ax.set_ylim(min(lowest, se) / 1.3, max(se * 20, lowest * 2))
    label_axes(ax, x="privacy loss epsilon (nats)", y="standard error",
               title=f"{title}, {design.model}" + (f"\n{caption}" if caption else ""))
    ax.grid(color="0.92")
    add_legend(ax)
    return fig


def save_figure(path, figure: Callable[[], object]) -> Path:
    """Write the figure ``figure()`` draws to ``path`` (.png, .svg or .pdf, at 120 dpi; an
    SVG without its date, so the same input gives the same bytes) and close it. The path is
    checked before anything is drawn."""
    import matplotlib.pyplot as plt

    path = output_file(path, "--plot", suffixes=PLOT_SUFFIXES)
    suffix = path.suffix.lower().lstrip(".")
    fig = figure()
    fig.savefig(path, format=suffix, dpi=120, metadata={"Date": None} if suffix == "svg"
                else None)
    plt.close(fig)
    return path


#: Sample size drawn when a design gives neither n nor a target.
DEFAULT_PLOT_N = 1000


def save_design_plot(path, ours, warner) -> Path:
    """Write the design's privacy-accuracy picture to ``path`` (.png, .svg or .pdf)."""
    return save_figure(path, lambda: design_figure(ours, warner))


def design_figure(ours, warner):
    """The figure of :func:`save_design_plot`: the x axis is the privacy loss in the
    semantics the design was made for, so both marked designs sit at the budget."""
    n = ours.n if ours.n is not None else DEFAULT_PLOT_N
    title = (f"{ours.semantics.capitalize()} budget {ours.budget:g}: n = {n:,}, "
             f"pi = {ours.pi:g}")
    return plot_privacy_accuracy(ours.design, n=n, pi=ours.pi, title=title,
                                 warner=warner.design, target_se=ours.target_se,
                                 size=(6.4, 4.2), semantics=ours.semantics)


def save_plan_plot(path, plan) -> Path:
    """Write a plan's privacy-accuracy picture to ``path`` (.png, .svg or .pdf): the standard
    error against the privacy loss along the design's free parameter, the plan marked."""
    return save_figure(path, lambda: plan_figure(plan))


def plan_figure(plan):
    """The figure of :func:`save_plan_plot`; the curve comes from
    :func:`surveykit.planning.trade_off_curve`, each branch drawn as its :func:`frontier`."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    if plan.free is None:
        raise ParameterError("--plot draws the trade-off along the design's free parameter: "
                             "give --epsilon")
    n = plan.n if plan.n is not None else DEFAULT_PLOT_N
    spent = plan.budget if plan.budget is not None else float("nan")
    se = precision(plan.design, n=n, pi=plan.pi, nuisance=plan.nuisance,
                   allocation=plan.allocation).se
    fig, ax = new_figure(6.4, 4.2)
    # each branch as its frontier: in parameter order the SLD's loss turns back and the
    # polyline crossed itself (issue 22)
    curves = [frontier(losses, ses) for losses, ses in trade_off_curve(plan, n=n)]
    for i, (losses, ses) in enumerate(curves):
        ax.plot(losses, ses, color="#1f5f8b", lw=2,
                label=f"{plan.design.model}: every {plan.free.label}" if i == 0 else None)
    if curves:
        # near the uninformative value the error explodes; show a decade or so above the plan
        lowest = min(float(ses.min()) for _, ses in curves)
        ax.set_ylim(min(lowest, se) / 1.3, max(se * 20, lowest * 2))
    ax.plot(spent, se, "o", color="black", ms=7,
            label=f"chosen: {plan.free.label} = {plan.value:.4g}")
    if plan.target_se is not None:
        ax.axhline(plan.target_se, color="0.4", lw=1, ls=":",
                   label=f"target se {plan.target_se:g}")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(subs=()))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    label_axes(ax, x=f"privacy loss epsilon ({plan.semantics.capitalize()}, nats)",
               y="standard error",
               title=f"{plan.design.model}, {plan.semantics.capitalize()} budget "
                     f"{plan.budget:g}: n = {n:,}")
    ax.grid(color="0.92")
    add_legend(ax)
    return fig
