"""Designs other than the generalized Warner, end to end: survey file, import, counts, report."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite

from surveykit import store
from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.errors import CsvImportError, SurveyDefinitionError
from surveykit.estimation import estimate
from surveykit.reporting.report import render_report
from surveykit.simulation import simulate_counts
from surveykit.store.importer import import_responses
from surveykit.workflows.report import report_for_survey

SURVEY = (Path(__file__).parent / "surveys" / "mixed.toml").read_text(encoding="utf-8")

TRUTH = {  # shares of the states, nuisance values
    "doping": ([0.2, 0.8], [0.9]),
    "tax": ([0.3, 0.7], None),
    "drinks": ([0.6, 0.3, 0.1], None),
    "cards": ([0.25, 0.75], None),
    "cheat": ([0.2, 0.6, 0.2], None),
}
GROUP_SIZES = {"short": 400, "long": 300}


@pytest.fixture
def survey():
    return parse_survey(SURVEY, "mixed.toml")


def simulated_counts(survey) -> dict[str, dict[str, dict[str, int]]]:
    """question -> group name -> response -> count, drawn from each design."""
    rng = np.random.default_rng(2026)
    out = {}
    for question in survey.questions:
        design = question.design
        shares, nuisance = TRUTH[question.id]
        groups = design.group_names
        sizes = [GROUP_SIZES[g] for g in groups] if len(groups) > 1 else [700]
        counts = simulate_counts(design, shares=shares, n=sizes, reps=1, rng=rng,
                                 nuisance=nuisance)[0]
        names = groups if len(groups) > 1 else ["short"]
        out[question.id] = {name: {label: int(counts[g, r])
                                   for r, label in enumerate(design.response_labels)
                                   if counts[g, r]}
                            for g, name in enumerate(names)}
    return out


def write_long_file(path, counts) -> None:
    """A long CSV with a group column (by name); one-group questions ride along in 'short'."""
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", "group", "question_id", "answer"])
        for question, groups in counts.items():
            number = 0
            for group, answers in groups.items():
                for label, n in answers.items():
                    for _ in range(n):
                        number += 1
                        writer.writerow([f"{question}-{number}", group, question, label])


def test_survey_file_builds_each_questions_design(survey):
    designs = {q.id: q.design for q in survey.questions}
    assert designs["doping"].model == "sld" and designs["doping"].group_names == ("short", "long")
    assert designs["tax"].model == "crosswise"
    assert survey.question("tax").innocuous.startswith("Is your mother's birthday")
    assert designs["drinks"].category_labels == ("never", "once", "often")
    assert designs["cards"].response_labels == ("0", "1", "2", "3", "dont_know")
    assert survey.groups == ("short", "long")
    assert survey.question("tax").answer_spellings()["same"] == "yes"


def test_imported_counts_and_report_equal_the_estimator_on_the_same_counts(tmp_path, survey):
    engine = store.open_engine(migrated_sqlite(tmp_path / "mixed.db"))
    store.add_survey(engine, survey)
    counts = simulated_counts(survey)
    answers = tmp_path / "answers.csv"
    write_long_file(answers, counts)
    result = import_responses(engine, answers, "mixed")
    assert result.imported == sum(n for g in counts.values() for a in g.values()
                                  for n in a.values())
    stored = {c.question_id: c.counts.to_dict() for c in store.count_responses(engine, "mixed")}
    numbers = {name: str(i) for i, name in enumerate(survey.groups, start=1)}
    for question, groups in counts.items():
        assert stored[question] == {numbers[g]: a for g, a in groups.items()}
    report = report_for_survey(engine, "mixed")
    for q in report.questions:
        design = survey.question(q.id).design
        if len(design.group_names) > 1:
            keyed = {numbers[g]: a for g, a in counts[q.id].items()}
        else:
            keyed = {"1": counts[q.id]["short"]}
        expected = estimate(design=design, counts=keyed)
        assert q.estimate == expected
        np.testing.assert_allclose(q.estimate.shares, expected.shares, rtol=0, atol=1e-12)
    by_id = {q.id: q for q in report.questions}
    # truth recovered within four standard errors (a loose check: the oracle is above)
    assert abs(by_id["doping"].estimate.pi_mle - 0.2) < 4 * by_id["doping"].estimate.se
    assert set(by_id["doping"].estimate.parameters) == {"t"}
    assert set(by_id["cheat"].estimate.parameters) == {"gamma"}
    assert by_id["drinks"].estimate.pi_mle is None
    engine.dispose()

    data = json.loads(render_report(report, "json"))
    drinks = next(q for q in data["questions"] if q["id"] == "drinks")
    assert [e["category"] for e in drinks["estimates"]] == ["never", "once", "often"]
    assert drinks["pi_mle"] is None and drinks["design"]["name"] == "fr"
    doping = next(q for q in data["questions"] if q["id"] == "doping")
    assert doping["parameters"]["t"]["estimate"] == pytest.approx(
        by_id["doping"].estimate.nuisance[0])
    assert doping["counts"].keys() == {"1", "2"}
    assert doping["epsilon_shafer"] == "inf"  # the SLD's worst case (t = 1) protects nothing
    assert doping["epsilon_shafer_at_estimate"] is not None
    text = render_report(report, "text")
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "  t          " in text and "  gamma      " in text
    assert "estimate   never:" in text
    html = render_report(report, "html")
    # the forest plot and a privacy curve for every question, whatever its design (issue 22)
    assert html.count("<svg") == 1 + len(report.questions)


def test_counts_command_shows_groups_and_other_answers(tmp_path, survey):
    url = migrated_sqlite(tmp_path / "mixed.db")
    engine = store.open_engine(url)
    store.add_survey(engine, survey)
    answers = tmp_path / "answers.csv"
    answers.write_text("respondent_id,group,doping,cards,drinks\n"
                       "r1,short,yes,2,often\nr2,long,no,0,never\n", encoding="utf-8")
    import_responses(engine, answers, "mixed")
    engine.dispose()
    result = CliRunner().invoke(main, ["counts", "--survey", "mixed", "--db", url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["question", "group", "missing", "answers"]
    assert any(line.split()[:3] == ["doping", "1", "0"] and line.endswith("yes 1")
               for line in lines)
    assert any(line.split()[:1] == ["2"] and line.endswith("no 1") for line in lines)
    assert any(line.startswith("cards") and line.endswith("2 1") for line in lines)


@pytest.mark.parametrize("change, message", [
    (('p = [0.3, 0.7]\ngroups = ["short", "long"]', 'p = [0.3, 0.7]'),
     r"questions\[4\]\.design: groups \['1', '2'\] differ from the groups "
     r"\['short', 'long'\] of questions\[0\]"),
    (('innocuous = "Is your mother', 'question = "Is your mother'),
     r"questions\[1\]\.design: unknown key 'question'; allowed keys are model, innocuous and "
     r"the parameters of crosswise \(p, dont_know\)"),
    (('model = "kuk"', 'model = "kukk"'),
     r"questions\[3\]\.design\.model: unknown design 'kukk', did you mean 'kuk'\? The designs "
     r"are warner, "
     r"generalized_warner, fr"),
    (('"same" = "yes"', '"same" = "maybe"'),
     r"questions\[1\]\.aliases\.\"same\": 'maybe' must be one of the design's answers: "
     r"\"yes\", \"no\", \"dont_know\""),
    (('p = [0.1, 0.1, 0.1]', 'p = [0.5, 0.4, 0.3]'),
     r"questions\[2\]\.design\.p: p \(\[0\.5, 0\.4, 0\.3\]\): the forced-answer probabilities "
     r"sum to 1\.2"),
    (('p = 0.25\ninnocuous', 'p = 0.5\ninnocuous'), r"questions\[1\]\.design\.p: p \(0\.5\) must "
                                                    r"not be 0\.5"),
])
def test_bad_designs_in_survey_files_name_the_key(change, message):
    old, new = change
    assert old in SURVEY
    with pytest.raises(SurveyDefinitionError, match=message):
        parse_survey(SURVEY.replace(old, new), "mixed.toml")


def test_a_crosswise_question_needs_its_innocuous_question():
    text = SURVEY.replace('innocuous = "Is your mother\'s birthday in January, February or '
                          'March?"\n', "")
    with pytest.raises(SurveyDefinitionError, match=r"questions\[1\]\.design\.innocuous: "
                                                    r"missing: the crosswise design asks"):
        parse_survey(text, "mixed.toml")


@pytest.mark.parametrize("row, column, reason", [
    ("r1,short,cards,5", "answer", "not an answer: use 0, 1, 2, 3 or dont_know"),
    ("r1,middle,doping,yes", "group", "not a group of survey 'mixed'; its groups are "
                                      "1 (short), 2 (long)"),
    ("r1,,doping,yes", "group", "no group: survey 'mixed' has multi-group designs"),
])
def test_bad_labels_and_groups_are_refused_with_line_and_column(tmp_path, survey, row, column,
                                                                reason):
    engine = store.open_engine(migrated_sqlite(tmp_path / "mixed.db"))
    store.add_survey(engine, survey)
    path = tmp_path / "bad.csv"
    path.write_text(f"respondent_id,group,question_id,answer\nr0,short,doping,no\n{row}\n",
                    encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, path, "mixed")
    [problem] = caught.value.problems
    assert (problem.line, problem.column) == (3, column)
    assert problem.reason.startswith(reason)
    assert store.count_responses(engine, "mixed")[0].answered == 0  # nothing imported
    engine.dispose()
