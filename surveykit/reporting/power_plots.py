"""The power curve of ``surveykit power --plot``: power against the number of respondents.

The curve comes from :func:`surveykit.power_analysis.analytic.power_curve`
(no arithmetic here); the text sizes follow :mod:`surveykit.reporting.plots`
(at least 12 px in a PNG written at 120 dpi and shown at 100%).
"""

from __future__ import annotations

from pathlib import Path

from surveykit.power_analysis.analytic import power_curve
from surveykit.reporting.plots import add_legend, label_axes, new_figure, save_figure

__all__ = ["power_figure", "save_power_plot"]


def power_figure(result):
    """The figure: the design's power and a direct question's against n, the result's n
    marked, the target power (or the result's power) as a dotted line."""
    curve = power_curve(result)
    fig, ax = new_figure(6.4, 4.2)
    ax.plot(curve.n, curve.power, color="#1f5f8b", lw=2, label=f"{result.design.model}")
    ax.plot(curve.n, curve.power_direct, color="#b55d1a", lw=1.5, ls="--",
            label="direct question")
    ax.plot(result.n, result.power, "o", color="black", ms=7,
            label=f"n = {result.n:,}: power {result.power:.3f}")
    if result.n_direct:
        ax.plot(result.n_direct, result.power, "s", color="#b55d1a", ms=6,
                label=f"direct: n = {result.n_direct:,}")
    level = result.target_power if result.target_power is not None else result.power
    ax.axhline(level, color="0.4", lw=1, ls=":")
    ax.axhline(result.alpha, color="0.75", lw=1, ls=":")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0, float(curve.n[-1]))
    if result.test == "two-sample":
        what = f"pi {result.pi} vs {result.pi2}"
    else:
        what = f"pi {result.pi} vs null {result.null}"
    label_axes(ax, x="respondents n" + (" (both samples)" if result.test == "two-sample" else ""),
               y="power", title=f"{result.alternative} test at alpha {result.alpha:g}: {what}")
    ax.grid(color="0.92")
    add_legend(ax)
    return fig


def save_power_plot(path, result) -> Path:
    """Write the power curve to ``path`` (.png, .svg or .pdf)."""
    return save_figure(path, lambda: power_figure(result))
