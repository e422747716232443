"""Every plot is rendered and its text read back (matplotlib's Text artists): what the axes
say, where the marked designs sit, and that every text is readable at its display size
(issue 11: the Walley design plot kept a Shafer axis; legends were about 6 px tall)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from surveykit.counts import Counts  # noqa: E402
from surveykit.definition.survey import load_survey_file  # noqa: E402
from surveykit.planning import design_survey, plan_design  # noqa: E402
from surveykit.reporting.plots import (  # noqa: E402
    MIN_TEXT_PT,
    design_figure,
    forest_figure,
    plan_figure,
    privacy_accuracy_figure,
)
from surveykit.reporting.report import build_report  # noqa: E402
from surveykit.resources import locate_resource  # noqa: E402

# An SVG in the report is shown at its natural size: 1 pt = 96/72 CSS px. A --plot PNG is
# written at 120 dpi and shown at 100% on a 1280 px screen (it is 768 px wide).
SVG_PX_PER_PT = 96 / 72
PNG_PX_PER_PT = 120 / 72
READABLE_PX = 12


class _Answers:
    def __init__(self, question_id: str, counts: dict) -> None:
        self.question_id, self.counts, self.missing = question_id, Counts.from_mapping(counts), 0


@pytest.fixture(scope="module")
def report():
    survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    counts = [_Answers(q.id, {"1": {"yes": 160, "no": 230, "dont_know": 100}})
              for q in survey.questions]
    return build_report(survey, counts)


def texts(fig) -> list[Text]:
    """The visible, non-empty texts of a drawn figure."""
    fig.canvas.draw()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def smallest_px(fig, px_per_pt: float) -> tuple[float, str]:
    size, text = min((t.get_fontsize() * px_per_pt, t.get_text()) for t in texts(fig))
    return size, text


def legend_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() is not None
            for t in ax.get_legend().get_texts()]


def marker_x(fig, marker: str) -> list[float]:
    return [float(line.get_xdata()[0]) for ax in fig.axes for line in ax.get_lines()
            if line.get_marker() == marker]


def test_the_walley_design_plot_has_a_walley_axis_and_both_designs_at_the_budget():
    ours, warner = design_survey(epsilon=1.0986, dont_know=0.2, semantics="walley",
                                 target_se=0.03)
    fig = design_figure(ours, warner)
    try:
        assert fig.axes[0].get_xlabel() == "privacy loss epsilon (Walley, nats)"
        assert fig.axes[0].get_title().startswith("Walley budget 1.0986")
        # the chosen design (circle) and Warner at the same budget (square) sit at x = budget
        assert marker_x(fig, "o") == pytest.approx([1.0986], abs=1e-9)
        assert marker_x(fig, "s") == pytest.approx([1.0986], abs=1e-9)
        # the family curve starts at its smallest Walley loss, ln((1 + d) / (1 - d))
        curve = fig.axes[0].get_lines()[0].get_xdata()
        assert np.min(curve) > np.log(1.2 / 0.8) - 1e-9
    finally:
        plt.close(fig)


def test_the_shafer_design_plot_keeps_the_shafer_axis():
    ours, warner = design_survey(epsilon=1.0986, dont_know=0.2, target_se=0.03)
    fig = design_figure(ours, warner)
    try:
        assert fig.axes[0].get_xlabel() == "privacy loss epsilon (Shafer, nats)"
        assert marker_x(fig, "o") == pytest.approx([1.0986], abs=1e-9)
        assert legend_texts(fig) == ["don't know 20% (this design's family)",
                                     "Warner (no don't know)", "chosen design",
                                     "Warner at the same budget", "target se 0.03"]
        size, text = smallest_px(fig, PNG_PX_PER_PT)
        assert size >= READABLE_PX, text
    finally:
        plt.close(fig)


def test_the_plan_plot_names_the_free_parameter_and_is_readable():
    plan = plan_design("fr", {"p": [None, 0.1]}, epsilon=1.5, target_se=0.05)
    fig = plan_figure(plan)
    try:
        assert fig.axes[0].get_xlabel() == "privacy loss epsilon (Shafer, nats)"
        assert legend_texts(fig)[0].startswith("fr: every ")
        assert any(text.startswith("chosen: ") for text in legend_texts(fig))
        size, text = smallest_px(fig, PNG_PX_PER_PT)
        assert size >= READABLE_PX, text
    finally:
        plt.close(fig)


def test_the_report_plots_are_readable_at_their_natural_size(report):
    figures = [forest_figure(report)] + [privacy_accuracy_figure(q) for q in report.questions]
    figures = [fig for fig in figures if fig is not None]
    try:
        assert len(figures) >= 2
        forest = [t.get_text() for t in texts(figures[0])]
        assert "exam_cheating" in forest and "Estimates for 4 of 4 questions" in forest
        for fig in figures:
            size, text = smallest_px(fig, SVG_PX_PER_PT)
            assert size >= READABLE_PX, text
            for ax in fig.axes:
                if ax.get_legend() is not None:
                    assert all(t.get_fontsize() >= MIN_TEXT_PT
                               for t in ax.get_legend().get_texts())
    finally:
        for fig in figures:
            plt.close(fig)


def test_a_question_without_answers_gets_no_curve_and_the_forest_says_so():
    survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    empty = build_report(survey, [])
    assert all(privacy_accuracy_figure(q) is None for q in empty.questions)
    fig = forest_figure(empty)
    try:
        shown = [t.get_text() for t in texts(fig)]
        assert shown.count("no estimate") == len(survey.questions)
        assert "Estimates for 0 of 4 questions" in shown
    finally:
        plt.close(fig)


def test_the_html_report_of_a_survey_without_answers_says_no_answers_yet(tmp_path):
    # issue 11: a report for a survey with no answers drew curves sized for "n = 1"
    from click.testing import CliRunner

    from surveykit.cli import main

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    runner = CliRunner()
    sample = locate_resource("sample_data") / "academic_integrity.toml"
    assert runner.invoke(main, ["init", "--db", url]).exit_code == 0
    assert runner.invoke(main, ["survey", "add", str(sample), "--db", url]).exit_code == 0
    out = tmp_path / "report.html"
    result = runner.invoke(main, ["report", "--survey", "academic_integrity", "--db", url,
                                  "--format", "html", "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert html.count("No answers yet: the privacy-accuracy curve needs the number of "
                      "answers.") == 4
    assert "n = 1," not in html and "<svg" in html  # the forest plot, no curves
