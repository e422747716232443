"""A numeric question in the report (issue 23 item 4): mean, total, SE, interval, answers,
privacy for its range, quantiles and a plot, in every format, with user text escaped.

Oracles: the section's numbers are estimate_mean's on the same counts (checked against the
closed form of the moment estimator here); the seeded simulation checks the estimate's
interval covers the population mean as often as it says."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from surveykit.counts import Counts
from surveykit.definition.survey import parse_survey
from surveykit.numeric_counts import NumericCounts
from surveykit.reporting.numeric_section import numeric_section
from surveykit.reporting.report import build_report, render_report
from tests.numeric_support import choice_question, income_question, numeric_survey

PARTNERS = '''[[questions]]
id = "partners"
text = "How many partners?"
type = "number"
range = [0, 20]
decimals = 0
[questions.design]
model = "eriksson"
p = 0.5
scrambler = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
'''
SURVEY = numeric_survey(
    choice_question(),
    income_question(text="How much <b>income</b> did you not declare?", unit="EUR & co"),
    PARTNERS, title="Tax <survey>")


class _Row:
    def __init__(self, question_id, counts):
        self.question_id, self.counts, self.missing = question_id, counts, 0


@pytest.fixture(scope="module")
def survey():
    return parse_survey(SURVEY, "tax.toml")


def _answers(question, n, seed):
    rng = np.random.default_rng(seed)
    truth = rng.gamma(2, 3000, n).round() if question.id == "income" else \
        rng.integers(0, 21, n).astype(float)
    simulated = question.design.simulate(truth, rng=rng)
    return truth, simulated


def test_the_mean_is_the_moment_estimator_of_the_counts(survey):
    """Eriksson: E[Z] = p y + (1 - p) mu over the answered, so y-bar = (z-bar - (1-p) mu) / p,
    and its variance is s_z^2 / (n p^2) (RRTCS's srswr)."""
    income = survey.question("income")
    _, simulated = _answers(income, 600, 1)
    counts = NumericCounts.from_answers(simulated.answers, dont_know=simulated.dont_know)
    z = simulated.answers[~simulated.dont_know]
    section = numeric_section(income, counts, answers=z, population_size=5000)
    p, mu = 0.6, np.mean([0, 1000, 5000, 20000])
    assert section.estimate.mean == pytest.approx((z.mean() - (1 - p) * mu) / p, rel=1e-12)
    assert section.estimate.se == pytest.approx(math.sqrt(z.var(ddof=1) / z.size) / p,
                                                rel=1e-10)
    record = section.to_dict()
    assert record["mean"] == record["estimate"] == section.estimate.mean
    assert record["total"] == pytest.approx(5000 * section.estimate.mean, rel=1e-12)
    assert record["total_se"] == pytest.approx(5000 * section.estimate.se, rel=1e-12)
    assert (record["n"], record["dont_know"]) == (z.size, int(simulated.dont_know.sum()))
    assert record["ci_low"] < record["mean"] < record["ci_high"]
    # an answer equal to a true value no card shows rules values out: infinite, said so
    assert record["epsilon_shafer"] == "inf" and record["epsilon_shafer_finite"] is False
    assert "rules that true value out" in record["privacy_text"]
    assert record["quantiles"]["method"] == "mixture inversion"
    assert [x["q"] for x in record["quantiles"]["values"]] == [0.1, 0.25, 0.5, 0.75, 0.9]


def test_a_deck_covering_the_range_has_a_finite_loss_in_the_report(survey):
    partners = survey.question("partners")
    _, simulated = _answers(partners, 300, 2)
    counts = NumericCounts.from_answers(simulated.answers)
    record = numeric_section(partners, counts).to_dict()
    # every answer 0..20 is possible under every true value: worst ratio (0.5 + 0.5/21) /
    # (0.5/21) = 22 at the answer equal to the true value
    assert record["epsilon_shafer"] == pytest.approx(math.log(22), rel=1e-12)
    assert record["epsilon_shafer_finite"] is True


@pytest.mark.slow
def test_the_interval_covers_the_true_mean_as_often_as_it_says(survey):
    income = survey.question("income")
    covered, runs = 0, 400
    for seed in range(runs):
        truth, simulated = _answers(income, 400, 1000 + seed)
        counts = NumericCounts.from_answers(simulated.answers, dont_know=simulated.dont_know)
        # the answered respondents' true mean: "don't know" is assigned at random
        target = truth[~simulated.dont_know].mean()
        e = numeric_section(income, counts).estimate
        low, high = e.confidence_interval(0.95)
        covered += low <= target <= high
    share = covered / runs
    se = math.sqrt(0.95 * 0.05 / runs)
    assert abs(share - 0.95) < 3 * se, share


def _report(survey, seed=3):
    sections = []
    for name in ("income", "partners"):
        question = survey.question(name)
        _, simulated = _answers(question, 500, seed)
        counts = NumericCounts.from_answers(simulated.answers, dont_know=simulated.dont_know)
        sections.append(numeric_section(question, counts,
                                        answers=simulated.answers[~simulated.dont_know],
                                        missing=2))
    choice = _Row("cheat", Counts.single({"yes": 40, "no": 60, "dont_know": 0}))
    return build_report(survey, [choice], numeric=sections), sections


def test_the_json_report_lists_every_question_in_survey_order(survey):
    report, sections = _report(survey)
    data = json.loads(render_report(report, "json"))
    assert [(q["id"], q["type"]) for q in data["questions"]] == [
        ("cheat", "choice"), ("income", "number"), ("partners", "number")]
    income = data["questions"][1]
    for key in ("mean", "se", "ci_low", "ci_high", "total", "total_se"):
        assert key in income
    assert income["mean"] == sections[0].estimate.mean
    assert income["unit"] == "EUR & co" and income["range"] == [0, 100000]
    # the total loss adds the numeric questions' (infinite here)
    assert data["epsilon_total_shafer"] == "inf"
    frame = report.to_frame()
    assert list(frame.index) == ["cheat", "income", "partners"]
    assert frame.loc["income", "mean"] == pytest.approx(sections[0].estimate.mean)


def test_every_format_shows_the_numeric_questions_with_user_text_escaped(survey):
    report, sections = _report(survey)
    text = render_report(report, "text")
    assert "Numeric questions" in text and "income: How much <b>income</b>" in text
    mean_line = next(line for line in text.splitlines() if line.strip().startswith("mean"))
    assert "EUR & co" in mean_line
    markdown = render_report(report, "markdown")
    assert "## Numeric questions" in markdown and "| income |" in markdown
    html = render_report(report, "html")
    assert "<h2>Numeric questions</h2>" in html
    assert "How much &lt;b&gt;income&lt;/b&gt;" in html and "<b>income</b>" not in html
    assert "EUR &amp; co" in html
    assert html.count('<section class="numeric" id="numeric-') == 2
    # one plot per numeric question with answers: reported beside estimated true values
    assert html.count("<svg") >= 3
    assert "true values (estimated)" in html


def test_a_numeric_question_without_answers_is_a_warning_not_a_failure(survey):
    choice = _Row("cheat", Counts.single({"yes": 40, "no": 60, "dont_know": 0}))
    report = build_report(survey, [choice])
    assert [n.error for n in report.numeric] == [
        "no numeric answers to this question: there is nothing to estimate"] * 2
    data = json.loads(render_report(report, "json"))
    assert data["questions"][1]["mean"] is None
    assert report.warning_count == 2
    assert "No estimate: no numeric answers" in render_report(report, "html")


def test_a_question_without_a_range_states_no_loss_and_says_how_to_get_one():
    survey = parse_survey(SURVEY.replace("range = [0, 20]\n", ""), "tax.toml")
    partners = survey.question("partners")
    section = numeric_section(partners, NumericCounts.from_answers([1.0, 2.0, 3.0]))
    record = section.to_dict()
    assert record["epsilon_shafer"] is None and record["epsilon_shafer_finite"] is None
    assert "add range = [low, high]" in record["privacy_text"]
    report = build_report(survey, [], numeric=[section])
    assert report.epsilon_total_shafer is None
    assert "Shafer -, Walley -" in render_report(report, "text")


def test_a_range_too_fine_to_enumerate_states_why_its_loss_is_not_computed():
    """Cards covering [0, 2] with 6 decimals: 2,000,001 true values are too many to enumerate
    exactly; the report says so and how to fix it, and still estimates the mean."""
    text = SURVEY.replace("range = [0, 20]\ndecimals = 0", "range = [0, 2]\ndecimals = 6")
    text = text.replace("scrambler = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
                        "17, 18, 19, 20]", "scrambler = [0, 1, 2]")
    partners = parse_survey(text, "tax.toml").question("partners")
    assert partners.range == (0.0, 2.0) and partners.decimals == 6
    section = numeric_section(partners, NumericCounts.from_answers([0.0, 1.0, 2.0, 1.5]))
    record = section.to_dict()
    assert record["mean"] is not None
    assert record["epsilon_shafer"] is None and record["privacy"] is None
    assert record["privacy_text"].startswith("not computed: the range [0, 2] with decimals = 6")
    assert "state a narrower range or fewer decimals" in record["privacy_text"]
