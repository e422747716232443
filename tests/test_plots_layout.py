"""The HTML report's plots are laid out once and their curves' designs are built once per
family (issue 25: an HTML report took about 80x the text report's CPU): the fast layout puts
the axes where matplotlib's constrained layout puts them, and the kept designs give the same
points as designs built afresh."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from surveykit.designs.warner import GeneralizedWarner  # noqa: E402
from surveykit.estimation.binomial import conditional_variance  # noqa: E402
from surveykit.reporting.plots import (  # noqa: E402
    fit_layout,
    forest_figure,
    privacy_accuracy_curve,
    privacy_accuracy_figure,
)
from tests.test_report_plots import every_design_report  # noqa: E402

#: Margins may differ by this much from the constrained layout's: text is measured with the
#: Agg renderer here and with the SVG renderer in savefig (hinting moves widths a little).
TOLERANCE_PT = 0.5


def _margins_pt(fig) -> np.ndarray:
    """(left, bottom, right, top) of the only axes, in points from the figure's edges."""
    width, height = fig.get_size_inches() * 72
    box = fig.axes[0].get_position()
    return np.array([box.x0 * width, box.y0 * height, (1 - box.x1) * width,
                     (1 - box.y1) * height])


@pytest.fixture(scope="module")
def report():
    return every_design_report()


#: Questions whose plots differ in what decides the margins: a generalized Warner family
#: curve, a trade-off with a one-line title, one with a caption (two-line title: the SLD at
#: t = 0.5), one with no parameter path (the design's own point and a caption).
SHAPES = ("generalized_warner", "fr", "sld", "custom")


def _figures(report):
    """Builders of the report's forest plot and of the curves of :data:`SHAPES`."""
    return [("forest", lambda: forest_figure(report))] + [
        (q.id, lambda q=q: privacy_accuracy_figure(q)) for q in report.questions
        if q.id in SHAPES]


def test_the_fitted_layout_puts_the_axes_where_the_constrained_layout_does(report):
    checked = 0
    for name, build in _figures(report):
        constrained, fitted = build(), build()
        try:
            constrained.canvas.draw()  # the oracle: matplotlib's own constrained layout
            assert constrained.get_layout_engine() is not None, name
            fit_layout(fitted)
            assert fitted.get_layout_engine() is None, name  # savefig draws it once
            expected, got = _margins_pt(constrained), _margins_pt(fitted)
            assert got == pytest.approx(expected, abs=TOLERANCE_PT), name
            checked += 1
        finally:
            plt.close(constrained)
            plt.close(fitted)
    assert checked == 1 + len(SHAPES)


def test_a_long_question_id_widens_the_forest_plots_margin_as_before(report):
    # user text decides the forest plot's left margin: the fitted layout measures it
    from dataclasses import replace

    longer = replace(report, questions=[replace(report.questions[0],
                                                id="a_much_longer_question_identifier_" * 2),
                                        *report.questions[1:]])
    figures = [forest_figure(report), forest_figure(longer)]
    try:
        for fig in figures:
            fit_layout(fig)
        short, long = (_margins_pt(fig)[0] for fig in figures)
        assert long > short + 100
    finally:
        for fig in figures:
            plt.close(fig)


def test_the_kept_families_give_the_points_of_designs_built_afresh():
    epsilons = np.linspace(0.1, 5.0, 60)
    for dont_know in (0.2, 0.0, 0.15, 0.2):  # 0.2 twice: the second call reads the kept family
        for semantics in ("shafer", "walley"):
            losses, se = privacy_accuracy_curve(dont_know=dont_know, n=190, pi=0.5,
                                                epsilons=epsilons, semantics=semantics)
            fresh = [GeneralizedWarner.optimal(epsilon=float(e), dont_know=dont_know)
                     for e in epsilons]
            expected_se = [np.sqrt(conditional_variance(d, pi=0.5, n=190)) for d in fresh]
            expected_losses = (epsilons if semantics == "shafer"
                               else [d.epsilon_walley for d in fresh])
            assert se.tolist() == expected_se
            assert losses.tolist() == list(expected_losses)
