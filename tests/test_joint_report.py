"""Declared joint analyses (``[[joint]]`` in the survey file) in ``surveykit report``.

Oracle: the report's joint numbers are :func:`surveykit.workflows.joint.joint_for_survey`'s
on the same SQLite file (the function ``surveykit joint --survey`` calls, itself checked
against the observed cross-table and the product design's likelihood in
tests/test_joint_survey.py), in every format; the HTML plot draws those estimates. A
misspelt or too short ``[[joint]]`` is refused by ``survey add`` in one line; a joint
analysis the answers cannot support is a warning line in the report, not a failure.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from migrated import migrated_sqlite
from store_support import run_cli

from surveykit.definition.survey import parse_survey
from surveykit.reporting.joint_section import PAIR_LINES, JointSection, joint_figure
from surveykit.workflows.joint import joint_for_survey

SURVEY = """
name = "integrity"
title = "Academic integrity"
[design]
model = "warner"
p = 0.75
[[questions]]
id = "exam_cheating"
text = "Have you ever copied answers during an exam?"
[[questions]]
id = "plagiarism"
text = "Have you ever submitted copied work as your own?"
[questions.design]
model = "fr"
p = [0.1, 0.2]
[[questions]]
id = "fabrication"
text = "Have you ever made up data?"
[[joint]]
questions = ["exam_cheating", "plagiarism"]
[[joint]]
questions = ["exam_cheating", "plagiarism", "fabrication"]
title = "Three kinds of cheating"
"""


def _answer(rng, true: np.ndarray, question: str) -> np.ndarray:
    """Randomized answers drawn from each question's design (Warner p = 0.75: the true
    answer with probability 0.75; forced response: "no" 0.1, "yes" 0.2, else the truth)."""
    u = rng.random(true.size)
    if question == "plagiarism":
        return np.where(u < 0.1, False, np.where(u < 0.3, True, true))
    return np.where(u < 0.75, true, ~true)


def _database(tmp_path: Path, source: str, rows: list[dict[str, str]]) -> str:
    (tmp_path / "survey.toml").write_text(source, encoding="utf-8")
    answers = tmp_path / "answers.csv"
    columns = ["respondent_id", "exam_cheating", "plagiarism", "fabrication"]
    with answers.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, columns)
        writer.writeheader()
        writer.writerows(rows)
    db = migrated_sqlite(tmp_path / "survey.db")
    for args in (["survey", "add", str(tmp_path / "survey.toml")],
                 ["import", str(answers), "--survey", "integrity"]):
        result = run_cli(*args, "--db", db)
        assert result.exit_code == 0, result.output
    return db


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> str:
    rng = np.random.default_rng(24)
    n = 900
    cheated = rng.random(n) < 0.3
    plagiarised = rng.random(n) < np.where(cheated, 0.6, 0.2)
    fabricated = rng.random(n) < np.where(plagiarised, 0.4, 0.1)
    answers = {q: _answer(rng, true, q) for q, true in
               (("exam_cheating", cheated), ("plagiarism", plagiarised),
                ("fabrication", fabricated))}
    rows = [{"respondent_id": f"R{i:04d}",
             **{q: "yes" if answers[q][i] else "no" for q in answers}} for i in range(n)]
    return _database(tmp_path_factory.mktemp("joint"), SURVEY, rows)


@pytest.fixture(scope="module")
def fits(stored) -> dict:
    """The oracle, joint_for_survey on the stored file, once per declared analysis (the
    tests only read the file)."""
    return {tuple(questions): joint_for_survey(stored, "integrity", questions)
            for questions in DECLARED}


def _report(db: str, fmt: str) -> str:
    result = run_cli("report", "--survey", "integrity", "--format", fmt, "--db", db)
    assert result.exit_code == 0, result.output
    return result.output


DECLARED = (["exam_cheating", "plagiarism"], ["exam_cheating", "plagiarism", "fabrication"])


def test_the_json_report_holds_joint_for_survey_s_numbers(stored, fits):
    data = json.loads(_report(stored, "json"))
    assert [entry["questions"] for entry in data["joint"]] == list(DECLARED)
    assert [entry["title"] for entry in data["joint"]] == [None, "Three kinds of cheating"]
    for entry, questions in zip(data["joint"], DECLARED, strict=True):
        expected = json.loads(json.dumps(fits[tuple(questions)].to_dict(level=0.95)))
        assert entry["error"] is None
        assert entry["fit"] == {key: value for key, value in expected.items()
                                if key not in ("survey", "privacy")}
        assert entry["privacy_together"] == expected["privacy"]["together"]
        assert entry["fit"]["n"] == 900


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_text_markdown_and_html_reports_show_every_pair_s_numbers(stored, fits, fmt):
    shown = _report(stored, fmt)
    assert "Three kinds of cheating" in shown
    for questions in DECLARED:
        estimate = fits[tuple(questions)].estimate
        for pair in estimate.pairs():
            for key, _ in PAIR_LINES:
                quantity = pair[key]
                assert f"{quantity.estimate:.4f}" in shown, (pair.a, pair.b, key)
                assert f"{quantity.se:.4f}" in shown, (pair.a, pair.b, key)
                assert f"[{quantity.low:.4f}, {quantity.high:.4f}]" in shown
            test = pair.independence
            assert f"LR = {test.lr:.2f}, df = {test.df}, p = {test.p_value:#.3g}" in shown
        assert f"Independence of all 3: LR = {estimate.independence.lr:.2f}" in shown \
            or len(questions) == 2
    if fmt == "html":
        # one plot per joint analysis, in its section
        section = shown.split("<h2>Joint analyses</h2>")[1].split("<footer>")[0]
        assert section.count("<svg") == 2


def test_the_html_plot_draws_the_joint_shares_and_the_conditional_shares(fits):
    survey = parse_survey(SURVEY, "survey.toml")
    result = fits[tuple(DECLARED[0])]
    section = JointSection(spec=survey.joint[0], estimate=result.estimate,
                           together=result.composed)
    figure = joint_figure(section, 0.95)
    ax = figure.axes[0]
    pair = result.estimate.pair("exam_cheating", "plagiarism")
    keys = ("both", "a_not_b", "b_not_a", "neither", "b_given_a", "b_given_not_a")
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert labels == [dict(PAIR_LINES)[key].format(a="exam_cheating", b="plagiarism")
                      for key in keys]
    points = [line.get_xdata()[0] for line in ax.lines if line.get_marker() == "o"]
    assert points == pytest.approx([pair[key].estimate for key in keys], abs=1e-12)
    intervals = [tuple(line.get_xdata()) for line in ax.lines if line.get_marker() != "o"]
    assert intervals == pytest.approx([(pair[key].low, pair[key].high) for key in keys],
                                      abs=1e-12)


def test_a_misspelt_joint_question_is_refused_by_survey_add_in_one_line(tmp_path):
    db = migrated_sqlite(tmp_path / "bad.db")
    path = tmp_path / "bad.toml"
    path.write_text(SURVEY.replace('questions = ["exam_cheating", "plagiarism"]',
                                   'questions = ["exam_cheating", "plagiarsm"]'),
                    encoding="utf-8")
    result = run_cli("survey", "add", str(path), "--db", db)
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"{path}: joint[0].questions: 'plagiarsm' is not a question of the survey, " \
           "did you mean 'plagiarism'?" in lines[0]
    assert "Traceback" not in result.output
    listed = run_cli("survey", "list", "--db", db)
    assert "integrity" not in listed.output


@pytest.mark.parametrize(("entry", "message"), [
    ('questions = ["exam_cheating"]', "joint[0].questions: names 1 question: a joint "
                                      "analysis takes 2 to 4"),
    ('questions = ["plagiarism", "Plagiarism"]', "joint[0].questions: 'Plagiarism' is named "
                                                 "twice"),
    ('questions = ["exam_cheating", "plagiarism"]\nfilter = 1',
     "joint[0].filter: unknown key; allowed keys are questions, title"),
])
def test_a_bad_joint_entry_is_refused_with_its_key(tmp_path, entry, message):
    source = SURVEY.split("[[joint]]")[0] + "[[joint]]\n" + entry + "\n"
    path = tmp_path / "bad.toml"
    path.write_text(source, encoding="utf-8")
    result = run_cli("survey", "add", str(path), "--db", f"sqlite:///{tmp_path / 'b.db'}")
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert message in result.output


def test_a_joint_analysis_without_common_respondents_is_a_warning_not_a_failure(tmp_path):
    # each respondent answered one question: nothing says how the answers go together
    rows = [{"respondent_id": f"R{i}", "exam_cheating": "yes" if i % 3 else "no",
             "plagiarism": "", "fabrication": ""} for i in range(20)]
    rows += [{"respondent_id": f"S{i}", "exam_cheating": "", "plagiarism": "no",
              "fabrication": "yes" if i % 2 else "no"} for i in range(20)]
    db = _database(tmp_path, SURVEY, rows)
    text = _report(db, "text")
    assert "! No joint analysis: questions exam_cheating, plagiarism of survey 'integrity' " \
           "have no respondent in common" in " ".join(text.split())
    data = json.loads(_report(db, "json"))
    assert [entry["fit"] for entry in data["joint"]] == [None, None]
    assert all("no respondent in common" in entry["error"] for entry in data["joint"])
    assert "**Warning:** no joint analysis: questions" in _report(db, "markdown")
    html = _report(db, "html")
    assert '<p class="warning">No joint analysis: questions exam_cheating' in html
    # the questions' own sections are still there
    assert data["questions"][0]["id"] == "exam_cheating"


def test_survey_update_adds_a_joint_analysis_to_a_stored_survey(tmp_path):
    # [[joint]] is an analysis, not data: like [[models]], an update may add it
    without = SURVEY.split("[[joint]]")[0]
    rows = [{"respondent_id": f"R{i}", "exam_cheating": "yes" if i % 3 else "no",
             "plagiarism": "yes" if i % 4 else "no", "fabrication": "no"} for i in range(60)]
    db = _database(tmp_path, without, rows)
    assert json.loads(_report(db, "json"))["joint"] == []
    (tmp_path / "survey.toml").write_text(SURVEY, encoding="utf-8")
    result = run_cli("survey", "update", str(tmp_path / "survey.toml"), "--db", db)
    assert result.exit_code == 0, result.output
    assert "[[joint]]" in result.output
    data = json.loads(_report(db, "json"))
    assert [entry["questions"] for entry in data["joint"]] == list(DECLARED)


def test_a_survey_too_small_for_its_joint_analysis_reports_a_warning(tmp_path):
    rows = [{"respondent_id": "R1", "exam_cheating": "yes", "plagiarism": "no",
             "fabrication": "no"},
            {"respondent_id": "R2", "exam_cheating": "no", "plagiarism": "no",
             "fabrication": "yes"}]
    db = _database(tmp_path, SURVEY, rows)
    text = " ".join(_report(db, "text").split())
    assert "! No joint analysis: too few answers for a joint analysis of exam_cheating, " \
           "plagiarism: 2 respondent(s) answered all of them" in text
    assert "(8 states need at least 40)" in text
    data = json.loads(_report(db, "json"))
    assert [entry["fit"] for entry in data["joint"]] == [None, None]
    assert all(entry["error"].startswith("too few answers") for entry in data["joint"])
