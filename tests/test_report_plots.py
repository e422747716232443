"""The HTML report's plots for every design (issue 22, item 10): a privacy curve for each
question, every text at least 12 px when the page is 1280 px wide (measured in Chromium),
warnings gathered at the top with links to their questions, and trade-off curves that
never cross themselves."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from surveykit.counts import Counts  # noqa: E402
from surveykit.definition.survey import parse_survey  # noqa: E402
from surveykit.designs.registry import EXAMPLES, design_names, make_design, parse_parameters  # noqa: E402,E501
from surveykit.designs.warner import generalized_warner_equivalent  # noqa: E402
from surveykit.errors import ParameterError  # noqa: E402
from surveykit.planning import (  # noqa: E402
    free_parameter,
    plan_design,
    precision,
    trade_off_curve,
    trade_off_curves,
)
from surveykit.reporting.plots import plan_figure, privacy_accuracy_figure  # noqa: E402
from surveykit.reporting.report import build_report, render_report  # noqa: E402
from tests.web_support import launch_chromium  # noqa: E402

READABLE_PX = 12
PAGE_PX = 1280
DESIGNS = [name for name in design_names() if name in EXAMPLES]


def _toml(value: object) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


class _Answers:
    def __init__(self, question_id: str, counts: dict) -> None:
        self.question_id, self.counts, self.missing = question_id, Counts.from_mapping(counts), 0


def every_design_report(*, few: str | None = None):
    """A survey with one question per registered design (its example parameters) and made-up
    answers, 100 to 400 per response; the question ``few`` gets 3 per response."""
    lines = ['name = "every"', 'title = "Every design"']
    answers = []
    for name in DESIGNS:
        parameters = parse_parameters(name, EXAMPLES[name])
        lines += ["[[questions]]", f'id = "{name}"', f'text = "A {name} question?"',
                  "[questions.design]", f'model = "{name}"']
        lines += [f"{key} = {_toml(value)}" for key, value in parameters.items()]
        design = make_design(name, **parameters)
        if type(design).asks_innocuous:
            lines.append('innocuous = "Were you born in spring?"')
        counts = {group: {label: (3 if name == few else 100 + 37 * (i + j) % 300)
                          for j, label in enumerate(design.response_labels) if label != "dont_know"}
                  for i, group in enumerate(design.group_names)}
        answers.append(_Answers(name, counts))
    return build_report(parse_survey("\n".join(lines)), answers)


@pytest.fixture(scope="module")
def report():
    return every_design_report()


@pytest.fixture(scope="module")
def figures(report):
    """Each question's privacy figure, drawn once for the tests that only read them (each
    costs up to a second: a trade-off curve of 80 designs in two semantics)."""
    drawn = [(q, privacy_accuracy_figure(q)) for q in report.questions]
    yield drawn
    for _, fig in drawn:
        if fig is not None:
            plt.close(fig)


def lines_drawn(fig) -> list[np.ndarray]:
    """The x values of every polyline (more than one point) in the figure."""
    return [np.asarray(line.get_xdata(), dtype=float) for ax in fig.axes
            for line in ax.get_lines() if len(line.get_xdata()) > 1]


def test_every_design_gets_a_privacy_curve_or_its_own_point_with_a_caption(report, figures):
    assert len(report.questions) == len(DESIGNS) >= 15
    assert [q for q, _ in figures] == list(report.questions)
    curves = 0
    for q, fig in figures:
        assert fig is not None, q.id
        ax = fig.axes[0]
        if generalized_warner_equivalent(q.design) is not None:
            continue
        assert ax.get_xlabel() == "privacy loss epsilon (nats)", q.id
        drawn = lines_drawn(fig)
        if drawn:
            curves += 1
            labels = [t.get_text() for t in ax.get_legend().get_texts()]
            assert any(label.startswith("Shafer, every ") for label in labels), q.id
            assert any(label.startswith("Walley, every ") for label in labels), q.id
        else:
            # no path: one point, and the caption says so in one line
            caption = ax.get_title().split("\n")[1]
            assert caption.endswith(": the design's own point"), (q.id, caption)
            assert len([line for line in ax.get_lines()]) >= 1
    # fr, uqtknown, uqtunknown, kuk, cdmsym, sld and grr vary their main parameter
    assert curves >= 7


def test_the_design_sits_on_its_own_curve_in_both_semantics(figures):
    # the SLD at t = 0.5 (the middle of its range): the marked design is one of the points
    # of its frontier, so the curve really runs through the question's design
    sld, fig = next((q, fig) for q, fig in figures if q.id == "sld")
    ax = fig.axes[0]
    marks = {line.get_marker(): (line.get_xdata()[0], line.get_ydata()[0])
             for line in ax.get_lines() if len(line.get_xdata()) == 1}
    curves = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    for marker, style in (("o", "-"), ("s", "--")):
        x, y = marks[marker]
        assert x == pytest.approx(sld.design.privacy_loss(
            "shafer" if marker == "o" else "walley", {"t": 0.5}), rel=1e-12)
        on = [line for line in curves if line.get_linestyle() == style
              and np.any(np.isclose(line.get_xdata(), x, rtol=0, atol=0.02)
                         & np.isclose(line.get_ydata(), y, rtol=0.02))]
        assert on, marker


@pytest.mark.parametrize(("model", "parameters", "free", "nuisance"), [
    # with "don't know" the two semantics give different losses (Walley's the larger)
    ("sld", {"p": [0.3, 0.7], "dont_know": 0.1}, {"p": [0.3, None], "dont_know": 0.1},
     {"t": 0.5}),
    ("uqtknown", {"p": [0.7, 0.25], "dont_know": 0.1}, {"p": [None, 0.25], "dont_know": 0.1},
     None),
    ("fr", {"p": [0.1, 0.1]}, {"p": [None, None]}, None),
])
def test_curves_drawn_in_both_semantics_at_once_are_each_semantics_own_points(
        model, parameters, free, nuisance):
    """trade_off_curves builds each design along the free parameter once for both
    semantics: every semantics gets what its own pass gives, and exactly the points
    (loss in that semantics, standard error) of the designs built one by one."""
    plan = replace(plan_design(model, parameters, n=500, nuisance=nuisance),
                   free=free_parameter(model, free))
    both = trade_off_curves(plan, n=500, semantics=("shafer", "walley"), points=12)
    for semantics in ("shafer", "walley"):
        alone = trade_off_curve(replace(plan, semantics=semantics), n=500, points=12)
        assert [(list(x), list(y)) for x, y in both[semantics]] == [
            (list(x), list(y)) for x, y in alone]
        expected = set()
        for value in np.linspace(plan.free.low, plan.free.high, 14)[1:-1]:
            try:
                design = plan.free.build(float(value))
            except ParameterError:
                continue
            at = {p.name: plan.nuisance[p.name] for p in design.nuisance}
            loss = design.privacy_loss(semantics, at or None)
            se = precision(design, n=500, pi=plan.pi, nuisance=plan.nuisance,
                           allocation=plan.allocation).se
            if np.isfinite(loss) and np.isfinite(se):
                expected.add((loss, se))
        assert len(expected) >= 6, semantics
        assert {(a, b) for x, y in both[semantics] for a, b in zip(x, y, strict=True)} \
            == expected, semantics


def test_a_designs_losses_are_computed_once_and_stay_its_privacy_loss():
    """A design keeps its worst-case losses (a report reads them for its table, totals and
    JSON): the kept values are privacy_loss's, and a second reading gives the same object."""
    report = every_design_report()
    for q in report.questions:
        for semantics in ("shafer", "walley"):
            kept = getattr(q.design, f"epsilon_{semantics}")
            assert f"epsilon_{semantics}" in vars(q.design), q.id
            # privacy_loss itself keeps nothing: each call computes the loss afresh
            assert kept == q.design.privacy_loss(semantics), (q.id, semantics)
            assert getattr(q.design, f"epsilon_{semantics}") is kept
            assert getattr(q, f"epsilon_{semantics}") is kept


def test_every_curve_in_the_report_runs_left_to_right(report, figures):
    assert [q for q, _ in figures] == list(report.questions)
    for q, fig in figures:
        for x in lines_drawn(fig):
            assert np.all(np.diff(x) > 0), q.id


def test_the_sld_plan_curve_does_not_cross_itself():
    # p[1] = 0.3, t = 0.5: along p[2] the loss stays at 0.511 while the se falls from 8.4
    # to 0.08, and turns back from 0.523 to 0.511: in parameter order the line doubled back
    plan = plan_design("sld", {"p": [0.3, None]}, epsilon=1.0, n=1000, nuisance={"t": 0.5})
    fig = plan_figure(plan)
    try:
        drawn = lines_drawn(fig)
        assert len(drawn) == 2
        for x in drawn:
            assert np.all(np.diff(x) > 0)
    finally:
        plt.close(fig)


def test_the_frontier_keeps_exactly_the_points_no_other_point_beats():
    from surveykit.reporting.plots import frontier

    plan = plan_design("sld", {"p": [0.3, None]}, epsilon=1.0, n=1000, nuisance={"t": 0.5})
    for losses, ses in trade_off_curve(plan, n=1000):
        x, y = frontier(losses, ses)
        # oracle by enumeration: a point stays when no point has a loss as small and a
        # smaller se, and it is the first of its equals
        expected = sorted({(a, b) for a, b in zip(losses, ses, strict=True)
                           if not any(c <= a and d < b for c, d in zip(losses, ses,
                                                                       strict=True))})
        assert list(zip(x, y, strict=True)) == expected
        assert np.all(np.diff(y) < 0)


def _smallest_text_px(page) -> list[tuple[float, int]]:
    """(smallest text in CSS px, svg number) for every svg of the page, as Chromium lays it
    out: matplotlib draws text as glyphs scaled by fontsize / 100 in the viewBox's units,
    and the viewBox is shown at the svg's rendered width."""
    shown = page.evaluate("""() => [...document.querySelectorAll('svg')].map(svg => [
        svg.getBoundingClientRect().width, svg.viewBox.baseVal.width, svg.outerHTML])""")
    out = []
    for number, (width, view_width, markup) in enumerate(shown):
        scales = [float(s) for s in re.findall(r"scale\(([0-9.]+) -\1\)", markup)]
        assert scales, number
        out.append((min(scales) * 100 * width / view_width, number))
    return out


@pytest.fixture(scope="module")
def warned_html():
    """The HTML of a report of every design where the SLD question has 3 answers per
    response (so it warns), and the report; rendered once: its plots cost seconds."""
    report = every_design_report(few="sld")
    return report, render_report(report, "html")


def test_every_text_in_the_html_plots_is_12_px_on_a_1280_px_page(warned_html, tmp_path):
    # the page with warnings: every design's plot, and the warnings' block above them
    report, html = warned_html
    page_file = tmp_path / "report.html"
    page_file.write_text(html, encoding="utf-8")
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": PAGE_PX, "height": 900})
        try:
            page.goto(page_file.as_uri())
            sizes = _smallest_text_px(page)
        finally:
            page.close()
    smallest, number = min(sizes)
    # Chromium lays widths out in 1/64 px: 537.6 px is drawn 537.59
    assert smallest >= READABLE_PX - 0.01, (smallest, number)
    assert len(sizes) == 1 + len(report.questions)  # the forest plot and one per question


def test_warnings_are_gathered_at_the_top_with_links_to_their_questions(warned_html):
    report, html = warned_html
    warned = [q for q in report.questions if q.warnings]
    assert any(q.id == "sld" for q in warned)
    top, _, body = html.partition("<h2>Estimates</h2>")
    gathered = re.findall(r'<li class="warning"><a href="#(question-\d+)">([^<]*)</a>: '
                          r"([^<]*)</li>", top)
    assert len(gathered) == report.warning_count == sum(len(q.warnings) for q in warned)
    for anchor, question_id, text in gathered:
        # the anchor is the question's own section, which repeats the warning
        section = re.search(rf'<section class="question" id="{anchor}">(.*?)</section>',
                            body, re.S)
        assert section is not None, anchor
        assert f"<h3>{question_id}</h3>" in section.group(1)
        assert f'<p class="warning">{text}</p>' in section.group(1)
    assert f"Warnings ({report.warning_count})" in top
